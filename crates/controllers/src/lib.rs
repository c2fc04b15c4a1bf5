//! # controllers: schedlab's controllers
//!
//! A controller ([`sim_core::controller::Controller`]) changes the cluster or the
//! workload over time — failures and repairs, drains, spot reclaims, autoscalers,
//! priority recalculation — as Kubernetes controllers and Slurm's background threads do.
//! It sees the same read-only view a policy sees and returns
//! [`sim_core::controller::Action`]s, which the engine checks and applies in the order
//! of its contract ([`sim_core::controller`]).
//!
//! Each controller is one file and one line in [`REGISTRY`]; `sim controllers` lists
//! them. A controller is built by name from a spec `name[key=value,...]` ([`build`]),
//! attached with `sim run --controller SPEC` (repeatable) or a `[[controller]]` table in
//! the cluster configuration, after the engine's built-in ones ([`BUILT_IN`]).
//!
//! | name | what | real system |
//! |---|---|---|
//! | `maintenance` | [`Maintenance`]: drain (or take down) a rack or pool at a time, resume it later | `scontrol update nodename=… state=drain reason=maintenance`, `kubectl drain` |
//! | `spot` | [`Spot`]: spot capacity reclaimed after a notice (cordon, checkpoint, evict) and given back, by a hazard or a real availability trace | EC2 spot interruption notice (120 s), GCP Spot preemption (30 s); `skypilot-org/spot-traces` |
//! | `cluster-autoscaler` | [`ClusterAutoscaler`]: grows node groups for pods that fit no node, removes unneeded nodes; GPU nodes Ready before their GPUs | Kubernetes Cluster Autoscaler 1.36 (`kubernetes/autoscaler`) |
//! | `inference-service` | [`InferenceService`]: a Deployment of inference replicas fed by a request-rate series, latency and SLO per interval, scaled by the HPA or KEDA | Kubernetes Deployment, HPA (`pkg/controller/podautoscaler`), KEDA ScaledObject |
//! | `karpenter` | [`Karpenter`]: launches the cheapest node groups' nodes for batches of pending pods; consolidates empty and underutilized nodes within a disruption budget | Karpenter v1 (`kubernetes-sigs/karpenter`) |
//! | `static`, `lend-drain`, `lend-evict`, `bridge` | [`arrangement`]: how Slurm and Kubernetes share one cluster's nodes | a static split; Slinky slurm-operator and slurm-bridge; CoreWeave SUNK |
//! | `failures` | [`Failures`]: random node failures (exponential or Weibull), detection, lognormal repairs | slurmctld's `SlurmdTimeout` DOWN and requeue; fleet fault rates of InfiniteHBD and Llama 3 |
//!
//! [`hpa`] is the Horizontal Pod Autoscaler's algorithm (replicas for a metric, its
//! stabilization and rate limits), for the controllers that scale services.
//!
//! To write one, read the [controller section of the policy guide][guide]; its worked
//! example is [`maintenance`].
//!
//! ```
//! let c = controllers::build("maintenance[rack=r1,at=3600,until=7200]", 0, 0).unwrap();
//! assert_eq!(c.spec(), "maintenance[rack=r1,pool=*,at=3600,until=7200,mode=drain]");
//! assert!(controllers::build("maintenance[depth=3]", 0, 0).is_err());
//! ```
//!
//! [guide]: https://docs.rs/policies/latest/policies/guide/index.html#controllers

pub mod arrangement;
pub mod cluster_autoscaler;
pub mod failures;
pub mod hpa;
pub mod karpenter;
pub mod maintenance;
pub mod service;
pub mod spot;
mod timers;

pub use cluster_autoscaler::ClusterAutoscaler;
pub use failures::Failures;
pub use karpenter::Karpenter;
pub use maintenance::Maintenance;
pub use service::InferenceService;
pub use spot::Spot;

use sim_core::controller::Controller;
use sim_core::spec::{OptionInfo, Spec, SpecError};

/// How a registry entry builds its controller: from the spec and the random stream
/// named after it (`controller/<name>/<position>`, from the run's master seed).
pub type BuildFn = fn(&Spec, sim_core::rng::SimRng) -> Result<Box<dyn Controller>, SpecError>;

/// One registered controller.
pub struct ControllerEntry {
    /// Name used in specs.
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// Options it takes (first value = default).
    pub options: &'static [OptionInfo],
    /// Builds it.
    pub build: BuildFn,
}

/// Every controller, by name.
pub const REGISTRY: &[ControllerEntry] = &[
    ControllerEntry {
        name: "maintenance",
        summary: "drain (or take down) the nodes of a rack or pool at a time and resume them later",
        options: Maintenance::OPTIONS,
        build: |s, _| Ok(Box::new(Maintenance::from_spec(s)?)),
    },
    ControllerEntry {
        name: "failures",
        summary: "random node failures (exponential or Weibull per node), detected after SlurmdTimeout, repaired \
                  after a lognormal time",
        options: Failures::OPTIONS,
        build: |s, rng| Ok(Box::new(Failures::from_spec(s, rng)?)),
    },
    ControllerEntry {
        name: "spot",
        summary: "a spot pool: nodes reclaimed after a notice (jobs checkpoint, are evicted), back later; by a \
                  hazard or a spot-traces availability file",
        options: Spot::OPTIONS,
        build: |s, rng| Ok(Box::new(Spot::from_spec(s, rng)?)),
    },
    ControllerEntry {
        name: "cluster-autoscaler",
        summary: "Kubernetes' Cluster Autoscaler over the node groups (pools with an autoscale table): scale-up for \
                  pods that fit no node, Ready or upcoming, by an expander; scale-down of unneeded nodes",
        options: ClusterAutoscaler::OPTIONS,
        build: |s, rng| Ok(Box::new(ClusterAutoscaler::from_spec(s, rng)?)),
    },
    ControllerEntry {
        name: "karpenter",
        summary: "a Karpenter-like provisioner over the node groups: the cheapest instance types for batches of \
                  pending pods; consolidation of empty and underutilized nodes within a disruption budget",
        options: Karpenter::OPTIONS,
        build: |s, rng| Ok(Box::new(Karpenter::from_spec(s, rng)?)),
    },
    ControllerEntry {
        name: "static",
        summary: "Slurm and Kubernetes on one cluster, a fixed split of the nodes (arrangement)",
        options: arrangement::StaticSplit::OPTIONS,
        build: |s, _| Ok(Box::new(arrangement::StaticSplit::from_spec(s)?)),
    },
    ControllerEntry {
        name: "lend-drain",
        summary: "Slurm lends idle nodes to Kubernetes and takes them back by draining (Slinky slurm-operator \
                  NodeSet scaled by KEDA) (arrangement)",
        options: arrangement::LendDrain::OPTIONS,
        build: |s, _| Ok(Box::new(arrangement::LendDrain::from_spec(s)?)),
    },
    ControllerEntry {
        name: "lend-evict",
        summary: "Kubernetes pods run on idle Slurm nodes and are evicted after the kill wait when a Slurm job \
                  takes the node (CoreWeave SUNK) (arrangement)",
        options: arrangement::LendEvict::OPTIONS,
        build: |s, _| Ok(Box::new(arrangement::LendEvict::from_spec(s)?)),
    },
    ControllerEntry {
        name: "bridge",
        summary: "every Kubernetes pod a Slurm job, a whole node each or shared (Slinky slurm-bridge) \
                  (arrangement)",
        options: arrangement::Bridge::OPTIONS,
        build: |s, _| Ok(Box::new(arrangement::Bridge::from_spec(s)?)),
    },
    ControllerEntry {
        name: "inference-service",
        summary: "an inference service: replicas fed by a request-rate series (CSV or a generated daily shape), \
                  M/M/c or M/D/c latency and SLO violations per interval, scaled by the HPA or KEDA",
        options: InferenceService::OPTIONS,
        build: |s, rng| Ok(Box::new(InferenceService::from_spec(s, rng)?)),
    },
];

/// The controllers the engine attaches by itself, before any other: name and what it
/// does (`sim controllers` lists them).
pub const BUILT_IN: &[(&str, &str)] = &[
    (
        "node-events",
        "node failures, repairs and drains given as input (SimConfig::node_events), each at its time; \
         attached when the run has any",
    ),
    (
        "node-lifecycle",
        "Kubernetes' node lifecycle controller: a node down for --node-monitor-grace (50 s; 40 s before v1.32) is \
         tainted node.kubernetes.io/unreachable:NoExecute, evicting its pods after their toleration (300 s unless \
         they declare one); the taint is removed when the node is back; attached when the policy binds nodes and \
         nodes may change (--node-lifecycle auto|kubernetes)",
    ),
    (
        "job-retry",
        "Kubernetes' Job controller: a job killed for running out of GPU memory is re-created after a back-off \
         of 10 s doubling to 6 min, until --oom-retries kills (backoffLimit, default 6); with restart_policy \
         OnFailure the kubelet restarts it in place instead (at once, then 10 s doubling to 5 min) until its \
         restarts reach backoffLimit; always attached",
    ),
];

/// Builds the controller `spec` names; `seed` is the run's master seed and `position`
/// its place among the run's controllers (its random stream is
/// `controller/<name>/<position>`).
pub fn build(spec: &str, seed: u64, position: usize) -> Result<Box<dyn Controller>, SpecError> {
    let parsed: Spec = spec.parse()?;
    let entry = REGISTRY.iter().find(|e| e.name == parsed.name).ok_or_else(|| SpecError::UnknownName {
        kind: "controller",
        name: parsed.name.clone(),
        known: REGISTRY.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
    })?;
    let rng = sim_core::rng::RngStreams::new(seed).stream(&format!("controller/{}/{position}", parsed.name));
    (entry.build)(&parsed, rng)
}
