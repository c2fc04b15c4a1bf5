//! The event loop: time advances to the next event or arrival, the instant's events are
//! applied in the order of the contract in the module documentation, then the policy
//! passes and its decisions are applied.

use super::describe::describe_wait;
use super::{Engine, EngineError, Ev, MAX_PASSES_PER_INSTANT, Phase, RunResult};
use crate::controller::Observed;
use crate::event::EventClass;
use crate::job::JobId;
use crate::log::LogEvent;
use crate::outcome::{Outcome, RejectReason};
use crate::policy::{Decision, PassInfo, PassMode, StartReason, WaitReason};
use crate::time::{Secs, SimDuration};

impl Engine<'_> {
    pub(super) fn run(mut self) -> Result<RunResult, EngineError> {
        loop {
            let heap_t = self.events.peek_key().map(|k| k.time);
            let arr_t = self.next_arrival_time();
            let t = match (heap_t, arr_t) {
                (None, None) => break,
                (Some(a), None) | (None, Some(a)) => a,
                (Some(a), Some(b)) => a.min(b),
            };
            if self.cfg.horizon.is_some_and(|h| t > h) {
                break;
            }
            self.sampler.before(t, &self.ledger, self.event_count == 0);
            self.now = t;
            match self.mode {
                PassMode::PerTime => {
                    while self.events.peek_key().is_some_and(|k| k.time == t) {
                        let (_, ev) = self.events.pop().expect("peeked");
                        self.apply_event(ev)?;
                    }
                    while self.next_arrival_time() == Some(t) {
                        self.apply_arrival()?;
                    }
                }
                PassMode::PerEvent => {
                    if heap_t == Some(t) {
                        let (_, ev) = self.events.pop().expect("peeked");
                        self.apply_event(ev)?;
                    } else {
                        self.apply_arrival()?;
                    }
                }
            }
            if self.would_spin() {
                break;
            }
            self.settle()?;
            self.retire()?;
        }
        self.finish()
    }

    pub(super) fn apply_event(&mut self, ev: Ev) -> Result<(), EngineError> {
        self.event_count += 1;
        // A streamed run forgets a job once it is done and written: what is still due for
        // it (an end or timer not cancelled) would change nothing.
        if let Ev::End(j)
        | Ev::Retry(j)
        | Ev::HoldTimeout(j, _)
        | Ev::Evict(j, _)
        | Ev::TaintEvict(j, _)
        | Ev::Restart(j, _) = ev
            && self.state.get(j.idx()).is_none_or(|st| st.written)
        {
            return Ok(());
        }
        match ev {
            Ev::End(j) => self.end_job(j),
            Ev::Timer(i) => self.controller_timer(i as usize),
            Ev::Evict(j, attempt) => self.evict_now(j, attempt),
            Ev::TaintEvict(j, token) => self.toleration_over(j, token),
            Ev::Restart(j, attempt) => self.back_off_over(j, attempt),
            Ev::HoldTimeout(j, epoch) => {
                if self.state[j.idx()].phase == Phase::Waiting && self.bound[j.idx()].hold.epoch == epoch {
                    self.release_holds(
                        j,
                        Some(|| "gang incomplete at its permit timeout: released its held tasks".into()),
                    )?;
                }
                Ok(())
            }
            Ev::Wake => {
                self.info.woken = true;
                Ok(())
            }
            Ev::Retry(j) => {
                let st = &mut self.state[j.idx()];
                // Stopped while it backed off: nothing to retry.
                if st.phase != Phase::BackingOff {
                    return Ok(());
                }
                st.phase = Phase::Waiting;
                self.enqueue(j);
                Ok(())
            }
        }
    }

    pub(super) fn apply_arrival(&mut self) -> Result<(), EngineError> {
        self.event_count += 1;
        let (j, arrived) = self.take_arrival()?;
        if arrived % 4096 == 0
            && let Some(p) = self.progress.as_deref_mut()
        {
            p(arrived);
        }
        self.arrive(j)
    }

    /// Job `j` is submitted now: rejected at once if it can never run, else queued.
    pub(super) fn arrive(&mut self, j: JobId) -> Result<(), EngineError> {
        let job = &self.jobs[j.idx()];
        let reject = if job.units() == 0 {
            Some(RejectReason::NoProcessors)
        } else if job.runtime.is_none() {
            Some(RejectReason::MissingRuntime)
        } else if job.runtime == Some(SimDuration::ZERO) {
            Some(RejectReason::ZeroRuntime)
        } else if job.units() > self.total_units {
            Some(RejectReason::LargerThanMachine)
        } else if self.binds {
            self.never_fits(job)
        } else {
            None
        };
        let st = &mut self.state[j.idx()];
        if let Some(reason) = reject {
            st.phase = Phase::Done;
            st.outcome = Some(Outcome::Rejected(reason));
            // As `ended_now`, field by field: the job is borrowed.
            self.ended += 1;
            if self.stream.is_some() {
                self.done.push(j);
            }
            if let Some(log) = self.log.as_deref_mut() {
                log.record(self.now, &LogEvent::Reject { job: &job.trace_id, reason: reason.as_str() })?;
            }
            return Ok(());
        }
        st.phase = Phase::Waiting;
        if let Some(log) = self.log.as_deref_mut() {
            let requested = job.requested.or(job.runtime).unwrap_or_default();
            log.record(
                self.now,
                &LogEvent::Arrival { job: &job.trace_id, units_needed: job.units(), requested: Secs(requested.0) },
            )?;
        }
        self.enqueue(j);
        self.observe(self.interests.arrivals, || Observed::Arrived { job: j });
        Ok(())
    }

    /// Puts a job in the queue at its arrival-order place.
    pub(super) fn enqueue(&mut self, j: JobId) {
        let r = self.rank[j.idx()];
        if self.queue.last().is_none_or(|l| self.rank[l.idx()] < r) {
            self.queue.push(j);
        } else {
            let at = self.queue.partition_point(|q| self.rank[q.idx()] < r);
            self.queue.insert(at, j);
        }
        self.info.queued.push(j);
    }

    /// What controllers observed is delivered, then the pass runs; both again while the
    /// pass gave them something to observe and their actions changed anything.
    fn settle(&mut self) -> Result<(), EngineError> {
        for _ in 0..super::MAX_CONTROL_ROUNDS {
            if !self.observed.is_empty() {
                self.deliver()?;
            }
            self.pass()?;
            if self.observed.is_empty() || !self.deliver()? {
                return Ok(());
            }
        }
        Err(EngineError::ControllerLivelock { time: self.now })
    }

    /// One scheduling pass; repeated at the same instant while the policy preempts or
    /// releases held tasks, so the units it freed are used at once (as Slurm's preemption
    /// does).
    pub(super) fn pass(&mut self) -> Result<(), EngineError> {
        for _ in 0..MAX_PASSES_PER_INSTANT {
            if !self.pass_once()? {
                return Ok(());
            }
        }
        Err(EngineError::Livelock { policy: self.policy.spec(), time: self.now })
    }

    /// Returns whether the policy freed anything (preempted, or released held tasks).
    pub(super) fn pass_once(&mut self) -> Result<bool, EngineError> {
        // With jobs suspended the policy is called with an empty queue too: it resumes them.
        if self.queue.is_empty() && self.suspended.is_empty() {
            self.info = PassInfo::default();
            return Ok(false);
        }
        self.passes += 1;
        self.max_queue = self.max_queue.max(self.queue.len());
        let mut decisions = std::mem::take(&mut self.decisions);
        decisions.clear();
        {
            let view = sched_view!(self);
            self.policy.schedule(&view, &self.info, &mut decisions);
        }
        self.info = PassInfo::default();
        let mut freed = false;
        // Jobs that may have left the queue (started, or withdrawn).
        let mut left = std::mem::take(&mut self.leaving);
        left.clear();
        // In the policy's order, popped from the back (cheaper than a drain, and the
        // buffer is kept for the next pass).
        decisions.reverse();
        while let Some(d) = decisions.pop() {
            let job = match &d {
                Decision::Start { job, .. }
                | Decision::Bind { job, .. }
                | Decision::Hold { job, .. }
                | Decision::Withdraw { job, .. } => Some(*job),
                _ => None,
            };
            match self.apply_decision(d)? {
                Applied::Started => left.extend(job),
                Applied::Freed => freed = true,
                Applied::Withdrawn { freed: f } => {
                    left.extend(job);
                    freed |= f;
                }
                Applied::Other => {}
            }
        }
        self.decisions = decisions;
        self.leave_queue(&left);
        self.leaving = left;
        Ok(freed)
    }

    /// Takes the jobs of `left` that no longer wait out of the queue: one by one (the queue
    /// is in arrival-rank order) when they are few, else in one sweep.
    pub(super) fn leave_queue(&mut self, left: &[JobId]) {
        let state = &self.state;
        if left.len() * 16 > self.queue.len() {
            self.queue.retain(|j| state[j.idx()].phase == Phase::Waiting);
            return;
        }
        for &j in left.iter().filter(|j| state[j.idx()].phase != Phase::Waiting) {
            let r = self.rank[j.idx()];
            let at = self.queue.partition_point(|q| self.rank[q.idx()] < r);
            if self.queue.get(at) == Some(&j) {
                self.queue.remove(at);
            }
        }
    }

    /// Applies one of the policy's decisions, checked.
    fn apply_decision(&mut self, d: Decision) -> Result<Applied, EngineError> {
        let known = |j: JobId| j.idx() < self.jobs.len();
        match d {
            Decision::Start { job, units, reason } => {
                if !known(job) {
                    return Err(self.invalid(format!("unknown job index {}", job.0)));
                }
                self.start_job(job, units, reason)?;
                Ok(Applied::Started)
            }
            Decision::Bind { job, binding, reason } => {
                if !known(job) {
                    return Err(self.invalid(format!("unknown job index {}", job.0)));
                }
                self.bind_job(job, binding, reason)?;
                Ok(Applied::Started)
            }
            Decision::Hold { job, binding, timeout } => {
                if !known(job) {
                    return Err(self.invalid(format!("unknown job index {}", job.0)));
                }
                self.hold_tasks(job, binding, timeout, false, StartReason::Placed)?;
                Ok(Applied::Started)
            }
            Decision::Release { job } => {
                if !known(job) || self.state[job.idx()].phase != Phase::Waiting {
                    return Err(self.invalid(format!("release of job index {} which is not waiting", job.0)));
                }
                let spec = self.policy.spec();
                self.release_holds(job, Some(|| format!("{spec} released its held tasks")))?;
                // What it held is free now: pass again at this instant, so waiting pods
                // are placed at the release (Kueue deletes an evicted workload's pods, and
                // the pod-delete event moves pending pods back to kube-scheduler's active
                // queue).
                Ok(Applied::Freed)
            }
            Decision::Withdraw { job, why } => {
                if !known(job) || self.state[job.idx()].phase != Phase::Waiting {
                    return Err(self.invalid(format!("withdrawal of job index {} which is not waiting", job.0)));
                }
                let held = self.holds.get(job.idx()).is_some_and(|h| !h.is_empty());
                self.withdraw(job, why)?;
                Ok(Applied::Withdrawn { freed: held })
            }
            Decision::WakeAt { at } => {
                if at > self.now {
                    self.events.schedule(at, EventClass::JobArrival, Ev::Wake);
                }
                Ok(Applied::Other)
            }
            Decision::Preempt { job } => {
                if !known(job) || self.state[job.idx()].phase != Phase::Running {
                    return Err(self.invalid(format!("preemption of job index {} which is not running", job.0)));
                }
                self.requeue(
                    job,
                    format!("preempted by {}", self.policy.spec()),
                    crate::outcome::Interruption::Preemption,
                )?;
                Ok(Applied::Freed)
            }
            Decision::Evict { .. } | Decision::Cancel { .. } | Decision::Suspend { .. } | Decision::Resume { .. } => {
                self.apply_stop(d)
            }
            Decision::Wait { job, reason } => {
                self.log_wait(job, reason)?;
                Ok(Applied::Other)
            }
        }
    }

    /// Applies a decision that stops a running job for a while or for good, or lets a
    /// suspended one run again.
    fn apply_stop(&mut self, d: Decision) -> Result<Applied, EngineError> {
        let known = |j: JobId| j.idx() < self.jobs.len();
        match d {
            Decision::Evict { job, grace, reason } => {
                if !known(job) || self.state[job.idx()].phase != Phase::Running {
                    return Err(self.invalid(format!("eviction of job index {} which is not running", job.0)));
                }
                if grace.0 == 0 {
                    self.requeue(job, reason, crate::outcome::Interruption::Preemption)?;
                    return Ok(Applied::Freed);
                }
                if !self.evicting.contains_key(&job) {
                    let attempt = self.state[job.idx()].attempts;
                    self.evicting.insert(job, (reason, crate::outcome::Interruption::Preemption));
                    self.events.schedule(self.now + grace, EventClass::JobEnd, Ev::Evict(job, attempt));
                }
                Ok(Applied::Other)
            }
            Decision::Cancel { job, grace, reason } => {
                if !known(job) || self.state[job.idx()].phase != Phase::Running {
                    return Err(self.invalid(format!("cancellation of job index {} which is not running", job.0)));
                }
                if self.evicting.contains_key(&job) {
                    return Ok(Applied::Other);
                }
                if grace.0 == 0 {
                    self.cancel_running(job, reason)?;
                    return Ok(Applied::Freed);
                }
                let attempt = self.state[job.idx()].attempts;
                self.evicting.insert(job, (reason, crate::outcome::Interruption::Preemption));
                self.cancelling.insert(job);
                self.events.schedule(self.now + grace, EventClass::JobEnd, Ev::Evict(job, attempt));
                Ok(Applied::Other)
            }
            Decision::Suspend { job, reason } => {
                let bound = self.running.get(job.idx()).and_then(Option::as_ref).is_some_and(|r| !r.binding.is_empty());
                if !known(job) || self.state[job.idx()].phase != Phase::Running || !bound {
                    return Err(
                        self.invalid(format!("suspension of job index {} which is not running on nodes", job.0))
                    );
                }
                if self.evicting.contains_key(&job) {
                    return Ok(Applied::Other);
                }
                self.suspend(job, reason)?;
                Ok(Applied::Freed)
            }
            Decision::Resume { job } => {
                if !known(job) || self.state[job.idx()].phase != Phase::Suspended {
                    return Err(self.invalid(format!("resumption of job index {} which is not suspended", job.0)));
                }
                self.resume(job)?;
                Ok(Applied::Other)
            }
            _ => unreachable!("apply_stop takes Evict, Cancel, Suspend, Resume"),
        }
    }

    /// Ends waiting job `j` for good without running it: its held tasks given back, its
    /// outcome `unfinished` with reason `why` (the queue drops it after the pass).
    pub(super) fn withdraw(&mut self, j: JobId, why: String) -> Result<(), EngineError> {
        self.release_holds(j, None::<fn() -> String>)?;
        self.state[j.idx()].phase = Phase::Done;
        if let Some(log) = self.log.as_deref_mut() {
            log.record(self.now, &LogEvent::Withdraw { job: &self.jobs[j.idx()].trace_id, reason: why.clone() })?;
        }
        self.withdrawn.insert(j, why.into_boxed_str());
        if self.stream.is_some() {
            self.done.push(j);
        }
        Ok(())
    }

    /// Writes a policy's reason for a job's wait to the decision log, if one is written.
    fn log_wait(&mut self, job: JobId, reason: WaitReason) -> Result<(), EngineError> {
        if let Some(log) = self.log.as_deref_mut()
            && let Some(j) = self.jobs.get(job.idx())
        {
            let reserved_at = match reason {
                WaitReason::HeadReserved { at, .. } | WaitReason::Reserved { at } => Some(Secs(at.0)),
                WaitReason::DoesNotFit { .. } | WaitReason::Other { .. } => None,
            };
            log.record(self.now, &LogEvent::Wait { job: &j.trace_id, reason: describe_wait(reason), reserved_at })?;
        }
        Ok(())
    }
}

/// What applying a decision did, for the pass's bookkeeping.
enum Applied {
    /// A job started (or had tasks placed): the queue is filtered after the pass.
    Started,
    /// Resources were freed (a running job preempted, a job's held tasks released by
    /// the policy): the pass is repeated at this instant.
    Freed,
    /// A waiting job was withdrawn (it leaves the queue after the pass); `freed`: it held
    /// tasks, now given back, and the pass is repeated at this instant.
    Withdrawn {
        /// It held tasks.
        freed: bool,
    },
    /// Anything else.
    Other,
}
