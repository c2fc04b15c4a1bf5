//! # policies: schedlab's scheduling policies
//!
//! Each policy is one file and one line in [`REGISTRY`]; `sim policies` lists them. A
//! policy is built by name from a spec `name[key=value,...]` ([`build`]), sees a
//! read-only [`sim_core::policy::SchedView`] and returns
//! [`sim_core::policy::Decision`]s, which the engine checks.
//!
//! | name | what | real system |
//! |---|---|---|
//! | `fcfs` | [`Fcfs`] | batsched `fcfs`, strict FIFO |
//! | `easy` | [`EasyBackfill`] | EASY (ANL/IBM SP), Maui, batsched `easy_bf` |
//! | `conservative` | [`ConservativeBackfill`] | Mu'alem & Feitelson; batsched `conservative_bf`; Slurm backfill |
//! | `kube` | [`KubeScheduler`] | kube-scheduler with a [`placement`] (Open-Gpu-Share, gpushare, FGD) |
//! | `slurm` | [`Slurm`] | slurmctld's main and backfill schedulers, from a `slurm.conf` |
//! | `sjf-aging` | [`SjfAging`] | shortest job first with aging: Slurm multifactor (age + job size), Maui/Moab queue time |
//!
//! To write a policy, read the [`guide`] (its worked example is [`sjf_aging`]).
//!
//! ```
//! let p = policies::build("easy[backfill_estimate=actual]").unwrap();
//! assert_eq!(p.spec(), "easy[pass=per-time,backfill_estimate=actual,reservation=count]");
//! assert!(policies::build("easy[depth=3]").is_err());
//! ```

pub mod conservative;
pub mod coscheduling;
pub mod domains;
pub mod easy;
pub mod fcfs;
pub mod fgd_protocol;
pub mod gang_options;
pub mod guide;
pub mod kube;
pub mod kueue;
pub mod options;
pub mod placement;
pub mod profile;
pub mod sjf_aging;
pub mod slurm;
pub mod spec;
pub mod unit_profile;

pub use conservative::ConservativeBackfill;
pub use domains::Domains;
pub use easy::EasyBackfill;
pub use fcfs::Fcfs;
pub use kube::KubeScheduler;
pub use options::OptionInfo;
pub use sjf_aging::SjfAging;
pub use slurm::Slurm;
pub use spec::{PolicyError, PolicySpec};

use sim_core::policy::Policy;
use std::collections::BTreeMap;

/// How a registry entry builds its policy: from the spec and the run's master seed.
pub type BuildFn = fn(&PolicySpec, u64) -> Result<Box<dyn Policy>, PolicyError>;

/// How a registry entry's queue discipline runs over a placement: the `kube` options
/// (`queue`, `order`, `aging`, `gang`, ...) that do what its spec does, or why its spec
/// has no such form.
pub type OverPlacementFn = fn(&PolicySpec) -> Result<BTreeMap<String, String>, PolicyError>;

/// One registered policy.
pub struct PolicyEntry {
    /// Name used in specs.
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// Options it takes (first value = default).
    pub options: &'static [OptionInfo],
    /// Builds it (with the run's master seed).
    pub build: BuildFn,
    /// Its queue discipline over a placement (`--placement`, `--gang`, `--topology`);
    /// `None` when it has none.
    pub over_placement: Option<OverPlacementFn>,
}

/// Every policy, one line each.
pub const REGISTRY: &[PolicyEntry] = &[
    PolicyEntry {
        name: "fcfs",
        summary: "first come, first served: start queue heads while the head fits",
        options: Fcfs::OPTIONS,
        build: |s, _| Ok(Box::new(Fcfs::from_spec(s)?)),
        over_placement: Some(|s| options::queue_over_placement(s, "fcfs")),
    },
    PolicyEntry {
        name: "easy",
        summary: "EASY backfilling: the head holds a reservation at the shadow time; later jobs may pass it if they do not delay it",
        options: EasyBackfill::OPTIONS,
        build: |s, _| Ok(Box::new(EasyBackfill::from_spec(s)?)),
        over_placement: Some(|s| options::queue_over_placement(s, "easy")),
    },
    PolicyEntry {
        name: "conservative",
        summary: "conservative backfilling: every waiting job holds a reservation that no later job may delay",
        options: ConservativeBackfill::OPTIONS,
        build: |s, _| Ok(Box::new(ConservativeBackfill::from_spec(s)?)),
        over_placement: Some(|s| options::queue_over_placement(s, "conservative")),
    },
    PolicyEntry {
        name: "kube",
        summary: "Kubernetes-style: pods one at a time through filter and score plugins, bound to nodes and GPUs, from kube-scheduler's scheduling queue (back-off, unschedulable pods retried on events and every 5 min); a pod that fits nowhere is skipped, or preempts pods of lower priority (DefaultPreemption). Not modelled: PodDisruptionBudgets, queueing hints, image locality",
        options: KubeScheduler::OPTIONS,
        build: |s, seed| Ok(Box::new(KubeScheduler::from_spec(s, seed)?)),
        over_placement: Some(|s| Ok(s.options.clone())),
    },
    PolicyEntry {
        name: "sjf-aging",
        summary: "shortest job first with aging: lowest (estimate - aging x wait) first, while it fits",
        options: SjfAging::OPTIONS,
        build: |s, _| Ok(Box::new(SjfAging::from_spec(s)?)),
        over_placement: Some(SjfAging::over_placement),
    },
    PolicyEntry {
        name: "slurm",
        summary: "Slurm's controller: jobs start at submission when first in their partition, then by the main scheduler (job ends, every sched_interval; a partition stops at its first pending job) and the backfill scheduler (every bf_interval, whole-node reservations); priority basic or multifactor; QOS limits and preemption (--qos), fair-share tree and association limits (--assoc); read from a slurm.conf with --slurm-conf. slurm.conf keys modelled: NodeName (CPUs, Sockets, CoresPerSocket, ThreadsPerCore, RealMemory, Gres, Features, Weight), PartitionName (Nodes, MaxTime, DefaultTime, PriorityTier, PriorityJobFactor, OverSubscribe, PreemptMode, Default, State), SelectType, SelectTypeParameters, SchedulerType, SchedulerParameters (bf_interval, bf_resolution, bf_window, bf_max_job_test, bf_max_job_user, default_queue_depth, sched_interval; bf_continue, sched_min_interval, bf_max_time read without effect), PriorityType, PriorityWeightAge, PriorityWeightFairshare, PriorityWeightJobSize, PriorityWeightPartition, PriorityWeightQOS, PriorityWeightAssoc, PriorityMaxAge, PriorityDecayHalfLife, PriorityCalcPeriod, PriorityUsageResetPeriod, PriorityFavorSmall, PriorityFlags (FAIR_TREE, NO_FAIR_TREE), FairShareDampeningFactor, PreemptType, PreemptMode, PreemptExemptTime, DefMemPerCPU, DefMemPerNode, AccountingStorageEnforce (limits, safe, all), JobRequeue and MaxBatchRequeue (the restart rule of interrupted jobs unless --restarts says otherwise); every other key is read and listed as not modelled (docs/slurm.md)",
        options: Slurm::OPTIONS,
        build: |s, _| Ok(Box::new(Slurm::from_spec(s)?)),
        over_placement: None,
    },
];

/// A policy composed from its parts, as `sim run` takes them: a queue discipline (any
/// registry policy with an [`PolicyEntry::over_placement`] form: `--policy
/// fcfs|easy|conservative|sjf-aging[...]|kube[...]`), a placement (`--placement
/// bestfit,nodeaffinity=2,...`, see [`placement::Placement::from_spec`]), a gang mode
/// (`--gang atomic|none|permit-wait|kueue`) and a topology rule (`--topology
/// none|tree`). Without placement, gang and topology it is [`build_seeded`].
///
/// ```
/// let p = policies::compose("easy", Some("bestfit,nodeaffinity=2"), Some("atomic"), None, 0).unwrap();
/// assert_eq!(p.spec(), "easy+placement[bestfit,nodeaffinity=2]+gang[atomic]+topology[none]");
/// assert!(policies::compose("easy[pass=per-event]", Some("fgd"), None, None, 0).is_err());
/// // A kube spec keeps its gang, topology, timeout and quota; the flags win.
/// let p = policies::compose("kube[gang=none,timeout=30]", Some("fgd"), None, Some("tree"), 0).unwrap();
/// assert_eq!(p.spec(), "skip+placement[fgd]+gang[none]+topology[tree]+[timeout=30]");
/// // Its score comes from the placement.
/// assert!(policies::compose("kube[score=bestfit]", Some("fgd"), None, None, 0).is_err());
/// // sjf-aging's order over a placement: strict blocking is fcfs's, skip is kube's.
/// let p = policies::compose("sjf-aging[aging=0.5]", Some("bestfit"), None, None, 0).unwrap();
/// assert_eq!(p.spec(), "fcfs+order[sjf-aging,aging=0.5]+placement[bestfit]+gang[atomic]+topology[none]");
/// ```
pub fn compose(
    policy: &str,
    placement: Option<&str>,
    gang: Option<&str>,
    topology: Option<&str>,
    seed: u64,
) -> Result<Box<dyn Policy>, PolicyError> {
    if placement.is_none() && gang.is_none() && topology.is_none() {
        return build_seeded(policy, seed);
    }
    let parsed: PolicySpec = policy.parse()?;
    let entry = REGISTRY.iter().find(|e| e.name == parsed.name && e.over_placement.is_some());
    let over = entry.and_then(|e| e.over_placement).ok_or_else(|| PolicyError::UnknownName {
        kind: "policy over a placement",
        name: parsed.name.clone(),
        known: REGISTRY.iter().filter(|e| e.over_placement.is_some()).map(|e| e.name).collect::<Vec<_>>().join(", "),
    })?;
    let mut options = over(&parsed)?;
    // The flags win over the spec's own options.
    for (key, flag) in [("gang", gang), ("topology", topology)] {
        if let Some(v) = flag {
            options.insert(key.to_string(), v.to_string());
        }
    }
    let malformed = |what: String| PolicyError::Malformed { spec: placement.unwrap_or_default().to_string(), what };
    let placement = placement::Placement::from_spec(placement.unwrap_or("least-allocated")).map_err(malformed)?;
    let k = KubeScheduler::composed(options, placement, seed)?;
    Ok(Box::new(k))
}

/// Builds a policy from a spec such as `conservative[replan=rebuild]`, with seed 0.
pub fn build(spec: &str) -> Result<Box<dyn Policy>, PolicyError> {
    build_seeded(spec, 0)
}

/// Builds a policy from a spec, giving it the run's master seed (for the policies that
/// draw, from their own named streams).
pub fn build_seeded(spec: &str, seed: u64) -> Result<Box<dyn Policy>, PolicyError> {
    let parsed: PolicySpec = spec.parse()?;
    let entry = REGISTRY.iter().find(|e| e.name == parsed.name).ok_or_else(|| PolicyError::UnknownName {
        kind: "policy",
        name: parsed.name.clone(),
        known: REGISTRY.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
    })?;
    (entry.build)(&parsed, seed)
}
