//! The fragmentation `fragmentation.csv` reports: the FGD paper's measure (Weng et al.,
//! "Beware of Fragmentation", USENIX ATC 2023) against the typical pods of the run's
//! workload, through the FGD score's own meter ([`policies::placement::frag::FragMeter`]).

use policies::placement::frag::{FragMeter, PodType, TypicalPods};
use sim_core::{Fragmentation, Job, NodeUse};

/// The FGD paper's fragmentation of a node against typical pods.
pub struct Fgd {
    meter: FragMeter,
    left: Vec<u32>,
}

impl Fgd {
    /// Against the typical pods of `jobs`: every task is a pod, and the most popular pod
    /// types covering 95 % of them are kept, with their shares (the paper's
    /// `GetTypicalPods`, CPU-only pods included, as `sim fgd` and `kube[score=fgd]` do).
    pub fn of_workload(jobs: &[Job]) -> Self {
        let mut pods = PodCounts::default();
        jobs.iter().for_each(|j| pods.add(j));
        pods.fgd()
    }
}

/// The pods of a workload by type, a job at a time (a streamed replay's pre-pass), for
/// [`Fgd::of_workload`].
#[derive(Clone, Debug, Default)]
pub struct PodCounts(std::collections::BTreeMap<PodType, u64>);

impl PodCounts {
    /// Adds a job's pods (its tasks).
    pub fn add(&mut self, j: &Job) {
        let t = PodType {
            cpu_milli: j.task.cpu_milli(),
            gpu_milli: j.task.gpu_milli(),
            gpus: j.task.gpus,
            models: j.gpu_models.join("|"),
        };
        *self.0.entry(t).or_default() += u64::from(j.tasks);
    }

    /// The measure against the typical pods of the jobs added.
    pub fn fgd(&self) -> Fgd {
        Fgd {
            meter: FragMeter::new(TypicalPods::from_counts(self.0.iter().map(|(t, &c)| (t, c)), 95.0)),
            left: Vec::new(),
        }
    }
}

impl Fragmentation for Fgd {
    fn fragment_milli(&mut self, node: &NodeUse) -> u64 {
        self.left.clear();
        self.left.extend(node.gpus.iter().map(|g| g.milli_left));
        self.meter.node_frag(&node.gpu_model, node.cpu_milli_left, &self.left).round() as u64
    }
}
