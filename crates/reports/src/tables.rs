//! The report's tables: per-group distributions of wait, bounded slowdown and job
//! completion time, outcome counts, and Jain's fairness index, from a run's frame
//! ([`JobRow`]s).
//!
//! Definitions follow the field's usual ones (sources in `docs/sources.md#metrics`) and
//! `summary.json` ([`crate::summary`]):
//!
//! * **wait** = `start − submit` (jobs that started);
//! * **JCT / turnaround** = `end − submit` (jobs that ran: a start and an end);
//! * **bounded slowdown** = `max(1, (wait + run) / max(run, τ))`, τ = 10 s (Feitelson et
//!   al.; [`crate::summary::BSLD_TAU_SECS`]), jobs that ran;
//! * percentiles are **nearest rank** (the value of rank `⌈q/100 · n⌉`), as
//!   `summary.json`'s `wait_p95`;
//! * **Jain's index** `J = (Σx)² / (n·Σx²)` (Jain, Chiu, Hawe 1984), see [`jain_fairness`].
//!
//! Everything is grouped in ordered maps and summed in a fixed order, so the tables (and
//! [`write_group_csv`]'s bytes) depend on nothing but the rows given.

use crate::frame::JobRow;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// The nearest-rank percentile `q` (in percent, 0–100) of `sorted` (ascending, NaN-free):
/// the value of rank `⌈q/100 · n⌉` (at least 1), as `summary.json`'s `wait_p95`
/// (`waits[⌈95·n/100⌉ − 1]`). `q` = 0 gives the least value, 100 the greatest; an empty
/// slice gives 0.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    // q·n is exact for whole q and any realistic n, so the division by 100 rounds to an
    // integer only when the rank is one: ⌈·⌉ then matches the integer `div_ceil`.
    let rank = (q.clamp(0.0, 100.0) * n as f64 / 100.0).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// Summary of a distribution: count, mean, nearest-rank p50 / p95 / p99 ([`percentile`])
/// and maximum. All zeros when empty.
///
/// The p50 is nearest rank, so for an even count it is the lower middle value (unlike
/// `summary.json`'s `wait_median`, the mean of the two middle values).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Dist {
    /// Values.
    pub n: u64,
    /// Arithmetic mean (summed in ascending order).
    pub mean: f64,
    /// Median, nearest rank.
    pub p50: f64,
    /// 95th percentile, nearest rank.
    pub p95: f64,
    /// 99th percentile, nearest rank.
    pub p99: f64,
    /// Greatest value.
    pub max: f64,
}

impl Dist {
    /// The distribution of `values` (NaN-free; their order does not matter).
    pub fn of(mut values: Vec<f64>) -> Dist {
        if values.is_empty() {
            return Dist::default();
        }
        values.sort_unstable_by(f64::total_cmp);
        let n = values.len();
        Dist {
            n: n as u64,
            mean: values.iter().sum::<f64>() / n as f64,
            p50: percentile(&values, 50.0),
            p95: percentile(&values, 95.0),
            p99: percentile(&values, 99.0),
            max: values[n - 1],
        }
    }
}

/// What a table groups jobs by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GroupBy {
    /// One group, key `all`.
    All,
    /// Queue (QOS) number.
    Queue,
    /// Partition number.
    Partition,
    /// User id.
    User,
    /// Job kind (`batch`, `dl_train`, `inference`, `interactive`).
    Kind,
    /// Size class ([`size_class`]).
    SizeClass,
}

impl GroupBy {
    /// Every grouping, in the order [`all_groups`] concatenates them.
    pub const ALL: [GroupBy; 6] =
        [GroupBy::All, GroupBy::Queue, GroupBy::Partition, GroupBy::User, GroupBy::Kind, GroupBy::SizeClass];

    /// Its name, as the `group_by` column writes it.
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::All => "all",
            GroupBy::Queue => "queue",
            GroupBy::Partition => "partition",
            GroupBy::User => "user",
            GroupBy::Kind => "kind",
            GroupBy::SizeClass => "size_class",
        }
    }

    /// The grouping named `name` ([`GroupBy::name`]).
    pub fn from_name(name: &str) -> Option<GroupBy> {
        GroupBy::ALL.into_iter().find(|g| g.name() == name)
    }

    /// The group of `row`: a sort key (natural order: numbers numerically, size classes
    /// by size, names alphabetically) and the key written.
    fn key(self, row: &JobRow) -> (i64, String) {
        match self {
            GroupBy::All => (0, "all".into()),
            GroupBy::Queue => (row.queue as i64, row.queue.to_string()),
            GroupBy::Partition => (row.partition as i64, row.partition.to_string()),
            GroupBy::User => (row.user as i64, row.user.to_string()),
            GroupBy::Kind => (0, row.kind.clone()),
            GroupBy::SizeClass => {
                let (rank, name) = size_class_ranked(row);
                (rank, name.into())
            }
        }
    }
}

/// Size classes in order, CPU classes (by units) before GPU classes (by GPUs asked).
pub const SIZE_CLASSES: [&str; 12] =
    ["1", "2-4", "5-16", "17-64", "65-256", "257-1024", ">1024", "gpu:<1", "gpu:1", "gpu:2-8", "gpu:9-64", "gpu:>64"];

/// The size class of a job.
///
/// * A job that asks for no GPU is classed by its units (cores or processors): `1`,
///   `2-4`, `5-16`, `17-64`, `65-256`, `257-1024`, `>1024` (a job of 0 units counts as
///   `1`).
/// * A job that asks for GPUs (`gpu_milli` > 0) is classed by the GPUs it asks for,
///   whatever its units: `gpu:<1` (a share of one GPU, under 1000 milli-GPU), `gpu:1`
///   (exactly one), `gpu:2-8`, `gpu:9-64`, `gpu:>64`; a fractional count above one is
///   rounded up (1.5 GPUs is `gpu:2-8`).
pub fn size_class(row: &JobRow) -> &'static str {
    size_class_ranked(row).1
}

fn size_class_ranked(row: &JobRow) -> (i64, &'static str) {
    let i = if row.gpu_milli > 0 {
        7 + match row.gpu_milli.div_ceil(1000) {
            _ if row.gpu_milli < 1000 => 0,
            1 => 1,
            2..=8 => 2,
            9..=64 => 3,
            _ => 4,
        }
    } else {
        match row.units {
            0..=1 => 0,
            2..=4 => 1,
            5..=16 => 2,
            17..=64 => 3,
            65..=256 => 4,
            257..=1024 => 5,
            _ => 6,
        }
    };
    (i as i64, SIZE_CLASSES[i])
}

/// One group's row of a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupRow {
    /// The grouping ([`GroupBy::name`]).
    pub group_by: &'static str,
    /// The group.
    pub key: String,
    /// Jobs in the group.
    pub jobs: u64,
    /// Jobs that started.
    pub started: u64,
    /// Jobs per outcome (they add up to `jobs`).
    pub completed: u64,
    /// Jobs `failed`.
    pub failed: u64,
    /// Jobs `killed`.
    pub killed: u64,
    /// Jobs `oom_killed`.
    pub oom_killed: u64,
    /// Jobs `rejected`.
    pub rejected: u64,
    /// Jobs `unfinished`.
    pub unfinished: u64,
    /// Out-of-memory kills (requeued attempts included).
    pub oom_kills: u64,
    /// Wait (`start − submit`) of the jobs that started, seconds.
    pub wait: Dist,
    /// Bounded slowdown (τ = 10 s) of the jobs that ran; its `n` counts them.
    pub bsld: Dist,
    /// Job completion time (`end − submit`) of the jobs that ran, seconds.
    pub jct: Dist,
}

#[derive(Default)]
struct Acc {
    counts: [u64; 9],
    waits: Vec<f64>,
    bslds: Vec<f64>,
    jcts: Vec<f64>,
}

/// The table of `rows` grouped `by`, one row per group in the group's natural order
/// (numbers numerically, size classes by size, names alphabetically).
pub fn group_table<'a>(rows: impl IntoIterator<Item = &'a JobRow>, by: GroupBy) -> Vec<GroupRow> {
    let mut groups: BTreeMap<(i64, String), Acc> = BTreeMap::new();
    for r in rows {
        let a = groups.entry(by.key(r)).or_default();
        a.counts[0] += 1;
        a.counts[1] += u64::from(r.start_us.is_some());
        let i = match r.outcome.as_str() {
            "completed" => Some(2),
            "failed" => Some(3),
            "killed" => Some(4),
            "oom_killed" => Some(5),
            "rejected" => Some(6),
            "unfinished" => Some(7),
            _ => None,
        };
        if let Some(i) = i {
            a.counts[i] += 1;
        }
        a.counts[8] += r.oom_kills as u64;
        if let Some(w) = r.wait_s() {
            a.waits.push(w);
        }
        if let (Some(b), Some(j)) = (r.bounded_slowdown(), r.jct_s()) {
            a.bslds.push(b);
            a.jcts.push(j);
        }
    }
    groups
        .into_iter()
        .map(|((_, key), a)| {
            let c = a.counts;
            GroupRow {
                group_by: by.name(),
                key,
                jobs: c[0],
                started: c[1],
                completed: c[2],
                failed: c[3],
                killed: c[4],
                oom_killed: c[5],
                rejected: c[6],
                unfinished: c[7],
                oom_kills: c[8],
                wait: Dist::of(a.waits),
                bsld: Dist::of(a.bslds),
                jct: Dist::of(a.jcts),
            }
        })
        .collect()
}

/// Every grouping's table ([`GroupBy::ALL`] in order), concatenated.
pub fn all_groups(rows: &[JobRow]) -> Vec<GroupRow> {
    GroupBy::ALL.into_iter().flat_map(|by| group_table(rows, by)).collect()
}

/// Jain's fairness index (Jain, Chiu, Hawe, "A Quantitative Measure of Fairness and
/// Discrimination for Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984),
/// `J = (Σx)² / (n·Σx²)`, here over per-user slowdowns (see `docs/sources.md#metrics`).
///
/// Here `x` is each user's mean bounded slowdown (τ = 10 s) over its jobs that ran, and
/// `n` the users with at least one such job: users are the tenants whose service is
/// compared, and bounded slowdown normalises each job's wait by its length, so long and
/// short jobs weigh alike. `J` = 1 when every user sees the same slowdown and tends to
/// 1/n when one user's slowdown dominates. `None` when no user has a job that ran.
pub fn jain_fairness<'a>(rows: impl IntoIterator<Item = &'a JobRow>) -> Option<f64> {
    let mut users: BTreeMap<u32, (f64, u64)> = BTreeMap::new();
    for r in rows {
        if let Some(b) = r.bounded_slowdown() {
            let u = users.entry(r.user).or_default();
            u.0 += b;
            u.1 += 1;
        }
    }
    if users.is_empty() {
        return None;
    }
    let (mut sum, mut sum_sq) = (0.0, 0.0);
    for (s, n) in users.values() {
        let x = s / *n as f64;
        sum += x;
        sum_sq += x * x;
    }
    Some(sum * sum / (users.len() as f64 * sum_sq))
}

/// The header of [`write_group_csv`].
pub const GROUP_CSV_HEADER: [&str; 27] = [
    "group_by",
    "key",
    "jobs",
    "started",
    "ran",
    "completed",
    "failed",
    "killed",
    "oom_killed",
    "rejected",
    "unfinished",
    "oom_kills",
    "wait_mean",
    "wait_p50",
    "wait_p95",
    "wait_p99",
    "wait_max",
    "bsld_mean",
    "bsld_p50",
    "bsld_p95",
    "bsld_p99",
    "bsld_max",
    "jct_mean",
    "jct_p50",
    "jct_p95",
    "jct_p99",
    "jct_max",
];

/// Writes `rows` as CSV: one header ([`GROUP_CSV_HEADER`]), one line per row in the
/// order given; floats with three decimals (`{:.3}`: seconds to the millisecond), so the
/// bytes depend on nothing but the rows. `ran` = jobs that ran (start and end).
pub fn write_group_csv(out: &mut dyn Write, rows: &[GroupRow]) -> io::Result<()> {
    let mut w = csv::WriterBuilder::new().from_writer(out);
    w.write_record(GROUP_CSV_HEADER)?;
    let f = |x: f64| format!("{x:.3}");
    for r in rows {
        let mut rec = vec![
            r.group_by.to_string(),
            r.key.clone(),
            r.jobs.to_string(),
            r.started.to_string(),
            r.bsld.n.to_string(),
            r.completed.to_string(),
            r.failed.to_string(),
            r.killed.to_string(),
            r.oom_killed.to_string(),
            r.rejected.to_string(),
            r.unfinished.to_string(),
            r.oom_kills.to_string(),
        ];
        for d in [&r.wait, &r.bsld, &r.jct] {
            rec.extend([f(d.mean), f(d.p50), f(d.p95), f(d.p99), f(d.max)]);
        }
        w.write_record(&rec)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{RunMeta, Summary};
    use sim_core::{Job, JobRecord, Outcome, SimDuration, SimTime};

    /// A job of `units` units submitted at `submit` s, run over `[start, end)` s.
    fn row(user: u32, submit: u64, ran: Option<(u64, u64)>, units: u64, gpu_milli: u64) -> JobRow {
        JobRow {
            id: format!("{user}-{submit}"),
            submit_us: submit * 1_000_000,
            start_us: ran.map(|r| r.0 * 1_000_000),
            end_us: ran.map(|r| r.1 * 1_000_000),
            requested_us: None,
            units,
            gpu_milli,
            gpu_milli_held: gpu_milli,
            user,
            group: 0,
            queue: -1,
            partition: -1,
            kind: "batch".into(),
            outcome: if ran.is_some() { "completed" } else { "unfinished" }.into(),
            oom_kills: 0,
            allocated: Vec::new(),
            observed_wait_us: None,
        }
    }

    #[test]
    fn percentile_is_nearest_rank_as_in_summary() {
        for n in 1..=300usize {
            let v: Vec<f64> = (0..n).map(|i| (i * i) as f64 / 7.0).collect();
            assert_eq!(percentile(&v, 95.0), v[(n * 95).div_ceil(100) - 1], "n = {n}");
            assert_eq!(percentile(&v, 99.0), v[(n * 99).div_ceil(100) - 1], "n = {n}");
            assert_eq!(percentile(&v, 50.0), v[n.div_ceil(2) - 1], "n = {n}");
            assert_eq!((percentile(&v, 0.0), percentile(&v, 100.0)), (v[0], v[n - 1]));
        }
        assert_eq!(percentile(&[], 95.0), 0.0);
        let d = Dist::of(vec![4.0, 1.0, 3.0, 2.0]);
        assert_eq!(d, Dist { n: 4, mean: 2.5, p50: 2.0, p95: 4.0, p99: 4.0, max: 4.0 });
        assert_eq!(Dist::of(Vec::new()), Dist::default());
    }

    #[test]
    fn all_group_matches_summary_json() {
        let mut jobs = Vec::new();
        let mut recs = Vec::new();
        let base = JobRecord { attempts: 1, ..JobRecord::of(None, None, Outcome::Completed) };
        for i in 0..41u64 {
            let submit = SimTime(i * 1_700_003);
            let run = SimDuration((i % 7 + 1) * 3_100_000);
            jobs.push(Job::rigid(i.to_string(), submit, 1 + (i % 5) as u32, run, run));
            let wait = (i * i * 977_777) % 90_000_000;
            let (start, end, outcome) = match i % 10 {
                9 => (None, None, Outcome::Unfinished),
                _ => (Some(submit.0 + wait), Some(submit.0 + wait + run.0), Outcome::Completed),
            };
            recs.push(JobRecord { start: start.map(SimTime), end: end.map(SimTime), outcome, ..base.clone() });
        }
        let meta = RunMeta {
            trace: "t".into(),
            trace_sha256: String::new(),
            format: "native".into(),
            machine_units: 8,
            machine_gpus: 0,
            policy: "fcfs".into(),
            policy_given: None,
            perturb: None,
            seed: 0,
            walltime_kill: false,
            trace_rows_skipped: Default::default(),
            controllers: Vec::new(),
            variant: Default::default(),
            checkpoint: None,
            restarts: None,
        };
        let s = Summary::compute(meta, &jobs, &recs);
        let rows = crate::frame::frame(&jobs, &recs);
        let all = group_table(&rows, GroupBy::All);
        assert_eq!(all.len(), 1);
        let a = &all[0];
        assert_eq!((a.group_by, a.key.as_str(), a.jobs, a.started), ("all", "all", s.jobs_total, s.jobs_started));
        assert_eq!((a.completed, a.unfinished), (s.outcomes["completed"], s.outcomes["unfinished"]));
        assert_eq!((a.wait.p95, a.wait.max), (s.wait_p95, s.wait_max));
        assert!((a.wait.mean - s.wait_mean).abs() < 1e-9, "{} {}", a.wait.mean, s.wait_mean);
        assert!((a.bsld.mean - s.bounded_slowdown_mean).abs() < 1e-9);
        assert_eq!(a.bsld.n, s.jobs_started);
    }

    #[test]
    fn jain_index() {
        // Equal slowdowns: 1.
        let eq: Vec<JobRow> = (0..4).map(|u| row(u, 0, Some((10, 110)), 1, 0)).collect();
        assert_eq!(jain_fairness(&eq), Some(1.0));
        // One user's slowdown dominates: tends to 1/n.
        let mut dom: Vec<JobRow> = (0..4).map(|u| row(u, 0, Some((0, 100)), 1, 0)).collect();
        dom[2].start_us = Some(1_000_000_000_000_000);
        dom[2].end_us = Some(1_000_000_100_000_000);
        let x = dom[2].bounded_slowdown().unwrap();
        assert_eq!(x, 1e9 / 100.0 + 1.0);
        let j = jain_fairness(&dom).unwrap();
        assert_eq!(j, (3.0 + x) * (3.0 + x) / (4.0 * (3.0 + x * x)));
        assert!(j > 0.25 && j < 0.25 + 1e-6, "{j}");
        // Hand-computed: user 0 has slowdowns 1 and 3 (mean 2), user 1 has 4: (6)²/(2·20).
        let two =
            vec![row(0, 0, Some((0, 10)), 1, 0), row(0, 0, Some((20, 30)), 1, 0), row(1, 0, Some((30, 40)), 1, 0)];
        assert_eq!(jain_fairness(&two), Some(36.0 / 40.0));
        // Only jobs that ran count; no user: None.
        assert_eq!(jain_fairness(&[row(3, 0, None, 1, 0)]), None);
        assert_eq!(jain_fairness(&[]), None);
    }

    #[test]
    fn keys_in_natural_order() {
        let mut rows = Vec::new();
        for (i, (units, milli)) in
            [(2000, 0), (1, 0), (3, 0), (100, 0), (10, 0), (1, 250), (8, 1000), (8, 1500), (1, 80_000), (0, 0)]
                .into_iter()
                .enumerate()
        {
            let mut r = row([10, 2, 1, 10, 100, 2, 9, 1, 2, 0][i], 0, Some((0, 1)), units, milli);
            r.queue = [10, -1, 2, 10, 0, 2, 2, 2, 2, 2][i];
            r.kind = ["inference", "batch", "dl_train", "batch", "batch", "batch", "batch", "batch", "batch", "batch"]
                [i]
                .into();
            rows.push(r);
        }
        let keys = |by| group_table(&rows, by).into_iter().map(|g| g.key).collect::<Vec<_>>();
        assert_eq!(keys(GroupBy::User), ["0", "1", "2", "9", "10", "100"]);
        assert_eq!(keys(GroupBy::Queue), ["-1", "0", "2", "10"]);
        assert_eq!(keys(GroupBy::Kind), ["batch", "dl_train", "inference"]);
        assert_eq!(
            keys(GroupBy::SizeClass),
            ["1", "2-4", "5-16", "65-256", ">1024", "gpu:<1", "gpu:1", "gpu:2-8", "gpu:>64"]
        );
        let by_size = group_table(&rows, GroupBy::SizeClass);
        assert_eq!(by_size.iter().map(|g| g.jobs).sum::<u64>(), 10);
        assert_eq!(by_size[0].jobs, 2, "units 0 and 1");
        assert_eq!(all_groups(&rows).len(), 1 + 4 + 1 + 6 + 3 + 9);
        assert_eq!(GroupBy::from_name("size_class"), Some(GroupBy::SizeClass));
    }

    #[test]
    fn counts_and_csv_are_stable() {
        let mut rows = vec![row(1, 0, Some((5, 25)), 4, 0), row(1, 10, None, 2, 0), row(2, 0, Some((0, 3)), 1, 0)];
        rows[1].outcome = "rejected".into();
        rows[2].outcome = "oom_killed".into();
        rows[2].oom_kills = 2;
        let t = group_table(&rows, GroupBy::User);
        assert_eq!((t[0].jobs, t[0].started, t[0].completed, t[0].rejected), (2, 1, 1, 1));
        assert_eq!((t[1].oom_killed, t[1].oom_kills), (1, 2));
        // User 1's job: wait 5 s, run 20 s: bsld 1.25, JCT 25 s.
        assert_eq!((t[0].wait.mean, t[0].bsld.mean, t[0].jct.max), (5.0, 1.25, 25.0));
        let mut a = Vec::new();
        write_group_csv(&mut a, &t).unwrap();
        rows.reverse();
        let mut b = Vec::new();
        write_group_csv(&mut b, &group_table(&rows, GroupBy::User)).unwrap();
        assert_eq!(a, b, "input order does not matter");
        let text = String::from_utf8(a).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], GROUP_CSV_HEADER.join(","));
        assert_eq!(
            lines[1],
            "user,1,2,1,1,1,0,0,0,1,0,0,5.000,5.000,5.000,5.000,5.000,1.250,1.250,1.250,1.250,1.250,\
             25.000,25.000,25.000,25.000,25.000"
        );
        assert_eq!(lines.len(), 3);
    }
}
