//! Slurm accounting dumps: the output of SchedMD Slurm's `sacct(1)` with `--parsable2
//! --allocations`, e.g.
//!
//! ```text
//! sacct --allusers --allocations --parsable2 -S 2024-03-01 -E 2024-04-01 \
//!   --format=JobID,JobName,Submit,Start,End,Elapsed,Timelimit,NCPUS,NNodes,ReqTRES,AllocTRES,Partition,QOS,User,Account,State,Priority
//! ```
//!
//! # Format
//!
//! `|`-separated, no quoting, no trailing `|` (a trailing one, from `--parsable`, is
//! harmless); the first line is the header of field names as sacct prints them. Columns
//! are found by name: `JobID`, `Submit`, `Start`, `End`, `NCPUS`, `NNodes` and `State` are
//! required; `Elapsed`, `Timelimit`, `ReqTRES`, `AllocTRES`, `Partition`, `QOS`, `User`,
//! `Account` and `Priority` are read when present; any other column is ignored.
//!
//! * Times are `YYYY-MM-DDTHH:MM:SS` (sacct's default `SLURM_TIME_FORMAT`), or `Unknown` /
//!   `None` / empty. sacct prints the cluster's local time without a zone; it is taken as
//!   is (so a daylight-saving change inside the dump shifts later times by an hour).
//! * Durations (`Elapsed`, `Timelimit`) are `[days-]hours:minutes:seconds`,
//!   `minutes:seconds`, `minutes`, `days-hours` or `days-hours:minutes` (seconds may carry
//!   a decimal fraction); `Timelimit` may also be `UNLIMITED`, `Partition_Limit`,
//!   `INVALID` or empty, all read as "no limit known".
//! * `JobID` is `123`, `123_4` (array element), `123_[5-9]` (array elements still
//!   pending), `123+1` (component of a heterogeneous job) or, for job steps, `123.batch`,
//!   `123.extern`, `123.0`, `123_4.0`. `--allocations` prints no steps; any step row found
//!   is counted as skipped ("job step").
//! * TRES strings (`ReqTRES`, `AllocTRES`) are `name=value` lists:
//!   `billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1`. Memory has a unit
//!   suffix `K`, `M` (the default), `G`, `T` or `P` (powers of 1024) and may be decimal
//!   (`187.50G`).
//!
//! # Mapping to jobs
//!
//! * Time zero is midnight of the day of the first data row's `Submit` (a streaming
//!   reader cannot know the earliest submission in advance). Every later time must fall on
//!   or after it, else the reader stops with an error: sort the dump by `Submit` (or put
//!   the earliest job first). `submit` = `Submit`, `observed_start` = `Start`.
//! * `tasks` = `NNodes`: one task per node, a gang. Per task: `cores` = `NCPUS` / `NNodes`
//!   rounded up; `gpus` = the `gres/gpu` count (else the sum of typed `gres/gpu:<model>`
//!   counts) of `AllocTRES`, else of `ReqTRES`, over `NNodes` rounded up; `memory_mib` =
//!   `mem` of `AllocTRES`, else of `ReqTRES`, over `NNodes` rounded up (0 when neither
//!   says). `gpu_models` = the models of the typed `gres/gpu:<model>` entries, in order.
//!   Components of a heterogeneous job become separate jobs, not co-scheduled.
//! * `runtime` = `End` − `Start`, or `Elapsed` when `End` is unknown; `requested` =
//!   `Timelimit`. A `TIMEOUT` job runs for its limit (Slurm lets it overrun by its grace
//!   time): a job killed at its limit replays as one that runs exactly to it, and ends
//!   `Completed`, as a walltime-killed job of a replay does.
//! * `State` (its first word: `CANCELLED by 1234` is `CANCELLED`): `COMPLETED` →
//!   `Completed`; `FAILED`, `NODE_FAIL`, `OUT_OF_MEMORY`, `BOOT_FAIL`, `DEADLINE` →
//!   `Failed`; `CANCELLED` and `PREEMPTED` jobs that started → `Cancelled`.
//! * `user` (`User`), `group` (`Account`), `queue` (`QOS`) and `partition` (`Partition`)
//!   are dense ids of the names in first-seen order: 1, 2, 3, …; when empty or absent 0
//!   for `user` and `group`, -1 (unknown) for `queue` and `partition`.
//!   `priority` = `Priority` (0 when absent). `kind` = `DlTrain` with GPUs, else `Batch`.
//! * Rows that become no job are counted by reason: `job step`; `still running at the
//!   dump` (`RUNNING`, `REQUEUED`, `SUSPENDED`, `RESIZING` and the other transient
//!   states); `never started (pending at the dump)`; `never started (cancelled before
//!   start)` (`CANCELLED` with no `Start`, or with an empty `AllocTRES`); `never started
//!   (no start time)` (any other end state with no `Start`); `revoked (ran on another
//!   cluster)` (federation siblings); `no end time` (neither `End` nor `Elapsed` known).
//!
//! Errors name the file, the line and the column, and say what was expected. `ReqMem` is
//! not read (its meaning changed across Slurm versions); memory comes from the TRES.

use crate::error::TraceError;
use crate::import::{
    CsvRows, DenseIds, JobReader, Skipped, SlurmState, civil_day_string, civil_secs, missing, slurm_state,
};
use crate::input::TraceInput;
use sim_core::time::{MICROS_PER_SEC, parse_secs_micros};
use sim_core::{Job, JobKind, SimDuration, SimTime, TaskShape, TraceStatus};

/// Columns a dump must have.
pub const REQUIRED: [&str; 7] = ["JobID", "Submit", "Start", "End", "NCPUS", "NNodes", "State"];

const TIME_FORMAT: &str = "a time YYYY-MM-DDTHH:MM:SS, Unknown or None";
const DURATION_FORMAT: &str = "a duration [days-]hours:minutes:seconds or minutes:seconds";
const TRES_FORMAT: &str = "a TRES list like cpu=4,mem=16G,node=1,gres/gpu:a100=2";

/// A Slurm duration in microseconds: `[days-]hours:minutes:seconds`, `minutes:seconds`,
/// `minutes`, `days-hours`, `days-hours:minutes`; the seconds may be decimal.
pub fn parse_duration(text: &str) -> Option<u64> {
    let (days, rest) = match text.split_once('-') {
        Some((d, r)) => (Some(d), r),
        None => (None, text),
    };
    let int = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.len() <= 12 && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse().ok()).flatten()
    };
    let secs = |s: &str| -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
            return None;
        }
        parse_secs_micros(s).ok()
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let (d, h, m, s) = match (days, parts.as_slice()) {
        (Some(d), [h]) => (int(d)?, int(h)?, 0, 0),
        (Some(d), [h, m]) => (int(d)?, int(h)?, int(m)?, 0),
        (Some(d), [h, m, s]) => (int(d)?, int(h)?, int(m)?, secs(s)?),
        (None, [m]) => (0, 0, int(m)?, 0),
        (None, [m, s]) => (0, 0, int(m)?, secs(s)?),
        (None, [h, m, s]) => (0, int(h)?, int(m)?, secs(s)?),
        _ => return None,
    };
    let whole = d.checked_mul(86_400)?.checked_add(h.checked_mul(3600)?)?.checked_add(m.checked_mul(60)?)?;
    whole.checked_mul(MICROS_PER_SEC)?.checked_add(s)
}

/// A memory size with an optional unit suffix (`K`, `M`, `G`, `T`, `P`, powers of 1024;
/// none = `M`), decimal allowed, in MiB rounded up.
pub fn parse_mem_mib(text: &str) -> Option<u64> {
    let (num, unit) = match text.as_bytes().last() {
        Some(c) if c.is_ascii_alphabetic() => (&text[..text.len() - 1], c.to_ascii_uppercase()),
        _ => (text, b'M'),
    };
    if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
        return None;
    }
    let micro = u128::from(parse_secs_micros(num).ok()?); // value × 10⁶
    let (mul, div): (u128, u128) = match unit {
        b'K' => (1, 1024),
        b'M' => (1, 1),
        b'G' => (1024, 1),
        b'T' => (1 << 20, 1),
        b'P' => (1 << 30, 1),
        _ => return None,
    };
    let mib = (micro * mul).div_ceil(u128::from(MICROS_PER_SEC) * div);
    u64::try_from(mib).ok()
}

/// What a TRES string says about GPUs and memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tres {
    /// The `gres/gpu` count, else the sum of the typed counts; `None` when no GPU entry.
    pub gpus: Option<u64>,
    /// Models of the typed `gres/gpu:<model>` entries with a nonzero count, in order.
    pub gpu_models: Vec<String>,
    /// `mem`, MiB.
    pub mem_mib: Option<u64>,
}

/// Parses a TRES list (`billing=4,cpu=4,gres/gpu:a100=2,gres/gpu=2,mem=16G,node=1`); the
/// error is the offending entry.
pub fn parse_tres(text: &str) -> Result<Tres, String> {
    let mut t = Tres::default();
    let mut typed: Option<u64> = None;
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (key, value) = entry.split_once('=').ok_or_else(|| entry.to_string())?;
        let count = || value.parse::<u64>().map_err(|_| entry.to_string());
        if key == "gres/gpu" {
            t.gpus = Some(count()?);
        } else if let Some(model) = key.strip_prefix("gres/gpu:") {
            let n = count()?;
            typed = Some(typed.unwrap_or(0).saturating_add(n));
            if n > 0 && !model.is_empty() && !t.gpu_models.iter().any(|m| m == model) {
                t.gpu_models.push(model.to_string());
            }
        } else if key == "mem" {
            t.mem_mib = Some(parse_mem_mib(value).ok_or_else(|| entry.to_string())?);
        }
    }
    if t.gpus.is_none() {
        t.gpus = typed;
    }
    Ok(t)
}

/// Streams the jobs of a `sacct --parsable2 --allocations` dump (see the module docs).
pub struct SacctReader {
    rows: CsvRows,
    count: u64,
    skipped: Skipped,
    /// Time zero: seconds since the Unix epoch of midnight of the first row's `Submit`.
    epoch: Option<i64>,
    users: DenseIds,
    accounts: DenseIds,
    qos: DenseIds,
    partitions: DenseIds,
}

impl SacctReader {
    /// Opens a dump; reads its header.
    pub fn new(input: TraceInput, file: &str) -> Result<SacctReader, TraceError> {
        Ok(SacctReader {
            rows: CsvRows::with_header(input, file, b'|', &REQUIRED)?,
            count: 0,
            skipped: Skipped::default(),
            epoch: None,
            users: DenseIds::default(),
            accounts: DenseIds::default(),
            qos: DenseIds::default(),
            partitions: DenseIds::default(),
        })
    }

    /// Time zero as seconds since 1970-01-01T00:00:00 (in the dump's own clock), once the
    /// first row is read.
    pub fn epoch_secs(&self) -> Option<i64> {
        self.epoch
    }

    /// Column `col` as a time since time zero, `None` for `Unknown`/`None`/empty.
    fn time(&self, col: &str) -> Result<Option<SimTime>, TraceError> {
        let text = self.rows.text(col);
        if missing(text) {
            return Ok(None);
        }
        let secs = civil_secs(text).ok_or_else(|| self.rows.bad(col, TIME_FORMAT))?;
        let epoch = self.epoch.unwrap_or(secs);
        let since = u64::try_from(secs - epoch).map_err(|_| {
            let day = epoch.div_euclid(86_400);
            self.rows.bad(
                col,
                format!(
                    "a time on or after {} (time zero: midnight of the first row's Submit; sort the dump by Submit)",
                    civil_day_string(day)
                ),
            )
        })?;
        Ok(Some(SimTime(since * MICROS_PER_SEC)))
    }

    fn tres(&self, col: &str) -> Result<Tres, TraceError> {
        parse_tres(self.rows.text(col)).map_err(|_| self.rows.bad(col, TRES_FORMAT))
    }

    /// The current row as a job, or the reason it is skipped.
    fn row(&mut self) -> Result<Result<Job, &'static str>, TraceError> {
        let id = self.rows.text("JobID");
        if id.is_empty() {
            return Err(self.rows.bad("JobID", "a job id like 123, 123_4 or 123+1"));
        }
        if id.contains('.') {
            return Ok(Err("job step"));
        }
        self.start_epoch()?;
        let submit = self.time("Submit")?.ok_or_else(|| self.rows.bad("Submit", "a time YYYY-MM-DDTHH:MM:SS"))?;
        let st = match self.state()? {
            Ok(st) => st,
            Err(reason) => return Ok(Err(reason)),
        };
        let start = match self.start(st)? {
            Ok(start) => start,
            Err(reason) => return Ok(Err(reason)),
        };
        let (runtime, requested) = match self.runtime(st, start)? {
            Ok(times) => times,
            Err(reason) => return Ok(Err(reason)),
        };
        self.job(st, submit, start, runtime, requested).map(Ok)
    }

    /// Sets time zero from the first data row's `Submit`.
    fn start_epoch(&mut self) -> Result<(), TraceError> {
        if self.epoch.is_none() {
            let text = self.rows.text("Submit");
            let secs = civil_secs(text).ok_or_else(|| self.rows.bad("Submit", "a time YYYY-MM-DDTHH:MM:SS"))?;
            self.epoch = Some(secs.div_euclid(86_400) * 86_400);
        }
        Ok(())
    }

    /// The row's `State`, or the reason a job in it is skipped (pending, still running,
    /// revoked).
    fn state(&self) -> Result<Result<SlurmState, &'static str>, TraceError> {
        let st = slurm_state(self.rows.text("State")).ok_or_else(|| {
            self.rows.bad("State", "a Slurm job state (COMPLETED, FAILED, TIMEOUT, CANCELLED, RUNNING, PENDING, …)")
        })?;
        Ok(match st {
            SlurmState::Pending => Err("never started (pending at the dump)"),
            SlurmState::Active | SlurmState::Suspended => Err("still running at the dump"),
            SlurmState::Revoked => Err("revoked (ran on another cluster)"),
            _ => Ok(st),
        })
    }

    /// The row's `Start`, or the reason a job in state `st` never started.
    fn start(&self, st: SlurmState) -> Result<Result<SimTime, &'static str>, TraceError> {
        let start = self.time("Start")?;
        let cancelled = matches!(st, SlurmState::Cancelled | SlurmState::Preempted);
        let Some(start) = start else {
            return Ok(Err(if cancelled {
                "never started (cancelled before start)"
            } else {
                "never started (no start time)"
            }));
        };
        if cancelled && self.rows.has("AllocTRES") && self.rows.text("AllocTRES").is_empty() {
            return Ok(Err("never started (cancelled before start)"));
        }
        Ok(Ok(start))
    }

    /// How long a job in state `st` started at `start` ran, and its time limit; or the
    /// reason it is skipped (no end time).
    fn runtime(
        &self,
        st: SlurmState,
        start: SimTime,
    ) -> Result<Result<(SimDuration, Option<SimDuration>), &'static str>, TraceError> {
        let mut runtime = match self.time("End")? {
            Some(end) if end < start => {
                return Err(self.rows.bad("End", "a time at or after Start"));
            }
            Some(end) => Some(end - start),
            None => match self.rows.text("Elapsed") {
                "" => None,
                e => Some(SimDuration(parse_duration(e).ok_or_else(|| self.rows.bad("Elapsed", DURATION_FORMAT))?)),
            },
        };
        let requested = self.time_limit()?;
        if st == SlurmState::Timeout && requested.is_some() {
            runtime = requested;
        }
        Ok(runtime.map(|r| (r, requested)).ok_or("no end time"))
    }

    /// `Timelimit`, `None` when no limit is known.
    fn time_limit(&self) -> Result<Option<SimDuration>, TraceError> {
        Ok(match self.rows.text("Timelimit") {
            "" => None,
            t if ["UNLIMITED", "Partition_Limit", "INVALID"].iter().any(|u| t.eq_ignore_ascii_case(u)) => None,
            t => Some(SimDuration(parse_duration(t).ok_or_else(|| {
                self.rows.bad("Timelimit", "a duration [days-]hours:minutes:seconds, UNLIMITED or Partition_Limit")
            })?)),
        })
    }

    /// The row's gang: its number of tasks (nodes), each task's shape and the GPU models.
    fn shape(&self) -> Result<(u32, TaskShape, Vec<String>), TraceError> {
        // A job that ran had at least one node and one CPU.
        let ncpus = self.rows.count_in("NCPUS", 1, u32::MAX)?;
        let nodes = self.rows.count_in("NNodes", 1, u32::MAX)?;
        let alloc = self.tres("AllocTRES")?;
        let req = self.tres("ReqTRES")?;
        let per_node = |total: u64| -> u64 { if nodes == 0 { total } else { total.div_ceil(u64::from(nodes)) } };
        let (gpus_total, gpu_models) = match alloc.gpus {
            Some(g) => (g, alloc.gpu_models),
            None => (req.gpus.unwrap_or(0), req.gpu_models),
        };
        let gpus = u32::try_from(per_node(gpus_total)).map_err(|_| {
            let col = if alloc.gpus.is_some() { "AllocTRES" } else { "ReqTRES" };
            self.rows.bad(col, "a GPU count below 2^32 per node")
        })?;
        let memory_mib = per_node(alloc.mem_mib.or(req.mem_mib).unwrap_or(0));
        let cores = per_node(u64::from(ncpus)) as u32; // ≤ ncpus
        Ok((nodes, TaskShape { cores, memory_mib, gpus, ..TaskShape::default() }, gpu_models))
    }

    /// The row as a job that ran: in state `st`, submitted at `submit`, started at
    /// `start`, for `runtime`, with time limit `requested`.
    fn job(
        &mut self,
        st: SlurmState,
        submit: SimTime,
        start: SimTime,
        runtime: SimDuration,
        requested: Option<SimDuration>,
    ) -> Result<Job, TraceError> {
        let (nodes, task, gpu_models) = self.shape()?;
        let priority = match self.rows.text("Priority") {
            "" => 0,
            _ => self.rows.parse::<i64>("Priority", "an integer priority")?,
        };
        let trace_status = match st {
            SlurmState::Failed => TraceStatus::Failed,
            SlurmState::Cancelled | SlurmState::Preempted => TraceStatus::Cancelled,
            _ => TraceStatus::Completed,
        };
        let trace_id = self.rows.text("JobID").to_string();
        let user = self.users.id(self.rows.text("User"));
        let group = self.accounts.id(self.rows.text("Account"));
        let queue = self.qos.id_i32(self.rows.text("QOS"));
        let partition = self.partitions.id_i32(self.rows.text("Partition"));
        Ok(Job {
            trace_id,
            submit,
            tasks: nodes,
            task,
            runtime: Some(runtime),
            requested,
            user,
            group,
            queue,
            partition,
            priority,
            kind: if task.gpus > 0 { JobKind::DlTrain } else { JobKind::Batch },
            trace_status,
            gpu_models,
            constraints: None,
            min_tasks: 0,
            observed_start: Some(start),
            restart_policy: Default::default(),
            checkpoint: None,
            domain: 0,
        })
    }
}

impl JobReader for SacctReader {
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

    fn names(&self) -> crate::import::Names {
        crate::import::Names {
            queues: self.qos.names(),
            partitions: self.partitions.names(),
            users: self.users.names(),
            accounts: self.accounts.names(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("01:00:00"), Some(3_600_000_000));
        assert_eq!(parse_duration("2-00:00:30"), Some((2 * 86_400 + 30) * 1_000_000));
        assert_eq!(parse_duration("30:15"), Some((30 * 60 + 15) * 1_000_000));
        assert_eq!(parse_duration("45"), Some(45 * 60 * 1_000_000));
        assert_eq!(parse_duration("1-12"), Some(36 * 3600 * 1_000_000));
        assert_eq!(parse_duration("1-12:30"), Some((36 * 3600 + 1800) * 1_000_000));
        assert_eq!(parse_duration("00:00:01.500"), Some(1_500_000));
        for bad in ["", "1:2:3:4", "a:b", "-1", "1--2", "99999999999999:00", "1:-2"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn tres_and_memory() {
        let t = parse_tres("billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=187.50G,node=1").unwrap();
        assert_eq!(t, Tres { gpus: Some(2), gpu_models: vec!["a100".into()], mem_mib: Some(192_000) });
        let t = parse_tres("cpu=2,gres/gpu:v100=1,gres/gpu:a100=1,mem=3900M").unwrap();
        assert_eq!(t.gpus, Some(2));
        assert_eq!(t.gpu_models, vec!["v100".to_string(), "a100".to_string()]);
        assert_eq!(parse_tres("").unwrap(), Tres::default());
        assert_eq!(parse_tres("cpu=4,gres/gpumem=40G,gres/shard=2").unwrap().gpus, None);
        assert!(parse_tres("cpu").is_err());
        assert!(parse_tres("gres/gpu=x").is_err());
        assert_eq!(parse_mem_mib("1K"), Some(1));
        assert_eq!(parse_mem_mib("16G"), Some(16_384));
        assert_eq!(parse_mem_mib("2T"), Some(2 << 20));
        assert_eq!(parse_mem_mib("500"), Some(500));
        assert_eq!(parse_mem_mib("1X"), None);
        assert_eq!(parse_mem_mib("G"), None);
        assert_eq!(parse_mem_mib("99999999999999999999P"), None);
    }
}
