//! A job's life: started, run for its (effective) run time, ended, killed for running out
//! of GPU memory and retried after a back-off (Kubernetes' Job controller), requeued.

use super::describe::{describe_binding, describe_start};
use super::{Engine, EngineError, Ev};
use crate::binding::Binding;
use crate::cluster::NodeState;
use crate::controller::Observed;
use crate::event::{EventClass, EventId};
use crate::job::{JobId, TraceStatus};
use crate::ledger::TaskBinding;
use crate::log::LogEvent;
use crate::outcome::Outcome;
use crate::policy::{RunningJob, StartReason};
use crate::restart::Verdict;
use crate::time::{Secs, SimDuration, SimTime};
use crate::units::UnitSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    NotArrived,
    Waiting,
    Running,
    /// Suspended by its policy (`Decision::Suspend`): bound, not progressing.
    Suspended,
    BackingOff,
    Done,
}

#[derive(Clone)]
pub(super) struct JobState {
    pub(super) phase: Phase,
    pub(super) start: Option<SimTime>,
    pub(super) end: Option<SimTime>,
    pub(super) outcome: Option<Outcome>,
    pub(super) attempts: u32,
    /// The first attempt's start.
    pub(super) first_start: Option<SimTime>,
    pub(super) end_event: Option<EventId>,
    /// When the running attempt's end event is due.
    pub(super) ends_at: SimTime,
    pub(super) start_seq: u64,
    pub(super) units: UnitSet,
    /// A streamed run wrote its record (it is done).
    pub(super) written: bool,
}

impl JobState {
    /// A job not submitted yet.
    pub(super) fn new() -> Self {
        JobState {
            phase: Phase::NotArrived,
            start: None,
            end: None,
            outcome: None,
            attempts: 0,
            first_start: None,
            end_event: None,
            ends_at: SimTime::ZERO,
            start_seq: 0,
            units: UnitSet::new(),
            written: false,
        }
    }
}

impl Engine<'_> {
    pub(super) fn requested(&self, j: JobId) -> SimDuration {
        let job = &self.jobs[j.idx()];
        job.requested.or(job.runtime).unwrap_or_default()
    }

    /// Starts a job on `set` (units) or `binding` (nodes and GPUs), the other empty.
    pub(super) fn launch(
        &mut self,
        j: JobId,
        set: UnitSet,
        binding: Binding,
        need: u64,
        oom: bool,
        reason: StartReason,
    ) -> Result<(), EngineError> {
        if let Some(c) = self.checkpointing_of(j) {
            let nodes = RunningJob::nodes_of(self.cluster, &set, &binding).len().max(1) as u32;
            self.checkpoint_tau.insert(j, c.interval_for(nodes));
        }
        let job = &self.jobs[j.idx()];
        let requested = self.requested(j);
        let runtime = self.attempt_runtime(j);
        let mut run = if self.cfg.walltime_kill { runtime.min(requested) } else { runtime };
        if oom {
            run = run.min(self.cfg.oom_after);
        }
        let seq = self.start_seq;
        self.start_seq += 1;
        let end_event = self.events.schedule(self.now + run, EventClass::JobEnd, Ev::End(j));
        let st = &mut self.state[j.idx()];
        st.phase = Phase::Running;
        st.start = Some(self.now);
        st.end = None;
        st.attempts += 1;
        st.first_start.get_or_insert(self.now);
        if let Some(t) = self.interrupted_at.remove(&j) {
            self.lost.entry(j).or_default().waiting += (self.now - t).0;
        }
        st.end_event = Some(end_event);
        st.ends_at = self.now + run;
        st.start_seq = seq;
        let requested_end = self.now + requested;
        self.running_by_start.insert((seq, j));
        if self.running_on_nodes.kept() {
            self.running_on_nodes.insert(seq, j, &RunningJob::nodes_of(self.cluster, &set, &binding));
        }
        self.running_by_requested_end.insert((requested_end, seq, j, need));
        if let Some(log) = self.log.as_deref_mut() {
            let units = if binding.is_empty() { set.to_interval_string() } else { describe_binding(&binding) };
            log.record(self.now, &LogEvent::Start { job: &job.trace_id, units, reason: describe_start(reason) })?;
        }
        if let Some(b) = self.bound.get_mut(j.idx()) {
            b.energy_from = (!binding.is_empty()).then_some(self.now);
        }
        self.running[j.idx()] =
            Some(RunningJob { job: j, start: self.now, requested_end, units: set, count: need, binding });
        self.observe(self.interests.starts, || Observed::Started { job: j });
        Ok(())
    }

    /// Counts the GPU energy job `j`'s attempt used since it last started using its GPUs,
    /// up to now; nothing more is counted until it uses them again.
    pub(super) fn account_energy(&mut self, j: JobId) {
        if !self.energy.any_power {
            return;
        }
        let Some(from) = self.bound.get_mut(j.idx()).and_then(|b| b.energy_from.take()) else { return };
        if let Some(r) = self.running[j.idx()].as_ref() {
            self.energy.attempt_ended(self.cluster, &self.jobs[j.idx()], j, &r.binding, from, self.now);
        }
    }

    /// An attempt stopped: what its checkpoints saved is kept for the next. With periodic
    /// checkpoints ([`crate::SimConfig::checkpointing`]), what the last one completed
    /// before the attempt stopped making progress (now, or when its node failed) saved.
    /// The attempt was interrupted by `cause`: what it lost is counted.
    pub(super) fn commit_saved(&mut self, j: JobId, cause: crate::outcome::Interruption) {
        let stopped = self.stalled_at.remove(&j).unwrap_or(self.now);
        let spent = self.attempt_spent(j, stopped);
        self.count_lost(j, stopped, cause, spent);
        // The interval is taken: an attempt's checkpoints are counted once.
        self.checkpoint_tau.remove(&j);
        if let Some(spent) = spent {
            // Work of this attempt's effective run time, in the job's base run time.
            let base = self.jobs[j.idx()].runtime.unwrap_or_default().0 as u128;
            let full = self.effective_runtime(j).0.max(1) as u128;
            let done = (spent.kept.0 as u128 * base / full) as u64;
            if done > 0 {
                let s = self.saved.entry(j).or_default();
                s.this_attempt = s.this_attempt.max(done);
            }
        }
        if let Some(s) = self.saved.get_mut(&j) {
            s.before = s.before.saturating_add(std::mem::take(&mut s.this_attempt));
        }
    }

    /// The job's run time in this attempt: longer for distributed training spread over
    /// several leaf switches.
    pub(super) fn effective_runtime(&self, j: JobId) -> SimDuration {
        let job = &self.jobs[j.idx()];
        let mut r = job.runtime.unwrap_or_default();
        let Some(b) = self.bound.get(j.idx()) else { return r };
        let started = b.started_tasks;
        if started > 0 && started < job.tasks {
            // An elastic gang started short: its work is shared by fewer workers.
            r = SimDuration((r.0 as u128 * job.tasks as u128).div_ceil(started as u128).min(u64::MAX as u128) as u64);
        }
        if b.cross_switch && self.cfg.cross_switch_slowdown_permille > 0 {
            let p = self.cfg.cross_switch_slowdown_permille as u128;
            SimDuration((r.0 as u128 * (1000 + p) / 1000).min(u64::MAX as u128) as u64)
        } else {
            r
        }
    }

    pub(super) fn end_job(&mut self, j: JobId) -> Result<(), EngineError> {
        // `release` reads the flag to leave the failed allocation's peak out of the sums.
        let oom = self.bound.get(j.idx()).is_some_and(|b| b.oom);
        if oom && self.restarts_in_place(j) {
            return self.kill_in_place(j);
        }
        if !oom {
            self.count_overheads(j);
        }
        let r = self.release(j);
        let job = &self.jobs[j.idx()];
        if oom {
            let b = &mut self.bound[j.idx()];
            b.oom = false;
            b.oom_kills += 1;
            b.wasted = b.wasted.saturating_add(b.gpu_milli_held.saturating_mul((self.now - r.start).0));
            let kills = b.oom_kills;
            let st = &mut self.state[j.idx()];
            st.end_event = None;
            if let Some(log) = self.log.as_deref_mut() {
                log.record(self.now, &LogEvent::End { job: &job.trace_id, outcome: Outcome::OomKilled.name() })?;
            }
            // The Job controller ([`crate::controller::JobRetry`]) decides: retried after a
            // back-off, or ended `oom_killed` (its record keeps this attempt's times).
            st.phase = Phase::BackingOff;
            self.commit_saved(j, crate::outcome::Interruption::Oom);
            self.killed.insert(j, super::Killed::Released(r.units));
            self.observe(self.interests.kills, || Observed::AttemptKilled { job: j, kills });
            return Ok(());
        }
        let requested = self.requested(j);
        let runtime = self.attempt_runtime(j);
        let outcome = if self.cfg.walltime_kill && runtime > requested {
            Outcome::Killed
        } else if job.trace_status == TraceStatus::Failed {
            Outcome::Failed
        } else {
            Outcome::Completed
        };
        let st = &mut self.state[j.idx()];
        debug_assert_eq!(st.start, Some(r.start));
        st.units = r.units;
        st.phase = Phase::Done;
        st.end = Some(self.now);
        st.outcome = Some(outcome);
        // As `ended_now`, field by field: `st` and the job are borrowed.
        self.ended += 1;
        if self.stream.is_some() {
            self.done.push(j);
        }
        st.end_event = None;
        if let Some(log) = self.log.as_deref_mut() {
            log.record(self.now, &LogEvent::End { job: &job.trace_id, outcome: outcome.name() })?;
        }
        self.observe(self.interests.ends, || Observed::Ended { job: j });
        Ok(())
    }

    /// Under periodic checkpoints, how the attempt of `j` spent its time until `stopped`.
    fn attempt_spent(&self, j: JobId, stopped: SimTime) -> Option<crate::checkpoint::Spent> {
        let (c, tau, start) = (self.checkpointing_of(j)?, *self.checkpoint_tau.get(&j)?, self.state[j.idx()].start?);
        let (work, restoring) = self.attempt_work(j);
        Some(c.spent(tau, work, restoring, stopped.saturating_since(start)))
    }

    /// Counts what the attempt of `j` stopped at `stopped` by `cause` lost: its work since
    /// its last completed checkpoint (all of it without one), the checkpoints it wrote and
    /// the one it read back (`spent`, under periodic checkpoints). It waits from now.
    fn count_lost(
        &mut self,
        j: JobId,
        stopped: SimTime,
        cause: crate::outcome::Interruption,
        spent: Option<crate::checkpoint::Spent>,
    ) {
        let Some(start) = self.state[j.idx()].start else { return };
        // Counted once per attempt (a pod killed in place and then stalled is one).
        if self.interrupted_at.contains_key(&j) {
            return;
        }
        let elapsed = stopped.saturating_since(start).0;
        // Explicit checkpoints (`Action::Checkpoint`): their share of the attempt's run time.
        let base = self.jobs[j.idx()].runtime.unwrap_or_default().0.max(1) as u128;
        let this = self.saved.get(&j).map_or(0, |s| s.this_attempt) as u128;
        let explicit = (this * self.effective_runtime(j).0 as u128 / base) as u64;
        let s = spent.unwrap_or_default();
        let (restore, writes, kept) = (s.restore.0, s.writes.0, s.kept.0.max(explicit));
        let l = self.lost.entry(j).or_default();
        // What it did not keep, and the time it held its resources without progress since
        // it stopped (a failure not yet detected).
        *l.of(cause) += elapsed.saturating_sub(restore + writes + kept) + self.now.saturating_since(stopped).0;
        l.checkpoint_writes += writes;
        l.restore += restore;
        self.interrupted_at.insert(j, self.now);
    }

    /// A completed attempt's checkpoint writes and restore: its run beyond its work.
    fn count_overheads(&mut self, j: JobId) {
        if let (Some(c), Some(&tau)) = (self.checkpointing_of(j), self.checkpoint_tau.get(&j)) {
            let (work, restoring) = self.attempt_work(j);
            let restore = if restoring { c.restore.0 } else { 0 };
            let writes = c.wall(tau, work, restoring).0.saturating_sub(work.0 + restore);
            if writes + restore > 0 {
                let l = self.lost.entry(j).or_default();
                l.checkpoint_writes += writes;
                l.restore += restore;
            }
        }
    }

    /// Job `j`'s periodic checkpoints: its own ([`crate::job::Job::checkpoint`]), else the
    /// run's.
    pub(super) fn checkpointing_of(&self, j: JobId) -> Option<crate::checkpoint::Checkpointing> {
        match self.jobs[j.idx()].checkpoint {
            None => self.cfg.checkpointing,
            Some(own) => own.checkpointing(self.cfg.node_mtbf),
        }
    }

    /// How long this attempt runs (before any time limit): the effective run time, less
    /// the share of it that checkpoints of earlier attempts saved. With periodic
    /// checkpoints, it also writes them, and reads the last one first when it resumes from
    /// one.
    pub(super) fn attempt_runtime(&self, j: JobId) -> SimDuration {
        let checkpointing = self.checkpointing_of(j);
        if self.saved.is_empty() && checkpointing.is_none() {
            return self.effective_runtime(j);
        }
        let (work, restoring) = self.attempt_work(j);
        match checkpointing {
            Some(c) => {
                let tau = self.checkpoint_tau.get(&j).copied().unwrap_or_else(|| c.interval_for(1));
                c.wall(tau, work, restoring)
            }
            None => work,
        }
    }

    /// The work this attempt has to do (the effective run time less what checkpoints of
    /// earlier attempts saved), and whether it resumes from a checkpoint.
    fn attempt_work(&self, j: JobId) -> (SimDuration, bool) {
        let full = self.effective_runtime(j);
        match self.saved.get(&j) {
            Some(s) if s.before > 0 => {
                let base = self.jobs[j.idx()].runtime.unwrap_or_default().0.max(1) as u128;
                let left = base.saturating_sub(s.before as u128);
                (SimDuration((full.0 as u128 * left).div_ceil(base) as u64), true)
            }
            _ => (full, false),
        }
    }

    /// Job `j` stops making progress now (its node failed; [`crate::controller::Action::Stall`]):
    /// its end is put off until it is requeued or evicted, holding what it holds; its work
    /// since its last checkpoint is lost.
    pub(super) fn halt(&mut self, j: JobId) {
        if let Some(id) = self.state[j.idx()].end_event.take() {
            self.events.cancel(id);
        }
        self.account_energy(j);
        self.stalled_at.entry(j).or_insert(self.now);
    }

    /// Saves a running job's progress ([`crate::controller::Action::Checkpoint`]): the
    /// share of its base run time this attempt has done.
    pub(super) fn checkpoint(&mut self, j: JobId) {
        let Some(start) = self.state[j.idx()].start else { return };
        if self.bound.get(j.idx()).is_some_and(|b| b.stalled || b.crash_wait.is_some()) {
            // Its containers are not running: nothing to save.
            return;
        }
        let base = self.jobs[j.idx()].runtime.unwrap_or_default().0;
        let full = self.effective_runtime(j).0.max(1) as u128;
        let before = self.saved.get(&j).map_or(0, |s| s.before);
        let elapsed = (self.now - start).0 as u128;
        // Of the work left when this attempt started, the share done by now.
        let left = base.saturating_sub(before) as u128;
        let done = (elapsed * base as u128 / full).min(left) as u64;
        self.saved.entry(j).or_default().this_attempt = done;
    }

    /// Submits a job a controller made ([`crate::controller::Action::Submit`]): it gets
    /// the next id and arrives now.
    pub(super) fn submit(&mut self, mut job: crate::job::Job) -> Result<(), EngineError> {
        job.submit = self.now;
        let j = self.add_job(job);
        self.arrive(j)
    }

    /// Ends running job `j` for good, `preempted` (`Decision::Cancel`): what it holds is
    /// given back now; its record keeps this attempt's start and ends now.
    pub(super) fn cancel_running(&mut self, j: JobId, _why: String) -> Result<(), EngineError> {
        self.end_running(j, Outcome::Preempted)
    }

    /// Ends running job `j` for good now with `outcome` (a cancellation, a controller's
    /// stop).
    pub(super) fn end_running(&mut self, j: JobId, outcome: Outcome) -> Result<(), EngineError> {
        if let Some(id) = self.state[j.idx()].end_event.take() {
            self.events.cancel(id);
        }
        let r = self.release(j);
        if outcome == Outcome::Preempted {
            self.commit_saved(j, crate::outcome::Interruption::Preemption);
        } else {
            // Stopped by its owner: its end, not an interruption.
            self.stalled_at.remove(&j);
            self.checkpoint_tau.remove(&j);
        }
        self.moot_kill(j);
        let st = &mut self.state[j.idx()];
        st.units = r.units;
        st.phase = Phase::Done;
        st.end = Some(self.now);
        st.outcome = Some(outcome);
        self.ended_now(j);
        if let Some(log) = self.log.as_deref_mut() {
            let job = &self.jobs[j.idx()].trace_id;
            log.record(self.now, &LogEvent::End { job, outcome: outcome.name() })?;
        }

        self.observe(self.interests.ends, || Observed::Ended { job: j });
        Ok(())
    }

    /// Suspends running job `j` (`Decision::Suspend`): its end is put off, its CPUs and
    /// GPUs are lent, it leaves the running lists and keeps its binding.
    pub(super) fn suspend(&mut self, j: JobId, why: String) -> Result<(), EngineError> {
        let Some(id) = self.state[j.idx()].end_event.take() else {
            return Err(
                self.invalid(format!("suspension of job {} which is not progressing", self.jobs[j.idx()].trace_id))
            );
        };
        self.events.cancel(id);
        self.account_energy(j);
        let st = &mut self.state[j.idx()];
        let left = st.ends_at.saturating_since(self.now);
        st.phase = Phase::Suspended;
        let seq = st.start_seq;
        let r = self.running[j.idx()].as_ref().expect("a running job");
        self.running_by_start.remove(&(seq, j));
        if self.running_on_nodes.kept() {
            self.running_on_nodes.remove(seq, j, &r.nodes(self.cluster));
        }
        self.running_by_requested_end.remove(&(r.requested_end, seq, j, r.count));
        let task = &self.jobs[j.idx()].task;
        for b in &r.binding {
            self.ledger.lend(task, b);
        }
        self.suspended.insert(j, left);
        self.info.released.push(j);
        if let Some(log) = self.log.as_deref_mut() {
            log.record(self.now, &LogEvent::Suspend { job: &self.jobs[j.idx()].trace_id, reason: why })?;
        }
        Ok(())
    }

    /// Resumes suspended job `j` (`Decision::Resume`) on the CPUs and GPUs it lent; its
    /// expected end moves by the time it was suspended.
    pub(super) fn resume(&mut self, j: JobId) -> Result<(), EngineError> {
        let Some(&left) = self.suspended.get(&j) else {
            return Err(
                self.invalid(format!("resumption of job {} which is not suspended", self.jobs[j.idx()].trace_id))
            );
        };
        let task = &self.jobs[j.idx()].task;
        let r = self.running[j.idx()].as_mut().expect("a suspended job keeps its binding");
        for (k, b) in r.binding.iter().enumerate() {
            if let Err(e) = self.ledger.reclaim(task, b) {
                for b in r.binding.iter().take(k) {
                    self.ledger.lend(task, b);
                }
                let id = &self.jobs[j.idx()].trace_id;
                return Err(EngineError::InvalidDecision {
                    policy: self.policy.spec(),
                    time: self.now,
                    what: format!("resumption of job {id} whose CPUs or GPUs are taken: {e}"),
                });
            }
        }
        self.suspended.remove(&j);
        let st = &mut self.state[j.idx()];
        // The time limit does not count the time suspended (Slurm moves the end time).
        let was_due = st.ends_at;
        st.ends_at = self.now + left;
        r.requested_end = r.requested_end + (st.ends_at.saturating_since(was_due));
        st.phase = Phase::Running;
        st.end_event = Some(self.events.schedule(st.ends_at, EventClass::JobEnd, Ev::End(j)));
        self.running_by_start.insert((st.start_seq, j));
        if self.running_on_nodes.kept() {
            self.running_on_nodes.insert(st.start_seq, j, &r.nodes(self.cluster));
        }
        self.running_by_requested_end.insert((r.requested_end, st.start_seq, j, r.count));
        if let Some(b) = self.bound.get_mut(j.idx()) {
            b.energy_from = Some(self.now);
        }
        if let Some(log) = self.log.as_deref_mut() {
            log.record(self.now, &LogEvent::Resume { job: &self.jobs[j.idx()].trace_id, left: Secs(left.0) })?;
        }
        Ok(())
    }

    /// Job `j`'s attempt was interrupted by `cause` (`why`, the decision log's words):
    /// what it holds is given back and its restart rule ([`crate::SimConfig::restarts`])
    /// decides: back to the queue (at once, or after a back-off), failed, or held.
    pub(super) fn requeue(
        &mut self,
        j: JobId,
        why: String,
        cause: crate::outcome::Interruption,
    ) -> Result<(), EngineError> {
        if let Some(id) = self.state[j.idx()].end_event.take() {
            self.events.cancel(id);
        }
        let r = self.release(j);
        self.commit_saved(j, cause);
        if let Some(b) = self.bound.get_mut(j.idx()) {
            // A new pod: placed afresh, with a kubelet back-off of its own.
            b.oom = false;
            b.stalled = false;
            b.crash_wait = None;
            b.crash_loop = 0;
            b.last_restart = None;
        }
        self.moot_kill(j);
        let survivors = self.elastic_survivors(j, &r.binding);
        // torchrun counts only the restarts it makes itself, on the nodes left.
        let torchrun = matches!(self.cfg.restarts, crate::restart::Restarts::Torchrun { .. });
        let counted = self.restarts_counted.entry(j).or_default();
        *counted += u32::from(self.cfg.restarts.counts(cause) && (!torchrun || survivors.is_some()));
        let after = match self.cfg.restarts.verdict(cause, *counted) {
            Verdict::Requeue { after } => after,
            Verdict::Continue => match survivors {
                Some(left) => return self.continue_on(j, left, why),
                None => SimDuration::ZERO,
            },
            Verdict::Fail(reason) => return self.end_interrupted(j, r.units, format!("{why}; {reason}"), true),
            Verdict::Hold(reason) => return self.end_interrupted(j, r.units, format!("{reason}; last: {why}"), false),
        };
        let st = &mut self.state[j.idx()];
        st.start = None;
        let why = if after > SimDuration::ZERO {
            // The Job controller re-creates the pod after its back-off.
            st.phase = Phase::BackingOff;
            let at = self.now + after;
            self.events.schedule(at, EventClass::JobArrival, Ev::Retry(j));
            format!("{why}; re-created at {} (back-off)", crate::time::secs_string(at.0))
        } else {
            st.phase = Phase::Waiting;
            self.enqueue(j);
            why
        };
        if let Some(log) = self.log.as_deref_mut() {
            log.record(self.now, &LogEvent::Requeue { job: &self.jobs[j.idx()].trace_id, reason: why })?;
        }
        Ok(())
    }

    /// The tasks of elastic job `j` (`min_tasks`) whose nodes are up, from its binding
    /// `binding`, when they are enough for it to go on; `None` otherwise (not elastic, not
    /// bound to nodes, too few left) or under a rule other than torchrun's.
    fn elastic_survivors(&self, j: JobId, binding: &Binding) -> Option<Binding> {
        let job = &self.jobs[j.idx()];
        if !matches!(self.cfg.restarts, crate::restart::Restarts::Torchrun { .. }) || job.min_tasks == 0 {
            return None;
        }
        let up = |b: &&TaskBinding| self.node_state.get(b.node.0 as usize).is_none_or(|s| *s == NodeState::Up);
        let left: Binding = binding.iter().filter(up).cloned().collect();
        (!left.is_empty() && left.len() >= job.needed_tasks() as usize).then_some(left)
    }

    /// torchrun's elastic agents restart interrupted job `j`'s worker group at once on
    /// `survivors`, the tasks whose nodes are left, from its last checkpoint: held again
    /// and started, without going back to the queue.
    fn continue_on(&mut self, j: JobId, survivors: Binding, why: String) -> Result<(), EngineError> {
        let (n, tasks) = (survivors.len(), self.jobs[j.idx()].tasks);
        let st = &mut self.state[j.idx()];
        st.phase = Phase::Waiting;
        st.start = None;
        let what = format!("torchrun restarts it on the {n} of its {tasks} tasks left");
        if let Some(log) = self.log.as_deref_mut() {
            let reason = format!("{why}; {what}");
            log.record(self.now, &LogEvent::Requeue { job: &self.jobs[j.idx()].trace_id, reason })?;
        }
        self.hold_tasks(j, survivors, None, true, StartReason::Other { why: what })
    }

    /// Interrupted job `j` runs no more: it ends `failed` now (`fail`), or is held and
    /// ends `unfinished` with reason `why`. Its record keeps the interrupted attempt.
    fn end_interrupted(&mut self, j: JobId, units: UnitSet, why: String, fail: bool) -> Result<(), EngineError> {
        // It does not wait to run again: no waiting is counted.
        self.interrupted_at.remove(&j);
        let st = &mut self.state[j.idx()];
        st.units = units;
        st.phase = Phase::Done;
        if fail {
            st.end = Some(self.now);
            st.outcome = Some(Outcome::Failed);
            self.ended_now(j);
            if let Some(log) = self.log.as_deref_mut() {
                let job = &self.jobs[j.idx()].trace_id;
                log.record(self.now, &LogEvent::Requeue { job, reason: why })?;
                log.record(self.now, &LogEvent::End { job, outcome: Outcome::Failed.name() })?;
            }
            self.observe(self.interests.ends, || Observed::Ended { job: j });
        } else {
            st.start = None;
            if let Some(log) = self.log.as_deref_mut() {
                log.record(self.now, &LogEvent::Withdraw { job: &self.jobs[j.idx()].trace_id, reason: why.clone() })?;
            }
            self.withdrawn.insert(j, why.into_boxed_str());
        }
        Ok(())
    }
}

/// Progress a job's checkpoints saved, in microseconds of its base run time.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Saved {
    /// By the attempts before this one.
    pub(super) before: u64,
    /// By this attempt's last checkpoint.
    pub(super) this_attempt: u64,
}
