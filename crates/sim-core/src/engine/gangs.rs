//! Jobs bound to nodes and GPUs: tasks held until a gang is complete, permit timeouts,
//! the GPU memory check at binding.

use super::describe::describe_binding;
use super::{Engine, EngineError, Ev, Phase};
use crate::binding::Binding;
use crate::cluster::NodeState;
use crate::event::EventClass;
use crate::job::JobId;
use crate::ledger::TaskBinding;
use crate::log::LogEvent;
use crate::policy::StartReason;
use crate::time::{SimDuration, SimTime};
use crate::units::UnitSet;

/// What a job placed on nodes and GPUs carries besides [`JobState`] (kept only for
/// policies that bind nodes, so runs on processor units stay small).
#[derive(Clone, Default)]
pub(super) struct BoundState {
    /// This attempt failed its GPU memory allocation.
    pub(super) oom: bool,
    pub(super) oom_kills: u32,
    /// Milli-GPU × µs of the attempts killed for running out of memory.
    pub(super) wasted: u64,
    /// Milli-GPU this attempt holds.
    pub(super) gpu_milli_held: u64,
    pub(super) hold: HoldState,
    pub(super) cross_switch: bool,
    /// Tasks it started with (fewer than its tasks for a short elastic gang).
    pub(super) started_tasks: u32,
    /// Under the Kubernetes node lifecycle: a node it is bound to went down; its pods make
    /// no progress, holding what they hold, until evicted or the node is back.
    pub(super) stalled: bool,
    /// Killed in place (restart policy OnFailure) and waiting for the kubelet's restart,
    /// with whether the Job controller fails it then instead (`backoffLimit` reached).
    pub(super) crash_wait: Option<bool>,
    /// Restarts in its current CrashLoopBackOff run, and when it last restarted (the
    /// kubelet's back-off entry).
    pub(super) crash_loop: u32,
    pub(super) last_restart: Option<SimTime>,
    /// Restarts in place, all attempts together.
    pub(super) restarts: u32,
    /// Since when this attempt's GPU energy is still to be counted; `None` while it does
    /// not use its GPUs (stalled, or waiting to restart).
    pub(super) energy_from: Option<SimTime>,
}

/// A gang being held in parts.
#[derive(Clone, Default)]
pub(super) struct HoldState {
    pub(super) oom: bool,
    pub(super) first: Option<SimTime>,
    pub(super) milli: u64,
    pub(super) since: SimTime,
    pub(super) acc: u64,
    pub(super) epoch: u32,
    pub(super) wait: Option<u64>,
}

impl HoldState {
    /// Milli-GPU × µs held up to `now`.
    pub(super) fn held_at(&self, now: SimTime) -> u64 {
        self.acc.saturating_add(self.milli.saturating_mul((now - self.since.min(now)).0))
    }

    /// Ends this attempt at a gang at `now` (started or released): its held time is
    /// counted, the next attempt starts afresh. Returns whether it failed its GPU memory
    /// allocation and the milli-GPU it held.
    pub(super) fn end(&mut self, now: SimTime) -> (bool, u64) {
        self.acc = self.held_at(now);
        let r = (self.oom, self.milli);
        self.oom = false;
        self.first = None;
        self.milli = 0;
        self.epoch += 1;
        r
    }
}

impl Engine<'_> {
    /// Holds some tasks of a waiting job, checked against the ledger; starts it once all
    /// its tasks (an elastic job's minimum) are held, and decides then whether this
    /// attempt runs out of GPU memory. `complete`: the binding must start it (a `Bind`).
    pub(super) fn hold_tasks(
        &mut self,
        j: JobId,
        new: Binding,
        timeout: Option<SimDuration>,
        complete: bool,
        reason: StartReason,
    ) -> Result<(), EngineError> {
        let job = &self.jobs[j.idx()];
        if !self.binds {
            return Err(self.invalid(format!(
                "binding of job {}: the policy binds nodes but does not say so (Policy::binds_nodes)",
                job.trace_id
            )));
        }
        if self.state[j.idx()].phase != Phase::Waiting {
            return Err(self.invalid(format!("start of job {} which is not waiting", job.trace_id)));
        }
        let have = self.holds[j.idx()].len();
        let need = job.needed_tasks() as usize;
        if have + new.len() > job.tasks as usize || (complete && have + new.len() < need) {
            return Err(self.invalid(format!(
                "job {} has {} tasks ({} held), binding names {}",
                job.trace_id,
                job.tasks,
                have,
                new.len()
            )));
        }
        let was_oom = self.bound[j.idx()].hold.oom;
        let oom = self.take_bindings(j, &new, was_oom)?;
        let job = &self.jobs[j.idx()];
        if let Some(pod) = job.constraints.as_deref().and_then(crate::constraints::PodInfo::of) {
            for b in &new {
                self.ledger.label_pod(b.node, j.0, pod.clone());
            }
        }
        if oom && !was_oom {
            // The gang's allocation failed: none of its peaks count in the sums.
            for b in self.holds[j.idx()].iter().chain(&new) {
                self.ledger.uncount_peak(&job.task, b);
            }
        }
        let milli: u64 = new
            .runs()
            .filter(|(b, _)| !b.gpus.is_empty())
            .map(|(b, n)| u64::from(n) * b.gpus.len() as u64 * self.ledger.node(b.node).milli_taken(&job.task) as u64)
            .sum();
        let now = self.now;
        let h = &mut self.bound[j.idx()].hold;
        h.acc = h.held_at(now);
        h.since = now;
        h.milli += milli;
        h.oom = oom;
        let first_hold = h.first.is_none();
        h.first.get_or_insert(now);
        let epoch = h.epoch;
        if let Some(log) = self.log.as_deref_mut() {
            let held = (self.holds[j.idx()].len() + new.len()) as u32;
            if (held as usize) < need {
                log.record(
                    now,
                    &LogEvent::Hold { job: &job.trace_id, units: describe_binding(&new), held, tasks: job.tasks },
                )?;
            }
        }
        // A whole binding (a Bind) is kept as it came; a gang's parts join as runs.
        self.holds[j.idx()].append(new);
        if self.holds[j.idx()].len() < need {
            if first_hold && let Some(t) = timeout {
                self.events.schedule(now + t, EventClass::JobArrival, Ev::HoldTimeout(j, epoch));
            }
            return Ok(());
        }
        let binding = std::mem::take(&mut self.holds[j.idx()]);
        let h = &mut self.bound[j.idx()].hold;
        h.wait = h.first.map(|f| (now - f).0);
        let (oom, held) = h.end(now);
        self.start_bound(j, binding, oom, held, reason)
    }

    /// Takes the resources of `new` tasks of `job` on the ledger, all or none (checked:
    /// nodes up, resources free); returns whether this attempt runs out of GPU memory
    /// (`was_oom`: its gang already did, and its peaks stay out of the GPUs' sums).
    fn take_bindings(&mut self, j: JobId, new: &Binding, was_oom: bool) -> Result<bool, EngineError> {
        let job = &self.jobs[j.idx()];
        let mut oom = was_oom;
        for (taken, (b, n)) in new.runs().enumerate() {
            let state = self.node_state.get(b.node.0 as usize).copied();
            let err = if state != Some(NodeState::Up) {
                Some(format!("node {} is not up", b.node.0))
            } else if job.task.gpus == 0 && b.gpus.is_empty() {
                // Tasks without GPUs cannot run out of GPU memory: taken as a run.
                self.ledger.take_gpuless(&job.task, &job.gpu_models, b, n, !was_oom).err().map(|e| e.to_string())
            } else {
                oom |= self.ledger.runs_out_of_memory(&job.task, b);
                self.ledger.take(&job.task, &job.gpu_models, b, !was_oom).err().map(|e| e.to_string())
            };
            if let Some(e) = err {
                for (prev, m) in new.runs().take(taken) {
                    self.ledger.give_gpuless(&job.task, prev, m, !was_oom);
                }
                return Err(self.invalid(format!("binding of job {}: {e}", job.trace_id)));
            }
        }
        Ok(oom)
    }

    /// Gives back the tasks a waiting job holds, if any, and logs why (`reason`) as a requeue.
    pub(super) fn release_holds(
        &mut self,
        j: JobId,
        reason: Option<impl FnOnce() -> String>,
    ) -> Result<(), EngineError> {
        if self.holds.get(j.idx()).is_none_or(|h| h.is_empty()) {
            return Ok(());
        }
        let job = &self.jobs[j.idx()];
        let (oom, _) = self.bound[j.idx()].hold.end(self.now);
        let held = std::mem::take(&mut self.holds[j.idx()]);
        for (b, n) in held.runs() {
            self.ledger.give_gpuless(&job.task, b, n, !oom);
            if job.constraints.is_some() {
                (0..n).for_each(|_| self.ledger.unlabel_pod(b.node, j.0));
            }
        }
        self.info.released.push(j);
        if let (Some(log), Some(reason)) = (self.log.as_deref_mut(), reason) {
            log.record(self.now, &LogEvent::Requeue { job: &job.trace_id, reason: reason() })?;
        }
        Ok(())
    }

    pub(super) fn bind_job(&mut self, j: JobId, binding: Binding, reason: StartReason) -> Result<(), EngineError> {
        self.hold_tasks(j, binding, None, true, reason)
    }

    /// Starts a job whose tasks all hold their resources.
    pub(super) fn start_bound(
        &mut self,
        j: JobId,
        binding: Binding,
        oom: bool,
        held: u64,
        reason: StartReason,
    ) -> Result<(), EngineError> {
        let job = &self.jobs[j.idx()];
        let cross = job.kind == crate::job::JobKind::DlTrain && job.tasks > 1 && {
            let switch = |b: &TaskBinding| self.ledger.node(b.node).meta.topology.switch.as_ref();
            let mut switches = binding.runs().map(|(b, _)| switch(b));
            let first = switches.next();
            switches.any(|s| Some(s) != first)
        };
        let b = &mut self.bound[j.idx()];
        b.cross_switch = cross;
        b.started_tasks = binding.len() as u32;
        b.oom = oom;
        b.gpu_milli_held = held;
        self.launch(j, UnitSet::new(), binding, 0, oom, reason)?;
        self.bound_under_taints(j)
    }
}
