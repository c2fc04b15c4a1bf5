//! Conservative backfilling (Mu'alem & Feitelson, IEEE TPDS 2001): every waiting job
//! holds a reservation, and nobody may delay anybody's reservation.

use crate::options::{
    BACKFILL_ESTIMATE, Estimate, OptionInfo, PASS, QueueOptions, REPLAN, RESERVATION, Reservation, canonical,
    pass_index,
};
use crate::profile::{StepProfile, merge_sorted, overrun_clamp, requested_releases, running_releases};
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
    /// In count mode, every reservation as changes of free units (−units at its start,
    /// +units at its end), summed by time: kept across passes so that the pass's profile
    /// is a merge of two sorted lists rather than a sort.
    changes: BTreeMap<SimTime, i64>,
    /// Whether [`ConservativeBackfill::changes`] is kept: not during a rebuild (every
    /// reservation is lifted and made again; the list is made afresh when next needed).
    changes_kept: bool,
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
            changes: BTreeMap::new(),
            changes_kept: false,
        })
    }

    /// Records (`sign` −1) or forgets (`sign` +1) a count-mode reservation in
    /// [`ConservativeBackfill::changes`].
    fn note(&mut self, s: SimTime, len: sim_core::SimDuration, units: u64, sign: i64) {
        if !self.changes_kept || len.as_micros() == 0 {
            return;
        }
        for (t, d) in [(s, sign * units as i64), (s + len, -sign * units as i64)] {
            let e = self.changes.entry(t).or_insert(0);
            *e += d;
            if *e == 0 {
                self.changes.remove(&t);
            }
        }
    }

    /// Sets job `j`'s reservation, keeping [`ConservativeBackfill::changes`] in step.
    fn set_slot(&mut self, j: JobId, new: Option<(SimTime, UnitSet)>, len: sim_core::SimDuration, units: u64) {
        if let Some((s, _)) = self.slot(j).as_ref().map(|x| (x.0, ())) {
            self.note(s, len, units, 1);
        }
        if let Some((s, _)) = &new {
            self.note(*s, len, units, -1);
        }
        *self.slot(j) = new;
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
        // Requeued jobs lose any reservation they might still carry.
        for &j in &info.queued {
            let (len, units) = (self.estimate.of(view, j), view.job(j).units());
            self.set_slot(j, None, len, units);
        }
        let (mut prof, stale) = self.profile(view);
        // A stale plan is rebuilt from scratch: keeping stale reservations in place while
        // revisiting would let them block jobs that could start now.
        if self.replan == Replan::Rebuild || stale {
            self.changes_kept = false;
            self.changes.clear();
            self.lift_all(view, &mut prof);
        } else if info.resources_released() {
            self.revisit(view, &mut prof);
        }
        for &j in view.queue() {
            if self.slot(j).is_none() {
                let (len, units) = (self.estimate.of(view, j), view.job(j).units());
                if let Some(placed) = prof.earliest(units, len) {
                    prof.reserve(j, placed.0, len, units, &placed.1);
                    self.set_slot(j, Some(placed), len, units);
                }
            }
        }
        self.start_due(view, out);
    }
}

impl ConservativeBackfill {
    /// The pass's availability profile (running jobs' expected ends and every
    /// reservation), and whether the plan is stale: a reservation whose start has
    /// passed, or reservations that no longer fit because a running job overran its
    /// estimate past them.
    fn profile(&mut self, view: &SchedView<'_>) -> (Prof, bool) {
        let (now, est, queue) = (view.now(), self.estimate, view.queue());
        let end_of = |r: &sim_core::policy::RunningJob| overrun_clamp(r.start + est.of(view, r.job), now, false);
        let reserved = &self.reserved;
        let start_of = |j: &JobId| reserved.get(j.idx()).and_then(Option::as_ref).map(|r| r.0);
        let stale = queue.iter().any(|j| start_of(j).is_some_and(|s| s < now));
        let prof = match self.reservation {
            Reservation::Count if est == Estimate::Requested && self.replan == Replan::Revisit && !stale => {
                if !self.changes_kept {
                    self.changes = self.changes_of(view);
                    self.changes_kept = true;
                }
                debug_assert_eq!(self.changes, self.changes_of(view), "reservation changes out of step");
                // Two sorted lists merged: the running jobs' releases and the reservations.
                let deltas = merge_sorted(&requested_releases(view), self.changes.iter().map(|(&t, &d)| (t, d)));
                Prof::Count(StepProfile::from_sorted_deltas(now, view.free_units() as i64, deltas.len(), deltas))
            }
            Reservation::Count => {
                let mut deltas = running_releases(view, end_of);
                for &j in queue {
                    if let Some(s) = start_of(&j) {
                        let (from, len) = Prof::clip_to(now, s, est.of(view, j));
                        let u = view.job(j).units() as i64;
                        if len.as_micros() > 0 {
                            deltas.push((from, -u));
                            deltas.push((from + len, u));
                        }
                    }
                }
                Prof::Count(StepProfile::from_deltas(now, view.free_units() as i64, deltas))
            }
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

    /// The reservation changes of the queue's jobs, computed afresh (to check
    /// [`ConservativeBackfill::changes`] in debug builds).
    fn changes_of(&self, view: &SchedView<'_>) -> BTreeMap<SimTime, i64> {
        let mut m: BTreeMap<SimTime, i64> = BTreeMap::new();
        for &j in view.queue() {
            if let Some((s, _)) = self.reserved.get(j.idx()).and_then(Option::as_ref) {
                let (len, u) = (self.estimate.of(view, j), view.job(j).units() as i64);
                if len.as_micros() > 0 {
                    *m.entry(*s).or_default() -= u;
                    *m.entry(*s + len).or_default() += u;
                }
            }
        }
        m.retain(|_, d| *d != 0);
        m
    }

    /// Takes every reservation out of the plan (a rebuild).
    fn lift_all(&mut self, view: &SchedView<'_>, prof: &mut Prof) {
        for &j in view.queue() {
            let (len, units) = (self.estimate.of(view, j), view.job(j).units());
            if let Some((s, set)) = self.slot(j).clone() {
                prof.unreserve(j, s, len, units, &set);
                self.set_slot(j, None, len, units);
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
            self.set_slot(j, placed, len, units);
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
                        free -= view.job(j).units();
                        let (len, units) = (self.estimate.of(view, j), view.job(j).units());
                        self.set_slot(j, None, len, units);
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
