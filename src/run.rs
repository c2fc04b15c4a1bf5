//! `sim run`: the runner's pipeline with a progress bar, notes on standard error and the
//! summary table on standard output.

use crate::Failure;
use crate::cli::RunArgs;

/// `sim run`: reads the workload, replays it, writes the run folder and prints the table.
pub fn run(a: &RunArgs) -> Result<(), Failure> {
    let mut o = crate::args::run_options(&a.sim, a.policy.clone(), a.seed, a.out.clone(), a.log, a.jobs_format)?;
    o.slurm_conf = a.input.slurm_conf.clone();
    o.sacct = a.sacct;
    o.slurm_qos = a.input.qos.clone();
    o.slurm_assoc = a.input.assoc.clone();
    o.arrangement = a.arrangement.clone();
    if let Some(x) = &o.arrangement {
        runner::run::check_arrangement(x)?;
    }
    let input = crate::args::input(&a.input)?;
    // The policy and the controllers are checked before the (possibly long) read.
    runner::run::policy(&o, None, crate::args::is_openb(&input))?;
    runner::run::controllers(&o, &[])?;
    let show = !a.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    if runner::stream::streams(&input, &o) {
        // Read a job at a time; a file not sorted by submit time is read whole below.
        let bar = submitted_bar(show, None);
        let mut size = |n: Option<u64>| {
            if let Some(n) = n.filter(|_| show) {
                bar.set_length(n);
                bar.set_style(indicatif::ProgressStyle::with_template(KNOWN).expect("valid template"));
            }
        };
        let mut tick = |n: u64| bar.set_position(n);
        let mut note = |n: String| {
            if !a.quiet {
                eprintln!("{n}")
            }
        };
        let streamed = runner::stream::run(&input, &o, &mut note, &mut size, Some(&mut tick))?;
        bar.finish_and_clear();
        if let runner::stream::Streamed::Done { replayed, notes } = streamed {
            notes.into_iter().for_each(note);
            return finish(a, *replayed);
        }
    }
    let spinner = show.then(|| {
        let p = indicatif::ProgressBar::new_spinner();
        p.set_message("reading trace");
        p.enable_steady_tick(std::time::Duration::from_millis(120));
        p
    });
    let loaded = runner::input::load(&input, a.seed, &mut |n| {
        if !a.quiet {
            eprintln!("{n}");
        }
    })?;
    if let Some(p) = spinner {
        p.finish_and_clear();
    }
    if !a.quiet {
        runner::run::notes(&o, &loaded)?.iter().for_each(|n| eprintln!("{n}"));
    }
    let bar = submitted_bar(show, Some(loaded.workload.jobs.len() as u64));
    let mut tick = |n: u64| bar.set_position(n);
    let done = runner::run::run(&o, &loaded, Some(&mut tick))?;
    bar.finish_and_clear();
    finish(a, done)?;
    // The process ends next: leave the large tables to the OS instead of freeing them one
    // allocation at a time (hundreds of thousands of jobs).
    std::mem::forget(loaded);
    Ok(())
}

/// The progress bar's layout when the number of jobs is known.
const KNOWN: &str = "{spinner} simulating {bar:40} {pos}/{len} jobs submitted ({eta})";

/// The progress bar of jobs submitted, of `len` when known.
fn submitted_bar(show: bool, len: Option<u64>) -> indicatif::ProgressBar {
    match len {
        Some(n) => crate::progress(show, n, KNOWN),
        None => crate::progress(show, 0, "{spinner} simulating: {pos} jobs submitted"),
    }
}

/// After the replay: the report if asked for, earlier runs' files removed, the table.
fn finish(a: &RunArgs, done: runner::run::Replayed) -> Result<(), Failure> {
    let mut written = done.written;
    if a.report {
        let run = runner::report::read_run(&a.out)?;
        written.extend(runner::report::write_report(&a.out, &[run])?);
    }
    // Another run's files (a decision log, a report) must not sit beside this run's.
    runner::output::remove_stale(&a.out, &written, true)
        .map_err(|e| Failure::Other(format!("{}: removing an earlier run's files: {e}", a.out.display())))?;
    if !a.quiet {
        println!("schedlab run → {}", a.out.display());
        print!("{}", done.summary.table());
    }
    Ok(())
}
