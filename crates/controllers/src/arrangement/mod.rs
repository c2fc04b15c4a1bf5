//! How Slurm and Kubernetes share one cluster: the arrangements that move nodes between
//! the two scheduling domains ([`sim_core::domain`]; docs/hybrid.md). Each is a controller
//! that changes which domain owns each node ([`Action::SetNodeDomain`]) or which scheduler
//! decides a domain's jobs ([`Action::RouteDomain`]); the composite policy
//! (`policies::Domains`) runs each domain's scheduler on what its domain owns.
//!
//! | name | what | real system |
//! |---|---|---|
//! | `static` | [`StaticSplit`]: a fixed split of the nodes | most sites: two partitions of machines |
//! | `lend-drain` | [`LendDrain`]: idle Slurm nodes lent to Kubernetes, given back by draining | Slinky slurm-operator NodeSet scaled by KEDA |
//! | `lend-evict` | [`LendEvict`]: Kubernetes pods on idle Slurm nodes, evicted when a Slurm job takes the node | CoreWeave SUNK's pod scheduler and node lock |
//! | `bridge` | [`Bridge`]: every pod a Slurm job, a whole node each (or `shared`) | Slinky slurm-bridge |
//!
//! The domains are named `slurm` and `kubernetes` (the cluster configuration's
//! `[[domain]]` tables); nodes a pool gives to `kubernetes` are Kubernetes' own and never
//! lent. The arrangements own the nodes' states while they move them (a node moving is
//! drained, `NodeState::Draining`): do not run them beside a controller that drains
//! nodes.

mod bridge;
mod lend_drain;
mod lend_evict;
mod static_split;

pub use bridge::Bridge;
pub use lend_drain::LendDrain;
pub use lend_evict::LendEvict;
pub use static_split::StaticSplit;

use sim_core::cluster::{NodeId, NodeState};
use sim_core::controller::Action;
use sim_core::job::JobId;
use sim_core::policy::SchedView;

/// The two domains every arrangement moves nodes between, by name.
pub const DOMAINS: [&str; 2] = ["slurm", "kubernetes"];

/// The names of the arrangements (their registry entries).
pub const NAMES: [&str; 4] = ["static", "lend-drain", "lend-evict", "bridge"];

/// The two domains' indices in a run.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Sides {
    pub slurm: u8,
    pub k8s: u8,
}

impl Sides {
    /// The run's `slurm` and `kubernetes` domains; `None` (and a note saying so in the
    /// decision log) when it lacks one.
    pub(crate) fn of(view: &SchedView<'_>, out: &mut Vec<Action>) -> Option<Sides> {
        match (view.domain_named(DOMAINS[0]), view.domain_named(DOMAINS[1])) {
            (Some(slurm), Some(k8s)) => Some(Sides { slurm, k8s }),
            _ => {
                out.push(Action::Note {
                    what: "idle".into(),
                    reason: "the run has no slurm and kubernetes domains: nothing to arrange".into(),
                });
                None
            }
        }
    }
}

/// Whether `node` is up and nothing runs there.
pub(crate) fn idle(view: &SchedView<'_>, node: u32) -> bool {
    view.node_states().get(node as usize).is_none_or(|s| *s == NodeState::Up)
        && view.all_jobs_on(NodeId(node)).is_empty()
}

/// GPUs the jobs running on `node` hold.
pub(crate) fn gpus_in_use(view: &SchedView<'_>, node: u32) -> u64 {
    view.all_jobs_on(NodeId(node))
        .iter()
        .filter_map(|&j| view.running_job(j))
        .flat_map(|r| r.binding.iter().filter(|b| b.node.0 == node).map(|b| b.gpus.len() as u64))
        .sum()
}

/// The waiting jobs of domain `d`, in queue order.
pub(crate) fn waiting<'v>(view: &'v SchedView<'v>, d: u8) -> impl Iterator<Item = JobId> + 'v {
    view.queue().iter().copied().filter(move |&j| view.job(j).domain() == d)
}

/// How many of the cluster's largest nodes the waiting jobs of domain `d` would fill:
/// their GPUs over a node's GPUs, or their cores over a node's cores, whichever is more
/// (the metric KEDA would scale a NodeSet on: pending work in nodes).
pub(crate) fn nodes_wanted(view: &SchedView<'_>, d: u8) -> u64 {
    let cluster = view.cluster();
    let gpus = cluster.nodes().map(|(_, s, _)| s.gpus.len() as u64).max().unwrap_or(0).max(1);
    let milli = cluster.nodes().map(|(_, s, _)| u64::from(s.cores) * 1000).max().unwrap_or(1000).max(1);
    let (mut g, mut c) = (0u64, 0u64);
    for j in waiting(view, d) {
        let job = view.job(j);
        let t = job.task();
        g += u64::from(job.tasks()) * u64::from(t.gpus);
        c += u64::from(job.tasks()) * t.cpu_milli();
    }
    let cores = milli;
    g.div_ceil(gpus).max(c.div_ceil(cores))
}

/// The idle Slurm nodes to lend to Kubernetes, highest-numbered first (Slurm places on
/// its first nodes; a NodeSet scales in from its highest ordinal): as many as the pending
/// pods need beyond Kubernetes' idle nodes and the `coming` ones on their way, at most
/// `most`. `slurm(n)`: whether node `n` is Slurm's to lend; `k8s(n)`: whether it is
/// Kubernetes'.
pub(crate) fn to_lend(
    view: &SchedView<'_>,
    s: Sides,
    slurm: impl Fn(u32) -> bool,
    k8s: impl Fn(u32) -> bool,
    coming: u64,
    most: u64,
) -> Vec<u32> {
    let nodes = view.cluster().node_count();
    let own = (0..nodes).filter(|&n| k8s(n) && idle(view, n)).count() as u64 + coming;
    let short = nodes_wanted(view, s.k8s).saturating_sub(own).min(most);
    (0..nodes).rev().filter(|&n| slurm(n) && idle(view, n)).take(short as usize).collect()
}

/// What a lending arrangement's timer is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Step {
    /// Its periodic look (KEDA's poll).
    Poll,
    /// A node's move is over.
    Arrive,
}

/// A lending arrangement's start: the two domains, each node's phase (`slurm` for
/// Slurm's nodes, `fixed` for the others, which never move) and its first poll, at 0.
pub(crate) fn begin<P: Copy>(
    view: &SchedView<'_>,
    timers: &mut crate::timers::NodeTimers<Step>,
    slurm: P,
    fixed: P,
    out: &mut Vec<Action>,
) -> Option<(Sides, Vec<P>)> {
    let s = Sides::of(view, out)?;
    let phases = (0..view.cluster().node_count())
        .map(|n| if view.node_domain(NodeId(n)) == s.slurm { slurm } else { fixed })
        .collect();
    timers.at(view, sim_core::time::SimTime::ZERO, u32::MAX, Step::Poll, out);
    Some((s, phases))
}

/// Seconds as a duration.
pub(crate) fn secs(s: u64) -> sim_core::time::SimDuration {
    sim_core::time::SimDuration::from_secs(s)
}
