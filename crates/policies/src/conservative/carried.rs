//! The count-mode availability profile carried from one pass to the next (with requested
//! times and `replan=revisit`): brought up to date by what changed since (time moved on,
//! jobs that ended before their requested end), instead of being built again from every
//! running job and reservation at every pass. Whatever it cannot account for drops it,
//! and the pass builds the profile afresh.

use super::raise_log::RaiseLog;
use crate::options::Estimate;
use crate::profile::StepProfile;
use sim_core::SimTime;
use sim_core::job::JobId;
use sim_core::policy::{PassInfo, SchedView};
use std::collections::BTreeMap;

/// The carried profile and what it takes to bring it up to date.
#[derive(Debug, Clone, Default)]
pub struct Carried {
    /// The previous pass's profile, with the units it plans to free a microsecond after
    /// its origin because their jobs overran their requested time.
    plan: Option<(StepProfile, i64)>,
    /// Requested end and units of each job this policy started that still runs.
    running_ends: BTreeMap<JobId, (SimTime, u64)>,
    /// Where the profile gained room, for revisits.
    pub raises: RaiseLog,
}

impl Carried {
    /// The previous pass's profile brought to now, as a fresh build would make it, or
    /// `None` when it cannot be (the pass then builds one; every job looks in full). Call
    /// once per pass, before anything else; `intact` says whether every reservation in it
    /// still belongs to a waiting job.
    pub fn bring(&mut self, view: &SchedView<'_>, info: &PassInfo, est: Estimate, intact: bool) -> Option<StepProfile> {
        let ended = self.take_ended(view, info, est);
        let plan = self.plan.take().filter(|_| intact && !info.capacity_changed);
        let brought = plan.zip(ended).and_then(|(p, e)| self.carry(p, view, e));
        if brought.is_none() {
            self.raises.forget();
        }
        brought
    }

    /// Keeps the pass's final profile for the next pass.
    pub fn keep(&mut self, plan: StepProfile, view: &SchedView<'_>) {
        self.plan = Some((plan, overdue(view).0));
    }

    /// Job `j` was started and is planned to run until `end` on `units` units.
    pub fn started(&mut self, j: JobId, end: SimTime, units: u64) {
        self.running_ends.insert(j, (end, units));
    }

    /// The requested ends and units of the jobs this policy started that have ended
    /// since the previous pass, taken out of [`Carried::running_ends`]; `None` if some are
    /// not known (the map is then made again from the running jobs).
    fn take_ended(&mut self, view: &SchedView<'_>, info: &PassInfo, est: Estimate) -> Option<Vec<(SimTime, u64)>> {
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
                self.running_ends = view.running().map(|r| (r.job, (r.start + est.of(view, r.job), r.count))).collect();
            }
        }
        known.then_some(ended)
    }

    /// The plan brought to now: what was planned before now is past, each job that
    /// ended before its requested end frees its units from now to then, and running jobs
    /// past their requested end are planned to end a microsecond from now. Checked
    /// against the engine's free units now.
    fn carry(
        &mut self,
        (mut plan, mut overran): (StepProfile, i64),
        view: &SchedView<'_>,
        ended: Vec<(SimTime, u64)>,
    ) -> Option<StepProfile> {
        let now = view.now();
        if plan.origin() > now {
            return None;
        }
        let later = plan.origin() < now;
        if later {
            // The overrun jobs' planned ends are past too.
            plan.advance(now);
            overran = 0;
        }
        for (end, units) in ended {
            let units = units as i64;
            if end > now {
                plan.add(now, end, units);
                self.raises.raised(end, units);
            } else if end < now && !later {
                // It overran and was planned to end a microsecond from now.
                plan.add(now, now.next_tick(), units);
                self.raises.raised(now.next_tick(), units);
                overran -= units;
            }
        }
        let (over, due) = overdue(view);
        plan.add(now, now.next_tick(), overran - over);
        if overran > over {
            self.raises.raised(now.next_tick(), overran - over);
        }
        (plan.steps()[0].1 == view.free_units() as i64 + due).then_some(plan)
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
