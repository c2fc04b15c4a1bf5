//! `sim run`.

use crate::Failure;
use crate::cli::{JobsFormat, RunArgs};
use crate::output::{AtomicFile, write_finished};
use reports::{RunMeta, Summary};
use sim_core::log::{LogEvent, LogSink};
use sim_core::{Hooks, SimConfig, SimTime};
use std::io::Write;

struct JsonLines<'a> {
    out: &'a mut dyn Write,
}

impl LogSink for JsonLines<'_> {
    fn record(&mut self, now: SimTime, ev: &LogEvent<'_>) -> std::io::Result<()> {
        let mut v = serde_json::to_value(ev).map_err(std::io::Error::other)?;
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("t".into(), serde_json::Value::String(sim_core::time::secs_string(now.0)));
        }
        serde_json::to_writer(&mut *self.out, &v).map_err(std::io::Error::other)?;
        self.out.write_all(b"\n")
    }
}

/// `sim run`: reads the workload, replays it, writes the run folder and prints the table.
pub fn run(a: &RunArgs) -> Result<(), Failure> {
    let show = !a.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let spinner = show.then(|| {
        let p = indicatif::ProgressBar::new_spinner();
        p.set_message("reading trace");
        p.enable_steady_tick(std::time::Duration::from_millis(120));
        p
    });
    // The policy and the controllers are checked before the (possibly long) read.
    policy_of(a, None)?;
    controllers_of(a)?;
    let (workload, trace_name) = crate::input::load(&a.input, a.seed, a.quiet)?;
    if let Some(p) = spinner {
        p.finish_and_clear();
    }
    if let (None, (spec, Some(why))) = (&a.policy, default_spec(a, Some(&workload)))
        && !a.quiet
    {
        eprintln!("policy: {spec} ({why}; --policy chooses another)");
    }
    if let Some(w) = low_load_warning(&workload)
        && !a.quiet
    {
        eprintln!("warning: {trace_name}: {w}");
    }
    let gpu_jobs = workload.jobs.iter().filter(|j| j.task.gpus > 0).count();
    if gpu_jobs > 0 && !a.quiet && !policy_of(a, Some(&workload))?.binds_nodes() {
        eprintln!(
            "warning: {trace_name}: {gpu_jobs} jobs ask for GPUs and this policy counts processors only: their GPUs \
             are neither placed nor limited by the cluster's (GPU allocation can exceed 1)"
        );
    }
    let (summary, mut written) = run_loaded(a, &workload, &trace_name, show)?;
    if a.report {
        written.extend(crate::report::write_report(&a.out, &[crate::report::read_run(&a.out)?])?);
    }
    // Another run's files (a decision log, a report) must not sit beside this run's.
    crate::output::remove_stale(&a.out, &written, true)
        .map_err(|e| Failure::Other(format!("{}: removing an earlier run's files: {e}", a.out.display())))?;
    if !a.quiet {
        println!("schedlab run → {}", a.out.display());
        print!("{}", summary.table());
    }
    // The process ends next: leave the large tables to the OS instead of freeing them one
    // allocation at a time (hundreds of thousands of jobs).
    std::mem::forget(workload);
    Ok(())
}

/// The controllers of the run: the cluster configuration's `[[controller]]` tables, then
/// `--controller` flags, each built with the run's seed and its position.
pub fn controllers_of(a: &RunArgs) -> Result<Vec<Box<dyn sim_core::controller::Controller>>, Failure> {
    let specs = crate::input::cluster_controllers(&a.input)?.into_iter().chain(a.sim.controllers.iter().cloned());
    specs
        .enumerate()
        .map(|(i, s)| {
            controllers::build(&s, a.seed, i).map_err(|e| Failure::BadInput(format!("--controller '{s}': {e}")))
        })
        .collect()
}

/// Below this offered load a replay says little about the policy: the cluster idles.
pub const LOW_LOAD: f64 = 0.01;

/// A warning when the workload offers the cluster less than [`LOW_LOAD`] of its
/// capacity (its GPUs when jobs ask for GPUs, else its cores) over the time it needs at
/// the least (see [`traces::stats::offered_load`]): typically a snapshot trace, such as
/// openb's pod lists, replayed on its whole cluster.
pub fn low_load_warning(w: &traces::Workload) -> Option<String> {
    let (core, gpu) = traces::stats::offered_load(&w.jobs, w.units, w.cluster.total_gpus());
    let gpu_jobs = w.jobs.iter().any(|j| j.task.gpus > 0);
    let (load, what) = if gpu_jobs { (gpu?, "GPU") } else { (core?, "core") };
    (load < LOW_LOAD).then(|| {
        format!(
            "the jobs offer {:.2} % of the cluster's {what} capacity over their span: the cluster mostly idles, and \
             waits and utilization say little about the policy (a snapshot trace replayed on its whole cluster?)",
            load * 100.0
        )
    })
}

/// The policy spec used when `--policy` is not given, and why when it is not `easy`:
/// `easy` counts processors and ignores GPUs, so a workload whose jobs ask for GPUs gets
/// a policy that places them on nodes and GPUs — `kube` (pods one at a time, as the
/// Kubernetes clusters of openb and PAI ran them) for the formats of Kubernetes clusters,
/// else EASY backfilling over nodes with whole gangs, as Slurm schedules GRES jobs
/// (`kube[order=fifo,queue=easy,gang=atomic]`). With `--placement`, `--gang` or `--topology`, `easy`
/// composed with them. Before the workload is read (`None`), only an openb pod list is
/// known to be a GPU workload.
fn default_spec(a: &RunArgs, w: Option<&traces::Workload>) -> (String, Option<String>) {
    let composed = a.sim.placement.is_some() || a.sim.gang.is_some() || a.sim.topology.is_some();
    let kube_format = |f: traces::Format| matches!(f, traces::Format::Openb | traces::Format::Pai);
    let gpu_jobs = match w {
        Some(w) => w.jobs.iter().filter(|j| j.task.gpus > 0).count(),
        None => usize::from(crate::input::is_openb(&a.input)),
    };
    if composed || gpu_jobs == 0 {
        return ("easy".into(), None);
    }
    let (spec, style) = match w.map(|w| w.format) {
        Some(f) if !kube_format(f) => {
            ("kube[order=fifo,queue=easy,gang=atomic]", "EASY backfilling over GPU nodes, as Slurm")
        }
        _ => ("kube", "Kubernetes' scheduler, as the trace's cluster ran"),
    };
    let of = w.map_or(String::new(), |w| format!(" ({gpu_jobs} of {})", w.jobs.len()));
    (spec.into(), Some(format!("{style}: the jobs ask for GPUs{of} and easy counts processors only")))
}

/// The policy `a` asks for: `--policy` (default: [`default_spec`]) composed with
/// `--placement`, `--gang` and `--topology`.
fn policy_of(a: &RunArgs, w: Option<&traces::Workload>) -> Result<Box<dyn sim_core::policy::Policy>, Failure> {
    let bad = Failure::BadInput;
    let spec = a.policy.clone().unwrap_or_else(|| default_spec(a, w).0);
    if let Some(p) = &a.sim.placement {
        policies::placement::Placement::from_spec(p).map_err(|e| bad(format!("--placement '{p}': {e}")))?;
    }
    policies::compose(&spec, a.sim.placement.as_deref(), a.sim.gang.as_deref(), a.sim.topology.as_deref(), a.seed)
        .map_err(|e| bad(format!("--policy: {e}")))
}

/// Replays `workload` under `a`'s policy and seed and writes the run folder `a.out`
/// (`jobs.csv`, `summary.json`, `frame.csv`, and `decisions.jsonl` with `--log`), each
/// whole or not at all; returns the summary and the names of the files written. `show`:
/// a progress bar on standard error.
pub fn run_loaded(
    a: &RunArgs,
    workload: &traces::Workload,
    trace_name: &str,
    show: bool,
) -> Result<(Summary, Vec<String>), Failure> {
    let bad = Failure::BadInput;
    let oom_after = sim_core::time::parse_secs_micros(&a.sim.oom_after)
        .map_err(|e| bad(format!("--oom-after: {e}, found '{}'", a.sim.oom_after)))?;
    let horizon = match &a.sim.horizon {
        None => None,
        Some(h) => Some(SimTime(
            sim_core::time::parse_secs_micros(h).map_err(|e| bad(format!("--horizon: {e}, found '{h}'")))?,
        )),
    };
    let mut policy = policy_of(a, Some(workload))?;
    let controllers = controllers_of(a)?;
    let controller_specs: Vec<String> = controllers.iter().map(|c| c.spec()).collect();
    let bar = show.then(|| {
        let b = indicatif::ProgressBar::new(workload.jobs.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} simulating {bar:40} {pos}/{len} jobs submitted ({eta})")
                .expect("valid template"),
        );
        b
    });
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Failure::Other(format!("{}: cannot create folder: {e}", a.out.display())))?;
    // Unit identities are only reported by the Batsim layout (allocated_resources).
    let cfg = SimConfig {
        walltime_kill: a.sim.walltime_kill,
        horizon,
        node_events: Vec::new(),
        track_units: a.jobs_format == JobsFormat::Batsim,
        oom_retries: a.sim.oom_retries,
        oom_after: sim_core::SimDuration(oom_after),
        cross_switch_slowdown_permille: a.sim.cross_switch_slowdown.saturating_mul(10),
        gpu_util_permille: a.sim.gpu_util * 10,
        // GPU fragmentation about 500 times over the submission span (GPU clusters only).
        gpu_sample_every: (workload.cluster.total_gpus() > 0).then(|| {
            let first = workload.jobs.iter().map(|j| j.submit.0).min().unwrap_or(0);
            let last = workload.jobs.iter().map(|j| j.submit.0).max().unwrap_or(0);
            sim_core::SimDuration(((last - first) / reports::fragmentation::SAMPLES).max(1_000_000))
        }),
    };
    let io_err = |what: &str, e: std::io::Error| Failure::Other(format!("{}: {e}", a.out.join(what).display()));
    let mut log_file = if a.log {
        Some(AtomicFile::create(&a.out.join("decisions.jsonl")).map_err(|e| io_err("decisions.jsonl", e))?)
    } else {
        None
    };
    let mut sink = log_file.as_mut().map(|f| JsonLines { out: f.writer() });
    let mut tick = |n: u64| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    };
    let result = sim_core::simulate_with(
        &workload.cluster,
        &workload.jobs,
        policy.as_mut(),
        &cfg,
        Hooks { log: sink.as_mut().map(|s| s as &mut dyn LogSink), progress: Some(&mut tick), controllers },
    )
    .map_err(|e| if e.is_bad_input() { bad(e.to_string()) } else { Failure::Other(e.to_string()) })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // Jobs controllers submitted follow the input's, as their records do.
    let all_jobs: std::borrow::Cow<[sim_core::Job]> = if result.submitted.is_empty() {
        std::borrow::Cow::Borrowed(&workload.jobs)
    } else {
        std::borrow::Cow::Owned(workload.jobs.iter().chain(&result.submitted).cloned().collect())
    };
    let jobs = &all_jobs[..];
    let mut summary = Summary::compute(
        RunMeta {
            trace: trace_name.to_string(),
            trace_sha256: workload.checksum.clone(),
            format: workload.format.name().into(),
            machine_units: workload.units,
            machine_gpus: workload.cluster.total_gpus(),
            policy: policy.spec(),
            seed: a.seed,
            walltime_kill: a.sim.walltime_kill,
            trace_rows_skipped: workload.skipped.0.clone(),
            controllers: controller_specs,
        },
        jobs,
        &result.records,
    );
    summary.deadlock = result.deadlock.as_ref().map(Into::into);
    summary.set_energy(&result.gpu_energy);
    // Every output is written complete under a temporary name first; only then are they
    // renamed into place, so a failure leaves the folder as it was.
    let jobs_csv = write_finished(&a.out.join("jobs.csv"), |w| match a.jobs_format {
        JobsFormat::Default => reports::jobs_csv::write_jobs(w, jobs, &result.records),
        JobsFormat::Batsim => reports::jobs_csv::write_batsim_jobs(w, jobs, &result.records),
    })
    .map_err(|e| io_err("jobs.csv", e))?;
    let summary_json = write_finished(&a.out.join("summary.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, &summary).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    })
    .map_err(|e| io_err("summary.json", e))?;
    let log = match log_file {
        Some(f) => Some(f.finish().map_err(|e| io_err("decisions.jsonl", e))?),
        None => None,
    };
    let frame_csv = write_finished(&a.out.join("frame.csv"), |w| {
        let rows = jobs.iter().zip(&result.records).map(|(j, r)| reports::frame::JobRow::of(j, r));
        reports::frame::write_rows(w, rows)
    })
    .map_err(|e| io_err("frame.csv", e))?;
    let frag_csv = if result.gpu_samples.is_empty() {
        None
    } else {
        Some(
            write_finished(&a.out.join("fragmentation.csv"), |w| {
                reports::fragmentation::write_csv(w, &result.gpu_samples)
            })
            .map_err(|e| io_err("fragmentation.csv", e))?,
        )
    };
    jobs_csv.rename().map_err(|e| io_err("jobs.csv", e))?;
    frame_csv.rename().map_err(|e| io_err("frame.csv", e))?;
    if let Some(f) = frag_csv {
        f.rename().map_err(|e| io_err("fragmentation.csv", e))?;
    }
    summary_json.rename().map_err(|e| io_err("summary.json", e))?;
    let mut written: Vec<String> = vec!["jobs.csv".into(), "frame.csv".into(), "summary.json".into()];
    if let Some(f) = log {
        f.rename().map_err(|e| io_err("decisions.jsonl", e))?;
        written.push("decisions.jsonl".into());
    }
    if !result.gpu_samples.is_empty() {
        written.push("fragmentation.csv".into());
    }
    Ok((summary, written))
}
