//! One scheduler per scheduling domain over one node set: Slurm and Kubernetes on the
//! same GPU cluster (docs/hybrid.md).
//!
//! [`Domains`] runs each domain's policy on a view of its own ([`SchedView::scoped`]): its
//! part of the queue (the jobs of the domains routed to it, [`SchedView::route`]), its
//! running jobs, and the nodes it may use shown up, every other node shown draining —
//! what runs there runs on and nothing of its own starts there. Which nodes a domain owns
//! is engine state that the arrangement controllers change (`static`, `lend-drain`,
//! `lend-evict`, `bridge`); this policy only obeys it:
//!
//! * a node a domain owns is its own; a node lent away with the lender's right to take it
//!   back ([`sim_core::domain::Reclaim`], CoreWeave SUNK: "GPUs are owned by Slurm") is
//!   also shown up to the lender, without the borrower's jobs on it;
//! * when the lender's scheduler starts a job on such a node while the borrower's jobs
//!   run there, the node is locked (SUNK's `sunk.coreweave.com/lock` taint): the
//!   borrower's jobs there are evicted after the kill wait and requeued, nobody else is
//!   shown the node, and the job is kept out of its scheduler's queue until the node is
//!   free; its scheduler then places it again (on that node, unless a better one freed
//!   meanwhile). The job's start is thus the kill wait after its scheduler chose the node.
//!
//! Schedulers are called in domain order; a lent node one of them starts a job on in a
//! pass is shown draining to the later ones in that pass (their views of the ledger do
//! not have the earlier ones' decisions yet).

use sim_core::cluster::{NodeId, NodeState};
use sim_core::domain::{ViewScope, in_mask};
use sim_core::job::JobId;
use sim_core::policy::{Decision, PassInfo, PassMode, Policy, SchedView};
use std::collections::{BTreeMap, BTreeSet};

/// Whether domain `d`'s scheduler may place work on `node` (its own, or lent with its
/// right to take it back).
fn usable(view: &SchedView<'_>, d: u8, node: NodeId) -> bool {
    view.node_domain(node) == d || view.node_reclaim(node).is_some_and(|r| r.by == d)
}

/// One domain's scheduler and what it was last shown.
struct Member {
    domain: u8,
    name: String,
    policy: Box<dyn Policy>,
    scope: ViewScope,
    /// What happened since it was last called (it is called only when it has jobs
    /// waiting, as the engine calls a policy).
    pending: PassInfo,
}

/// A job whose scheduler chose nodes lent away: the borrower's jobs there are being
/// evicted.
struct Lock {
    nodes: Vec<u32>,
}

/// The schedulers of a run with scheduling domains ([`sim_core::domain`]).
pub struct Domains {
    members: Vec<Member>,
    /// Each job's scheduler (an index into `members`), once it was queued.
    job_member: Vec<u8>,
    locks: BTreeMap<JobId, Lock>,
    /// Jobs this policy evicted to free a locked node (so as not to evict them twice).
    evicted: BTreeSet<JobId>,
    buf: Vec<Decision>,
    /// The view's node epoch at the last look for stranded holds.
    holds_epoch: Option<u64>,
}

impl Member {
    /// Its view of this pass (its queue, the nodes it may use) and what happened since it
    /// was last called. `sees`: the domains whose jobs it schedules; `hidden`: jobs
    /// waiting for a locked node (the keys of the locks); `taken`: nodes it may not use now.
    fn show(
        &mut self,
        view: &SchedView<'_>,
        info: &PassInfo,
        sees: u32,
        hidden: &BTreeMap<JobId, Lock>,
        taken: &BTreeSet<u32>,
    ) {
        let of_mine = |j: &JobId| in_mask(sees, view.job(*j).domain());
        self.scope.domains = sees;
        self.scope.refresh_running(view);
        self.scope.queue.clear();
        self.scope.queue.extend(view.queue().iter().copied().filter(|j| !hidden.contains_key(j) && of_mine(j)));
        let nodes = view.cluster().node_count() as usize;
        let states = view.node_states();
        let mut changed = self.scope.node_state.len() != nodes;
        self.scope.node_state.resize(nodes, NodeState::Up);
        for n in 0..nodes {
            let engine = states.get(n).copied().unwrap_or(NodeState::Up);
            let id = NodeId(n as u32);
            let d = self.domain;
            let mut mine = usable(view, d, id);
            // A lent node its lender has started work on is the lender's again (its owner
            // changes only after the pass, when the arrangement sees the start).
            if let Some(r) = view.node_reclaim(id).filter(|r| r.by != d && mine) {
                mine = !view.all_jobs_on(id).iter().any(|&j| view.route(view.job(j).domain()).scheduler == r.by);
            }
            let s = if engine != NodeState::Up {
                engine
            } else if mine && !taken.contains(&(n as u32)) {
                NodeState::Up
            } else {
                NodeState::Draining
            };
            if self.scope.node_state[n] != s {
                self.scope.node_state[n] = s;
                changed = true;
            }
        }
        if changed {
            self.scope.node_epoch += 1;
            self.pending.capacity_changed = true;
        }
        self.pending.queued.extend(info.queued.iter().filter(|j| of_mine(j) && !hidden.contains_key(j)));
        self.pending.released.extend(info.released.iter().filter(|j| of_mine(j)));
        self.pending.capacity_changed |= info.capacity_changed;
        self.pending.woken |= info.woken;
    }
}

impl Domains {
    /// Member `i`'s decision: passed on, unless it starts a job on lent nodes where the
    /// borrower's jobs run: then those are evicted after their kill wait and the nodes
    /// locked for the job. Lent nodes it uses are `taken` for the rest of the pass.
    fn bind_or_lock(
        &mut self,
        view: &SchedView<'_>,
        i: usize,
        sees: u32,
        bind: Decision,
        taken: &mut BTreeSet<u32>,
        out: &mut Vec<Decision>,
    ) {
        let Decision::Bind { job, binding, .. } = &bind else { return out.push(bind) };
        let (job, d) = (*job, self.members[i].domain);
        let mut lent = binding.nodes();
        lent.retain(|&n| view.node_domain(NodeId(n)) != d);
        if lent.is_empty() {
            // On its own domain's nodes: nothing to evict or give back.
            return out.push(bind);
        }
        taken.extend(lent.iter().copied());
        // The borrower's jobs on the lent nodes it chose.
        let foreign: Vec<(u32, JobId)> = lent
            .iter()
            .flat_map(|&n| {
                view.all_jobs_on(NodeId(n))
                    .into_iter()
                    .filter(|o| !in_mask(sees, view.job(*o).domain()))
                    .map(move |o| (n, o))
            })
            .collect();
        // Partial gangs of the borrower holding tasks there give them back at once.
        for held in Self::foreign_holds(view, sees, &lent) {
            out.push(Decision::Release { job: held });
        }
        if foreign.is_empty() {
            return out.push(bind);
        }
        let mut nodes: Vec<u32> = foreign.iter().map(|f| f.0).collect();
        nodes.dedup();
        for &(n, pod) in &foreign {
            if !self.evicted.insert(pod) {
                continue;
            }
            let wait = view.node_reclaim(NodeId(n)).map_or(sim_core::SimDuration::ZERO, |r| r.kill_wait);
            let (by, id) = (&self.members[i].name, view.job(job).trace_id());
            let reason = format!("node {n} locked for {by} job {id} (its lender takes it back)");
            out.push(Decision::Evict { job: pod, grace: wait, reason });
        }
        if view.logging() {
            let why = format!("nodes {nodes:?} locked: waiting for the borrower's jobs to leave");
            out.push(Decision::Wait { job, reason: sim_core::policy::WaitReason::Other { why } });
        }
        self.locks.insert(job, Lock { nodes });
    }

    /// The domains' schedulers: `(domain index, domain name, policy)`, one per domain,
    /// in domain order. Each must bind jobs to nodes ([`Policy::binds_nodes`]).
    pub fn new(members: Vec<(u8, String, Box<dyn Policy>)>) -> Result<Self, String> {
        if members.is_empty() {
            return Err("no scheduling domain".into());
        }
        if let Some((_, name, p)) = members.iter().find(|(_, _, p)| !p.binds_nodes()) {
            return Err(format!(
                "domain {name}: policy {} counts processors; a domain's scheduler must place jobs on nodes \
                 (slurm, kube, ...)",
                p.spec()
            ));
        }
        Ok(Domains {
            members: members
                .into_iter()
                .map(|(domain, name, policy)| Member {
                    domain,
                    name,
                    policy,
                    scope: ViewScope::default(),
                    pending: PassInfo::default(),
                })
                .collect(),
            job_member: Vec::new(),
            locks: BTreeMap::new(),
            evicted: BTreeSet::new(),
            buf: Vec::new(),
            holds_epoch: None,
        })
    }

    fn member_of(&self, view: &SchedView<'_>, job: JobId) -> Option<usize> {
        let s = view.route(view.job(job).domain()).scheduler;
        self.members.iter().position(|m| m.domain == s)
    }

    /// Partial gangs (tasks held, the rest not placed yet) on nodes their scheduler may no
    /// longer use — the node moved to another domain — give their tasks back (they stay
    /// in the queue, as Kueue's eviction of a workload not ready): a gang must not start
    /// on another domain's node. Looked at when nodes changed.
    fn release_stranded(&mut self, view: &SchedView<'_>, out: &mut Vec<Decision>) {
        if self.holds_epoch == Some(view.node_epoch()) {
            return;
        }
        self.holds_epoch = Some(view.node_epoch());
        for &j in view.queue() {
            let d = view.route(view.job(j).domain()).scheduler;
            if view.held(j).iter().any(|b| !usable(view, d, b.node)) {
                out.push(Decision::Release { job: j });
            }
        }
    }

    /// The waiting jobs of domains other than `sees` holding tasks on `nodes`.
    fn foreign_holds(view: &SchedView<'_>, sees: u32, nodes: &[u32]) -> Vec<JobId> {
        view.queue()
            .iter()
            .copied()
            .filter(|&j| !in_mask(sees, view.job(j).domain()))
            .filter(|&j| view.held(j).iter().any(|b| nodes.contains(&b.node.0)))
            .collect()
    }

    /// Forgets the locks of jobs no longer waiting, and those whose nodes are free of
    /// the borrower's jobs (their scheduler places them again).
    fn settle_locks(&mut self, view: &SchedView<'_>) {
        if !self.locks.is_empty() {
            let waiting: BTreeSet<JobId> =
                view.queue().iter().copied().filter(|j| self.locks.contains_key(j)).collect();
            self.locks.retain(|j, lock| {
                let d = view.job(*j).domain();
                waiting.contains(j)
                    && lock
                        .nodes
                        .iter()
                        .any(|&n| view.all_jobs_on(NodeId(n)).iter().any(|o| view.job(*o).domain() != d))
            });
        }
        self.evicted.retain(|&j| view.running_job(j).is_some());
    }
}

impl Policy for Domains {
    fn spec(&self) -> String {
        let parts: Vec<String> = self.members.iter().map(|m| format!("{}:{}", m.name, m.policy.spec())).collect();
        parts.join(" + ")
    }

    fn pass_mode(&self) -> PassMode {
        if self.members.iter().any(|m| m.policy.pass_mode() == PassMode::PerEvent) {
            PassMode::PerEvent
        } else {
            PassMode::PerTime
        }
    }

    fn binds_nodes(&self) -> bool {
        true
    }

    fn schedule(&mut self, view: &SchedView<'_>, info: &PassInfo, out: &mut Vec<Decision>) {
        self.settle_locks(view);
        self.release_stranded(view, out);
        for &j in &info.queued {
            if let Some(i) = self.member_of(view, j) {
                if self.job_member.len() <= j.idx() {
                    self.job_member.resize(j.idx() + 1, u8::MAX);
                }
                self.job_member[j.idx()] = i as u8;
            }
        }
        // Locked nodes, and lent nodes a scheduler started a job on in this pass: no
        // other scheduler is shown them.
        let mut taken: BTreeSet<u32> = self.locks.values().flat_map(|l| l.nodes.iter().copied()).collect();
        for i in 0..self.members.len() {
            let d = self.members[i].domain;
            let sees: u32 = (0..view.domain_count() as u8)
                .filter(|&e| view.route(e).scheduler == d)
                .fold(0, |m, e| m | (1u32 << e));
            let m = &mut self.members[i];
            m.show(view, info, sees, &self.locks, &taken);
            if m.scope.queue.is_empty() {
                continue;
            }
            let sub = view.scoped(&m.scope);
            let pass = std::mem::take(&mut m.pending);
            // The member's decisions, in a buffer kept across passes.
            let mut decisions = std::mem::take(&mut self.buf);
            m.policy.schedule(&sub, &pass, &mut decisions);
            for dec in decisions.drain(..) {
                self.bind_or_lock(view, i, sees, dec, &mut taken, out);
            }
            self.buf = decisions;
        }
    }

    fn retry_state(&self, view: &SchedView<'_>, out: &mut Vec<u64>) -> bool {
        let mut any = false;
        for m in &self.members {
            let sub = view.scoped(&m.scope);
            out.push(u64::MAX - u64::from(m.domain));
            any |= m.policy.retry_state(&sub, out);
        }
        any
    }

    fn job_priority(&self, job: JobId) -> Option<u64> {
        let m = self.members.get(*self.job_member.get(job.idx())? as usize)?;
        m.policy.job_priority(job)
    }

    fn explain_wait(&mut self, view: &SchedView<'_>, job: JobId) -> Option<String> {
        let i = self.member_of(view, job)?;
        let m = &mut self.members[i];
        let sub = view.scoped(&m.scope);
        m.policy.explain_wait(&sub, job).map(|why| format!("{}: {why}", m.name))
    }
}
