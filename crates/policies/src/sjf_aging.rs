//! Shortest job first with aging: the worked example of the policy author guide
//! ([`crate::guide`]).

use crate::options::{
    DECIMAL, Estimate, OptionInfo, PASS, QueueOptions, canonical_values, pass_index, permille_string,
};
use crate::spec::{PolicyError, PolicySpec};
use sim_core::job::JobId;
use sim_core::policy::{Decision, PassInfo, PassMode, Policy, SchedView, StartReason, WaitReason};

/// `aging=<non-negative number>` (default 1).
pub const AGING: OptionInfo = OptionInfo {
    key: "aging",
    values: &["1", DECIMAL],
    doc: "seconds of estimated run time forgiven per second of waiting: priority = estimate - aging x wait, \
          lowest first; 0 is plain shortest-job-first (at most 3 decimals)",
};

/// `estimate=requested|actual`.
pub const ESTIMATE: OptionInfo = OptionInfo {
    key: "estimate",
    values: &["requested", "actual"],
    doc: "requested: a job's length is its requested time; actual: its true run time (an oracle: \
          a clairvoyant variant, as CQSim's ideal predictor)",
};

/// `blocking=strict|skip`.
pub const BLOCKING: OptionInfo = OptionInfo {
    key: "blocking",
    values: &["strict", "skip"],
    doc: "strict: stop at the first job in priority order that does not fit (no starvation with aging > 0); \
          skip: pass over it and start any later job that fits (may starve wide jobs)",
};

/// What happens when the job with the best priority does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Blocking {
    /// Stop the pass: nothing passes it.
    #[default]
    Strict,
    /// Keep scanning for jobs that fit.
    Skip,
}

/// Shortest job first with aging.
///
/// Every pass orders the waiting jobs by **priority** = estimate − `aging` × wait, where
/// the estimate is the requested time (or, with `estimate=actual`, the true run time) and
/// the wait is `now − submit`; lower goes first, ties keep queue order. It then starts
/// jobs in that order while they fit in the free processor units, as [`crate::Fcfs`] does
/// with queue order.
///
/// Shortest-job-first minimises the mean wait of a batch of jobs known in advance (the
/// classic exchange argument), but on a live queue it starves long jobs: a steady stream
/// of short ones always goes first. Aging fixes that. Since priority at time `t` is
/// `(estimate + aging × submit) − aging × t`, the order of two waiting jobs never changes
/// while they wait: a job J is overtaken only by jobs with `estimate + aging × submit`
/// below its own, that is only by jobs submitted before `submit_J + estimate_J / aging`.
/// With `blocking=strict` (the default) nothing passes the best job that does not fit, so
/// this **bounded overtaking** means **no starvation**: every job that fits the machine
/// eventually starts, after at most the finitely many jobs allowed to overtake it. With
/// `aging=0` (pure SJF) or with `blocking=skip` (later jobs that fit start even while the
/// best one waits, which can hold a wide job back for as long as narrower ones keep
/// coming) there is no such bound.
///
/// Real systems: Slurm's multifactor priority plugin adds an age factor
/// (`PriorityWeightAge`, growing until `PriorityMaxAge`) to a job size factor
/// (`PriorityWeightJobSize`, with `PriorityFavorSmall`); Maui and Moab weigh a job's
/// queue time (`QUEUETIMEWEIGHT`) against its other factors. Here the two terms are in
/// the same unit, seconds, so `aging` is their exchange rate.
///
/// Times are integers: the priority is computed exactly in `i128` nanoseconds
/// (microsecond times × thousandths of `aging`), never through a float.
///
/// Options:
/// * `pass=per-time|per-event` — when passes run (see `sim policies`).
/// * `aging=<non-negative number>` — seconds of estimate forgiven per second of waiting,
///   default 1, at most three decimals (`1.5`).
/// * `estimate=requested|actual` — requested time, or the true run time (an oracle:
///   `actual` is a declared clairvoyant variant).
/// * `blocking=strict|skip` — stop at the first job that does not fit, or skip it.
///
/// ```
/// let p = policies::build("sjf-aging[aging=1.50,blocking=skip]").unwrap();
/// assert_eq!(p.spec(), "sjf-aging[pass=per-time,aging=1.5,estimate=requested,blocking=skip]");
/// ```
#[derive(Debug, Clone)]
pub struct SjfAging {
    pass: PassMode,
    /// `aging` in thousandths (1.5 → 1500).
    aging_permille: u64,
    estimate: Estimate,
    blocking: Blocking,
}

impl SjfAging {
    /// The options it takes, in canonical order.
    pub const OPTIONS: &'static [OptionInfo] = &[PASS, AGING, ESTIMATE, BLOCKING];

    /// Builds it from a spec.
    pub fn from_spec(spec: &PolicySpec) -> Result<Self, PolicyError> {
        let c = crate::options::check(spec, Self::OPTIONS)?;
        Ok(SjfAging {
            pass: c.pass(),
            aging_permille: c.permille(AGING),
            estimate: [Estimate::Requested, Estimate::Actual][c.index(ESTIMATE)],
            blocking: [Blocking::Strict, Blocking::Skip][c.index(BLOCKING)],
        })
    }

    /// Its order over a placement (`--placement`): `kube[order=sjf-aging,aging=...]`, with
    /// `blocking=strict` as `queue=fcfs` (stop at the first pod that fits nowhere) and
    /// `blocking=skip` as `queue=skip`. Passes are per time there, and the order uses the
    /// requested time: `pass=per-event` and `estimate=actual` have no such form.
    pub fn over_placement(spec: &PolicySpec) -> Result<std::collections::BTreeMap<String, String>, PolicyError> {
        let p = Self::from_spec(spec)?;
        if p.pass != PassMode::PerTime || p.estimate != Estimate::Requested {
            return Err(PolicyError::Malformed {
                spec: crate::options::spec_text(spec),
                what: "pass=per-event and estimate=actual do not apply with --placement/--gang/--topology".into(),
            });
        }
        let queue = match p.blocking {
            Blocking::Strict => "fcfs",
            Blocking::Skip => "skip",
        };
        Ok([
            ("queue".to_string(), queue.to_string()),
            ("order".to_string(), "sjf-aging".to_string()),
            ("aging".to_string(), permille_string(p.aging_permille)),
        ]
        .into())
    }

    /// The priority of waiting job `j` now, in nanoseconds: estimate − aging × wait.
    /// Lower goes first.
    pub fn priority(&self, view: &SchedView<'_>, j: JobId) -> i128 {
        aged_priority(view, j, self.estimate, self.aging_permille)
    }
}

/// The aged priority of waiting job `j` now, in nanoseconds: its estimate − `aging` ×
/// its wait (`aging_permille` thousandths). Lower goes first. Also the order of
/// `kube[order=sjf-aging]`, which `sjf-aging --placement ...` runs.
pub fn aged_priority(view: &SchedView<'_>, j: JobId, estimate: Estimate, aging_permille: u64) -> i128 {
    let estimate = estimate.of(view, j).as_micros();
    let wait = view.now().saturating_since(view.job(j).submit()).as_micros();
    i128::from(estimate) * 1000 - i128::from(aging_permille) * i128::from(wait)
}

impl Policy for SjfAging {
    fn spec(&self) -> String {
        canonical_values(
            "sjf-aging",
            &[
                (PASS.key, PASS.values[pass_index(self.pass)].to_string()),
                (AGING.key, permille_string(self.aging_permille)),
                (ESTIMATE.key, ESTIMATE.values[self.estimate as usize].to_string()),
                (BLOCKING.key, BLOCKING.values[self.blocking as usize].to_string()),
            ],
        )
    }

    fn pass_mode(&self) -> PassMode {
        self.pass
    }

    fn schedule(&mut self, view: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        let mut free = view.free_units();
        if free == 0 && !view.logging() {
            return; // nothing can start, and nothing to explain: skip the sort
        }
        // Stable sort: equal priorities keep queue order.
        let mut order: Vec<(i128, JobId)> = view.queue().iter().map(|&j| (self.priority(view, j), j)).collect();
        order.sort_by_key(|&(p, _)| p);
        let mut explained = false;
        for (_, j) in order {
            let need = view.job(j).units();
            if need > free {
                if view.logging() && !explained {
                    out.push(Decision::Wait { job: j, reason: WaitReason::DoesNotFit { free } });
                    explained = true;
                }
                if self.blocking == Blocking::Strict || free == 0 {
                    break;
                }
                continue;
            }
            free -= need;
            out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Result<String, PolicyError> {
        crate::build(s).map(|p| p.spec())
    }

    #[test]
    fn default_spec() {
        assert_eq!(spec("sjf-aging").unwrap(), "sjf-aging[pass=per-time,aging=1,estimate=requested,blocking=strict]");
    }

    #[test]
    fn spec_round_trips() {
        for s in [
            "sjf-aging",
            "sjf-aging[aging=0]",
            "sjf-aging[aging=0.001]",
            "sjf-aging[aging=2.5,estimate=actual]",
            "sjf-aging[blocking=skip,pass=per-event]",
            "sjf-aging[aging=1000000,estimate=actual,blocking=skip,pass=per-event]",
            "sjf-aging[aging=007.250]",
        ] {
            let canonical = spec(s).unwrap();
            assert_eq!(spec(&canonical).unwrap(), canonical, "{s}");
        }
        assert_eq!(
            spec("sjf-aging[aging=007.250]").unwrap(),
            "sjf-aging[pass=per-time,aging=7.25,estimate=requested,blocking=strict]"
        );
        assert_eq!(
            spec("sjf-aging[blocking=skip,estimate=actual,aging=0,pass=per-event]").unwrap(),
            "sjf-aging[pass=per-event,aging=0,estimate=actual,blocking=skip]"
        );
    }

    #[test]
    fn bad_aging_values_are_refused_naming_the_option() {
        for v in ["-1", "abc", "1e3", "0.0001", "1.", ".5", "+1", "inf", "NaN", "1000000.001", "99999999999999999999"] {
            let e = spec(&format!("sjf-aging[aging={v}]")).unwrap_err();
            assert!(matches!(&e, PolicyError::BadValue { key, .. } if key == "aging"), "{v}: {e:?}");
            let msg = e.to_string();
            assert!(msg.contains("option 'aging'") && msg.contains("a non-negative number"), "{v}: {msg}");
            assert!(msg.contains(&format!("'{v}'")), "{msg}");
        }
    }

    #[test]
    fn bad_enumerated_values_and_unknown_options_are_refused() {
        let e = spec("sjf-aging[estimate=oracle]").unwrap_err().to_string();
        assert!(e.contains("option 'estimate'") && e.contains("requested, actual"), "{e}");
        let e = spec("sjf-aging[blocking=maybe]").unwrap_err().to_string();
        assert!(e.contains("option 'blocking'") && e.contains("strict, skip"), "{e}");
        let e = spec("sjf-aging[backfill_estimate=actual]").unwrap_err().to_string();
        assert!(
            e.contains("unknown option 'backfill_estimate'") && e.contains("pass, aging, estimate, blocking"),
            "{e}"
        );
        // A placeholder is not a value.
        assert!(spec(&format!("sjf-aging[aging={DECIMAL}]")).is_err());
    }

    #[test]
    fn aging_is_read_exactly_in_thousandths() {
        let s: PolicySpec = "sjf-aging[aging=0.125]".parse().unwrap();
        assert_eq!(SjfAging::from_spec(&s).unwrap().aging_permille, 125);
        let s: PolicySpec = "sjf-aging".parse().unwrap();
        assert_eq!(SjfAging::from_spec(&s).unwrap().aging_permille, 1000);
    }
}
