//! The node groups an autoscaler resizes and the life of their nodes, shared by the
//! `cluster-autoscaler` and `karpenter` controllers: a node asked for boots (billed,
//! cordoned), is Ready after its group's `ready` delay, takes pods once its GPUs are
//! allocatable (`gpus_ready`), is given up when not Ready within the provisioning limit,
//! and when removed is cordoned, its pods evicted with their grace, and leaves.

use super::room::Room;
use crate::timers::NodeTimers;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use sim_core::cluster::{Delay, NodeGroup, NodeId, NodeState};
use sim_core::controller::Action;
use sim_core::job::JobId;
use sim_core::policy::SchedView;
use sim_core::rng::SimRng;
use sim_core::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// Kubernetes' default `terminationGracePeriodSeconds`.
pub(crate) const POD_GRACE: SimDuration = SimDuration::from_secs(30);
/// Node group backoff after a node was given up: initial and longest (the Cluster
/// Autoscaler's `--initial-node-group-backoff-duration`, `--max-node-group-backoff-duration`).
const BACKOFF: (SimDuration, SimDuration) = (SimDuration::from_secs(300), SimDuration::from_secs(1800));

/// Where a node of a group is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Not in the cluster.
    Absent,
    /// Asked for at `asked`, not Ready yet; its GPUs allocatable at `gpus`.
    Booting { asked: SimTime, gpus: SimTime },
    /// Ready, its GPUs not yet allocatable (cordoned): the Cluster Autoscaler's GPU
    /// processor calls a GPU-labelled one not ready, and while it starts
    /// (`max-node-startup-time`, 15 min) not started, so upcoming.
    NoGpus { asked: SimTime, gpus: SimTime },
    /// Ready and schedulable.
    Ready,
    /// Being removed: its pods evicted, it leaves at the end of their grace.
    Leaving,
}

/// What a timer is for: the controller's own loop (`Tick`, node `u32::MAX`) or a node's
/// next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Next {
    Tick(u8),
    Ready,
    Gpus,
    GiveUp,
    Gone,
}

/// One node group.
pub(crate) struct Group {
    pub name: String,
    pub spec: NodeGroup,
    /// Its nodes, by id.
    pub nodes: std::ops::Range<u32>,
    /// The empty template node.
    pub template: Room,
    /// Whether its template carries the GPU label (and has GPUs).
    pub gpu_labelled: bool,
    /// No scale-up before this (after a node was given up), and the next backoff.
    pub backoff_until: SimTime,
    pub backoff: SimDuration,
}

/// The node groups of a cluster and their nodes' phases.
pub(crate) struct Fleet {
    pub groups: Vec<Group>,
    /// Each group node's phase, by node id.
    pub phase: BTreeMap<u32, Phase>,
    pub rng: SimRng,
    pub timers: NodeTimers<Next>,
    /// A node not Ready by then after the request is given up.
    pub max_provision: SimDuration,
    /// The label that marks GPU nodes.
    pub gpu_label: String,
}

impl Fleet {
    pub fn new(rng: SimRng, max_provision: SimDuration, gpu_label: String) -> Self {
        Fleet { groups: Vec::new(), phase: BTreeMap::new(), rng, timers: NodeTimers::new(), max_provision, gpu_label }
    }

    /// Reads the cluster's node groups (pools with an `autoscale` table).
    pub fn start(&mut self, view: &SchedView<'_>) {
        for (pool, nodes) in view.cluster().pool_nodes() {
            let Some(spec) = pool.group.clone() else { continue };
            for n in nodes.clone() {
                let present = n - nodes.start < spec.initial;
                self.phase.insert(n, if present { Phase::Ready } else { Phase::Absent });
            }
            let gpu_labelled = !pool.spec.gpus.is_empty() && pool.spec.labels.contains_key(&self.gpu_label);
            self.groups.push(Group {
                name: pool.name.clone(),
                template: Room::template(pool),
                gpu_labelled,
                spec,
                nodes,
                backoff_until: SimTime::ZERO,
                backoff: BACKOFF.0,
            });
        }
    }

    /// A draw of `d`.
    pub fn draw(&mut self, d: Delay) -> SimDuration {
        match d {
            Delay::Fixed(x) => x,
            Delay::Uniform(lo, hi) => SimDuration(self.rng.random_range(lo.0..=hi.0)),
            Delay::LogNormal(median, sigma_milli) => {
                let z: f64 = StandardNormal.sample(&mut self.rng);
                let x = median.0 as f64 * (z * f64::from(sigma_milli) / 1000.0).exp();
                SimDuration(x.round().min(1e15) as u64)
            }
        }
    }

    /// Nodes of `g` absent: what it may still grow by.
    pub fn absent(&self, g: &Group) -> u32 {
        g.nodes.clone().filter(|n| self.phase[n] == Phase::Absent).count() as u32
    }

    /// Nodes of `g` present or on their way.
    pub fn present(&self, g: &Group) -> u32 {
        g.nodes.clone().filter(|n| !matches!(self.phase[n], Phase::Absent | Phase::Leaving)).count() as u32
    }

    /// Whether a node is on its way or Ready.
    pub fn busy(&self) -> bool {
        self.phase.values().any(|p| !matches!(p, Phase::Absent | Phase::Ready))
    }

    /// The group of node `n`.
    pub fn group_of(&self, n: u32) -> usize {
        self.groups.iter().position(|g| g.nodes.contains(&n)).expect("a group node")
    }

    /// The room of every Up node but `except`, and of group nodes only the Ready ones.
    pub fn ready_rooms(&self, view: &SchedView<'_>, except: &[u32]) -> Vec<Room> {
        let states = view.node_states();
        view.ledger()
            .nodes()
            .iter()
            .enumerate()
            .filter(|(i, _)| !except.contains(&(*i as u32)) && states.get(*i).is_none_or(|s| *s == NodeState::Up))
            .filter(|(i, _)| self.phase.get(&(*i as u32)).is_none_or(|p| *p == Phase::Ready))
            .map(|(_, u)| Room::of(u))
            .collect()
    }

    /// Whether each pod of `jobs` on node `n` fits in `rooms` (taken as it goes).
    pub fn fit_pods_of(view: &SchedView<'_>, n: u32, jobs: &[JobId], rooms: &mut [Room]) -> bool {
        for &j in jobs {
            let job = view.job(j);
            let (task, models, c) = (job.task(), job.gpu_models(), job.constraints());
            let here = view.running_job(j).map_or(0, |r| r.binding.tasks_on(sim_core::NodeId(n)));
            for _ in 0..here {
                match rooms.iter_mut().find(|r| r.fits(&task, models, c)) {
                    Some(r) => r.take(&task),
                    None => return false,
                }
            }
        }
        true
    }

    /// Whether each pod of `jobs` on node `n` fits on another Ready node.
    pub fn movable(&self, view: &SchedView<'_>, n: u32, jobs: &[JobId]) -> bool {
        Self::fit_pods_of(view, n, jobs, &mut self.ready_rooms(view, &[n]))
    }

    /// Asks for `count` absent nodes of group `gi` (the lowest ids): billed from now,
    /// cordoned until they take pods. Returns their ids.
    pub fn launch(&mut self, view: &SchedView<'_>, gi: usize, count: u32, out: &mut Vec<Action>) -> Vec<u32> {
        let now = view.now();
        let ids: Vec<u32> = {
            let g = &self.groups[gi];
            g.nodes.clone().filter(|n| self.phase[n] == Phase::Absent).take(count as usize).collect()
        };
        let spec = self.groups[gi].spec.clone();
        for &n in &ids {
            let ready = now + self.draw(spec.ready);
            // A node without GPUs takes pods once Ready.
            let gpus = if self.groups[gi].template.gpus.is_empty() {
                ready
            } else {
                (now + self.draw(spec.gpus_ready)).max(ready)
            };
            self.phase.insert(n, Phase::Booting { asked: now, gpus });
            out.push(Action::SetNodeState { node: NodeId(n), state: NodeState::Draining });
            if ready > now + self.max_provision {
                self.timers.at_always(now + self.max_provision, n, Next::GiveUp, out);
            } else {
                self.timers.at_always(ready, n, Next::Ready, out);
            }
        }
        ids
    }

    /// Starts removing node `n`: cordoned, the pods of `jobs` evicted with their grace; it
    /// leaves when the grace is over (at once when empty).
    pub fn retire(&mut self, view: &SchedView<'_>, n: u32, jobs: &[JobId], out: &mut Vec<Action>) {
        self.phase.insert(n, Phase::Leaving);
        out.push(Action::SetNodeState { node: NodeId(n), state: NodeState::Draining });
        for &job in jobs {
            out.push(Action::Evict { job, grace: POD_GRACE, reason: format!("node {n} scaled down") });
        }
        let grace = if jobs.is_empty() { SimDuration::ZERO } else { POD_GRACE };
        self.timers.at_always(view.now() + grace, n, Next::Gone, out);
    }

    /// A node's timer: Ready, GPUs allocatable, given up, gone.
    pub fn on_node(&mut self, view: &SchedView<'_>, n: u32, what: Next, out: &mut Vec<Action>) {
        let now = view.now();
        let gi = self.group_of(n);
        match (what, self.phase[&n]) {
            (Next::Ready, Phase::Booting { asked, gpus }) => {
                if gpus > now {
                    self.phase.insert(n, Phase::NoGpus { asked, gpus });
                    self.timers.at_always(gpus, n, Next::Gpus, out);
                } else {
                    self.phase.insert(n, Phase::Ready);
                    out.push(Action::SetNodeState { node: NodeId(n), state: NodeState::Up });
                }
            }
            (Next::Gpus, Phase::NoGpus { .. }) => {
                self.phase.insert(n, Phase::Ready);
                out.push(Action::SetNodeState { node: NodeId(n), state: NodeState::Up });
            }
            (Next::GiveUp, Phase::Booting { .. }) => {
                self.phase.insert(n, Phase::Absent);
                out.push(Action::SetNodeState { node: NodeId(n), state: NodeState::Absent });
                let g = &mut self.groups[gi];
                g.backoff_until = now + g.backoff;
                g.backoff = SimDuration((g.backoff.0 * 2).min(BACKOFF.1.0));
                out.push(Action::Note {
                    what: "scale-up-timeout".into(),
                    reason: format!(
                        "group {}: node {n} not Ready within the provisioning limit, removed; group backed off until {} s",
                        g.name,
                        g.backoff_until.0 / 1_000_000
                    ),
                });
            }
            (Next::Gone, Phase::Leaving) => {
                self.phase.insert(n, Phase::Absent);
                out.push(Action::SetNodeState { node: NodeId(n), state: NodeState::Absent });
            }
            _ => {}
        }
    }
}
