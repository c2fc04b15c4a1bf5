//! EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", 1995; the default of
//! Slurm's sched/backfill is its conservative cousin; Maui and the SP2 schedulers ran EASY).

use crate::options::{
    BACKFILL_ESTIMATE, Estimate, OptionInfo, PASS, QueueOptions, RESERVATION, Reservation, canonical, pass_index,
};
use crate::profile::overrun_clamp;
use crate::spec::{PolicyError, PolicySpec};
use crate::unit_profile::UnitProfile;
use sim_core::SimTime;
use sim_core::job::JobId;
use sim_core::policy::{Decision, PassInfo, PassMode, Policy, SchedView, StartReason, WaitReason};
use sim_core::units::FreePool;

/// EASY backfilling: only the queue head holds a reservation.
///
/// Each pass starts queue heads in order while they fit. The blocked head then gets a
/// reservation at the **shadow time**: walking running jobs by requested end
/// (start + requested time), the first end at which the free units reach the head's
/// need. `extra` = units free at the shadow time (every job expected to end by then
/// released) minus the head's need. A later job starts now if it fits now and either
/// ends, by its estimate, by the shadow time, or uses only extra units (extra then
/// shrinks).
///
/// Options:
/// * `pass=per-time|per-event` — when passes run (see `sim policies`).
/// * `backfill_estimate=requested|actual` — the candidate's length: its requested time,
///   or its true run time (an ideal predictor, as CQSim offers). Running jobs' ends are
///   always their requested ends.
/// * `reservation=count|nodes` — with `nodes`, the head's reservation holds the
///   lowest-indexed units free at the shadow time, and a later job starts now when it has
///   a placement over `[now, now + estimate)` that avoids those units (unless it ends by
///   the shadow time), on the lowest-indexed such units, as Batsim's batsched `easy_bf`.
#[derive(Debug, Clone)]
pub struct EasyBackfill {
    pass: PassMode,
    estimate: Estimate,
    reservation: Reservation,
}

impl EasyBackfill {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[PASS, BACKFILL_ESTIMATE, RESERVATION];

    /// Builds it from a spec.
    pub fn from_spec(spec: &PolicySpec) -> Result<Self, PolicyError> {
        let c = crate::options::check(spec, Self::OPTIONS)?;
        Ok(EasyBackfill { pass: c.pass(), estimate: c.estimate(), reservation: c.reservation() })
    }

    fn schedule_count(&self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let now = view.now();
        let queue = view.queue();
        let mut free = view.free_units();
        // Jobs started by this pass, as (requested end, units), in increasing end order.
        let mut started: Vec<(SimTime, u64)> = Vec::new();
        let mut i = 0;
        while i < queue.len() {
            let j = queue[i];
            let need = view.job(j).units();
            if need > free {
                break;
            }
            free -= need;
            started.push((now + view.requested(j), need));
            out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
            i += 1;
        }
        if i == queue.len() {
            return;
        }
        let head = queue[i];
        let need = view.job(head).units();
        started.sort_unstable();
        let (shadow, mut extra) = shadow_and_extra(view, &started, free, need);
        if view.logging() {
            out.push(Decision::Wait { job: head, reason: WaitReason::HeadReserved { at: shadow, free } });
        }
        for &c in &queue[i + 1..] {
            if free == 0 {
                break;
            }
            let units = view.job(c).units();
            if units > free {
                continue;
            }
            let end = now + self.estimate.of(view, c);
            if end <= shadow {
                free -= units;
                out.push(Decision::Start {
                    job: c,
                    units: None,
                    reason: StartReason::BackfillEndsBeforeShadow { shadow },
                });
            } else if units <= extra {
                free -= units;
                extra -= units;
                out.push(Decision::Start {
                    job: c,
                    units: None,
                    reason: StartReason::BackfillExtraUnits { extra_left: extra },
                });
            }
        }
    }

    fn schedule_nodes(&self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        let now = view.now();
        let queue = view.queue();
        let mut pool: FreePool = view.free_pool().clone();
        let mut fcfs_started: Vec<(JobId, sim_core::units::UnitSet)> = Vec::new();
        let mut i = 0;
        while i < queue.len() {
            let j = queue[i];
            let Some(set) = pool.take_lowest(view.job(j).units()) else {
                break;
            };
            fcfs_started.push((j, set.clone()));
            out.push(Decision::Start { job: j, units: Some(set), reason: StartReason::HeadFits });
            i += 1;
        }
        if i == queue.len() {
            return;
        }
        let mut prof = UnitProfile::of_running(view, |r| overrun_clamp(r.requested_end, now, true));
        for (j, set) in &fcfs_started {
            prof.reserve(*j, now, now + view.requested(*j), set);
        }
        let head = queue[i];
        let head_need = view.job(head).units();
        let head_len = view.requested(head);
        let Some((shadow, head_set)) = prof.earliest(head_need, head_len) else {
            return; // the head can never fit (capacity lost): nothing may pass it
        };
        prof.reserve(head, shadow, shadow + head_len, &head_set);
        if view.logging() {
            out.push(Decision::Wait { job: head, reason: WaitReason::HeadReserved { at: shadow, free: pool.count() } });
        }
        for &c in &queue[i + 1..] {
            if pool.count() == 0 {
                break;
            }
            let units = view.job(c).units();
            if units > pool.count() {
                continue;
            }
            let len = self.estimate.of(view, c);
            if let Some(set) = prof.place(now, units, len) {
                let taken = pool.take(&set);
                debug_assert!(taken, "placement on units that are not free");
                prof.reserve(c, now, now + len, &set);
                out.push(Decision::Start { job: c, units: Some(set), reason: StartReason::BackfillPlacementNow });
            }
        }
    }
}

/// The shadow time and extra units for a head needing `need` units, with `free` units
/// free now and `started` (requested end, units) jobs started earlier in this pass.
fn shadow_and_extra(view: &SchedView<'_>, started: &[(SimTime, u64)], free: u64, need: u64) -> (SimTime, u64) {
    let mut running = view.requested_ends().peekable();
    let mut fresh = started.iter().copied().peekable();
    let mut avail = free;
    let mut next = || match (running.peek(), fresh.peek()) {
        (Some(a), Some(b)) => {
            if a.0 <= b.0 {
                running.next()
            } else {
                fresh.next()
            }
        }
        (Some(_), None) => running.next(),
        (None, Some(_)) => fresh.next(),
        (None, None) => None,
    };
    let mut pending = next();
    while let Some((t, u)) = pending {
        avail += u;
        // Release every job ending at the same time before testing.
        pending = next();
        while let Some((t2, u2)) = pending {
            if t2 != t {
                break;
            }
            avail += u2;
            pending = next();
        }
        if avail >= need {
            return (t, avail - need);
        }
    }
    (SimTime::MAX, 0)
}

impl Policy for EasyBackfill {
    fn spec(&self) -> String {
        canonical(
            "easy",
            &[
                (PASS, pass_index(self.pass)),
                (BACKFILL_ESTIMATE, self.estimate as usize),
                (RESERVATION, self.reservation as usize),
            ],
        )
    }
    fn pass_mode(&self) -> PassMode {
        self.pass
    }
    fn places_units(&self) -> bool {
        self.reservation == Reservation::Nodes
    }
    fn schedule(&mut self, view: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        match self.reservation {
            Reservation::Count => self.schedule_count(view, out),
            Reservation::Nodes => self.schedule_nodes(view, out),
        }
    }
}
