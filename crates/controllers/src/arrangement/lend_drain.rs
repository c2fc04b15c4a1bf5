//! `lend-drain`: Slinky's slurm-operator (`SlinkyProject/slurm-operator`): Slurm's nodes
//! are a NodeSet of slurmd pods that KEDA scales on Slurm's pending work. When Slurm has
//! nothing waiting, its idle nodes are lent to Kubernetes (the NodeSet scales in; KEDA
//! polls every 30 s and scales in only after its 300 s cooldown); when Slurm has work
//! waiting that its idle nodes cannot take, lent nodes come back by draining: Kubernetes
//! places nothing new there and the node returns when its last pod ends — "running jobs
//! are not interrupted" — so the Slurm jobs waiting for it wait.
//!
//! A node moving either way is drained for `move_delay` (the slurmd pod deleted or
//! created: Kubernetes' default `terminationGracePeriodSeconds`, 30 s) before its new
//! owner may use it.

use super::{Sides, Step, begin, gpus_in_use, idle, nodes_wanted, secs, to_lend, waiting};
use crate::timers::NodeTimers;
use sim_core::cluster::{NodeId, NodeState};
use sim_core::controller::{Action, Controller, Interests, Observed};
use sim_core::policy::SchedView;
use sim_core::spec::{Chosen, OptionInfo, Spec, SpecError, canonical_values};
use sim_core::time::SimTime;

/// `poll=<seconds>`.
pub const POLL: OptionInfo =
    OptionInfo { key: "poll", values: &["30", "<integer>"], doc: "KEDA's pollingInterval, seconds" };
/// `cooldown=<seconds>`.
pub const COOLDOWN: OptionInfo = OptionInfo {
    key: "cooldown",
    values: &["300", "<integer>"],
    doc: "KEDA's cooldownPeriod: seconds Slurm must have had nothing waiting before its nodes are lent",
};
/// `move_delay=<seconds>`.
pub const MOVE_DELAY: OptionInfo = OptionInfo {
    key: "move_delay",
    values: &["30", "<integer>"],
    doc: "seconds a node moving between the domains is unusable (the slurmd pod deleted or created; \
          terminationGracePeriodSeconds 30)",
};
/// `keep=<nodes>`.
pub const KEEP: OptionInfo =
    OptionInfo { key: "keep", values: &["0", "<integer>"], doc: "nodes Slurm never lends (the NodeSet's minReplicas)" };

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    /// Not Slurm's at the start: Kubernetes' own, never moved.
    Fixed,
    Slurm,
    /// Lent, unusable until its move is over.
    ToK8s,
    K8s,
    /// Wanted back: drained, its pods running to their end.
    Returning,
    /// Given back, unusable until its move is over.
    ToSlurm,
}

/// Lending with drain (see the module documentation).
pub struct LendDrain {
    poll: u64,
    cooldown: u64,
    move_delay: u64,
    keep: u64,
    sides: Option<Sides>,
    phase: Vec<Phase>,
    timers: NodeTimers<Step>,
    /// The last poll at which Slurm had work waiting.
    slurm_busy_at: Option<SimTime>,
}

impl LendDrain {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[POLL, COOLDOWN, MOVE_DELAY, KEEP];

    /// Builds it from a spec.
    pub fn from_spec(spec: &Spec) -> Result<Self, SpecError> {
        let c = Chosen::check(spec, Self::OPTIONS, "controller")?;
        Ok(LendDrain {
            poll: c.number(POLL).unwrap_or(30).max(1),
            cooldown: c.number(COOLDOWN).unwrap_or(300),
            move_delay: c.number(MOVE_DELAY).unwrap_or(30),
            keep: c.number(KEEP).unwrap_or(0),
            sides: None,
            phase: Vec::new(),
            timers: NodeTimers::new(),
            slurm_busy_at: None,
        })
    }

    fn count(&self, p: Phase) -> u64 {
        self.phase.iter().filter(|&&x| x == p).count() as u64
    }

    /// A node arrives (now, or when its move is over).
    fn arrive_later(&mut self, view: &SchedView<'_>, node: u32, out: &mut Vec<Action>) {
        if self.move_delay == 0 {
            self.arrive(node, out);
        } else {
            self.timers.at_always(view.now() + secs(self.move_delay), node, Step::Arrive, out);
        }
    }

    fn arrive(&mut self, node: u32, out: &mut Vec<Action>) {
        let Some(s) = self.sides else { return };
        let (domain, next) = match self.phase[node as usize] {
            Phase::ToK8s => (s.k8s, Phase::K8s),
            Phase::ToSlurm => (s.slurm, Phase::Slurm),
            _ => return,
        };
        self.phase[node as usize] = next;
        out.push(Action::SetNodeDomain { node: NodeId(node), domain, reclaim: None });
        out.push(Action::SetNodeState { node: NodeId(node), state: NodeState::Up });
    }

    /// Returning nodes whose last pod has ended start their move back.
    fn drained(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        for n in 0..self.phase.len() as u32 {
            if self.phase[n as usize] == Phase::Returning && view.all_jobs_on(NodeId(n)).is_empty() {
                self.phase[n as usize] = Phase::ToSlurm;
                out.push(Action::Note { what: "drained".into(), reason: format!("node {n}: its last pod ended") });
                self.arrive_later(view, n, out);
            }
        }
    }

    fn poll(&mut self, view: &SchedView<'_>, s: Sides, out: &mut Vec<Action>) {
        let now = view.now();
        let wanted = nodes_wanted(view, s.slurm);
        if waiting(view, s.slurm).next().is_some() {
            self.slurm_busy_at = Some(now);
        }
        let nodes = self.phase.len() as u32;
        let idle_slurm = (0..nodes).filter(|&n| self.phase[n as usize] == Phase::Slurm && idle(view, n)).count() as u64;
        let coming = self.count(Phase::Returning) + self.count(Phase::ToSlurm);
        let short = wanted.saturating_sub(idle_slurm + coming);
        if short > 0 {
            // KEDA scales the NodeSet out: the lent nodes that drain soonest (fewest GPUs
            // in use) come back.
            let mut lent: Vec<(u64, u32)> = (0..nodes)
                .filter(|&n| self.phase[n as usize] == Phase::K8s)
                .map(|n| (gpus_in_use(view, n), n))
                .collect();
            lent.sort_unstable();
            for &(_, n) in lent.iter().take(short as usize) {
                self.phase[n as usize] = Phase::Returning;
                out.push(Action::SetNodeState { node: NodeId(n), state: NodeState::Draining });
                out.push(Action::Note {
                    what: "reclaim".into(),
                    reason: format!("node {n}: Slurm wants {wanted} nodes of work, drained back from Kubernetes"),
                });
            }
            self.drained(view, out);
        } else if self.slurm_busy_at.is_none_or(|t| t < now && now.saturating_since(t) >= secs(self.cooldown))
            && waiting(view, s.k8s).next().is_some()
        {
            let phase = &self.phase;
            let give = to_lend(
                view,
                s,
                |n| phase[n as usize] == Phase::Slurm,
                |n| matches!(phase[n as usize], Phase::Fixed | Phase::K8s),
                self.count(Phase::ToK8s),
                self.count(Phase::Slurm).saturating_sub(self.keep),
            );
            for n in give {
                self.phase[n as usize] = Phase::ToK8s;
                out.push(Action::SetNodeState { node: NodeId(n), state: NodeState::Draining });
                out.push(Action::Note {
                    what: "lend".into(),
                    reason: format!("node {n}: idle, Slurm has nothing waiting, Kubernetes has pods pending"),
                });
                self.arrive_later(view, n, out);
            }
        }
        self.timers.at(view, now + secs(self.poll), u32::MAX, Step::Poll, out);
    }
}

impl Controller for LendDrain {
    fn may_relabel(&self) -> bool {
        false
    }
    fn spec(&self) -> String {
        canonical_values(
            "lend-drain",
            &[
                ("poll", self.poll.to_string()),
                ("cooldown", self.cooldown.to_string()),
                ("move_delay", self.move_delay.to_string()),
                ("keep", self.keep.to_string()),
            ],
        )
    }
    fn interests(&self) -> Interests {
        Interests { ends: true, ..Interests::default() }
    }
    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        if let Some((s, phase)) = begin(view, &mut self.timers, Phase::Slurm, Phase::Fixed, out) {
            (self.sides, self.phase) = (Some(s), phase);
        }
    }
    fn on_timer(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let (Some(s), Some((_, node, step))) = (self.sides, self.timers.fired()) else { return };
        match step {
            Step::Poll => self.poll(view, s, out),
            Step::Arrive => self.arrive(node, out),
        }
    }
    fn on_event(&mut self, view: &SchedView<'_>, event: &Observed, out: &mut Vec<Action>) {
        if matches!(event, Observed::Ended { .. }) && self.phase.contains(&Phase::Returning) {
            self.drained(view, out);
        }
    }
}
