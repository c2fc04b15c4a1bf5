//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// schedlab: a deterministic simulator and policy lab for GPU/HPC cluster scheduling.
#[derive(Parser, Debug)]
#[command(name = "sim", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Replay a trace under a policy and write jobs.csv, summary.json and frame.csv
    /// (fragmentation.csv on GPU clusters; the report with --report).
    Run(RunArgs),
    /// List every policy with its options.
    Policies,
    /// List every controller with its options, and the engine's built-in ones.
    Controllers,
    /// Work on trace files.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Replay one trace under several policies and seeds in parallel; write each run's
    /// folder, comparison.csv (mean and 95 % confidence interval per policy, change
    /// against the first) and report.html.
    Compare(CompareArgs),
    /// Rebuild comparison.csv, the tables, the plots and report.html from run folders
    /// (made by `sim run` or `sim compare`, on any machine).
    Report(ReportArgs),
    /// Generate a synthetic workload from a model (see examples/models/), streaming:
    /// `.swf`/`.swf.gz` writes SWF, `.jsonl` the native format, `-` native to stdout.
    Gen(GenArgs),
    /// The FGD paper's placement experiments on openb node and pod lists: pods arrive
    /// in a seeded shuffled order with no departures, each is placed or fails; writes
    /// allocation.csv, fragmentation.csv and fragmentation_ratio.csv.
    Fgd(FgdArgs),
    /// Measure GPUs and workloads (NVML) or read monitoring logs, and write hardware and
    /// job profiles.
    #[command(subcommand)]
    Calibrate(CalibrateCommand),
    /// Sweeps bigger than one machine: a grid of traces × policies × settings × seeds
    /// from a sweep.toml, run here or as a Slurm job array or a Kubernetes Indexed Job,
    /// merged into the report `sim compare` writes (docs/sweeps.md).
    #[command(subcommand)]
    Sweep(SweepCommand),
}

/// `sim sweep`.
#[derive(Subcommand, Debug)]
pub enum SweepCommand {
    /// List the cells: index, stable id, trace, policy, settings, seed, done or not.
    Plan(SweepFileArgs),
    /// Run one cell (an array task): --index, --cell, or the index in
    /// SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX. A done cell is skipped.
    Run(SweepRunArgs),
    /// Run every cell not done yet here, in parallel, then merge.
    Local(SweepLocalArgs),
    /// Merge the finished cells into each trace's comparison.csv and report.html; name
    /// the cells missing (exit 1 when any is).
    Merge(SweepFileArgs),
    /// Write the Slurm job array (sweep.sbatch) and its submit script with the merge job
    /// after it (submit.sh) into the sweep's output folder.
    Slurm(SweepSlurmArgs),
    /// Write the Kubernetes Indexed Job (job.json, for kubectl apply -f) into the sweep's
    /// output folder.
    K8s(SweepK8sArgs),
}

/// A sweep file.
#[derive(Args, Debug)]
pub struct SweepFileArgs {
    /// The sweep file (TOML; docs/sweeps.md).
    pub sweep: PathBuf,
}

/// `sim sweep run`.
#[derive(Args, Debug)]
pub struct SweepRunArgs {
    /// The sweep file.
    pub sweep: PathBuf,
    /// The cell's index in the plan (default: SLURM_ARRAY_TASK_ID, else
    /// JOB_COMPLETION_INDEX).
    #[arg(long, conflicts_with = "cell")]
    pub index: Option<usize>,
    /// The cell's id (sim sweep plan lists them).
    #[arg(long)]
    pub cell: Option<String>,
    /// No notes on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `sim sweep local`.
#[derive(Args, Debug)]
pub struct SweepLocalArgs {
    /// The sweep file.
    pub sweep: PathBuf,
    /// Cells run at once (default: one per core). The output does not depend on it.
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// No progress bar and no summary line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `sim sweep slurm`.
#[derive(Args, Debug)]
pub struct SweepSlurmArgs {
    /// The sweep file.
    pub sweep: PathBuf,
    /// The `sim` binary the tasks run (default: this one).
    #[arg(long)]
    pub sim: Option<PathBuf>,
}

/// `sim sweep k8s`.
#[derive(Args, Debug)]
pub struct SweepK8sArgs {
    /// The sweep file.
    pub sweep: PathBuf,
    /// Where the pods see the sweep file (default: its name under `[kubernetes] mount`).
    #[arg(long)]
    pub file_in_volume: Option<String>,
}

/// `sim calibrate`.
#[derive(Subcommand, Debug)]
pub enum CalibrateCommand {
    /// Enumerate this machine's GPUs through NVML and write a hardware profile (one entry
    /// per model: memory, power limit, idle power, clocks, NVLink, MIG, PCIe).
    Probe(ProbeArgs),
    /// Run a command and sample its GPU memory, utilization and power through NVML;
    /// write a job profile.
    Sample(SampleArgs),
    /// Read an nvidia-smi --query-gpu CSV log or dcgm-exporter scrapes and write a
    /// hardware profile (power fitted against utilization) and a job profile.
    Import(ImportArgs),
}

/// `sim calibrate probe`.
#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// The hardware profile to write (TOML).
    #[arg(long)]
    pub out: PathBuf,
    /// Read the devices from a recorded probe (TOML, or JSON by name) instead of NVML.
    #[arg(long)]
    pub replay: Option<PathBuf>,
}

/// `sim calibrate sample`.
#[derive(Args, Debug)]
pub struct SampleArgs {
    /// Milliseconds between samples.
    #[arg(long, default_value_t = 500)]
    pub interval_ms: u64,
    /// The job profile to write (TOML).
    #[arg(long)]
    pub out: PathBuf,
    /// Read the samples from a recording (TOML, or JSON by name) instead of NVML; without
    /// a command, the whole recording becomes the profile.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// The workload: everything after `--`.
    #[arg(last = true, required_unless_present = "replay")]
    pub command: Vec<String>,
}

/// `sim calibrate import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The log: nvidia-smi --query-gpu=... --format=csv (or csv,nounits) output, or
    /// dcgm-exporter scrapes (detected by content).
    pub file: PathBuf,
    /// The hardware profile to write (TOML).
    #[arg(long)]
    pub out: PathBuf,
    /// Also write the log as one job profile (TOML).
    #[arg(long)]
    pub job_out: Option<PathBuf>,
}

/// `sim fgd`.
#[derive(Args, Debug)]
pub struct FgdArgs {
    /// Node list CSV (`sn,cpu_milli,memory_mib,gpu,model`), e.g. openb_node_list_gpu_node.csv.
    #[arg(long)]
    pub nodes: PathBuf,
    /// Pod list CSVs, comma-separated; each is one workload, named by its file name
    /// without `.csv`.
    #[arg(long, value_delimiter = ',', required = true)]
    pub pods: Vec<PathBuf>,
    /// Placements, comma-separated (default: the paper's six,
    /// random,dotprod,gpuclustering,gpupacking,bestfit,fgd).
    #[arg(long)]
    pub policies: Option<String>,
    /// Seeds: an inclusive range `42..51` or a list `42,43`.
    #[arg(long, default_value = "42..51")]
    pub seeds: String,
    /// Tune each workload to this multiple of the cluster's GPU capacity (0: no tuning).
    #[arg(long, default_value_t = 1.3)]
    pub tune: f64,
    /// Random draws: `chacha` (schedlab's named streams) or `go` (Go's math/rand seeded
    /// with each seed, drawn in the FGD simulator's order, to reproduce its published
    /// per-seed curves).
    #[arg(long, value_enum, default_value_t = FgdRngArg::Chacha)]
    pub rng: FgdRngArg,
    /// With `--rng go`: the Float64 draws the simulator's client-go reflectors make
    /// between the workload tuning and the node permutation (default: 10 after a tuning
    /// that clones pods, 9 after one that drops pods).
    #[arg(long)]
    pub go_informer_draws: Option<u32>,
    /// Output folder.
    #[arg(long, default_value = "fgd-out")]
    pub out: PathBuf,
    /// Worker threads (default: one per core). The output does not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar and no table on stdout.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Where `sim fgd` draws from.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FgdRngArg {
    /// schedlab's ChaCha streams.
    Chacha,
    /// Go's math/rand, as the FGD simulator draws.
    Go,
}

/// Trace formats.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// Standard Workload Format (plain or .gz).
    Swf,
    /// Batsim JSON workload.
    Batsim,
    /// Alibaba openb pod list (CSV); needs --nodes or --cluster.
    Openb,
    /// schedlab's native JSON Lines workload; needs --cluster.
    Native,
    /// Slurm `sacct --parsable2 --allocations` output; needs --cluster.
    Sacct,
    /// Microsoft Philly jobs (Sia's philly.csv); needs --cluster.
    Philly,
    /// SenseTime Helios cluster_log.csv; needs --cluster.
    Helios,
    /// Sia / Pollux workload CSV; needs --cluster and --app-runtime.
    Sia,
    /// Alibaba PAI 2020 task table (--pai-jobs for its job table); needs --cluster.
    Pai,
}

/// GPU sharing modes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharingArg {
    /// One job per GPU (NVIDIA device plugin, Slurm GRES).
    Exclusive,
    /// Shared without memory isolation (time-slicing, MPS, Aliyun gpushare).
    Shared,
    /// Shared with per-job memory limits (HAMi, vGPU, MIG).
    Isolated,
}

/// Where GPU memory demand comes from.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuMemoryArg {
    /// The trace's own values (none for openb: no job runs out of memory).
    Trace,
    /// Seeded synthetic declared and peak GPU memory (traces::gpumem).
    Synthetic,
}

/// What becomes of the jobs of a node that goes down.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum NodeLifecycleArg {
    /// Kubernetes' under a policy that binds nodes (kube), requeue otherwise.
    #[default]
    Auto,
    /// Requeued at once (Slurm's DOWN node).
    Requeue,
    /// Kubernetes: pods stay bound without progress until the unreachable taint and
    /// their toleration (300 s by default) evict them (policies that bind nodes).
    Kubernetes,
}

/// Per-job table layouts.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum JobsFormat {
    /// schedlab's jobs.csv.
    #[default]
    Default,
    /// Batsim's out_jobs.csv columns (for evalys).
    Batsim,
}

/// Where the workload and the cluster come from (`sim run`, `sim trace convert`).
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Trace file, plain or .gz: SWF, Batsim JSON, openb pod list, native JSON Lines, or
    /// a sacct, Philly, Helios, Sia or PAI trace (see --format). Without it, an embedded
    /// slice of the KTH-SP2 log is replayed. On a cluster with scheduling domains
    /// (`[[domain]]` tables), `DOMAIN:FILE` once per domain (`slurm:jobs.csv`,
    /// `k8s:pods.csv`; docs/hybrid.md).
    #[arg(long)]
    pub trace: Vec<PathBuf>,
    /// Trace format; detected from the name or content when absent.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Machine size in processors (overrides the SWF header / Batsim nb_res).
    #[arg(long)]
    pub procs: Option<u64>,
    /// Node list CSV for an openb pod list (`sn,cpu_milli,memory_mib,gpu,model`).
    #[arg(long)]
    pub nodes: Option<PathBuf>,
    /// Cluster configuration (TOML: node pools, GPUs, labels, taints, sharing,
    /// topology); replaces the machine the trace describes.
    #[arg(long)]
    pub cluster: Option<PathBuf>,
    /// How the nodes' GPUs are shared, for an openb node list (`--nodes`; default
    /// shared); a cluster configuration sets it per pool.
    #[arg(long, value_enum)]
    pub gpu_sharing: Option<SharingArg>,
    /// GPU memory demand of the jobs.
    #[arg(long, value_enum, default_value_t = GpuMemoryArg::Trace)]
    pub gpu_memory: GpuMemoryArg,
    /// The Alibaba PAI job table that goes with a PAI task table (submission times, users).
    #[arg(long)]
    pub pai_jobs: Option<PathBuf>,
    /// Run time of an application of a Sia/Pollux workload, `APP=SECONDS` (repeat it, or
    /// comma-separate): the format gives none.
    #[arg(long, value_delimiter = ',')]
    pub app_runtime: Vec<String>,
    /// Vary the workload per seed, comma-separated: `resample` (Zakay and Feitelson's
    /// user-based resampling), `noise=SIGMA` (lognormal run-time noise), `jitter=SECONDS`
    /// (submit times moved up to that much either way), `window=LENGTH` (a sub-trace of
    /// that length, e.g. `30d`, at a start drawn per seed). Every policy of a comparison
    /// sees the same workload per seed (docs/cli.md).
    #[arg(long)]
    pub perturb: Option<String>,
    /// A site's slurm.conf: its NodeName lines are the cluster, and the `slurm` policy
    /// (then the default) schedules as it says (docs/slurm.md).
    #[arg(long)]
    pub slurm_conf: Option<PathBuf>,
    /// With --slurm-conf: the site's QOSes, as `sacctmgr show qos
    /// format=name,priority,preempt,preemptmode,gracetime,usagefactor,maxjobsperuser,grptres -P`
    /// prints them (sacct input: by the job's QOS name; other formats: the queue number is
    /// the position in this file).
    #[arg(long, requires = "slurm_conf")]
    pub qos: Option<PathBuf>,
    /// With --slurm-conf: the site's associations, the fair-share tree of the
    /// multifactor priority, as `sacctmgr show assoc format=cluster,account,user,share,
    /// parentname -P` prints them (sacct input: by the jobs' Account and User names; other
    /// formats: accounts `g<group>` and users `u<user>` of the trace's numbers).
    #[arg(long, requires = "slurm_conf")]
    pub assoc: Option<PathBuf>,
}

/// `sim trace`.
#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Write a workload in another format (SWF or schedlab's native JSON Lines).
    Convert(ConvertArgs),
    /// Job count, time span, arrival rate, distributions of size, run time, GPUs and GPU
    /// memory, observed waits, arrivals by hour of day and day of week.
    Stats(StatsArgs),
    /// Fit a `sim gen` model to a trace.
    Fit(FitArgs),
    /// Fit a `failures` controller to a node fault log (InfiniteHBD JSON, or CSV
    /// time,node,event,cause): per-node rate, repair distribution, causes; writes a
    /// cluster-configuration snippet with its `[[controller]]` table.
    FitFailures(FitFailuresArgs),
}

/// `sim trace fit-failures`.
#[derive(Args, Debug)]
pub struct FitFailuresArgs {
    /// The fault log.
    pub file: PathBuf,
    /// Nodes in the fleet the log covers (default: the nodes it names; InfiniteHBD's
    /// covers 400 servers, of which 231 had faults).
    #[arg(long)]
    pub nodes: Option<u32>,
    /// One `failures` controller per cause (`cause=NAME`), each with its own rate and
    /// repair times, instead of one for all.
    #[arg(long)]
    pub by_cause: bool,
    /// Also write the log's times between a node's faults and its repair times (hours,
    /// one per line) beside --out (`NAME.tbf.txt`, `NAME.repairs.txt`), and a controller
    /// that draws from them (`tbf_file`, `repair_file`) instead of fitted distributions.
    #[arg(long, conflicts_with = "by_cause")]
    pub samples: bool,
    /// The snippet to write (TOML).
    #[arg(long)]
    pub out: PathBuf,
}

/// Output formats of `sim trace convert`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvertTo {
    /// schedlab's native JSON Lines workload.
    Native,
    /// The Standard Workload Format (`.gz` output names are gzipped).
    Swf,
}

/// A trace file read without a cluster (`sim trace stats`, `sim trace fit`).
#[derive(Args, Debug)]
pub struct TraceFileArgs {
    /// The trace (any format `sim run` reads).
    pub file: PathBuf,
    /// Its format; detected from the name or content when absent.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// The Alibaba PAI job table that goes with a PAI task table.
    #[arg(long)]
    pub pai_jobs: Option<PathBuf>,
    /// Run time of an application of a Sia/Pollux workload, `APP=SECONDS`.
    #[arg(long, value_delimiter = ',')]
    pub app_runtime: Vec<String>,
}

/// `sim trace stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The trace.
    #[command(flatten)]
    pub trace: TraceFileArgs,
    /// A cluster configuration (TOML): also show the load the trace offers its cores and
    /// GPUs.
    #[arg(long)]
    pub cluster: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `sim trace fit`.
#[derive(Args, Debug)]
pub struct FitArgs {
    /// The trace to fit.
    #[command(flatten)]
    pub trace: TraceFileArgs,
    /// The model file to write (TOML).
    #[arg(long)]
    pub out: PathBuf,
}

/// `sim gen`.
#[derive(Args, Debug)]
pub struct GenArgs {
    /// The model (TOML; `sim trace fit` writes one; see examples/models/).
    #[arg(long)]
    pub model: PathBuf,
    /// Number of jobs.
    #[arg(long)]
    pub jobs: u64,
    /// Master random seed: the same seed gives a byte-identical file.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output: `.swf` or `.swf.gz` for SWF, `.jsonl` (or `.jsonl.gz`) for the native
    /// format, `-` for the native format on standard output.
    #[arg(long)]
    pub out: PathBuf,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `sim trace convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The trace to convert (or `--trace`).
    pub file: Option<PathBuf>,
    /// The workload and the cluster.
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(long, value_enum)]
    pub to: ConvertTo,
    /// Output file (`.gz`: gzipped).
    #[arg(long)]
    pub out: PathBuf,
    /// Seed (for `--gpu-memory synthetic`).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// How a replay runs, beyond its policy and seed (`sim run`, `sim compare`).
#[derive(Args, Debug, Clone)]
pub struct SimArgs {
    /// Requeues of a job killed for running out of GPU memory before it ends
    /// oom_killed (Kubernetes Job backoffLimit 6; Volcano maxRetry 3).
    #[arg(long, default_value_t = 6)]
    pub oom_retries: u32,
    /// How much longer (percent) a distributed training job runs when its tasks sit
    /// under more than one leaf switch.
    #[arg(long, default_value_t = 0)]
    pub cross_switch_slowdown: u32,
    /// Seconds after its start at which a job that runs out of GPU memory is killed.
    #[arg(long, default_value = "120")]
    pub oom_after: String,
    /// How busy (percent, 0–100) a running job keeps its GPUs when the trace does not
    /// say: the energy model's utilization (board power linear from idle to max unless the
    /// hardware profile gives points).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(0..=100))]
    pub gpu_util: u16,
    /// Placement for `--policy fcfs|easy|conservative|sjf-aging` (or kube): a score and plugin
    /// weights, e.g. `bestfit,nodeaffinity=2,interpodaffinity=2,memory=aware`.
    #[arg(long)]
    pub placement: Option<String>,
    /// Gang mode with a placement: atomic, none (pod at a time), permit-wait or kueue.
    #[arg(long)]
    pub gang: Option<String>,
    /// Topology rule with a placement: none or tree (a gang under one switch/rack/zone).
    #[arg(long)]
    pub topology: Option<String>,
    /// Kill jobs at their requested time (Slurm's behaviour; off as in Batsim/AccaSim).
    #[arg(long)]
    pub walltime_kill: bool,
    /// Stop at this simulated time (seconds); jobs not done by then end `unfinished`.
    #[arg(long)]
    pub horizon: Option<String>,
    /// What becomes of the jobs of a node that goes down: auto (Kubernetes' node
    /// lifecycle under kube, requeue otherwise), requeue, kubernetes.
    #[arg(long, value_enum, default_value_t = NodeLifecycleArg::Auto)]
    pub node_lifecycle: NodeLifecycleArg,
    /// Seconds a down node is still taken for ready before it is tainted unreachable
    /// (kube-controller-manager --node-monitor-grace-period), or a Kubernetes version:
    /// v1.32 (and later) 50 s, v1.31 (and earlier) 40 s.
    #[arg(long, default_value = "v1.32")]
    pub node_monitor_grace: String,
    /// Seconds a pod that declares no toleration of the not-ready and unreachable
    /// NoExecute taints tolerates them (DefaultTolerationSeconds admission plugin).
    #[arg(long, default_value_t = 300)]
    pub default_toleration_seconds: u64,
    /// Attach a controller, `name[key=value,...]` (see `sim controllers`); repeat it for
    /// several, called in the order given, after the cluster configuration's own.
    #[arg(long = "controller", value_name = "SPEC")]
    pub controllers: Vec<String>,
    /// Replay a node fault log (InfiniteHBD JSON, or CSV time,node,event,cause): the k-th
    /// node the log names is the cluster's node k modulo its node count, down from a
    /// fault's start to its end.
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
    /// Every job writes a checkpoint after each interval of compute, pausing `cost`
    /// seconds; an interrupted job resumes from its last one after `restore` seconds:
    /// `interval=600,cost=60,restore=120`. `interval=auto`: Young's optimum sqrt(2·cost·M),
    /// M the `failures` controller's mtbf over the job's nodes.
    #[arg(long, value_name = "interval=S|auto,cost=S,restore=S")]
    pub checkpoint: Option<String>,
    /// What becomes of a job interrupted by a node failure, an eviction or a preemption:
    /// `always` (requeued every time; the default, or the slurm.conf's JobRequeue and
    /// MaxBatchRequeue with --slurm-conf), `slurm[requeue=yes,max=5]`,
    /// `kube[backoff_limit=6,ignore_disruptions=no]`, `volcano[max_retry=3]`,
    /// `torchrun[max_restarts=0]` (elastic jobs go on with the nodes left).
    #[arg(long, value_name = "SPEC")]
    pub restarts: Option<String>,
}

/// `sim run`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The workload and the cluster.
    #[command(flatten)]
    pub input: InputArgs,
    /// How the replay runs.
    #[command(flatten)]
    pub sim: SimArgs,
    /// Policy spec, `name[key=value,...]` (see `sim policies`); default `easy`, or a
    /// policy that places GPUs when the jobs ask for GPUs (`kube` for openb and PAI,
    /// `kube[order=fifo,queue=easy,gang=atomic]` otherwise), printed with the reason.
    #[arg(long)]
    pub policy: Option<String>,
    /// On a cluster with scheduling domains (`[[domain]]` tables): how Slurm and
    /// Kubernetes share its nodes, `static[slurm_nodes=N]`, `lend-drain`, `lend-evict`,
    /// `bridge` or `bridge[shared]` (default: the configuration's `arrangement`, else
    /// static; docs/hybrid.md).
    #[arg(long)]
    pub arrangement: Option<String>,
    /// Master random seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output folder.
    #[arg(long, default_value = "sim-out")]
    pub out: PathBuf,
    /// Write the decision log (decisions.jsonl, JSON Lines).
    #[arg(long)]
    pub log: bool,
    /// Layout of the per-job table.
    #[arg(long, value_enum, default_value_t = JobsFormat::Default)]
    pub jobs_format: JobsFormat,
    /// Also write sacct.txt, the jobs in Slurm's `sacct --parsable2` layout, for any
    /// policy (runs of the `slurm` policy always write it).
    #[arg(long)]
    pub sacct: bool,
    /// Also write the report: tables (CSV), plots (SVG, PNG) and report.html.
    #[arg(long)]
    pub report: bool,
    /// No progress bar and no table on stdout.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `sim compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The workload and the cluster.
    #[command(flatten)]
    pub input: InputArgs,
    /// How the replays run.
    #[command(flatten)]
    pub sim: SimArgs,
    /// Policy specs, comma-separated (commas inside `[...]` belong to a spec), e.g.
    /// `fcfs,easy,conservative[replan=rebuild]`; the first is the baseline.
    #[arg(long, required_unless_present = "arrangements", conflicts_with = "arrangements")]
    pub policies: Option<String>,
    /// On a cluster with scheduling domains, the arrangements to compare instead of
    /// policies, e.g. `static[slurm_nodes=24],lend-drain,lend-evict,bridge` (each domain
    /// keeps its `[[domain]]` policy; docs/hybrid.md); the first is the baseline.
    #[arg(long)]
    pub arrangements: Option<String>,
    /// Seeds: an inclusive range `1..10` or a list `1,2,3`.
    #[arg(long, default_value = "0")]
    pub seeds: String,
    /// A setting to sweep, `KEY=V1,V2,...` (repeatable: every combination): each value
    /// is one more run per policy and seed, compared as a policy of its own. Keys:
    /// `checkpoint_interval` (seconds or `auto`), `checkpoint_cost`, `checkpoint_restore`
    /// (seconds; all three need `--checkpoint`). A checkpoint-interval sweep also draws
    /// lost time against the interval, Young's optimum marked.
    #[arg(long)]
    pub vary: Vec<String>,
    /// Output folder: one folder per run, comparison.csv and report.html.
    #[arg(long, default_value = "compare-out")]
    pub out: PathBuf,
    /// Worker threads (default: one per core). The output does not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar and no table on stdout.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `sim report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Run folders (each with summary.json and frame.csv), or folders holding them.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Output folder for comparison.csv, the tables, the plots and report.html.
    #[arg(long, default_value = "report-out")]
    pub out: PathBuf,
}

/// The text of `sim controllers`.
pub fn controllers_text() -> String {
    let mut s = String::new();
    for c in controllers::REGISTRY {
        s.push_str(&format!("{}\n    {}\n", c.name, c.summary));
        push_options(&mut s, c.options);
        s.push('\n');
    }
    s.push_str("Built in (attached by the engine, before the others):\n");
    for (name, what) in controllers::BUILT_IN {
        s.push_str(&format!("{name}\n    {what}\n"));
    }
    s.push_str(
        "\nAttach: sim run --controller 'maintenance[rack=r1,at=3600,until=7200]' (repeatable), or in the cluster \
         configuration:\n    [[controller]]\n    spec = \"maintenance[rack=r1,at=3600,until=7200]\"\n",
    );
    s
}

/// Appends the options of a plug-in, one block each.
fn push_options(s: &mut String, options: &[sim_core::spec::OptionInfo]) {
    for o in options {
        let values = if o.values == sim_core::spec::NUMBER {
            o.values[0].to_string()
        } else {
            format!("{} (default {})", o.values.join("|"), o.values[0])
        };
        s.push_str(&format!("    {}={values}\n        {}\n", o.key, o.doc));
    }
}

/// The text of `sim policies`.
pub fn policies_text() -> String {
    let mut s = String::new();
    for p in policies::REGISTRY {
        s.push_str(&format!("{}\n    {}\n", p.name, p.summary));
        push_options(&mut s, p.options);
        s.push('\n');
    }
    s.push_str("Specs: name or name[key=value,...], e.g. easy[pass=per-event,reservation=nodes]\n");
    let over: Vec<&str> = policies::REGISTRY.iter().filter(|p| p.over_placement.is_some()).map(|p| p.name).collect();
    s.push_str(&format!(
        "\nComposed: sim run --policy {} --placement SCORE[=W][,PLUGIN=W...][,k8s=RELEASE][,memory=aware] \\\n\
         \x20   --gang {} --topology {}\n\
         \x20   SCORE: {}\n\
         \x20   PLUGIN: tainttoleration (default 3), nodeaffinity (2), interpodaffinity (2), podtopologyspread (2),\n\
         \x20     balancedallocation (1; least-allocated, most-allocated, balanced)\n\
         \x20   RELEASE: {} (kube's k8s option; its default weights); every node is scored\n\
         \x20   (interpodaffinity and podtopologyspread as kube-scheduler v1.34: running pods' terms count, spreads\n\
         \x20   count eligible domains only; not modelled: namespaces, matchLabelKeys, default spread constraints)\n\
         \x20   e.g. --policy easy --placement 'bestfit,nodeaffinity=2,interpodaffinity=2' --gang atomic\n",
        over.join("|"),
        policies::kube::GANG.values.join("|"),
        policies::kube::TOPOLOGY.values.join("|"),
        policies::placement::PLACEMENTS.join(", "),
        policies::placement::RELEASES.join("|"),
    ));
    s
}
