//! `sacct.txt`: a run's jobs as Slurm's accounting shows them, in the layout of
//! `sacct --parsable2 --allocations --format=JobID,JobName,User,Account,Partition,QOS,
//! Submit,Eligible,Start,End,Elapsed,Timelimit,NCPUS,NNodes,NodeList,State,Reason,Priority,Restarts`,
//! so that simulated and real accounting can be set side by side with the tools read
//! them (`diff`, `cut -d'|'`, pandas, and schedlab's own sacct reader).
//!
//! # Layout
//!
//! A header line of the column names, then one line per job, `|`-separated with no `|`
//! at the end (`--parsable2`; `--parsable` would end each line with one), no quoting: a
//! `|`, carriage return or line feed inside a value (a trace id, say) becomes `_`. Jobs
//! come in the order of `jobs.csv` (input order, then the jobs controllers submitted).
//!
//! # Values, as sacct prints them
//!
//! * **Times** (`Submit`, `Eligible`, `Start`, `End`): `YYYY-MM-DDTHH:MM:SS` (sacct's
//!   default `SLURM_TIME_FORMAT`), whole seconds (the simulated time rounded down), at
//!   [`Accounting::epoch_secs`] plus the simulated time, written as UTC: the run's time
//!   zero when the trace says when it is (SWF `UnixStartTime`, a sacct dump's first
//!   day, the Philly and Helios importers' epochs), else 1970-01-01T00:00:00. `Unknown`
//!   where sacct prints it for a time not reached (its 0): the `Start` of a pending job,
//!   the `End` of a pending or running one. `Eligible` is `Submit` (no dependencies or
//!   begin times are modelled).
//! * **Durations**: `Elapsed` as sacct's `_elapsed_time`: `HH:MM:SS`, with `D-` in front
//!   from a day on (`1-02:03:04`); `End − Start` of a job that ran, the time from its
//!   start to the end of the run ([`Accounting::now`]) for a running one, `00:00:00`
//!   for a pending one. `Timelimit` as `mins2time_str`: Slurm keeps limits in whole
//!   minutes, so the job's requested time rounded up to a minute, in the same layout;
//!   without one, its partition's `DefaultTime`, else `MaxTime`; `UNLIMITED` when none.
//! * **State**: `COMPLETED`; `TIMEOUT` (killed at its limit); `FAILED`; `OUT_OF_MEMORY`;
//!   `CANCELLED` for a job that ran to its end but that the trace records as cancelled
//!   (the real job was cancelled after that run time; sacct's `by UID` is left out, the
//!   uid being unknown); `PREEMPTED` for a job a preemption ended for good
//!   (`PreemptMode=CANCEL`); `RUNNING`, `SUSPENDED` (`PreemptMode=SUSPEND,GANG`) and
//!   `PENDING` for jobs the run left unfinished.
//!   A job preempted and requeued shows its last start and counts a restart.
//!   Jobs the engine refused at submission are **not written**: Slurm refuses such a job
//!   at `sbatch` (`Requested node configuration is not available`) and it never reaches
//!   the accounting. Jobs not yet submitted when a `--horizon` stopped the run are not
//!   written either, as a dump taken then would not hold them.
//! * **Reason**: `None` for a job that started (sacct's reason after the job left the
//!   queue); for a pending job, the Slurm reason code the policy gave
//!   (the `slurm` policy says `Resources` or `PartitionConfig`), else `Resources`.
//! * **User**, **Account**: `u<user>` and `g<group>` of the trace's numbers, the names
//!   the `slurm` policy gives its associations (the readers keep numbers, not names).
//!   **QOS**: the name of the job's queue ([`Accounting::qos_names`]): with a
//!   `slurm.conf`, the QOS the `slurm` policy files it under (the `--qos` file's at its
//!   index, else `normal`); else the trace's own name for it; else `normal` when the trace
//!   gives no queue, `q<queue>` when it gives a number.
//!   **Partition**: the name of the job's partition in the run's `slurm.conf` (its
//!   index, else the `Default=YES` one, as the `slurm` policy places it); `batch`, the
//!   partition the `slurm` policy makes of a cluster, without one.
//! * **NCPUS**: the CPUs of its tasks (milli-CPU rounded up to whole CPUs per task), or
//!   every CPU of its nodes in a partition that allocates whole nodes
//!   (`select/linear`, `OverSubscribe=EXCLUSIVE`). **NNodes**: the nodes it held; for a
//!   pending job the nodes it asks for (its tasks when each needs a node of its own, as
//!   tasks of several cores or with GPUs do under the `slurm` policy; else 1).
//!   **NodeList**: the nodes it held in Slurm's host-list notation ([`hostlist`]:
//!   `thin[0001-0003,0007]`), `None assigned` for a pending job; empty when the run did
//!   not tell where it ran.
//! * **Priority**: the priority the policy last computed for the job (the `slurm`
//!   policy's multifactor priority, [`Accounting::priorities`]), else the job's priority
//!   as the trace gives it (0 when it gives none).
//!   The `slurm` policy's own multifactor priority is not exposed by the policy
//!   interface, so it is not this column's; when it is, it belongs here.
//! * **Restarts**: how many times the job was started again after its first start
//!   (requeues and in-place restarts: its attempts less the one it is on, all of them for
//!   a pending job requeued).

use sim_core::{Job, JobRecord, Outcome, SimDuration, SimTime, TraceStatus};
use std::io::{self, Write};

/// The columns, in order.
pub const COLUMNS: [&str; 19] = [
    "JobID",
    "JobName",
    "User",
    "Account",
    "Partition",
    "QOS",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "Elapsed",
    "Timelimit",
    "NCPUS",
    "NNodes",
    "NodeList",
    "State",
    "Reason",
    "Priority",
    "Restarts",
];

/// The header line (without its line feed).
pub const HEADER: &str = "JobID|JobName|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|Timelimit|NCPUS|NNodes|NodeList|State|Reason|Priority|Restarts";

/// One partition, as far as the accounting shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Its name.
    pub name: String,
    /// The limit of a job that asks for none: `DefaultTime`, else `MaxTime`; `None`:
    /// `UNLIMITED`.
    pub default_limit: Option<SimDuration>,
    /// Whether it allocates whole nodes (`select/linear`, `OverSubscribe=EXCLUSIVE`).
    pub whole_nodes: bool,
}

impl Partition {
    /// The partition the `slurm` policy makes of a cluster without a `slurm.conf`.
    pub fn batch() -> Self {
        Partition { name: "batch".into(), default_limit: None, whole_nodes: false }
    }
}

/// What the accounting needs besides the jobs and their records.
#[derive(Clone, Debug)]
pub struct Accounting {
    /// Simulated time zero as seconds since 1970-01-01T00:00:00 (UTC arithmetic).
    pub epoch_secs: i64,
    /// When the run stopped (the `Elapsed` of a job still running).
    pub now: SimTime,
    /// The partitions; a job's `partition` indexes them, and one out of range goes to
    /// `default_partition`. Never empty.
    pub partitions: Vec<Partition>,
    /// The partition of a job whose own index is out of range.
    pub default_partition: usize,
    /// Node names by node id.
    pub node_names: Vec<String>,
    /// CPUs of each node, by node id.
    pub node_cpus: Vec<u32>,
    /// QOS names by queue id (a job's `queue`); an empty name or none: not known.
    pub qos_names: Vec<String>,
    /// The QOS (index in `qos_names`) of a job whose queue has no name there; `None`:
    /// `normal` for a job without a queue, `q<queue>` otherwise.
    pub default_qos: Option<usize>,
    /// Per job (the order of the jobs), the priority the policy last computed for it,
    /// if it computes one; empty when none does.
    pub priorities: Vec<Option<u64>>,
    /// Per job (the order of the jobs), the ids of the nodes its last attempt held,
    /// ascending, each once; `None` when the run did not say.
    pub nodes: Vec<Option<NodeRuns>>,
}

impl Accounting {
    fn partition(&self, job: &Job) -> &Partition {
        let i = usize::try_from(job.partition)
            .ok()
            .filter(|&i| i < self.partitions.len())
            .unwrap_or(self.default_partition.min(self.partitions.len().saturating_sub(1)));
        &self.partitions[i]
    }
}

/// How a job shows in the accounting, or `None` when it is not there (refused at
/// submission, not yet submitted when the run stopped).
fn state(job: &Job, rec: &JobRecord) -> Option<&'static str> {
    Some(match rec.outcome {
        Outcome::Completed if job.trace_status == TraceStatus::Cancelled => "CANCELLED",
        Outcome::Completed => "COMPLETED",
        Outcome::Killed => "TIMEOUT",
        Outcome::Failed => "FAILED",
        Outcome::OomKilled => "OUT_OF_MEMORY",
        Outcome::Rejected(_) => return None,
        Outcome::Unfinished if rec.unfinished_reason.as_deref() == Some(NOT_SUBMITTED) => return None,
        Outcome::Unfinished if rec.unfinished_reason.as_deref().is_some_and(|r| r.starts_with("suspended")) => {
            "SUSPENDED"
        }
        Outcome::Unfinished if rec.start.is_some() && rec.end.is_none() => "RUNNING",
        Outcome::Unfinished => "PENDING",
        Outcome::Preempted => "PREEMPTED",
    })
}

/// The engine's reason for a job the horizon stopped before its submission.
const NOT_SUBMITTED: &str = "not submitted by the horizon";

/// The Slurm reason code of a pending job from the policy's explanation: its first word
/// when that is one (`PartitionConfig: needs more …` → `PartitionConfig`), else
/// `Resources`.
pub fn reason_code(why: Option<&str>) -> &str {
    let Some(mut why) = why else { return "Resources" };
    for prefix in ["waiting at the horizon: ", "stalled: "] {
        why = why.strip_prefix(prefix).unwrap_or(why);
    }
    let word = why.split(':').next().unwrap_or("");
    let code = !word.is_empty()
        && word.starts_with(|c: char| c.is_ascii_uppercase())
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if code { word } else { "Resources" }
}

/// A job's nodes, ascending, kept as runs of consecutive ids (the nodes of a packed job
/// are mostly consecutive: a few runs instead of hundreds of ids per job of a long log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRuns(Box<[(u32, u32)]>);

impl NodeRuns {
    /// From ascending, distinct ids.
    pub fn from_sorted(ids: &[u32]) -> Self {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for &id in ids {
            match runs.last_mut() {
                Some((first, n)) if first.checked_add(*n) == Some(id) => *n += 1,
                _ => runs.push((id, 1)),
            }
        }
        NodeRuns(runs.into_boxed_slice())
    }

    /// The ids, ascending.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().flat_map(|&(first, n)| (0..n).map(move |k| first + k))
    }
}

/// Writes `sacct.txt` (see the module documentation).
pub fn write_sacct(
    out: &mut (impl Write + ?Sized),
    jobs: &[Job],
    records: &[JobRecord],
    acc: &Accounting,
) -> io::Result<()> {
    writeln!(out, "{HEADER}")?;
    let mut line = String::with_capacity(256);
    let mut ids: Vec<u32> = Vec::new();
    for (i, (job, rec)) in jobs.iter().zip(records).enumerate() {
        let Some(state) = state(job, rec) else { continue };
        let pending = state == "PENDING";
        let part = acc.partition(job);
        let nodes = match acc.nodes.get(i) {
            Some(Some(runs)) if !pending => {
                ids.clear();
                ids.extend(runs.ids());
                Some(ids.as_slice())
            }
            _ => None,
        };
        line.clear();
        push_value(&mut line, &job.trace_id);
        line.push('|');
        push_value(&mut line, &job.trace_id);
        line.push('|');
        line.push('u');
        line.push_str(itoa::Buffer::new().format(job.user));
        line.push_str("|g");
        line.push_str(itoa::Buffer::new().format(job.group));
        line.push('|');
        push_value(&mut line, &part.name);
        line.push('|');
        let named = |q: usize| acc.qos_names.get(q).filter(|n| !n.is_empty());
        let qos = usize::try_from(job.queue).ok().and_then(named).or_else(|| acc.default_qos.and_then(named));
        match qos {
            Some(name) => push_value(&mut line, name),
            None if job.queue < 0 => line.push_str("normal"),
            None => {
                line.push('q');
                line.push_str(itoa::Buffer::new().format(job.queue));
            }
        }
        line.push('|');
        let submit = secs(job.submit);
        push_time(&mut line, acc.epoch_secs, Some(submit));
        line.push('|');
        push_time(&mut line, acc.epoch_secs, Some(submit));
        line.push('|');
        let start = if pending { None } else { rec.start.map(secs) };
        let end = if pending { None } else { rec.end.map(secs) };
        push_time(&mut line, acc.epoch_secs, start);
        line.push('|');
        push_time(&mut line, acc.epoch_secs, end);
        line.push('|');
        let elapsed = match (start, end) {
            (Some(s), Some(e)) => e.saturating_sub(s),
            (Some(s), None) => secs(acc.now).saturating_sub(s),
            _ => 0,
        };
        push_duration(&mut line, elapsed);
        line.push('|');
        match job.requested.or(part.default_limit) {
            Some(limit) => push_duration(&mut line, limit.0.div_ceil(60 * sim_core::time::MICROS_PER_SEC) * 60),
            None => line.push_str("UNLIMITED"),
        }
        line.push('|');
        let cpus_per_task = if job.task.cpu_milli > 0 {
            u64::from(job.task.cpu_milli.div_ceil(1000))
        } else {
            u64::from(job.task.cores)
        };
        let ncpus = match nodes {
            Some(n) if part.whole_nodes && !n.is_empty() => {
                n.iter().map(|&id| u64::from(acc.node_cpus.get(id as usize).copied().unwrap_or(0))).sum()
            }
            _ => u64::from(job.tasks) * cpus_per_task,
        };
        line.push_str(itoa::Buffer::new().format(ncpus));
        line.push('|');
        let nnodes = match nodes {
            Some(n) if !n.is_empty() => n.len() as u64,
            _ if job.task.cores > 1 || job.task.gpus > 0 => u64::from(job.tasks),
            _ => 1,
        };
        line.push_str(itoa::Buffer::new().format(nnodes));
        line.push('|');
        if pending {
            line.push_str("None assigned");
        } else if let Some(n) = nodes {
            let names = n.iter().map(|&id| acc.node_names.get(id as usize).map_or("?", String::as_str));
            push_value(&mut line, &hostlist(names));
        }
        line.push('|');
        line.push_str(state);
        line.push('|');
        line.push_str(if pending { reason_code(rec.unfinished_reason.as_deref()) } else { "None" });
        line.push('|');
        match acc.priorities.get(i).copied().flatten() {
            Some(p) => line.push_str(itoa::Buffer::new().format(p)),
            None => line.push_str(itoa::Buffer::new().format(job.priority)),
        }
        line.push('|');
        let restarts = if pending { rec.attempts } else { rec.attempts.saturating_sub(1) };
        line.push_str(itoa::Buffer::new().format(restarts));
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// Whole seconds of a simulated time (rounded down).
fn secs(t: SimTime) -> u64 {
    t.0 / sim_core::time::MICROS_PER_SEC
}

/// Appends a value with the separator and line breaks replaced by `_`.
fn push_value(line: &mut String, v: &str) {
    if v.contains(['|', '\n', '\r']) {
        line.extend(v.chars().map(|c| if matches!(c, '|' | '\n' | '\r') { '_' } else { c }));
    } else {
        line.push_str(v);
    }
}

/// Appends `epoch + secs` as `YYYY-MM-DDTHH:MM:SS`, or `Unknown` for `None`.
fn push_time(line: &mut String, epoch: i64, secs: Option<u64>) {
    match secs {
        Some(s) => line.push_str(&time_string(epoch.saturating_add(i64::try_from(s).unwrap_or(i64::MAX)))),
        None => line.push_str("Unknown"),
    }
}

/// Seconds since 1970-01-01T00:00:00 as `YYYY-MM-DDTHH:MM:SS` (proleptic Gregorian).
pub fn time_string(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", rem / 3600, rem / 60 % 60, rem % 60)
}

/// The civil date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Appends whole seconds as Slurm writes a duration: `HH:MM:SS`, `D-HH:MM:SS` from a day.
fn push_duration(line: &mut String, secs: u64) {
    line.push_str(&duration_string(secs));
}

/// Whole seconds as Slurm writes a duration: `HH:MM:SS`, `D-HH:MM:SS` from a day on.
pub fn duration_string(secs: u64) -> String {
    let (days, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if days > 0 { format!("{days}-{h:02}:{m:02}:{s:02}") } else { format!("{h:02}:{m:02}:{s:02}") }
}

/// Node names in Slurm's host-list notation, in the order given: consecutive names that
/// share a prefix and end in numbers are bracketed, runs of consecutive numbers become
/// ranges (`thin0001 thin0002 thin0003 thin0007 gpu1` → `thin[0001-0003,0007],gpu1`). A
/// number continues a range when it is one more than its end and both are written with
/// the same digits count, or neither has a leading zero (`n[9-10]`, `n[0009-0010]`). A
/// single name keeps no brackets; names that do not end in a digit stay as they are.
/// `policies::slurm::conf::expand_hostlist` reads it back.
pub fn hostlist<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    // Groups of (prefix, ranges of (first, last) number texts and the last's value).
    type Range<'a> = (&'a str, &'a str, u64);
    let mut groups: Vec<(&str, Vec<Range>)> = Vec::new();
    // At most 18 digits: the value fits.
    let value = |s: &str| s.bytes().fold(0u64, |v, d| v * 10 + u64::from(d - b'0'));
    for name in names {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || digits > 18 {
            groups.push((name, Vec::new()));
            continue;
        }
        let (prefix, num) = name.split_at(name.len() - digits);
        match groups.last_mut() {
            Some((p, ranges)) if *p == prefix && !ranges.is_empty() => {
                let last = ranges.last_mut().expect("not empty");
                let v = value(num);
                if follows((last.1, last.2), (num, v)) {
                    (last.1, last.2) = (num, v);
                } else {
                    ranges.push((num, num, v));
                }
            }
            _ => groups.push((prefix, vec![(num, num, value(num))])),
        }
    }
    let mut out = String::new();
    for (i, (prefix, ranges)) in groups.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(prefix);
        if let [(a, b, _)] = ranges.as_slice()
            && a == b
        {
            out.push_str(a);
            continue;
        }
        if ranges.is_empty() {
            continue;
        }
        out.push('[');
        for (k, (a, b, _)) in ranges.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            out.push_str(a);
            if a != b {
                out.push('-');
                out.push_str(b);
            }
        }
        out.push(']');
    }
    out
}

/// Whether number text `next` continues a range ending at `last` (each with its value).
fn follows((last, a): (&str, u64), (next, b): (&str, u64)) -> bool {
    let padded = |s: &str| s.len() > 1 && s.starts_with('0');
    let same_width = last.len() == next.len() || (!padded(last) && !padded(next));
    same_width && a + 1 == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::RejectReason;

    fn rec(start: Option<u64>, end: Option<u64>, outcome: Outcome) -> JobRecord {
        JobRecord::of(start.map(SimTime::from_secs), end.map(SimTime::from_secs), outcome)
    }

    fn acc(nodes: Vec<Option<Vec<u32>>>) -> Accounting {
        Accounting {
            epoch_secs: 1_796_022_000, // 2026-11-30T07:00:00
            now: SimTime::from_secs(100_000),
            partitions: vec![Partition::batch()],
            default_partition: 0,
            node_names: (0..4).map(|i| format!("thin{i:04}")).collect(),
            node_cpus: vec![16; 4],
            qos_names: vec![String::new(), String::new(), "high".into()],
            default_qos: None,
            nodes: nodes.into_iter().map(|n| n.map(|v| NodeRuns::from_sorted(&v))).collect(),
            priorities: Vec::new(),
        }
    }

    #[test]
    fn durations_and_times_as_slurm_prints_them() {
        assert_eq!(duration_string(0), "00:00:00");
        assert_eq!(duration_string(28), "00:00:28");
        assert_eq!(duration_string(3_600 * 23 + 59 * 60 + 59), "23:59:59");
        assert_eq!(duration_string(86_400 + 2 * 3600 + 3 * 60 + 4), "1-02:03:04");
        assert_eq!(duration_string(12 * 86_400), "12-00:00:00");
        assert_eq!(time_string(0), "1970-01-01T00:00:00");
        // The real run's first submission (data/slurm/real-1node/sacct.txt).
        assert_eq!(time_string(1_796_022_366), "2026-11-30T07:06:06");
        // SWF KTH-SP2's UnixStartTime.
        assert_eq!(time_string(843_480_031), "1996-09-23T12:00:31");
        assert_eq!(time_string(951_782_400), "2000-02-29T00:00:00");
        assert_eq!(time_string(-1), "1969-12-31T23:59:59");
    }

    #[test]
    fn host_lists_compress_as_slurm_writes_them() {
        assert_eq!(hostlist(["thin0001", "thin0002", "thin0003", "thin0007"]), "thin[0001-0003,0007]");
        assert_eq!(hostlist(["n0"]), "n0");
        assert_eq!(hostlist(["n0", "n1"]), "n[0-1]");
        assert_eq!(hostlist(["n8", "n9", "n10", "n12"]), "n[8-10,12]");
        assert_eq!(hostlist(["n09", "n10"]), "n[09-10]");
        assert_eq!(hostlist(["n9", "n010"]), "n[9,010]");
        assert_eq!(hostlist(["localhost"]), "localhost");
        assert_eq!(hostlist(["a1", "a2", "gpu7", "b", "a3"]), "a[1-2],gpu7,b,a3");
        assert_eq!(hostlist(std::iter::empty::<&str>()), "");
    }

    #[test]
    fn reason_codes() {
        assert_eq!(reason_code(Some("Resources")), "Resources");
        assert_eq!(reason_code(Some("waiting at the horizon: PartitionConfig: needs more")), "PartitionConfig");
        assert_eq!(reason_code(Some("never started: 5 units asked, 4 up")), "Resources");
        assert_eq!(reason_code(Some("0/8 nodes are available: 8 Insufficient cpu")), "Resources");
        assert_eq!(reason_code(None), "Resources");
    }

    #[test]
    fn every_state_and_the_jobs_left_out() {
        let mut jobs: Vec<Job> = (1..=8)
            .map(|i| {
                Job::rigid(
                    i.to_string(),
                    SimTime::from_secs(i),
                    4,
                    SimDuration::from_secs(60),
                    SimDuration::from_secs(90),
                )
            })
            .collect();
        jobs[1].trace_status = TraceStatus::Cancelled;
        jobs[2].requested = None;
        jobs[3].task.cores = 8;
        jobs[3].tasks = 2;
        jobs[3].user = 7;
        jobs[3].group = 3;
        jobs[3].queue = 2;
        jobs[3].priority = 42;
        let mut pending = rec(None, None, Outcome::Unfinished);
        pending.unfinished_reason = Some("waiting at the horizon: Resources".into());
        let mut requeued = rec(None, None, Outcome::Unfinished);
        requeued.attempts = 1;
        let mut not_submitted = rec(None, None, Outcome::Unfinished);
        not_submitted.unfinished_reason = Some(NOT_SUBMITTED.into());
        let mut killed = rec(Some(10), Some(100), Outcome::Killed);
        killed.attempts = 3;
        let records = vec![
            rec(Some(1), Some(61), Outcome::Completed),
            rec(Some(2), Some(62), Outcome::Completed),
            killed,
            rec(Some(95_000), None, Outcome::Unfinished),
            pending,
            rec(None, None, Outcome::Rejected(RejectReason::LargerThanMachine)),
            not_submitted,
            requeued,
        ];
        let nodes = vec![Some(vec![0]), Some(vec![1]), Some(vec![0, 1, 2]), Some(vec![2, 3]), None, None, None, None];
        let mut out = Vec::new();
        write_sacct(&mut out, &jobs, &records, &acc(nodes)).unwrap();
        let text = String::from_utf8(out).unwrap();
        let want = [
            HEADER,
            "1|1|u0|g0|batch|normal|2026-11-30T07:00:01|2026-11-30T07:00:01|2026-11-30T07:00:01|2026-11-30T07:01:01|00:01:00|00:02:00|4|1|thin0000|COMPLETED|None|0|0",
            "2|2|u0|g0|batch|normal|2026-11-30T07:00:02|2026-11-30T07:00:02|2026-11-30T07:00:02|2026-11-30T07:01:02|00:01:00|00:02:00|4|1|thin0001|CANCELLED|None|0|0",
            "3|3|u0|g0|batch|normal|2026-11-30T07:00:03|2026-11-30T07:00:03|2026-11-30T07:00:10|2026-11-30T07:01:40|00:01:30|UNLIMITED|4|3|thin[0000-0002]|TIMEOUT|None|0|2",
            "4|4|u7|g3|batch|high|2026-11-30T07:00:04|2026-11-30T07:00:04|2026-12-01T09:23:20|Unknown|01:23:20|00:02:00|16|2|thin[0002-0003]|RUNNING|None|42|0",
            "5|5|u0|g0|batch|normal|2026-11-30T07:00:05|2026-11-30T07:00:05|Unknown|Unknown|00:00:00|00:02:00|4|1|None assigned|PENDING|Resources|0|0",
            "8|8|u0|g0|batch|normal|2026-11-30T07:00:08|2026-11-30T07:00:08|Unknown|Unknown|00:00:00|00:02:00|4|1|None assigned|PENDING|Resources|0|1",
        ];
        assert_eq!(text.lines().collect::<Vec<_>>(), want);
        assert!(text.lines().all(|l| l.split('|').count() == COLUMNS.len() && !l.ends_with('|')));
        assert_eq!(COLUMNS.join("|"), HEADER);
    }

    #[test]
    fn node_runs_keep_the_ids() {
        let ids = [0, 1, 2, 5, 7, 8, u32::MAX];
        let runs = NodeRuns::from_sorted(&ids);
        assert_eq!(runs.0.len(), 4);
        assert_eq!(runs.ids().collect::<Vec<_>>(), ids);
        assert_eq!(NodeRuns::from_sorted(&[]).ids().count(), 0);
    }

    #[test]
    fn preempted_jobs() {
        let job = Job::rigid("9", SimTime::ZERO, 1, SimDuration::from_secs(60), SimDuration::from_secs(60));
        let mut out = Vec::new();
        write_sacct(&mut out, &[job], &[rec(Some(5), Some(35), Outcome::Preempted)], &acc(vec![Some(vec![2])]))
            .unwrap();
        let line = String::from_utf8(out).unwrap().lines().nth(1).unwrap().to_string();
        assert!(line.ends_with("|00:00:30|00:01:00|1|1|thin0002|PREEMPTED|None|0|0"), "{line}");
        // Suspended when the run stopped: SUSPENDED, as squeue and sacct show it.
        let job = Job::rigid("9", SimTime::ZERO, 1, SimDuration::from_secs(60), SimDuration::from_secs(60));
        let mut r = rec(Some(5), None, Outcome::Unfinished);
        r.unfinished_reason = Some("suspended at the horizon (preempted, PreemptMode=SUSPEND)".into());
        let mut out = Vec::new();
        write_sacct(&mut out, &[job], &[r], &acc(vec![Some(vec![2])])).unwrap();
        let line = String::from_utf8(out).unwrap().lines().nth(1).unwrap().to_string();
        assert!(line.contains("|thin0002|SUSPENDED|None|"), "{line}");
    }

    #[test]
    fn whole_node_partitions_count_every_cpu_and_separators_are_replaced() {
        let mut job = Job::rigid("a|b", SimTime::ZERO, 2, SimDuration::from_secs(60), SimDuration::from_secs(61));
        job.partition = 1;
        let mut a = acc(vec![Some(vec![1, 3])]);
        a.partitions.push(Partition {
            name: "big".into(),
            default_limit: Some(SimDuration::from_secs(3600)),
            whole_nodes: true,
        });
        let mut out = Vec::new();
        write_sacct(&mut out, &[job], &[rec(Some(0), Some(60), Outcome::Completed)], &a).unwrap();
        let line = String::from_utf8(out).unwrap().lines().nth(1).unwrap().to_string();
        assert_eq!(
            line,
            "a_b|a_b|u0|g0|big|normal|2026-11-30T07:00:00|2026-11-30T07:00:00|2026-11-30T07:00:00|2026-11-30T07:01:00|00:01:00|00:02:00|32|2|thin[0001,0003]|COMPLETED|None|0|0"
        );
    }
}
