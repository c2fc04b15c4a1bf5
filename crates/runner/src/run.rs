//! One replay: the policy and controllers built from their specs, the workload
//! simulated, the run folder written.

use crate::RunError;
use crate::input::Loaded;
use crate::output::{AtomicFile, Finished, write_finished};
use reports::{RunMeta, Summary};
use sim_core::log::{LogEvent, LogSink};
use sim_core::{Hooks, RunResult, SimConfig, SimDuration, SimTime};
use std::io::Write;
use std::path::PathBuf;
use traces::Workload;

/// Layouts of the per-job table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JobsFormat {
    /// schedlab's `jobs.csv`.
    #[default]
    Default,
    /// Batsim's `out_jobs.csv` columns (for evalys).
    Batsim,
}

/// How one replay runs and where it writes.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Policy spec, `name[key=value,...]`; [`default_spec`] when `None`.
    pub policy: Option<String>,
    /// A placement to compose the policy with (`bestfit,nodeaffinity=2`).
    pub placement: Option<String>,
    /// A gang mode to compose it with.
    pub gang: Option<String>,
    /// A topology rule to compose it with.
    pub topology: Option<String>,
    /// Controller specs, attached after the cluster configuration's.
    pub controllers: Vec<String>,
    /// Master seed.
    pub seed: u64,
    /// Kill jobs at their requested time.
    pub walltime_kill: bool,
    /// Stop at this time.
    pub horizon: Option<SimTime>,
    /// Out-of-memory kills before a job ends `oom_killed`.
    pub oom_retries: u32,
    /// When after its start a job that runs out of GPU memory is killed.
    pub oom_after: SimDuration,
    /// How much longer (percent) distributed training runs across leaf switches.
    pub cross_switch_slowdown_pct: u32,
    /// GPU utilization (percent) of jobs that do not say, for the energy model.
    pub gpu_util_pct: u16,
    /// What becomes of the jobs of a node that goes down.
    pub node_lifecycle: sim_core::engine::NodeLifecycle,
    /// Kubernetes' node-monitor-grace-period.
    pub node_monitor_grace: SimDuration,
    /// The DefaultTolerationSeconds admission plugin's seconds.
    pub default_toleration_secs: u64,
    /// The run folder.
    pub out: PathBuf,
    /// Write the decision log.
    pub log: bool,
    /// Layout of the per-job table.
    pub jobs_format: JobsFormat,
    /// Write `sacct.txt` whatever the policy (`--sacct`); runs of the `slurm` policy
    /// always write it.
    pub sacct: bool,
    /// A site's `slurm.conf` (`--slurm-conf`): the `slurm` policy's configuration (and
    /// the default policy).
    pub slurm_conf: Option<PathBuf>,
    /// `sacctmgr show qos -P` output (`--qos`) for the `slurm` policy.
    pub slurm_qos: Option<PathBuf>,
    /// The site's associations (`--assoc`, with `slurm_conf`): the fair-share tree.
    pub slurm_assoc: Option<PathBuf>,
    /// Periodic checkpoints of every job (`--checkpoint interval=..,cost=..,restore=..`),
    /// read by [`checkpointing`].
    pub checkpoint: Option<String>,
    /// The restart rule (`--restarts`, [`sim_core::restart::Restarts::parse`]); `None`:
    /// the slurm.conf's when one is read, else requeued every time.
    pub restarts: Option<String>,
    /// A node fault log to replay (`--faults`, [`traces::faults`]).
    pub faults: Option<PathBuf>,
    /// The settings `sim compare --vary` applied (recorded in `summary.json`).
    pub variant: std::collections::BTreeMap<String, String>,
    /// How a cluster's scheduling domains share its nodes (`--arrangement`, e.g.
    /// `lend-drain`); `None`: the cluster configuration's, else `static`.
    pub arrangement: Option<String>,
    /// `sim compare --arrangements`: the comparison's specs are arrangements.
    pub compare_arrangements: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            policy: None,
            placement: None,
            gang: None,
            topology: None,
            controllers: Vec::new(),
            seed: 0,
            walltime_kill: false,
            horizon: None,
            oom_retries: 6,
            oom_after: SimDuration::from_secs(120),
            cross_switch_slowdown_pct: 0,
            gpu_util_pct: 100,
            node_lifecycle: sim_core::engine::NodeLifecycle::Auto,
            node_monitor_grace: sim_core::engine::NODE_MONITOR_GRACE,
            default_toleration_secs: 300,
            out: PathBuf::from("sim-out"),
            log: false,
            jobs_format: JobsFormat::Default,
            sacct: false,
            slurm_conf: None,
            slurm_qos: None,
            slurm_assoc: None,
            checkpoint: None,
            restarts: None,
            faults: None,
            variant: Default::default(),
            arrangement: None,
            compare_arrangements: false,
        }
    }
}

/// The arrangement of a run on a cluster with scheduling domains: `o`'s, else the
/// cluster configuration's, else `static`; `None` without domains (where `o` may not name
/// one). Checked: an arrangement, on a cluster whose domains are `slurm` and `kubernetes`.
pub fn arrangement(o: &RunOptions, l: &Loaded) -> Result<Option<String>, RunError> {
    let bad = RunError::BadInput;
    if l.domains.is_empty() {
        return match &o.arrangement {
            Some(a) => Err(bad(format!(
                "--arrangement '{a}': needs a cluster configuration with [[domain]] tables (slurm, kubernetes)"
            ))),
            None => Ok(None),
        };
    }
    let spec = o.arrangement.clone().or_else(|| l.arrangement.clone()).unwrap_or_else(|| "static".into());
    check_arrangement(&spec)?;
    let names: Vec<&str> = l.domains.iter().map(|d| d.name.as_str()).collect();
    let wanted = controllers::arrangement::DOMAINS;
    if names.len() != wanted.len() || wanted.iter().any(|w| !names.contains(w)) {
        return Err(bad(format!(
            "arrangement '{spec}': the cluster's domains are {}; arrangements share nodes between {}",
            names.join(", "),
            wanted.join(" and ")
        )));
    }
    Ok(Some(spec))
}

/// Checks that `spec` is an arrangement that builds; returns its canonical spec.
pub fn check_arrangement(spec: &str) -> Result<String, RunError> {
    let name = spec.split('[').next().unwrap_or_default().trim();
    if !controllers::arrangement::NAMES.contains(&name) {
        return Err(RunError::BadInput(format!(
            "arrangement '{spec}': expected one of {}",
            controllers::arrangement::NAMES.join(", ")
        )));
    }
    let built = controllers::build(spec, 0, 0).map_err(|e| RunError::BadInput(format!("arrangement '{spec}': {e}")))?;
    Ok(built.spec())
}

/// The composite policy of a cluster with scheduling domains: each domain's
/// (`[[domain]]`'s `policy`) over the nodes it owns (`policies::Domains`).
pub fn domain_policy(o: &RunOptions, l: &Loaded) -> Result<Box<dyn sim_core::policy::Policy>, RunError> {
    let bad = RunError::BadInput;
    if let Some(p) = &o.policy {
        return Err(bad(format!(
            "--policy '{p}': the cluster has scheduling domains: each domain's policy is its [[domain]] table's; \
             --arrangement chooses how they share the nodes"
        )));
    }
    let mut members = Vec::with_capacity(l.domains.len());
    for (i, d) in l.domains.iter().enumerate() {
        let p = policies::build_seeded(&d.policy, o.seed)
            .map_err(|e| bad(format!("domain '{}': policy '{}': {e}", d.name, d.policy)))?;
        members.push((i as u8, d.name.clone(), p));
    }
    Ok(Box::new(policies::Domains::new(members).map_err(bad)?))
}

/// What a replay produced: its summary and the files written (relative to the run folder).
pub struct Replayed {
    /// `summary.json`'s contents.
    pub summary: Summary,
    /// The files written, relative to the run folder.
    pub written: Vec<String>,
}

/// The policy spec used when none is given, and why when it is not `easy`: `easy`
/// counts processors and ignores GPUs, so a workload whose jobs ask for GPUs gets a
/// policy that places them on nodes and GPUs — `kube` (pods one at a time, as the
/// Kubernetes clusters of openb and PAI ran them) for the formats of Kubernetes clusters,
/// else EASY backfilling over nodes with whole gangs, as Slurm schedules GRES jobs
/// (`kube[order=fifo,queue=easy,gang=atomic]`). With a placement, gang or topology,
/// `easy` composed with them. Before the workload is read (`None`), `openb` says whether
/// the input is an openb pod list, the only format known to be a GPU workload by then.
pub fn default_spec(o: &RunOptions, w: Option<&Facts>, openb: bool) -> (String, Option<String>) {
    let composed = o.placement.is_some() || o.gang.is_some() || o.topology.is_some();
    let kube_format = |f: traces::Format| matches!(f, traces::Format::Openb | traces::Format::Pai);
    let gpu_jobs = match w {
        Some(w) => w.gpu_jobs,
        None => usize::from(openb),
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
    let of = w.map_or(String::new(), |w| format!(" ({gpu_jobs} of {})", w.jobs));
    (spec.into(), Some(format!("{style}: the jobs ask for GPUs{of} and easy counts processors only")))
}

/// What the default policy and the notes read of a workload.
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    /// Its format.
    pub format: traces::Format,
    /// Its jobs.
    pub jobs: usize,
    /// Those asking for GPUs.
    pub gpu_jobs: usize,
}

impl Facts {
    /// Of `w`.
    pub fn of(w: &Workload) -> Facts {
        Facts { format: w.format, jobs: w.jobs.len(), gpu_jobs: w.jobs.iter().filter(|j| j.task.gpus > 0).count() }
    }
}

/// The policy `o` asks for (default: [`default_spec`]) composed with its placement, gang
/// mode and topology rule.
pub fn policy(
    o: &RunOptions,
    w: Option<&Workload>,
    openb: bool,
) -> Result<Box<dyn sim_core::policy::Policy>, RunError> {
    policy_for(o, w, w.map(Facts::of).as_ref(), openb)
}

/// [`policy`], the default chosen by the workload's `facts` (a streamed replay knows
/// them before it holds any job).
pub(crate) fn policy_for(
    o: &RunOptions,
    w: Option<&Workload>,
    facts: Option<&Facts>,
    openb: bool,
) -> Result<Box<dyn sim_core::policy::Policy>, RunError> {
    let bad = RunError::BadInput;
    let spec = match (&o.policy, &o.slurm_conf) {
        (Some(p), _) => p.clone(),
        (None, Some(_)) => "slurm".to_string(),
        (None, None) => default_spec(o, facts, openb).0,
    };
    if let Some(path) = &o.slurm_conf {
        let parsed: policies::PolicySpec = spec.parse().map_err(|e| bad(format!("--policy: {e}")))?;
        if parsed.name == "slurm" {
            let mut conf = crate::input::slurm_conf(path)?;
            if let Some(q) = &o.slurm_qos {
                conf.qos = crate::input::slurm_qos(q)?;
            }
            if let Some(a) = &o.slurm_assoc {
                conf.assoc = Some(crate::input::slurm_assoc_for(a, w)?);
            }
            let p = policies::Slurm::from_conf(conf, &parsed).map_err(|e| bad(format!("--policy: {e}")))?;
            return Ok(Box::new(p));
        }
    }
    if let Some(p) = &o.placement {
        policies::placement::Placement::from_spec(p).map_err(|e| bad(format!("--placement '{p}': {e}")))?;
    }
    policies::compose(&spec, o.placement.as_deref(), o.gang.as_deref(), o.topology.as_deref(), o.seed)
        .map_err(|e| bad(format!("--policy: {e}")))
}

/// The controllers of a run: `from_cluster` (the cluster configuration's
/// `[[controller]]` tables), then `o`'s, each built with the run's seed and its position.
pub fn controllers(
    o: &RunOptions,
    from_cluster: &[String],
) -> Result<Vec<Box<dyn sim_core::controller::Controller>>, RunError> {
    controllers_with(o, None, from_cluster)
}

/// [`controllers`], after a cluster's arrangement of its scheduling domains (first, so
/// that it moves nodes before the others look).
pub fn controllers_with(
    o: &RunOptions,
    arrangement: Option<&String>,
    from_cluster: &[String],
) -> Result<Vec<Box<dyn sim_core::controller::Controller>>, RunError> {
    let specs: Vec<&String> = arrangement.into_iter().chain(from_cluster).chain(&o.controllers).collect();
    // `sim compare --vary NAME.OPTION=…`: the option set on that controller.
    for key in o.variant.keys() {
        if let Some((name, _)) = key.split_once('.')
            && !specs.iter().any(|s| s.split('[').next().map(str::trim) == Some(name))
        {
            return Err(RunError::BadInput(format!("--vary {key}: the run has no {name} controller")));
        }
    }
    specs
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let varied = crate::vary::controller_spec(s, &o.variant)?;
            let s = varied.as_ref().unwrap_or(s);
            controllers::build(s, o.seed, i).map_err(|e| RunError::BadInput(format!("--controller '{s}': {e}")))
        })
        .collect()
}

/// `--checkpoint interval=SECONDS|auto,cost=SECONDS,restore=SECONDS` (cost and restore
/// default to 0): every job writes a checkpoint after each interval of compute. `auto` is
/// Young's optimum for the failure rate of the run's `failures` controller (`node_mtbf`,
/// [`node_mtbf`], over the nodes a job runs on).
pub fn checkpointing(
    text: &str,
    node_mtbf: Option<SimDuration>,
) -> Result<sim_core::checkpoint::Checkpointing, RunError> {
    use sim_core::checkpoint::{CheckpointInterval, Checkpointing};
    let bad = |what: String| RunError::BadInput(format!("--checkpoint '{text}': {what}"));
    let secs = |k: &str, v: &str| {
        sim_core::time::parse_secs_micros(v)
            .map(SimDuration)
            .map_err(|e| bad(format!("{k}: {e}, expected seconds, e.g. {k}=600")))
    };
    let (mut interval, mut cost, mut restore) = (None, SimDuration::ZERO, SimDuration::ZERO);
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| bad(format!("'{part}' is not key=value")))?;
        match k.trim() {
            "interval" if v.trim() == "auto" => {
                let mtbf =
                    node_mtbf.ok_or_else(|| bad("interval=auto needs a failures controller (its mtbf)".into()))?;
                interval = Some(CheckpointInterval::Auto { node_mtbf: mtbf });
            }
            "interval" => {
                let d = secs("interval", v.trim())?;
                if d.0 == 0 {
                    return Err(bad("interval: expected more than 0 seconds, or auto".into()));
                }
                interval = Some(CheckpointInterval::Every(d));
            }
            "cost" => cost = secs("cost", v.trim())?,
            "restore" => restore = secs("restore", v.trim())?,
            other => return Err(bad(format!("unknown key '{other}', expected interval, cost or restore"))),
        }
    }
    let interval = interval.ok_or_else(|| bad("interval is missing (seconds, or auto)".into()))?;
    Ok(Checkpointing { interval, cost, restore })
}

/// The node MTBF of the first `failures` controller among `controllers` (the run's
/// failure rate, for Young's interval), if any.
pub fn node_mtbf(controllers: &[String]) -> Result<Option<SimDuration>, RunError> {
    controllers
        .iter()
        .find_map(|s| controllers::failures::node_mtbf_of(s).transpose())
        .transpose()
        .map_err(|e| RunError::BadInput(e.to_string()))
}

/// What `summary.json` says of the run's checkpointing: Young's interval for one node
/// where the run knows its node MTBF (`node_mtbf`, [`SimConfig::node_mtbf`]).
fn checkpoint_meta(
    c: &sim_core::checkpoint::Checkpointing,
    node_mtbf: Option<SimDuration>,
) -> reports::summary::CheckpointMeta {
    use sim_core::checkpoint::CheckpointInterval;
    let secs = |d: SimDuration| d.0 as f64 / 1e6;
    let interval = match c.interval {
        CheckpointInterval::Every(d) => format!("{}", secs(d)),
        CheckpointInterval::Auto { .. } => "auto".to_string(),
    };
    let young = node_mtbf.map(|m| {
        secs(
            sim_core::checkpoint::Checkpointing { interval: CheckpointInterval::Auto { node_mtbf: m }, ..*c }
                .interval_for(1),
        )
    });
    reports::summary::CheckpointMeta {
        interval,
        cost_s: secs(c.cost),
        restore_s: secs(c.restore),
        node_mtbf_h: node_mtbf.map(|m| secs(m) / 3600.0),
        young_1node_s: young,
    }
}

/// Below this offered load a replay says little about the policy: the cluster idles.
pub const LOW_LOAD: f64 = 0.01;

/// A warning when the workload offers the cluster less than [`LOW_LOAD`] of its
/// capacity (its GPUs when jobs ask for GPUs, else its cores) over the time it needs at
/// the least (see [`traces::stats::offered_load`]): typically a snapshot trace, such as
/// openb's pod lists, replayed on its whole cluster.
pub fn low_load_warning(w: &Workload) -> Option<String> {
    let (core, gpu) = traces::stats::offered_load(&w.jobs, w.units, w.cluster.total_gpus());
    low_load_text(core, gpu, w.jobs.iter().any(|j| j.task.gpus > 0))
}

/// [`low_load_warning`] of the offered core and GPU loads; `gpu_jobs`: some job asks
/// for GPUs.
pub fn low_load_text(core: Option<f64>, gpu: Option<f64>, gpu_jobs: bool) -> Option<String> {
    let (load, what) = if gpu_jobs { (gpu?, "GPU") } else { (core?, "core") };
    (load < LOW_LOAD).then(|| {
        format!(
            "the jobs offer {:.2} % of the cluster's {what} capacity over their span: the cluster mostly idles, and \
             waits and utilization say little about the policy (a snapshot trace replayed on its whole cluster?)",
            load * 100.0
        )
    })
}

/// What a user should read before a replay of `l` under `o`: the policy chosen by
/// default and why, a workload that leaves the cluster idle, GPU jobs under a policy that
/// ignores GPUs.
pub fn notes(o: &RunOptions, l: &Loaded) -> Result<Vec<String>, RunError> {
    let w = &l.workload;
    let (core, gpu) = traces::stats::offered_load(&w.jobs, w.units, w.cluster.total_gpus());
    notes_of(o, l, &Facts::of(w), (core, gpu))
}

/// [`notes`] of a workload known by its `facts` and offered `load` (core, GPU).
pub(crate) fn notes_of(
    o: &RunOptions,
    l: &Loaded,
    facts: &Facts,
    load: (Option<f64>, Option<f64>),
) -> Result<Vec<String>, RunError> {
    let mut out = Vec::new();
    if let (None, None, true, (spec, Some(why))) =
        (&o.policy, &o.slurm_conf, l.domains.is_empty(), default_spec(o, Some(facts), false))
    {
        out.push(format!("policy: {spec} ({why}; --policy chooses another)"));
    }
    if let Some(w) = low_load_text(load.0, load.1, facts.gpu_jobs > 0) {
        out.push(format!("warning: {}: {w}", l.name));
    }
    let gpu_jobs = facts.gpu_jobs;
    if gpu_jobs > 0 && l.domains.is_empty() && !policy_for(o, Some(&l.workload), Some(facts), false)?.binds_nodes() {
        out.push(format!(
            "warning: {}: {gpu_jobs} jobs ask for GPUs and this policy counts processors only: their GPUs are \
             neither placed nor limited by the cluster's (GPU allocation can exceed 1)",
            l.name
        ));
    }
    Ok(out)
}

/// The engine's settings for `o` on `w`.
pub(crate) fn sim_config(o: &RunOptions, l: &Loaded) -> Result<SimConfig, RunError> {
    let w = &l.workload;
    let all: Vec<String> = l.controllers.iter().chain(&o.controllers).cloned().collect();
    // The first `failures` controller's node MTBF: Young's interval of `auto` checkpoints,
    // the run's and the jobs' own.
    let node_mtbf = node_mtbf(&all)?;
    let checkpointing = o.checkpoint.as_deref().map(|c| checkpointing(c, node_mtbf)).transpose()?;
    let node_events = match &o.faults {
        Some(f) => traces::faults::read(f)
            .map_err(|e| RunError::BadInput(format!("--faults: {e}")))?
            .node_events(w.cluster.node_count()),
        None => Vec::new(),
    };
    if node_mtbf.is_none()
        && let Some(j) = w
            .jobs
            .iter()
            .find(|j| matches!(j.checkpoint, Some(sim_core::checkpoint::JobCheckpoint::Every { interval: None, .. })))
    {
        return Err(RunError::BadInput(format!(
            "{}: job {}: checkpoint interval \"auto\" needs a failures controller (its mtbf)",
            l.name, j.trace_id
        )));
    }
    let restarts = match &o.restarts {
        Some(s) => sim_core::restart::Restarts::parse(s).map_err(|e| RunError::BadInput(format!("--restarts {e}")))?,
        None => l.slurm_restarts.unwrap_or_default(),
    };
    Ok(SimConfig {
        walltime_kill: o.walltime_kill,
        horizon: o.horizon,
        node_events,
        // Unit identities are only reported by the Batsim layout (allocated_resources).
        track_units: o.jobs_format == JobsFormat::Batsim,
        oom_retries: o.oom_retries,
        oom_after: o.oom_after,
        cross_switch_slowdown_permille: o.cross_switch_slowdown_pct.saturating_mul(10),
        gpu_util_permille: o.gpu_util_pct.min(100) * 10,
        node_lifecycle: o.node_lifecycle,
        node_monitor_grace: o.node_monitor_grace,
        default_toleration_secs: o.default_toleration_secs,
        gpu_sample_every: sample_every(
            &w.cluster,
            w.jobs.iter().map(|j| j.submit.0).min().unwrap_or(0),
            w.jobs.iter().map(|j| j.submit.0).max().unwrap_or(0),
        ),
        checkpointing,
        restarts,
        node_mtbf,
        domains: l.domains.iter().map(|d| d.name.clone()).collect(),
        node_domains: l.node_domains.clone(),
    })
}

/// How often GPU fragmentation is sampled: about 500 times over the submission span
/// (`first` to `last`, µs), on GPU clusters only.
pub(crate) fn sample_every(cluster: &sim_core::Cluster, first: u64, last: u64) -> Option<SimDuration> {
    (cluster.total_gpus() > 0)
        .then(|| SimDuration((last.saturating_sub(first) / reports::fragmentation::SAMPLES).max(1_000_000)))
}

/// The decision log as JSON Lines, each entry with its time `t` in seconds.
pub(crate) struct JsonLines<'a> {
    pub(crate) out: &'a mut dyn Write,
}

impl LogSink for JsonLines<'_> {
    fn record(&mut self, now: SimTime, ev: &LogEvent<'_>) -> std::io::Result<()> {
        let mut v = serde_json::to_value(ev).map_err(std::io::Error::other)?;
        if let serde_json::Value::Object(m) = &mut v {
            let t = serde_json::to_value(sim_core::time::Secs(now.0)).map_err(std::io::Error::other)?;
            m.insert("t".into(), t);
        }
        serde_json::to_writer(&mut *self.out, &v).map_err(std::io::Error::other)?;
        self.out.write_all(b"\n")
    }
}

/// Replays `l` under `o` and writes the run folder `o.out` (`jobs.csv`, `summary.json`,
/// `frame.csv`, `fragmentation.csv` on GPU clusters, `decisions.jsonl` with `log`,
/// `sacct.txt` for the `slurm` policy or with `sacct`), each whole or not at all. `progress` is told how many jobs were submitted now and then.
pub fn run(o: &RunOptions, l: &Loaded, mut progress: Option<&mut dyn FnMut(u64)>) -> Result<Replayed, RunError> {
    let w = &l.workload;
    let arrangement = arrangement(o, l)?;
    let mut policy = if l.domains.is_empty() { policy(o, Some(w), false)? } else { domain_policy(o, l)? };
    let sacct = crate::sacct::wanted(o.sacct, &policy.spec());
    let controllers = controllers_with(o, arrangement.as_ref(), &l.controllers)?;
    let controller_specs: Vec<String> = controllers.iter().map(|c| c.spec()).collect();
    let priced = l.prices.iter().any(|p| p.per_hour > 0.0);
    let mut presence = crate::billing::Presence::new();
    // sacct.txt's node lists: a controller that observes the starts, after the run's own.
    let mut placed = crate::sacct::Placed::new();
    let mut controllers = crate::sacct::with_placements(controllers, sacct.then_some(&mut placed));
    // The bill's node presence: an observer, after the others.
    if priced {
        controllers.push(Box::new(crate::billing::Billing { presence: &mut presence }));
    }
    std::fs::create_dir_all(&o.out)
        .map_err(|e| RunError::Other(format!("{}: cannot create folder: {e}", o.out.display())))?;
    let io_err = |what: &str, e: std::io::Error| RunError::Other(format!("{}: {e}", o.out.join(what).display()));
    let mut log_file = if o.log {
        Some(AtomicFile::create(&o.out.join("decisions.jsonl")).map_err(|e| io_err("decisions.jsonl", e))?)
    } else {
        None
    };
    let mut sink = log_file.as_mut().map(|f| JsonLines { out: f.writer() });
    let cfg = sim_config(o, l)?;
    let progress = progress.as_mut().map(|p| &mut **p as &mut dyn FnMut(u64));
    let fragmentation: Option<Box<dyn sim_core::Fragmentation>> =
        cfg.gpu_sample_every.map(|_| Box::new(crate::fragmentation::Fgd::of_workload(&w.jobs)) as _);
    let hooks = Hooks { log: sink.as_mut().map(|s| s as &mut dyn LogSink), progress, controllers, fragmentation };
    let result = sim_core::simulate_with(&w.cluster, &w.jobs, policy.as_mut(), &cfg, hooks).map_err(|e| {
        if e.is_bad_input() { RunError::BadInput(e.to_string()) } else { RunError::Other(e.to_string()) }
    })?;
    let log = log_file.map(|f| f.finish().map_err(|e| io_err("decisions.jsonl", e))).transpose()?;
    let meta = run_meta(o, l, policy.spec(), controller_specs, arrangement.as_ref(), &cfg);
    // The priorities the policy computed, for sacct's `Priority` (none: the trace's).
    let priorities: Vec<Option<u64>> = if sacct {
        (0..result.records.len()).map(|i| policy.job_priority(sim_core::job::JobId(i as u32))).collect()
    } else {
        Vec::new()
    };
    let sacct = sacct.then_some((placed, priorities, l.name.as_str()));
    let bill = priced.then_some((&l.prices[..], &presence));
    let names: Vec<String> = l.domains.iter().map(|d| d.name.clone()).collect();
    let domains = (!names.is_empty()).then(|| {
        let node_price =
            priced.then(|| crate::billing::node_prices(&w.cluster, &l.prices).iter().map(|p| p.per_hour).collect());
        reports::domains::DomainRun {
            names: &names,
            initial: &l.node_domains,
            moves: &result.domain_moves,
            schedulers: &result.domain_schedulers,
            cluster: &w.cluster,
            node_price,
        }
    });
    write_outputs(o, w, meta, &result, log, sacct, Extras { bill, domains })
}

/// What identifies a replay of `l` under `o` in its summary.
pub(crate) fn run_meta(
    o: &RunOptions,
    l: &Loaded,
    policy: String,
    controller_specs: Vec<String>,
    arrangement: Option<&String>,
    cfg: &SimConfig,
) -> RunMeta {
    let w = &l.workload;
    RunMeta {
        trace: l.name.clone(),
        trace_sha256: w.checksum.clone(),
        format: w.format.name().into(),
        machine_units: w.units,
        machine_gpus: w.cluster.total_gpus(),
        policy: match &controller_specs[..] {
            [a, ..] if arrangement.is_some() => format!("{a} over {policy}"),
            _ => policy,
        },
        policy_given: o.policy.clone().or_else(|| arrangement.cloned()),
        perturb: l.perturb.clone(),
        seed: o.seed,
        walltime_kill: o.walltime_kill,
        trace_rows_skipped: w.skipped.0.clone(),
        controllers: controller_specs,
        variant: o.variant.clone(),
        checkpoint: cfg.checkpointing.as_ref().map(|c| checkpoint_meta(c, cfg.node_mtbf)),
        restarts: (cfg.restarts != sim_core::restart::Restarts::Always).then(|| cfg.restarts.spec()),
    }
}

/// What a run's summary adds when the run has it: the bill (priced pools) and the
/// figures per scheduling domain.
struct Extras<'a> {
    bill: Option<(&'a [traces::cluster_toml::PoolPrice], &'a crate::billing::Presence)>,
    domains: Option<reports::domains::DomainRun<'a>>,
}

/// Writes a finished replay's files: every one complete under a temporary name first,
/// then all renamed into place, so a failure leaves the folder as it was.
fn write_outputs(
    o: &RunOptions,
    w: &Workload,
    meta: RunMeta,
    result: &RunResult,
    log: Option<Finished>,
    sacct: Option<(crate::sacct::Placed, Vec<Option<u64>>, &str)>,
    extras: Extras<'_>,
) -> Result<Replayed, RunError> {
    let Extras { bill, domains } = extras;
    let io_err = |what: &str, e: std::io::Error| RunError::Other(format!("{}: {e}", o.out.join(what).display()));
    // Jobs controllers submitted follow the input's, as their records do.
    let all_jobs: std::borrow::Cow<[sim_core::Job]> = if result.submitted.is_empty() {
        std::borrow::Cow::Borrowed(&w.jobs)
    } else {
        std::borrow::Cow::Owned(w.jobs.iter().chain(&result.submitted).cloned().collect())
    };
    let (jobs, records) = (&all_jobs[..], &result.records);
    let mut summary = Summary::compute(meta, jobs, records);
    add_run_figures(&mut summary, result);
    summary.cost =
        bill.and_then(|(prices, presence)| crate::billing::bill(&w.cluster, prices, presence, jobs, records));
    if let Some(d) = &domains {
        summary.domains = reports::domains::compute(d, jobs, records);
        summary.node_moves = Some(result.domain_moves.len() as u64);
    }
    let write = |name: &'static str, fill: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>| {
        let f = write_finished(&o.out.join(name), |out| fill(out)).map_err(|e| io_err(name, e))?;
        Ok::<_, RunError>((name, f))
    };
    // sacct.txt, the longest to write, is written beside jobs.csv and frame.csv on a
    // thread of its own; the files keep their order.
    let sacct_file = |(placed, priorities, trace): (crate::sacct::Placed, Vec<Option<u64>>, &str)| {
        let now = crate::sacct::run_end(o.horizon, result, jobs);
        let (conf, qos) = (o.slurm_conf.as_deref(), o.slurm_qos.as_deref());
        let mut acc = crate::sacct::accounting(conf, qos, w, trace, placed, now)?;
        acc.priorities = priorities;
        write("sacct.txt", &mut |out| reports::sacct::write_sacct(out, jobs, records, &acc))
    };
    let (before, sacct) = std::thread::scope(|scope| {
        let sacct = sacct.map(|x| scope.spawn(move || sacct_file(x)));
        let jobs_csv = write("jobs.csv", &mut |out| match o.jobs_format {
            JobsFormat::Default => reports::jobs_csv::write_jobs(out, jobs, records),
            JobsFormat::Batsim => reports::jobs_csv::write_batsim_jobs(out, jobs, records),
        });
        let frame = write("frame.csv", &mut |out| {
            reports::frame::write_rows(out, jobs.iter().zip(records).map(|(j, r)| reports::frame::JobRow::of(j, r)))
        });
        ([jobs_csv, frame], sacct.map(|h| h.join().expect("the sacct.txt writer does not panic")))
    });
    let mut files: Vec<(&str, Finished)> = Vec::new();
    for f in before.into_iter().chain(sacct) {
        files.push(f?);
    }
    if !result.gpu_samples.is_empty() {
        files.push(write("fragmentation.csv", &mut |out| reports::fragmentation::write_csv(out, &result.gpu_samples))?);
    }
    files.push(write("summary.json", &mut |out| write_summary(out, &summary))?);
    if let Some(f) = log {
        files.push(("decisions.jsonl", f));
    }
    let written = rename_all(o, files)?;
    Ok(Replayed { summary, written })
}

/// Adds what the run itself measured to its summary: a deadlock or stall, the GPU
/// energy, the controllers' figures.
pub(crate) fn add_run_figures(summary: &mut Summary, result: &RunResult) {
    summary.deadlock = result.deadlock.as_ref().map(Into::into);
    summary.stalled = result.stall.as_ref().map(Into::into);
    summary.set_energy(&result.gpu_energy);
    summary.controllers = result
        .controller_reports
        .iter()
        .map(|(spec, r)| reports::summary::ControllerFigures {
            spec: spec.clone(),
            figures: r.figures.iter().cloned().collect(),
            series: r.series.iter().map(|(k, v)| (k.clone(), v.iter().map(|&(t, x)| [t, x]).collect())).collect(),
        })
        .collect();
}

/// `summary.json`'s contents.
pub(crate) fn write_summary(out: &mut dyn Write, summary: &Summary) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, summary).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

/// Renames every finished file into place, in order; returns their names.
pub(crate) fn rename_all(o: &RunOptions, files: Vec<(&str, Finished)>) -> Result<Vec<String>, RunError> {
    let mut written = Vec::new();
    for (name, f) in files {
        f.rename().map_err(|e| RunError::Other(format!("{}: {e}", o.out.join(name).display())))?;
        written.push(name.to_string());
    }
    Ok(written)
}
