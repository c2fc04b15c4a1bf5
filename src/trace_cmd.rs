//! `sim trace stats`, `sim trace convert` and `sim trace fit`: reading a trace of any
//! format without a cluster, and writing what it says.

use crate::Failure;
use crate::cli::{ConvertArgs, ConvertTo, FitArgs, GpuMemoryArg, StatsArgs};
use crate::input::{accounting, format_of, import_options};
use crate::output;
use sim_core::Job;
use std::io::Write;
use std::path::Path;

/// Writes `dest` whole or not at all, gzipped when its name ends in `.gz`.
pub fn write_output(dest: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure::Other(format!("{}: {e}", dest.display()));
    let gz = dest.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    let f = output::write_finished(dest, |out| {
        if gz {
            // A fixed header (no name, no time): the same content gives the same bytes.
            let mut z = flate2::GzBuilder::new().mtime(0).write(out, flate2::Compression::default());
            fill(&mut z)?;
            z.finish()?;
            Ok(())
        } else {
            fill(out)
        }
    })
    .map_err(fail)?;
    f.rename().map_err(fail)
}

/// Writes `jobs` as SWF (`max_procs` in the header) or native.
pub fn write_jobs(
    out: &mut dyn Write,
    to: ConvertTo,
    jobs: &[Job],
    max_procs: Option<u64>,
    note: &str,
) -> std::io::Result<()> {
    match to {
        ConvertTo::Native => traces::native::write(out, jobs),
        ConvertTo::Swf => traces::swf::write_all(out, jobs, max_procs, &[note.to_string()]),
    }
}

fn import(
    file: &Path,
    format: Option<crate::cli::FormatArg>,
    pai_jobs: &Option<std::path::PathBuf>,
    app_runtime: &[String],
) -> Result<traces::Imported, Failure> {
    let opts = import_options(pai_jobs, app_runtime)?;
    traces::import(file, format.map(format_of), &opts).map_err(|e| Failure::BadInput(e.to_string()))
}

/// `sim trace stats`.
pub fn stats(a: &StatsArgs) -> Result<(), Failure> {
    let t = &a.trace;
    let name = t.file.display().to_string();
    let imported = import(&t.file, t.format, &t.pai_jobs, &t.app_runtime)?;
    let s = traces::stats::compute(&imported.jobs);
    if a.json {
        let v = serde_json::json!({
            "file": name,
            "format": imported.format.name(),
            "rows": imported.rows,
            "skipped": imported.skipped,
            "machine_units": imported.units,
            "stats": s,
        });
        println!("{}", serde_json::to_string_pretty(&v).map_err(|e| Failure::Other(e.to_string()))?);
    } else {
        println!("{} ({} format)", accounting(&name, &imported), imported.format.name());
        if let Some(u) = imported.units {
            println!("machine            {u} units (from the file)");
        }
        print!("{}", s.to_text());
    }
    Ok(())
}

/// `sim trace convert`.
pub fn convert(c: &ConvertArgs) -> Result<(), Failure> {
    let (mut jobs, units, name) = match c.file.as_ref().or(c.input.trace.as_ref()) {
        Some(path) => {
            let name = path.display().to_string();
            let imported = import(path, c.input.format, &c.input.pai_jobs, &c.input.app_runtime)?;
            if imported.skipped.total() > 0 {
                eprintln!("{}", accounting(&name, &imported));
            }
            let units = match &c.input.cluster {
                Some(p) => Some(crate::input::load_cluster(p)?.total_units()),
                None => c.input.procs.or(imported.units),
            };
            (imported.jobs, units, name)
        }
        None => {
            let (w, name) = crate::input::load(&c.input, c.seed, true)?;
            (w.jobs, Some(w.units), name)
        }
    };
    if c.input.gpu_memory == GpuMemoryArg::Synthetic {
        traces::gpumem::GpuMemoryModel::default().assign(&mut jobs, c.seed);
    }
    let note = format!("converted by schedlab {} from {name}", env!("CARGO_PKG_VERSION"));
    write_output(&c.out, |out| write_jobs(out, c.to, &jobs, units, &note))
}

/// `sim trace fit`.
pub fn fit(a: &FitArgs) -> Result<(), Failure> {
    let t = &a.trace;
    let name = t.file.display().to_string();
    let imported = import(&t.file, t.format, &t.pai_jobs, &t.app_runtime)?;
    if imported.jobs.is_empty() {
        return Err(Failure::BadInput(format!("{name}: no jobs to fit")));
    }
    let mut model = traces::fit::fit(&imported.jobs, &name);
    if let Some(u) = imported.units {
        model.procs = Some(u);
    }
    let text = model.to_toml();
    write_output(&a.out, |out| out.write_all(text.as_bytes()))
}
