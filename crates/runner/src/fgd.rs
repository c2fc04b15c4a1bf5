//! The FGD paper's placement experiments on Alibaba's openb traces (`sim fgd`): an openb
//! node list as the cluster, each pod list a workload, every (workload, placement, seed)
//! run through the paper's protocol ([`policies::fgd_protocol`]) in parallel, and the
//! three curves of every run written as `allocation.csv`, `fragmentation.csv` and
//! `fragmentation_ratio.csv` ([`reports::fgd_curves`]).
//!
//! The steps: [`placements`] checks the placements asked for, [`Experiment::load`] reads
//! the node and pod lists, [`Experiment::run`] runs the plan ([`Experiment::runs`]) in
//! plan order whatever the thread count, [`Experiment::write`] writes the curves and
//! [`Experiment::means`] gives the table of means at 100 % arrived workload.

use crate::RunError;
use crate::output::write_finished;
use policies::fgd_protocol::{self, FgdRng, PAPER_POLICIES, Pod};
use rayon::prelude::*;
use reports::fgd_curves::{self, CurveSample, Curves};
use sim_core::Cluster;
use std::path::{Path, PathBuf};

/// The curve files an experiment writes into its folder, in order.
pub const FILES: [&str; 3] = ["allocation.csv", "fragmentation.csv", "fragmentation_ratio.csv"];

/// What an experiment reads and where it writes.
#[derive(Debug, Clone)]
pub struct FgdOptions {
    /// The openb node list (`sn,cpu_milli,memory_mib,gpu,model`).
    pub nodes: PathBuf,
    /// The pod lists, one workload each, named by the file name without `.csv`.
    pub pods: Vec<PathBuf>,
    /// Placements, checked ([`placements`]).
    pub policies: Vec<String>,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// Each workload tuned to this multiple of the cluster's GPU capacity (0: no tuning).
    pub tune: f64,
    /// Where the runs' random draws come from.
    pub rng: FgdRng,
    /// The output folder.
    pub out: PathBuf,
}

/// The placements of a comma-separated list (`None`: the paper's six), each checked to
/// be known; at least one.
pub fn placements(list: Option<&str>) -> Result<Vec<String>, RunError> {
    let policies: Vec<String> = match list {
        Some(p) => p.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
        None => PAPER_POLICIES.iter().map(|s| s.to_string()).collect(),
    };
    for p in &policies {
        if policies::placement::Placement::by_name(p, Default::default()).is_none() {
            return Err(RunError::BadInput(format!(
                "--policies: unknown placement '{p}' (expected one of: {})",
                policies::placement::PLACEMENTS.join(", ")
            )));
        }
    }
    if policies.is_empty() {
        return Err(RunError::BadInput("--policies: expected at least one placement".into()));
    }
    Ok(policies)
}

/// One run of the plan and its result.
#[derive(Debug, Clone)]
pub struct FgdRun {
    /// Index of the workload ([`Experiment::workloads`]).
    pub workload: usize,
    /// The placement.
    pub policy: String,
    /// The seed.
    pub seed: u64,
    /// Its three curves.
    pub curves: Curves,
    /// Pods placed.
    pub placed: usize,
    /// Pods that found no room.
    pub failed: usize,
}

/// One line of the table of means: a workload under a placement, over the seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Means<'a> {
    /// The workload's name.
    pub workload: &'a str,
    /// The placement.
    pub policy: &'a str,
    /// Mean GPU allocation, %, at 100 % arrived workload (NaN when no run has a value).
    pub allocation: f64,
    /// Mean fragmented GPU, % of capacity, at 100 % arrived workload (NaN likewise).
    pub fragmentation: f64,
    /// Mean pods that found no room.
    pub failed: f64,
}

/// The cluster and workloads of an experiment, read, with its placements and seeds.
#[derive(Debug)]
pub struct Experiment {
    cluster: Cluster,
    /// The workloads: name and pods, in the order of the pod lists.
    pub workloads: Vec<(String, Vec<Pod>)>,
    /// The placements, in order.
    pub policies: Vec<String>,
    /// The seeds, in order.
    pub seeds: Vec<u64>,
    tune: f64,
    rng: FgdRng,
    out: PathBuf,
}

fn read(path: &Path) -> Result<Vec<u8>, RunError> {
    traces::read_file(path).map(|(bytes, _, _)| bytes).map_err(|e| RunError::BadInput(e.to_string()))
}

/// A pod list as a workload: its name (the file name without `.csv` or `.csv.gz`) and
/// pods.
fn workload(path: &Path) -> Result<(String, Vec<Pod>), RunError> {
    let name = path.display().to_string();
    let pods = traces::openb::parse_pods(&name, &read(path)?).map_err(|e| RunError::BadInput(e.to_string()))?;
    let stem = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = stem.strip_suffix(".gz").unwrap_or(&stem);
    let stem = stem.strip_suffix(".csv").unwrap_or(stem).to_string();
    let pods = pods.iter().map(|p| Pod { name: p.name.clone(), task: p.task(), models: p.gpu_spec.clone() }).collect();
    Ok((stem, pods))
}

impl Experiment {
    /// Checks the tuning ratio, reads the node and pod lists and creates the output
    /// folder.
    pub fn load(o: &FgdOptions) -> Result<Experiment, RunError> {
        let bad = RunError::BadInput;
        if !(o.tune.is_finite() && o.tune >= 0.0) {
            return Err(bad(format!("--tune: expected a ratio >= 0, found {}", o.tune)));
        }
        let node_name = o.nodes.display().to_string();
        let nodes = traces::openb::parse_nodes(&node_name, &read(&o.nodes)?).map_err(|e| bad(e.to_string()))?;
        let cluster =
            traces::openb::cluster(&nodes, sim_core::GpuSharing::Shared, traces::openb::UNKNOWN_GPU_MEMORY_MIB);
        let workloads = o.pods.iter().map(|p| workload(p)).collect::<Result<Vec<_>, _>>()?;
        std::fs::create_dir_all(&o.out)
            .map_err(|e| RunError::Other(format!("{}: cannot create folder: {e}", o.out.display())))?;
        Ok(Experiment {
            cluster,
            workloads,
            policies: o.policies.clone(),
            seeds: o.seeds.clone(),
            tune: o.tune,
            rng: o.rng,
            out: o.out.clone(),
        })
    }

    /// The plan: (workload index, placement, seed) for each workload, placement and seed,
    /// in that order.
    pub fn runs(&self) -> Vec<(usize, &str, u64)> {
        let mut runs: Vec<(usize, &str, u64)> = Vec::new();
        for w in 0..self.workloads.len() {
            for p in &self.policies {
                for &s in &self.seeds {
                    runs.push((w, p.as_str(), s));
                }
            }
        }
        runs
    }

    /// Runs the plan in parallel on `threads` threads (0: one per core), calling `done`
    /// after each run; the results come in plan order.
    pub fn run(&self, threads: usize, done: &(dyn Fn() + Sync)) -> Result<Vec<FgdRun>, RunError> {
        let runs = self.runs();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| RunError::Other(format!("thread pool: {e}")))?;
        Ok(pool.install(|| {
            runs.par_iter()
                .map(|&(w, p, s)| {
                    let r = self.run_one(w, p, s);
                    done();
                    r
                })
                .collect()
        }))
    }

    /// One run of the protocol: workload `w` under placement `p` with seed `s`.
    fn run_one(&self, w: usize, p: &str, s: u64) -> FgdRun {
        let r = fgd_protocol::run_with(&self.cluster, &self.workloads[w].1, p, s, self.tune, self.rng)
            .expect("placement checked");
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
        // Reproducing the original: its analysis scripts' arithmetic too.
        let arithmetic = match self.rng {
            FgdRng::ChaCha => fgd_curves::Arithmetic::Plain,
            FgdRng::Go { .. } => fgd_curves::Arithmetic::NumPy,
        };
        let curves = fgd_curves::curves_with(&samples, r.total_gpus, arithmetic);
        FgdRun { workload: w, policy: p.to_string(), seed: s, curves, placed: r.placed, failed: r.failed }
    }

    /// Writes the three curve files ([`FILES`]) of `results` into the output folder, each
    /// whole or not at all.
    pub fn write(&self, results: &[FgdRun]) -> Result<(), RunError> {
        let write = |file: &str, pick: &dyn Fn(&Curves) -> &Vec<Option<f64>>| {
            write_finished(&self.out.join(file), |w| {
                writeln!(w, "{}", fgd_curves::header())?;
                for r in results {
                    writeln!(
                        w,
                        "{}",
                        fgd_curves::row(&self.workloads[r.workload].0, &r.policy, r.seed, pick(&r.curves))
                    )?;
                }
                Ok(())
            })
            .map_err(|e| RunError::Other(format!("{}: {e}", self.out.join(file).display())))
        };
        let files = [
            write(FILES[0], &|c| &c.allocation)?,
            write(FILES[1], &|c| &c.fragmentation)?,
            write(FILES[2], &|c| &c.fragmentation_ratio)?,
        ];
        for f in files {
            f.rename().map_err(|e| RunError::Other(format!("{}: {e}", self.out.display())))?;
        }
        Ok(())
    }

    /// The means over the seeds of each workload under each placement, in that order.
    pub fn means<'a>(&'a self, results: &[FgdRun]) -> Vec<Means<'a>> {
        let mut out = Vec::new();
        for (wi, (wname, _)) in self.workloads.iter().enumerate() {
            for p in &self.policies {
                let rows: Vec<&FgdRun> = results.iter().filter(|r| r.workload == wi && r.policy == *p).collect();
                let mean = |f: &dyn Fn(&Curves) -> Option<f64>| {
                    let v: Vec<f64> = rows.iter().filter_map(|r| f(&r.curves)).collect();
                    if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 }
                };
                out.push(Means {
                    workload: wname,
                    policy: p,
                    allocation: mean(&|c| c.allocation[100]),
                    fragmentation: mean(&|c| c.fragmentation[100]),
                    failed: rows.iter().map(|r| r.failed).sum::<usize>() as f64 / rows.len().max(1) as f64,
                });
            }
        }
        out
    }
}
