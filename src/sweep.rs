//! `sim sweep`: the runner's sweeps (plan, one cell, all here, merge, the Slurm and
//! Kubernetes submit files) with their output on the terminal.

use crate::Failure;
use crate::cli::SweepCommand;
use runner::sweep::{Sweep, scripts};
use std::path::{Path, PathBuf};

/// `sim sweep ...`.
pub fn sweep(c: &SweepCommand) -> Result<(), Failure> {
    match c {
        SweepCommand::Plan(a) => plan(&Sweep::load(&a.sweep)?),
        SweepCommand::Run(a) => {
            let s = Sweep::load(&a.sweep)?;
            let cell = s.pick(a.index, a.cell.as_deref())?;
            let quiet = a.quiet;
            let ran = s.run_one(cell, &mut |n| {
                if !quiet {
                    eprintln!("{n}");
                }
            })?;
            if !a.quiet {
                let what = if ran { "done" } else { "already done" };
                println!("cell {} ({}) {what} → {}", cell.id, cell.cell.folder(), s.folder(cell).display());
            }
            Ok(())
        }
        SweepCommand::Local(a) => local(&Sweep::load(&a.sweep)?, a.jobs.unwrap_or(0), a.quiet),
        SweepCommand::Merge(a) => merge(&Sweep::load(&a.sweep)?),
        SweepCommand::Slurm(a) => {
            let s = Sweep::load(&a.sweep)?;
            let sim = match &a.sim {
                Some(p) => absolute(p)?,
                None => std::env::current_exe().map_err(|e| Failure::Other(format!("this program's path: {e}")))?,
            };
            let file = absolute(&a.sweep)?;
            let (array, submit) = (s.out.join("sweep.sbatch"), s.out.join("submit.sh"));
            create_out(&s)?;
            crate::write_all(&[
                (&array, scripts::slurm_array(&s, &sim, &file)),
                (&submit, scripts::slurm_submit(&s, &sim, &file, &array)),
            ])?;
            println!("{} cells: bash {} submits the array and the merge after it", s.cells().len(), submit.display());
            Ok(())
        }
        SweepCommand::K8s(a) => {
            let s = Sweep::load(&a.sweep)?;
            let name = a.sweep.file_name().map_or("sweep.toml".into(), |f| f.to_string_lossy().into_owned());
            let inside = a.file_in_volume.clone().unwrap_or_else(|| format!("{}/{name}", s.kubernetes.mount));
            let job = scripts::kubernetes_job(&s, &inside);
            let path = s.out.join("job.json");
            create_out(&s)?;
            crate::write_all(&[(&path, format!("{job:#}\n"))])?;
            println!("{} cells: kubectl apply -f {}", s.cells().len(), path.display());
            Ok(())
        }
    }
}

fn plan(s: &Sweep) -> Result<(), Failure> {
    use std::fmt::Write as _;
    let cells = s.cells();
    let state: Vec<bool> = cells.iter().map(|c| s.done(c)).collect();
    let done = state.iter().filter(|&&d| d).count();
    let mut text = format!(
        "{} cells ({} traces × {} policies × {} settings × {} seeds), {done} done\nindex\tid\ttrace\tfolder\tdone\n",
        cells.len(),
        s.traces.len(),
        s.specs.len(),
        s.variants.len(),
        s.seeds.len()
    );
    for (i, (c, &d)) in cells.iter().zip(&state).enumerate() {
        let state = if d { "yes" } else { "no" };
        let _ = writeln!(text, "{i}\t{}\t{}\t{}\t{state}", c.id, s.traces[c.trace].name, c.cell.folder());
    }
    // A reader that stops early (`| head`) is not an error.
    let mut out = std::io::stdout().lock();
    match std::io::Write::write_all(&mut out, text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::Other(format!("standard output: {e}"))),
        _ => Ok(()),
    }
}

fn local(s: &Sweep, threads: usize, quiet: bool) -> Result<(), Failure> {
    let all = s.cells();
    let (cells, todo) = (all.len(), all.iter().filter(|c| !s.done(c)).count());
    let show = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = crate::progress(show, todo as u64, "{spinner} sweeping {bar:40} {pos}/{len} cells ({eta})");
    let done = || bar.inc(1);
    let ran = s.run_local(threads, &done)?;
    bar.finish_and_clear();
    let missing = s.merge()?;
    if !quiet {
        let before = cells - todo;
        println!("schedlab sweep → {}: {ran} cells run, {before} were done", s.out.display());
    }
    report_missing(&missing)
}

fn merge(s: &Sweep) -> Result<(), Failure> {
    let missing = s.merge()?;
    println!("schedlab sweep merge → {}", s.out.display());
    report_missing(&missing)
}

fn report_missing(missing: &[runner::sweep::SweepCell]) -> Result<(), Failure> {
    if missing.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = missing.iter().map(|c| c.id.as_str()).collect();
    Err(Failure::Other(format!("{} cells missing (their reports leave them out): {}", missing.len(), ids.join(" "))))
}

fn absolute(p: &Path) -> Result<PathBuf, Failure> {
    std::path::absolute(p).map_err(|e| Failure::Other(format!("{}: {e}", p.display())))
}

/// The sweep's output folder, created.
fn create_out(s: &Sweep) -> Result<(), Failure> {
    std::fs::create_dir_all(&s.out).map_err(|e| Failure::Other(format!("{}: {e}", s.out.display())))
}
