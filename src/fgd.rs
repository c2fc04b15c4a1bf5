//! `sim fgd`: the FGD paper's placement experiments on Alibaba's openb traces.
//!
//! The pipeline is the runner's ([`runner::fgd`]); this maps the flags to it, shows the
//! progress bar and prints the table.

use crate::Failure;
use crate::cli::{FgdArgs, FgdRngArg};
use policies::fgd_protocol::FgdRng;
use runner::fgd::{Experiment, FgdOptions, FgdRun};

/// `sim fgd`.
pub fn fgd(a: &FgdArgs) -> Result<(), Failure> {
    let policies = runner::fgd::placements(a.policies.as_deref())?;
    let seeds = runner::compare::parse_seeds(&a.seeds, "--seeds").map_err(Failure::BadInput)?;
    let rng = match a.rng {
        FgdRngArg::Chacha => FgdRng::ChaCha,
        FgdRngArg::Go => FgdRng::Go { informer_draws: a.go_informer_draws },
    };
    let options = FgdOptions {
        nodes: a.nodes.clone(),
        pods: a.pods.clone(),
        policies,
        seeds,
        tune: a.tune,
        rng,
        out: a.out.clone(),
    };
    let experiment = Experiment::load(&options)?;
    let show = !a.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = crate::progress(show, experiment.runs().len() as u64, "{spinner} fgd {bar:40} {pos}/{len} runs ({eta})");
    let done = || bar.inc(1);
    let results = experiment.run(a.threads.unwrap_or(0), &done)?;
    bar.finish_and_clear();
    experiment.write(&results)?;
    if !a.quiet {
        print_table(&experiment, &results, &a.out);
    }
    Ok(())
}

/// The table of means at 100 % arrived workload, and the files written into `out`.
fn print_table(experiment: &Experiment, results: &[FgdRun], out: &std::path::Path) {
    println!("GPU allocation % at 100 % arrived workload (mean over {} seeds):", experiment.seeds.len());
    println!("{:<32} {:<14} {:>8} {:>8} {:>10}", "workload", "policy", "alloc%", "frag%", "failed");
    for m in experiment.means(results) {
        println!(
            "{:<32} {:<14} {:>8.2} {:>8.2} {:>10.1}",
            m.workload, m.policy, m.allocation, m.fragmentation, m.failed
        );
    }
    println!("wrote {}/allocation.csv, fragmentation.csv, fragmentation_ratio.csv", out.display());
}
