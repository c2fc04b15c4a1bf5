//! Options shared by the queue policies.

use crate::spec::{PolicyError, PolicySpec};
use sim_core::SimDuration;
use sim_core::job::JobId;
use sim_core::policy::{PassMode, SchedView};

/// One option a policy takes, for `sim policies` and error messages.
#[derive(Debug, Clone, Copy)]
pub struct OptionInfo {
    /// Key.
    pub key: &'static str,
    /// Allowed values; the first is the default.
    pub values: &'static [&'static str],
    /// What it does.
    pub doc: &'static str,
}

/// The values of an option that takes a non-negative integer.
pub const NUMBER: &[&str] = &["<integer>"];

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

/// Checks a spec's keys against `allowed` and returns the chosen value index per key.
pub(crate) struct Chosen<'a> {
    spec: &'a PolicySpec,
}

impl<'a> Chosen<'a> {
    pub(crate) fn check(spec: &'a PolicySpec, allowed: &[OptionInfo]) -> Result<Self, PolicyError> {
        for (k, v) in &spec.options {
            let Some(info) = allowed.iter().find(|o| o.key == k) else {
                return Err(PolicyError::UnknownOption {
                    policy: spec.name.clone(),
                    key: k.clone(),
                    known: if allowed.is_empty() {
                        "(none)".into()
                    } else {
                        allowed.iter().map(|o| o.key).collect::<Vec<_>>().join(", ")
                    },
                });
            };
            let number = info.values == NUMBER && v.parse::<u64>().is_ok();
            if !number && !info.values.contains(&v.as_str()) {
                return Err(PolicyError::BadValue {
                    policy: spec.name.clone(),
                    key: k.clone(),
                    value: v.clone(),
                    expected: info.values.join(", "),
                });
            }
        }
        Ok(Chosen { spec })
    }

    /// The value of a numeric option ([`NUMBER`]), if given.
    pub(crate) fn number(&self, opt: OptionInfo) -> Option<u64> {
        self.spec.options.get(opt.key).and_then(|v| v.parse().ok())
    }

    /// Index of the chosen value of `opt` in `opt.values` (0 = default).
    pub(crate) fn index(&self, opt: OptionInfo) -> usize {
        self.spec.options.get(opt.key).and_then(|v| opt.values.iter().position(|x| x == v)).unwrap_or(0)
    }

    pub(crate) fn pass(&self) -> PassMode {
        [PassMode::PerTime, PassMode::PerEvent][self.index(PASS)]
    }
    pub(crate) fn estimate(&self) -> Estimate {
        [Estimate::Requested, Estimate::Actual][self.index(BACKFILL_ESTIMATE)]
    }
    pub(crate) fn reservation(&self) -> Reservation {
        [Reservation::Count, Reservation::Nodes][self.index(RESERVATION)]
    }
}

/// Canonical text of a spec: every option of the policy, in declaration order.
pub(crate) fn canonical(name: &str, opts: &[(OptionInfo, usize)]) -> String {
    if opts.is_empty() {
        return name.to_string();
    }
    let body: Vec<String> = opts.iter().map(|(o, i)| format!("{}={}", o.key, o.values[*i])).collect();
    format!("{name}[{}]", body.join(","))
}

pub(crate) fn pass_index(p: PassMode) -> usize {
    match p {
        PassMode::PerTime => 0,
        PassMode::PerEvent => 1,
    }
}
