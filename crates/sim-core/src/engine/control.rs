//! The engine's side of controllers ([`crate::controller`]): starting them, their timers,
//! delivering what they observe, and applying their actions, checked, in the order of
//! the contract in the module documentation.

use super::{Engine, EngineError, Ev, Killed, Phase};
use crate::cluster::{NodeId, NodeState};
use crate::constraints::TaintEffect;
use crate::controller::{Action, Controller, Observed};
use crate::event::EventClass;
use crate::job::JobId;
use crate::log::LogEvent;
use crate::outcome::Outcome;
use crate::time::secs_string;

/// Most rounds of controller deliveries and passes at one instant before the run is
/// called a livelock (controllers reacting to each other for ever).
pub const MAX_CONTROL_ROUNDS: u32 = 1000;

impl Engine<'_> {
    /// Records what happened for the controllers interested in it. `wanted` is the
    /// interest flag of `o`'s kind, read by the caller before making `o`: a run without
    /// interested controllers pays one test per event.
    #[inline(always)]
    pub(super) fn observe(&mut self, wanted: bool, o: impl FnOnce() -> Observed) {
        if wanted {
            self.observed.push(o());
        }
    }

    /// Calls every controller's `start`, in order, and applies its actions.
    pub(super) fn start_controllers(&mut self) -> Result<(), EngineError> {
        for i in 0..self.controllers.len() {
            self.call(i, |c, v, out| c.start(v, out))?;
        }
        Ok(())
    }

    /// A controller's timer fired.
    pub(super) fn controller_timer(&mut self, i: usize) -> Result<(), EngineError> {
        self.call(i, |c, v, out| c.on_timer(v, out)).map(|_| ())
    }

    /// Delivers the observed items, in order, to the interested controllers, in order,
    /// applying each one's actions when it returns; repeats while actions cause new
    /// observations. Returns whether any action was applied.
    #[inline(never)]
    pub(super) fn deliver(&mut self) -> Result<bool, EngineError> {
        let mut acted = false;
        let mut rounds = 0;
        while !self.observed.is_empty() {
            rounds += 1;
            if rounds > MAX_CONTROL_ROUNDS {
                return Err(self.livelock());
            }
            let batch = std::mem::take(&mut self.observed);
            for o in &batch {
                for i in 0..self.controllers.len() {
                    if self.controllers[i].interests().wants(o) {
                        acted |= self.call(i, |c, v, out| c.on_event(v, o, out))?;
                    }
                }
            }
        }
        Ok(acted)
    }

    /// Calls controller `i` through `f` with the current view, then applies the actions
    /// it returned; returns whether it returned any.
    fn call(
        &mut self,
        i: usize,
        f: impl FnOnce(&mut dyn Controller, &crate::policy::SchedView<'_>, &mut Vec<Action>),
    ) -> Result<bool, EngineError> {
        let mut actions = Vec::new();
        let mut c = std::mem::replace(&mut self.controllers[i], Box::new(Placeholder));
        {
            let view = sched_view!(self);
            f(c.as_mut(), &view, &mut actions);
        }
        std::mem::swap(&mut self.controllers[i], &mut c);
        let acted = actions.iter().any(|a| !matches!(a, Action::Note { .. }));
        for a in actions {
            self.apply_action(i, a)?;
        }
        Ok(acted)
    }

    fn livelock(&self) -> EngineError {
        EngineError::ControllerLivelock { time: self.now }
    }

    fn bad_action(&self, i: usize, what: String) -> EngineError {
        EngineError::InvalidAction { controller: self.controllers[i].spec(), time: self.now, what }
    }

    fn running(&self, i: usize, job: JobId, what: &str) -> Result<(), EngineError> {
        if self.state.get(job.idx()).is_none() || self.state[job.idx()].phase != Phase::Running {
            return Err(self.bad_action(i, format!("{what} of job index {}, which is not running", job.0)));
        }
        Ok(())
    }

    fn known_node(&self, i: usize, node: NodeId) -> Result<(), EngineError> {
        if node.0 >= self.cluster.node_count() {
            return Err(self.bad_action(i, format!("node {} does not exist", node.0)));
        }
        Ok(())
    }

    /// Applies one action of controller `i`.
    fn apply_action(&mut self, i: usize, a: Action) -> Result<(), EngineError> {
        match a {
            Action::WakeAt { at } => {
                if at < self.now {
                    return Err(self.bad_action(i, format!("a timer at {} before now", secs_string(at.0))));
                }
                self.events.schedule(at, EventClass::Controller, Ev::Timer(i as u32));
            }
            Action::SetNodeState { node, state } => {
                self.known_node(i, node)?;
                self.node_change(node, state)?;
            }
            Action::SetTaint { node, taint } => {
                self.known_node(i, node)?;
                let no_execute = taint.effect == TaintEffect::NoExecute;
                self.ledger.edit_meta(node, |m| {
                    m.taints.retain(|t| !(t.key == taint.key && t.effect == taint.effect));
                    m.taints.push(taint);
                });
                self.info.capacity_changed = true;
                if no_execute {
                    self.no_execute_changed(node)?;
                }
            }
            Action::ClearTaint { node, key } => {
                self.known_node(i, node)?;
                let no_execute =
                    self.node_taints(node).iter().any(|t| t.key == key && t.effect == TaintEffect::NoExecute);
                self.ledger.edit_meta(node, |m| m.taints.retain(|t| t.key != key));
                self.info.capacity_changed = true;
                if no_execute {
                    self.no_execute_changed(node)?;
                }
            }
            Action::SetLabel { node, key, value } => {
                self.known_node(i, node)?;
                self.ledger.edit_meta(node, |m| {
                    m.labels.insert(key, value);
                });
                self.info.capacity_changed = true;
            }
            Action::ClearLabel { node, key } => {
                self.known_node(i, node)?;
                self.ledger.edit_meta(node, |m| {
                    m.labels.remove(&key);
                });
                self.info.capacity_changed = true;
            }
            Action::SetNodeDomain { node, domain, reclaim } => {
                self.known_node(i, node)?;
                self.known_domain(i, domain)?;
                if let Some(r) = reclaim {
                    self.known_domain(i, r.by)?;
                }
                let n = node.0 as usize;
                let (from, was) = (self.domains.owner[n], self.domains.reclaim[n]);
                self.domains.owner[n] = domain;
                self.domains.reclaim[n] = reclaim;
                if from != domain {
                    self.domains.moves.push(crate::domain::DomainMove { at: self.now, node, from, to: domain });
                    if let Some(log) = self.log.as_deref_mut() {
                        let spec = self.controllers[i].spec();
                        let by = spec.split('[').next().unwrap_or_default();
                        let reason = format!(
                            "node {} from {} to {}{}",
                            node.0,
                            self.cfg.domains[from as usize],
                            self.cfg.domains[domain as usize],
                            if reclaim.is_some() { " (lent: its lender may evict)" } else { "" }
                        );
                        log.record(self.now, &LogEvent::Controller { by, what: "move-node", reason: &reason })?;
                    }
                }
                if from != domain || was != reclaim {
                    self.info.capacity_changed = true;
                    self.node_epoch += 1;
                }
            }
            Action::RouteDomain { domain, route } => {
                self.known_domain(i, domain)?;
                self.known_domain(i, route.scheduler)?;
                if self.domains.routes[domain as usize] != route {
                    self.domains.routes[domain as usize] = route;
                    self.info.capacity_changed = true;
                    self.node_epoch += 1;
                }
            }
            other => self.apply_job_action(i, other)?,
        }
        Ok(())
    }

    fn known_domain(&self, i: usize, d: u8) -> Result<(), EngineError> {
        if d as usize >= self.cfg.domains.len() {
            let what = match self.cfg.domains.len() {
                0 => format!("domain {d} in a run without scheduling domains"),
                n => format!("domain {d}, the run has {n} ({})", self.cfg.domains.join(", ")),
            };
            return Err(self.bad_action(i, what));
        }
        Ok(())
    }

    /// Applies one action of controller `i` on a job.
    fn apply_job_action(&mut self, i: usize, a: Action) -> Result<(), EngineError> {
        match a {
            Action::Evict { job, grace, reason } => {
                self.running(i, job, "eviction")?;
                if grace.0 == 0 {
                    self.requeue(job, reason, crate::outcome::Interruption::Eviction)?;
                } else {
                    let attempt = self.state[job.idx()].attempts;
                    self.evicting.insert(job, (reason, crate::outcome::Interruption::Eviction));
                    self.events.schedule(self.now + grace, EventClass::JobEnd, Ev::Evict(job, attempt));
                }
            }
            Action::Checkpoint { job } => {
                self.running(i, job, "checkpoint")?;
                if !self.stalled_at.contains_key(&job) {
                    self.checkpoint(job);
                }
            }
            Action::Stall { job } => {
                self.running(i, job, "stall")?;
                self.halt(job);
            }
            Action::Resubmit { job, at } => {
                match self.killed.remove(&job) {
                    Some(Killed::Released(_)) => {}
                    Some(Killed::Moot) => return Ok(()),
                    Some(Killed::InPlace) => {
                        self.killed.insert(job, Killed::InPlace);
                        let what = "its pod keeps its binding (restart policy OnFailure): Restart or GiveUp it";
                        return Err(self.bad_action(i, format!("resubmission of job index {}: {what}", job.0)));
                    }
                    None => {
                        return Err(self.bad_action(i, format!("resubmission of job index {}, not killed", job.0)));
                    }
                }
                let at = at.max(self.now);
                self.events.schedule(at, EventClass::JobArrival, Ev::Retry(job));
                if let Some(log) = self.log.as_deref_mut() {
                    let why = format!("out of GPU memory; retried at {}", secs_string(at.0));
                    log.record(self.now, &LogEvent::Requeue { job: &self.jobs[job.idx()].trace_id, reason: why })?;
                }
            }
            Action::GiveUp { job } => {
                let units = match self.killed.remove(&job) {
                    Some(Killed::Released(units)) => units,
                    Some(Killed::InPlace) => return self.await_restart(job, true),
                    Some(Killed::Moot) => return Ok(()),
                    None => return Err(self.bad_action(i, format!("giving up job index {}, not killed", job.0))),
                };
                let st = &mut self.state[job.idx()];
                st.units = units;
                st.phase = Phase::Done;
                st.end = Some(self.now);
                st.outcome = Some(Outcome::OomKilled);
                self.ended_now(job);
                self.observe(self.interests.ends, || Observed::Ended { job });
            }
            Action::Restart { job } => match self.killed.remove(&job) {
                Some(Killed::InPlace) => self.await_restart(job, false)?,
                Some(Killed::Moot) => {}
                Some(k @ Killed::Released(_)) => {
                    self.killed.insert(job, k);
                    let what = "its pod failed (restart policy Never): Resubmit or GiveUp it";
                    return Err(self.bad_action(i, format!("restart of job index {}: {what}", job.0)));
                }
                None => return Err(self.bad_action(i, format!("restart of job index {}, not killed", job.0))),
            },
            Action::Submit { job } => self.submit(*job)?,
            Action::Stop { job, reason } => match self.state.get(job.idx()).map(|s| s.phase) {
                Some(Phase::Running) => self.end_running(job, Outcome::Completed)?,
                Some(Phase::Waiting) => {
                    self.withdraw(job, reason)?;
                    self.leave_queue(&[job]);
                }
                Some(Phase::BackingOff) => self.stop_backing_off(i, job)?,
                // Already ended: nothing to stop.
                Some(Phase::Done) => {}
                _ => {
                    return Err(self.bad_action(i, format!("stop of job index {}, not running nor waiting", job.0)));
                }
            },
            Action::Note { what, reason } => {
                if let Some(log) = self.log.as_deref_mut() {
                    let spec = self.controllers[i].spec();
                    let by = spec.split('[').next().unwrap_or_default();
                    log.record(self.now, &LogEvent::Controller { by, what: &what, reason: &reason })?;
                }
            }
            Action::WakeAt { .. }
            | Action::SetNodeState { .. }
            | Action::SetTaint { .. }
            | Action::ClearTaint { .. }
            | Action::SetLabel { .. }
            | Action::ClearLabel { .. }
            | Action::SetNodeDomain { .. }
            | Action::RouteDomain { .. } => unreachable!("node actions are applied by apply_action"),
        }
        Ok(())
    }

    /// A job killed for running out of GPU memory and waiting for its re-creation is
    /// deleted for good: it ends `oom_killed` now (its retry, if asked for, does nothing).
    fn stop_backing_off(&mut self, i: usize, job: JobId) -> Result<(), EngineError> {
        let units = match self.killed.remove(&job) {
            Some(Killed::Released(units)) => Some(units),
            Some(Killed::InPlace) => {
                self.killed.insert(job, Killed::InPlace);
                let what = "killed in place (restart policy OnFailure): Restart or GiveUp it";
                return Err(self.bad_action(i, format!("stop of job index {}: {what}", job.0)));
            }
            Some(Killed::Moot) | None => None,
        };
        let st = &mut self.state[job.idx()];
        if let Some(u) = units {
            st.units = u;
        }
        st.phase = Phase::Done;
        st.end = Some(self.now);
        st.outcome = Some(Outcome::OomKilled);
        self.ended_now(job);
        self.observe(self.interests.ends, || Observed::Ended { job });
        Ok(())
    }

    /// An eviction's grace period is over: the attempt it was given for, if still
    /// running, stops and the job goes back to the queue (or, cancelled, ends
    /// `preempted`).
    pub(super) fn evict_now(&mut self, j: JobId, attempt: u32) -> Result<(), EngineError> {
        let Some((reason, cause)) = self.evicting.remove(&j) else { return Ok(()) };
        let cancel = self.cancelling.remove(&j);
        let st = &self.state[j.idx()];
        if st.phase == Phase::Running && st.attempts == attempt {
            if cancel {
                self.cancel_running(j, reason)?;
            } else {
                self.requeue(j, reason, cause)?;
            }
        }
        Ok(())
    }
}

/// Stands in for a controller while it is being called.
struct Placeholder;

impl Controller for Placeholder {
    fn spec(&self) -> String {
        "placeholder".into()
    }
}

/// Whether `state` takes the node's capacity away.
pub(super) fn is_gone(state: NodeState) -> bool {
    matches!(state, NodeState::Down | NodeState::Absent)
}
