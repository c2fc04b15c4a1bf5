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

/// The trace's format, from `--format`, else its name, else its first bytes.
fn detected(i: &InputArgs) -> Option<Format> {
    let path = i.trace.as_ref()?;
    format(i).or_else(|| Some(traces::detect_file_format(path)))
}

/// Whether the trace is an openb pod list.
pub fn is_openb(i: &InputArgs) -> bool {
    detected(i) == Some(Format::Openb)
}

/// Reads a cluster config. A cluster config's `gpus.profile` references are resolved by [`hw_calibrate::resolve_gpu`]:
/// a profile file relative to the config's folder, or a shipped profile by model name.
pub fn load_cluster(path: &std::path::Path) -> Result<sim_core::Cluster, Failure> {
    let dir = path.parent().unwrap_or(std::path::Path::new("")).to_path_buf();
    let resolve = |r: &str| hw_calibrate::resolve_gpu(r, &dir).map_err(|e| e.to_string());
    Ok(traces::cluster_toml::load_with(path, &resolve).map_err(|e| Failure::BadInput(e.to_string()))?.cluster)
}

/// Loads the workload and cluster the input arguments name (or the embedded default),
/// and the trace's name.
pub fn load(i: &InputArgs, seed: u64, quiet: bool) -> Result<(Workload, String), Failure> {
    let bad = Failure::BadInput;
    if i.procs == Some(0) {
        return Err(bad("--procs: expected a number of processors >= 1, found 0".into()));
    }
    let sharing = match i.gpu_sharing {
        SharingArg::Exclusive => sim_core::GpuSharing::Exclusive,
        SharingArg::Shared => sim_core::GpuSharing::Shared,
        SharingArg::Isolated => sim_core::GpuSharing::Isolated,
    };
    let cluster = match &i.cluster {
        Some(p) => Some(load_cluster(p)?),
        None => None,
    };
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
    if let Some(c) = cluster {
        workload.units = c.total_units();
        workload.cluster = c;
    }
    // GPUs named but not given a profile take the shipped one's power (energy model).
    hw_calibrate::attach_power(&mut workload.cluster);
    if i.gpu_memory == GpuMemoryArg::Synthetic {
        traces::gpumem::GpuMemoryModel::default().assign(&mut workload.jobs, seed);
    }
    Ok((workload, name))
}
