//! The Alibaba PAI GPU cluster trace of July–August 2020 (`alibaba/clusterdata`,
//! `cluster-trace-gpu-v2020`; Weng et al., "MLaaS in the Wild", NSDI 2022): the task
//! table, with the job table when given.
//!
//! # Format
//!
//! CSV without a header row (the trace ships the column names in separate `.header`
//! files); a first row equal to the column names is passed over, so headered copies read
//! the same way.
//!
//! * `pai_task_table`: `job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,
//!   plan_mem,plan_gpu,gpu_type`. A job runs one or more tasks (roles such as `ps`,
//!   `worker`, `evaluator`), each of `inst_num` identical instances (containers).
//!   `plan_cpu` is in percent of a core (600 = 6 cores), `plan_mem` in GB, `plan_gpu` in
//!   percent of a GPU (50 = half a GPU, 800 = 8 GPUs); `gpu_type` is the model the task
//!   ran on (`MISC` = several older models: K40m, K80, M60).
//! * `pai_job_table`: `job_name,inst_id,user,status,start_time,end_time`; its
//!   `start_time` is the job's submission.
//!
//! Times are seconds (decimal, `1739162.0`) from the trace's shifted origin and are kept
//! as they are. The trace's README says that, read as Unix times in UTC+8
//! (Asia/Shanghai), they keep the real time of day and day of week; kept unshifted here,
//! so the hours of day that `sim trace stats` and `sim trace fit` count are UTC's: add
//! 8 for the cluster's local time. Numbers may be decimal; a missing value is empty (or `NaN`/`null`/`\N`).
//! Statuses are `Terminated` (succeeded), `Failed`, `Running` and `Waiting`.
//!
//! # Mapping to jobs
//!
//! Each task row is one gang job, `trace_id` = `job_name/task_name`, of `tasks` =
//! `inst_num` instances, each needing:
//! * `cores` = `plan_cpu` / 100 rounded up, `cpu_milli` = `plan_cpu` × 10 (a missing or
//!   zero `plan_cpu` is one core);
//! * `memory_mib` = `plan_mem` × 1024 (0 = not stated when missing);
//! * GPUs: `plan_gpu` ≤ 100 is one GPU shared at `gpu_milli` = `plan_gpu` × 10 (100 is a
//!   whole GPU); above 100 it is `plan_gpu` / 100 rounded up whole GPUs (150 → 2), since
//!   a task spanning several GPUs holds them whole. Missing or 0: no GPU;
//! * `gpu_models` = just `gpu_type` for GPU tasks, except `MISC` (a mix of models, not one a
//!   task could ask for) and empty: the trace records the model a task ran on, and PAI
//!   users pick the GPU model of their jobs, so replays keep it.
//!
//! `kind` is `DlTrain` with GPUs, else `Batch`; `runtime` = `end_time` − `start_time`, no
//! `requested` time (the trace gives none); `Failed` → `TraceStatus::Failed`, `Terminated`
//! → `Completed`.
//!
//! With the job table (read whole into memory first: job name → submission and user),
//! `submit` = the job's `start_time` (its submission; the task's own `start_time` when the
//! job's is missing), `observed_start` = the task's `start_time`, and `user` a dense id of
//! the job table's user hashes in the order first seen there (1, 2, …; 0 = empty).
//! Without it, `submit` = the task's `start_time`, `observed_start` is unknown and `user`
//! is 0. `group` is 0, `queue` and `partition` -1 (unknown).
//!
//! Task rows that become no job are counted by reason: `still running or waiting`
//! (status `Running`/`Waiting`), `never ran or still running (no start or end time)`,
//! `job not in the job table` (only with a job table), `no instances (inst_num 0)`.
//! A task ending before it starts, an unknown status, or a job listed twice in the job
//! table is an error naming file, line and column.

use crate::error::TraceError;
use crate::import::{CsvRows, DenseIds, JobReader, Skipped, missing};
use crate::input::TraceInput;
use sim_core::time::{MICROS_PER_SEC, parse_secs_micros};
use sim_core::{Job, JobKind, SimDuration, SimTime, TaskShape, TraceStatus};
use std::collections::HashMap;

/// Columns of `pai_task_table.csv`, in order.
pub const TASK_COLUMNS: [&str; 10] = [
    "job_name",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
];

/// Columns of `pai_job_table.csv`, in order.
pub const JOB_COLUMNS: [&str; 6] = ["job_name", "inst_id", "user", "status", "start_time", "end_time"];

const NUMBER: &str = "a non-negative number (or empty)";
const SECONDS: &str = "a non-negative number of seconds (or empty)";

/// Column `col` as a non-negative decimal × 10⁶, `None` when missing.
fn micro(rows: &CsvRows, col: &str, expected: &str) -> Result<Option<u64>, TraceError> {
    let text = rows.text(col);
    if missing(text) {
        return Ok(None);
    }
    parse_secs_micros(text).map(Some).map_err(|_| rows.bad(col, expected))
}

/// What the job table says about one job.
#[derive(Debug, Clone, Copy)]
struct JobInfo {
    /// Submission, µs.
    submit: Option<u64>,
    user: u32,
}

fn read_job_table(file: &str, input: TraceInput) -> Result<HashMap<String, JobInfo>, TraceError> {
    let mut rows = CsvRows::with_columns(input, file, &JOB_COLUMNS)?;
    let mut users = DenseIds::default();
    let mut jobs = HashMap::new();
    while rows.advance()? {
        let name = rows.text("job_name");
        if name.is_empty() {
            return Err(rows.bad("job_name", "a job name"));
        }
        let submit = micro(&rows, "start_time", SECONDS)?;
        let user = users.id(rows.text("user"));
        if jobs.insert(name.to_string(), JobInfo { submit, user }).is_some() {
            return Err(rows.bad("job_name", "a job listed once (this one appears on an earlier line too)"));
        }
    }
    Ok(jobs)
}

/// Streams the jobs of a PAI 2020 task table (see the module docs).
pub struct PaiReader {
    rows: CsvRows,
    jobs: Option<HashMap<String, JobInfo>>,
    count: u64,
    skipped: Skipped,
}

impl PaiReader {
    /// Opens the task table `tasks` (called `file` in errors); `jobs` is the job table's
    /// name and contents, read whole here.
    pub fn new(tasks: TraceInput, file: &str, jobs: Option<(String, TraceInput)>) -> Result<PaiReader, TraceError> {
        let jobs = match jobs {
            Some((name, input)) => Some(read_job_table(&name, input)?),
            None => None,
        };
        Ok(PaiReader {
            rows: CsvRows::with_columns(tasks, file, &TASK_COLUMNS)?,
            jobs,
            count: 0,
            skipped: Skipped::default(),
        })
    }

    /// Jobs in the job table (0 without one).
    pub fn job_table_len(&self) -> usize {
        self.jobs.as_ref().map_or(0, HashMap::len)
    }

    fn row(&self) -> Result<Result<Job, &'static str>, TraceError> {
        let r = &self.rows;
        let job_name = r.text("job_name");
        if job_name.is_empty() {
            return Err(r.bad("job_name", "a job name"));
        }
        let status = r.text("status");
        let trace_status = if status.eq_ignore_ascii_case("terminated") {
            TraceStatus::Completed
        } else if status.eq_ignore_ascii_case("failed") {
            TraceStatus::Failed
        } else if status.eq_ignore_ascii_case("running") || status.eq_ignore_ascii_case("waiting") {
            return Ok(Err("still running or waiting"));
        } else {
            return Err(r.bad("status", "Terminated, Failed, Running or Waiting"));
        };
        let start = micro(r, "start_time", SECONDS)?;
        let end = micro(r, "end_time", SECONDS)?;
        let (Some(start), Some(end)) = (start, end) else {
            return Ok(Err("never ran or still running (no start or end time)"));
        };
        if end < start {
            return Err(r.bad("end_time", "a time at or after start_time"));
        }
        let info = match &self.jobs {
            Some(jobs) => match jobs.get(job_name) {
                Some(info) => Some(*info),
                None => return Ok(Err("job not in the job table")),
            },
            None => None,
        };
        let inst = micro(r, "inst_num", "a whole number of instances")?.unwrap_or(0);
        if inst % MICROS_PER_SEC != 0 {
            return Err(r.bad("inst_num", "a whole number of instances"));
        }
        let tasks = u32::try_from(inst / MICROS_PER_SEC).map_err(|_| r.bad("inst_num", "at most 2^32-1 instances"))?;
        if tasks == 0 {
            return Ok(Err("no instances (inst_num 0)"));
        }
        let task = shape(r)?;
        let gpu_type = r.text("gpu_type");
        let gpu_models = if task.gpus > 0 && !missing(gpu_type) && !gpu_type.eq_ignore_ascii_case("MISC") {
            vec![gpu_type.to_string()]
        } else {
            Vec::new()
        };
        let (submit, observed_start, user) = match info {
            Some(i) => (i.submit.unwrap_or(start), Some(SimTime(start)), i.user),
            None => (start, None, 0),
        };
        Ok(Ok(Job {
            trace_id: format!("{job_name}/{}", r.text("task_name")),
            submit: SimTime(submit),
            tasks,
            task,
            runtime: Some(SimDuration(end - start)),
            requested: None,
            user,
            group: 0,
            queue: -1,
            partition: -1,
            priority: 0,
            kind: if task.gpus > 0 { JobKind::DlTrain } else { JobKind::Batch },
            trace_status,
            gpu_models,
            constraints: None,
            min_tasks: 0,
            observed_start,
            restart_policy: Default::default(),
            checkpoint: None,
            domain: 0,
        }))
    }
}

/// One instance's needs from `plan_cpu`, `plan_mem` and `plan_gpu` (see the module docs).
fn shape(r: &CsvRows) -> Result<TaskShape, TraceError> {
    // Values × 10⁶: percent of a core → milli-cores is × 10, i.e. ÷ 10⁵.
    let too_large = |col: &str| r.bad(col, "a smaller number (the value overflows)");
    let (cores, cpu_milli) = match micro(r, "plan_cpu", NUMBER)? {
        None | Some(0) => (1, 0),
        Some(v) => {
            let milli = u32::try_from(v.div_ceil(100_000)).map_err(|_| too_large("plan_cpu"))?;
            let cores = u32::try_from(v.div_ceil(100 * MICROS_PER_SEC)).map_err(|_| too_large("plan_cpu"))?;
            (cores, milli)
        }
    };
    let memory_mib = match micro(r, "plan_mem", NUMBER)? {
        None => 0,
        Some(v) => u64::try_from((u128::from(v) * 1024).div_ceil(u128::from(MICROS_PER_SEC)))
            .map_err(|_| too_large("plan_mem"))?,
    };
    let (gpus, gpu_milli) = match micro(r, "plan_gpu", NUMBER)? {
        None | Some(0) => (0, 0),
        Some(v) if v < 100 * MICROS_PER_SEC => (1, v.div_ceil(100_000).clamp(1, 999) as u32),
        Some(v) => (u32::try_from(v.div_ceil(100 * MICROS_PER_SEC)).map_err(|_| too_large("plan_gpu"))?, 0),
    };
    Ok(TaskShape { cores, memory_mib, gpus, cpu_milli, gpu_milli, ..TaskShape::default() })
}

impl JobReader for PaiReader {
    fn next_job(&mut self) -> Result<Option<Job>, TraceError> {
        while self.rows.advance()? {
            self.count += 1;
            match self.row()? {
                Ok(job) => return Ok(Some(job)),
                Err(reason) => self.skipped.add(reason),
            }
        }
        Ok(None)
    }

    fn rows(&self) -> u64 {
        self.count
    }

    fn skipped(&self) -> &Skipped {
        &self.skipped
    }
}
