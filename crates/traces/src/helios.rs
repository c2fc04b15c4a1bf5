//! SenseTime Helios job logs (Hu et al., "Characterization and Prediction of Deep Learning
//! Workloads in Large-Scale GPU Datacenters", SC 2021; data `S-Lab-System-Group/HeliosData`,
//! CC BY 4.0): one `cluster_log.csv` per cluster (Venus, Earth, Saturn, Uranus), every
//! Slurm job from April to September 2020,
//!
//! `job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue`
//!
//! e.g. `1425512,uVMrF,vchbv,4,16,1,FAILED,2020-06-09 18:41:27,2020-06-09 18:41:27,2020-06-09 18:45:36,249,0`.
//! Users and VCs are hashes; `gpu_num` and `cpu_num` are the job's totals over its
//! `node_num` nodes; times are civil `YYYY-MM-DD HH:MM:SS`; `duration` = end − start and
//! `queue` = start − submit, in seconds. The HeliosArtifact simulators (QSSF, and Lucid
//! after it) read the same file; some versions add a `jobname` column.
//!
//! Mapping (columns found by header name; `job_id`, `user`, `vc`, `gpu_num`, `cpu_num`,
//! `node_num`, `state`, `submit_time`, `start_time` and `duration` are required; other
//! columns, `queue` and `jobname` among them, are not read, and `end_time` only when
//! `duration` is empty):
//! * `submit` = `submit_time` − 2020-04-01 00:00:00, the start of the trace period and the
//!   epoch HeliosArtifact's simulator uses; `observed_start` = `start_time` the same way.
//!   Rows submitted earlier are skipped (`"submitted before 2020-04-01"`), as that
//!   simulator filters them, rather than failing a whole cluster's log.
//! * `start_time` empty (or Slurm's `None` / `Unknown`): the job never ran (cancelled
//!   while pending); skipped as `"never started"`. A start before the submission is an
//!   error.
//! * gang: `node_num` (≥ 1) tasks, each with `gpu_num / node_num` GPUs and
//!   `cpu_num / node_num` cores, both rounded up (a gang is of identical tasks; Slurm
//!   jobs normally split evenly) and at least 1 core.
//! * `runtime` = `requested` = `duration` (Helios gives no time limits; `end_time` −
//!   `start_time` when `duration` is empty).
//! * `trace_status` from `state` (read as sacct's: first word, any case): `COMPLETED`
//!   completed; `CANCELLED` (also `CANCELLED by N`) and `PREEMPTED` cancelled; `FAILED`,
//!   `TIMEOUT`, `NODE_FAIL` failed (as the paper counts them), and Slurm's
//!   `OUT_OF_MEMORY`, `BOOT_FAIL`, `DEADLINE` too. `SUSPENDED` (once in Uranus, ignored by
//!   the paper) is skipped as `"suspended"`; `PENDING`, `RUNNING`, `REQUEUED`, `RESIZING`
//!   and Slurm's other transient states as `"still running"`. Any other state is an error.
//! * kind `DlTrain` with GPUs, else `Batch`; `user` and `queue` (the VC) dense ids in
//!   first-seen order (1, 2, …; an empty VC is queue -1); `trace_id` = `job_id`.

use crate::error::TraceError;
use crate::import::{
    CsvRows, DenseIds, JobReader, Skipped, SlurmState, civil_secs, days_from_civil, missing, slurm_state,
};
use crate::input::TraceInput;
use sim_core::job::{Job, JobKind, TaskShape, TraceStatus};
use sim_core::time::parse_secs_micros;
use sim_core::{SimDuration, SimTime};

/// The Helios importer's epoch, 2020-04-01 00:00:00, as [`civil_secs`] counts it.
pub const EPOCH_SECS: i64 = days_from_civil(2020, 4, 1) * 86_400;

/// Most GPUs, cores or nodes one job may ask for (a sanity bound).
pub const MAX_COUNT: u32 = 1 << 20;

const REQUIRED: [&str; 10] =
    ["job_id", "user", "vc", "gpu_num", "cpu_num", "node_num", "state", "submit_time", "start_time", "duration"];

const STATES: &str = "COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, \
                      PREEMPTED, SUSPENDED, PENDING, RUNNING, REQUEUED or RESIZING";

/// How a Helios job ended, or why its row is skipped. `TIMEOUT` is `Failed`, as the
/// paper counts it (Helios records no time limits, so a replay could not kill the job at
/// one); `PREEMPTED` is `Cancelled`, as in the sacct importer.
fn status(st: SlurmState) -> Result<TraceStatus, &'static str> {
    match st {
        SlurmState::Completed => Ok(TraceStatus::Completed),
        SlurmState::Cancelled | SlurmState::Preempted => Ok(TraceStatus::Cancelled),
        SlurmState::Failed | SlurmState::Timeout => Ok(TraceStatus::Failed),
        SlurmState::Suspended => Err("suspended"),
        SlurmState::Pending | SlurmState::Active | SlurmState::Revoked => Err("still running"),
    }
}

/// Streams the jobs of a Helios `cluster_log.csv`.
pub struct HeliosReader {
    rows: CsvRows,
    read: u64,
    skipped: Skipped,
    users: DenseIds,
    vcs: DenseIds,
}

impl HeliosReader {
    /// Opens a Helios job log; its header must name the columns listed above.
    pub fn new(input: TraceInput, file: &str) -> Result<Self, TraceError> {
        let rows = CsvRows::with_header(input, file, b',', &REQUIRED)?;
        Ok(HeliosReader {
            rows,
            read: 0,
            skipped: Skipped::default(),
            users: DenseIds::default(),
            vcs: DenseIds::default(),
        })
    }

    /// Column `col` as a civil time in seconds from 1970.
    fn time(&self, col: &str) -> Result<i64, TraceError> {
        civil_secs(self.rows.text(col)).ok_or_else(|| self.rows.bad(col, "a date and time YYYY-MM-DD HH:MM:SS"))
    }

    /// Column `col` as a count in `min..=MAX_COUNT`.
    fn count(&self, col: &str, min: u32) -> Result<u32, TraceError> {
        self.rows.count_in(col, min, MAX_COUNT)
    }

    /// The run time in microseconds: `duration`, else `end_time` − `start_time`.
    fn runtime(&self, start: i64) -> Result<u64, TraceError> {
        let r = &self.rows;
        if !r.text("duration").is_empty() {
            return parse_secs_micros(r.text("duration"))
                .map_err(|_| r.bad("duration", "a run time in seconds (a non-negative number)"));
        }
        if r.text("end_time").is_empty() {
            return Err(r.bad("duration", "a run time in seconds (or an end_time)"));
        }
        let end = self.time("end_time")?;
        u64::try_from(end - start)
            .map(|s| s * 1_000_000)
            .map_err(|_| r.bad("end_time", "a time on or after start_time"))
    }
}

impl JobReader for HeliosReader {
    fn next_job(&mut self) -> Result<Option<Job>, TraceError> {
        loop {
            if !self.rows.advance()? {
                return Ok(None);
            }
            self.read += 1;
            let submit = self.time("submit_time")?;
            let status = match slurm_state(self.rows.text("state")).map(status) {
                Some(Ok(s)) => s,
                Some(Err(reason)) => {
                    self.skipped.add(reason);
                    continue;
                }
                None => return Err(self.rows.bad("state", format!("a Slurm job state: {STATES}"))),
            };
            let Ok(submit) = u64::try_from(submit - EPOCH_SECS) else {
                self.skipped.add("submitted before 2020-04-01");
                continue;
            };
            let start_text = self.rows.text("start_time");
            if missing(start_text) {
                self.skipped.add("never started");
                continue;
            }
            let start = self.time("start_time")?;
            let Ok(started) = u64::try_from(start - EPOCH_SECS) else {
                return Err(self.rows.bad("start_time", "a time on or after submit_time"));
            };
            if started < submit {
                return Err(self.rows.bad("start_time", "a time on or after submit_time"));
            }
            let runtime = Some(SimDuration(self.runtime(start)?));
            let gpus = self.count("gpu_num", 0)?;
            let cpus = self.count("cpu_num", 0)?;
            let nodes = self.count("node_num", 1)?;
            let job_id = self.rows.text("job_id");
            if job_id.is_empty() {
                return Err(self.rows.bad("job_id", "a job id"));
            }
            let trace_id = job_id.to_string();
            let user = self.users.id(self.rows.text("user"));
            let queue = self.vcs.id_i32(self.rows.text("vc"));
            let per_task_gpus = gpus.div_ceil(nodes);
            return Ok(Some(Job {
                trace_id,
                submit: SimTime::from_secs(submit),
                tasks: nodes,
                task: TaskShape { cores: cpus.div_ceil(nodes).max(1), gpus: per_task_gpus, ..TaskShape::default() },
                runtime,
                requested: runtime,
                user,
                group: 0,
                queue,
                partition: -1,
                priority: 0,
                kind: if gpus > 0 { JobKind::DlTrain } else { JobKind::Batch },
                trace_status: status,
                gpu_models: Vec::new(),
                constraints: None,
                min_tasks: 0,
                observed_start: Some(SimTime::from_secs(started)),
                restart_policy: Default::default(),
                checkpoint: None,
                domain: 0,
            }));
        }
    }

    fn rows(&self) -> u64 {
        self.read
    }

    fn skipped(&self) -> &Skipped {
        &self.skipped
    }
}
