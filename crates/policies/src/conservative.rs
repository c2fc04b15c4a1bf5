//! Conservative backfilling (Mu'alem & Feitelson, IEEE TPDS 2001): every waiting job
//! holds a reservation, and nobody may delay anybody's reservation.

use crate::options::{
    BACKFILL_ESTIMATE, Estimate, OptionInfo, PASS, QueueOptions, REPLAN, RESERVATION, Reservation, canonical,
    pass_index,
};
use crate::profile::{StepProfile, overrun_clamp, running_releases};
use crate::spec::{PolicyError, PolicySpec};
use crate::unit_profile::UnitProfile;
use sim_core::SimTime;
use sim_core::job::JobId;
use sim_core::policy::{Decision, PassInfo, PassMode, Policy, SchedView, StartReason, WaitReason};
use sim_core::units::UnitSet;
use std::collections::BTreeMap;

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
    /// Reserved start (and units in node mode) of each waiting job, by job index.
    reserved: Vec<Option<(SimTime, UnitSet)>>,
    /// How many waiting jobs hold a reservation in [`ConservativeBackfill::plan`].
    held: usize,
    /// In count mode with requested times and `replan=revisit`, the previous pass's
    /// profile, carried to this pass by the changes since (time moved on, jobs that ended
    /// before their requested end) instead of being built again from every running job
    /// and reservation; with the units it plans to free a microsecond after its origin
    /// because their jobs overran. Dropped whenever a change is not of that kind.
    plan: Option<(StepProfile, i64)>,
    /// Requested end and units of each job this policy started and that still runs.
    running_ends: BTreeMap<JobId, (SimTime, u64)>,
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
            Prof::Count(p) => p.steps()[0].0,
            Prof::Nodes(p) => p.counts().steps()[0].0,
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
            reserved: Vec::new(),
            held: 0,
            plan: None,
            running_ends: BTreeMap::new(),
        })
    }

    /// Sets job `j`'s reservation, keeping [`ConservativeBackfill::held`] in step.
    fn set_slot(&mut self, j: JobId, new: Option<(SimTime, UnitSet)>) {
        let old = self.slot(j).is_some();
        self.held = self.held + new.is_some() as usize - old as usize;
        *self.slot(j) = new;
    }

    /// Whether the profile is carried from pass to pass (see [`ConservativeBackfill::plan`]).
    fn carries_plan(&self) -> bool {
        self.reservation == Reservation::Count && self.estimate == Estimate::Requested && self.replan == Replan::Revisit
    }

    fn slot(&mut self, j: JobId) -> &mut Option<(SimTime, UnitSet)> {
        if self.reserved.len() <= j.idx() {
            self.reserved.resize(j.idx() + 1, None);
        }
        &mut self.reserved[j.idx()]
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
        let freed = if self.carries_plan() { self.take_ended(view, info) } else { None };
        // Requeued jobs lose any reservation they might still carry (and the carried plan,
        // which still holds it).
        for &j in &info.queued {
            if self.slot(j).is_some() {
                self.plan = None;
            }
            self.set_slot(j, None);
        }
        let (mut prof, stale) = self.profile(view, info, freed);
        // A stale plan is rebuilt from scratch: keeping stale reservations in place while
        // revisiting would let them block jobs that could start now.
        if self.replan == Replan::Rebuild || stale {
            self.lift_all(view, &mut prof);
        } else if info.resources_released() {
            self.revisit(view, &mut prof);
        }
        for &j in view.queue() {
            if self.slot(j).is_none() {
                let (len, units) = (self.estimate.of(view, j), view.job(j).units());
                if let Some(placed) = prof.earliest(units, len) {
                    prof.reserve(j, placed.0, len, units, &placed.1);
                    self.set_slot(j, Some(placed));
                }
            }
        }
        self.start_due(view, out);
        if let (true, Prof::Count(p)) = (self.carries_plan(), prof) {
            self.plan = Some((p, overdue(view).0));
        }
    }
}

impl ConservativeBackfill {
    /// The pass's availability profile (running jobs' expected ends and every
    /// reservation), and whether the plan is stale: a reservation whose start has
    /// passed, or reservations that no longer fit because a running job overran its
    /// estimate past them.
    fn profile(&mut self, view: &SchedView<'_>, info: &PassInfo, freed: Option<Vec<(SimTime, u64)>>) -> (Prof, bool) {
        let (now, est, queue) = (view.now(), self.estimate, view.queue());
        let end_of = |r: &sim_core::policy::RunningJob| overrun_clamp(r.start + est.of(view, r.job), now, false);
        let reserved = &self.reserved;
        let start_of = |j: &JobId| reserved.get(j.idx()).and_then(Option::as_ref).map(|r| r.0);
        let (mut stale, mut holding) = (false, 0);
        for s in queue.iter().filter_map(start_of) {
            stale |= s < now;
            holding += 1;
        }
        let carried = self.plan.take().filter(|_| !stale && holding == self.held);
        let carried = carried.and_then(|p| Self::carry(p, view, info, freed?));
        self.held = holding;
        let prof = match self.reservation {
            Reservation::Count if carried.is_some() => {
                let p = carried.expect("checked");
                debug_assert_eq!(p.steps(), self.fresh_counts(view, end_of).steps(), "carried plan out of step");
                Prof::Count(p)
            }
            Reservation::Count => Prof::Count(self.fresh_counts(view, end_of)),
            Reservation::Nodes => {
                let mut p = Prof::Nodes(UnitProfile::of_running(view, end_of));
                for &j in queue {
                    if let Some((s, set)) = self.slot(j).clone() {
                        p.reserve(j, s, est.of(view, j), view.job(j).units(), &set);
                    }
                }
                p
            }
        };
        let stale = stale || !prof.feasible();
        (prof, stale)
    }

    /// The count-mode profile built afresh: running jobs' expected ends and the queue's
    /// reservations (a stale one only from now on).
    fn fresh_counts(
        &self,
        view: &SchedView<'_>,
        end_of: impl Fn(&sim_core::policy::RunningJob) -> SimTime,
    ) -> StepProfile {
        let now = view.now();
        let mut deltas = running_releases(view, end_of);
        for &j in view.queue() {
            if let Some((s, _)) = self.reserved.get(j.idx()).and_then(Option::as_ref) {
                let (from, len) = Prof::clip_to(now, *s, self.estimate.of(view, j));
                let u = view.job(j).units() as i64;
                if len.as_micros() > 0 {
                    deltas.push((from, -u));
                    deltas.push((from + len, u));
                }
            }
        }
        StepProfile::from_deltas(now, view.free_units() as i64, deltas)
    }

    /// The requested ends and units of the jobs this policy started that have ended
    /// since the previous pass, taken out of [`ConservativeBackfill::running_ends`];
    /// `None` if some are not known (the map is then made again from the running jobs).
    fn take_ended(&mut self, view: &SchedView<'_>, info: &PassInfo) -> Option<Vec<(SimTime, u64)>> {
        let mut known = true;
        let mut ended: Vec<(SimTime, u64)> = Vec::with_capacity(info.released.len());
        for j in &info.released {
            match self.running_ends.remove(j) {
                Some(e) => ended.push(e),
                None => known = false,
            }
        }
        if self.running_ends.len() != view.running_count() {
            // The engine calls no policy while the queue is empty: jobs that ended then
            // are still in the map.
            let gone: Vec<JobId> =
                self.running_ends.keys().filter(|j| view.running_job(**j).is_none()).copied().collect();
            ended.extend(gone.iter().filter_map(|j| self.running_ends.remove(j)));
            if self.running_ends.len() != view.running_count() {
                known = false;
                let est = self.estimate;
                self.running_ends = view.running().map(|r| (r.job, (r.start + est.of(view, r.job), r.count))).collect();
            }
        }
        known.then_some(ended)
    }

    /// The previous pass's plan brought to now, as a fresh build would make it: time
    /// moved on, each job that ended before its requested end frees its units from now to
    /// then, and running jobs past their requested end are planned to end a microsecond
    /// from now. `None` (build it afresh) when anything else changed: capacity, or jobs
    /// this policy did not start.
    fn carry(
        (mut plan, mut overran): (StepProfile, i64),
        view: &SchedView<'_>,
        info: &PassInfo,
        ended: Vec<(SimTime, u64)>,
    ) -> Option<StepProfile> {
        let now = view.now();
        if info.capacity_changed || plan.origin() > now {
            return None;
        }
        let later = plan.origin() < now;
        if later {
            // What was planned before now is past, the overrun jobs' ends included.
            plan.advance(now);
            overran = 0;
        }
        for (end, units) in ended {
            let units = units as i64;
            if end > now {
                plan.add(now, end, units);
            } else if end < now && !later {
                // It overran and was planned to end a microsecond from now.
                plan.add(now, now.next_tick(), units);
                overran -= units;
            }
        }
        let (over, due) = overdue(view);
        plan.add(now, now.next_tick(), overran - over);
        (plan.steps()[0].1 == view.free_units() as i64 + due).then_some(plan)
    }

    /// Takes every reservation out of the plan (a rebuild).
    fn lift_all(&mut self, view: &SchedView<'_>, prof: &mut Prof) {
        for &j in view.queue() {
            let (len, units) = (self.estimate.of(view, j), view.job(j).units());
            if let Some((s, set)) = self.slot(j).clone() {
                prof.unreserve(j, s, len, units, &set);
                self.set_slot(j, None);
            }
        }
    }

    /// Resources were released: each waiting job in queue order is moved to its earliest
    /// fit, while the jobs not revisited yet keep theirs (Batsim's `conservative_bf`).
    fn revisit(&mut self, view: &SchedView<'_>, prof: &mut Prof) {
        for &j in view.queue() {
            let Some((s, set)) = self.slot(j).clone() else { continue };
            let (len, units) = (self.estimate.of(view, j), view.job(j).units());
            let placed = match &*prof {
                // Most jobs cannot move: look before lifting the reservation.
                Prof::Count(p) => match p.earlier_start(units, len, s) {
                    None => continue,
                    Some(t) => {
                        prof.unreserve(j, s, len, units, &set);
                        Some((t, UnitSet::new()))
                    }
                },
                Prof::Nodes(_) => {
                    prof.unreserve(j, s, len, units, &set);
                    prof.earliest(units, len)
                }
            };
            if let Some(placed) = &placed {
                prof.reserve(j, placed.0, len, units, &placed.1);
            }
            self.set_slot(j, placed);
        }
    }

    /// Starts every job reserved at now that fits now. With pass=per-event a job due to
    /// end at this instant may not have ended yet; whoever is reserved on its units keeps
    /// the reservation and starts in the pass after that end.
    fn start_due(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let now = view.now();
        let nodes = self.reservation == Reservation::Nodes;
        let mut free = view.free_units();
        let mut pool = if nodes { Some(view.free_pool().clone()) } else { None };
        for &j in view.queue() {
            match self.slot(j).clone() {
                Some((s, set)) if s == now => {
                    let fits = match &mut pool {
                        Some(p) => p.take(&set),
                        None => view.job(j).units() <= free,
                    };
                    if fits {
                        let units = view.job(j).units();
                        free -= units;
                        self.set_slot(j, None);
                        if self.carries_plan() {
                            self.running_ends.insert(j, (now + self.estimate.of(view, j), units));
                        }
                        out.push(Decision::Start {
                            job: j,
                            units: nodes.then_some(set),
                            reason: StartReason::ReservationNow,
                        });
                    } else if view.logging() {
                        out.push(Decision::Wait { job: j, reason: WaitReason::Reserved { at: s } });
                    }
                }
                Some((s, _)) if view.logging() => {
                    out.push(Decision::Wait { job: j, reason: WaitReason::Reserved { at: s } })
                }
                _ => {}
            }
        }
    }
}

/// Units of running jobs past their requested end, and of those due to end exactly now.
fn overdue(view: &SchedView<'_>) -> (i64, i64) {
    let now = view.now();
    let (mut over, mut due) = (0, 0);
    for (end, units) in view.requested_ends().take_while(|e| e.0 <= now) {
        if end < now { over += units as i64 } else { due += units as i64 }
    }
    (over, due)
}
