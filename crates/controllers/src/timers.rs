//! The timers of a controller that keeps changing nodes (`failures`, `spot`): what is due
//! to each node and when, one engine timer ([`Action::WakeAt`]) asked for each.

use sim_core::controller::Action;
use sim_core::policy::SchedView;
use sim_core::time::SimTime;
use std::collections::BTreeSet;

/// `(when, node, what)` due, in time order.
pub(crate) struct NodeTimers<T: Ord> {
    pending: BTreeSet<(SimTime, u32, T)>,
}

impl<T: Ord> NodeTimers<T> {
    pub(crate) fn new() -> Self {
        NodeTimers { pending: BTreeSet::new() }
    }

    /// `what` is due to `node` at `when`. Once every job has ended nothing is asked for:
    /// nothing is left to interrupt, and the run may end.
    pub(crate) fn at(&mut self, view: &SchedView<'_>, when: SimTime, node: u32, what: T, out: &mut Vec<Action>) {
        if view.jobs_left() > 0 {
            self.at_always(when, node, what, out);
        }
    }

    /// `what` is due to `node` at `when`, asked for even when every job has ended (a node
    /// on its way or leaving must get there, or stay billed for ever).
    pub(crate) fn at_always(&mut self, when: SimTime, node: u32, what: T, out: &mut Vec<Action>) {
        self.pending.insert((when, node, what));
        out.push(Action::WakeAt { at: when });
    }

    /// What is due at the timer that fired (timers fire in time order, one call each).
    pub(crate) fn fired(&mut self) -> Option<(SimTime, u32, T)> {
        self.pending.pop_first()
    }
}
