//! The per-job frame: one row per job of a run with everything the report tables and
//! plots need, written as `frame.csv` in the run folder so `sim report` can rebuild every
//! table and plot from folders alone (made on any machine).
//!
//! Times are kept in integer microseconds and written as exact decimal seconds, so a frame
//! read back is the frame written.

use serde::{Deserialize, Serialize};
use sim_core::time::{parse_secs_micros, secs_string};
use sim_core::{Job, JobKind, JobRecord, Outcome};
use std::io::{Read, Write};

/// One job of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRow {
    /// The trace's id.
    pub id: String,
    /// Submission, µs.
    pub submit_us: u64,
    /// Start of the attempt that ended it, µs (`None`: never started).
    pub start_us: Option<u64>,
    /// End of that attempt, µs.
    pub end_us: Option<u64>,
    /// Requested time limit, µs.
    pub requested_us: Option<u64>,
    /// Units (cores or processors) the job holds: tasks × cores.
    pub units: u64,
    /// GPUs it asks for, in milli-GPU (tasks × GPUs × share).
    pub gpu_milli: u64,
    /// Milli-GPU its last attempt held (an exclusive pool gives whole GPUs); its request
    /// when it was not bound to nodes.
    pub gpu_milli_held: u64,
    /// User id.
    pub user: u32,
    /// Group / account id.
    pub group: u32,
    /// Queue (QOS).
    pub queue: i32,
    /// Partition.
    pub partition: i32,
    /// `batch`, `dl_train`, `inference` or `interactive`.
    pub kind: String,
    /// `completed`, `killed`, `failed`, `oom_killed`, `rejected` or `unfinished`.
    pub outcome: String,
    /// Times it was killed for running out of GPU memory.
    pub oom_kills: u32,
    /// First unit it held (Gantt charts), when the run tracked units.
    pub first_unit: Option<u64>,
    /// Its wait in the real system the trace came from, µs.
    pub observed_wait_us: Option<u64>,
}

impl JobRow {
    /// The row of `job` ended as `rec`.
    pub fn of(job: &Job, rec: &JobRecord) -> JobRow {
        let asked = job.tasks as u64 * job.task.gpus as u64 * job.task.gpu_milli() as u64;
        JobRow {
            id: job.trace_id.clone(),
            submit_us: job.submit.0,
            start_us: rec.start.map(|t| t.0),
            end_us: rec.end.map(|t| t.0),
            requested_us: job.requested.or(job.runtime).map(|d| d.0),
            units: job.units(),
            gpu_milli: asked,
            gpu_milli_held: if rec.gpu_milli_held > 0 { rec.gpu_milli_held } else { asked },
            user: job.user,
            group: job.group,
            queue: job.queue,
            partition: job.partition,
            kind: kind_name(job.kind).into(),
            outcome: rec.outcome.name().into(),
            oom_kills: rec.oom_kills,
            first_unit: rec.units.iter().next().map(|u| u as u64),
            observed_wait_us: job.observed_wait().map(|w| w.0),
        }
    }

    /// Wait in seconds, when it started.
    pub fn wait_s(&self) -> Option<f64> {
        self.start_us.map(|s| s.saturating_sub(self.submit_us) as f64 / 1e6)
    }

    /// Run time of its last attempt in seconds, when it ran.
    pub fn run_s(&self) -> Option<f64> {
        Some(self.end_us?.saturating_sub(self.start_us?) as f64 / 1e6)
    }

    /// Job completion time (end − submit) in seconds, when it ran.
    pub fn jct_s(&self) -> Option<f64> {
        Some(self.end_us?.saturating_sub(self.submit_us) as f64 / 1e6)
    }

    /// Bounded slowdown, `max(1, (wait + run) / max(run, 10 s))` (Feitelson's τ = 10 s,
    /// as `summary.json`), when it ran.
    pub fn bounded_slowdown(&self) -> Option<f64> {
        let (w, r) = (self.wait_s()?, self.run_s()?);
        Some(((w + r) / r.max(crate::summary::BSLD_TAU_SECS)).max(1.0))
    }

    /// Whether it ran (has a start and an end).
    pub fn ran(&self) -> bool {
        self.start_us.is_some() && self.end_us.is_some()
    }
}

/// The name of a job kind, as the native format writes it.
pub fn kind_name(k: JobKind) -> &'static str {
    match k {
        JobKind::Batch => "batch",
        JobKind::DlTrain => "dl_train",
        JobKind::Inference => "inference",
        JobKind::Interactive => "interactive",
    }
}

/// The frame of a run: its jobs in input order.
pub fn frame(jobs: &[Job], records: &[JobRecord]) -> Vec<JobRow> {
    jobs.iter().zip(records).map(|(j, r)| JobRow::of(j, r)).collect()
}

const HEADER: [&str; 18] = [
    "id",
    "submit",
    "start",
    "end",
    "requested",
    "units",
    "gpu_milli",
    "gpu_milli_held",
    "user",
    "group",
    "queue",
    "partition",
    "kind",
    "outcome",
    "oom_kills",
    "first_unit",
    "observed_wait",
    "wait",
];

/// Writes `rows` as `frame.csv` (times in seconds, exact; empty = unknown; the last
/// column, `wait`, is derived, for readers of the file).
pub fn write_csv(out: &mut dyn Write, rows: &[JobRow]) -> std::io::Result<()> {
    write_rows(out, rows.iter().cloned())
}

/// As [`write_csv`], one row at a time: `sim run` streams a run's rows
/// (`jobs.iter().zip(records).map(JobRow::of)`) without holding them all.
pub fn write_rows(out: &mut dyn Write, rows: impl Iterator<Item = JobRow>) -> std::io::Result<()> {
    let mut w = csv::WriterBuilder::new().from_writer(out);
    w.write_record(HEADER)?;
    let t = |v: Option<u64>| v.map(secs_string).unwrap_or_default();
    for r in rows {
        w.write_record([
            r.id.clone(),
            secs_string(r.submit_us),
            t(r.start_us),
            t(r.end_us),
            t(r.requested_us),
            r.units.to_string(),
            r.gpu_milli.to_string(),
            r.gpu_milli_held.to_string(),
            r.user.to_string(),
            r.group.to_string(),
            r.queue.to_string(),
            r.partition.to_string(),
            r.kind.clone(),
            r.outcome.clone(),
            r.oom_kills.to_string(),
            r.first_unit.map(|u| u.to_string()).unwrap_or_default(),
            t(r.observed_wait_us),
            t(r.start_us.map(|s| s.saturating_sub(r.submit_us))),
        ])?;
    }
    w.flush()
}

/// A `frame.csv` that cannot be read back.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {what}")]
pub struct FrameError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// What is wrong.
    pub what: String,
}

/// Reads a `frame.csv` written by [`write_csv`] (`file` names it in errors).
pub fn read_csv(input: impl Read, file: &str) -> Result<Vec<JobRow>, FrameError> {
    let mut rd = csv::ReaderBuilder::new().from_reader(input);
    let err = |line: u64, what: String| FrameError { file: file.into(), line, what };
    let header = rd.headers().map_err(|e| err(1, e.to_string()))?.clone();
    if header.iter().collect::<Vec<_>>() != HEADER {
        return Err(err(1, format!("expected the header {}", HEADER.join(","))));
    }
    let mut rows = Vec::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| err(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = rec.position().map_or(0, |p| p.line());
        let field = |i: usize| rec.get(i).unwrap_or("");
        let bad = |i: usize, expected: &str| {
            err(line, format!("column '{}': expected {expected}, found '{}'", HEADER[i], field(i)))
        };
        let time = |i: usize| -> Result<Option<u64>, FrameError> {
            match field(i) {
                "" => Ok(None),
                s => parse_secs_micros(s).map(Some).map_err(|_| bad(i, "seconds or empty")),
            }
        };
        fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
            s.parse().ok()
        }
        let outcome = field(13);
        if !Outcome::NAMES.contains(&outcome) {
            return Err(bad(13, &Outcome::NAMES.join(", ")));
        }
        rows.push(JobRow {
            id: field(0).to_string(),
            submit_us: time(1)?.ok_or_else(|| bad(1, "seconds"))?,
            start_us: time(2)?,
            end_us: time(3)?,
            requested_us: time(4)?,
            units: num(field(5)).ok_or_else(|| bad(5, "a whole number"))?,
            gpu_milli: num(field(6)).ok_or_else(|| bad(6, "a whole number"))?,
            gpu_milli_held: num(field(7)).ok_or_else(|| bad(7, "a whole number"))?,
            user: num(field(8)).ok_or_else(|| bad(8, "a whole number"))?,
            group: num(field(9)).ok_or_else(|| bad(9, "a whole number"))?,
            queue: num(field(10)).ok_or_else(|| bad(10, "an integer"))?,
            partition: num(field(11)).ok_or_else(|| bad(11, "an integer"))?,
            kind: field(12).to_string(),
            outcome: outcome.to_string(),
            oom_kills: num(field(14)).ok_or_else(|| bad(14, "a whole number"))?,
            first_unit: match field(15) {
                "" => None,
                s => Some(num(s).ok_or_else(|| bad(15, "a whole number or empty"))?),
            },
            observed_wait_us: time(16)?,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::units::UnitSet;
    use sim_core::{SimDuration, SimTime};

    #[test]
    fn rows_round_trip_through_csv() {
        let mut job = Job::rigid("7", SimTime(1_500_000), 4, SimDuration::from_secs(100), SimDuration::from_secs(200));
        job.task.gpus = 1;
        job.task.gpu_milli = 250;
        job.observed_start = Some(SimTime(2_000_000));
        let rec = JobRecord {
            start: Some(SimTime(11_500_000)),
            end: Some(SimTime(111_500_000)),
            outcome: Outcome::Completed,
            attempts: 1,
            units: UnitSet::default(),
            oom_kills: 0,
            wasted_gpu_milli_us: 0,
            gpu_milli_held: 0,
            gpu_energy_mj: 0,
            gang_held_gpu_milli_us: 0,
            gang_wait_us: None,
            stuck_holding: false,
        };
        let never = JobRecord { start: None, end: None, outcome: Outcome::Unfinished, ..rec.clone() };
        let rows = frame(&[job.clone(), job], &[rec, never]);
        assert_eq!((rows[0].gpu_milli, rows[0].gpu_milli_held, rows[0].units), (1000, 1000, 4));
        assert_eq!((rows[0].wait_s(), rows[0].run_s(), rows[0].jct_s()), (Some(10.0), Some(100.0), Some(110.0)));
        assert_eq!(rows[0].bounded_slowdown(), Some(1.1));
        assert_eq!(rows[0].observed_wait_us, Some(500_000));
        assert_eq!(rows[1].bounded_slowdown(), None);
        let mut out = Vec::new();
        write_csv(&mut out, &rows).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.lines().nth(1).unwrap().starts_with("7,1.5,11.5,111.5,200,4,1000,1000,"), "{text}");
        assert_eq!(read_csv(&out[..], "frame.csv").unwrap(), rows);
        let bad = text.replace("completed", "finished");
        let e = read_csv(bad.as_bytes(), "frame.csv").unwrap_err().to_string();
        assert!(e.starts_with("frame.csv:2: column 'outcome': expected completed"), "{e}");
    }
}
