//! `node-lifecycle`: Kubernetes' node lifecycle controller, for nodes that go down.

use super::{Action, Controller, Interests, Observed};
use crate::cluster::{NodeId, NodeState};
use crate::constraints::{TAINT_UNREACHABLE, Taint, TaintEffect};
use crate::policy::SchedView;
use crate::time::SimDuration;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Kubernetes' node lifecycle controller (kubernetes v1.31
/// `pkg/controller/nodelifecycle/node_lifecycle_controller.go`): a node that stops
/// reporting is taken for ready for `--node-monitor-grace-period`
/// ([`crate::SimConfig::node_monitor_grace`]), then its `Ready` condition becomes
/// `Unknown` and it is tainted `node.kubernetes.io/unreachable:NoExecute`, which evicts its
/// pods after their tolerations ([`crate::constraints::no_execute`]: 300 s for a pod that
/// declares none). When the node reports again the taint is removed.
///
/// Built in: attached under [`crate::engine::NodeLifecycle::Kubernetes`] (by default when
/// the policy binds nodes) in runs whose nodes may change, after `node-events` and before
/// `job-retry`.
///
/// Not modelled: the `node-monitor-period` (5 s) between its checks and the kubelet's
/// 10 s heartbeat, which make the real taint come up to about 15 s later; the eviction
/// rate limits of a zone with many unhealthy nodes (`--node-eviction-rate`,
/// `--secondary-node-eviction-rate`); the `unreachable:NoSchedule` taint (a down node takes
/// no pods here anyway); `not-ready` nodes (kubelet up, node unhealthy).
pub struct NodeLifecycleController {
    grace: SimDuration,
    /// The outage each timer was asked for, in the order asked (all grace periods are
    /// equal, so timers fire in that order).
    timers: VecDeque<(NodeId, u64)>,
    /// Nodes down now, with the number of their outage.
    down: BTreeMap<NodeId, u64>,
    outages: u64,
    /// Nodes it tainted and has not cleared yet.
    tainted: BTreeSet<NodeId>,
}

impl NodeLifecycleController {
    /// A controller that taints a node `grace` after it goes down.
    pub fn new(grace: SimDuration) -> Self {
        NodeLifecycleController {
            grace,
            timers: VecDeque::new(),
            down: BTreeMap::new(),
            outages: 0,
            tainted: BTreeSet::new(),
        }
    }
}

impl Controller for NodeLifecycleController {
    fn spec(&self) -> String {
        format!("node-lifecycle[grace={}]", crate::time::secs_string(self.grace.0))
    }
    fn may_relabel(&self) -> bool {
        false
    }
    fn interests(&self) -> Interests {
        Interests { nodes: true, ..Interests::default() }
    }
    fn on_event(&mut self, view: &SchedView<'_>, event: &Observed, out: &mut Vec<Action>) {
        let Observed::NodeChanged { node, state } = *event else { return };
        if state == NodeState::Down {
            if self.down.contains_key(&node) {
                return;
            }
            self.outages += 1;
            self.down.insert(node, self.outages);
            self.timers.push_back((node, self.outages));
            out.push(Action::WakeAt { at: view.now() + self.grace });
        } else {
            self.down.remove(&node);
            if self.tainted.remove(&node) {
                out.push(Action::ClearTaint { node, key: TAINT_UNREACHABLE.into() });
            }
        }
    }
    fn on_timer(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
        let Some((node, outage)) = self.timers.pop_front() else { return };
        if self.down.get(&node) == Some(&outage) {
            self.tainted.insert(node);
            let taint = Taint { key: TAINT_UNREACHABLE.into(), value: String::new(), effect: TaintEffect::NoExecute };
            out.push(Action::SetTaint { node, taint });
        }
    }
}
