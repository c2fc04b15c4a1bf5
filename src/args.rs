//! From the command line's arguments to the runner's settings.

use crate::Failure;
use crate::cli::{FormatArg, GpuMemoryArg, InputArgs, JobsFormat, NodeLifecycleArg, SharingArg, SimArgs};
use runner::input::Input;
use runner::run::RunOptions;
use std::path::PathBuf;
use traces::Format;

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

/// The input the flags name: one trace, or a trace per scheduling domain
/// (`--trace DOMAIN:FILE`, repeated).
pub fn input(i: &InputArgs) -> Result<Input, Failure> {
    let (mut plain, mut domain_traces) = (Vec::new(), Vec::new());
    for t in &i.trace {
        match runner::input::domain_trace(t) {
            Some(d) => domain_traces.push(d),
            None => plain.push(t.clone()),
        }
    }
    if plain.len() > 1 || (!plain.is_empty() && !domain_traces.is_empty()) {
        return Err(Failure::BadInput(format!(
            "--trace is given {} times: give one trace, or one DOMAIN:FILE per scheduling domain of the cluster \
             (--trace slurm:FILE --trace k8s:FILE)",
            i.trace.len()
        )));
    }
    Ok(Input {
        trace: plain.pop(),
        domain_traces,
        format: i.format.map(format_of),
        procs: i.procs,
        nodes: i.nodes.clone(),
        cluster: i.cluster.clone(),
        sharing: i.gpu_sharing.map(|s| match s {
            SharingArg::Exclusive => sim_core::GpuSharing::Exclusive,
            SharingArg::Shared => sim_core::GpuSharing::Shared,
            SharingArg::Isolated => sim_core::GpuSharing::Isolated,
        }),
        synthetic_gpu_memory: i.gpu_memory == GpuMemoryArg::Synthetic,
        pai_jobs: i.pai_jobs.clone(),
        app_runtimes: i.app_runtime.clone(),
        perturb: i.perturb.clone(),
        slurm_conf: i.slurm_conf.clone(),
        slurm_qos: i.qos.clone(),
        slurm_assoc: i.assoc.clone(),
    })
}

/// Whether the input is an openb pod list (the default policy's only clue before the
/// read).
pub fn is_openb(i: &Input) -> bool {
    runner::input::detected(i) == Some(Format::Openb)
}

/// A run's settings from the flags; times are checked here (exit 2 when malformed).
pub fn run_options(
    s: &SimArgs,
    policy: Option<String>,
    seed: u64,
    out: PathBuf,
    log: bool,
    jobs_format: JobsFormat,
) -> Result<RunOptions, Failure> {
    let bad = Failure::BadInput;
    let oom_after = sim_core::time::parse_secs_micros(&s.oom_after)
        .map_err(|e| bad(format!("--oom-after: {e}, found '{}'", s.oom_after)))?;
    let node_monitor_grace = node_monitor_grace(&s.node_monitor_grace)
        .map_err(|e| bad(format!("--node-monitor-grace: {e}, found '{}'", s.node_monitor_grace)))?;
    let horizon = match &s.horizon {
        None => None,
        Some(h) => Some(sim_core::SimTime(
            sim_core::time::parse_secs_micros(h).map_err(|e| bad(format!("--horizon: {e}, found '{h}'")))?,
        )),
    };
    Ok(RunOptions {
        policy,
        placement: s.placement.clone(),
        gang: s.gang.clone(),
        topology: s.topology.clone(),
        controllers: s.controllers.clone(),
        seed,
        walltime_kill: s.walltime_kill,
        horizon,
        oom_retries: s.oom_retries,
        oom_after: sim_core::SimDuration(oom_after),
        cross_switch_slowdown_pct: s.cross_switch_slowdown,
        node_lifecycle: match s.node_lifecycle {
            NodeLifecycleArg::Auto => sim_core::engine::NodeLifecycle::Auto,
            NodeLifecycleArg::Requeue => sim_core::engine::NodeLifecycle::Requeue,
            NodeLifecycleArg::Kubernetes => sim_core::engine::NodeLifecycle::Kubernetes,
        },
        node_monitor_grace,
        default_toleration_secs: s.default_toleration_seconds,
        gpu_util_pct: s.gpu_util,
        out,
        log,
        jobs_format: match jobs_format {
            JobsFormat::Default => runner::run::JobsFormat::Default,
            JobsFormat::Batsim => runner::run::JobsFormat::Batsim,
        },
        sacct: false,
        slurm_conf: None,
        slurm_qos: None,
        slurm_assoc: None,
        checkpoint: s.checkpoint.clone(),
        restarts: s.restarts.clone(),
        faults: s.faults.clone(),
        variant: Default::default(),
        arrangement: None,
        compare_arrangements: false,
    })
}

/// `--node-monitor-grace`: seconds, or a Kubernetes version (`v1.31`: 40 s and earlier
/// releases; `v1.32` and later: 50 s, kubernetes PR 126287).
fn node_monitor_grace(v: &str) -> Result<sim_core::SimDuration, String> {
    if let Some(version) = v.strip_prefix('v') {
        let minor = version
            .strip_prefix("1.")
            .and_then(|m| m.split('.').next())
            .and_then(|m| m.parse::<u32>().ok())
            .ok_or("expected a version v1.N")?;
        let grace =
            if minor >= 32 { sim_core::engine::NODE_MONITOR_GRACE } else { sim_core::engine::NODE_MONITOR_GRACE_V1_31 };
        return Ok(grace);
    }
    sim_core::time::parse_secs_micros(v).map(sim_core::SimDuration).map_err(|e| e.to_string())
}
