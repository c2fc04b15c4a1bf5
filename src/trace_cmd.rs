//! `sim trace stats`, `sim trace convert` and `sim trace fit`: reading a trace of any
//! format without a cluster, and writing what it says.

use crate::Failure;
use crate::args::format_of;
use crate::cli::{ConvertArgs, ConvertTo, FitArgs, GpuMemoryArg, StatsArgs};
use runner::input::{import_options, refuse_empty};
use runner::output;
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

/// Writes `jobs` as SWF (the machine in the header) or native.
pub fn write_jobs(
    out: &mut dyn Write,
    to: ConvertTo,
    jobs: &[Job],
    machine: traces::swf::Machine,
    note: &str,
) -> std::io::Result<()> {
    match to {
        ConvertTo::Native => traces::native::write(out, jobs),
        ConvertTo::Swf => traces::swf::write_all(out, jobs, machine, &[note.to_string()]),
    }
}

/// What SWF has no field for.
const CANNOT_CARRY: [&str; 8] = [
    "GPUs",
    "GPU models",
    "GPU memory",
    "tasks of several cores (written as processors)",
    "constraints (labels, selectors, affinity, tolerations, spread)",
    "elastic minimum (min_tasks)",
    "priorities",
    "job kinds other than batch",
];

/// Whether `j` holds each of [`CANNOT_CARRY`].
fn cannot_carry(j: &Job) -> [bool; 8] {
    [
        j.task.gpus > 0,
        !j.gpu_models.is_empty(),
        j.task.gpu_memory_mib > 0 || j.task.gpu_peak_mib > 0,
        j.tasks > 1 && j.task.cores > 1,
        j.constraints.is_some(),
        j.min_tasks > 0,
        j.priority != 0,
        j.kind != sim_core::JobKind::Batch,
    ]
}

/// What the jobs hold that SWF has no field for, as `(what, jobs)`: written to standard
/// error by `sim trace convert --to swf`, since those values are lost.
pub fn swf_cannot_carry(jobs: &[Job]) -> Vec<(&'static str, usize)> {
    let mut n = [0usize; 8];
    for j in jobs {
        n.iter_mut().zip(cannot_carry(j)).for_each(|(c, b)| *c += usize::from(b));
    }
    CANNOT_CARRY.into_iter().zip(n).filter(|&(_, n)| n > 0).collect()
}

fn import(
    file: &Path,
    format: Option<crate::cli::FormatArg>,
    pai_jobs: &Option<std::path::PathBuf>,
    app_runtime: &[String],
) -> Result<traces::Imported, Failure> {
    let opts = import_options(pai_jobs, app_runtime)?;
    refuse_empty(file)?;
    traces::import(file, format.map(format_of), &opts).map_err(|e| Failure::BadInput(e.to_string()))
}

/// `sim trace stats`: the trace read a job at a time (memory does not grow with it: the
/// distributions' values past 1 Mi each are sorted in runs in the temporary folder).
pub fn stats(a: &StatsArgs) -> Result<(), Failure> {
    let t = &a.trace;
    let name = t.file.display().to_string();
    let opts = import_options(&t.pai_jobs, &t.app_runtime)?;
    refuse_empty(&t.file)?;
    let mut builder = traces::stats::StatsBuilder::new(Some(&std::env::temp_dir()));
    let mut load = traces::stats::OfferedLoad::default();
    let io = |e: std::io::Error| traces::TraceError::Io { file: "the temporary folder".into(), source: e };
    let imported = traces::import_each(&t.file, t.format.map(format_of), &opts, &mut |j| {
        load.add(&j);
        builder.add(&j).map_err(io)
    })
    .map_err(|e| Failure::BadInput(e.to_string()))?;
    let s = builder.finish().map_err(|e| Failure::Other(format!("sim trace stats: the temporary folder: {e}")))?;
    let jobs = s.jobs as usize;
    // The machine: the cluster given, else the size the file states (no GPUs known).
    let (units, gpus, from) = match &a.cluster {
        Some(p) => {
            let c = runner::input::load_cluster(p)?.cluster;
            (Some(c.total_units()), Some(c.total_gpus()), format!("from {}", p.display()))
        }
        None => (imported.units, None, "from the file".to_string()),
    };
    let (core_load, gpu_load) = load.of(units.unwrap_or(0), gpus.unwrap_or(0));
    if a.json {
        let v = serde_json::json!({
            "file": name,
            "format": imported.format.name(),
            "rows": imported.rows,
            "skipped": imported.skipped,
            "machine_units": units,
            "machine_gpus": gpus,
            "offered_load": core_load,
            "offered_gpu_load": gpu_load,
            "stats": s,
        });
        println!("{}", serde_json::to_string_pretty(&v).map_err(|e| Failure::Other(e.to_string()))?);
    } else {
        println!(
            "{} ({} format)",
            runner::input::accounting(&name, imported.rows, jobs, &imported.skipped),
            imported.format.name()
        );
        match (units, gpus) {
            (Some(u), Some(g)) => println!("machine            {u} units, {g} GPUs ({from})"),
            (Some(u), None) => println!("machine            {u} units ({from})"),
            _ => {}
        }
        if let Some(l) = core_load {
            println!("offered load       {l:.4} of the cores (work / (cores × first submit to last end))");
        }
        if let Some(l) = gpu_load {
            println!("offered GPU load   {l:.4} of the GPUs (GPU work / (GPUs × first submit to last end))");
        }
        print!("{}", s.to_text());
    }
    Ok(())
}

/// `sim trace convert`.
pub fn convert(c: &ConvertArgs) -> Result<(), Failure> {
    use traces::swf::Machine;
    if let Some(path) = c.file.as_ref().or(c.input.trace.first())
        && c.input.gpu_memory != GpuMemoryArg::Synthetic
        && convert_streamed(c, path)?
    {
        return Ok(());
    }
    let (mut jobs, machine, name, format) = match c.file.as_ref().or(c.input.trace.first()) {
        Some(path) => {
            let name = path.display().to_string();
            let imported = import(path, c.input.format, &c.input.pai_jobs, &c.input.app_runtime)?;
            if imported.skipped.total() > 0 {
                eprintln!(
                    "{}",
                    runner::input::accounting(&name, imported.rows, imported.jobs.len(), &imported.skipped)
                );
            }
            let machine = machine_of(c, &imported)?;
            (imported.jobs, machine, name, imported.format)
        }
        None => {
            let l = runner::input::load(&crate::args::input(&c.input)?, c.seed, &mut |_| {})?;
            let (w, name) = (l.workload, l.name);
            let machine = Machine { procs: Some(w.units), nodes: Some(w.cluster.node_count() as u64) };
            (w.jobs, machine, name, w.format)
        }
    };
    if c.input.gpu_memory == GpuMemoryArg::Synthetic {
        traces::gpumem::GpuMemoryModel::default().assign(&mut jobs, c.seed);
    }
    if c.to == ConvertTo::Swf {
        if machine.procs.is_none() {
            return Err(Failure::BadInput(format!(
                "{name}: SWF states the machine's size (MaxProcs) and a {} trace does not give it: add --cluster \
                 CLUSTER.toml or --procs N",
                format.name()
            )));
        }
        for (what, n) in swf_cannot_carry(&jobs) {
            eprintln!("warning: {name}: SWF has no field for {what}: left out of {n} jobs");
        }
    }
    let note = format!("converted by schedlab {} from {name}", env!("CARGO_PKG_VERSION"));
    write_output(&c.out, |out| write_jobs(out, c.to, &jobs, machine, &note))
}

/// The machine an SWF output states: `--cluster`'s, else `--procs`, else what the file
/// states.
fn machine_of(c: &ConvertArgs, imported: &traces::Imported) -> Result<traces::swf::Machine, Failure> {
    use traces::swf::Machine;
    Ok(match &c.input.cluster {
        Some(p) => {
            let cl = runner::input::load_cluster(p)?.cluster;
            Machine { procs: Some(cl.total_units()), nodes: Some(cl.node_count() as u64) }
        }
        None if c.input.procs.is_some() => Machine { procs: c.input.procs, nodes: None },
        None => Machine { procs: imported.units, nodes: imported.nodes },
    })
}

/// `sim trace convert` of `path` a job at a time, so memory does not grow with the trace:
/// to native in one pass; to SWF in two, the first counting the jobs (SWF's header states
/// them) and what SWF cannot carry. `false` (nothing written) when converting to SWF job
/// ids that are not numbers in increasing order, which SWF keeps only when all are
/// unique numbers: the trace is then converted whole.
fn convert_streamed(c: &ConvertArgs, path: &Path) -> Result<bool, Failure> {
    let name = path.display().to_string();
    let opts = import_options(&c.input.pai_jobs, &c.input.app_runtime)?;
    refuse_empty(path)?;
    let format = c.input.format.map(format_of);
    let bad = |e: traces::TraceError| Failure::BadInput(e.to_string());
    let out_err = |e: std::io::Error| traces::TraceError::Io { file: c.out.display().to_string(), source: e };
    let note = format!("converted by schedlab {} from {name}", env!("CARGO_PKG_VERSION"));
    // Writes the output, reading the trace again with `each` writing its jobs; a trace
    // error abandons the output and is reported as bad input.
    let write = |header: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
                 job: &dyn Fn(&mut dyn Write, &Job) -> std::io::Result<()>|
     -> Result<traces::Imported, Failure> {
        let mut result = None;
        let written = write_output(&c.out, |out| {
            header(out)?;
            let r = traces::import_each(path, format, &opts, &mut |j| job(out, &j).map_err(out_err));
            let failed = r.is_err();
            result = Some(r);
            if failed { Err(std::io::Error::other("the trace could not be read")) } else { Ok(()) }
        });
        match result {
            Some(Err(e)) => Err(bad(e)),
            _ => written.map(|()| result.and_then(Result::ok).expect("read")),
        }
    };
    let imported = if c.to == ConvertTo::Native {
        let jobs = std::cell::Cell::new(0usize);
        let imported = write(&|_| Ok(()), &|out, j| {
            jobs.set(jobs.get() + 1);
            traces::native::write_job(out, j)
        })?;
        (imported, jobs.get())
    } else {
        // First pass: the count, the ids, what SWF has no field for.
        let (mut jobs, mut last_id, mut numbered, mut lost) = (0u64, None::<u64>, true, [0usize; 8]);
        let first = traces::import_each(path, format, &opts, &mut |j| {
            jobs += 1;
            let digits = j.trace_id.len() <= 18 && j.trace_id.bytes().all(|b| b.is_ascii_digit());
            let id = digits.then(|| j.trace_id.parse::<u64>().ok()).flatten();
            numbered &= id.is_some_and(|id| last_id.is_none_or(|l| id > l));
            last_id = id;
            lost.iter_mut().zip(cannot_carry(&j)).for_each(|(n, b)| *n += usize::from(b));
            Ok(())
        })
        .map_err(bad)?;
        if !numbered {
            return Ok(false);
        }
        let machine = machine_of(c, &first)?;
        if first.skipped.total() > 0 {
            eprintln!("{}", runner::input::accounting(&name, first.rows, jobs as usize, &first.skipped));
        }
        if machine.procs.is_none() {
            return Err(Failure::BadInput(format!(
                "{name}: SWF states the machine's size (MaxProcs) and a {} trace does not give it: add --cluster \
                 CLUSTER.toml or --procs N",
                first.format.name()
            )));
        }
        for (what, n) in CANNOT_CARRY.into_iter().zip(lost).filter(|&(_, n)| n > 0) {
            eprintln!("warning: {name}: SWF has no field for {what}: left out of {n} jobs");
        }
        let header =
            |out: &mut dyn Write| traces::swf::write_header(out, machine, Some(jobs), std::slice::from_ref(&note));
        write(&header, &|out, j| traces::swf::write_job(out, j.trace_id.parse().unwrap_or_default(), j))?;
        return Ok(true);
    };
    let (imported, jobs) = imported;
    if imported.skipped.total() > 0 {
        eprintln!("{}", runner::input::accounting(&name, imported.rows, jobs, &imported.skipped));
    }
    Ok(true)
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

/// `sim trace fit-failures`: the fault log's rates as a `failures` controller.
pub fn fit_failures(a: &crate::cli::FitFailuresArgs) -> Result<(), Failure> {
    let log = traces::faults::read(&a.file).map_err(|e| Failure::BadInput(e.to_string()))?;
    if log.events.is_empty() {
        return Err(Failure::BadInput(format!("{}: no fault events", a.file.display())));
    }
    let fit = log.fit(a.nodes.unwrap_or(0));
    let source = a.file.display().to_string();
    let text = if a.by_cause {
        traces::faults::FaultFit::toml_by_cause(&fit, &log.fit_by_cause(a.nodes.unwrap_or(0)), &source)
    } else if a.samples {
        let (tbf, repairs) = log.samples();
        if tbf.is_empty() || repairs.is_empty() {
            let what = "no node has two faults or no fault ends: nothing to draw from";
            return Err(Failure::BadInput(format!("{}: {what}", a.file.display())));
        }
        let (tbf_path, repair_path) = (a.out.with_extension("tbf.txt"), a.out.with_extension("repairs.txt"));
        for (path, what, values) in
            [(&tbf_path, "times between a node's faults", &tbf), (&repair_path, "repair times", &repairs)]
        {
            write_output(path, |out| {
                writeln!(out, "# {what}, hours, from {source}")?;
                values.iter().try_for_each(|v| writeln!(out, "{v:.4}"))
            })?;
        }
        // The repairs are every repair of the log; the times between faults only those of
        // nodes that failed twice or more, which lean short (the others' are censored):
        // the rate stays the fitted one unless the user chooses tbf_file.
        let mean_tbf = tbf.iter().sum::<f64>() / tbf.len() as f64;
        let fitted = fit.spec();
        let spec = format!("{},repair_file={}]", fitted.trim_end_matches(']'), repair_path.display());
        let header = fit.comments(&source);
        format!(
            "{header}# Repairs drawn from the log's own {} repair times (paths from the working directory).\n\
             # {} times between one node's faults are in {} (mean {mean_tbf:.0} h: only nodes that failed\n\
             # twice or more, so shorter than the fleet's MTBF); tbf_file={} draws from them instead of mtbf.\n\
             [[controller]]\nspec = \"{spec}\"\n",
            repairs.len(),
            tbf.len(),
            tbf_path.display(),
            tbf_path.display()
        )
    } else {
        fit.toml(&source)
    };
    write_output(&a.out, |out| out.write_all(text.as_bytes()))?;
    print!("{text}");
    Ok(())
}
