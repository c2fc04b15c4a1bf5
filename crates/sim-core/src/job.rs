//! The job model.

use crate::time::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// Dense index of a job in its run (input order).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct JobId(pub u32);

impl JobId {
    /// As a vector index.
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// What one task of a job's gang needs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskShape {
    /// CPU cores (units).
    pub cores: u32,
    /// Host memory in MiB (0 = not stated).
    pub memory_mib: u64,
    /// GPUs.
    pub gpus: u32,
    /// Declared GPU memory per GPU in MiB (0 = not stated): what the job asks the
    /// scheduler for (Aliyun gpushare `aliyun.com/gpu-mem`, HAMi `nvidia.com/gpumem`).
    pub gpu_memory_mib: u64,
    /// CPU in milli-cores, as Kubernetes requests it (`cpu: 500m`); 0 = `cores` × 1000.
    pub cpu_milli: u32,
    /// Share of each GPU in milli-GPU (1..=1000, Alibaba's `alibabacloud.com/gpu-milli`);
    /// 0 = whole GPUs. A value below 1000 needs `gpus == 1` (a shared GPU).
    pub gpu_milli: u32,
    /// The job's actual peak GPU memory per GPU in MiB (0 = unknown: never runs out).
    /// Hidden from policies unless they are declared clairvoyant.
    pub gpu_peak_mib: u64,
    /// How busy the job keeps its GPUs (share of each GPU's capacity), per mille; 0 = not
    /// stated, and the run's [`crate::SimConfig::gpu_util_permille`] applies. Drives the
    /// energy model (board power against utilization), nothing else.
    #[serde(default)]
    pub gpu_util_permille: u16,
}

impl TaskShape {
    /// CPU in milli-cores.
    pub fn cpu_milli(&self) -> u64 {
        if self.cpu_milli > 0 { self.cpu_milli as u64 } else { self.cores as u64 * 1000 }
    }
    /// Milli-GPU taken on each of its GPUs (1000 for whole GPUs, 0 without GPUs).
    pub fn gpu_milli(&self) -> u32 {
        if self.gpus == 0 {
            0
        } else if self.gpu_milli == 0 {
            1000
        } else {
            self.gpu_milli.min(1000)
        }
    }
    /// Whether it shares one GPU with others (one GPU, less than all of it).
    pub fn shares_gpu(&self) -> bool {
        self.gpus == 1 && self.gpu_milli() < 1000
    }
}

/// What kind of work a job is; policies and reports group by it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// A rigid batch job (MPI, array element): the PWA logs' jobs.
    #[default]
    Batch,
    /// Distributed deep-learning training.
    DlTrain,
    /// Inference service.
    Inference,
    /// Interactive.
    Interactive,
}

impl JobKind {
    /// Every kind, in order.
    pub const ALL: [JobKind; 4] = [JobKind::Batch, JobKind::DlTrain, JobKind::Inference, JobKind::Interactive];

    /// Its name (`dl_train`), the one every format and report uses: the same as serde's
    /// `snake_case` (a test holds them together), so traces, models and tables agree.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::Batch => "batch",
            JobKind::DlTrain => "dl_train",
            JobKind::Inference => "inference",
            JobKind::Interactive => "interactive",
        }
    }
}

/// A name that is no [`JobKind`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected batch, dl_train, inference or interactive, found '{0}'")]
pub struct UnknownJobKind(pub String);

impl std::str::FromStr for JobKind {
    type Err = UnknownJobKind;
    /// The kind of a [`JobKind::name`].
    fn from_str(s: &str) -> Result<Self, UnknownJobKind> {
        JobKind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| UnknownJobKind(s.to_string()))
    }
}

/// How the job ended in the real system the trace was taken from.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceStatus {
    /// Completed normally, or unknown.
    #[default]
    Completed,
    /// Failed (SWF status 0): replayed runs end as `failed`.
    Failed,
    /// Cancelled (SWF status 5).
    Cancelled,
}

/// What becomes of a job's pod whose container fails (killed for running out of GPU
/// memory): the `restartPolicy` of a Kubernetes Job's pod template.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RestartPolicy {
    /// The pod fails; the Job controller re-creates it after its back-off and the
    /// scheduler places the new pod ([`crate::controller::JobRetry`]).
    #[default]
    Never,
    /// The kubelet restarts the container in the same pod, on the same node and GPUs
    /// (the binding is kept, the GPUs stay held), after its CrashLoopBackOff delay; the
    /// restarts count toward the Job's `backoffLimit`.
    OnFailure,
}

impl RestartPolicy {
    /// Its name, as Kubernetes and the native format spell it.
    pub fn name(self) -> &'static str {
        match self {
            RestartPolicy::Never => "Never",
            RestartPolicy::OnFailure => "OnFailure",
        }
    }
}

/// One job as read from a trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The id the trace gives it (SWF job number, Batsim id).
    pub trace_id: String,
    /// Submission time.
    pub submit: SimTime,
    /// Gang size: number of identical tasks, all started together. `<= 0` in the trace
    /// becomes 0 here and the job is rejected.
    pub tasks: u32,
    /// What each task needs.
    pub task: TaskShape,
    /// How long it really runs; `None` when the trace does not say.
    pub runtime: Option<SimDuration>,
    /// Requested time limit (the user's estimate, Slurm `--time`); `None` = unknown.
    pub requested: Option<SimDuration>,
    /// User id/name.
    pub user: u32,
    /// Group/account.
    pub group: u32,
    /// Queue (Slurm QOS, SWF queue number).
    pub queue: i32,
    /// Partition.
    pub partition: i32,
    /// Priority (higher first where a policy uses it).
    pub priority: i64,
    /// Kind.
    pub kind: JobKind,
    /// How it ended in the real system.
    pub trace_status: TraceStatus,
    /// GPU models it may run on (Alibaba's `gpu_spec`, Kubernetes node affinity on
    /// `gpu-card-model`); empty = any.
    pub gpu_models: Vec<String>,
    /// Node selector, node affinity and tolerations; `None` = none.
    pub constraints: Option<Box<crate::constraints::PodConstraints>>,
    /// Elastic gangs: the job may start with this many of its tasks placed (Volcano
    /// `minAvailable`, PodGroup `minMember`, torchrun `--nnodes=MIN:MAX`); 0 or `tasks`
    /// means all of them. It then runs `tasks / started` times as long (its work is
    /// shared by fewer workers) and does not grow later.
    pub min_tasks: u32,
    /// When it really started in the system the trace was taken from (SWF submit + wait,
    /// sacct `Start`, Helios `start_time`); `None` = unknown. Kept so reports can set the
    /// simulated wait against the observed one; the engine never reads it.
    pub observed_start: Option<SimTime>,
    /// What becomes of its pod when its container is killed for running out of GPU memory.
    #[serde(default)]
    pub restart_policy: RestartPolicy,
    /// Its own checkpoints, in place of the run's (`None`: the run's `--checkpoint`).
    #[serde(default)]
    pub checkpoint: Option<crate::checkpoint::JobCheckpoint>,
    /// Its scheduling domain in a run with several ([`crate::SimConfig::domains`]: the
    /// index of its name, e.g. `slurm` or `kubernetes`); 0 otherwise.
    #[serde(default)]
    pub domain: u8,
}

impl Job {
    /// A batch job of `procs` one-core tasks, as SWF and Batsim describe them.
    pub fn rigid(
        trace_id: impl Into<String>,
        submit: SimTime,
        procs: u32,
        runtime: SimDuration,
        requested: SimDuration,
    ) -> Job {
        Job {
            trace_id: trace_id.into(),
            submit,
            tasks: procs,
            task: TaskShape { cores: 1, ..TaskShape::default() },
            runtime: Some(runtime),
            requested: Some(requested),
            user: 0,
            group: 0,
            queue: -1,
            partition: -1,
            priority: 0,
            kind: JobKind::Batch,
            trace_status: TraceStatus::Completed,
            gpu_models: Vec::new(),
            constraints: None,
            min_tasks: 0,
            observed_start: None,
            restart_policy: RestartPolicy::Never,
            checkpoint: None,
            domain: 0,
        }
    }

    /// Fewest tasks it may start with (`tasks` unless elastic).
    pub fn needed_tasks(&self) -> u32 {
        if self.min_tasks == 0 { self.tasks } else { self.min_tasks.min(self.tasks) }
    }

    /// How long it waited in the system the trace was taken from, when known.
    pub fn observed_wait(&self) -> Option<SimDuration> {
        self.observed_start.map(|s| SimDuration(s.0.saturating_sub(self.submit.0)))
    }

    /// Units (cores) the whole gang needs.
    pub fn units(&self) -> u64 {
        self.tasks as u64 * self.task.cores as u64
    }
}

/// The jobs of a run: the input's, borrowed, then those controllers submitted during the
/// run ([`crate::controller::Action::Submit`]). Job ids run through both: the input's are
/// `0..n`, submitted jobs follow in submission order. Until a job is submitted nothing is
/// copied; the first submission copies the input once, so every job can be handed out
/// as one window ([`JobStore::all`]) and indexed without a branch. A streamed run
/// ([`crate::JobSource`]) borrows no input: each job is added as it is read
/// ([`JobStore::push`]) and dropped once its record is written ([`JobStore::drop_first`]).
#[derive(Clone, Debug, Default)]
pub struct JobStore<'a> {
    input: &'a [Job],
    /// Empty until a job is submitted; then the input's jobs and the submitted ones.
    owned: crate::job_table::JobTable<Job>,
    /// A streamed run's: no input, every job pushed as it is read.
    streamed: bool,
    /// Whether the jobs are the input's, borrowed (nothing submitted or read).
    borrowed: bool,
}

impl<'a> JobStore<'a> {
    /// The input's jobs, nothing submitted yet.
    pub fn new(input: &'a [Job]) -> Self {
        JobStore { input, owned: Default::default(), streamed: false, borrowed: true }
    }
    /// A streamed run's: every job pushed as it is read.
    pub fn streamed() -> Self {
        JobStore { input: &[], owned: Default::default(), streamed: true, borrowed: true }
    }
    /// Every job held, by id.
    #[inline]
    pub fn all(&self) -> crate::job_table::Ids<'_, Job> {
        if self.borrowed { crate::job_table::Ids::all(self.input) } else { self.owned.view() }
    }
    /// Every job so far: one past the newest id.
    pub fn len(&self) -> usize {
        if self.borrowed { self.input.len() } else { self.owned.end() }
    }
    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Job `i`, if held.
    pub fn get(&self, i: usize) -> Option<&Job> {
        if self.borrowed { self.input.get(i) } else { self.owned.get(i) }
    }
    /// Adds a submitted (or, streamed, a read) job; returns its id.
    pub fn push(&mut self, job: Job) -> JobId {
        if self.borrowed {
            self.owned = crate::job_table::JobTable::from_vec(self.input.to_vec());
            self.borrowed = false;
        }
        self.owned.push(job);
        JobId((self.owned.end() - 1) as u32)
    }
    /// Drops the oldest job of the window (a streamed run's, once its record is written).
    pub fn drop_first(&mut self) {
        self.owned.drop_first();
    }
    /// Keeps the oldest job of the window aside (a streamed run's, still in the system).
    pub fn keep_first(&mut self) {
        self.owned.keep_first();
    }
    /// Drops job `i`, kept aside.
    pub fn drop_early(&mut self, i: usize) {
        self.owned.drop_early(i);
    }
    /// Takes the submitted jobs out (none in a streamed run: its jobs are dropped as they
    /// are written).
    pub fn take_submitted(&mut self) -> Vec<Job> {
        if self.streamed || self.borrowed {
            return Vec::new();
        }
        let mut all = self.owned.take();
        all.split_off(self.input.len())
    }
}

impl std::ops::Index<usize> for JobStore<'_> {
    type Output = Job;
    #[inline]
    fn index(&self, i: usize) -> &Job {
        if self.borrowed { &self.input[i] } else { &self.owned[i] }
    }
}
