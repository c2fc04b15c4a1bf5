//! Scheduling domains: several schedulers over one node set, as Slurm and Kubernetes
//! share GPU clusters (Slinky's slurm-operator and slurm-bridge, CoreWeave SUNK, a static
//! split; docs/hybrid.md).
//!
//! A run with domains ([`crate::SimConfig::domains`], e.g. `slurm`, `kubernetes`) gives
//! every job one domain ([`crate::Job::domain`]: the index of its name) and every node one
//! owner at a time. Which nodes a domain owns, which scheduler decides a domain's jobs and
//! whether a node lent away may be taken back by eviction are engine state, changed only
//! by controllers (the arrangements: [`crate::controller::Action::SetNodeDomain`],
//! [`crate::controller::Action::RouteDomain`]) and read by policies through the view
//! ([`crate::policy::SchedView::node_domain`]). A node is never in two domains: its owner
//! is one value.
//!
//! The engine does not stop a policy from binding a job onto another domain's node: the
//! composite policy that runs one scheduler per domain (`policies::Domains`) shows each
//! scheduler only what it may use ([`ViewScope`]).

use crate::cluster::{NodeId, NodeState};
use crate::job::JobId;
use crate::time::{SimDuration, SimTime};

/// The most domains a run may have (a job's domain is one bit of [`ViewScope`]'s mask).
pub const MAX_DOMAINS: usize = 32;

/// Whether domain `d` is in `mask` (bit `d` for domain `d`): the domains a scheduler sees.
pub fn in_mask(mask: u32, d: u8) -> bool {
    (d as usize) < MAX_DOMAINS && mask & (1 << d) != 0
}

/// The right of a node's lender to take it back by evicting what runs there: CoreWeave
/// SUNK's node lock (a Slurm job starting on a node evicts its Kubernetes pods after
/// `--slurm-kill-wait`, 30 s).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reclaim {
    /// The domain whose scheduler may still place work on the node.
    pub by: u8,
    /// How long the evicted jobs may still run (their kill wait).
    pub kill_wait: SimDuration,
}

/// Which scheduler decides a domain's jobs ([`crate::controller::Action::RouteDomain`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The domain whose scheduler places them (the domain itself by default).
    pub scheduler: u8,
    /// Each of its tasks takes a whole node (slurm-bridge: "exclusive, whole node
    /// allocations are made for each pod"); `false`: by its requests.
    pub whole_node: bool,
}

/// A node changing owner.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DomainMove {
    /// When.
    pub at: SimTime,
    /// The node.
    pub node: NodeId,
    /// Its owner before.
    pub from: u8,
    /// Its new owner.
    pub to: u8,
}

/// What one domain's scheduler is shown ([`crate::policy::SchedView::scoped`]): its part of
/// the queue, the node states it sees (a node it may not use shows as
/// [`NodeState::Draining`]: what runs there runs on, nothing new starts), and which jobs'
/// attempts it sees running.
#[derive(Clone, Debug, Default)]
pub struct ViewScope {
    /// Its waiting jobs, in the engine's queue order.
    pub queue: Vec<JobId>,
    /// Every node's state as it sees it.
    pub node_state: Vec<NodeState>,
    /// Bumped by its owner whenever `node_state` changes.
    pub node_epoch: u64,
    /// The domains whose running jobs it sees (bit `d` for domain `d`).
    pub domains: u32,
    /// Their running jobs by start, and by requested end ([`ViewScope::refresh_running`]).
    pub(crate) by_start: std::collections::BTreeSet<(u64, JobId)>,
    pub(crate) by_requested_end: std::collections::BTreeSet<(SimTime, u64, JobId, u64)>,
}

impl ViewScope {
    /// Takes the running jobs of its domains from `view` (the run's whole view): call it
    /// after setting `domains`, before [`crate::policy::SchedView::scoped`].
    pub fn refresh_running(&mut self, view: &crate::policy::SchedView<'_>) {
        let mask = self.domains;
        let shown = |j: JobId| in_mask(mask, view.jobs[j.idx()].domain);
        // Collected from sorted input: built in bulk.
        self.by_start = view.running_by_start.iter().copied().filter(|&(_, j)| shown(j)).collect();
        self.by_requested_end = view.running_by_requested_end.iter().copied().filter(|k| shown(k.2)).collect();
    }
}

/// The engine's record of the domains: each node's owner and lender's right, each
/// domain's scheduler, the moves so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct DomainState {
    /// Each node's owner (empty in a run without domains: all the one).
    pub(crate) owner: Vec<u8>,
    /// Nodes lent with their lender's right to take them back by eviction.
    pub(crate) reclaim: Vec<Option<Reclaim>>,
    /// Which scheduler decides each domain's jobs.
    pub(crate) routes: Vec<Route>,
    /// Nodes that changed owner, in order.
    pub(crate) moves: Vec<DomainMove>,
}

impl DomainState {
    /// `domains` domains over `nodes` nodes owned as `initial` says (the first domain's
    /// past its end); nothing without domains.
    pub(crate) fn new(domains: usize, initial: &[u8], nodes: u32) -> Self {
        if domains == 0 {
            return DomainState::default();
        }
        DomainState {
            owner: (0..nodes as usize).map(|n| initial.get(n).copied().unwrap_or(0)).collect(),
            reclaim: vec![None; nodes as usize],
            routes: (0..domains as u8).map(|d| Route { scheduler: d, whole_node: false }).collect(),
            moves: Vec::new(),
        }
    }
}
