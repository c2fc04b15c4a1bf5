//! `sim compare`: the runner's comparison with a progress bar and the table.

use crate::Failure;
use crate::cli::{CompareArgs, JobsFormat};

/// `sim compare`.
pub fn compare(c: &CompareArgs) -> Result<(), Failure> {
    let listed = c.policies.as_deref().or(c.arrangements.as_deref()).unwrap_or_default();
    let specs = runner::compare::split_specs(listed);
    let seeds = runner::compare::parse_seeds(&c.seeds, "--seeds").map_err(Failure::BadInput)?;
    let mut base = crate::args::run_options(&c.sim, None, 0, c.out.clone(), false, JobsFormat::Default)?;
    base.slurm_conf = c.input.slurm_conf.clone();
    base.slurm_qos = c.input.qos.clone();
    base.slurm_assoc = c.input.assoc.clone();
    base.compare_arrangements = c.arrangements.is_some();
    // Every spec and controller is checked before any run starts.
    let variants = runner::compare::check_plan(&specs, &c.vary, &base)?;
    let plan = runner::compare::plan(&specs, &variants, &seeds);
    let input = crate::args::input(&c.input)?;
    let threads = c.threads.unwrap_or(0);
    let mut note = |n: String| {
        if !c.quiet {
            eprintln!("{n}");
        }
    };
    let streamed = runner::compare::streams_all(&plan, &base, &input);
    // Unless each replay reads the trace as it goes, the workload is read ahead once per
    // distinct seed only when the seed changes it (`--perturb`, synthetic GPU memory),
    // otherwise once; in parallel. Notes are printed from the first read.
    let loaded =
        if streamed { Default::default() } else { runner::compare::load_per_seed(&input, &seeds, threads, &mut note)? };
    let show = !c.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = crate::progress(show, plan.len() as u64, "{spinner} comparing {bar:40} {pos}/{len} runs ({eta})");
    let done = || bar.inc(1);
    let runs = if streamed {
        runner::compare::compare_streamed(&plan, &base, &input, &c.out, threads, &mut note, &done)?
    } else {
        let loaded_for = |seed: u64| runner::compare::loaded_for(&loaded, seed);
        runner::compare::compare(&plan, &base, &loaded_for, &c.out, threads, &done)?
    };
    bar.finish_and_clear();
    if !c.quiet {
        println!("schedlab compare → {}", c.out.display());
        print!("{}", runner::report::comparison_table(&runs));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use runner::compare::{folder_name, split_specs};

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
