//! What a workload looks like (`sim trace stats`): job count, time span, arrival rate,
//! distributions of size, run time, requested time, GPUs and GPU memory, the observed
//! waits a real trace carries, and arrivals by hour of day and day of week.
//!
//! Hours and days count from the trace's time zero, whatever its format makes it: for
//! SWF, Batsim and Sia the log's own start (SWF's `UnixStartTime` is not applied); for
//! sacct midnight of the first submission's day; for Philly 2017-09-01 00:00 (its first
//! job comes on 2017-09-04); for Helios 2020-04-01 00:00; for PAI the trace's own clock.
//! Hour 0 is the hour starting at time zero and day 0 the day containing it, which need
//! be neither a midnight nor a particular weekday, nor the day of the first job.

use serde::Serialize;
use sim_core::order_stats::OrderStats;
use sim_core::{Job, SimTime};

/// When the jobs of a trace arrive: [`arrivals`] of them, shared by [`compute`] and
/// [`crate::fit::fit`].
#[derive(Debug, Clone, PartialEq)]
pub struct Arrivals {
    /// First submission (time zero when there are no jobs).
    pub first: SimTime,
    /// Last submission (time zero when there are no jobs).
    pub last: SimTime,
    /// Last submission − first, s.
    pub span_s: f64,
    /// Arrivals per hour over the span: (jobs − 1) × 3600 / `span_s`; 0 when the span is 0.
    pub per_hour: f64,
    /// Submissions in each hour of the day (0–23), hour 0 starting at time zero.
    pub by_hour: [u64; 24],
    /// Submissions on each day of the week (0–6), day 0 the day containing time zero.
    pub by_weekday: [u64; 7],
}

/// The arrivals of `jobs` (any order). Buckets use whole seconds of the submit time:
/// hour `floor(s / 3600) mod 24`, day `floor(s / 86400) mod 7`.
pub fn arrivals(jobs: &[Job]) -> Arrivals {
    let first = jobs.iter().map(|j| j.submit).min().unwrap_or_default();
    let last = jobs.iter().map(|j| j.submit).max().unwrap_or_default();
    let span_s = (last.0 - first.0) as f64 / US;
    let mut by_hour = [0u64; 24];
    let mut by_weekday = [0u64; 7];
    for j in jobs {
        let secs = j.submit.0 / 1_000_000;
        by_hour[((secs / 3600) % 24) as usize] += 1;
        by_weekday[((secs / 86_400) % 7) as usize] += 1;
    }
    let per_hour = if span_s > 0.0 { (jobs.len() - 1) as f64 * 3600.0 / span_s } else { 0.0 };
    Arrivals { first, last, span_s, per_hour, by_hour, by_weekday }
}

/// Summary of one quantity over the jobs that state it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    /// Jobs that state it.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Smallest.
    pub min: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 90th percentile (nearest rank).
    pub p90: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Distribution {
    /// Of `values` (sorted here); `None` when empty.
    pub fn of(values: Vec<f64>) -> Option<Distribution> {
        let mut s = OrderStats::in_memory();
        for v in values {
            s.push(sim_core::order_stats::f64_key(v)).expect("held in memory");
        }
        Distribution::of_stats(s).expect("held in memory")
    }

    /// Of the floats `s` holds by their keys ([`sim_core::order_stats::f64_key`]).
    pub fn of_stats(s: OrderStats) -> std::io::Result<Option<Distribution>> {
        let n = s.len() as usize;
        if n == 0 {
            return Ok(None);
        }
        let rank = |q: f64| ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
        let (r50, r90, r99) = (rank(0.5), rank(0.9), rank(0.99));
        let mut d = Distribution { count: n as u64, mean: 0.0, min: 0.0, p50: 0.0, p90: 0.0, p99: 0.0, max: 0.0 };
        let mut sorted = s.sorted()?;
        // Summed in ascending order: the same values give the same mean on every platform.
        let sum: f64 = (&mut sorted)
            .map(sim_core::order_stats::f64_of_key)
            .enumerate()
            .inspect(|&(i, v)| {
                if i == 0 {
                    d.min = v;
                }
                for (r, at) in [(r50, &mut d.p50), (r90, &mut d.p90), (r99, &mut d.p99)] {
                    if i == r {
                        *at = v;
                    }
                }
                if i == n - 1 {
                    d.max = v;
                }
            })
            .map(|(_, v)| v)
            .sum();
        if let Some(e) = sorted.error.take() {
            return Err(e);
        }
        d.mean = sum / n as f64;
        Ok(Some(d))
    }
}

/// Statistics of a workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    /// Jobs.
    pub jobs: u64,
    /// First submission, s.
    pub first_submit_s: f64,
    /// Last submission, s.
    pub last_submit_s: f64,
    /// Last submission − first, s.
    pub span_s: f64,
    /// Arrivals per hour over the span ((jobs − 1) / span).
    pub arrivals_per_hour: f64,
    /// Processors (cores) per job: tasks × cores per task.
    pub processors: Option<Distribution>,
    /// Tasks per job (gang size).
    pub tasks: Option<Distribution>,
    /// Run time, s (jobs that state one).
    pub runtime_s: Option<Distribution>,
    /// Requested time, s.
    pub requested_s: Option<Distribution>,
    /// GPUs per job (tasks × GPUs per task), over jobs with GPUs.
    pub gpus: Option<Distribution>,
    /// Jobs with GPUs.
    pub gpu_jobs: u64,
    /// Declared GPU memory per GPU, MiB, over jobs that declare it.
    pub gpu_memory_mib: Option<Distribution>,
    /// Observed wait in the real system, s (jobs that carry an observed start).
    pub observed_wait_s: Option<Distribution>,
    /// Arrivals in each hour of the day (0–23), hour 0 starting at the trace's time zero.
    pub arrivals_by_hour: [u64; 24],
    /// Arrivals on each day of the week (day 0 = the day containing the trace's time zero,
    /// not a particular weekday; see the module documentation).
    pub arrivals_by_weekday: [u64; 7],
    /// Core-seconds of work (processors × run time) per second of span: the load a
    /// machine of one core would see; divide by the machine size for its offered load.
    pub work_core_s_per_s: f64,
    /// GPU-seconds of work (GPUs × their share × run time) per second of span; divide by
    /// the cluster's GPUs for its offered GPU load.
    pub work_gpu_s_per_s: f64,
}

/// Work each unit of a cluster is offered over the time the workload needs at the
/// least: `(core load, GPU load)`, each the work (cores or GPUs × run time) divided by
/// the capacity (`units`, `gpus`) × the window from the first submission to the latest
/// `submit + run time`. 1 means the cluster is busy all that time; a trace that holds a
/// snapshot (every pod at one instant) replayed on its whole cluster gives a few
/// thousandths. `None` for a capacity of 0 or an empty window.
pub fn offered_load(jobs: &[Job], units: u64, gpus: u64) -> (Option<f64>, Option<f64>) {
    let mut load = OfferedLoad::default();
    jobs.iter().for_each(|j| load.add(j));
    load.of(units, gpus)
}

/// [`offered_load`] a job at a time, in input order (a streamed replay's).
#[derive(Clone, Debug, Default)]
pub struct OfferedLoad {
    first: Option<u64>,
    end: u64,
    core: f64,
    gpu: f64,
}

impl OfferedLoad {
    /// Adds a job.
    pub fn add(&mut self, j: &Job) {
        let work = self.add_span(j);
        self.add_work(work);
    }

    /// Adds a job's span (in any order); returns its work (core-s, GPU-s) for
    /// [`OfferedLoad::add_work`], summed in input order.
    pub fn add_span(&mut self, j: &Job) -> Option<(f64, f64)> {
        self.first = Some(self.first.map_or(j.submit.0, |f| f.min(j.submit.0)));
        self.end = self.end.max(j.submit.0.saturating_add(j.runtime.map_or(0, |r| r.0)));
        j.runtime.map(|r| (j.units() as f64 * r.0 as f64 / US, gpu_share(j) * r.0 as f64 / US))
    }

    /// Adds a job's work; jobs in input order.
    pub fn add_work(&mut self, work: Option<(f64, f64)>) {
        if let Some((core, gpu)) = work {
            self.core += core;
            self.gpu += gpu;
        }
    }

    /// The core and GPU loads of the jobs added on `units` cores and `gpus` GPUs.
    pub fn of(&self, units: u64, gpus: u64) -> (Option<f64>, Option<f64>) {
        let window = self.end.saturating_sub(self.first.unwrap_or(0)) as f64 / US;
        let load = |work: f64, cap: u64| (cap > 0 && window > 0.0).then(|| work / (cap as f64 * window));
        (load(self.core, units), load(self.gpu, gpus))
    }
}

/// GPUs a job holds: tasks × GPUs per task × the share of each (milli-GPU / 1000).
fn gpu_share(j: &Job) -> f64 {
    j.tasks as f64 * j.task.gpus as f64 * j.task.gpu_milli() as f64 / 1000.0
}

const US: f64 = 1e6;

/// The statistics of `jobs`.
pub fn compute(jobs: &[Job]) -> TraceStats {
    let mut b = StatsBuilder::new(None);
    for j in jobs {
        b.add(j).expect("held in memory");
    }
    b.finish().expect("held in memory")
}

/// [`compute`] a job at a time, in input order (`sim trace stats` on a trace of any
/// length): the same figures, the distributions' values spilled to disk past a budget
/// ([`sim_core::order_stats`]).
pub struct StatsBuilder {
    jobs: u64,
    first: Option<SimTime>,
    last: SimTime,
    by_hour: [u64; 24],
    by_weekday: [u64; 7],
    work: f64,
    gpu_work: f64,
    gpu_jobs: u64,
    /// Processors, tasks, run time, requested time, GPUs, GPU memory, observed wait.
    values: [OrderStats; 7],
}

impl StatsBuilder {
    /// Nothing added yet; the values kept in memory, or spilled into `spill` past 1 Mi
    /// values a distribution.
    pub fn new(spill: Option<&std::path::Path>) -> Self {
        let make = || match spill {
            Some(dir) => OrderStats::spilling(dir, 1 << 20),
            None => OrderStats::in_memory(),
        };
        StatsBuilder {
            jobs: 0,
            first: None,
            last: SimTime::ZERO,
            by_hour: [0; 24],
            by_weekday: [0; 7],
            work: 0.0,
            gpu_work: 0.0,
            gpu_jobs: 0,
            values: std::array::from_fn(|_| make()),
        }
    }

    /// Adds a job.
    pub fn add(&mut self, j: &Job) -> std::io::Result<()> {
        self.jobs += 1;
        self.first = Some(self.first.map_or(j.submit, |f| f.min(j.submit)));
        self.last = self.last.max(j.submit);
        let secs = j.submit.0 / 1_000_000;
        self.by_hour[((secs / 3600) % 24) as usize] += 1;
        self.by_weekday[((secs / 86_400) % 7) as usize] += 1;
        if let Some(r) = j.runtime {
            self.work += j.units() as f64 * r.0 as f64 / US;
            self.gpu_work += gpu_share(j) * r.0 as f64 / US;
        }
        let gpus = j.tasks as u64 * j.task.gpus as u64;
        self.gpu_jobs += u64::from(gpus > 0);
        let values = [
            Some(j.units() as f64),
            Some(j.tasks as f64),
            j.runtime.map(|r| r.0 as f64 / US),
            j.requested.map(|r| r.0 as f64 / US),
            (gpus > 0).then_some(gpus as f64),
            (j.task.gpus > 0 && j.task.gpu_memory_mib > 0).then_some(j.task.gpu_memory_mib as f64),
            j.observed_wait().map(|w| w.0 as f64 / US),
        ];
        for (s, v) in self.values.iter_mut().zip(values) {
            if let Some(v) = v {
                s.push(sim_core::order_stats::f64_key(v))?;
            }
        }
        Ok(())
    }

    /// The statistics of the jobs added.
    pub fn finish(self) -> std::io::Result<TraceStats> {
        let first = self.first.unwrap_or_default();
        let span_s = (self.last.0 - first.0) as f64 / US;
        let per_hour = if span_s > 0.0 { (self.jobs - 1) as f64 * 3600.0 / span_s } else { 0.0 };
        let [processors, tasks, runtime_s, requested_s, gpus, gpu_memory_mib, observed_wait_s] =
            self.values.map(Distribution::of_stats);
        Ok(TraceStats {
            jobs: self.jobs,
            first_submit_s: first.0 as f64 / US,
            last_submit_s: self.last.0 as f64 / US,
            span_s,
            arrivals_per_hour: per_hour,
            processors: processors?,
            tasks: tasks?,
            runtime_s: runtime_s?,
            requested_s: requested_s?,
            gpus: gpus?,
            gpu_jobs: self.gpu_jobs,
            gpu_memory_mib: gpu_memory_mib?,
            observed_wait_s: observed_wait_s?,
            arrivals_by_hour: self.by_hour,
            arrivals_by_weekday: self.by_weekday,
            work_core_s_per_s: if span_s > 0.0 { self.work / span_s } else { 0.0 },
            work_gpu_s_per_s: if span_s > 0.0 { self.gpu_work / span_s } else { 0.0 },
        })
    }
}

/// A figure for a table: integers plainly, others with three significant decimals.
fn fig(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

impl TraceStats {
    /// A plain-text report.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "jobs               {}", self.jobs);
        let _ = writeln!(
            s,
            "submissions        {} s .. {} s (span {} s = {:.2} days)",
            fig(self.first_submit_s),
            fig(self.last_submit_s),
            fig(self.span_s),
            self.span_s / 86_400.0
        );
        let _ = writeln!(s, "arrival rate       {:.3} jobs/hour", self.arrivals_per_hour);
        let _ = writeln!(s, "offered work       {:.3} core-s per s", self.work_core_s_per_s);
        let _ = writeln!(s, "GPU jobs           {}", self.gpu_jobs);
        if self.gpu_jobs > 0 {
            let _ = writeln!(s, "offered GPU work   {:.3} GPU-s per s", self.work_gpu_s_per_s);
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<20} {:>9} {:>12} {:>10} {:>10} {:>10} {:>10} {:>12}",
            "distribution", "jobs", "mean", "min", "p50", "p90", "p99", "max"
        );
        let rows: [(&str, &Option<Distribution>); 7] = [
            ("processors", &self.processors),
            ("tasks", &self.tasks),
            ("runtime (s)", &self.runtime_s),
            ("requested (s)", &self.requested_s),
            ("GPUs", &self.gpus),
            ("GPU memory (MiB)", &self.gpu_memory_mib),
            ("observed wait (s)", &self.observed_wait_s),
        ];
        for (name, d) in rows {
            match d {
                Some(d) => {
                    let _ = writeln!(
                        s,
                        "{name:<20} {:>9} {:>12} {:>10} {:>10} {:>10} {:>10} {:>12}",
                        d.count,
                        fig(d.mean),
                        fig(d.min),
                        fig(d.p50),
                        fig(d.p90),
                        fig(d.p99),
                        fig(d.max)
                    );
                }
                None => {
                    let _ = writeln!(s, "{name:<20} {:>9}", 0);
                }
            }
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "arrivals by hour of day (from time zero)");
        for (h, n) in self.arrivals_by_hour.iter().enumerate() {
            let _ = write!(s, "{}{h:02}:{n}", if h % 8 == 0 { if h > 0 { "\n  " } else { "  " } } else { "  " });
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "arrivals by day of week (day 0 = the day of time zero)");
        let days: Vec<String> = self.arrivals_by_weekday.iter().enumerate().map(|(d, n)| format!("d{d}:{n}")).collect();
        let _ = writeln!(s, "  {}", days.join("  "));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::{SimDuration, SimTime};

    #[test]
    fn hand_computed_figures() {
        let mut jobs: Vec<Job> = (0..4u64)
            .map(|i| {
                Job::rigid(
                    i.to_string(),
                    SimTime::from_secs(i * 3600),
                    1 << i,
                    SimDuration::from_secs(100 * (i + 1)),
                    SimDuration::from_secs(1000),
                )
            })
            .collect();
        jobs[1].task.gpus = 2;
        jobs[1].observed_start = Some(SimTime::from_secs(3600 + 30));
        let s = compute(&jobs);
        assert_eq!((s.jobs, s.span_s, s.arrivals_per_hour), (4, 3.0 * 3600.0, 1.0));
        let p = s.processors.clone().unwrap();
        assert_eq!((p.mean, p.min, p.p50, p.max), (3.75, 1.0, 2.0, 8.0));
        assert_eq!(s.runtime_s.as_ref().unwrap().mean, 250.0);
        assert_eq!((s.gpu_jobs, s.gpus.as_ref().unwrap().mean), (1, 4.0));
        assert_eq!(s.observed_wait_s.as_ref().unwrap().max, 30.0);
        assert_eq!(&s.arrivals_by_hour[..5], &[1, 1, 1, 1, 0]);
        assert_eq!(s.arrivals_by_weekday[0], 4);
        // (1×100 + 2×200 + 4×300 + 8×400) core-s over 10,800 s.
        assert!((s.work_core_s_per_s - 4900.0 / 10_800.0).abs() < 1e-12);
        assert!(s.to_text().contains("processors"));
    }

    #[test]
    fn arrivals_count_from_time_zero() {
        let at = |us: u64| Job::rigid("j", SimTime(us), 1, SimDuration::from_secs(1), SimDuration::from_secs(1));
        let none = arrivals(&[]);
        assert_eq!((none.first, none.last, none.span_s, none.per_hour), (SimTime(0), SimTime(0), 0.0, 0.0));
        assert_eq!((none.by_hour, none.by_weekday), ([0; 24], [0; 7]));
        // Last µs of hour 0; hour 1 of day 0; hour 23 of day 8 (weekday 1); in any order.
        let jobs = [at(8 * 86_400_000_000 + 23 * 3_600_000_000), at(3_599_999_999), at(3_600_000_000)];
        let a = arrivals(&jobs);
        assert_eq!((a.first, a.last), (SimTime(3_599_999_999), SimTime(8 * 86_400_000_000 + 23 * 3_600_000_000)));
        assert_eq!((a.by_hour[0], a.by_hour[1], a.by_hour[23]), (1, 1, 1));
        assert_eq!(a.by_weekday, [2, 1, 0, 0, 0, 0, 0]);
        assert_eq!(a.span_s, (a.last.0 - a.first.0) as f64 / 1e6);
        assert_eq!(a.per_hour, 2.0 * 3600.0 / a.span_s);
        let s = compute(&jobs);
        assert_eq!(
            (s.arrivals_per_hour, s.arrivals_by_hour, s.arrivals_by_weekday),
            (a.per_hour, a.by_hour, a.by_weekday)
        );
    }
}
