//! GPU fragmentation samples on a time grid: an observer of the ledger.

use crate::ledger::{Ledger, MILLI, NodeUse};
use crate::time::{SimDuration, SimTime};

/// The cluster's GPUs at one moment: what is free, and how much of it is fragment — idle
/// GPU capacity the workload's typical pods cannot use ([`Fragmentation`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuSample {
    /// When.
    pub t: SimTime,
    /// Free milli-GPU over all GPUs.
    pub free_milli: u64,
    /// Of it, the fragment, milli-GPU (Σ over nodes of [`Fragmentation::fragment_milli`]).
    pub fragment_milli: u64,
}

/// How much of a node's idle GPU capacity is fragment, milli-GPU, by the FGD paper's
/// definition (Weng et al., "Beware of Fragmentation", USENIX ATC 2023; its simulator's
/// `NodeGpuShareFragAmountScore`): the expectation over the workload's typical pods of
/// the idle GPU capacity each cannot use there — all of it when the node cannot host the
/// pod at all (too little CPU left, too few GPUs with enough left, another GPU model, a
/// pod without GPUs), else the capacity of the GPUs too small for it. The runner measures
/// it against the typical pods of the run's workload; a run given no measure uses
/// [`WholeGpuPod`].
pub trait Fragmentation: Send {
    /// The fragment of `node`'s idle GPU capacity, milli-GPU.
    fn fragment_milli(&mut self, node: &NodeUse) -> u64;
}

/// The fragmentation seen by one typical pod that asks for a whole GPU and no CPU: a node
/// with a GPU free counts the capacity left on its partly used GPUs; one with none, all
/// its idle capacity (every idle milli-GPU is on a partly used GPU then).
pub struct WholeGpuPod;

impl Fragmentation for WholeGpuPod {
    fn fragment_milli(&mut self, node: &NodeUse) -> u64 {
        node.gpus.iter().filter(|g| g.milli_left < MILLI).map(|g| g.milli_left as u64).sum()
    }
}

/// The fragmentation observer: it reads the ledger (shared, never mutably) between
/// events and records samples of its own, so it cannot change a schedule.
pub(super) struct GpuSampler<'a> {
    every: Option<SimDuration>,
    next: SimTime,
    measure: Box<dyn Fragmentation + 'a>,
    pub(super) samples: Vec<GpuSample>,
    /// Each node's (free, fragment) at the last sample, their sums, and the ledger's
    /// change count then: a sample measures again only the nodes changed since (the
    /// measure depends on a node's state alone).
    per_node: Vec<(u64, u64)>,
    totals: (u64, u64),
    synced: Option<u64>,
}

impl<'a> GpuSampler<'a> {
    /// A sampler every `every` (none: it samples nothing) measuring with `measure`.
    pub(super) fn new(every: Option<SimDuration>, measure: Option<Box<dyn Fragmentation + 'a>>) -> Self {
        let measure = measure.unwrap_or_else(|| Box::new(WholeGpuPod));
        GpuSampler {
            every,
            next: SimTime::ZERO,
            measure,
            samples: Vec::new(),
            per_node: Vec::new(),
            totals: (0, 0),
            synced: None,
        }
    }

    /// Samples the GPUs at every sample time before `t`, the time of the next events: the
    /// state then is the current one (events change it only at their times). `first`:
    /// no event has happened yet.
    pub(super) fn before(&mut self, t: SimTime, ledger: &Ledger, first: bool) {
        let Some(every) = self.every else { return };
        if every.0 == 0 || ledger.nodes().is_empty() {
            return;
        }
        if first {
            // Sampling starts at the first grid time at or after the first event.
            self.next = SimTime(t.0.div_ceil(every.0).saturating_mul(every.0));
            return;
        }
        if self.next >= t {
            return;
        }
        let (free, fragment) = self.measure_all(ledger);
        while self.next < t {
            self.samples.push(GpuSample { t: self.next, free_milli: free, fragment_milli: fragment });
            self.next = SimTime(self.next.0.saturating_add(every.0));
        }
    }

    /// Free and fragment milli-GPU over all nodes now: the nodes changed since the last
    /// sample measured again, or every node when the ledger no longer lists those changes.
    fn measure_all(&mut self, ledger: &Ledger) -> (u64, u64) {
        let nodes = ledger.nodes();
        let changes = self.synced.filter(|_| self.per_node.len() == nodes.len()).and_then(|c| ledger.changes_since(c));
        match changes {
            Some(changed) => {
                for &i in changed {
                    let i = i as usize;
                    let (f, g) = self.per_node[i];
                    self.totals.0 -= f;
                    self.totals.1 -= g;
                    let now = self.node(&nodes[i]);
                    self.per_node[i] = now;
                    self.totals.0 += now.0;
                    self.totals.1 += now.1;
                }
            }
            None => {
                self.per_node.clear();
                for n in nodes {
                    let now = self.node(n);
                    self.per_node.push(now);
                }
                self.totals = self.per_node.iter().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
            }
        }
        self.synced = Some(ledger.change_count());
        self.totals
    }

    /// A node's free and fragment milli-GPU.
    fn node(&mut self, n: &NodeUse) -> (u64, u64) {
        if n.gpus.is_empty() {
            return (0, 0);
        }
        let idle = n.gpu_milli_left();
        let fragment = if idle > 0 { self.measure.fragment_milli(n).min(idle) } else { 0 };
        (idle, fragment)
    }
}
