//! The gang modes' parts of a `kube` pass: the order Coscheduling and Kueue put the
//! queue in, Kueue's admission of each job as its turn comes, gangs held task by task
//! with Coscheduling's PostFilter, and what the engine's spin check needs to know.

use super::{GangMode, KubeScheduler, Order, Pass};
use sim_core::job::JobId;
use sim_core::ledger::{Ledger, TaskBinding};
use sim_core::policy::{Decision, JobView, PassInfo, SchedView, WaitReason};

impl KubeScheduler {
    /// The queue a pass tries, from kube-scheduler's order: with Coscheduling
    /// (`gang=permit-wait`, `order=priority`) its QueueSort (a group's last failure
    /// time replaces its creation time); with Kueue, after Kueue's step (quota of ended
    /// jobs freed, jobs not ready by their deadline evicted or deactivated), the admitted
    /// jobs in that order and then the others in Kueue's admission order.
    pub(super) fn gang_queue(
        &mut self,
        view: &SchedView<'_>,
        info: &PassInfo,
        mut queue: Vec<JobId>,
        out: &mut Vec<Decision>,
    ) -> Vec<JobId> {
        if let Some(c) = &mut self.cosched {
            c.observe(view, &info.released);
            if self.order == Order::Priority {
                c.sort(view, &mut queue);
            }
        }
        if let Some(k) = &mut self.kueue {
            k.step(view, out);
            queue = k.order(view, &queue);
        }
        queue
    }

    /// Whether job `j` may be placed: always, but under Kueue only once admitted — it is
    /// admitted now if the quota has room and nothing blocks admission.
    pub(super) fn gang_admits(&mut self, view: &SchedView<'_>, j: JobId, out: &mut Vec<Decision>) -> bool {
        self.kueue.as_mut().is_none_or(|k| k.admit(view, j, out))
    }

    /// Job `j` starts in this pass (all the tasks it needs placed): its pods are ready for
    /// Kueue (`blockAdmission` lifts) and its group's failure is cleared (Permit).
    pub(super) fn gang_started(&mut self, j: JobId) {
        if let Some(k) = &mut self.kueue {
            k.started(j);
        }
        if let Some(c) = &mut self.cosched {
            c.started(j);
        }
    }

    /// Most tasks of job `j` that may be placed: those Kueue admitted (partial
    /// admission), else all.
    pub(super) fn task_cap(&self, j: JobId, job: JobView<'_>) -> usize {
        let count = self.kueue.as_ref().and_then(|k| k.admitted_count(j)).unwrap_or(job.tasks());
        count as usize
    }

    /// Why job `j` is not tried at all: not admitted by Kueue, or its group in
    /// Coscheduling's back-off after a rejection.
    pub(super) fn gang_why_not(&self, view: &SchedView<'_>, j: JobId) -> Option<String> {
        if let Some(k) = self.kueue.as_ref().filter(|k| !k.admitted(j)) {
            return Some(k.why_not_admitted(view, j));
        }
        let until = self.cosched.as_ref().and_then(|c| c.backing_off(j, view.now()))?;
        Some(format!(
            "PodGroup rejected by Coscheduling's PostFilter; not tried again before {} (PodGroupBackoffSeconds)",
            sim_core::time::secs_string(until.0)
        ))
    }

    /// A gang pod at a time (`gang=none|permit-wait|kueue`): binds what fits now of its
    /// tasks not yet held (under Kueue, of those admitted); they hold their resources
    /// while they wait for the rest. Under `gang=permit-wait` a task that fits nowhere
    /// brings Coscheduling's PostFilter: when the gang lacks more than `reject` % of the
    /// tasks it needs, nothing is held and what it held is given back
    /// ([`crate::coscheduling::Coscheduling::reject`]); otherwise the tasks wait, at most
    /// `timeout` from the first.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn hold_parts(
        &mut self,
        view: &SchedView<'_>,
        pass: &mut Pass,
        j: JobId,
        ty: u32,
        fenced: bool,
        kept: Option<Vec<bool>>,
        out: &mut Vec<Decision>,
    ) {
        let (job, now) = (view.job(j), view.now());
        if self.cosched.as_ref().is_some_and(|c| c.backing_off(j, now).is_some()) {
            return;
        }
        let restricted = kept.is_some();
        let allowed: &[bool] = match &kept {
            Some(a) => a,
            None if fenced => &pass.unreserved,
            None => &pass.up,
        };
        let held = view.held(j).len();
        let left = self.task_cap(j, job).saturating_sub(held);
        let placed = self.bind_some(&mut pass.scratch, job, ty, left, allowed);
        let (assigned, min) = (held + placed.len(), job.needed_tasks() as usize);
        if assigned >= min {
            self.gang_started(j);
            self.pod_placed(j, now);
        } else if self.cosched.as_ref().is_some_and(|c| c.rejects(assigned, min)) {
            self.pod_failed(view, pass, j, out);
            // PostFilter's optimistic rejection: what it placed in this pass is given back
            // on the pass's ledger, so exactly that many of its pod type still fit.
            self.unplace(&mut pass.scratch, job, &placed);
            if job.constraints().is_none() && !restricted {
                pass.fits_at_most.insert((ty, fenced), placed.len());
            }
            self.cosched.as_mut().expect("checked").reject(j, held > 0, now, out);
            if view.logging() {
                let why = format!(
                    "PodGroup rejected by Coscheduling's PostFilter: {assigned} of the {min} pods it needs fit"
                );
                out.push(Decision::Wait { job: j, reason: WaitReason::Other { why } });
            }
            return;
        }
        if assigned < min {
            // The pods not placed wait among the unschedulable pods.
            self.pod_failed(view, pass, j, out);
        }
        if placed.len() < left && job.constraints().is_none() && !restricted {
            pass.fits_at_most.insert((ty, fenced), 0);
        }
        if !placed.is_empty() {
            let timeout = self.cosched.as_ref().map(|c| c.timeout);
            out.push(Decision::Hold { job: j, binding: placed.into(), timeout });
        }
    }

    /// Gives back on `ledger` what `placed` tasks of `job` took.
    fn unplace(&mut self, ledger: &mut Ledger, job: JobView<'_>, placed: &[TaskBinding]) {
        for b in placed {
            ledger.give(&job.task(), b, false);
            ledger.unlabel_pod(b.node, u32::MAX);
            self.cx.mark_dirty(b.node.0 as usize);
        }
    }

    /// What of the gang modes' state can change later passes, for the engine's spin
    /// check ([`sim_core::policy::Policy::retry_state`]).
    pub(super) fn gang_retry_state(&self, view: &SchedView<'_>, out: &mut Vec<u64>) {
        if self.gang == GangMode::Atomic || self.gang == GangMode::PodAtATime {
            return;
        }
        let queue = self.ordered_queue(view);
        if let Some(k) = &self.kueue {
            k.retry_state(view, &queue, out);
        }
        if let Some(c) = &self.cosched {
            c.retry_state(view, &queue, out);
        }
    }
}
