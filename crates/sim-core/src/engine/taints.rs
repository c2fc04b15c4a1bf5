//! `NoExecute` taints: the pods bound to a tainted node are evicted unless they tolerate
//! the taint — at once, after their `tolerationSeconds`, or never — as Kubernetes' taint
//! eviction controller does (kubernetes v1.31 `pkg/controller/tainteviction/taint_eviction.go`).
//! An evicted pod is deleted and its job requeued as a new pod (the Job controller
//! re-creates it at once: its pod-failure back-off is not modelled).

use super::{Engine, EngineError, Ev, Phase, TaintEviction};
use crate::cluster::NodeId;
use crate::constraints::{NoExecute, Taint, TaintEffect, no_execute};
use crate::event::EventClass;
use crate::job::JobId;

impl Engine<'_> {
    /// A node's taints (none for a run that keeps no ledger).
    pub(super) fn node_taints(&self, node: NodeId) -> &[Taint] {
        self.ledger.nodes().get(node.0 as usize).map_or(&[], |n| &n.meta.taints)
    }

    /// A NoExecute taint of `node` was added, replaced or removed: every pod bound there
    /// is judged again, in start order.
    pub(super) fn no_execute_changed(&mut self, node: NodeId) -> Result<(), EngineError> {
        let mut on_node = self.running_on(node);
        on_node.retain(|j| self.running[j.idx()].as_ref().is_some_and(|r| !r.binding.is_empty()));
        for j in on_node {
            self.judge_no_execute(j)?;
        }
        Ok(())
    }

    /// Job `j` was bound to nodes: judged at once when one of them has a NoExecute taint
    /// (a pod bound to a tainted node it tolerates for a while is evicted that long after).
    pub(super) fn bound_under_taints(&mut self, j: JobId) -> Result<(), EngineError> {
        let tainted = self.running[j.idx()].as_ref().is_some_and(|r| {
            // A node's tasks mostly come together: each run of them looked at once.
            let mut last = None;
            r.binding.runs().any(|(b, _)| {
                let again = last == Some(b.node);
                last = Some(b.node);
                !again && self.node_taints(b.node).iter().any(|t| t.effect == TaintEffect::NoExecute)
            })
        });
        if tainted { self.judge_no_execute(j) } else { Ok(()) }
    }

    /// What the NoExecute taints of its nodes do to running job `j` now: it stays (any
    /// pending eviction cancelled), is evicted now, or is evicted after the shortest
    /// toleration — unless an eviction scheduled earlier is pending, which keeps its time
    /// (the controller keeps the work it queued first).
    fn judge_no_execute(&mut self, j: JobId) -> Result<(), EngineError> {
        let Some(r) = self.running[j.idx()].as_ref() else { return Ok(()) };
        let tolerations = self.jobs[j.idx()].constraints.as_deref().map_or(&[][..], |c| &c.tolerations[..]);
        let default = Some(self.cfg.default_toleration_secs);
        let mut verdict = NoExecute::Stays;
        let mut why = String::new();
        for b in &r.binding {
            let taints = self.node_taints(b.node);
            let v = no_execute(tolerations, taints, default);
            if v != NoExecute::Stays && verdict.min(v) != verdict {
                let keys: Vec<&str> =
                    taints.iter().filter(|t| t.effect == TaintEffect::NoExecute).map(|t| t.key.as_str()).collect();
                why = format!("node {}'s NoExecute taint {}", b.node.0, keys.join(", "));
            }
            verdict = verdict.min(v);
        }
        match verdict {
            NoExecute::Stays => {
                self.taint_evictions.remove(&j);
                Ok(())
            }
            NoExecute::EvictNow => {
                self.requeue(j, format!("evicted: {why} is not tolerated"), crate::outcome::Interruption::Failure)
            }
            NoExecute::EvictAfter(secs) => {
                if self.taint_evictions.get(&j).is_some_and(|e| e.since < self.now) {
                    return Ok(());
                }
                self.taint_tokens += 1;
                let token = self.taint_tokens;
                let at = self.now + crate::time::SimDuration::from_secs(secs);
                let reason = format!("evicted: {why} tolerated for {secs} s");
                self.taint_evictions.insert(j, TaintEviction { since: self.now, token, reason });
                self.events.schedule(at, EventClass::JobEnd, Ev::TaintEvict(j, token));
                Ok(())
            }
        }
    }

    /// A toleration ran out: the job, if its eviction is still the one scheduled, is
    /// evicted and requeued.
    pub(super) fn toleration_over(&mut self, j: JobId, token: u64) -> Result<(), EngineError> {
        if self.taint_evictions.get(&j).is_none_or(|e| e.token != token) {
            return Ok(());
        }
        let e = self.taint_evictions.remove(&j).expect("checked");
        if self.state[j.idx()].phase == Phase::Running {
            self.requeue(j, e.reason, crate::outcome::Interruption::Failure)
        } else {
            Ok(())
        }
    }
}
