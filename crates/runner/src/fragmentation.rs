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
        let pods: Vec<PodType> = jobs
            .iter()
            .flat_map(|j| {
                let t = PodType {
                    cpu_milli: j.task.cpu_milli(),
                    gpu_milli: j.task.gpu_milli(),
                    gpus: j.task.gpus,
                    models: j.gpu_models.join("|"),
                };
                std::iter::repeat_n(t, j.tasks as usize)
            })
            .collect();
        Fgd { meter: FragMeter::new(TypicalPods::from_pods(&pods, 95.0)), left: Vec::new() }
    }
}

impl Fragmentation for Fgd {
    fn fragment_milli(&mut self, node: &NodeUse) -> u64 {
        self.left.clear();
        self.left.extend(node.gpus.iter().map(|g| g.milli_left));
        self.meter.node_frag(&node.gpu_model, node.cpu_milli_left, &self.left).round() as u64
    }
}
