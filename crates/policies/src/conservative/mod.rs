//! Conservative backfilling (Mu'alem & Feitelson, IEEE TPDS 2001): every waiting job
//! holds a reservation, and nobody may delay anybody's reservation.

use crate::options::{
    BACKFILL_ESTIMATE, Estimate, OptionInfo, PASS, QueueOptions, REPLAN, RESERVATION, Reservation, canonical,
    pass_index,
};
use crate::profile::{NoGaps, StepProfile, overrun_clamp, running_releases};
use crate::spec::{PolicyError, PolicySpec};
use crate::unit_profile::UnitProfile;
use sim_core::SimTime;
use sim_core::job::JobId;
use sim_core::policy::{Decision, PassInfo, PassMode, Policy, SchedView, StartReason, WaitReason};
use sim_core::units::UnitSet;

mod carried;
mod raise_log;
mod waiting;

use carried::Carried;
use raise_log::Since;
use waiting::Waiting;

/// How reservations are replanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replan {
    /// When resources are released, revisit waiting jobs in queue order: each one's
    /// reservation is taken out and the job put back at its earliest fit, while jobs not
    /// yet revisited keep theirs (Batsim's batsched `conservative_bf`).
    Revisit,
    /// At every pass, rebuild all reservations from scratch in queue order (closer to
    /// Slurm's backfill cycle).
    Rebuild,
}

/// Conservative backfilling.
///
/// Every waiting job holds a reservation in an availability profile built from running
/// jobs' expected ends (start + estimate) and the other reservations. A newly queued job
/// gets the earliest reservation where it fits without touching existing ones; a job whose
/// reservation starts now starts now (once a job due to end now has ended, with
/// `pass=per-event`). A running job that overran its estimate is expected to end one
/// microsecond from now.
///
/// Options:
/// * `pass=per-time|per-event`.
/// * `backfill_estimate=requested|actual` — reservation lengths and running jobs'
///   expected ends use the requested time, or the true run time (ideal predictor).
/// * `reservation=count|nodes` — with `nodes` every reservation holds the lowest-indexed
///   units free for its whole interval, and the job starts on them.
/// * `replan=revisit|rebuild` — see [`Replan`]. With `revisit`, a stale plan (a
///   reservation whose start has passed, or reservations that no longer fit because a
///   running job overran its estimate) is rebuilt from scratch instead.
#[derive(Debug, Clone)]
pub struct ConservativeBackfill {
    pass: PassMode,
    estimate: Estimate,
    reservation: Reservation,
    replan: Replan,
    /// The waiting jobs in queue order, with their reservations.
    waiting: Waiting,
    /// The profile carried between passes (count mode, requested times, revisit).
    carried: Carried,
}

enum Prof {
    Count(StepProfile),
    Nodes(UnitProfile),
}

impl Prof {
    fn earliest(&self, units: u64, len: sim_core::SimDuration) -> Option<(SimTime, UnitSet)> {
        match self {
            Prof::Count(p) => p.earliest_fit(units, len).map(|t| (t, UnitSet::new())),
            Prof::Nodes(p) => p.earliest(units, len),
        }
    }
    fn feasible(&self) -> bool {
        match self {
            Prof::Count(p) => p.feasible(),
            Prof::Nodes(p) => p.feasible(),
        }
    }
    fn origin(&self) -> SimTime {
        match self {
            Prof::Count(p) => p.origin(),
            Prof::Nodes(p) => p.counts().origin(),
        }
    }
    /// Holds a reservation; a stale one (started in the past) only from now on.
    fn reserve(&mut self, j: JobId, from: SimTime, len: sim_core::SimDuration, units: u64, set: &UnitSet) {
        let (from, len) = self.clip(from, len);
        match self {
            Prof::Count(p) => p.reserve(from, from + len, units),
            Prof::Nodes(p) => p.reserve(j, from, from + len, set),
        }
    }
    fn unreserve(&mut self, j: JobId, from: SimTime, len: sim_core::SimDuration, units: u64, set: &UnitSet) {
        let (from, len) = self.clip(from, len);
        match self {
            Prof::Count(p) => p.unreserve(from, from + len, units),
            Prof::Nodes(p) => p.unreserve(j, from, from + len, set),
        }
    }
}

impl Prof {
    fn clip(&self, from: SimTime, len: sim_core::SimDuration) -> (SimTime, sim_core::SimDuration) {
        Prof::clip_to(self.origin(), from, len)
    }
    /// The part of `[from, from + len)` from `origin` on.
    fn clip_to(origin: SimTime, from: SimTime, len: sim_core::SimDuration) -> (SimTime, sim_core::SimDuration) {
        if from >= origin { (from, len) } else { (origin, (from + len).saturating_since(origin)) }
    }
}

impl ConservativeBackfill {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[PASS, BACKFILL_ESTIMATE, RESERVATION, REPLAN];

    /// Builds it from a spec.
    pub fn from_spec(spec: &PolicySpec) -> Result<Self, PolicyError> {
        let c = crate::options::check(spec, Self::OPTIONS)?;
        Ok(ConservativeBackfill {
            pass: c.pass(),
            estimate: c.estimate(),
            reservation: c.reservation(),
            replan: [Replan::Revisit, Replan::Rebuild][c.index(REPLAN)],
            waiting: Waiting::default(),
            carried: Carried::default(),
        })
    }

    /// Whether the profile is carried from pass to pass (see [`carried`]).
    fn carries_plan(&self) -> bool {
        self.reservation == Reservation::Count && self.estimate == Estimate::Requested && self.replan == Replan::Revisit
    }
}

impl Policy for ConservativeBackfill {
    fn spec(&self) -> String {
        canonical(
            "conservative",
            &[
                (PASS, pass_index(self.pass)),
                (BACKFILL_ESTIMATE, self.estimate as usize),
                (RESERVATION, self.reservation as usize),
                (REPLAN, self.replan as usize),
            ],
        )
    }

    fn pass_mode(&self) -> PassMode {
        self.pass
    }
    fn places_units(&self) -> bool {
        self.reservation == Reservation::Nodes
    }

    fn schedule(&mut self, view: &SchedView<'_>, info: &PassInfo, out: &mut Vec<Decision>) {
        // Jobs that entered the queue come without a reservation (a requeued job loses
        // any it held, and the carried plan, which still holds it, is dropped).
        let intact = self.waiting.sync(view, info, self.estimate);
        let carried = if self.carries_plan() { self.carried.bring(view, info, self.estimate, intact) } else { None };
        // Whether some reservation starts now (else no job starts), and whether some
        // start has passed.
        let (due, past) = self.waiting.starts_at(view.now());
        let (mut prof, stale) = self.profile(view, carried, past);
        // A stale plan is rebuilt from scratch: keeping stale reservations in place while
        // revisiting would let them block jobs that could start now.
        let mut due = if self.replan == Replan::Rebuild || stale {
            self.lift_all(&mut prof);
            false
        } else {
            due | (info.resources_released() && self.revisit(&mut prof, view.now()))
        };
        for s in self.waiting.slots_mut() {
            if s.start.is_none()
                && let Some((t, set)) = prof.earliest(s.units, s.len)
            {
                prof.reserve(s.job, t, s.len, s.units, &set);
                (s.start, s.set, s.seen) = (Some(t), set, self.carried.raises.mark(0));
                due |= t == view.now();
            }
        }
        if due || view.logging() {
            self.start_due(view, out);
        }
        if let (true, Prof::Count(p)) = (self.carries_plan(), prof) {
            self.carried.keep(p, view);
        }
    }
}

impl ConservativeBackfill {
    /// The pass's availability profile (running jobs' expected ends and every
    /// reservation: the carried one if there is one), and whether the plan is stale: a
    /// reservation whose start has passed (`stale` on entry), or reservations that no
    /// longer fit because a running job overran its estimate past them.
    fn profile(&mut self, view: &SchedView<'_>, carried: Option<StepProfile>, stale: bool) -> (Prof, bool) {
        let (now, est) = (view.now(), self.estimate);
        let end_of = |r: &sim_core::policy::RunningJob| overrun_clamp(r.start + est.of(view, r.job), now, false);
        if stale && carried.is_some() {
            self.carried.raises.forget();
        }
        let prof = match (self.reservation, carried.filter(|_| !stale)) {
            (Reservation::Count, Some(p)) => {
                debug_assert_eq!(p.steps(), self.fresh_counts(view, end_of).steps(), "carried plan out of step");
                Prof::Count(p)
            }
            (Reservation::Count, None) => Prof::Count(self.fresh_counts(view, end_of)),
            (Reservation::Nodes, _) => {
                let mut p = Prof::Nodes(UnitProfile::of_running(view, end_of));
                for s in self.waiting.slots() {
                    if let Some(t) = s.start {
                        p.reserve(s.job, t, s.len, s.units, &s.set);
                    }
                }
                p
            }
        };
        let stale = stale || !prof.feasible();
        (prof, stale)
    }

    /// The count-mode profile built afresh: running jobs' expected ends and the
    /// reservations (a stale one only from now on).
    fn fresh_counts(
        &self,
        view: &SchedView<'_>,
        end_of: impl Fn(&sim_core::policy::RunningJob) -> SimTime,
    ) -> StepProfile {
        let now = view.now();
        let mut deltas = running_releases(view, end_of);
        for s in self.waiting.slots() {
            if let Some(t) = s.start {
                let (from, len) = Prof::clip_to(now, t, s.len);
                if len.as_micros() > 0 {
                    deltas.push((from, -(s.units as i64)));
                    deltas.push((from + len, s.units as i64));
                }
            }
        }
        StepProfile::from_deltas(now, view.free_units() as i64, deltas)
    }

    /// Takes every reservation out of the plan (a rebuild).
    fn lift_all(&mut self, prof: &mut Prof) {
        for s in self.waiting.slots_mut() {
            if let Some(t) = s.start.take() {
                prof.unreserve(s.job, t, s.len, s.units, &s.set);
                s.set = UnitSet::new();
            }
        }
    }

    /// Resources were released: each waiting job in queue order is moved to its earliest
    /// fit, while the jobs not revisited yet keep theirs (Batsim's `conservative_bf`).
    /// Returns whether a job moved to `now`.
    fn revisit(&mut self, prof: &mut Prof, now: SimTime) -> bool {
        let mut due = false;
        let carried = self.carries_plan();
        let raises = &mut self.carried.raises;
        let mut no_gaps = NoGaps::default();
        for s in self.waiting.slots_mut() {
            let Some(start) = s.start else { continue };
            let placed = match &*prof {
                // Most jobs cannot move: look before lifting the reservation, and in a
                // carried plan only into room made since the job last looked.
                Prof::Count(p) => {
                    let since = if carried { raises.since(s.seen) } else { Since::UNKNOWN };
                    // Still short just before its reservation: no room made there since it
                    // last looked, or less than it lacked then.
                    let (moved, lacking) = if since.latest < start {
                        (p.earlier_gap(s.units, s.len, start, since.latest, &mut no_gaps), s.seen.lacking())
                    } else if since.lacking > 0 {
                        (p.earlier_gap(s.units, s.len, start, since.latest, &mut no_gaps), since.lacking)
                    } else {
                        p.look_earlier(s.units, s.len, start, &mut no_gaps)
                    };
                    let Some(t) = moved else {
                        s.seen = raises.mark(lacking);
                        continue;
                    };
                    prof.unreserve(s.job, start, s.len, s.units, &s.set);
                    no_gaps.clear();
                    raises.raised(start + s.len, s.units as i64);
                    Some((t, UnitSet::new()))
                }
                Prof::Nodes(_) => {
                    prof.unreserve(s.job, start, s.len, s.units, &s.set);
                    prof.earliest(s.units, s.len)
                }
            };
            if let Some((t, set)) = &placed {
                prof.reserve(s.job, *t, s.len, s.units, set);
                due |= *t == now;
            }
            (s.start, s.set) = placed.map_or((None, UnitSet::new()), |(t, set)| (Some(t), set));
            s.seen = raises.mark(0);
        }
        due
    }

    /// Starts every job reserved at now that fits now. With pass=per-event a job due to
    /// end at this instant may not have ended yet; whoever is reserved on its units keeps
    /// the reservation and starts in the pass after that end.
    fn start_due(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let (now, logging) = (view.now(), view.logging());
        let nodes = self.reservation == Reservation::Nodes;
        let carries = self.carries_plan();
        let mut free = view.free_units();
        let mut pool = if nodes { Some(view.free_pool().clone()) } else { None };
        let carried = &mut self.carried;
        self.waiting.retain(|s| {
            match s.start {
                Some(t) if t == now => {
                    let fits = match &mut pool {
                        Some(p) => p.take(&s.set),
                        None => s.units <= free,
                    };
                    if fits {
                        free -= s.units;
                        if carries {
                            carried.started(s.job, now + s.len, s.units);
                        }
                        let units = nodes.then(|| s.set.clone());
                        out.push(Decision::Start { job: s.job, units, reason: StartReason::ReservationNow });
                        return false;
                    }
                    if logging {
                        out.push(Decision::Wait { job: s.job, reason: WaitReason::Reserved { at: t } });
                    }
                }
                Some(t) if logging => out.push(Decision::Wait { job: s.job, reason: WaitReason::Reserved { at: t } }),
                _ => {}
            }
            true
        });
    }
}
