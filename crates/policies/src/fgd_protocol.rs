//! The FGD paper's experiment protocol (Weng et al., USENIX ATC'23; its simulator's
//! `Simulate`, `SortClusterPods`, `TunePodsByNodeTotalResource`, `SchedulePods`,
//! `ClusterGpuFragReport`): arrival only, no time, no departures, no queue.
//!
//! 1. The typical pods are taken from the workload as read (before tuning).
//! 2. The pods are sorted by name and shuffled with the run's seed.
//! 3. The workload is tuned to `ratio` × the cluster's GPU capacity: pods are dropped at
//!    random while the total is above the target; below it, pods drawn with replacement
//!    from the name-sorted workload are appended until the next would pass the target
//!    (the simulator compares against the drawn pod's milli-GPU *per GPU*, and so do we).
//! 4. Nodes get a random order (the simulator prefixes node names with a random
//!    permutation index, and its scheduler takes the first best-scoring node by name):
//!    ties between equally scored nodes go to the first in that order. (With uniform
//!    tie-breaking every policy but BestFit loses about three points of allocation
//!    against the published curves; with this rule all six match them.)
//! 5. Each pod is placed or fails; after each one the arrived GPU (failed pods
//!    included), the allocated GPU and the fragmentation are sampled.

use crate::placement::frag::{FragMeter, PodType, TypicalPods};
use crate::placement::{MemoryFit, PlaceCx, Placement, PodReq};
use sim_core::job::TaskShape;
use sim_core::ledger::{Ledger, MILLI};
use sim_core::rng::go::GoRand;
use sim_core::rng::{self, RngStreams, SimRng, uniform_index};
use sim_core::{Cluster, NodeId};
use std::collections::HashMap;

/// One pod of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pod {
    /// Its name (the order pods are shuffled from).
    pub name: String,
    /// What it asks for.
    pub task: TaskShape,
    /// GPU models it accepts (empty = any).
    pub models: Vec<String>,
}

impl Pod {
    /// Milli-GPU over all its GPUs.
    pub fn total_milli(&self) -> u64 {
        self.task.gpus as u64 * self.task.gpu_milli() as u64
    }
    fn pod_type(&self) -> PodType {
        PodType {
            cpu_milli: self.task.cpu_milli(),
            gpu_milli: self.task.gpu_milli(),
            gpus: self.task.gpus,
            models: self.models.join("|"),
        }
    }
}

/// The cluster after one pod.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// Milli-GPU requested by the pods so far, failed ones included.
    pub arrived_milli: u64,
    /// Milli-GPU allocated.
    pub used_milli: u64,
    /// Fragmented milli-GPU, `Σ_n F_n`.
    pub frag_milli: f64,
    /// Idle milli-GPU.
    pub idle_milli: u64,
}

/// One run's result.
#[derive(Clone, Debug, Default)]
pub struct ProtocolRun {
    /// One sample per pod, in arrival order.
    pub samples: Vec<Sample>,
    /// Pods placed.
    pub placed: usize,
    /// Pods that fitted nowhere.
    pub failed: usize,
    /// GPUs in the cluster.
    pub total_gpus: u64,
}

/// The paper's six placements, in its order.
pub const PAPER_POLICIES: &[&str] = &["random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd"];

/// Where a run's random draws come from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FgdRng {
    /// schedlab's named ChaCha streams (`fgd-shuffle`, `fgd-tune`, `fgd-node-order`,
    /// `fgd-select`) of the run's seed.
    ChaCha,
    /// Go's `math/rand` global source seeded with the run's seed, drawn in the FGD
    /// simulator's order (`docs/gpu.md`, "Go's random source"): one `Int()`, the pod
    /// shuffle, the tuning draws, the `Float64()` draws of the client-go reflectors
    /// started before the nodes are created, then `Perm` of the nodes; and the
    /// fragmentation summed as the Go code sums it ([`FragMeter::summed_as_go`]).
    Go {
        /// `Float64()` draws between the tuning and the node permutation; `None`: ten
        /// after a tuning that cloned pods (or none), nine after one that dropped pods.
        /// The reflectors draw from their own goroutines: after a long tuning all ten
        /// have drawn before the permutation, after a short one usually one has not
        /// (a race in the original; `docs/gpu.md`).
        informer_draws: Option<u32>,
    },
}

/// The draws of one run before any pod is placed, from either source.
enum Draws {
    /// The run's streams, and its `fgd-tune` stream.
    ChaCha(RngStreams, Box<SimRng>),
    Go(Box<GoRand>, Option<u32>),
}

impl Draws {
    fn new(rng: FgdRng, seed: u64) -> Self {
        match rng {
            FgdRng::ChaCha => {
                let streams = RngStreams::new(seed);
                let tune = Box::new(streams.stream("fgd-tune"));
                Draws::ChaCha(streams, tune)
            }
            FgdRng::Go { informer_draws } => {
                // core.go: rand.Seed(tuneseed), then a log line that calls rand.Int().
                let mut g = GoRand::new(seed as i64);
                g.int();
                Draws::Go(Box::new(g), informer_draws)
            }
        }
    }

    /// The pods' order: `order` shuffled.
    fn shuffle(&mut self, order: &mut [usize]) {
        match self {
            Draws::ChaCha(streams, _) => rng::shuffle(&mut streams.stream("fgd-shuffle"), order),
            Draws::Go(g, _) => g.shuffle(order.len(), |i, j| order.swap(i, j)),
        }
    }

    /// A tuning draw in `0..n` (`Intn(n)`).
    fn tune(&mut self, n: usize) -> usize {
        match self {
            Draws::ChaCha(_, tune) => uniform_index(tune, n),
            Draws::Go(g, _) => g.intn(n),
        }
    }

    /// Each node's rank for ties (its index in name order gets `Perm(n)[i]`), after a
    /// tuning that dropped pods (`shrunk`) or not.
    fn node_rank(&mut self, n: usize, shrunk: bool) -> Vec<u32> {
        match self {
            Draws::ChaCha(streams, _) => {
                let mut rank: Vec<u32> = (0..n as u32).collect();
                rng::shuffle(&mut streams.stream("fgd-node-order"), &mut rank);
                rank
            }
            Draws::Go(g, informers) => {
                for _ in 0..informers.unwrap_or(if shrunk { 9 } else { 10 }) {
                    g.float64();
                }
                g.perm(n).into_iter().map(|i| i as u32).collect()
            }
        }
    }
}

/// Tunes the pods `order` (indices into the name-sorted `sorted`) to `target` milli-GPU:
/// pods dropped at random while above it; below it, pods drawn with replacement from
/// `sorted` appended until the next would pass it. Whether it dropped pods.
fn tune(sorted: &[&Pod], order: &mut Vec<usize>, target: f64, draws: &mut Draws) -> bool {
    if sorted.is_empty() {
        return false;
    }
    let mut total: u64 = sorted.iter().map(|p| p.total_milli()).sum();
    let shrunk = total as f64 > target;
    while total as f64 > target && !order.is_empty() {
        let k = draws.tune(order.len());
        total -= sorted[order[k]].total_milli();
        order.remove(k);
    }
    // Drawing pods that ask for no GPU never reaches the target.
    if (total as f64) < target && sorted.iter().any(|p| p.task.gpu_milli() > 0) {
        loop {
            let k = draws.tune(sorted.len());
            if (total + sorted[k].task.gpu_milli() as u64) as f64 > target {
                break;
            }
            total += sorted[k].total_milli();
            order.push(k);
        }
    }
    shrunk
}

/// Runs the protocol for `pods` (the workload file's pods) on `cluster` with placement
/// `policy` and `seed`, tuning the workload to `ratio` × GPU capacity (`ratio <= 0`: no
/// tuning), with the ChaCha streams.
pub fn run(cluster: &Cluster, pods: &[Pod], policy: &str, seed: u64, ratio: f64) -> Option<ProtocolRun> {
    run_with(cluster, pods, policy, seed, ratio, FgdRng::ChaCha)
}

/// [`run`] with the draws from `rng`.
pub fn run_with(
    cluster: &Cluster,
    pods: &[Pod],
    policy: &str,
    seed: u64,
    ratio: f64,
    rng: FgdRng,
) -> Option<ProtocolRun> {
    let placement = Placement::by_name(policy, MemoryFit::Oblivious)?;
    let mut sorted: Vec<&Pod> = pods.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let types: Vec<PodType> = sorted.iter().map(|p| p.pod_type()).collect();
    let go = matches!(rng, FgdRng::Go { .. });
    let typical = if go { TypicalPods::from_pods_go(&types, 95.0) } else { TypicalPods::from_pods(&types, 95.0) };

    let mut draws = Draws::new(rng, seed);
    let mut order: Vec<usize> = (0..sorted.len()).collect();
    draws.shuffle(&mut order);

    let total_gpus: u64 = cluster.nodes().map(|(_, s, _)| s.gpus.len() as u64).sum();
    let shrunk = ratio > 0.0 && tune(&sorted, &mut order, ratio * (total_gpus * MILLI as u64) as f64, &mut draws);

    // Dense type ids for the score cache: everything a filter or score reads.
    let mut ids: HashMap<(u64, u64, u32, u32, &[String]), u32> = HashMap::new();
    let type_of: Vec<u32> = sorted
        .iter()
        .map(|p| {
            let k = (p.task.cpu_milli(), p.task.memory_mib, p.task.gpus, p.task.gpu_milli(), p.models.as_slice());
            let n = ids.len() as u32;
            *ids.entry(k).or_insert(n)
        })
        .collect();

    let mut ledger = Ledger::new(cluster);
    let n_nodes = ledger.nodes().len();
    let meter = if go { FragMeter::new(typical).summed_as_go() } else { FragMeter::new(typical) };
    let mut cx = PlaceCx::new(meter).with_cache(n_nodes, ids.len().max(1));
    let mut select = RngStreams::new(seed).stream("fgd-select");
    // The simulator names nodes `<random index>-<name>` and its scheduler takes the
    // first best node by name: ties go to the first best node of a random node order.
    cx = cx.with_node_order(draws.node_rank(n_nodes, shrunk));
    let node_frag = |cx: &mut PlaceCx, l: &Ledger, i: usize| {
        let n = &l.nodes()[i];
        let left: Vec<u32> = n.gpus.iter().map(|g| g.milli_left).collect();
        cx.frag.node_frag(&n.gpu_model, n.cpu_milli_left, &left)
    };
    let mut frag: Vec<f64> = (0..n_nodes).map(|i| node_frag(&mut cx, &ledger, i)).collect();
    let mut frag_total: f64 = frag.iter().sum();
    let mut used = 0u64;
    let mut arrived = 0u64;
    let mut run = ProtocolRun { total_gpus, ..ProtocolRun::default() };
    run.samples.reserve(order.len());
    let all = vec![true; n_nodes];
    for &k in &order {
        let pod = sorted[k];
        arrived += pod.total_milli();
        let req = PodReq { task: pod.task, models: &pod.models, type_id: Some(type_of[k]), constraints: None };
        match placement.place(ledger.nodes(), &all, &req, &mut cx, &mut select) {
            Some(b) => {
                let i = b.node.0 as usize;
                let before = ledger.node(NodeId(b.node.0)).gpu_milli_left();
                ledger.take(&pod.task, &pod.models, &b, true).expect("the placement passed the filters");
                used += before - ledger.node(NodeId(b.node.0)).gpu_milli_left();
                cx.touch(i);
                let f = node_frag(&mut cx, &ledger, i);
                frag_total += f - frag[i];
                frag[i] = f;
                run.placed += 1;
            }
            None => run.failed += 1,
        }
        run.samples.push(Sample {
            arrived_milli: arrived,
            used_milli: used,
            frag_milli: frag_total.max(0.0),
            idle_milli: total_gpus * MILLI as u64 - used,
        });
    }
    Some(run)
}
