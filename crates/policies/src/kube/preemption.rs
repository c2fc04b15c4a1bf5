//! kube-scheduler's `DefaultPreemption` PostFilter plugin, for `kube[preemption=on]`
//! (kubernetes v1.34 `pkg/scheduler/framework/preemption/preemption.go` and
//! `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`; the same
//! rules in v1.20.5 `plugins/defaultpreemption/default_preemption.go`).
//!
//! When a pod fits no node, the plugin looks for a node where evicting pods of lower
//! priority would let it fit:
//! * **eligibility**: a pod nominated to a node where a pod of lower priority is still
//!   terminating waits for it and preempts nothing more (`PodEligibleToPreemptOthers`);
//! * **candidates**: from a random offset among the nodes its failure might be resolved
//!   on (up, and passing the label-and-taint filters), at most
//!   `max(100, 10 % of them)` nodes that work (`calculateNumCandidates`); on each, every
//!   running pod of lower priority is removed, and the pod must then fit; the removed pods
//!   are put back one by one, most important first (higher priority, then earlier start:
//!   `MoreImportantPod`), keeping each that still lets it fit (`SelectVictimsOnNode`);
//! * **the node** (`pickOneNodeForPreemption`): fewest PodDisruptionBudget violations
//!   (none here: PDBs are not modelled), then the lowest highest victim priority, the
//!   smallest sum of victim priorities, the fewest victims, the latest earliest start
//!   among its highest-priority victims, then the first found;
//! * **victims** are deleted with their `terminationGracePeriodSeconds` (`grace`, 30 s):
//!   they hold their resources until it ends, then their jobs are re-created as new pods;
//!   the preemptor is nominated to the node and lower-priority pods nominated there lose
//!   their nomination. Until it binds, pods of its priority or lower are not placed on
//!   the nominated node (upstream adds the nominated pod's requests to the node when
//!   filtering them, so pods asking only for what it leaves free would still fit there),
//!   and its next attempt tries that node first (`evaluateNominatedNode`).
//!
//! Modelled for pods of one task (a gang's pods are preempted with their job: evicting a
//! job ends all its tasks; gangs themselves do not preempt); not modelled:
//! PodDisruptionBudgets, `preemptionPolicy: Never`, inter-pod terms in the dry run (the
//! placement checks them when the pod is bound), and pods held by a partial gang as
//! victims.

use super::{KubeScheduler, Pass};
use crate::placement::PodReq;
use sim_core::job::JobId;
use sim_core::ledger::{Ledger, TaskBinding};
use sim_core::policy::{Decision, SchedView};
use sim_core::rng::uniform_index;
use sim_core::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// Fewest candidate nodes the dry run looks for (`minCandidateNodesAbsolute`).
pub const MIN_CANDIDATE_NODES: usize = 100;
/// Percentage of the potential nodes it looks for (`minCandidateNodesPercentage`).
pub const MIN_CANDIDATE_NODES_PERCENT: usize = 10;
/// Kubernetes' default `terminationGracePeriodSeconds`.
pub const DEFAULT_GRACE_SECS: u64 = 30;

/// The plugin's state: nominations and victims still terminating.
#[derive(Clone, Debug)]
pub struct Preemption {
    /// The victims' termination grace period.
    pub grace: SimDuration,
    /// Each nominated preemptor's node and priority.
    nominated: BTreeMap<JobId, (u32, i64)>,
    /// Victims being terminated, with their priority and nodes.
    terminating: BTreeMap<JobId, (i64, Vec<u32>)>,
    /// The lowest priority of any pod seen so far: a pod of that priority has nothing to
    /// preempt, whatever runs (most workloads have one priority).
    lowest_seen: Option<i64>,
}

/// A node the dry run found: its victims, most important first.
struct Candidate {
    node: u32,
    victims: Vec<Victim>,
}

#[derive(Clone, Copy)]
struct Victim {
    job: JobId,
    priority: i64,
    start: SimTime,
}

impl Preemption {
    /// The plugin with a victims' grace period of `grace` seconds.
    pub fn new(grace: u64) -> Self {
        Preemption {
            grace: SimDuration::from_secs(grace),
            nominated: BTreeMap::new(),
            terminating: BTreeMap::new(),
            lowest_seen: None,
        }
    }

    /// At a pass: the pods that arrived are seen; nominations of pods no longer waiting
    /// and victims no longer running are forgotten.
    pub fn observe(&mut self, view: &SchedView<'_>, arrived: &[JobId]) {
        for &j in arrived {
            let p = view.job(j).priority();
            self.lowest_seen = Some(self.lowest_seen.map_or(p, |l| l.min(p)));
        }
        if self.nominated.is_empty() && self.terminating.is_empty() {
            return;
        }
        let waiting: std::collections::BTreeSet<JobId> = view.queue().iter().copied().collect();
        self.nominated.retain(|j, _| waiting.contains(j));
        self.terminating.retain(|j, _| view.running_job(*j).is_some());
    }

    /// Pod `j` was bound: its nomination is used up.
    pub fn bound(&mut self, j: JobId) {
        self.nominated.remove(&j);
    }

    /// The node pod `j` is nominated to.
    pub fn nominated_node(&self, j: JobId) -> Option<u32> {
        self.nominated.get(&j).map(|n| n.0)
    }

    /// The nodes kept from pod `j` of priority `priority`: those nominated to other pods
    /// of at least its priority.
    pub fn kept_from(&self, j: JobId, priority: i64) -> impl Iterator<Item = u32> + '_ {
        self.nominated.iter().filter(move |(p, (_, prio))| **p != j && *prio >= priority).map(|(_, (n, _))| *n)
    }

    /// Whether a pod of `priority` that fits nowhere may find something to preempt: not
    /// when no pod seen has a lower priority.
    pub fn may_preempt(&self, priority: i64) -> bool {
        self.lowest_seen.is_some_and(|l| l < priority)
    }

    /// Whether any nomination stands.
    pub fn any_nominated(&self) -> bool {
        !self.nominated.is_empty()
    }

    /// `PodEligibleToPreemptOthers`: not while a pod of lower priority is still
    /// terminating on the node it is nominated to.
    fn eligible(&self, j: JobId, priority: i64) -> bool {
        let Some(&(node, _)) = self.nominated.get(&j) else { return true };
        !self.terminating.values().any(|(p, nodes)| *p < priority && nodes.contains(&node))
    }

    /// For the engine's spin check: the nominations.
    pub fn retry_state(&self, out: &mut Vec<u64>) {
        out.push(u64::MAX);
        for (j, (n, _)) in &self.nominated {
            out.extend([j.0 as u64, u64::from(*n)]);
        }
    }
}

/// `calculateNumCandidates`: how many candidate nodes the dry run looks for among
/// `potential` nodes.
pub fn num_candidates(potential: usize) -> usize {
    (potential * MIN_CANDIDATE_NODES_PERCENT / 100).max(MIN_CANDIDATE_NODES).min(potential)
}

impl KubeScheduler {
    /// DefaultPreemption's PostFilter for waiting pod `j`, which fit no node in this pass:
    /// when some node would hold it once pods of lower priority are evicted, they are
    /// evicted (with their grace period) and `j` is nominated to that node.
    pub(super) fn post_filter(&mut self, view: &SchedView<'_>, pass: &mut Pass, j: JobId, out: &mut Vec<Decision>) {
        let job = view.job(j);
        let priority = job.priority();
        let Some(pre) = self.preemption.as_ref() else { return };
        if job.tasks() != 1 || pre.lowest_seen.is_none_or(|l| l >= priority) || !pre.eligible(j, priority) {
            return;
        }
        let found = self.find_candidate(view, pass, j, priority);
        let pre = self.preemption.as_mut().expect("checked");
        // A preemption that finds nothing clears the pod's nomination (`ModeOverride`).
        let Some(Candidate { node, victims }) = found else {
            pre.nominated.remove(&j);
            return;
        };
        for v in &victims {
            if pre.terminating.contains_key(&v.job) {
                continue;
            }
            let nodes: Vec<u32> = view.running_job(v.job).map_or(Vec::new(), |r| r.binding.nodes());
            pre.terminating.insert(v.job, (v.priority, nodes));
            let reason = format!(
                "preempted by {} (priority {priority}) on node {node}: kube-scheduler DefaultPreemption",
                job.trace_id()
            );
            out.push(Decision::Evict { job: v.job, grace: pre.grace, reason });
        }
        pre.nominated.retain(|_, (n, p)| !(*n == node && *p < priority));
        pre.nominated.insert(j, (node, priority));
    }

    /// The dry run: the candidate nodes, from a random offset among those its failure
    /// might be resolved on, and the one `pickOneNodeForPreemption` picks.
    fn find_candidate(&mut self, view: &SchedView<'_>, pass: &mut Pass, j: JobId, priority: i64) -> Option<Candidate> {
        let job = view.job(j);
        let on_node = pass.on_node.get_or_insert_with(|| running_by_node(view));
        if on_node.lowest_priority.is_none_or(|lowest| lowest >= priority) {
            return None;
        }
        let req = PodReq { task: job.task(), models: job.gpu_models(), type_id: None, constraints: job.constraints() };
        // Nodes nominated to pods of at least its priority are theirs.
        let kept: Vec<u32> = self.preemption.as_ref().map_or(Vec::new(), |p| p.kept_from(j, priority).collect());
        let potential: Vec<u32> = (0..pass.scratch.nodes().len() as u32)
            .filter(|&n| pass.up[n as usize] && self.placement.passes_meta(&pass.scratch.nodes()[n as usize], &req))
            .filter(|n| !kept.contains(n))
            .collect();
        if potential.is_empty() {
            return None;
        }
        let wanted = num_candidates(potential.len());
        // kube-scheduler starts at a random offset; only which nodes it looks at depends
        // on it when it stops early, so the stream is drawn only then.
        let offset = if wanted < potential.len() { uniform_index(&mut self.rng, potential.len()) } else { 0 };
        let mut candidates: Vec<Candidate> = Vec::new();
        for k in 0..potential.len() {
            let node = potential[(offset + k) % potential.len()];
            if let Some(victims) = self.victims_on(view, &mut pass.scratch, on_node, node, &req, priority) {
                candidates.push(Candidate { node, victims });
                if candidates.len() >= wanted {
                    break;
                }
            }
        }
        pick_one(candidates)
    }

    /// `SelectVictimsOnNode`: the pods of lower priority running on `node` that must go for
    /// the pod to fit there, most important first; `None` when it does not fit even
    /// without all of them. `ledger` is left as it was.
    fn victims_on(
        &self,
        view: &SchedView<'_>,
        ledger: &mut Ledger,
        on_node: &RunningByNode,
        node: u32,
        req: &PodReq<'_>,
        priority: i64,
    ) -> Option<Vec<Victim>> {
        let mut lower: Vec<Victim> =
            on_node.jobs.get(&node)?.iter().filter(|v| v.priority < priority).copied().collect();
        if lower.is_empty() {
            return None;
        }
        // MoreImportantPod: higher priority, then earlier start.
        lower.sort_by_key(|v| (std::cmp::Reverse(v.priority), v.start, v.job));
        let tasks_here = |j: JobId| -> Vec<TaskBinding> {
            view.running_job(j).map_or(Vec::new(), |r| r.binding.iter().filter(|b| b.node.0 == node).cloned().collect())
        };
        let job_of = |j: JobId| view.job(j);
        let give = |l: &mut Ledger, j: JobId, bs: &[TaskBinding]| {
            for b in bs {
                l.give(&job_of(j).task(), b, false);
            }
        };
        let take = |l: &mut Ledger, j: JobId, bs: &[TaskBinding]| {
            for b in bs {
                l.take(&job_of(j).task(), job_of(j).gpu_models(), b, false).expect("given back just now");
            }
        };
        let bindings: Vec<Vec<TaskBinding>> = lower.iter().map(|v| tasks_here(v.job)).collect();
        for (v, bs) in lower.iter().zip(&bindings) {
            give(ledger, v.job, bs);
        }
        let fits = |l: &Ledger| self.placement.passes_all(&l.nodes()[node as usize], req);
        if !fits(ledger) {
            for (v, bs) in lower.iter().zip(&bindings) {
                take(ledger, v.job, bs);
            }
            return None;
        }
        // Reprieve as many as possible, most important first; then put the victims back.
        let mut victims = Vec::new();
        for (v, bs) in lower.iter().zip(&bindings) {
            take(ledger, v.job, bs);
            if !fits(ledger) {
                give(ledger, v.job, bs);
                victims.push((*v, bs));
            }
        }
        for (v, bs) in &victims {
            take(ledger, v.job, bs);
        }
        let victims: Vec<Victim> = victims.into_iter().map(|(v, _)| v).collect();
        (!victims.is_empty()).then_some(victims)
    }
}

/// `pickOneNodeForPreemption` over the candidates in the order found.
fn pick_one(candidates: Vec<Candidate>) -> Option<Candidate> {
    let key = |c: &Candidate| {
        let highest = c.victims.iter().map(|v| v.priority).max().unwrap_or(i64::MIN);
        let sum: i128 = c.victims.iter().map(|v| i128::from(v.priority) + (1i128 << 31)).sum();
        // The earliest start among the highest-priority victims: the later, the better.
        let earliest = c.victims.iter().filter(|v| v.priority == highest).map(|v| v.start).min().unwrap_or_default();
        (highest, sum, c.victims.len(), std::cmp::Reverse(earliest))
    };
    // `min_by_key` keeps the first of equal keys.
    candidates.into_iter().min_by_key(key)
}

/// The running jobs on each node, for the dry run.
pub(super) struct RunningByNode {
    jobs: BTreeMap<u32, Vec<Victim>>,
    /// The lowest priority of a running job (`None`: none runs).
    lowest_priority: Option<i64>,
}

fn running_by_node(view: &SchedView<'_>) -> RunningByNode {
    let mut jobs: BTreeMap<u32, Vec<Victim>> = BTreeMap::new();
    let mut lowest: Option<i64> = None;
    for r in view.running().filter(|r| !r.binding.is_empty()) {
        let priority = view.job(r.job).priority();
        lowest = Some(lowest.map_or(priority, |l| l.min(priority)));
        for n in r.binding.nodes() {
            jobs.entry(n).or_default().push(Victim { job: r.job, priority, start: r.start });
        }
    }
    RunningByNode { jobs, lowest_priority: lowest }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_ten_percent_but_at_least_a_hundred() {
        assert_eq!(num_candidates(50), 50);
        assert_eq!(num_candidates(500), 100);
        assert_eq!(num_candidates(5000), 500);
    }
}
