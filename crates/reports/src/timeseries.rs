//! Time-weighted series over a run: allocation, GPU use and the queue, from a run's frame
//! ([`JobRow`]s).
//!
//! The run's window goes from the first submission to the last end (or the last
//! submission or start, when later). It is cut into equal buckets (integer µs
//! boundaries `t0 + ⌊span·i/buckets⌋`), and each point is the **time-weighted mean** of a
//! step function over its bucket: the function is integrated exactly in integer µs (i128)
//! and the integral divided by the bucket's length once, at the end. One sweep over the
//! jobs' events sorted by (time, kind, row) — a total order — gives every series in
//! O(n log n + buckets), whatever order the rows come in.
//!
//! What each job contributes:
//!
//! * **running** over `[start, end)` (a job that started and has no end runs to the
//!   window's end);
//! * **waiting** over `[submit, start)`; a job that never starts waits to the window's
//!   end — except a `rejected` job, refused at submission, which never queues.
//!
//! Utilisation follows the usual definition, allocated over available capacity (`docs/sources.md#metrics`),
//! and `summary.json` (`Σ run × units / (machine units × makespan)`): the bucket-weighted
//! mean of `units_allocated` over a run whose last event is an end is `summary.json`'s
//! `utilization`.

use crate::frame::JobRow;
use serde::Serialize;
use std::io::{self, Write};

/// Buckets a report uses unless told otherwise.
pub const DEFAULT_BUCKETS: usize = 500;

/// One named series: `(t, value)` points, `t` the start of the point's bucket in seconds
/// (the trace's clock), `value` the time-weighted mean over the bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeSeries {
    /// Its name (the CSV column).
    pub name: String,
    /// `(bucket start in seconds, mean over the bucket)`, in time order.
    pub points: Vec<(f64, f64)>,
}

// Quantities swept, in the order of the step-function levels.
const UNITS: usize = 0;
const HELD: usize = 1;
const ASKED: usize = 2;
const QUEUE: usize = 3;
const PENDING: usize = 4;

// Event kinds, in their order at equal times (any order integrates alike: intervals are
// half-open and levels are integrated only between distinct times).
const END: u8 = 0;
const START: u8 = 1;
const SUBMIT: u8 = 2;

/// The series of a run on a machine of `machine_units` units and `machine_gpus` GPUs, in
/// `buckets` equal intervals ([`DEFAULT_BUCKETS`] at the usual call site), in this order:
///
/// * `units_allocated`: Σ units of running jobs / `machine_units` (0 when the machine has
///   no units);
/// * `gpus_allocated`: Σ `gpu_milli_held` of running jobs / 1000 / `machine_gpus` — what
///   the jobs *held* (an exclusive GPU pool gives whole GPUs, so a job asking for a
///   quarter GPU holds a whole one);
/// * `gpus_used`: Σ `gpu_milli` of running jobs / 1000 / `machine_gpus` — what the jobs
///   *asked for* ("used" as far as a simulator knows: no SM activity is modelled);
/// * `queue_length`: jobs submitted and not yet started (mean count);
/// * `pending_gpus`: Σ `gpu_milli` / 1000 of those waiting jobs (GPUs, not a fraction).
///
/// The three GPU series are left out when `machine_gpus` is 0. Every series has
/// `min(buckets, span in µs)` points (buckets are at least 1 µs long); none when `rows`
/// is empty, `buckets` is 0 or the window is empty.
pub fn series(rows: &[JobRow], machine_units: u64, machine_gpus: u64, buckets: usize) -> Vec<TimeSeries> {
    let columns = columns(machine_units, machine_gpus);
    let mut out: Vec<TimeSeries> =
        columns.iter().map(|(n, _, _)| TimeSeries { name: (*n).to_string(), points: Vec::new() }).collect();

    let Some(t0) = rows.iter().map(|r| r.submit_us).min() else { return out };
    let t1 =
        rows.iter().map(|r| r.submit_us.max(r.start_us.unwrap_or(0)).max(r.end_us.unwrap_or(0))).max().unwrap_or(t0);
    let span = t1 - t0;
    let nb = buckets.min(usize::try_from(span).unwrap_or(usize::MAX));
    if nb == 0 {
        return out;
    }
    let b = Buckets { t0, span, n: nb };
    let integrals = integrate(rows, &events(rows), &b, t1);
    for (s, (_, q, denom)) in out.iter_mut().zip(columns) {
        s.points = (0..nb)
            .map(|i| {
                let (lo, hi) = (b.bound(i), b.bound(i + 1));
                let v = if denom == 0.0 { 0.0 } else { integrals[i][q] as f64 / ((hi - lo) as f64 * denom) };
                (lo as f64 / 1e6, v)
            })
            .collect();
    }
    out
}

/// The series [`series`] gives, in order: name, quantity swept and what its integral is
/// divided by (besides the bucket's length).
fn columns(machine_units: u64, machine_gpus: u64) -> Vec<(&'static str, usize, f64)> {
    let gpus = machine_gpus > 0;
    let g = machine_gpus as f64 * 1000.0;
    let mut columns = vec![("units_allocated", UNITS, machine_units as f64)];
    if gpus {
        columns.extend([("gpus_allocated", HELD, g), ("gpus_used", ASKED, g)]);
    }
    columns.push(("queue_length", QUEUE, 1.0));
    if gpus {
        columns.push(("pending_gpus", PENDING, 1000.0));
    }
    columns
}

/// `n` equal buckets over `span` µs from `t0`.
struct Buckets {
    t0: u64,
    span: u64,
    n: usize,
}

impl Buckets {
    /// The start of bucket `i` (the end of the last one for `i` = `n`).
    fn bound(&self, i: usize) -> u64 {
        self.t0 + (self.span as u128 * i as u128 / self.n as u128) as u64
    }
}

/// The jobs' events, (time, kind, row), sorted.
fn events(rows: &[JobRow]) -> Vec<(u64, u8, usize)> {
    let mut events: Vec<(u64, u8, usize)> = Vec::with_capacity(rows.len() * 3);
    for (i, r) in rows.iter().enumerate() {
        match r.start_us {
            Some(s) => {
                let s = s.max(r.submit_us);
                events.push((r.submit_us, SUBMIT, i));
                events.push((s, START, i));
                if let Some(e) = r.end_us {
                    events.push((e.max(s), END, i));
                }
            }
            None if r.outcome != "rejected" => events.push((r.submit_us, SUBMIT, i)),
            None => {}
        }
    }
    events.sort_unstable();
    events
}

/// The integral of each quantity's level over each bucket, in integer µs, from a sweep
/// over the sorted `events` up to `t1`.
fn integrate(rows: &[JobRow], events: &[(u64, u8, usize)], b: &Buckets, t1: u64) -> Vec<[i128; 5]> {
    let mut sweep = Sweep { integrals: vec![[0; 5]; b.n], level: [0; 5], cur: b.t0, k: 0 };
    for &(t, kind, i) in events {
        if t > sweep.cur {
            sweep.advance(t, b);
        }
        sweep.apply(kind, &rows[i]);
    }
    sweep.advance(t1, b);
    sweep.integrals
}

/// The state of the sweep: integrals so far, current levels, time reached and bucket.
struct Sweep {
    integrals: Vec<[i128; 5]>,
    level: [i128; 5],
    cur: u64,
    k: usize,
}

impl Sweep {
    /// Integrates the current levels from `cur` up to `to`, closing the buckets passed.
    fn advance(&mut self, to: u64, b: &Buckets) {
        while self.k < b.n {
            let end = b.bound(self.k + 1);
            let upto = to.min(end);
            let dt = (upto - self.cur) as i128;
            for (acc, l) in self.integrals[self.k].iter_mut().zip(&self.level) {
                *acc += l * dt;
            }
            self.cur = upto;
            if to < end {
                break;
            }
            self.k += 1;
        }
    }

    /// Changes the levels by an event of `kind` of job `r`.
    fn apply(&mut self, kind: u8, r: &JobRow) {
        let level = &mut self.level;
        let (units, held, asked, milli) =
            (r.units as i128, r.gpu_milli_held as i128, r.gpu_milli as i128, r.gpu_milli as i128);
        match kind {
            SUBMIT => {
                level[QUEUE] += 1;
                level[PENDING] += milli;
            }
            START => {
                level[QUEUE] -= 1;
                level[PENDING] -= milli;
                level[UNITS] += units;
                level[HELD] += held;
                level[ASKED] += asked;
            }
            _ => {
                level[UNITS] -= units;
                level[HELD] -= held;
                level[ASKED] -= asked;
            }
        }
    }
}

/// Writes `series` as CSV: columns `t,<name1>,<name2>,…`, one line per point (`t` from
/// the first series that has the point; a series with fewer points leaves its cell
/// empty); `t` and values with six decimals (`{:.6}`: `t` to the µs), so the bytes
/// depend on nothing but the series.
pub fn write_series_csv(out: &mut dyn Write, series: &[TimeSeries]) -> io::Result<()> {
    let mut w = csv::WriterBuilder::new().flexible(false).from_writer(out);
    let mut header = vec!["t".to_string()];
    header.extend(series.iter().map(|s| s.name.clone()));
    w.write_record(&header)?;
    let n = series.iter().map(|s| s.points.len()).max().unwrap_or(0);
    for i in 0..n {
        let t = series.iter().find_map(|s| s.points.get(i)).map_or(0.0, |p| p.0);
        let mut rec = vec![format!("{t:.6}")];
        rec.extend(series.iter().map(|s| s.points.get(i).map(|p| format!("{:.6}", p.1)).unwrap_or_default()));
        w.write_record(&rec)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(submit_us: u64, ran: Option<(u64, u64)>, units: u64, milli: u64, held: u64) -> JobRow {
        JobRow {
            id: String::new(),
            submit_us,
            start_us: ran.map(|r| r.0),
            end_us: ran.map(|r| r.1),
            requested_us: None,
            units,
            gpu_milli: milli,
            gpu_milli_held: held,
            user: 0,
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

    fn values(s: &TimeSeries) -> Vec<f64> {
        s.points.iter().map(|p| p.1).collect()
    }

    const S: u64 = 1_000_000;

    #[test]
    fn two_jobs_on_four_units() {
        // A: 2 units over [0, 10 s); B: submitted at 0, waits, 4 units over [10, 20 s).
        let rows = [job(0, Some((0, 10 * S)), 2, 0, 0), job(0, Some((10 * S, 20 * S)), 4, 0, 0)];
        let s = series(&rows, 4, 0, 4);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["units_allocated", "queue_length"], "no GPU series without GPUs");
        assert_eq!(s[0].points, [(0.0, 0.5), (5.0, 0.5), (10.0, 1.0), (15.0, 1.0)]);
        assert_eq!(values(&s[1]), [1.0, 1.0, 0.0, 0.0]);
        // Three buckets: boundaries 0, 6.666666, 13.333333, 20 s; the middle one straddles
        // the switch at 10 s (3.333334 s at 2 units, 3.333333 s at 4).
        let s = series(&rows, 4, 0, 3);
        let t: Vec<f64> = s[0].points.iter().map(|p| p.0).collect();
        assert_eq!(t, [0.0, 6.666666, 13.333333]);
        let mid = (2.0 * 3_333_334.0 + 4.0 * 3_333_333.0) / (6_666_667.0 * 4.0);
        assert_eq!(values(&s[0]), [0.5, mid, 1.0]);
        assert_eq!(values(&s[1]), [1.0, 3_333_334.0 / 6_666_667.0, 0.0]);
        // Order of rows does not matter.
        let rev = [rows[1].clone(), rows[0].clone()];
        assert_eq!(series(&rev, 4, 0, 3), s);
        let mut csv = Vec::new();
        write_series_csv(&mut csv, &s).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "t,units_allocated,queue_length\n0.000000,0.500000,1.000000\n\
             6.666666,0.750000,0.500000\n13.333333,1.000000,0.000000\n"
        );
    }

    #[test]
    fn shared_request_on_an_exclusive_gpu() {
        // Holds a whole GPU asking a quarter over [0, 10 s); a job asking half a GPU
        // submitted at 5 s never starts; a rejected one never queues.
        let mut rejected = job(5 * S, None, 1, 2000, 2000);
        rejected.outcome = "rejected".into();
        let rows = [job(0, Some((0, 10 * S)), 1, 250, 1000), job(5 * S, None, 1, 500, 500), rejected];
        let s = series(&rows, 8, 1, 2);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["units_allocated", "gpus_allocated", "gpus_used", "queue_length", "pending_gpus"]);
        assert_eq!(values(&s[0]), [0.125, 0.125]);
        assert_eq!(values(&s[1]), [1.0, 1.0]);
        assert_eq!(values(&s[2]), [0.25, 0.25]);
        assert_eq!(values(&s[3]), [0.0, 1.0]);
        assert_eq!(values(&s[4]), [0.0, 0.5]);
    }

    #[test]
    fn degenerate_windows() {
        assert!(series(&[], 4, 1, 10).iter().all(|s| s.points.is_empty()));
        let one = [job(7, Some((7, 7)), 1, 0, 0)];
        assert!(series(&one, 4, 0, 10)[0].points.is_empty());
        // A 3 µs window gets 3 buckets of 1 µs.
        let short = [job(0, Some((1, 3)), 4, 0, 0)];
        assert_eq!(values(&series(&short, 4, 0, 500)[0]), [0.0, 1.0, 1.0]);
        assert!(series(&short, 4, 0, 0)[0].points.is_empty());
    }

    #[test]
    fn a_million_jobs_integrate_to_summary_utilization() {
        let n = 1_000_000u64;
        let mut rows = Vec::with_capacity(n as usize);
        let (mut area, mut last) = (0u128, 0u64);
        for i in 0..n {
            let submit = i * 997 % 50_000_000_000;
            let start = submit + (i * 7919) % 3_000_000_000;
            let end = start + 1 + (i * 104_729) % 9_000_000_000;
            let units = 1 + i % 64;
            area += (end - start) as u128 * units as u128;
            last = last.max(end);
            rows.push(job(submit, Some((start, end)), units, 0, 0));
        }
        let first = rows.iter().map(|r| r.submit_us).min().unwrap();
        let s = series(&rows, 100_000, 0, DEFAULT_BUCKETS);
        assert_eq!(s[0].points.len(), DEFAULT_BUCKETS);
        let span = (last - first) as f64;
        let util = area as f64 / (100_000.0 * span);
        let b = |i: usize| first as f64 + (((last - first) as u128 * i as u128 / 500) as f64);
        let mean: f64 = s[0].points.iter().enumerate().map(|(i, p)| p.1 * (b(i + 1) - b(i))).sum::<f64>() / span;
        assert!((mean - util).abs() < 1e-9 * util, "{mean} vs {util}");
        assert!(s[1].points.iter().all(|p| p.1 >= 0.0));
    }
}
