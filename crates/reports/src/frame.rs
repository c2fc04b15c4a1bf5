//! The per-job frame: one row per job of a run with everything the report tables and
//! plots need, written as `frame.csv` in the run folder so `sim report` can rebuild every
//! table and plot from folders alone (made on any machine).
//!
//! Times are kept in integer microseconds and written as exact decimal seconds, so a frame
//! read back is the frame written. The units a job held are written in Batsim's
//! interval-set text (`allocated`: `0-3 8 10-11`, empty when the run did not track units);
//! a frame written before that column existed (with `first_unit` in its place) still reads,
//! its units unknown.

use serde::{Deserialize, Serialize};
use sim_core::time::{parse_secs_micros, secs_string};
use sim_core::{Job, JobRecord, Outcome};
use std::io::{Read, Write};

/// One job of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The units its last attempt held (Gantt charts), as sorted, disjoint `(first, len)`
    /// ranges; empty when the run did not track unit identities (or it never started).
    #[serde(default)]
    pub allocated: Vec<(u64, u64)>,
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
            kind: job.kind.name().into(),
            outcome: rec.outcome.name().into(),
            oom_kills: rec.oom_kills,
            allocated: rec.units.ranges().iter().map(|&(a, n)| (a as u64, n as u64)).collect(),
            observed_wait_us: job.observed_wait().map(|w| w.0),
        }
    }

    /// The first unit it held, when known.
    pub fn first_unit(&self) -> Option<u64> {
        self.allocated.first().map(|r| r.0)
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
    "allocated",
    "observed_wait",
    "wait",
];

/// The header of frames written before the `allocated` column: `first_unit` in its place.
const OLD_FIRST_UNIT: &str = "first_unit";

/// Unit ranges in Batsim's interval-set text: `(first, len)` ranges as `first-last` (or
/// `first` alone for one unit), separated by spaces: `0-3 8 10-11`. Empty for none.
pub fn ranges_text(ranges: &[(u64, u64)]) -> String {
    let mut s = String::new();
    for &(a, n) in ranges.iter().filter(|r| r.1 > 0) {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(itoa::Buffer::new().format(a));
        if n > 1 {
            s.push('-');
            s.push_str(itoa::Buffer::new().format(a.saturating_add(n - 1)));
        }
    }
    s
}

/// Reads [`ranges_text`]'s text back: `(first, len)` ranges, increasing and disjoint
/// (`None` for anything else). Empty or blank text is no ranges.
pub fn parse_ranges(text: &str) -> Option<Vec<(u64, u64)>> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for part in text.split_whitespace() {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u64>().ok()?, b.parse::<u64>().ok()?),
            None => {
                let a = part.parse::<u64>().ok()?;
                (a, a)
            }
        };
        let after_last = out.last().map_or(Some(0), |&(f, n)| f.checked_add(n))?;
        if b < a || a < after_last {
            return None;
        }
        out.push((a, (b - a).checked_add(1)?));
    }
    Some(out)
}

/// Writes `rows` as `frame.csv` (times in seconds, exact; empty = unknown; the last
/// column, `wait`, is derived, for readers of the file).
pub fn write_csv(out: &mut dyn Write, rows: &[JobRow]) -> std::io::Result<()> {
    write_rows(out, rows.iter().cloned())
}

/// As [`write_csv`], one row at a time: `sim run` streams a run's rows
/// (`jobs.iter().zip(records).map(JobRow::of)`) without holding them all.
pub fn write_rows(out: &mut dyn Write, rows: impl Iterator<Item = JobRow>) -> std::io::Result<()> {
    let mut w = FrameWriter::new(out)?;
    for r in rows {
        w.row(&r)?;
    }
    w.finish()
}

/// Writes `frame.csv` a row at a time: the header first, then each [`FrameWriter::row`].
pub struct FrameWriter<W: Write> {
    w: csv::Writer<W>,
}

impl<W: Write> FrameWriter<W> {
    /// Writes the header to `out`.
    pub fn new(out: W) -> std::io::Result<Self> {
        let mut w = csv::WriterBuilder::new().from_writer(out);
        w.write_record(HEADER)?;
        Ok(FrameWriter { w })
    }

    /// Writes one row.
    pub fn row(&mut self, r: &JobRow) -> std::io::Result<()> {
        let t = |v: Option<u64>| v.map(secs_string).unwrap_or_default();
        self.w.write_record([
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
            ranges_text(&r.allocated),
            t(r.observed_wait_us),
            t(r.start_us.map(|s| s.saturating_sub(r.submit_us))),
        ])?;
        Ok(())
    }

    /// Flushes what is buffered.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// `frame.csv`'s rows as bytes, one at a time (a streamed replay writes them when their
/// turn comes): the same bytes [`FrameWriter`] writes.
pub struct FrameRows {
    w: FrameWriter<RowBuffer>,
    buf: std::rc::Rc<std::cell::RefCell<Vec<u8>>>,
}

/// Where [`FrameRows`]' writer puts its bytes.
struct RowBuffer(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl Write for RowBuffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl FrameRows {
    /// A writer and the header's bytes.
    pub fn new() -> std::io::Result<(Self, Vec<u8>)> {
        let buf = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut rows = FrameRows { w: FrameWriter::new(RowBuffer(buf.clone()))?, buf };
        let header = rows.take()?;
        Ok((rows, header))
    }

    /// Row `r`'s bytes.
    pub fn row(&mut self, r: &JobRow) -> std::io::Result<Vec<u8>> {
        self.w.row(r)?;
        self.take()
    }

    /// Writes row `r` to `out`.
    pub fn row_to(&mut self, r: &JobRow, out: &mut dyn Write) -> std::io::Result<()> {
        self.w.row(r)?;
        self.w.w.flush()?;
        let mut buf = self.buf.borrow_mut();
        out.write_all(&buf)?;
        buf.clear();
        Ok(())
    }

    fn take(&mut self) -> std::io::Result<Vec<u8>> {
        self.w.w.flush()?;
        Ok(std::mem::take(&mut *self.buf.borrow_mut()))
    }
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
    let names: Vec<&str> = header.iter().collect();
    // A frame from before the `allocated` column: the same but `first_unit`, ignored.
    let old = names.len() == HEADER.len() && names[15] == OLD_FIRST_UNIT;
    if names != HEADER && !(old && names.iter().zip(HEADER).enumerate().all(|(i, (n, h))| i == 15 || *n == h)) {
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
            allocated: match old {
                true => Vec::new(),
                false => parse_ranges(field(15)).ok_or_else(|| bad(15, "unit ranges like '0-3 8 10-11', or empty"))?,
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
            units: UnitSet::from_sorted([0, 1, 2, 3, 8, 10, 11]),
            ..JobRecord::of(Some(SimTime(11_500_000)), Some(SimTime(111_500_000)), Outcome::Completed)
        };
        let never = JobRecord {
            start: None,
            end: None,
            outcome: Outcome::Unfinished,
            units: UnitSet::default(),
            ..rec.clone()
        };
        let rows = frame(&[job.clone(), job], &[rec, never]);
        assert_eq!((rows[0].gpu_milli, rows[0].gpu_milli_held, rows[0].units), (1000, 1000, 4));
        assert_eq!((rows[0].wait_s(), rows[0].run_s(), rows[0].jct_s()), (Some(10.0), Some(100.0), Some(110.0)));
        assert_eq!(rows[0].bounded_slowdown(), Some(1.1));
        assert_eq!(rows[0].observed_wait_us, Some(500_000));
        assert_eq!(rows[1].bounded_slowdown(), None);
        assert_eq!(rows[0].allocated, vec![(0, 4), (8, 1), (10, 2)]);
        assert_eq!((rows[0].first_unit(), rows[1].first_unit()), (Some(0), None));
        let mut out = Vec::new();
        write_csv(&mut out, &rows).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.lines().nth(1).unwrap().starts_with("7,1.5,11.5,111.5,200,4,1000,1000,"), "{text}");
        assert!(text.lines().nth(1).unwrap().ends_with(",completed,0,0-3 8 10-11,0.5,10"), "{text}");
        assert!(text.lines().nth(2).unwrap().ends_with(",unfinished,0,,0.5,"), "{text}");
        assert_eq!(read_csv(&out[..], "frame.csv").unwrap(), rows);
        let bad = text.replace("completed", "finished");
        let e = read_csv(bad.as_bytes(), "frame.csv").unwrap_err().to_string();
        assert!(e.starts_with("frame.csv:2: column 'outcome': expected completed"), "{e}");
        let bad = text.replace("0-3 8 10-11", "0-3 2");
        let e = read_csv(bad.as_bytes(), "frame.csv").unwrap_err().to_string();
        assert!(e.starts_with("frame.csv:2: column 'allocated': expected unit ranges"), "{e}");
        // A frame written before the `allocated` column (`first_unit` in its place) reads,
        // its units unknown.
        let old = text.replacen("allocated", "first_unit", 1).replace("0-3 8 10-11", "0");
        let back = read_csv(old.as_bytes(), "frame.csv").unwrap();
        assert_eq!(back[0], JobRow { allocated: Vec::new(), ..rows[0].clone() });
        assert_eq!(back[1], rows[1]);
    }

    #[test]
    fn unit_ranges_text_round_trips() {
        for (ranges, text) in [
            (vec![], ""),
            (vec![(0, 4), (8, 1), (10, 2)], "0-3 8 10-11"),
            (vec![(5, 1)], "5"),
            (vec![(0, 1), (1, 1)], "0 1"),
            (vec![(u64::MAX, 1)], "18446744073709551615"),
        ] {
            assert_eq!(ranges_text(&ranges), text);
            assert_eq!(parse_ranges(text), Some(ranges));
        }
        assert_eq!(parse_ranges("  2-3   7 "), Some(vec![(2, 2), (7, 1)]));
        for bad in ["3-2", "0-3 3", "5 4", "a", "1,2", "-1", "1-", "0-18446744073709551615"] {
            assert_eq!(parse_ranges(bad), None, "{bad}");
        }
    }
}
