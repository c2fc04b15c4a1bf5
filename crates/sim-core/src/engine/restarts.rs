//! Restarts in place of jobs bound to nodes (Kubernetes `restartPolicy: OnFailure`): a
//! container killed for running out of GPU memory is restarted in its pod, on the same
//! node and GPUs, after the kubelet's CrashLoopBackOff; the pods of a node that comes back
//! before they were evicted restart there (their containers died with the node).

use super::{Engine, EngineError, Ev, Killed, Phase};
use crate::binding::Binding;
use crate::controller::Observed;
use crate::event::EventClass;
use crate::job::{JobId, RestartPolicy};
use crate::log::LogEvent;
use crate::outcome::Outcome;
use crate::policy::StartReason;
use crate::units::UnitSet;

impl Engine<'_> {
    /// Whether job `j`'s pods restart in place when a container fails: its restart
    /// policy is OnFailure and it is bound to nodes.
    pub(super) fn restarts_in_place(&self, j: JobId) -> bool {
        self.jobs[j.idx()].restart_policy == RestartPolicy::OnFailure
            && self.running[j.idx()].as_ref().is_some_and(|r| !r.binding.is_empty())
    }

    /// Job `j`'s attempt ran out of GPU memory and its container is killed in place: the
    /// attempt ends (an OOM kill, its GPU time wasted) but the pod keeps its binding, its
    /// GPUs held, while the Job controller decides ([`crate::controller::Action::Restart`]
    /// or [`crate::controller::Action::GiveUp`]).
    pub(super) fn kill_in_place(&mut self, j: JobId) -> Result<(), EngineError> {
        let start = self.running[j.idx()].as_ref().expect("running").start;
        self.account_energy(j);
        let b = &mut self.bound[j.idx()];
        b.oom_kills += 1;
        b.wasted = b.wasted.saturating_add(b.gpu_milli_held.saturating_mul((self.now - start).0));
        let kills = b.oom_kills;
        // Until the controller answers, it waits as if to restart.
        b.crash_wait = Some(false);
        self.state[j.idx()].end_event = None;
        if let Some(log) = self.log.as_deref_mut() {
            let job = &self.jobs[j.idx()].trace_id;
            log.record(self.now, &LogEvent::End { job, outcome: Outcome::OomKilled.name() })?;
        }
        self.commit_saved(j, crate::outcome::Interruption::Oom);
        self.killed.insert(j, Killed::InPlace);
        self.observe(self.interests.kills, || Observed::AttemptKilled { job: j, kills });
        Ok(())
    }

    /// The Job controller's answer for a job killed in place: the kubelet restarts its
    /// container after CrashLoopBackOff ([`super::crash_loop_backoff`] of its restarts
    /// since the back-off was last reset); with `fail` the Job controller fails the Job at
    /// that restart instead, deleting the pod.
    pub(super) fn await_restart(&mut self, j: JobId, fail: bool) -> Result<(), EngineError> {
        let now = self.now;
        let b = &mut self.bound[j.idx()];
        // The back-off starts again when the container ran 10 min since its last restart.
        let reset = b.last_restart.is_none_or(|r| now - r > super::CRASH_LOOP_RESET);
        b.crash_loop = if reset { 1 } else { b.crash_loop + 1 };
        b.crash_wait = Some(fail);
        let at = now + super::crash_loop_backoff(b.crash_loop);
        let attempt = self.state[j.idx()].attempts;
        self.events.schedule(at, EventClass::JobArrival, Ev::Restart(j, attempt));
        if let Some(log) = self.log.as_deref_mut() {
            let what = if fail { "backoffLimit reached: fails at its next restart" } else { "restarts in place" };
            let reason = format!("out of GPU memory; {what} at {} (CrashLoopBackOff)", crate::time::secs_string(at.0));
            log.record(now, &LogEvent::Requeue { job: &self.jobs[j.idx()].trace_id, reason })?;
        }
        Ok(())
    }

    /// A CrashLoopBackOff is over: the container restarts in place, or the job fails.
    /// Nothing happens when the attempt is gone (requeued) or its node is down (it is
    /// restarted when the node comes back).
    pub(super) fn back_off_over(&mut self, j: JobId, attempt: u32) -> Result<(), EngineError> {
        let st = &self.state[j.idx()];
        if st.phase != Phase::Running || st.attempts != attempt {
            return Ok(());
        }
        let b = &self.bound[j.idx()];
        match b.crash_wait {
            Some(_) if b.stalled => Ok(()),
            Some(false) => self.restart(j, "restarted in place after CrashLoopBackOff"),
            Some(true) => self.fail_in_place(j),
            None => Ok(()),
        }
    }

    /// Ends job `j`, killed in place, for good: `oom_killed`, its binding released now.
    fn fail_in_place(&mut self, j: JobId) -> Result<(), EngineError> {
        self.bound[j.idx()].crash_wait = None;
        self.stalled_at.remove(&j);
        let r = self.release(j);
        let st = &mut self.state[j.idx()];
        st.units = r.units;
        st.phase = Phase::Done;
        st.end = Some(self.now);
        st.outcome = Some(Outcome::OomKilled);
        self.ended_now(j);
        self.observe(self.interests.ends, || Observed::Ended { job: j });
        Ok(())
    }

    /// Job `j`'s node came back while it was stalled there (all its nodes are up again):
    /// its containers died with the node. A pod that restarts in place does so now; one
    /// that does not fails and the Job controller re-creates it at once (a new pod,
    /// requeued).
    pub(super) fn node_back(&mut self, j: JobId, node: u32) -> Result<(), EngineError> {
        self.bound[j.idx()].stalled = false;
        if self.jobs[j.idx()].restart_policy != RestartPolicy::OnFailure {
            return self.requeue(
                j,
                format!("node {node} up again: its pod's containers died with it"),
                crate::outcome::Interruption::Failure,
            );
        }
        // The kubelet restarted with the node: its back-off entries are gone.
        let b = &mut self.bound[j.idx()];
        b.crash_loop = 0;
        b.last_restart = None;
        if b.crash_wait == Some(true) {
            return self.fail_in_place(j);
        }
        self.moot_kill(j);
        // The stalled attempt's checkpoints are what the restart resumes from.
        self.commit_saved(j, crate::outcome::Interruption::Failure);
        self.restart(j, &format!("restarted in place: node {node} up again"))
    }

    /// A job killed in place was requeued or restarted before the Job controller
    /// answered: its answer, when it comes, changes nothing.
    pub(super) fn moot_kill(&mut self, j: JobId) {
        if let Some(k @ Killed::InPlace) = self.killed.get_mut(&j) {
            *k = Killed::Moot;
        }
    }

    /// Restarts job `j`'s attempt in place now, on its binding, from its last checkpoint.
    fn restart(&mut self, j: JobId, why: &str) -> Result<(), EngineError> {
        let r = self.running[j.idx()].take().expect("restarting a running job");
        let seq = self.state[j.idx()].start_seq;
        self.running_by_start.remove(&(seq, j));
        if self.running_on_nodes.kept() {
            self.running_on_nodes.remove(seq, j, &r.nodes(self.cluster));
        }
        self.running_by_requested_end.remove(&(r.requested_end, seq, j, r.count));
        let oom = self.allocate_again(j, &r.binding);
        let b = &mut self.bound[j.idx()];
        b.oom = oom;
        b.crash_wait = None;
        b.restarts += 1;
        b.last_restart = Some(self.now);
        self.launch(j, UnitSet::new(), r.binding, r.count, oom, StartReason::Other { why: why.into() })
    }

    /// The restarted container allocates its GPU memory again: whether it runs out is
    /// decided anew, as at binding, against what the GPUs hold now (its peak is counted in
    /// their sums again when it fits).
    fn allocate_again(&mut self, j: JobId, binding: &Binding) -> bool {
        let job = &self.jobs[j.idx()];
        let was_oom = self.bound[j.idx()].oom;
        for t in binding {
            self.ledger.give(&job.task, t, !was_oom);
        }
        let mut oom = false;
        for t in binding {
            oom |= self.ledger.runs_out_of_memory(&job.task, t);
            self.ledger.take(&job.task, &job.gpu_models, t, true).expect("its own resources, just given back");
        }
        if oom {
            for t in binding {
                self.ledger.uncount_peak(&job.task, t);
            }
        }
        oom
    }
}
