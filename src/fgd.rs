//! `sim fgd`: the FGD paper's placement experiments on Alibaba's openb traces.

use crate::Failure;
use crate::cli::FgdArgs;
use policies::fgd_protocol::{self, Pod};
use rayon::prelude::*;
use reports::fgd_curves::{self, CurveSample, Curves};
use runner::output::write_finished;
use std::path::Path;

use policies::fgd_protocol::PAPER_POLICIES;

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    traces::read_file(path).map(|(bytes, _, _)| bytes).map_err(|e| Failure::BadInput(e.to_string()))
}

/// Parses `42..51` (inclusive, as the paper's seeds 42–51) or `42,43` or `42`.
pub fn parse_seeds(s: &str) -> Result<Vec<u64>, String> {
    let bad = || format!("--seeds: expected a range such as 42..51 or a list such as 42,43, found '{s}'");
    if let Some((a, b)) = s.split_once("..") {
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b.trim().trim_start_matches('=').parse().map_err(|_| bad())?;
        if b < a {
            return Err(format!(
                "--seeds: the range '{s}' is reversed: its first seed must not exceed its last ({b}..{a}?)"
            ));
        }
        if b - a > 100_000 {
            return Err(format!("--seeds: the range '{s}' holds {} seeds, expected at most 100001", b - a + 1));
        }
        return Ok((a..=b).collect());
    }
    let seeds: Vec<u64> = s.split(',').map(|x| x.trim().parse::<u64>().map_err(|_| bad())).collect::<Result<_, _>>()?;
    let mut sorted = seeds.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("--seeds: seed {} is listed twice in '{s}'", w[0]));
    }
    Ok(seeds)
}

pub fn fgd(a: &FgdArgs) -> Result<(), Failure> {
    let bad = Failure::BadInput;
    let policies: Vec<String> = match &a.policies {
        Some(p) => p.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        None => PAPER_POLICIES.iter().map(|s| s.to_string()).collect(),
    };
    for p in &policies {
        if policies::placement::Placement::by_name(p, Default::default()).is_none() {
            return Err(bad(format!(
                "--policies: unknown placement '{p}' (expected one of: {})",
                policies::placement::PLACEMENTS.join(", ")
            )));
        }
    }
    if policies.is_empty() {
        return Err(bad("--policies: expected at least one placement".into()));
    }
    let seeds = parse_seeds(&a.seeds).map_err(bad)?;
    if !(a.tune.is_finite() && a.tune >= 0.0) {
        return Err(bad(format!("--tune: expected a ratio >= 0, found {}", a.tune)));
    }
    let node_name = a.nodes.display().to_string();
    let nodes = traces::openb::parse_nodes(&node_name, &read(&a.nodes)?).map_err(|e| bad(e.to_string()))?;
    let cluster = traces::openb::cluster(&nodes, sim_core::GpuSharing::Shared, traces::openb::UNKNOWN_GPU_MEMORY_MIB);
    let mut workloads: Vec<(String, Vec<Pod>)> = Vec::new();
    for path in &a.pods {
        let name = path.display().to_string();
        let pods = traces::openb::parse_pods(&name, &read(path)?).map_err(|e| bad(e.to_string()))?;
        let stem = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let stem = stem.strip_suffix(".csv").unwrap_or(&stem).to_string();
        let pods =
            pods.iter().map(|p| Pod { name: p.name.clone(), task: p.task(), models: p.gpu_spec.clone() }).collect();
        workloads.push((stem, pods));
    }
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Failure::Other(format!("{}: cannot create folder: {e}", a.out.display())))?;

    let mut runs: Vec<(usize, &str, u64)> = Vec::new();
    for w in 0..workloads.len() {
        for p in &policies {
            for &s in &seeds {
                runs.push((w, p.as_str(), s));
            }
        }
    }
    let show = !a.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = show.then(|| {
        let b = indicatif::ProgressBar::new(runs.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} fgd {bar:40} {pos}/{len} runs ({eta})")
                .expect("valid template"),
        );
        b
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.unwrap_or(0))
        .build()
        .map_err(|e| Failure::Other(format!("thread pool: {e}")))?;
    let results: Vec<(Curves, usize, usize)> = pool.install(|| {
        runs.par_iter()
            .map(|&(w, p, s)| {
                let r = fgd_protocol::run(&cluster, &workloads[w].1, p, s, a.tune).expect("placement checked");
                let samples: Vec<CurveSample> = r
                    .samples
                    .iter()
                    .map(|x| CurveSample {
                        arrived_milli: x.arrived_milli,
                        used_milli: x.used_milli,
                        frag_milli: x.frag_milli,
                        idle_milli: x.idle_milli,
                    })
                    .collect();
                if let Some(b) = &bar {
                    b.inc(1);
                }
                (fgd_curves::curves(&samples, r.total_gpus), r.placed, r.failed)
            })
            .collect()
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let write = |file: &str, pick: &dyn Fn(&Curves) -> &Vec<Option<f64>>| {
        write_finished(&a.out.join(file), |w| {
            writeln!(w, "{}", fgd_curves::header())?;
            for ((wi, p, s), (c, _, _)) in runs.iter().zip(&results) {
                writeln!(w, "{}", fgd_curves::row(&workloads[*wi].0, p, *s, pick(c)))?;
            }
            Ok(())
        })
        .map_err(|e| Failure::Other(format!("{}: {e}", a.out.join(file).display())))
    };
    let files = [
        write("allocation.csv", &|c| &c.allocation)?,
        write("fragmentation.csv", &|c| &c.fragmentation)?,
        write("fragmentation_ratio.csv", &|c| &c.fragmentation_ratio)?,
    ];
    for f in files {
        f.rename().map_err(|e| Failure::Other(format!("{}: {e}", a.out.display())))?;
    }
    if !a.quiet {
        println!("GPU allocation % at 100 % arrived workload (mean over {} seeds):", seeds.len());
        println!("{:<32} {:<14} {:>8} {:>8} {:>10}", "workload", "policy", "alloc%", "frag%", "failed");
        for (wi, (wname, _)) in workloads.iter().enumerate() {
            for p in &policies {
                let rows: Vec<&(Curves, usize, usize)> =
                    runs.iter().zip(&results).filter(|((w, q, _), _)| *w == wi && q == p).map(|(_, r)| r).collect();
                let mean = |f: &dyn Fn(&Curves) -> Option<f64>| {
                    let v: Vec<f64> = rows.iter().filter_map(|r| f(&r.0)).collect();
                    if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 }
                };
                let failed = rows.iter().map(|r| r.2).sum::<usize>() as f64 / rows.len().max(1) as f64;
                println!(
                    "{:<32} {:<14} {:>8.2} {:>8.2} {:>10.1}",
                    wname,
                    p,
                    mean(&|c| c.allocation[100]),
                    mean(&|c| c.fragmentation[100]),
                    failed
                );
            }
        }
        println!("wrote {}/allocation.csv, fragmentation.csv, fragmentation_ratio.csv", a.out.display());
    }
    Ok(())
}
