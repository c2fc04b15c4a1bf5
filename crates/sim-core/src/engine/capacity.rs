//! Processor units and node states: taking and giving back units, nodes going down,
//! draining and coming back.

use super::{Engine, EngineError, Phase};
use crate::cluster::{NodeId, NodeState};
use crate::job::JobId;
use crate::log::LogEvent;
use crate::policy::{RunningJob, StartReason};
use crate::units::UnitSet;

impl Engine<'_> {
    pub(super) fn start_job(
        &mut self,
        j: JobId,
        units: Option<UnitSet>,
        reason: StartReason,
    ) -> Result<(), EngineError> {
        let need = self.jobs[j.idx()].units();
        if self.state[j.idx()].phase != Phase::Waiting {
            return Err(self.invalid(format!("start of job {} which is not waiting", self.jobs[j.idx()].trace_id)));
        }
        let set = match units {
            None => match self.free.take_lowest(need) {
                Some(s) => s,
                None => {
                    return Err(self.invalid(format!(
                        "start of job {} needing {} units with {} free",
                        self.jobs[j.idx()].trace_id,
                        need,
                        self.free.count()
                    )));
                }
            },
            Some(s) => {
                if s.len() != need {
                    return Err(self.invalid(format!(
                        "job {} needs {} units, decision gives {}",
                        self.jobs[j.idx()].trace_id,
                        need,
                        s.len()
                    )));
                }
                if !self.free.take(&s) {
                    return Err(self.invalid(format!(
                        "job {} placed on units {} that are not all free",
                        self.jobs[j.idx()].trace_id,
                        s.to_interval_string()
                    )));
                }
                s
            }
        };
        self.allocated += need;
        self.launch(j, set, crate::binding::Binding::new(), need, false, reason)?;
        debug_assert!(self.allocated + self.free.count() <= self.total_units, "units over-allocated");
        Ok(())
    }

    /// Takes a running job off its units; returns them to the pool where their node is up.
    pub(super) fn release(&mut self, j: JobId) -> RunningJob {
        self.account_energy(j);
        self.taint_evictions.remove(&j);
        let r = self.running[j.idx()].take().expect("releasing a running job");
        let job = &self.jobs[j.idx()];
        // A suspended job lent its CPUs and GPUs: only the rest is given back.
        let lent = self.suspended.remove(&j).is_some();
        let peak = self.bound.get(j.idx()).is_none_or(|b| !b.oom);
        for (b, n) in r.binding.runs() {
            if lent {
                (0..n).for_each(|_| self.ledger.give_lent(&job.task, b, peak));
            } else {
                self.ledger.give_gpuless(&job.task, b, n, peak);
            }
            if job.constraints.is_some() {
                (0..n).for_each(|_| self.ledger.unlabel_pod(b.node, j.0));
            }
        }
        let seq = self.state[j.idx()].start_seq;
        self.running_by_start.remove(&(seq, j));
        if self.running_on_nodes.kept() {
            self.running_on_nodes.remove(seq, j, &r.nodes(self.cluster));
        }
        self.running_by_requested_end.remove(&(r.requested_end, seq, j, r.count));
        self.allocated -= r.count;
        if self.free.is_counted() {
            self.free.give_count(r.count);
        }
        for &(a, n) in r.units.ranges() {
            if self.nodes_not_up == 0 {
                self.free.give(a, n);
            } else {
                for u in a..a + n {
                    let node = self.cluster.node_of_unit(u as u64).expect("unit of the cluster");
                    if self.node_state[node.0 as usize] == NodeState::Up {
                        self.free.give(u, 1);
                    }
                }
            }
        }
        self.info.released.push(j);
        r
    }

    /// Whether running job `j` is bound to nodes (rather than holding processor units).
    fn bound_to_nodes(&self, j: JobId) -> bool {
        self.running[j.idx()].as_ref().is_some_and(|r| !r.binding.is_empty())
    }

    /// Job `j`'s node went down under the Kubernetes node lifecycle: its pod there stops
    /// (the job makes no progress, its work since the last checkpoint is lost) but stays
    /// bound, holding its resources, until it is evicted or the node comes back.
    fn stall(&mut self, j: JobId) {
        self.halt(j);
        self.bound[j.idx()].stalled = true;
    }

    /// The jobs running on `node` (not suspended), in start order: a bound job's tasks, or
    /// a job's units, are there.
    pub(super) fn running_on(&self, node: NodeId) -> Vec<JobId> {
        match self.running_on_nodes.on(node.0) {
            Some(on) => on.collect(),
            None => self
                .running_by_start
                .iter()
                .map(|&(_, j)| j)
                .filter(|j| self.running[j.idx()].as_ref().expect("running").runs_on(self.cluster, node))
                .collect(),
        }
    }

    /// `node`, down, is now in state `to`: removed, the jobs stalled on it are requeued
    /// (their pods deleted with the node); up or draining, those whose nodes are all
    /// back get their pods back ([`Engine::node_back`]); in start order.
    fn stalled_node_back(&mut self, node: NodeId, to: NodeState) -> Result<(), EngineError> {
        let gone = super::control::is_gone;
        let mut back = self.running_on(node);
        back.retain(|j| {
            let r = self.running[j.idx()].as_ref().expect("running");
            self.bound[j.idx()].stalled
                && !r.binding.is_empty()
                && (gone(to) || r.binding.runs().all(|(b, _)| !gone(self.node_state[b.node.0 as usize])))
        });
        for j in back {
            if gone(to) {
                self.requeue(j, format!("node {} removed", node.0), crate::outcome::Interruption::Eviction)?;
            } else {
                self.node_back(j, node.0)?;
            }
        }
        Ok(())
    }

    pub(super) fn node_change(&mut self, node: NodeId, to: NodeState) -> Result<(), EngineError> {
        let from = self.node_state[node.0 as usize];
        if from == to {
            return Ok(());
        }
        self.node_epoch += 1;
        let (spec, first) = self.cluster.node(node).expect("checked at start");
        let (first, cores) = (first as u32, spec.cores);
        let gone = super::control::is_gone;
        if gone(to) && !gone(from) {
            let victims = self.running_on(node);
            // Suspended jobs there are requeued too (Slurm requeues or kills the jobs of a
            // node that fails, suspended or not).
            let suspended: Vec<JobId> = self
                .suspended
                .keys()
                .copied()
                .filter(|j| self.running[j.idx()].as_ref().is_some_and(|r| r.binding.runs_on(node)))
                .collect();
            let holders: Vec<JobId> = self
                .queue
                .iter()
                .copied()
                .filter(|j| self.holds.get(j.idx()).is_some_and(|h| h.iter().any(|t| t.node == node)))
                .collect();
            for j in holders {
                self.release_holds(j, None::<fn() -> String>)?;
            }
            // Mark first so the victims' units on this node do not return to the pool.
            self.node_state[node.0 as usize] = to;
            self.nodes_not_up += usize::from(from == NodeState::Up);
            for j in suspended {
                let why = if to == NodeState::Down { "down" } else { "removed" };
                self.requeue(j, format!("node {} {why}", node.0), interruption_by(to))?;
            }
            for j in victims {
                if to == NodeState::Down && self.kube_nodes && self.bound_to_nodes(j) {
                    self.stall(j);
                } else {
                    let why = if to == NodeState::Down { "down" } else { "removed" };
                    self.requeue(j, format!("node {} {why}", node.0), interruption_by(to))?;
                }
            }
        } else {
            self.node_state[node.0 as usize] = to;
            if from == NodeState::Up {
                self.nodes_not_up += 1;
            }
            if to == NodeState::Up {
                self.nodes_not_up -= 1;
            }
            if from == NodeState::Down && self.kube_nodes {
                self.stalled_node_back(node, to)?;
            }
        }
        if from == NodeState::Up {
            for u in first..first + cores {
                if self.free.contains(u) {
                    self.free.take(&UnitSet::range(u, 1));
                }
            }
            self.capacity -= cores as u64;
        } else if to == NodeState::Up {
            // Its units that no job still running there holds (a draining node's jobs
            // keep theirs) go back to the pool.
            let on_node = self.running_on(node);
            for u in first..first + cores {
                let held = on_node.iter().any(|j| self.running[j.idx()].as_ref().is_some_and(|r| r.units.contains(u)));
                if !held {
                    self.free.give(u, 1);
                }
            }
            self.capacity += cores as u64;
        }
        self.info.capacity_changed = true;
        self.observe(self.interests.nodes, || crate::controller::Observed::NodeChanged { node, state: to });
        if let Some(log) = self.log.as_deref_mut() {
            let state = match to {
                NodeState::Up => "up",
                NodeState::Draining => "draining",
                NodeState::Down => "down",
                NodeState::Absent => "absent",
            };
            log.record(self.now, &LogEvent::Node { node: node.0, state })?;
        }
        Ok(())
    }
}

/// What interrupts the jobs of a node that goes to `to`: a failure when it is down, an
/// eviction when it is removed (a spot node reclaimed, a node scaled in).
fn interruption_by(to: NodeState) -> crate::outcome::Interruption {
    if to == NodeState::Down { crate::outcome::Interruption::Failure } else { crate::outcome::Interruption::Eviction }
}
