//! The part of a site's `slurm.conf` that shapes scheduling, read as Slurm reads it.
//!
//! Source: `slurm.conf(5)` of Slurm 24.05 (`SchedMD/slurm`, `doc/man/man5/slurm.conf.5`)
//! and `doc/html/sched_config.shtml`, `doc/html/priority_multifactor.shtml`. Keys are
//! case-insensitive, `#` starts a comment, a line ending in `\` continues on the next,
//! `NodeName=DEFAULT` / `PartitionName=DEFAULT` set defaults for the lines after them,
//! and node names take Slurm's host-list ranges (`cn[001-128,200]`).
//!
//! Every key is either modelled (read below), or kept and listed in
//! [`SlurmConf::not_modelled`] with its line: nothing is dropped silently. A value the
//! model cannot honour (an unknown `SelectTypeParameters`, a malformed time) is an error
//! naming the file, the line and the key.
//!
//! Defaults are those of the current release where the file says nothing; each is
//! named at its field with its source.

use sim_core::time::SimDuration;
use std::fmt;

/// A `slurm.conf` error: the file, the line and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfError {
    /// The file, as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The key.
    pub key: String,
    /// What was expected and found.
    pub what: String,
}

impl fmt::Display for ConfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} line {}, {}: {}", self.file, self.line, self.key, self.what)
    }
}

impl std::error::Error for ConfError {}

/// One node (`NodeName` lines, expanded).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeDef {
    /// Its name.
    pub name: String,
    /// Schedulable CPUs (`CPUs`, else `Sockets × CoresPerSocket × ThreadsPerCore`, else 1).
    pub cpus: u32,
    /// `RealMemory` in MiB (Slurm's default 1).
    pub memory_mib: u64,
    /// GPUs from `Gres=gpu[:type]:N`: (type, count).
    pub gpus: Vec<(Option<String>, u32)>,
    /// `Features` (and `AvailableFeatures`).
    pub features: Vec<String>,
    /// `Weight` (default 1): the lowest-weight nodes are allocated first.
    pub weight: u32,
}

/// How a partition's nodes are shared (`OverSubscribe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverSubscribe {
    /// `NO` (the default): resources are not shared, but nodes are unless a job asks for
    /// `--exclusive`.
    No,
    /// `EXCLUSIVE`: every job gets whole nodes.
    Exclusive,
    /// `YES` / `FORCE`: kept, not modelled (jobs are placed as with `NO`).
    Yes,
}

/// What happens to a job preempted by another (`PreemptMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptMode {
    /// No preemption.
    Off,
    /// The preempted job is cancelled.
    Cancel,
    /// The preempted job is requeued (restarts from the beginning).
    Requeue,
    /// The preempted job is suspended until the preemptor ends (with `GANG`).
    Suspend,
}

/// A partition (`PartitionName` lines).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionDef {
    /// Its name.
    pub name: String,
    /// Its nodes, as indices into [`SlurmConf::nodes`].
    pub nodes: Vec<u32>,
    /// `MaxTime` (`None`: `INFINITE`, the default).
    pub max_time: Option<SimDuration>,
    /// `DefaultTime` (`None`: the `MaxTime`).
    pub default_time: Option<SimDuration>,
    /// `PriorityTier` (default 1): higher tiers are scheduled first.
    pub priority_tier: u32,
    /// `PriorityJobFactor` (default 1): the partition factor of multifactor priority.
    pub priority_job_factor: u32,
    /// `OverSubscribe`.
    pub oversubscribe: OverSubscribe,
    /// `PreemptMode` (`None`: the cluster's).
    pub preempt_mode: Option<PreemptMode>,
    /// `Default=YES`.
    pub default: bool,
    /// `State=UP` (default) rather than `DOWN`/`INACTIVE`/`DRAIN`.
    pub up: bool,
}

impl PartitionDef {
    /// A partition of nodes `0..nodes` with every setting at Slurm's default, the default
    /// partition.
    pub fn all_nodes(name: &str, nodes: usize) -> Self {
        PartitionDef {
            name: name.to_string(),
            nodes: (0..nodes as u32).collect(),
            max_time: None,
            default_time: None,
            priority_tier: 1,
            priority_job_factor: 1,
            oversubscribe: OverSubscribe::No,
            preempt_mode: None,
            default: true,
            up: true,
        }
    }
}

/// `SelectType` and `SelectTypeParameters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Select {
    /// `select/linear`: whole nodes per job.
    pub linear: bool,
    /// Memory is a consumable resource (`CR_*_Memory`).
    pub memory: bool,
}

/// `SchedulerType` and `SchedulerParameters` (defaults: `slurm.conf(5)`, 24.05).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedParams {
    /// `sched/backfill` (the default) rather than `sched/builtin`.
    pub backfill: bool,
    /// `bf_interval`, seconds between backfill cycles (default 30).
    pub bf_interval: SimDuration,
    /// `bf_resolution`, the backfill map's time step (default 60 s).
    pub bf_resolution: SimDuration,
    /// `bf_window`, how far ahead backfill plans (default 1440 min).
    pub bf_window: SimDuration,
    /// `bf_max_job_test`, jobs tested per cycle (default 500 since 21.08,
    /// `SchedMD/slurm@4ead0c92`).
    pub bf_max_job_test: u32,
    /// `bf_max_job_user`, jobs tested per user per cycle (0: no limit, the default).
    pub bf_max_job_user: u32,
    /// `bf_continue` (kept; a simulated cycle is never interrupted).
    pub bf_continue: bool,
    /// `default_queue_depth`, jobs the event-driven main scheduler tests (default 100).
    pub default_queue_depth: u32,
    /// `sched_interval`, seconds between full main-scheduler passes (default 60).
    pub sched_interval: SimDuration,
    /// `sched_min_interval`, microseconds between main-scheduler runs (default 2).
    pub sched_min_interval: SimDuration,
    /// `bf_max_time` (default `bf_interval`; kept: a simulated cycle takes no time).
    pub bf_max_time: Option<SimDuration>,
}

impl Default for SchedParams {
    fn default() -> Self {
        SchedParams {
            backfill: true,
            bf_interval: SimDuration::from_secs(30),
            bf_resolution: SimDuration::from_secs(60),
            bf_window: SimDuration::from_secs(1440 * 60),
            bf_max_job_test: 500,
            bf_max_job_user: 0,
            bf_continue: false,
            default_queue_depth: 100,
            sched_interval: SimDuration::from_secs(60),
            sched_min_interval: SimDuration(2),
            bf_max_time: None,
        }
    }
}

/// `Priority*` (defaults: `slurm.conf(5)` 24.05 and `priority_multifactor.shtml`).
#[derive(Debug, Clone, PartialEq)]
pub struct PriorityConf {
    /// `priority/multifactor` (the default since 23.11) rather than `priority/basic`.
    pub multifactor: bool,
    /// `PriorityWeightAge` (default 0).
    pub weight_age: u32,
    /// `PriorityWeightFairshare` (default 0).
    pub weight_fairshare: u32,
    /// `PriorityWeightJobSize` (default 0).
    pub weight_job_size: u32,
    /// `PriorityWeightPartition` (default 0).
    pub weight_partition: u32,
    /// `PriorityWeightQOS` (default 0).
    pub weight_qos: u32,
    /// `PriorityWeightAssoc` (default 0).
    pub weight_assoc: u32,
    /// `PriorityMaxAge` (default 7-0).
    pub max_age: SimDuration,
    /// `PriorityDecayHalfLife` (default 7-0; 0: no decay).
    pub decay_half_life: SimDuration,
    /// `PriorityCalcPeriod` (default 5 min).
    pub calc_period: SimDuration,
    /// `PriorityUsageResetPeriod` (default `NONE`): `None`, or the period.
    pub usage_reset: Option<SimDuration>,
    /// `PriorityFavorSmall` (default `NO`).
    pub favor_small: bool,
    /// Fair Tree (`PriorityFlags` without `NO_FAIR_TREE`: the default since 19.05).
    pub fair_tree: bool,
    /// `FairShareDampeningFactor` (default 1).
    pub dampening: u32,
}

impl Default for PriorityConf {
    fn default() -> Self {
        let day = 86_400;
        PriorityConf {
            multifactor: true,
            weight_age: 0,
            weight_fairshare: 0,
            weight_job_size: 0,
            weight_partition: 0,
            weight_qos: 0,
            weight_assoc: 0,
            max_age: SimDuration::from_secs(7 * day),
            decay_half_life: SimDuration::from_secs(7 * day),
            calc_period: SimDuration::from_secs(300),
            usage_reset: None,
            favor_small: false,
            fair_tree: true,
            dampening: 1,
        }
    }
}

/// `PreemptType` and the cluster's `PreemptMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptType {
    /// `preempt/none` (the default).
    None,
    /// `preempt/partition_prio`: jobs of higher-`PriorityTier` partitions preempt.
    PartitionPrio,
    /// `preempt/qos`: a QOS preempts the QOSes in its `Preempt` list.
    Qos,
}

/// The modelled part of a `slurm.conf`.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmConf {
    /// The file, as given.
    pub file: String,
    /// Nodes, in file order.
    pub nodes: Vec<NodeDef>,
    /// Partitions, in file order.
    pub partitions: Vec<PartitionDef>,
    /// Node allocation.
    pub select: Select,
    /// The schedulers.
    pub sched: SchedParams,
    /// Job priority.
    pub priority: PriorityConf,
    /// Preemption.
    pub preempt_type: PreemptType,
    /// The cluster's `PreemptMode` (default `OFF`).
    pub preempt_mode: PreemptMode,
    /// `GANG` in the cluster's `PreemptMode`: the gang scheduler runs, and resumes the
    /// jobs `SUSPEND` preempted when their preemptor ends (its time-slicing of jobs
    /// sharing resources in one partition is not modelled).
    pub preempt_gang: bool,
    /// `DefMemPerCPU` in MiB (`None`: not set).
    pub def_mem_per_cpu: Option<u64>,
    /// `DefMemPerNode` in MiB (`None`: not set; Slurm's default is the whole node).
    pub def_mem_per_node: Option<u64>,
    /// `PreemptExemptTime`: a job runs at least this long before it may be preempted
    /// (default 0).
    pub preempt_exempt_time: SimDuration,
    /// `AccountingStorageEnforce` has `limits` (or `safe`, `all`, which imply it): QOS and
    /// association limits are applied (`acct_policy.c` checks nothing without it; Slurm's
    /// default is no enforcement).
    pub enforce_limits: bool,
    /// The QOSes (`--qos`; Slurm's default `normal` alone without it).
    pub qos: Vec<super::qos::QosDef>,
    /// The association tree and its limits (`--assoc`; without it one account per
    /// group and one user association per user, share 1).
    pub assoc: Option<super::fairshare::AssocFile>,
    /// `JobRequeue`: batch jobs are requeued when their node fails (default 1).
    pub job_requeue: bool,
    /// `MaxBatchRequeue`: requeues of a batch job before it is held (default 5).
    pub max_batch_requeue: u32,
    /// Keys read but not modelled, with their line, in file order.
    pub not_modelled: Vec<(usize, String)>,
}

impl Default for SlurmConf {
    fn default() -> Self {
        SlurmConf {
            file: "(defaults)".into(),
            nodes: Vec::new(),
            partitions: Vec::new(),
            select: Select { linear: false, memory: true },
            sched: SchedParams::default(),
            priority: PriorityConf::default(),
            preempt_type: PreemptType::None,
            preempt_mode: PreemptMode::Off,
            preempt_gang: false,
            def_mem_per_cpu: None,
            def_mem_per_node: None,
            preempt_exempt_time: SimDuration::ZERO,
            enforce_limits: false,
            qos: vec![super::qos::QosDef::normal()],
            assoc: None,
            job_requeue: true,
            max_batch_requeue: 5,
            not_modelled: Vec::new(),
        }
    }
}

/// The keys of node and partition lines that are read; the others are listed as not
/// modelled.
const NODE_KEYS: [&str; 10] = [
    "nodename",
    "cpus",
    "sockets",
    "corespersocket",
    "threadspercore",
    "realmemory",
    "gres",
    "features",
    "weight",
    "availablefeatures",
];
const PARTITION_KEYS: [&str; 10] = [
    "partitionname",
    "nodes",
    "maxtime",
    "defaulttime",
    "prioritytier",
    "priorityjobfactor",
    "oversubscribe",
    "preemptmode",
    "default",
    "state",
];

/// One logical line: its number and its `key=value` words.
struct Line {
    no: usize,
    words: Vec<(String, String)>,
}

/// Splits the text into logical lines (comments cut, `\` continuations joined).
fn lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut pending = String::new();
    let mut first = 0;
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let body = raw.split('#').next().unwrap_or("");
        if pending.is_empty() {
            first = no;
        }
        if let Some(cont) = body.trim_end().strip_suffix('\\') {
            pending.push_str(cont);
            pending.push(' ');
            continue;
        }
        pending.push_str(body);
        let words: Vec<(String, String)> = pending
            .split_whitespace()
            .map(|w| match w.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (w.to_string(), String::new()),
            })
            .collect();
        if !words.is_empty() {
            out.push(Line { no: first, words });
        }
        pending.clear();
    }
    out
}

impl SlurmConf {
    /// What the site's Slurm does with a job whose node failed: `JobRequeue` and
    /// `MaxBatchRequeue` (`slurm.conf(5)`, Slurm 24.05).
    pub fn restarts(&self) -> sim_core::restart::Restarts {
        sim_core::restart::Restarts::Slurm { requeue: self.job_requeue, max_requeue: self.max_batch_requeue }
    }

    /// Reads `text` (the contents of `file`).
    pub fn parse(text: &str, file: &str) -> Result<SlurmConf, ConfError> {
        let mut c = SlurmConf { file: file.to_string(), ..SlurmConf::default() };
        let mut node_default: Vec<(String, String)> = Vec::new();
        let mut part_default: Vec<(String, String)> = Vec::new();
        let mut partition_lines: Vec<(usize, Vec<(String, String)>)> = Vec::new();
        for line in lines(text) {
            let head = line.words[0].0.to_ascii_lowercase();
            let value = &line.words[0].1;
            match head.as_str() {
                "nodename" if value.eq_ignore_ascii_case("default") => node_default = line.words[1..].to_vec(),
                "nodename" => {
                    let mut words = node_default.clone();
                    words.extend(line.words[1..].iter().cloned());
                    c.node_line(line.no, value, &words)?;
                }
                "partitionname" if value.eq_ignore_ascii_case("default") => part_default = line.words[1..].to_vec(),
                "partitionname" => {
                    let mut words = vec![line.words[0].clone()];
                    words.extend(part_default.iter().cloned());
                    words.extend(line.words[1..].iter().cloned());
                    partition_lines.push((line.no, words));
                }
                _ => {
                    for (k, v) in &line.words {
                        c.key(line.no, k, v)?;
                    }
                }
            }
        }
        // Partitions after every node line: `Nodes=ALL` and names refer to all of them.
        for (no, words) in partition_lines {
            c.partition_line(no, &words)?;
        }
        if c.nodes.is_empty() {
            return Err(c.err(0, "NodeName", "expected at least one NodeName line, found none"));
        }
        if c.partitions.is_empty() {
            return Err(c.err(0, "PartitionName", "expected at least one PartitionName line, found none"));
        }
        Ok(c)
    }

    fn err(&self, line: usize, key: &str, what: impl Into<String>) -> ConfError {
        ConfError { file: self.file.clone(), line, key: key.to_string(), what: what.into() }
    }

    fn number<T: std::str::FromStr>(&self, line: usize, key: &str, v: &str) -> Result<T, ConfError> {
        v.trim().parse().map_err(|_| self.err(line, key, format!("expected a whole number, found '{v}'")))
    }

    fn time(&self, line: usize, key: &str, v: &str) -> Result<Option<SimDuration>, ConfError> {
        parse_time(v).map_err(|e| self.err(line, key, e))
    }

    /// One key of a plain line.
    fn key(&mut self, line: usize, k: &str, v: &str) -> Result<(), ConfError> {
        let lower = k.to_ascii_lowercase();
        let p = &mut self.priority;
        match lower.as_str() {
            "selecttype" => match v.to_ascii_lowercase().as_str() {
                "select/cons_tres" | "select/cons_res" => self.select.linear = false,
                "select/linear" => self.select.linear = true,
                _ => {
                    return Err(self.err(
                        line,
                        k,
                        format!("expected select/cons_tres, select/cons_res or select/linear, found '{v}'"),
                    ));
                }
            },
            "selecttypeparameters" => self.select_params(line, k, v)?,
            "schedulertype" => match v.to_ascii_lowercase().as_str() {
                "sched/backfill" => self.sched.backfill = true,
                "sched/builtin" => self.sched.backfill = false,
                _ => return Err(self.err(line, k, format!("expected sched/backfill or sched/builtin, found '{v}'"))),
            },
            "schedulerparameters" => self.sched_params(line, v)?,
            "prioritytype" => match v.to_ascii_lowercase().as_str() {
                "priority/multifactor" => p.multifactor = true,
                "priority/basic" => p.multifactor = false,
                _ => {
                    return Err(self.err(
                        line,
                        k,
                        format!("expected priority/multifactor or priority/basic, found '{v}'"),
                    ));
                }
            },
            "priorityweightage" => self.priority.weight_age = self.number(line, k, v)?,
            "priorityweightfairshare" => self.priority.weight_fairshare = self.number(line, k, v)?,
            "priorityweightjobsize" => self.priority.weight_job_size = self.number(line, k, v)?,
            "priorityweightpartition" => self.priority.weight_partition = self.number(line, k, v)?,
            "priorityweightqos" => self.priority.weight_qos = self.number(line, k, v)?,
            "priorityweightassoc" => self.priority.weight_assoc = self.number(line, k, v)?,
            "prioritymaxage" => {
                self.priority.max_age = self.time(line, k, v)?.unwrap_or(SimDuration::from_secs(u32::MAX as u64))
            }
            "prioritydecayhalflife" => {
                self.priority.decay_half_life = self.time(line, k, v)?.unwrap_or(SimDuration::ZERO)
            }
            "prioritycalcperiod" => {
                self.priority.calc_period = self.time(line, k, v)?.unwrap_or(SimDuration::from_secs(300))
            }
            "priorityusageresetperiod" => self.priority.usage_reset = self.reset_period(line, k, v)?,
            "priorityfavorsmall" => self.priority.favor_small = self.yes(line, k, v)?,
            "priorityflags" => self.priority_flags(line, v),
            "fairsharedampeningfactor" => self.priority.dampening = self.number(line, k, v)?,
            "preempttype" => {
                self.preempt_type = match v.to_ascii_lowercase().as_str() {
                    "preempt/none" => PreemptType::None,
                    "preempt/partition_prio" => PreemptType::PartitionPrio,
                    "preempt/qos" => PreemptType::Qos,
                    _ => {
                        return Err(self.err(
                            line,
                            k,
                            format!("expected preempt/none, preempt/partition_prio or preempt/qos, found '{v}'"),
                        ));
                    }
                }
            }
            "preemptmode" => {
                self.preempt_mode = self.preempt_mode_of(line, k, v)?;
                self.preempt_gang = v.split(',').any(|m| m.trim().eq_ignore_ascii_case("GANG"));
                if self.preempt_gang {
                    let what = "PreemptMode=GANG time-slicing (jobs sharing resources in one partition)";
                    self.not_modelled.push((line, what.to_string()));
                }
            }
            "preemptexempttime" => self.preempt_exempt_time = self.time(line, k, v)?.unwrap_or(SimDuration::ZERO),
            "accountingstorageenforce" => self.enforce(line, k, v)?,
            "defmempercpu" => self.def_mem_per_cpu = Some(self.number(line, k, v)?),
            "defmempernode" => self.def_mem_per_node = Some(self.number(line, k, v)?),
            "jobrequeue" => self.job_requeue = self.number::<u32>(line, k, v)? != 0,
            "maxbatchrequeue" => self.max_batch_requeue = self.number(line, k, v)?,
            _ => self.not_modelled.push((line, k.to_string())),
        }
        Ok(())
    }

    fn yes(&self, line: usize, k: &str, v: &str) -> Result<bool, ConfError> {
        match v.to_ascii_lowercase().as_str() {
            "yes" => Ok(true),
            "no" => Ok(false),
            _ => Err(self.err(line, k, format!("expected YES or NO, found '{v}'"))),
        }
    }

    fn reset_period(&self, line: usize, k: &str, v: &str) -> Result<Option<SimDuration>, ConfError> {
        let day = 86_400;
        Ok(Some(SimDuration::from_secs(match v.to_ascii_lowercase().as_str() {
            "none" => return Ok(None),
            "now" => return Err(self.err(line, k, "NOW resets once at start-up and is not modelled; expected NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY")),
            "daily" => day,
            "weekly" => 7 * day,
            "monthly" => 30 * day,
            "quarterly" => 91 * day,
            "yearly" => 365 * day,
            _ => return Err(self.err(line, k, format!("expected NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY, found '{v}'"))),
        })))
    }

    fn priority_flags(&mut self, line: usize, v: &str) {
        for flag in v.split(',').filter(|f| !f.is_empty()) {
            match flag.to_ascii_uppercase().as_str() {
                "NO_FAIR_TREE" => self.priority.fair_tree = false,
                "FAIR_TREE" => self.priority.fair_tree = true,
                _ => self.not_modelled.push((line, format!("PriorityFlags={flag}"))),
            }
        }
    }

    /// `AccountingStorageEnforce`: `limits`, `safe` and `all` apply the limits; the
    /// other valid values (`associations`, `qos`, `wckeys`: jobs refused without one;
    /// `nojobs`, `nosteps`) are listed as not modelled.
    fn enforce(&mut self, line: usize, k: &str, v: &str) -> Result<(), ConfError> {
        for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.to_ascii_lowercase().as_str() {
                "limits" | "safe" | "all" => self.enforce_limits = true,
                "associations" | "qos" | "wckeys" | "nojobs" | "nosteps" => {
                    self.not_modelled.push((line, format!("AccountingStorageEnforce={part}")));
                }
                _ => {
                    return Err(self.err(
                        line,
                        k,
                        format!(
                            "expected all, associations, limits, nojobs, nosteps, qos, safe or wckeys, found '{part}'"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn preempt_mode_of(&self, line: usize, k: &str, v: &str) -> Result<PreemptMode, ConfError> {
        let mut mode = PreemptMode::Off;
        for part in v.split(',') {
            mode = match part.to_ascii_uppercase().as_str() {
                "OFF" => PreemptMode::Off,
                "CANCEL" => PreemptMode::Cancel,
                "REQUEUE" => PreemptMode::Requeue,
                "SUSPEND" => PreemptMode::Suspend,
                // GANG goes with SUSPEND (time-slicing); WITHIN is not modelled.
                "GANG" => continue,
                _ => {
                    return Err(self.err(
                        line,
                        k,
                        format!("expected OFF, CANCEL, REQUEUE, SUSPEND or GANG, found '{part}'"),
                    ));
                }
            };
        }
        Ok(mode)
    }

    fn select_params(&mut self, line: usize, k: &str, v: &str) -> Result<(), ConfError> {
        for p in v.split(',') {
            match p.to_ascii_uppercase().as_str() {
                "CR_CPU" | "CR_CORE" => self.select.memory = false,
                "CR_CPU_MEMORY" | "CR_CORE_MEMORY" => self.select.memory = true,
                "CR_MEMORY" | "CR_SOCKET" | "CR_SOCKET_MEMORY" | "CR_BOARD" => {
                    return Err(self.err(
                        line,
                        k,
                        format!("{p} is not modelled; expected CR_CPU, CR_Core, CR_CPU_Memory or CR_Core_Memory"),
                    ));
                }
                // Task-layout flags change where tasks go within a node, not whether they fit.
                _ => self.not_modelled.push((line, format!("SelectTypeParameters={p}"))),
            }
        }
        Ok(())
    }

    fn sched_params(&mut self, line: usize, v: &str) -> Result<(), ConfError> {
        const KEY: &str = "SchedulerParameters";
        for p in v.split(',').filter(|p| !p.is_empty()) {
            let (k, val) = p.split_once('=').unwrap_or((p, ""));
            let secs = |s: &Self| -> Result<SimDuration, ConfError> {
                Ok(SimDuration::from_secs(
                    s.number::<u64>(line, KEY, val).map_err(|e| ConfError { key: format!("{KEY} {k}"), ..e })?,
                ))
            };
            let count = |s: &Self| -> Result<u32, ConfError> { s.number::<u32>(line, &format!("{KEY} {k}"), val) };
            match k.to_ascii_lowercase().as_str() {
                "bf_interval" => self.sched.bf_interval = secs(self)?,
                "bf_resolution" => self.sched.bf_resolution = secs(self)?,
                "bf_window" => self.sched.bf_window = SimDuration::from_secs(60 * u64::from(count(self)?)),
                "bf_max_job_test" | "max_job_bf" => self.sched.bf_max_job_test = count(self)?,
                "bf_max_job_user" => self.sched.bf_max_job_user = count(self)?,
                "bf_continue" => self.sched.bf_continue = true,
                "default_queue_depth" => self.sched.default_queue_depth = count(self)?,
                "sched_interval" => self.sched.sched_interval = secs(self)?,
                "sched_min_interval" => self.sched.sched_min_interval = SimDuration(u64::from(count(self)?)),
                "bf_max_time" => self.sched.bf_max_time = Some(secs(self)?),
                _ => self.not_modelled.push((line, format!("{KEY} {k}"))),
            }
        }
        if self.sched.bf_resolution == SimDuration::ZERO {
            return Err(self.err(line, "SchedulerParameters bf_resolution", "expected at least 1 second, found 0"));
        }
        Ok(())
    }

    fn node_line(&mut self, line: usize, names: &str, words: &[(String, String)]) -> Result<(), ConfError> {
        let (mut cpus, mut sockets, mut cores, mut threads) = (None, 1u32, 1u32, 1u32);
        let mut n =
            NodeDef { name: String::new(), cpus: 1, memory_mib: 1, gpus: Vec::new(), features: Vec::new(), weight: 1 };
        for (k, v) in words {
            match k.to_ascii_lowercase().as_str() {
                "cpus" | "procs" => cpus = Some(self.number::<u32>(line, k, v)?),
                "sockets" => sockets = self.number(line, k, v)?,
                "corespersocket" => cores = self.number(line, k, v)?,
                "threadspercore" => threads = self.number(line, k, v)?,
                "realmemory" => n.memory_mib = self.number(line, k, v)?,
                "gres" => n.gpus = self.gres(line, k, v)?,
                "features" | "availablefeatures" => n.features = v.split(',').map(str::to_string).collect(),
                "weight" => n.weight = self.number(line, k, v)?,
                lower if NODE_KEYS.contains(&lower) => {}
                _ => self.not_modelled.push((line, format!("NodeName {k}"))),
            }
        }
        n.cpus = cpus.unwrap_or(sockets * cores * threads);
        if n.cpus == 0 {
            return Err(self.err(line, "CPUs", "expected at least 1 CPU, found 0"));
        }
        for name in expand_hostlist(names).map_err(|e| self.err(line, "NodeName", e))? {
            self.nodes.push(NodeDef { name, ..n.clone() });
        }
        Ok(())
    }

    fn gres(&self, line: usize, k: &str, v: &str) -> Result<Vec<(Option<String>, u32)>, ConfError> {
        let mut out = Vec::new();
        for g in v.split(',') {
            let parts: Vec<&str> = g.split(':').collect();
            if parts[0] != "gpu" {
                continue;
            }
            let bad = || self.err(line, k, format!("expected gpu[:type]:count, found '{g}'"));
            let (ty, count) = match parts.as_slice() {
                [_, c] => (None, *c),
                [_, t, c] => (Some(t.to_string()), *c),
                _ => return Err(bad()),
            };
            // A count may carry a socket binding suffix in gres.conf style: `4(S:0-1)`.
            let count = count.split('(').next().unwrap_or(count);
            out.push((ty, count.parse().map_err(|_| bad())?));
        }
        Ok(out)
    }

    fn partition_line(&mut self, line: usize, words: &[(String, String)]) -> Result<(), ConfError> {
        let mut p = PartitionDef { default: false, ..PartitionDef::all_nodes(&words[0].1, 0) };
        for (k, v) in &words[1..] {
            match k.to_ascii_lowercase().as_str() {
                "nodes" => p.nodes = self.node_indices(line, v)?,
                "maxtime" => p.max_time = self.time(line, k, v)?,
                "defaulttime" => p.default_time = self.time(line, k, v)?,
                "prioritytier" => p.priority_tier = self.number(line, k, v)?,
                "priorityjobfactor" => p.priority_job_factor = self.number(line, k, v)?,
                "priority" => {
                    // Before 16.05 one `Priority` set both.
                    let x: u32 = self.number(line, k, v)?;
                    (p.priority_tier, p.priority_job_factor) = (x, x);
                }
                "oversubscribe" | "shared" => {
                    p.oversubscribe = match v.split(':').next().unwrap_or("").to_ascii_uppercase().as_str() {
                        "NO" => OverSubscribe::No,
                        "EXCLUSIVE" => OverSubscribe::Exclusive,
                        "YES" | "FORCE" => OverSubscribe::Yes,
                        _ => {
                            return Err(self.err(
                                line,
                                k,
                                format!("expected NO, EXCLUSIVE, YES or FORCE, found '{v}'"),
                            ));
                        }
                    }
                }
                "preemptmode" => p.preempt_mode = Some(self.preempt_mode_of(line, k, v)?),
                "default" => p.default = self.yes(line, k, v)?,
                "state" => p.up = v.eq_ignore_ascii_case("up"),
                lower if PARTITION_KEYS.contains(&lower) => {}
                _ => self.not_modelled.push((line, format!("PartitionName {k}"))),
            }
        }
        self.partitions.push(p);
        Ok(())
    }

    fn node_indices(&self, line: usize, v: &str) -> Result<Vec<u32>, ConfError> {
        if v.eq_ignore_ascii_case("all") {
            return Ok((0..self.nodes.len() as u32).collect());
        }
        let names = expand_hostlist(v).map_err(|e| self.err(line, "Nodes", e))?;
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let i = self.nodes.iter().position(|n| n.name == name).ok_or_else(|| {
                self.err(line, "Nodes", format!("expected a node named on a NodeName line, found '{name}'"))
            })?;
            out.push(i as u32);
        }
        Ok(out)
    }

    /// The QOS of a job whose queue is `id`: the `id`-th QOS of the `--qos` file (the
    /// runner maps QOS names of sacct input onto it), else `normal`, else the first.
    pub fn qos_of(&self, id: i32) -> usize {
        if id >= 0 && (id as usize) < self.qos.len() {
            return id as usize;
        }
        self.qos.iter().position(|q| q.name == "normal").unwrap_or(0)
    }

    /// The partition a job of trace partition `id` goes to: that partition when the
    /// index exists (the runner maps partition names of sacct input onto it), else the
    /// `Default=YES` one, else the first.
    pub fn partition_of(&self, id: i32) -> usize {
        if id >= 0 && (id as usize) < self.partitions.len() {
            return id as usize;
        }
        self.partitions.iter().position(|p| p.default).unwrap_or(0)
    }

    /// The cluster these nodes make: one pool per run of identical consecutive nodes, in
    /// file order (node ids follow the file), features as labels (`feature=<name>`).
    pub fn cluster(&self) -> sim_core::Cluster {
        use sim_core::cluster::{GpuSpec, NodePool, NodeSpec, TopologyPath};
        let mut pools: Vec<NodePool> = Vec::new();
        for n in &self.nodes {
            let gpus: Vec<GpuSpec> = n
                .gpus
                .iter()
                .flat_map(|(ty, c)| {
                    (0..*c).map(move |_| GpuSpec {
                        model: ty.clone().unwrap_or_else(|| "gpu".into()),
                        memory_mib: 0,
                        power: None,
                    })
                })
                .collect();
            let spec = NodeSpec {
                cores: n.cpus,
                memory_mib: n.memory_mib,
                gpus,
                labels: n.features.iter().map(|f| (format!("feature={f}"), String::new())).collect(),
                taints: Vec::new(),
                topology: TopologyPath::default(),
            };
            match pools.last_mut() {
                Some(p) if p.spec == spec => p.count += 1,
                _ => pools.push(NodePool {
                    name: n.name.trim_end_matches(|c: char| c.is_ascii_digit()).to_string(),
                    count: 1,
                    spec,
                    sharing: sim_core::GpuSharing::Exclusive,
                    group: None,
                }),
            }
        }
        sim_core::Cluster { pools }
    }
}

/// Slurm's time format: `minutes`, `minutes:seconds`, `hours:minutes:seconds`,
/// `days-hours`, `days-hours:minutes`, `days-hours:minutes:seconds`; `INFINITE` and
/// `UNLIMITED` are `None`.
pub fn parse_time(v: &str) -> Result<Option<SimDuration>, String> {
    let bad = || format!("expected a time such as 30, 1:00:00 or 7-0, found '{v}'");
    if v.eq_ignore_ascii_case("infinite") || v.eq_ignore_ascii_case("unlimited") {
        return Ok(None);
    }
    let (days, rest) = match v.split_once('-') {
        Some((d, r)) => (d.parse::<u64>().map_err(|_| bad())?, Some(r)),
        None => (0, None),
    };
    let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
    let secs = match rest {
        Some(r) => {
            let p: Vec<&str> = r.split(':').collect();
            match p.as_slice() {
                [h] => num(h)? * 3600,
                [h, m] => num(h)? * 3600 + num(m)? * 60,
                [h, m, s] => num(h)? * 3600 + num(m)? * 60 + num(s)?,
                _ => return Err(bad()),
            }
        }
        None => {
            let p: Vec<&str> = v.split(':').collect();
            match p.as_slice() {
                [m] => num(m)? * 60,
                [m, s] => num(m)? * 60 + num(s)?,
                [h, m, s] => num(h)? * 3600 + num(m)? * 60 + num(s)?,
                _ => return Err(bad()),
            }
        }
    };
    Ok(Some(SimDuration::from_secs(days * 86_400 + secs)))
}

/// Expands a Slurm host list: `cn[001-003,7],gpu1` → `cn001 cn002 cn003 cn7 gpu1`
/// (zero padding kept from the range's first number).
pub fn expand_hostlist(list: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    // Split at the commas outside brackets.
    let mut depth = 0;
    let mut start = 0;
    let mut items = Vec::new();
    for (i, ch) in list.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    for item in items.into_iter().filter(|s| !s.is_empty()) {
        let Some((prefix, rest)) = item.split_once('[') else {
            out.push(item.to_string());
            continue;
        };
        let (ranges, suffix) =
            rest.split_once(']').ok_or_else(|| format!("expected a closing ']' in the host list '{list}'"))?;
        for r in ranges.split(',') {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            let bad = || format!("expected a range such as 001-128 in the host list '{list}', found '{r}'");
            let (x, y): (u64, u64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            if y < x || y - x > 1_000_000 {
                return Err(bad());
            }
            for i in x..=y {
                out.push(format!("{prefix}{i:0width$}{suffix}", width = a.len()));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sim policies` lists the keys read (its summary in the registry): every key the
    /// reader takes is named there, so the two cannot drift apart.
    #[test]
    fn sim_policies_names_every_key_read() {
        let summary = crate::REGISTRY.iter().find(|e| e.name == "slurm").unwrap().summary.to_ascii_lowercase();
        let source = include_str!("conf.rs");
        let global: Vec<&str> = source
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"'))
            .filter_map(|l| l.split_once("\" => "))
            .filter(|(_, then)| ["self.", "match v", "{"].iter().any(|p| then.starts_with(p)))
            .map(|(k, _)| k)
            .filter(|k| k.chars().all(|c| c.is_ascii_lowercase()))
            .collect();
        assert!(global.contains(&"preemptexempttime"), "{global:?}");
        for k in global.iter().chain(NODE_KEYS.iter()).chain(PARTITION_KEYS.iter()) {
            if ["availablefeatures", "partitionname", "nodename", "default", "state"].contains(k) {
                continue;
            }
            assert!(summary.contains(k), "sim policies does not name {k}");
        }
    }

    const REAL: &str = "\
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,bf_resolution=1,sched_min_interval=0,default_queue_depth=1000,bf_continue,bf_max_job_test=1000
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=1000
PriorityType=priority/basic
ClusterName=sim
NodeName=localhost NodeAddr=127.0.0.1 CPUs=16 Sockets=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=16000 State=UNKNOWN
PartitionName=batch Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
";

    #[test]
    fn reads_the_real_runs_file() {
        let c = SlurmConf::parse(REAL, "slurm.conf").unwrap();
        assert_eq!(c.nodes.len(), 1);
        assert_eq!((c.nodes[0].cpus, c.nodes[0].memory_mib), (16, 16_000));
        assert_eq!(c.sched.bf_interval, SimDuration::from_secs(1));
        assert_eq!(c.sched.bf_resolution, SimDuration::from_secs(1));
        assert_eq!(c.sched.bf_max_job_test, 1000);
        assert_eq!(c.sched.default_queue_depth, 1000);
        assert_eq!(c.sched.sched_min_interval, SimDuration::ZERO);
        assert!(c.sched.bf_continue);
        // Not in the file: the default.
        assert_eq!(c.sched.bf_window, SimDuration::from_secs(86_400));
        assert!(!c.priority.multifactor);
        assert_eq!(c.def_mem_per_cpu, Some(1000));
        assert!(c.select.memory && !c.select.linear);
        assert_eq!(c.partitions[0].nodes, [0]);
        assert!(c.partitions[0].default && c.partitions[0].max_time.is_none());
        let listed: Vec<&str> = c.not_modelled.iter().map(|(_, k)| k.as_str()).collect();
        assert_eq!(listed, ["ClusterName", "NodeName NodeAddr", "NodeName State"]);
        assert_eq!(c.cluster().node_count(), 1);
    }

    #[test]
    fn defaults_ranges_and_times() {
        let text = "NodeName=DEFAULT CPUs=32 RealMemory=64000\nNodeName=cn[01-03] Weight=5\n\
                    NodeName=gpu1 Gres=gpu:a100:4 Sockets=2 CoresPerSocket=8\n\
                    PartitionName=DEFAULT MaxTime=2-12:30\nPartitionName=cpu Nodes=cn[01-03] Default=YES\n\
                    PartitionName=gpu Nodes=gpu1 PriorityTier=10 MaxTime=1:00:00 \\\n  DefaultTime=30\n";
        let c = SlurmConf::parse(text, "f").unwrap();
        let names: Vec<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["cn01", "cn02", "cn03", "gpu1"]);
        assert_eq!((c.nodes[0].cpus, c.nodes[0].weight), (32, 5));
        // NodeName=DEFAULT's CPUs=32 holds for gpu1 too: its socket layout does not override it.
        assert_eq!(c.nodes[3].cpus, 32);
        assert_eq!(c.nodes[3].gpus, [(Some("a100".to_string()), 4)]);
        assert_eq!(c.partitions[0].max_time, Some(SimDuration::from_secs(2 * 86_400 + 12 * 3600 + 30 * 60)));
        assert_eq!(c.partitions[1].max_time, Some(SimDuration::from_secs(3600)));
        assert_eq!(c.partitions[1].default_time, Some(SimDuration::from_secs(30 * 60)));
        assert_eq!(c.partitions[1].priority_tier, 10);
        assert_eq!(c.partition_of(-1), 0);
        let cl = c.cluster();
        assert_eq!(cl.pools.len(), 2);
        assert_eq!(cl.total_gpus(), 4);
        assert_eq!(parse_time("7-0").unwrap(), Some(SimDuration::from_secs(7 * 86_400)));
        assert_eq!(parse_time("5").unwrap(), Some(SimDuration::from_secs(300)));
        assert_eq!(parse_time("1:30").unwrap(), Some(SimDuration::from_secs(90)));
        assert_eq!(parse_time("UNLIMITED").unwrap(), None);
        assert_eq!(expand_hostlist("a[8-10],b").unwrap(), ["a8", "a9", "a10", "b"]);
    }

    #[test]
    fn requeue_keys_give_the_restart_rule() {
        use sim_core::restart::Restarts;
        let c = SlurmConf::parse(REAL, "slurm.conf").unwrap();
        assert_eq!(c.restarts(), Restarts::Slurm { requeue: true, max_requeue: 5 });
        let c = SlurmConf::parse(&format!("{REAL}JobRequeue=0\nMaxBatchRequeue=2\n"), "slurm.conf").unwrap();
        assert_eq!(c.restarts(), Restarts::Slurm { requeue: false, max_requeue: 2 });
        let e = SlurmConf::parse(&format!("{REAL}MaxBatchRequeue=many\n"), "slurm.conf").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (10, "MaxBatchRequeue"));
    }

    #[test]
    fn bad_values_name_file_line_and_key() {
        let e = SlurmConf::parse("SelectTypeParameters=CR_Socket\nNodeName=a\n", "x.conf").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (1, "SelectTypeParameters"));
        assert!(e.to_string().starts_with("x.conf line 1, SelectTypeParameters: CR_Socket is not modelled"), "{e}");
        let e = SlurmConf::parse("NodeName=a CPUs=x\nPartitionName=p Nodes=a\n", "x.conf").unwrap_err();
        assert_eq!(e.to_string(), "x.conf line 1, CPUs: expected a whole number, found 'x'");
        let e = SlurmConf::parse("NodeName=a\nPartitionName=p Nodes=b\n", "x.conf").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (2, "Nodes"));
        let e = SlurmConf::parse("SchedulerParameters=bf_window=x\nNodeName=a\nPartitionName=p Nodes=a\n", "x")
            .unwrap_err();
        assert_eq!(e.key, "SchedulerParameters bf_window");
        let e = SlurmConf::parse("NodeName=a\nPartitionName=p Nodes=a MaxTime=1-x\n", "x").unwrap_err();
        assert!(e.what.contains("expected a time"), "{e}");
        assert!(SlurmConf::parse("NodeName=a\n", "x").is_err());
    }
}
