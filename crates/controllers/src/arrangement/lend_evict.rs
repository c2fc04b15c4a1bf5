//! `lend-evict`: CoreWeave SUNK's pod scheduler (docs.coreweave.com, SUNK): Slurm owns
//! the GPUs; Kubernetes pods run on Slurm nodes that no Slurm job uses. When a Slurm job
//! is given such a node, the node is locked (taint `sunk.coreweave.com/lock`): its pods
//! get the kill wait (`--slurm-kill-wait`, 30 s), are evicted and requeued by their
//! controller, and the Slurm job starts when they are gone (the lock itself is the
//! composite policy's, `policies::Domains`; this controller lends and takes back).
//!
//! Every `poll` seconds, while pods are pending and the Kubernetes nodes cannot take
//! them, idle Slurm nodes are lent (owned by Kubernetes, Slurm keeping the right to
//! take them back); a lent node is Slurm's again when a Slurm job starts there, or when
//! it is idle and no pod is pending. SUNK schedules pods straight onto Slurm's nodes:
//! `move_delay` (default 0) adds a relabel time to a lend.

use super::{Sides, Step, begin, idle, secs, to_lend, waiting};
use crate::timers::NodeTimers;
use sim_core::cluster::NodeId;
use sim_core::controller::{Action, Controller, Interests, Observed};
use sim_core::domain::Reclaim;
use sim_core::policy::SchedView;
use sim_core::spec::{Chosen, OptionInfo, Spec, SpecError, canonical_values};

/// `poll=<seconds>`.
pub const POLL: OptionInfo = OptionInfo {
    key: "poll",
    values: &["30", "<integer>"],
    doc: "seconds between looks at the pending pods and the idle Slurm nodes",
};
/// `kill_wait=<seconds>`.
pub const KILL_WAIT: OptionInfo = OptionInfo {
    key: "kill_wait",
    values: &["30", "<integer>"],
    doc: "SUNK's --slurm-kill-wait: seconds the pods of a node a Slurm job takes may still run",
};
/// `move_delay=<seconds>`.
pub const MOVE_DELAY: OptionInfo = OptionInfo {
    key: "move_delay",
    values: &["0", "<integer>"],
    doc: "seconds before a node lent to Kubernetes takes pods (SUNK schedules pods onto Slurm's nodes at once)",
};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    /// Not Slurm's at the start: Kubernetes' own, never moved.
    Fixed,
    Slurm,
    ToK8s,
    Lent,
}

/// Lending with eviction (see the module documentation).
pub struct LendEvict {
    poll: u64,
    kill_wait: u64,
    move_delay: u64,
    sides: Option<Sides>,
    phase: Vec<Phase>,
    timers: NodeTimers<Step>,
}

impl LendEvict {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[POLL, KILL_WAIT, MOVE_DELAY];

    /// Builds it from a spec.
    pub fn from_spec(spec: &Spec) -> Result<Self, SpecError> {
        let c = Chosen::check(spec, Self::OPTIONS, "controller")?;
        Ok(LendEvict {
            poll: c.number(POLL).unwrap_or(30).max(1),
            kill_wait: c.number(KILL_WAIT).unwrap_or(30),
            move_delay: c.number(MOVE_DELAY).unwrap_or(0),
            sides: None,
            phase: Vec::new(),
            timers: NodeTimers::new(),
        })
    }

    fn lend(&mut self, view: &SchedView<'_>, node: u32, out: &mut Vec<Action>) {
        let Some(s) = self.sides else { return };
        // Slurm may have started a job there meanwhile.
        if self.phase[node as usize] != Phase::ToK8s || !idle(view, node) {
            self.phase[node as usize] = Phase::Slurm;
            return;
        }
        self.phase[node as usize] = Phase::Lent;
        let reclaim = Some(Reclaim { by: s.slurm, kill_wait: secs(self.kill_wait) });
        out.push(Action::SetNodeDomain { node: NodeId(node), domain: s.k8s, reclaim });
    }

    fn give_back(&mut self, node: u32, why: String, out: &mut Vec<Action>) {
        let Some(s) = self.sides else { return };
        self.phase[node as usize] = Phase::Slurm;
        out.push(Action::SetNodeDomain { node: NodeId(node), domain: s.slurm, reclaim: None });
        out.push(Action::Note { what: "reclaim".into(), reason: format!("node {node}: {why}") });
    }

    fn poll(&mut self, view: &SchedView<'_>, s: Sides, out: &mut Vec<Action>) {
        let nodes = self.phase.len() as u32;
        if waiting(view, s.k8s).next().is_some() {
            let phase = &self.phase;
            let coming = phase.iter().filter(|&&p| p == Phase::ToK8s).count() as u64;
            let give = to_lend(
                view,
                s,
                |n| phase[n as usize] == Phase::Slurm,
                |n| matches!(phase[n as usize], Phase::Fixed | Phase::Lent),
                coming,
                u64::MAX,
            );
            for n in give {
                self.phase[n as usize] = Phase::ToK8s;
                out.push(Action::Note {
                    what: "lend".into(),
                    reason: format!("node {n}: idle in Slurm, Kubernetes has pods pending (Slurm may take it back)"),
                });
                if self.move_delay == 0 {
                    self.lend(view, n, out);
                } else {
                    self.timers.at_always(view.now() + secs(self.move_delay), n, Step::Arrive, out);
                }
            }
        } else {
            for n in 0..nodes {
                if self.phase[n as usize] == Phase::Lent && idle(view, n) {
                    self.give_back(n, "idle and no pod pending".into(), out);
                }
            }
        }
        self.timers.at(view, view.now() + secs(self.poll), u32::MAX, Step::Poll, out);
    }
}

impl Controller for LendEvict {
    fn may_relabel(&self) -> bool {
        false
    }
    fn spec(&self) -> String {
        canonical_values(
            "lend-evict",
            &[
                ("poll", self.poll.to_string()),
                ("kill_wait", self.kill_wait.to_string()),
                ("move_delay", self.move_delay.to_string()),
            ],
        )
    }
    fn interests(&self) -> Interests {
        Interests { starts: true, ..Interests::default() }
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
            Step::Arrive => self.lend(view, node, out),
        }
    }
    fn on_event(&mut self, view: &SchedView<'_>, event: &Observed, out: &mut Vec<Action>) {
        let (Some(s), Observed::Started { job }) = (self.sides, event) else { return };
        if view.job(*job).domain() != s.slurm {
            return;
        }
        let Some(r) = view.running_job(*job) else { return };
        let mut nodes: Vec<u32> = r.binding.iter().map(|b| b.node.0).collect();
        nodes.dedup();
        for n in nodes {
            if matches!(self.phase[n as usize], Phase::Lent | Phase::ToK8s) {
                let why = format!("Slurm job {} started there", view.job(*job).trace_id());
                self.give_back(n, why, out);
            }
        }
    }
}
