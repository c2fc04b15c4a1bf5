//! `karpenter`: a Karpenter-like provisioner over the node groups of the cluster
//! configuration, each group an instance type it may launch (its cores, memory, GPUs,
//! labels, taints, price, spot or on-demand).
//!
//! Source: `kubernetes-sigs/karpenter` v1.14 (`pkg/controllers/provisioning`: `batcher.go`,
//! `scheduling/queue.go`, `scheduling/scheduler.go`, `nodeclaim.go`; `pkg/controllers/
//! disruption`: `emptiness.go`, `singlenodeconsolidation.go`, `helpers.go`;
//! `pkg/apis/v1/nodepool.go` for the defaults; `nodeclaim/lifecycle` for registration and
//! initialization).
//!
//! * **Batches.** The first pending pod opens a batch window; it closes after
//!   `batch_idle` (1 s) without a new pod or `batch_max` (10 s) after it opened
//!   (`BATCH_IDLE_DURATION`, `BATCH_MAX_DURATION`). The provisioner also looks every 10 s.
//! * **Scheduling a batch.** Pods go largest first (CPU, then memory). Each tries the
//!   Ready nodes and the nodes still starting (in-flight NodeClaims count as capacity, so
//!   a GPU node whose GPUs are not yet allocatable is not launched twice: a NodeClaim is
//!   initialized only once its extended resources are registered), then the new NodeClaims
//!   of this batch, then a new NodeClaim. A NodeClaim keeps every instance type that can
//!   hold all its pods; it launches the cheapest of them (the cloud provider's
//!   lowest-price choice among the types it is given) that has a node left.
//! * **Disruption**, every 10 s, on nodes initialized and without a pod event for
//!   `consolidate_after` (0 s): empty nodes are deleted (`WhenEmpty` and
//!   `WhenEmptyOrUnderutilized`); under `WhenEmptyOrUnderutilized` (the default) a node
//!   whose pods all fit on the other nodes is deleted, or one whose pods fit on one node
//!   of a cheaper type is replaced (the replacement launched first, the node drained when
//!   it is Ready; spot nodes are not replaced by spot, as the spot-to-spot feature gate is
//!   off by default). At most `budget` percent of the nodes (10 %, rounded up) are being
//!   disrupted at once. Removal cordons the node, evicts its pods with their grace and
//!   deletes it.
//! * A NodeClaim not registered within 15 minutes is deleted.
//!
//! Not modelled: multi-node consolidation, drift and expiry (`expireAfter` 720 h), the
//! 15 s validation of a consolidation decision, NodePool limits and weights, and the
//! interruption queue (see the `spot` controller).

use crate::cluster_autoscaler::fleet::{Fleet, Next, Phase};
use crate::cluster_autoscaler::room::Room;
use sim_core::cluster::NodeId;
use sim_core::constraints::PodConstraints;
use sim_core::controller::{Action, Controller, Interests, Observed};
use sim_core::job::{JobId, TaskShape};
use sim_core::policy::SchedView;
use sim_core::rng::SimRng;
use sim_core::spec::{Chosen, OptionInfo, Spec, SpecError, canonical_values};
use sim_core::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// `consolidation=...`.
pub const CONSOLIDATION: OptionInfo = OptionInfo {
    key: "consolidation",
    values: &["when-empty-or-underutilized", "when-empty", "never"],
    doc: "consolidationPolicy: WhenEmptyOrUnderutilized (the default), WhenEmpty; never: consolidateAfter Never",
};
/// `consolidate_after=<seconds>`.
pub const CONSOLIDATE_AFTER: OptionInfo = OptionInfo {
    key: "consolidate_after",
    values: &["0", "<integer>"],
    doc: "seconds a node must go without a pod starting or ending on it before it is consolidated",
};
/// `budget=<percent>`.
pub const BUDGET: OptionInfo = OptionInfo {
    key: "budget",
    values: &["10", "<integer>"],
    doc: "disruption budget: at most this percent of the nodes (rounded up) disrupted at once (nodes: 10%)",
};
/// `batch_idle=<seconds>`.
pub const BATCH_IDLE: OptionInfo =
    OptionInfo { key: "batch_idle", values: &["1", "<integer>"], doc: "BATCH_IDLE_DURATION, seconds" };
/// `batch_max=<seconds>`.
pub const BATCH_MAX: OptionInfo =
    OptionInfo { key: "batch_max", values: &["10", "<integer>"], doc: "BATCH_MAX_DURATION, seconds" };

/// The disruption controller's poll, and the provisioner's own look.
const POLL: SimDuration = SimDuration::from_secs(10);
/// NodeClaim registration timeout.
const REGISTRATION_TTL: SimDuration = SimDuration::from_secs(900);
const BATCH: u8 = 1;
const DISRUPT: u8 = 2;

/// One pod to place: its job, shape, GPU models and constraints.
type PodOf<'a> = (JobId, TaskShape, &'a [String], Option<&'a PodConstraints>);

/// The Karpenter-like provisioner (see the module documentation).
pub struct Karpenter {
    consolidation: usize,
    consolidate_after: SimDuration,
    budget_percent: u64,
    batch_idle: SimDuration,
    batch_max: SimDuration,
    fleet: Fleet,
    /// The open batch window: when it opened, and when it closes if no pod comes.
    batch: Option<(SimTime, SimTime)>,
    /// Whether the batch timer and the disruption poll are pending.
    batch_timer: Option<SimTime>,
    polling: bool,
    /// The last time a pod started or ended on each node.
    pod_event: BTreeMap<u32, SimTime>,
    /// The nodes each running job holds.
    job_nodes: BTreeMap<JobId, Vec<u32>>,
    /// Replacements launched: replacement node → the node it replaces, until that one is
    /// gone (the replacement is not disrupted meanwhile).
    replacing: BTreeMap<u32, u32>,
}

impl Karpenter {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[CONSOLIDATION, CONSOLIDATE_AFTER, BUDGET, BATCH_IDLE, BATCH_MAX];

    /// Builds it from a spec; `rng` is its own stream (the provisioning delays).
    pub fn from_spec(spec: &Spec, rng: SimRng) -> Result<Self, SpecError> {
        let c = Chosen::check(spec, Self::OPTIONS, "controller")?;
        // At most about 30 years of seconds: larger values would overflow microseconds.
        let number = |o: OptionInfo| c.number(o).unwrap_or_else(|| o.values[0].parse().unwrap_or(0)).min(1 << 30);
        Ok(Karpenter {
            consolidation: c.index(CONSOLIDATION),
            consolidate_after: SimDuration::from_secs(number(CONSOLIDATE_AFTER)),
            budget_percent: number(BUDGET).min(100),
            batch_idle: SimDuration::from_secs(number(BATCH_IDLE)),
            batch_max: SimDuration::from_secs(number(BATCH_MAX)),
            fleet: Fleet::new(rng, REGISTRATION_TTL, String::new()),
            batch: None,
            batch_timer: None,
            polling: false,
            pod_event: BTreeMap::new(),
            job_nodes: BTreeMap::new(),
            replacing: BTreeMap::new(),
        })
    }

    /// A pod arrived or may be pending: open the batch window, or keep it open.
    fn pod_pending(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let now = view.now();
        let (opened, _) = self.batch.unwrap_or((now, now));
        let closes = (now + self.batch_idle).min(opened + self.batch_max);
        self.batch = Some((opened, closes));
        if self.batch_timer.is_none_or(|t| t > closes) {
            self.batch_timer = Some(closes);
            self.fleet.timers.at_always(closes, u32::MAX, Next::Tick(BATCH), out);
        }
    }

    /// The disruption poll, asked for unless pending.
    /// Once every job has ended, only while nodes may still be consolidated away or are
    /// on their way: so that the run ends, and the nodes' bill with it.
    fn poll(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let removable = self.consolidation != 2 && self.fleet.groups.iter().any(|g| self.fleet.present(g) > 0);
        if !self.polling && (view.jobs_left() > 0 || removable || self.fleet.busy()) {
            self.polling = true;
            self.fleet.timers.at_always(view.now() + POLL, u32::MAX, Next::Tick(DISRUPT), out);
        }
    }

    /// The pending pods, largest first (CPU, then memory; `queue.go`).
    fn pending<'a>(view: &SchedView<'a>) -> Vec<PodOf<'a>> {
        let mut pods: Vec<PodOf<'a>> = Vec::new();
        for &j in view.queue() {
            let job = view.job(j);
            for _ in 0..job.tasks() {
                pods.push((j, job.task(), job.gpu_models(), job.constraints()));
            }
        }
        pods.sort_by_key(|p| (std::cmp::Reverse(p.1.cpu_milli()), std::cmp::Reverse(p.1.memory_mib)));
        pods
    }

    /// The nodes pods may go to now or once started: Ready ones with what they have
    /// left, starting ones empty.
    fn capacity(&self, view: &SchedView<'_>) -> Vec<Room> {
        let mut rooms = self.fleet.ready_rooms(view, &[]);
        for g in &self.fleet.groups {
            for n in g.nodes.clone() {
                if matches!(self.fleet.phase[&n], Phase::Booting { .. } | Phase::NoGpus { .. }) {
                    rooms.push(g.template.clone());
                }
            }
        }
        rooms
    }

    /// The batch closed: schedule its pods, launch the NodeClaims they need.
    fn provision(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let mut rooms = self.capacity(view);
        // New NodeClaims: their pods and the instance types (groups) that hold them all.
        let mut claims: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
        let pods = Self::pending(view);
        let fits_all = |gi: usize, members: &[usize], extra: usize, fleet: &Fleet| {
            let mut r = fleet.groups[gi].template.clone();
            members.iter().chain(std::iter::once(&extra)).all(|&k| {
                let (_, t, m, c) = pods[k];
                let ok = r.fits(&t, m, c);
                if ok {
                    r.take(&t);
                }
                ok
            })
        };
        let mut unplaced = 0;
        for (k, &(_, task, models, c)) in pods.iter().enumerate() {
            if let Some(r) = rooms.iter_mut().find(|r| r.fits(&task, models, c)) {
                r.take(&task);
                continue;
            }
            // The batch's NodeClaims, fewest pods first.
            let mut order: Vec<usize> = (0..claims.len()).collect();
            order.sort_by_key(|&i| claims[i].0.len());
            let joined = order.into_iter().find_map(|i| {
                let types: Vec<usize> =
                    claims[i].1.iter().copied().filter(|&gi| fits_all(gi, &claims[i].0, k, &self.fleet)).collect();
                (!types.is_empty()).then_some((i, types))
            });
            match joined {
                Some((i, types)) => {
                    claims[i].0.push(k);
                    claims[i].1 = types;
                }
                None => {
                    let types: Vec<usize> = (0..self.fleet.groups.len())
                        .filter(|&gi| self.fleet.absent(&self.fleet.groups[gi]) > 0)
                        .filter(|&gi| fits_all(gi, &[], k, &self.fleet))
                        .collect();
                    if types.is_empty() {
                        unplaced += 1;
                    } else {
                        claims.push((vec![k], types));
                    }
                }
            }
        }
        let mut taken: BTreeMap<usize, u32> = BTreeMap::new();
        for (members, types) in claims {
            // The cheapest type with a node left (ties: the first group).
            let free = |gi: usize, fleet: &Fleet, taken: &BTreeMap<usize, u32>| {
                fleet.absent(&fleet.groups[gi]) > taken.get(&gi).copied().unwrap_or(0)
            };
            let Some(gi) = types
                .iter()
                .copied()
                .filter(|&gi| free(gi, &self.fleet, &taken))
                .min_by_key(|&gi| (self.fleet.groups[gi].spec.price_micros, gi))
            else {
                unplaced += members.len();
                continue;
            };
            *taken.entry(gi).or_default() += 1;
            let ids = self.fleet.launch(view, gi, 1, out);
            let names: Vec<&str> = types.iter().map(|&t| self.fleet.groups[t].name.as_str()).collect();
            out.push(Action::Note {
                what: "provision".into(),
                reason: format!(
                    "nodeclaim for {} pending pod(s): group {} node {:?}, the cheapest of {:?} that holds them",
                    members.len(),
                    self.fleet.groups[gi].name,
                    ids,
                    names
                ),
            });
        }
        if unplaced > 0 && view.logging() {
            out.push(Action::Note {
                what: "provision-failed".into(),
                reason: format!("{unplaced} pending pod(s) fit no instance type with a node left"),
            });
        }
    }

    /// One disruption pass: empty nodes, then one underutilized node, within the budget.
    fn disrupt(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        if self.consolidation == 2 {
            return;
        }
        let now = view.now();
        let present: u32 = self.fleet.groups.iter().map(|g| self.fleet.present(g)).sum();
        // Nodes being disrupted: leaving, or waiting for their replacement.
        let leaving = self.fleet.phase.values().filter(|p| **p == Phase::Leaving).count() as u64;
        let disrupting = leaving + self.replacing.len() as u64;
        let mut allowed = (u64::from(present) * self.budget_percent).div_ceil(100).saturating_sub(disrupting);
        // Nodes being replaced and their replacements are left alone.
        let replaced: Vec<u32> = self.replacing.iter().flat_map(|(&a, &b)| [a, b]).collect();
        let candidates: Vec<u32> = self
            .fleet
            .phase
            .iter()
            .filter(|(n, p)| **p == Phase::Ready && !replaced.contains(n))
            .filter(|(n, _)| self.pod_event.get(n).is_none_or(|&t| now >= t + self.consolidate_after))
            .map(|(&n, _)| n)
            .collect();
        // An empty node a pending pod fits on is nominated for it, not empty.
        let nominated = |n: u32| {
            let room = Room::of(view.ledger().node(NodeId(n)));
            view.queue().iter().any(|&j| {
                let job = view.job(j);
                room.fits(&job.task(), job.gpu_models(), job.constraints())
            })
        };
        for &n in &candidates {
            if allowed > 0 && view.jobs_on(NodeId(n)).is_empty() && !nominated(n) {
                allowed -= 1;
                self.fleet.retire(view, n, &[], out);
                let g = &self.fleet.groups[self.fleet.group_of(n)].name;
                out.push(Action::Note {
                    what: "disrupt".into(),
                    reason: format!("group {g}: node {n} empty, deleted"),
                });
            }
        }
        if self.consolidation != 0 || allowed == 0 {
            return;
        }
        // Single-node consolidation: the node with the fewest pods first.
        let mut busy: Vec<(usize, u32)> = candidates
            .iter()
            .filter(|&&n| self.fleet.phase[&n] == Phase::Ready)
            .map(|&n| (view.jobs_on(NodeId(n)).len(), n))
            .filter(|c| c.0 > 0)
            .collect();
        busy.sort();
        for (_, n) in busy {
            if self.consolidate(view, n, out) {
                return;
            }
        }
    }

    /// Deletes node `n` when its pods fit on the other nodes, or replaces it by one node of
    /// a cheaper type that holds them; whether it did either.
    fn consolidate(&mut self, view: &SchedView<'_>, n: u32, out: &mut Vec<Action>) -> bool {
        let jobs = view.jobs_on(NodeId(n));
        let gi = self.fleet.group_of(n);
        let name = self.fleet.groups[gi].name.clone();
        if self.fleet.movable(view, n, &jobs) {
            self.fleet.retire(view, n, &jobs, out);
            out.push(Action::Note {
                what: "disrupt".into(),
                reason: format!("group {name}: node {n} underutilized, its pods fit on the other nodes: deleted"),
            });
            return true;
        }
        let (price, spot) = (self.fleet.groups[gi].spec.price_micros, self.fleet.groups[gi].spec.spot);
        let cheaper = (0..self.fleet.groups.len())
            .filter(|&t| {
                let g = &self.fleet.groups[t];
                g.spec.price_micros < price && !(spot && g.spec.spot) && self.fleet.absent(g) > 0
            })
            .filter(|&t| Fleet::fit_pods_of(view, n, &jobs, &mut [self.fleet.groups[t].template.clone()]))
            .min_by_key(|&t| (self.fleet.groups[t].spec.price_micros, t));
        let Some(t) = cheaper else { return false };
        let ids = self.fleet.launch(view, t, 1, out);
        if let Some(&r) = ids.first() {
            self.replacing.insert(r, n);
            out.push(Action::Note {
                what: "disrupt".into(),
                reason: format!(
                    "group {name}: node {n} underutilized: replaced by node {r} of the cheaper group {}",
                    self.fleet.groups[t].name
                ),
            });
        }
        !ids.is_empty()
    }

    /// A node's timer; a replacement that is Ready lets the node it replaces go.
    fn on_node(&mut self, view: &SchedView<'_>, n: u32, what: Next, out: &mut Vec<Action>) {
        self.fleet.on_node(view, n, what, out);
        match self.fleet.phase[&n] {
            Phase::Ready if what != Next::Gone => {
                self.pod_event.insert(n, view.now());
                if let Some(&old) = self.replacing.get(&n)
                    && self.fleet.phase[&old] == Phase::Ready
                {
                    let jobs = view.jobs_on(NodeId(old));
                    self.fleet.retire(view, old, &jobs, out);
                }
            }
            Phase::Absent => {
                // A replacement given up, or a replaced node gone.
                self.replacing.retain(|&r, &mut old| r != n && old != n);
            }
            _ => {}
        }
        self.poll(view, out);
    }
}

impl Controller for Karpenter {
    fn spec(&self) -> String {
        let secs = |d: SimDuration| (d.0 / 1_000_000).to_string();
        canonical_values(
            "karpenter",
            &[
                ("consolidation", CONSOLIDATION.values[self.consolidation].to_string()),
                ("consolidate_after", secs(self.consolidate_after)),
                ("budget", self.budget_percent.to_string()),
                ("batch_idle", secs(self.batch_idle)),
                ("batch_max", secs(self.batch_max)),
            ],
        )
    }

    fn interests(&self) -> Interests {
        Interests { arrivals: true, starts: true, ends: true, ..Interests::default() }
    }

    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        self.fleet.start(view);
        if !self.fleet.groups.is_empty() {
            self.poll(view, out);
        }
    }

    fn on_timer(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let Some((at, node, what)) = self.fleet.timers.fired() else { return };
        match what {
            Next::Tick(BATCH) => {
                if self.batch_timer == Some(at) {
                    self.batch_timer = None;
                }
                match self.batch {
                    // Closed: idle or at its longest.
                    Some((_, closes)) if closes <= at => {
                        self.batch = None;
                        self.provision(view, out);
                    }
                    // Kept open by later pods: wait for its new close.
                    Some((_, closes)) if self.batch_timer.is_none() => {
                        self.batch_timer = Some(closes);
                        self.fleet.timers.at_always(closes, u32::MAX, Next::Tick(BATCH), out);
                    }
                    _ => {}
                }
            }
            Next::Tick(_) => {
                self.polling = false;
                self.disrupt(view, out);
                // The provisioner's own look every 10 s: pods still pending.
                if !view.queue().is_empty() && self.batch.is_none() {
                    self.pod_pending(view, out);
                }
                if !view.queue().is_empty() || self.fleet.groups.iter().any(|g| self.fleet.present(g) > 0) {
                    self.poll(view, out);
                }
            }
            _ => self.on_node(view, node, what, out),
        }
    }

    fn on_event(&mut self, view: &SchedView<'_>, event: &Observed, out: &mut Vec<Action>) {
        if self.fleet.groups.is_empty() {
            return;
        }
        let now = view.now();
        match *event {
            Observed::Arrived { .. } => self.pod_pending(view, out),
            Observed::Started { job } => {
                let nodes: Vec<u32> = view.running_job(job).map(|r| r.nodes(view.cluster())).unwrap_or_default();
                for &n in &nodes {
                    self.pod_event.insert(n, now);
                }
                self.job_nodes.insert(job, nodes);
            }
            Observed::Ended { job } => {
                for n in self.job_nodes.remove(&job).unwrap_or_default() {
                    self.pod_event.insert(n, now);
                }
            }
            _ => {}
        }
        self.poll(view, out);
    }
}
