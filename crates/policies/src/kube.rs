//! Kubernetes-style scheduling: pods one at a time through the placement framework.

use crate::options::{Chosen, OptionInfo, canonical};
use crate::placement::frag::{FragMeter, PodType, TypicalPods};
use crate::placement::{MemoryFit, PLACEMENTS, PlaceCx, Placement, PodReq};
use crate::spec::{PolicyError, PolicySpec};
use sim_core::NodeState;
use sim_core::job::{Job, JobId};
use sim_core::ledger::TaskBinding;
use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason};
use sim_core::rng::{RngStreams, SimRng};
use std::collections::{BTreeMap, BTreeSet};

/// `score=...`: the placement (filters + score + GPU choice).
pub const SCORE: OptionInfo = OptionInfo {
    key: "score",
    values: PLACEMENTS,
    doc: "the placement's score plugin: Kubernetes least-allocated (its default), most-allocated, balanced; \
          the FGD paper's random, dotprod, gpuclustering, gpupacking, bestfit, fgd",
};

/// `memory=oblivious|aware`.
pub const MEMORY: OptionInfo = OptionInfo {
    key: "memory",
    values: &["oblivious", "aware"],
    doc: "oblivious: GPU counts and milli-GPU only (default Kubernetes, Open-Gpu-Share); aware: each GPU must \
          also hold the pod's declared GPU memory, and shared pods go to the GPU with the least declared memory \
          left that fits (Aliyun gpushare, HAMi)",
};

/// `order=priority|fifo`.
pub const ORDER: OptionInfo = OptionInfo {
    key: "order",
    values: &["priority", "fifo"],
    doc: "priority: Kubernetes PrioritySort (higher priority first, then arrival); fifo: arrival order",
};

/// `blocking=skip|strict`.
pub const BLOCKING: OptionInfo = OptionInfo {
    key: "blocking",
    values: &["skip", "strict"],
    doc: "skip: a pod that fits nowhere is passed over and later pods are tried (Kubernetes: no head-of-line \
          blocking); strict: stop at the first pod that fits nowhere (FCFS with placement)",
};

/// Kubernetes' scheduling loop over a placement: the queue in `PrioritySort` order,
/// each pod filtered, scored and bound (ties broken by the seeded stream
/// `kube-ties`), a pod that fits nowhere skipped (`blocking=skip`, Kubernetes has no
/// head-of-line blocking and no reservations) or ending the pass (`blocking=strict`).
/// A job of several tasks binds all of them in one pass or none (a gang).
///
/// The FGD score needs typical pods: they are taken from the pods that have arrived so
/// far, rebuilt each time that number doubles.
pub struct KubeScheduler {
    placement: Placement,
    score: usize,
    memory: MemoryFit,
    order: usize,
    blocking: usize,
    cx: PlaceCx,
    rng: SimRng,
    types: BTreeMap<PodType, u64>,
    seen: u64,
    rebuilt_at: u64,
}

impl KubeScheduler {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[SCORE, MEMORY, ORDER, BLOCKING];

    /// Builds it from a spec and the run's seed.
    pub fn from_spec(spec: &PolicySpec, seed: u64) -> Result<Self, PolicyError> {
        let c = Chosen::check(spec, Self::OPTIONS)?;
        let score = c.index(SCORE);
        let memory = [MemoryFit::Oblivious, MemoryFit::Aware][c.index(MEMORY)];
        let placement = Placement::by_name(PLACEMENTS[score], memory).expect("listed placement");
        Ok(KubeScheduler {
            placement,
            score,
            memory,
            order: c.index(ORDER),
            blocking: c.index(BLOCKING),
            cx: PlaceCx::new(FragMeter::default()),
            rng: RngStreams::new(seed).stream("kube-ties"),
            types: BTreeMap::new(),
            seen: 0,
            rebuilt_at: 0,
        })
    }

    fn pod_type(job: &Job) -> PodType {
        PodType {
            cpu_milli: job.task.cpu_milli(),
            gpu_milli: job.task.gpu_milli(),
            gpus: job.task.gpus,
            models: job.gpu_models.join("|"),
        }
    }
}

impl Policy for KubeScheduler {
    fn spec(&self) -> String {
        canonical(
            "kube",
            &[(SCORE, self.score), (MEMORY, self.memory as usize), (ORDER, self.order), (BLOCKING, self.blocking)],
        )
    }

    fn schedule(&mut self, view: &SchedView<'_>, info: &PassInfo, out: &mut Vec<Decision>) {
        if info.queued.is_empty() && !info.resources_released() {
            // Nothing arrived and nothing was freed: every waiting pod still fits nowhere.
            return;
        }
        for &j in &info.queued {
            if view.running_job(j).is_none() {
                *self.types.entry(Self::pod_type(view.job(j))).or_default() += 1;
                self.seen += 1;
            }
        }
        if self.seen >= 2 * self.rebuilt_at.max(1) || self.rebuilt_at == 0 && self.seen > 0 {
            let mut all = Vec::new();
            for (t, &n) in &self.types {
                all.extend(std::iter::repeat_n(t, n.min(1 << 20) as usize));
            }
            self.cx.frag = FragMeter::new(TypicalPods::from_pods(all, 95.0));
            self.rebuilt_at = self.seen;
        }
        let mut queue: Vec<JobId> = view.queue().to_vec();
        if self.order == 0 {
            // PrioritySort: higher priority first; the queue is already in arrival order.
            queue.sort_by_key(|j| std::cmp::Reverse(view.job(*j).priority));
        }
        let mut ledger = view.ledger().clone();
        let states = view.node_states();
        let up = |i: usize| states[i] == NodeState::Up;
        let mut failed: BTreeSet<(PodType, u64, u64, u32)> = BTreeSet::new();
        for j in queue {
            let job = view.job(j);
            let key = (Self::pod_type(job), job.task.memory_mib, job.task.gpu_memory_mib, job.tasks);
            if failed.contains(&key) {
                continue;
            }
            let req = PodReq { task: job.task, models: &job.gpu_models, type_id: None };
            let mut binding: Vec<TaskBinding> = Vec::with_capacity(job.tasks as usize);
            let mut ok = true;
            for _ in 0..job.tasks {
                match self.placement.place(ledger.nodes(), &up, &req, &mut self.cx, &mut self.rng) {
                    Some(b) => {
                        ledger.take(&job.task, &job.gpu_models, &b, true).expect("placement passed the filters");
                        binding.push(b);
                    }
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok && !binding.is_empty() {
                out.push(Decision::Bind { job: j, binding, reason: StartReason::Placed });
            } else {
                for b in &binding {
                    ledger.give(&job.task, b, true);
                }
                failed.insert(key);
                if self.blocking == 1 {
                    break;
                }
            }
        }
    }
}
