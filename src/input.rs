//! Reading the workload and the cluster (`sim run`, `sim trace convert`).

use crate::Failure;
use crate::cli::{FormatArg, GpuMemoryArg, InputArgs, SharingArg};
use std::path::PathBuf;
use traces::{Format, ImportOptions, Workload};

/// The embedded default trace: the first 3,000 jobs of the Parallel Workloads Archive's
/// KTH-SP2 log (cleaned version 2.1), donated by Lars Malinowsky (KTH); see data/README.md.
pub const DEFAULT_TRACE: &[u8] = include_bytes!("../data/KTH-SP2-1996-2.1-cln.first3000.swf.gz");
/// Its name in outputs.
pub const DEFAULT_TRACE_NAME: &str = "embedded:KTH-SP2-1996-2.1-cln.first3000.swf.gz";

/// The traces crate's format for `--format`.
pub fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Swf => Format::Swf,
        FormatArg::Batsim => Format::Batsim,
        FormatArg::Openb => Format::Openb,
        FormatArg::Native => Format::Native,
        FormatArg::Sacct => Format::Sacct,
        FormatArg::Philly => Format::Philly,
        FormatArg::Helios => Format::Helios,
        FormatArg::Sia => Format::Sia,
        FormatArg::Pai => Format::Pai,
    }
}

fn format(i: &InputArgs) -> Option<Format> {
    i.format.map(format_of)
}

/// The importers' options from `--pai-jobs` and `--app-runtime APP=SECONDS`.
pub fn import_options(pai_jobs: &Option<PathBuf>, app_runtime: &[String]) -> Result<ImportOptions, Failure> {
    let mut app_runtimes = std::collections::BTreeMap::new();
    for a in app_runtime {
        let bad = || Failure::BadInput(format!("--app-runtime '{a}': expected APP=SECONDS, e.g. cifar10=3600"));
        let (app, secs) = a.split_once('=').ok_or_else(bad)?;
        let us = sim_core::time::parse_secs_micros(secs.trim()).map_err(|_| bad())?;
        if app.trim().is_empty() || us == 0 {
            return Err(bad());
        }
        app_runtimes.insert(app.trim().to_string(), sim_core::SimDuration(us));
    }
    Ok(ImportOptions { pai_jobs: pai_jobs.clone(), app_runtimes })
}

/// A line saying how the rows of an imported trace were accounted for.
pub fn accounting(name: &str, i: &traces::Imported) -> String {
    let mut s = format!("{name}: {} rows: {} jobs", i.rows, i.jobs.len());
    if i.skipped.total() > 0 {
        let reasons: Vec<String> = i.skipped.0.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        s.push_str(&format!(", {} skipped ({})", i.skipped.total(), reasons.join(", ")));
    }
    s
}

/// The input flags given that do nothing for this input (a flag silently ignored reads
/// as if it had an effect): one line each.
pub fn unused_flags(i: &InputArgs, format: Format, jobs: &[sim_core::Job]) -> Vec<String> {
    let mut out = Vec::new();
    let name = format.name();
    let openb_nodes = format == Format::Openb && i.cluster.is_none();
    if i.nodes.is_some() && !openb_nodes {
        let why = if format == Format::Openb { "--cluster replaces it" } else { "only an openb pod list reads it" };
        out.push(format!("--nodes is ignored: {why}"));
    }
    if i.gpu_sharing.is_some() && !openb_nodes {
        out.push("--gpu-sharing is ignored: it applies to an openb node list (--nodes); a cluster configuration                   sets `sharing` per pool"
            .into());
    }
    if i.gpu_memory == GpuMemoryArg::Synthetic && !jobs.iter().any(|j| j.task.gpus > 0) {
        out.push("--gpu-memory synthetic does nothing: no job asks for GPUs".into());
    }
    if i.procs.is_some() && (i.cluster.is_some() || !matches!(format, Format::Swf | Format::Batsim)) {
        let why = if i.cluster.is_some() { "--cluster gives the machine" } else { "only SWF and Batsim size it" };
        out.push(format!("--procs is ignored for this {name} input: {why}"));
    }
    if i.pai_jobs.is_some() && format != Format::Pai {
        out.push(format!("--pai-jobs is ignored: the trace is {name}, not a PAI task table"));
    }
    if !i.app_runtime.is_empty() && format != Format::Sia {
        out.push(format!("--app-runtime is ignored: the trace is {name}, not a Sia/Pollux workload"));
    }
    out
}

/// Refuses a trace file that holds nothing (or only white space): `FILE: no jobs
/// (empty file)`, whatever its name says its format is.
pub fn refuse_empty(path: &std::path::Path) -> Result<(), Failure> {
    if traces::is_blank_file(path).map_err(|e| Failure::BadInput(e.to_string()))? {
        return Err(Failure::BadInput(format!("{}: no jobs (empty file)", path.display())));
    }
    Ok(())
}

/// The trace's format, from `--format`, else its name, else its first bytes.
fn detected(i: &InputArgs) -> Option<Format> {
    let path = i.trace.as_ref()?;
    format(i).or_else(|| Some(traces::detect_file_format(path)))
}

/// Whether the trace is an openb pod list.
pub fn is_openb(i: &InputArgs) -> bool {
    detected(i) == Some(Format::Openb)
}

/// The controller specs of the cluster configuration `--cluster` names (its
/// `[[controller]]` tables), none without one.
pub fn cluster_controllers(i: &InputArgs) -> Result<Vec<String>, Failure> {
    let Some(path) = &i.cluster else { return Ok(Vec::new()) };
    Ok(load_cluster_config(path)?.controllers)
}

/// Reads a cluster config. A cluster config's `gpus.profile` references are resolved by [`hw_calibrate::resolve_gpu`]:
/// a profile file relative to the config's folder, or a shipped profile by model name.
pub fn load_cluster(path: &std::path::Path) -> Result<sim_core::Cluster, Failure> {
    Ok(load_cluster_config(path)?.cluster)
}

/// Reads a cluster config whole: the cluster, its switches and its controllers.
fn load_cluster_config(path: &std::path::Path) -> Result<traces::cluster_toml::ClusterConfig, Failure> {
    let dir = path.parent().unwrap_or(std::path::Path::new("")).to_path_buf();
    let resolve = |r: &str| hw_calibrate::resolve_gpu(r, &dir).map_err(|e| e.to_string());
    traces::cluster_toml::load_with(path, &resolve).map_err(|e| Failure::BadInput(e.to_string()))
}

/// Loads the workload and cluster the input arguments name (or the embedded default),
/// and the trace's name.
pub fn load(i: &InputArgs, seed: u64, quiet: bool) -> Result<(Workload, String), Failure> {
    let bad = Failure::BadInput;
    if i.procs == Some(0) {
        return Err(bad("--procs: expected a number of processors >= 1, found 0".into()));
    }
    let sharing = match i.gpu_sharing.unwrap_or(SharingArg::Shared) {
        SharingArg::Exclusive => sim_core::GpuSharing::Exclusive,
        SharingArg::Shared => sim_core::GpuSharing::Shared,
        SharingArg::Isolated => sim_core::GpuSharing::Isolated,
    };
    let cluster = match &i.cluster {
        Some(p) => Some(load_cluster(p)?),
        None => None,
    };
    if let Some(path) = &i.trace {
        refuse_empty(path)?;
    }
    let kind = detected(i);
    let (workload, name) = match &i.trace {
        Some(path) => {
            let name = path.display().to_string();
            let w = match (kind, &cluster, &i.nodes) {
                (Some(Format::Native), Some(c), _) => traces::load_native(path, c.clone()),
                (Some(Format::Native), None, _) => {
                    return Err(bad(format!("{name}: a native workload needs its cluster: --cluster CLUSTER.toml")));
                }
                (Some(Format::Openb), Some(c), _) => traces::load_openb_on(path, c.clone()),
                (Some(Format::Openb), None, Some(nodes)) => traces::load_openb(path, nodes, sharing),
                (Some(Format::Openb), None, None) => {
                    return Err(bad(format!(
                        "{name}: an openb pod list needs its nodes: --nodes NODES.csv or --cluster CLUSTER.toml"
                    )));
                }
                (Some(f @ (Format::Sacct | Format::Philly | Format::Helios | Format::Sia | Format::Pai)), c, _) => {
                    let Some(c) = c else {
                        return Err(bad(format!(
                            "{name}: a {} trace does not describe the machine: give it --cluster CLUSTER.toml",
                            f.name()
                        )));
                    };
                    let opts = import_options(&i.pai_jobs, &i.app_runtime)?;
                    let imported = traces::import(path, Some(f), &opts).map_err(|e| bad(e.to_string()))?;
                    if !quiet {
                        eprintln!("{}", accounting(&name, &imported));
                    }
                    traces::imported_on(imported, &name, c.clone())
                }
                _ => traces::load(path, format(i), i.procs),
            };
            (w, name)
        }
        None => (traces::load_bytes(DEFAULT_TRACE, DEFAULT_TRACE_NAME, format(i), i.procs), DEFAULT_TRACE_NAME.into()),
    };
    let mut workload = workload.map_err(|e| bad(e.to_string()))?;
    if workload.jobs.is_empty() {
        let skipped = workload.skipped.total();
        let why = if skipped > 0 { format!("all {skipped} rows skipped") } else { "no job lines".into() };
        return Err(bad(format!("{name}: no jobs ({why})")));
    }
    if let Some(c) = cluster {
        workload.units = c.total_units();
        workload.cluster = c;
    }
    // GPUs named but not given a profile take the shipped one's power (energy model).
    hw_calibrate::attach_power(&mut workload.cluster);
    // The trace's GPU model names, as the cluster spells them (`a100` → `A100-SXM4-80GB`).
    let unmatched = hw_calibrate::models::map_job_models(&workload.cluster, &mut workload.jobs);
    if let Some(w) = unmatched.warning(workload.jobs.len(), &workload.cluster)
        && !quiet
    {
        eprintln!("warning: {name}: {w}");
    }
    if i.gpu_memory == GpuMemoryArg::Synthetic {
        traces::gpumem::GpuMemoryModel::default().assign(&mut workload.jobs, seed);
    }
    if !quiet {
        for w in unused_flags(i, workload.format, &workload.jobs) {
            eprintln!("warning: {w}");
        }
    }
    Ok((workload, name))
}
