//! The Standard Workload Format (SWF v2.2) of the Parallel Workloads Archive.
//!
//! 18 whitespace-separated fields per job line; `;` starts a header comment
//! (`; MaxProcs: 100`). `-1` means unknown. Conversion to schedlab jobs follows the
//! usual replay conventions (SWF v2.2, <https://www.cs.huji.ac.il/labs/parallel/workload/swf.html>):
//! processors = requested (field 8) if > 0, else allocated (field 5);
//! requested time = field 9 if > 0, else the run time; run time -1 is "missing" and such a
//! job is rejected by the engine, as is a job with no processors.

use crate::error::TraceError;
use crate::input::TraceInput;
use sim_core::time::parse_secs_micros;
use sim_core::{Job, JobKind, SimDuration, SimTime, TaskShape, TraceStatus};

/// SWF field names, 1-based index = position + 1.
pub const FIELD_NAMES: [&str; 18] = [
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable number",
    "queue number",
    "partition number",
    "preceding job number",
    "think time",
];

/// One SWF job line, with every field kept (so SWF → SWF keeps everything).
#[derive(Debug, Clone, PartialEq)]
pub struct SwfRecord {
    /// 1-based line number in the file.
    pub line: u64,
    /// Field 1.
    pub job_number: i64,
    /// Field 2, µs.
    pub submit: u64,
    /// Field 3, µs, `None` = -1.
    pub wait: Option<u64>,
    /// Field 4, µs, `None` = -1.
    pub run_time: Option<u64>,
    /// Field 5.
    pub allocated_procs: i64,
    /// Field 8.
    pub requested_procs: i64,
    /// Field 9, µs, `None` = -1.
    pub requested_time: Option<u64>,
    /// Field 10, KB per processor, `None` = -1.
    pub requested_memory_kb: Option<u64>,
    /// Field 11.
    pub status: i64,
    /// Field 12.
    pub user: i64,
    /// Field 13.
    pub group: i64,
    /// Field 15.
    pub queue: i64,
    /// Field 16.
    pub partition: i64,
}

impl SwfRecord {
    /// The job this line describes.
    pub fn to_job(&self) -> Job {
        let procs = if self.requested_procs > 0 { self.requested_procs } else { self.allocated_procs.max(0) };
        let runtime = self.run_time.map(SimDuration);
        let requested = match self.requested_time {
            Some(q) if q > 0 => Some(SimDuration(q)),
            _ => runtime,
        };
        Job {
            trace_id: itoa::Buffer::new().format(self.job_number).to_string(),
            submit: SimTime(self.submit),
            tasks: procs.min(u32::MAX as i64) as u32,
            task: TaskShape {
                cores: 1,
                memory_mib: self.requested_memory_kb.map_or(0, |kb| kb.div_ceil(1024)),
                ..TaskShape::default()
            },
            runtime,
            requested,
            user: self.user.clamp(0, u32::MAX as i64) as u32,
            group: self.group.clamp(0, u32::MAX as i64) as u32,
            queue: self.queue.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            partition: self.partition.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            priority: 0,
            kind: JobKind::Batch,
            trace_status: match self.status {
                0 => TraceStatus::Failed,
                5 => TraceStatus::Cancelled,
                _ => TraceStatus::Completed,
            },
            gpu_models: Vec::new(),
            constraints: None,
            min_tasks: 0,
            observed_start: self.wait.map(|w| SimTime(self.submit.saturating_add(w))),
            restart_policy: Default::default(),
            checkpoint: None,
            domain: 0,
        }
    }
}

/// Header values the simulator uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwfHeader {
    /// `MaxProcs`.
    pub max_procs: Option<u64>,
    /// `MaxNodes`.
    pub max_nodes: Option<u64>,
    /// `MaxRecords`.
    pub max_records: Option<u64>,
    /// Every header line, verbatim.
    pub lines: Vec<String>,
}

/// Streaming SWF reader: yields one [`SwfRecord`] per job line; header values are
/// collected in [`SwfReader::header`] as they are passed.
pub struct SwfReader {
    input: TraceInput,
    name: String,
    line: u64,
    buf: Vec<u8>,
    header: SwfHeader,
}

impl SwfReader {
    /// Reads from an opened input; `name` is the file name used in errors.
    pub fn new(input: TraceInput, name: &str) -> Self {
        SwfReader { input, name: name.to_string(), line: 0, buf: Vec::with_capacity(256), header: SwfHeader::default() }
    }

    /// The header seen so far (complete once the first job line has been read).
    pub fn header(&self) -> &SwfHeader {
        &self.header
    }

    /// Checksum of the raw bytes read so far.
    pub fn checksum(&self) -> String {
        self.input.checksum.hex()
    }

    /// The next job line, `Ok(None)` at the end.
    pub fn next_record(&mut self) -> Result<Option<SwfRecord>, TraceError> {
        loop {
            if !crate::input::next_line(&mut self.input, &mut self.buf, &self.name, &mut self.line)? {
                return Ok(None);
            }
            let text = std::str::from_utf8(&self.buf).map_err(|_| {
                TraceError::malformed(&self.name, Some(self.line), None, "line is not valid UTF-8 text")
            })?;
            // ASCII whitespace only, as fields are split on it.
            let t = text.trim_ascii();
            if t.is_empty() {
                continue;
            }
            if let Some(h) = t.strip_prefix(';') {
                let h = h.trim().to_string();
                parse_header(&mut self.header, &h);
                self.header.lines.push(h);
                continue;
            }
            return parse_line(&self.name, self.line, t).map(Some);
        }
    }
}

fn parse_header(h: &mut SwfHeader, line: &str) {
    let Some((key, value)) = line.split_once(':') else {
        return;
    };
    let number = || {
        let v = value.trim_start();
        let digits: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse::<u64>().ok()
    };
    // The first occurrence of a key wins.
    match key.trim() {
        "MaxProcs" if h.max_procs.is_none() => h.max_procs = number(),
        "MaxNodes" if h.max_nodes.is_none() => h.max_nodes = number(),
        "MaxRecords" if h.max_records.is_none() => h.max_records = number(),
        _ => {}
    }
}

fn field_label(i: usize) -> String {
    format!("field {} ({})", i + 1, FIELD_NAMES[i])
}

/// Parses one job line (already trimmed, not a comment).
pub fn parse_line(file: &str, line: u64, text: &str) -> Result<SwfRecord, TraceError> {
    let mut f: [&str; 18] = [""; 18];
    let mut n = 0usize;
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            break;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        if n < 18 {
            // Token boundaries are ASCII whitespace, so this slice is valid UTF-8.
            f[n] = &text[start..i];
        }
        n += 1;
    }
    if n != 18 {
        return Err(TraceError::malformed(
            file,
            Some(line),
            None,
            format!("expected 18 whitespace-separated fields, found {n}"),
        ));
    }
    // Every field must be a number, even those the simulator does not use; integers (the
    // common case) are parsed on the way.
    let mut ints: [Option<i64>; 18] = [None; 18];
    for (i, tok) in f.iter().enumerate() {
        ints[i] = fast_int(tok);
        if ints[i].is_none() && !is_number(tok) {
            return Err(TraceError::bad(file, line, field_label(i), "a number", tok));
        }
    }
    let int = |i: usize, min: i64| -> Result<i64, TraceError> {
        let v = ints[i].ok_or_else(|| TraceError::bad(file, line, field_label(i), "an integer", f[i]))?;
        if v < min {
            let exp = if min == -1 { "an integer >= 0, or -1 for unknown" } else { "an integer >= 0" };
            return Err(TraceError::bad(file, line, field_label(i), exp, f[i]));
        }
        Ok(v)
    };
    let time = |i: usize| -> Result<Option<u64>, TraceError> {
        match ints[i] {
            Some(-1) => return Ok(None),
            Some(v) if v >= 0 && v < (u64::MAX / 1_000_000) as i64 => return Ok(Some(v as u64 * 1_000_000)),
            _ => {}
        }
        if matches!(f[i], "-1.0" | "-1.00") {
            return Ok(None);
        }
        parse_secs_micros(f[i])
            .map(Some)
            .map_err(|_| TraceError::bad(file, line, field_label(i), "seconds >= 0, or -1 for unknown", f[i]))
    };
    let submit = time(1)?.ok_or_else(|| TraceError::bad(file, line, field_label(1), "seconds >= 0", f[1]))?;
    let lenient = |i: usize| -> i64 { ints[i].unwrap_or(-1) };
    Ok(SwfRecord {
        line,
        job_number: int(0, 0)?,
        submit,
        wait: time(2).unwrap_or(None),
        run_time: time(3)?,
        allocated_procs: int(4, -1)?,
        requested_procs: int(7, -1)?,
        requested_time: time(8)?,
        requested_memory_kb: ints[9].filter(|&v| v > 0).map(|v| v as u64),
        status: int(10, -1)?,
        user: lenient(11),
        group: lenient(12),
        queue: lenient(14),
        partition: lenient(15),
    })
}

/// An optionally negative decimal integer of at most 18 digits, or `None`.
fn fast_int(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as i64;
    }
    Some(if neg { -v } else { v })
}

fn is_number(s: &str) -> bool {
    let b = s.as_bytes();
    let body = match b.first() {
        Some(b'-') | Some(b'+') => &b[1..],
        _ => b,
    };
    if body.is_empty() {
        return false;
    }
    let mut dot = false;
    let mut digit = false;
    for (i, &c) in body.iter().enumerate() {
        match c {
            b'0'..=b'9' => digit = true,
            b'.' if !dot => dot = true,
            b'e' | b'E' if digit && i + 1 < body.len() => {
                let rest = &body[i + 1..];
                let rest = rest.strip_prefix(b"-").or_else(|| rest.strip_prefix(b"+")).unwrap_or(rest);
                return !rest.is_empty() && rest.iter().all(u8::is_ascii_digit);
            }
            _ => return false,
        }
    }
    digit
}

/// Writes an SWF header: version, the machine size (`MaxProcs`, so the file replays
/// without `--procs`), the job count when known, and `notes` as further comment lines.
pub fn write_header(
    out: &mut dyn std::io::Write,
    machine: Machine,
    max_jobs: Option<u64>,
    notes: &[String],
) -> std::io::Result<()> {
    writeln!(out, "; Version: 2.2")?;
    for n in notes {
        writeln!(out, "; Note: {n}")?;
    }
    if let Some(n) = max_jobs {
        writeln!(out, "; MaxJobs: {n}")?;
        writeln!(out, "; MaxRecords: {n}")?;
    }
    if let Some(n) = machine.nodes {
        writeln!(out, "; MaxNodes: {n}")?;
    }
    if let Some(p) = machine.procs {
        writeln!(out, "; MaxProcs: {p}")?;
    }
    Ok(())
}

/// The machine an SWF header states: `MaxProcs` (processors) and `MaxNodes`. A replay
/// sizes its machine from `MaxProcs` (else `MaxNodes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    /// `MaxProcs`.
    pub procs: Option<u64>,
    /// `MaxNodes`.
    pub nodes: Option<u64>,
}

/// Writes `jobs` as a whole SWF file: the header, then one line per job. The jobs keep
/// their trace ids as job numbers when every id is a distinct whole number below 10^18
/// (an SWF log read back); otherwise they are numbered 1, 2, … in order, as SWF's job
/// numbers are a counter (sacct's `123_4` or Kubernetes pod names are not numbers).
pub fn write_all(
    out: &mut dyn std::io::Write,
    jobs: &[Job],
    machine: Machine,
    notes: &[String],
) -> std::io::Result<()> {
    write_header(out, machine, Some(jobs.len() as u64), notes)?;
    let mut seen = std::collections::BTreeSet::new();
    let keep = jobs
        .iter()
        .all(|j| j.trace_id.len() <= 18 && j.trace_id.bytes().all(|b| b.is_ascii_digit()) && seen.insert(&j.trace_id));
    for (i, j) in jobs.iter().enumerate() {
        let number = if keep { j.trace_id.parse().unwrap_or(i as u64 + 1) } else { i as u64 + 1 };
        write_job(out, number, j)?;
    }
    Ok(())
}

/// Writes one SWF job line for `job` with job number `number`. What SWF can say survives
/// a read back: submit, wait (from the observed
/// start), run time, processors (tasks × cores, fields 5 and 8), requested time, requested
/// memory (field 10, KB per processor), status, user, group, queue and partition; the
/// fields schedlab does not keep are -1.
pub fn write_job(out: &mut dyn std::io::Write, number: u64, job: &Job) -> std::io::Result<()> {
    let secs = |us: u64| sim_core::time::secs_string(us);
    let opt = |d: Option<SimDuration>| d.map(|d| secs(d.0)).unwrap_or_else(|| "-1".into());
    let status = match job.trace_status {
        TraceStatus::Failed => 0,
        TraceStatus::Cancelled => 5,
        TraceStatus::Completed => 1,
    };
    let procs = job.units();
    let memory = match job.task.memory_mib {
        0 => "-1".to_string(),
        m => (u128::from(m) * 1024 / u128::from(job.task.cores.max(1))).min(i64::MAX as u128).to_string(),
    };
    writeln!(
        out,
        "{number} {} {} {} {procs} -1 -1 {procs} {} {memory} {status} {} {} -1 {} {} -1 -1",
        secs(job.submit.0),
        opt(job.observed_wait()),
        opt(job.runtime),
        opt(job.requested),
        job.user,
        job.group,
        job.queue,
        job.partition
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        for ok in ["0", "-1", "12.5", "1e3", "+4", "3."] {
            assert!(is_number(ok), "{ok}");
        }
        for bad in ["", "-", "abc", "1.2.3", "1e", "e5", "12a", "--1"] {
            assert!(!is_number(bad), "{bad}");
        }
    }

    #[test]
    fn line_to_job() {
        let r = parse_line("t.swf", 3, "15 599850 192180 3477 4 -1 -1 -1 53940 -1 0 12 12 -1 -1 -1 -1 -1").unwrap();
        let j = r.to_job();
        assert_eq!(j.tasks, 4); // field 8 missing: allocated
        assert_eq!(j.runtime, Some(SimDuration::from_secs(3477)));
        assert_eq!(j.requested, Some(SimDuration::from_secs(53940)));
        assert_eq!(j.trace_status, TraceStatus::Failed);
        let r = parse_line("t.swf", 3, "1 0 0 30 4 -1 -1 8 -1 -1 1 1 1 -1 -1 -1 -1 -1").unwrap();
        assert_eq!(r.to_job().tasks, 8);
        assert_eq!(r.to_job().requested, Some(SimDuration::from_secs(30)));
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = parse_line("t.swf", 7, "1 0 0 30 -4 -1 -1 8 -1 -1 1 1 1 -1 -1 -1 -1 -1").unwrap_err().to_string();
        assert_eq!(
            e,
            "t.swf:7: field 5 (allocated processors): expected an integer >= 0, or -1 for unknown, found '-4'"
        );
        let e = parse_line("t.swf", 2, "1 0 0 30 4 -1 -1 8 -1 -1 1 1 1 -1 -1 -1 -1").unwrap_err().to_string();
        assert_eq!(e, "t.swf:2: expected 18 whitespace-separated fields, found 17");
        let e = parse_line("t.swf", 9, "1 0 0 3x0 4 -1 -1 8 -1 -1 1 1 1 -1 -1 -1 -1 -1").unwrap_err().to_string();
        assert_eq!(e, "t.swf:9: field 4 (run time): expected a number, found '3x0'");
    }
}
