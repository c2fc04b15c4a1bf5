//! `cluster-autoscaler`: Kubernetes' Cluster Autoscaler over the node groups of the
//! cluster configuration (pools with an `autoscale` table).
//!
//! Source: `kubernetes/autoscaler` `cluster-autoscaler` 1.36.1 (FAQ.md;
//! `core/static_autoscaler.go` `RunOnce`, `allPodsAreNew`; `clusterstate/clusterstate.go`
//! `updateReadinessStats`, `calculateUpcomingNodesInNodeGroup`;
//! `processors/customresources/gpu_processor.go`; `estimator/binpacking_estimator.go`;
//! `expander/`; `core/scaledown/`; `utils/backoff/`). Every `scan_interval` (10 s) it:
//!
//! 1. **Filters out pending pods that fit somewhere** (`FilterOutSchedulable`): on a Ready
//!    node with what it has left, else on an *upcoming* node — asked for and not yet
//!    Ready, counted only while its group's scale-up has not timed out — each taken as its
//!    group's empty template. The filters are `kube`'s: node selector and required node
//!    affinity, NoSchedule and NoExecute taints, CPU, memory, GPUs (count, model, shares).
//! 2. **Scales up** for the pods left, unless they are all new (the oldest pending pod
//!    under 2 s old, or the oldest pending GPU pod under 30 s: `allPodsAreNew`). Each group
//!    below its maximum and not backed off binpacks them, first fit, on new template nodes
//!    (the estimator); the expander picks one group — `least-waste` (the default since
//!    1.33), `random` (before), `most-pods`, `price`, `priority`, ties broken at random —
//!    which grows by the nodes its pods need. A node is Ready after its group's `ready`
//!    delay and takes pods once its GPUs are allocatable (`gpus_ready`); until then it is
//!    cordoned but billed. A node not Ready within `max_node_provision_time` (15 min) of
//!    the scale-up is given up (1.36 lowers the target size), and its group backs off:
//!    5 min, doubling to 30; a GPU-labelled node Ready without its GPUs counts as upcoming
//!    only until then.
//! 3. **Scales down** nodes whose requests are at most `scale_down_utilization_threshold`
//!    (0.5) of what they have — the larger of CPU and memory; a GPU node by its GPUs alone
//!    (`scale_down_gpu_utilization_threshold`, 0.5) — for `scale_down_unneeded_time`
//!    (10 min), not within `scale_down_delay_after_add` (10 min) of a scale-up nor in a
//!    loop that scaled up, never below the group's minimum. At most 10 nodes a loop
//!    (`--max-scale-down-parallelism`), empty ones first, and one node with pods
//!    (`--max-drain-parallelism` 1), only when all its pods fit on other Ready nodes; they
//!    are evicted with their grace (30 s, Kubernetes' default
//!    `terminationGracePeriodSeconds`) and the node leaves when they are gone.
//!
//! Not modelled: DaemonSet pods (none are simulated), the loop starting at once after a
//! scale-up (`--frequent-loops-enabled`: loops here keep to the 10 s grid), the template
//! taken from a real node of the group, `--balance-similar-node-groups`, resource totals.
//!
//! **GPU readiness.** A new GPU node reports Ready minutes before the NVIDIA driver and
//! device plugin make its GPUs allocatable. Upstream's GPU processor treats a node that
//! carries the cloud provider's GPU label (`gpu_label`) and has no allocatable GPU as not
//! ready, so it counts as upcoming while it starts, and the pending GPU pod is simulated
//! on it. A group whose template lacks the label shows the bug of kubernetes/autoscaler
//! #1659 and #3464 (NVIDIA/gpu-operator#708): the Ready node has no GPU for the pod, no
//! node is upcoming, and each scan while the pod waits adds another node.
//!
//! With `ready=90,gpus_ready=300` and one pending one-GPU pod, the unlabelled group gets 4
//! nodes: the first at 30 s (the GPU pod's 30 s), Ready at 120 s without GPUs; the loops
//! at 120, 210 and 300 s each add one, as each new node turns Ready without GPUs, until
//! the first node's GPUs arrive at 330 s. The labelled group gets one (the test
//! `cluster_autoscaler::gpu_readiness` pins both).
//!
//! Every scale-up, scale-down and give-up is in `decisions.jsonl` (event `controller`)
//! with its reason.

pub(crate) mod fleet;
pub(crate) mod room;

use fleet::{Fleet, Next, Phase};
use rand::RngExt;
use room::Room;
use sim_core::cluster::NodeId;
use sim_core::controller::{Action, Controller, Interests, Observed};
use sim_core::job::JobId;
use sim_core::policy::SchedView;
use sim_core::rng::SimRng;
use sim_core::spec::{Chosen, DECIMAL, OptionInfo, Spec, SpecError, canonical_values, permille_string};
use sim_core::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// `scan_interval=<seconds>`.
pub const SCAN_INTERVAL: OptionInfo =
    OptionInfo { key: "scan_interval", values: &["10", "<integer>"], doc: "seconds between loops (--scan-interval)" };
/// `expander=...`.
pub const EXPANDER: OptionInfo = OptionInfo {
    key: "expander",
    values: &["least-waste", "random", "most-pods", "price", "priority"],
    doc: "which group grows when several could (--expander; least-waste is the default since 1.33, random before)",
};
/// `max_node_provision_time=<seconds>`.
pub const MAX_PROVISION: OptionInfo = OptionInfo {
    key: "max_node_provision_time",
    values: &["900", "<integer>"],
    doc: "seconds a new node has to become Ready before it is given up (--max-node-provision-time)",
};
/// `scale_down=yes|no`.
pub const SCALE_DOWN: OptionInfo =
    OptionInfo { key: "scale_down", values: &["yes", "no"], doc: "remove unneeded nodes (--scale-down-enabled)" };
/// `scale_down_utilization_threshold=<fraction>`.
pub const THRESHOLD: OptionInfo = OptionInfo {
    key: "scale_down_utilization_threshold",
    values: &["0.5", DECIMAL],
    doc: "a node whose requests are at most this share of its CPU and memory is unneeded",
};
/// `scale_down_gpu_utilization_threshold=<fraction>`.
pub const GPU_THRESHOLD: OptionInfo = OptionInfo {
    key: "scale_down_gpu_utilization_threshold",
    values: &["0.5", DECIMAL],
    doc: "the same for a GPU node, by its GPUs requested",
};
/// `scale_down_unneeded_time=<seconds>`.
pub const UNNEEDED: OptionInfo = OptionInfo {
    key: "scale_down_unneeded_time",
    values: &["600", "<integer>"],
    doc: "seconds a node is unneeded before it is removed",
};
/// `scale_down_delay_after_add=<seconds>`.
pub const DELAY_AFTER_ADD: OptionInfo = OptionInfo {
    key: "scale_down_delay_after_add",
    values: &["600", "<integer>"],
    doc: "seconds after a scale-up before scale-down is considered again",
};
/// `gpu_label=<key>`.
pub const GPU_LABEL: OptionInfo = OptionInfo {
    key: "gpu_label",
    values: &["cloud.google.com/gke-accelerator"],
    doc: "the label that marks GPU nodes (the cloud provider's GPULabel: GCE's default; AWS \
          k8s.amazonaws.com/accelerator); a GPU node without it counts as Ready before its GPUs are",
};

/// `--max-scale-down-parallelism`: nodes removed in one loop.
const MAX_SCALE_DOWN: usize = 10;
/// No scale-up while the oldest pending pod is younger, or the oldest pending GPU pod
/// (`unschedulablePodTimeBuffer`, `unschedulablePodWithGpuTimeBuffer`).
const NEW_POD: SimDuration = SimDuration::from_secs(2);
const NEW_GPU_POD: SimDuration = SimDuration::from_secs(30);
/// The Cluster Autoscaler (see the module documentation).
pub struct ClusterAutoscaler {
    scan: SimDuration,
    expander: usize,
    scale_down: bool,
    threshold_permille: u64,
    gpu_threshold_permille: u64,
    unneeded_time: SimDuration,
    delay_after_add: SimDuration,
    /// The node groups and their nodes.
    fleet: Fleet,
    /// Since when each node has been unneeded.
    unneeded: BTreeMap<u32, SimTime>,
    last_scale_up: Option<SimTime>,
    /// Whether a scan timer is pending.
    scanning: bool,
}

impl ClusterAutoscaler {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[
        SCAN_INTERVAL,
        EXPANDER,
        MAX_PROVISION,
        SCALE_DOWN,
        THRESHOLD,
        GPU_THRESHOLD,
        UNNEEDED,
        DELAY_AFTER_ADD,
        GPU_LABEL,
    ];

    /// Builds it from a spec; `rng` is its own stream (the `random` expander, the
    /// provisioning delays).
    pub fn from_spec(spec: &Spec, rng: SimRng) -> Result<Self, SpecError> {
        let mut keys_only = spec.clone();
        keys_only.options.retain(|k, _| k != GPU_LABEL.key);
        let c = Chosen::check(&keys_only, Self::OPTIONS, "controller")?;
        let secs =
            // At most about 30 years: larger values would overflow microseconds.
            |o: OptionInfo| SimDuration::from_secs(c.number(o).unwrap_or_else(|| o.values[0].parse().unwrap_or(0)).min(1 << 30));
        let scan = secs(SCAN_INTERVAL);
        if scan.0 == 0 {
            return Err(SpecError::BadValue {
                kind: "controller",
                plugin: spec.name.clone(),
                key: SCAN_INTERVAL.key.into(),
                value: "0".into(),
                expected: "seconds above 0".into(),
            });
        }
        Ok(ClusterAutoscaler {
            scan,
            expander: c.index(EXPANDER),
            scale_down: c.index(SCALE_DOWN) == 0,
            threshold_permille: c.permille(THRESHOLD),
            gpu_threshold_permille: c.permille(GPU_THRESHOLD),
            unneeded_time: secs(UNNEEDED),
            delay_after_add: secs(DELAY_AFTER_ADD),
            fleet: Fleet::new(
                rng,
                secs(MAX_PROVISION),
                spec.options.get(GPU_LABEL.key).cloned().unwrap_or_else(|| GPU_LABEL.values[0].to_string()),
            ),
            unneeded: BTreeMap::new(),
            last_scale_up: None,
            scanning: false,
        })
    }

    /// The next scan after `now`, asked for unless one is pending.
    fn plan_scan(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        if self.scanning {
            return;
        }
        // Only while there is anything to do: pods waiting, nodes that may be removed,
        // nodes on their way (arrivals and ends start it again). So the run ends, and
        // the nodes' bill with it.
        let removable = self.scale_down && self.fleet.groups.iter().any(|g| self.fleet.present(g) > g.spec.min);
        if view.queue().is_empty() && !removable && !self.fleet.busy() {
            return;
        }
        let e = self.scan.0;
        let next = SimTime((view.now().0 / e + 1) * e);
        self.scanning = true;
        self.fleet.timers.at_always(next, u32::MAX, Next::Tick(0), out);
    }

    /// One loop: scale up for the pods that fit nowhere, else scale down.
    fn run_once(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let now = view.now();
        let pending = self.unschedulable(view);
        let scaled_up = !pending.is_empty() && !Self::all_new(view, &pending) && self.scale_up(view, &pending, out);
        if scaled_up {
            self.last_scale_up = Some(now);
            self.unneeded.clear();
        } else if self.scale_down {
            self.scale_down(view, out);
        }
        self.plan_scan(view, out);
    }

    /// Whether the pending pods are all too new to scale up for (`allPodsAreNew`).
    fn all_new(view: &SchedView<'_>, pending: &[(JobId, u32)]) -> bool {
        let now = view.now();
        let oldest = pending.iter().map(|p| view.job(p.0).submit()).min();
        let oldest_gpu = pending.iter().filter(|p| view.job(p.0).task().gpus > 0).map(|p| view.job(p.0).submit()).min();
        oldest.is_some_and(|t| t + NEW_POD > now) || oldest_gpu.is_some_and(|t| t + NEW_GPU_POD > now)
    }

    /// The pending pods (job, tasks) that fit neither a Ready node nor an upcoming one.
    fn unschedulable(&self, view: &SchedView<'_>) -> Vec<(JobId, u32)> {
        if view.queue().is_empty() {
            return Vec::new();
        }
        let now = view.now();
        let mut rooms = self.fleet.ready_rooms(view, &[]);
        for g in &self.fleet.groups {
            for n in g.nodes.clone() {
                let upcoming = match self.fleet.phase[&n] {
                    Phase::Booting { asked, .. } => now < asked + self.fleet.max_provision,
                    // Upstream's GPU processor: a GPU-labelled node without allocatable GPUs is
                    // not ready; while it starts it counts as upcoming.
                    Phase::NoGpus { asked, .. } => g.gpu_labelled && now < asked + self.fleet.max_provision,
                    _ => false,
                };
                if upcoming {
                    rooms.push(g.template.clone());
                }
            }
        }
        let mut left = Vec::new();
        for &j in view.queue() {
            let job = view.job(j);
            let (task, models, c) = (job.task(), job.gpu_models(), job.constraints());
            let mut unplaced = 0;
            for _ in 0..job.tasks() {
                match rooms.iter_mut().find(|r| r.fits(&task, models, c)) {
                    Some(r) => r.take(&task),
                    None => unplaced += 1,
                }
            }
            if unplaced > 0 {
                left.push((j, unplaced));
            }
        }
        left
    }

    /// Scales one group up for `pending`; whether it did.
    fn scale_up(&mut self, view: &SchedView<'_>, pending: &[(JobId, u32)], out: &mut Vec<Action>) -> bool {
        let now = view.now();
        // Per group: (group, nodes, pods helped, waste score ‰, price of the nodes).
        let mut options: Vec<(usize, u32, u32, u64, u64)> = Vec::new();
        for (gi, g) in self.fleet.groups.iter().enumerate() {
            let room_left = self.fleet.absent(g);
            if room_left == 0 || now < g.backoff_until {
                continue;
            }
            let mut new: Vec<Room> = Vec::new();
            let (mut pods, mut cpu, mut mem, mut gpu_pods) = (0u32, 0u64, 0u64, false);
            for &(j, tasks) in pending {
                let job = view.job(j);
                let (task, models, c) = (job.task(), job.gpu_models(), job.constraints());
                if !g.template.fits(&task, models, c) {
                    continue;
                }
                for _ in 0..tasks {
                    let at = match new.iter().position(|r| r.fits(&task, models, c)) {
                        Some(i) => i,
                        None if (new.len() as u32) < room_left => {
                            new.push(g.template.clone());
                            new.len() - 1
                        }
                        None => break,
                    };
                    new[at].take(&task);
                    pods += 1;
                    cpu += task.cpu_milli();
                    mem += task.memory_mib;
                    gpu_pods |= task.gpus > 0;
                }
            }
            if pods == 0 {
                continue;
            }
            let n = new.len() as u64;
            // least-waste: the unrequested share of the new nodes' CPU plus that of their
            // memory (`expander/waste/waste.go`, on the template's capacity).
            let waste = |have: u64, used: u64| (have.saturating_sub(used) * 1_000_000).checked_div(have).unwrap_or(0);
            let score = waste(g.template.cpu_capacity * n, cpu) + waste(g.template.mem_capacity * n, mem);
            // price (simplified from `expander/price/price.go`): the new nodes' price per
            // pod helped, a thousand times worse for GPU nodes when no pod asks for a GPU.
            let gpu_waste = if !g.template.gpus.is_empty() && !gpu_pods { 1000 } else { 1 };
            options.push((gi, n as u32, pods, score, n * g.spec.price_micros * gpu_waste));
        }
        if options.is_empty() {
            return false;
        }
        let chosen = self.expand(&options);
        let (gi, count, pods, _, _) = options[chosen];
        let ids = self.fleet.launch(view, gi, count, out);
        if ids.is_empty() {
            return false;
        }
        let name = EXPANDER.values[self.expander];
        out.push(Action::Note {
            what: "scale-up".into(),
            reason: format!(
                "group {}: +{} node(s) {:?} for {pods} pending pod(s) that fit no node, Ready or upcoming \
                 ({} pod(s) waiting in all; expander {name} from {} option(s))",
                self.fleet.groups[gi].name,
                ids.len(),
                ids,
                pending.iter().map(|p| p.1).sum::<u32>(),
                options.len()
            ),
        });
        true
    }

    /// The expander's choice among `options` (index): the best by its measure (lower is
    /// better), then one at random among those tied, as the expanders' chain ends.
    fn expand(&mut self, options: &[(usize, u32, u32, u64, u64)]) -> usize {
        let groups = &self.fleet.groups;
        let expander = EXPANDER.values[self.expander];
        let measure = |o: &(usize, u32, u32, u64, u64)| -> i128 {
            let (gi, _, pods, waste, price) = *o;
            match expander {
                "most-pods" => -i128::from(pods),
                "least-waste" => i128::from(waste),
                "price" => i128::from(price) * 1_000_000 / i128::from(pods.max(1)),
                "priority" => -i128::from(groups[gi].spec.priority),
                _ => 0,
            }
        };
        let best = options.iter().map(measure).min().expect("options");
        let tied: Vec<usize> = (0..options.len()).filter(|&i| measure(&options[i]) == best).collect();
        if tied.len() == 1 { tied[0] } else { tied[self.fleet.rng.random_range(0..tied.len())] }
    }

    /// Removes unneeded nodes: empty ones in bulk, else one whose pods fit elsewhere.
    fn scale_down(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let now = view.now();
        let ledger = view.ledger();
        let mut candidates: Vec<(u32, usize)> = Vec::new();
        for (gi, g) in self.fleet.groups.iter().enumerate() {
            for n in g.nodes.clone() {
                if self.fleet.phase[&n] != Phase::Ready {
                    self.unneeded.remove(&n);
                    continue;
                }
                // Requests over allocatable (`simulator/utilization`): a GPU node by its GPUs
                // alone; unneeded at or below the threshold (`eligibility.go`).
                let r = Room::of(ledger.node(NodeId(n)));
                let low = if r.gpus.is_empty() {
                    r.cpu_mem_use_permille() <= self.threshold_permille
                } else {
                    r.gpu_use_permille() <= self.gpu_threshold_permille
                };
                if low {
                    let since = *self.unneeded.entry(n).or_insert(now);
                    if now >= since + self.unneeded_time {
                        candidates.push((n, gi));
                    }
                } else {
                    self.unneeded.remove(&n);
                }
            }
        }
        if candidates.is_empty() || self.last_scale_up.is_some_and(|t| now < t + self.delay_after_add) {
            return;
        }
        let mut left: Vec<u32> = self.fleet.groups.iter().map(|g| self.fleet.present(g)).collect();
        let mut removed = 0;
        // Empty nodes first, then at most one whose pods move (`budgets.go`, `CropNodes`).
        let (empty, busy): (Vec<_>, Vec<_>) =
            candidates.into_iter().partition(|c| view.jobs_on(NodeId(c.0)).is_empty());
        for (n, gi) in empty {
            if removed < MAX_SCALE_DOWN && left[gi] > self.fleet.groups[gi].spec.min {
                self.remove(view, n, gi, &[], "empty", out);
                left[gi] -= 1;
                removed += 1;
            }
        }
        for (n, gi) in busy {
            if removed < MAX_SCALE_DOWN && left[gi] > self.fleet.groups[gi].spec.min {
                let jobs = view.jobs_on(NodeId(n));
                if self.fleet.movable(view, n, &jobs) {
                    self.remove(view, n, gi, &jobs, "its pods fit on other nodes", out);
                    break;
                }
            }
        }
    }

    /// Starts removing node `n` of group `gi`: cordoned, its pods evicted; it leaves when
    /// their grace is over.
    fn remove(&mut self, view: &SchedView<'_>, n: u32, gi: usize, jobs: &[JobId], why: &str, out: &mut Vec<Action>) {
        let now = view.now();
        let since = self.unneeded.remove(&n).unwrap_or(now);
        self.fleet.retire(view, n, jobs, out);
        out.push(Action::Note {
            what: "scale-down".into(),
            reason: format!(
                "group {}: node {n} unneeded since {} s (requests at most the threshold), {why}",
                self.fleet.groups[gi].name,
                since.0 / 1_000_000
            ),
        });
    }

    /// A node's timer; then the loop resumes if it had stopped.
    fn on_node(&mut self, view: &SchedView<'_>, n: u32, what: Next, out: &mut Vec<Action>) {
        self.fleet.on_node(view, n, what, out);
        if !self.scanning {
            self.plan_scan(view, out);
        }
    }
}

impl Controller for ClusterAutoscaler {
    fn spec(&self) -> String {
        let secs = |d: SimDuration| (d.0 / 1_000_000).to_string();
        canonical_values(
            "cluster-autoscaler",
            &[
                ("scan_interval", secs(self.scan)),
                ("expander", EXPANDER.values[self.expander].to_string()),
                ("max_node_provision_time", secs(self.fleet.max_provision)),
                ("scale_down", if self.scale_down { "yes" } else { "no" }.to_string()),
                ("scale_down_utilization_threshold", permille_string(self.threshold_permille)),
                ("scale_down_gpu_utilization_threshold", permille_string(self.gpu_threshold_permille)),
                ("scale_down_unneeded_time", secs(self.unneeded_time)),
                ("scale_down_delay_after_add", secs(self.delay_after_add)),
                ("gpu_label", self.fleet.gpu_label.clone()),
            ],
        )
    }

    fn interests(&self) -> Interests {
        Interests { arrivals: true, ends: true, ..Interests::default() }
    }

    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        self.fleet.start(view);
        if !self.fleet.groups.is_empty() {
            self.plan_scan(view, out);
        }
    }

    fn on_timer(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let Some((_, node, what)) = self.fleet.timers.fired() else { return };
        if what == Next::Tick(0) {
            self.scanning = false;
            self.run_once(view, out);
        } else {
            self.on_node(view, node, what, out);
        }
    }

    fn on_event(&mut self, view: &SchedView<'_>, _event: &Observed, out: &mut Vec<Action>) {
        if !self.fleet.groups.is_empty() {
            self.plan_scan(view, out);
        }
    }
}
