//! Options shared by the queue policies.

use crate::spec::{PolicyError, PolicySpec};
use sim_core::SimDuration;
use sim_core::job::JobId;
use sim_core::policy::{PassMode, SchedView};
pub use sim_core::spec::{
    Chosen, DECIMAL, DECIMAL_MAX, NUMBER, OptionInfo, canonical, canonical_values, parse_permille, permille_string,
};

/// `pass=per-time|per-event`.
pub const PASS: OptionInfo = OptionInfo {
    key: "pass",
    values: &["per-time", "per-event"],
    doc: "per-time: at each distinct time apply all ends, then all arrivals, then one pass; \
          per-event: one pass after every single event (ends first, equal-time ends in start order)",
};

/// `backfill_estimate=requested|actual`.
pub const BACKFILL_ESTIMATE: OptionInfo = OptionInfo {
    key: "backfill_estimate",
    values: &["requested", "actual"],
    doc: "requested: jobs are planned with their requested time; actual: with their true run time \
          (an ideal predictor, as CQSim offers)",
};

/// `reservation=count|nodes`.
pub const RESERVATION: OptionInfo = OptionInfo {
    key: "reservation",
    values: &["count", "nodes"],
    doc: "count: processors are interchangeable; nodes: every placement and reservation holds \
          specific nodes, the lowest-indexed free for the whole interval (Slurm, Batsim's batsched)",
};

/// `replan=revisit|rebuild` (conservative only).
pub const REPLAN: OptionInfo = OptionInfo {
    key: "replan",
    values: &["revisit", "rebuild"],
    doc: "revisit: when resources are released, each waiting job in queue order is moved to its \
          earliest fit while later ones keep theirs (Batsim's batsched); rebuild: every pass \
          rebuilds all reservations from scratch in queue order (closer to Slurm's backfill cycle)",
};

/// How jobs' lengths are estimated when planning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Estimate {
    /// The requested time (user estimate).
    #[default]
    Requested,
    /// The true run time (clairvoyant).
    Actual,
}

impl Estimate {
    /// The estimate of job `j`.
    pub fn of(self, view: &SchedView<'_>, j: JobId) -> SimDuration {
        match self {
            Estimate::Requested => view.requested(j),
            Estimate::Actual => view.oracle_runtime(j),
        }
    }
}

/// Whether reservations count units or hold specific ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reservation {
    /// Units are interchangeable.
    #[default]
    Count,
    /// Specific units, lowest-indexed first.
    Nodes,
}

/// The queue policies' own options, read from a checked spec.
pub(crate) trait QueueOptions {
    fn pass(&self) -> PassMode;
    fn estimate(&self) -> Estimate;
    fn reservation(&self) -> Reservation;
}

impl QueueOptions for Chosen<'_> {
    fn pass(&self) -> PassMode {
        [PassMode::PerTime, PassMode::PerEvent][self.index(PASS)]
    }
    fn estimate(&self) -> Estimate {
        [Estimate::Requested, Estimate::Actual][self.index(BACKFILL_ESTIMATE)]
    }
    fn reservation(&self) -> Reservation {
        [Reservation::Count, Reservation::Nodes][self.index(RESERVATION)]
    }
}

/// Checks a policy spec against the options it takes.
pub(crate) fn check<'a>(spec: &'a crate::PolicySpec, allowed: &[OptionInfo]) -> Result<Chosen<'a>, crate::PolicyError> {
    Chosen::check(spec, allowed, "policy")
}

pub(crate) fn pass_index(p: PassMode) -> usize {
    match p {
        PassMode::PerTime => 0,
        PassMode::PerEvent => 1,
    }
}

/// The `kube` options of a processor-unit queue discipline (`fcfs`, `easy`,
/// `conservative`) over a placement: its queue, in arrival order. Its own options
/// (`pass`, `backfill_estimate`, ...) are about processor units and do not apply.
pub fn queue_over_placement(
    spec: &PolicySpec,
    queue: &str,
) -> Result<std::collections::BTreeMap<String, String>, PolicyError> {
    if !spec.options.is_empty() {
        return Err(PolicyError::Malformed {
            spec: spec_text(spec),
            what: "options of the processor-unit policies do not apply with --placement/--gang/--topology".into(),
        });
    }
    Ok([("queue".to_string(), queue.to_string())].into())
}

/// A spec written back as `name[key=value,...]` (options in key order), for errors.
pub fn spec_text(spec: &PolicySpec) -> String {
    let opts: Vec<(&str, String)> = spec.options.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    canonical_values(&spec.name, &opts)
}
