//! `sim compare`: one trace under several policies and seeds, replayed in parallel; each
//! run writes its own folder, then the comparison and the report are built from them.

use crate::Failure;
use crate::cli::{CompareArgs, JobsFormat, RunArgs};
use rayon::prelude::*;

/// Splits a list of policy specs at the commas outside `[...]`.
pub fn split_specs(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in s.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// A run folder's name: the policy spec with its punctuation made safe, and the seed.
pub fn folder_name(spec: &str, seed: u64) -> String {
    let safe: String = spec.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("{}__seed{seed}", safe.trim_end_matches('_'))
}

pub fn compare(c: &CompareArgs) -> Result<(), Failure> {
    let bad = Failure::BadInput;
    let specs = split_specs(&c.policies);
    if specs.is_empty() {
        return Err(bad("--policies: expected at least one policy spec".into()));
    }
    let seeds = crate::fgd::parse_seeds(&c.seeds).map_err(bad)?;
    let plan: Vec<(String, u64)> = specs.iter().flat_map(|p| seeds.iter().map(move |&s| (p.clone(), s))).collect();
    let run_args = |spec: &str, seed: u64| RunArgs {
        input: c.input.clone(),
        sim: c.sim.clone(),
        policy: Some(spec.to_string()),
        seed,
        out: c.out.join(folder_name(spec, seed)),
        log: false,
        jobs_format: JobsFormat::Default,
        report: false,
        quiet: true,
    };
    // Every spec is checked before any run starts, and no policy may come twice (the
    // same canonical spec, or two specs that would share a run folder).
    let mut seen: Vec<(String, String, &str)> = Vec::new();
    for p in &specs {
        let built =
            policies::compose(p, c.sim.placement.as_deref(), c.sim.gang.as_deref(), c.sim.topology.as_deref(), 0)
                .map_err(|e| bad(format!("--policies: '{p}': {e}")))?;
        let (canonical, folder) = (built.spec(), folder_name(p, 0));
        if let Some((c, _, first)) = seen.iter().find(|(c, f, _)| *c == canonical || *f == folder) {
            let what = if *c == canonical {
                format!("is the same policy as '{first}' ({canonical})")
            } else {
                format!("would share a run folder with '{first}'")
            };
            return Err(bad(format!("--policies: '{p}' {what}: list each policy once")));
        }
        seen.push((canonical, folder, p));
    }
    crate::run::controllers_of(&run_args(&specs[0], 0))?;
    // The workload is read once per distinct seed only when the seed changes it
    // (synthetic GPU memory); otherwise once.
    let seeded_input = c.input.gpu_memory == crate::cli::GpuMemoryArg::Synthetic;
    let mut loaded = std::collections::BTreeMap::new();
    for &s in if seeded_input { &seeds[..] } else { &seeds[..1] } {
        // Notes and warnings about the input once, with the first read.
        loaded.insert(s, crate::input::load(&c.input, s, c.quiet || !loaded.is_empty())?);
    }
    let workload_for = |seed: u64| if seeded_input { &loaded[&seed] } else { &loaded[&seeds[0]] };
    std::fs::create_dir_all(&c.out)
        .map_err(|e| Failure::Other(format!("{}: cannot create folder: {e}", c.out.display())))?;
    let show = !c.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = show.then(|| {
        let b = indicatif::ProgressBar::new(plan.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} comparing {bar:40} {pos}/{len} runs ({eta})")
                .expect("valid template"),
        );
        b
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(c.threads.unwrap_or(0))
        .build()
        .map_err(|e| Failure::Other(format!("thread pool: {e}")))?;
    // Runs are independent and each writes only its own folder; results are collected in
    // plan order, so nothing depends on the thread count.
    let results: Vec<Result<(), Failure>> = pool.install(|| {
        plan.par_iter()
            .map(|(spec, seed)| {
                let (w, name) = workload_for(*seed);
                let args = run_args(spec, *seed);
                let r = crate::run::run_loaded(&args, w, name, false).and_then(|(_, written)| {
                    crate::output::remove_stale(&args.out, &written, true)
                        .map_err(|e| Failure::Other(format!("{}: removing stale files: {e}", args.out.display())))
                });
                if let Some(b) = &bar {
                    b.inc(1);
                }
                r
            })
            .collect()
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    for r in results {
        r?;
    }
    let runs: Vec<crate::report::RunData> = plan
        .iter()
        .map(|(spec, seed)| crate::report::read_run(&c.out.join(folder_name(spec, *seed))))
        .collect::<Result<_, _>>()?;
    let written = crate::report::write_report(&c.out, &runs)?;
    crate::output::remove_stale(&c.out, &written, false)
        .map_err(|e| Failure::Other(format!("{}: removing an earlier report's files: {e}", c.out.display())))?;
    let list: String = plan.iter().map(|(spec, seed)| folder_name(spec, *seed) + "\n").collect();
    let f = crate::output::write_finished(&c.out.join(crate::report::RUNS_LIST), |w| w.write_all(list.as_bytes()))
        .map_err(|e| Failure::Other(format!("{}: {e}", c.out.join(crate::report::RUNS_LIST).display())))?;
    f.rename().map_err(|e| Failure::Other(format!("{}: {e}", c.out.join(crate::report::RUNS_LIST).display())))?;
    if !c.quiet {
        println!("schedlab compare → {}", c.out.display());
        print!("{}", crate::report::comparison_table(&runs));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_split_outside_brackets() {
        assert_eq!(
            split_specs("fcfs, easy[pass=per-event,reservation=nodes],conservative"),
            ["fcfs", "easy[pass=per-event,reservation=nodes]", "conservative"]
        );
        assert_eq!(
            folder_name("easy[pass=per-event,reservation=nodes]", 3),
            "easy_pass_per-event_reservation_nodes__seed3"
        );
    }
}
