//! The report of one or more runs, built in memory from their `summary.json` and
//! `frame.csv` alone (so `sim report` can rebuild it from folders made anywhere):
//! `comparison.csv`, per-run group tables and time series (CSV), plots (SVG and PNG) and a
//! self-contained `report.html` (inline CSS and SVG, nothing loaded from the network,
//! every string from a trace or a folder name escaped).

use crate::compare::{self, RunSummary};
use crate::frame::JobRow;
use crate::plots::{self, Chart, Format, Series};
use crate::{tables, timeseries};
use serde_json::Value;
use std::fmt::Write as _;

mod breakdown;
mod frontier;
mod headline;
mod observed;
mod page;
mod policies;
mod service_series;
mod sweep;
mod why;

pub use observed::ks_distance;
pub use why::requested_class;

/// One run: its folder name, `summary.json` and frame.
#[derive(Debug, Clone)]
pub struct RunData {
    /// Folder name (unique among the runs).
    pub name: String,
    /// Its `summary.json`.
    pub summary: Value,
    /// Its jobs.
    pub rows: Vec<JobRow>,
    /// Its GPU fragmentation over time (time s, fragmentation), from
    /// `fragmentation.csv`; empty without GPUs.
    pub fragmentation: Vec<(f64, f64)>,
}

impl RunData {
    /// Its policy spec, as its summary gives it, with the settings `sim compare --vary`
    /// gave it (`kube checkpoint_interval=600`): each variant is compared as a policy.
    pub fn policy(&self) -> String {
        let spec = self.summary.get("policy").and_then(Value::as_str).unwrap_or("?");
        spec.to_string() + &compare::variant_suffix(&self.summary)
    }
    /// Its seed.
    pub fn seed(&self) -> u64 {
        self.summary.get("seed").and_then(Value::as_u64).unwrap_or(0)
    }
    /// The policy as the user spelled it (`policy_given`), else its spec.
    pub fn label(&self) -> String {
        compare::label_of(&self.summary, &self.policy())
    }
    /// What the comparison reads of it.
    pub fn run_summary(&self) -> RunSummary {
        RunSummary { policy: self.policy(), seed: self.seed(), summary: self.summary.clone() }
    }
    pub(crate) fn number(&self, key: &str) -> u64 {
        self.summary.get(key).and_then(Value::as_u64).unwrap_or(0)
    }
}

/// A file of the report: its path relative to the output folder, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFile {
    /// Relative path (`comparison.csv`, `plots/wait_cdf.svg`, …).
    pub path: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// A report that cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A plot failed to render.
    #[error("plot {what}: {source}")]
    Plot {
        /// Which plot.
        what: String,
        /// Why.
        source: plots::PlotError,
    },
    /// Writing a table to memory failed.
    #[error("table {0}: {1}")]
    Table(String, std::io::Error),
    /// Building or writing a Parquet table failed.
    #[cfg(feature = "parquet")]
    #[error("parquet: {0}")]
    Parquet(polars::error::PolarsError),
}

/// Gantt charts are drawn for runs of at most this many jobs.
pub const GANTT_MAX_JOBS: usize = 2000;
/// Intervals of the time series.
pub const BUCKETS: usize = 500;

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn table_bytes(name: &str, f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Result<Vec<u8>, ReportError> {
    let mut v = Vec::new();
    f(&mut v).map_err(|e| ReportError::Table(name.into(), e))?;
    Ok(v)
}

/// Builds every file of the report of `runs` (in the order given): `comparison.csv`, the
/// page's tables as CSV (`tables/summary.csv`, `tables/by_*.csv`, `tables/why.csv`,
/// `tables/observed.csv`), each run's group table and time series, the plots (SVG and
/// PNG) and `report.html`. With the `parquet` feature, also every table as Parquet and the
/// by-size-class analysis over all runs (`parquet::report_files`). The work of each run,
/// and each plot, is done in parallel; the files come out in one order whatever the thread
/// count.
pub fn build(runs: &[RunData]) -> Result<Vec<ReportFile>, ReportError> {
    use rayon::prelude::*;
    let mut files = Vec::new();
    let summaries: Vec<RunSummary> = runs.iter().map(RunData::run_summary).collect();
    let compared = compare::compare(&summaries);
    files.push(ReportFile {
        path: "comparison.csv".into(),
        bytes: table_bytes("comparison.csv", |v| compare::write_csv(v, &compared))?,
    });
    let per_run: Vec<(Vec<tables::GroupRow>, Vec<timeseries::TimeSeries>)> = runs
        .par_iter()
        .map(|r| {
            let g = tables::all_groups(&r.rows);
            let s = timeseries::series(&r.rows, r.number("machine_units"), r.number("machine_gpus"), BUCKETS);
            (g, s)
        })
        .collect();
    let (groups, series): (Vec<_>, Vec<_>) = per_run.into_iter().unzip();
    for ((r, g), s) in runs.iter().zip(&groups).zip(&series) {
        files.push(ReportFile {
            path: format!("tables/{}.groups.csv", r.name),
            bytes: table_bytes("groups", |v| tables::write_group_csv(v, g))?,
        });
        files.push(ReportFile {
            path: format!("tables/{}.timeseries.csv", r.name),
            bytes: table_bytes("timeseries", |v| timeseries::write_series_csv(v, s))?,
        });
    }
    // Every table again as Parquet, and the lazy-polars analysis over all runs.
    #[cfg(feature = "parquet")]
    files.extend(
        crate::parquet::report_files(runs, &compared, &groups, &series)
            .map_err(ReportError::Parquet)?
            .into_iter()
            .map(|(path, bytes)| ReportFile { path, bytes }),
    );
    let pols = policies::by_policy(runs);
    let sections = Sections::of(runs, &pols, &compared);
    files.extend(sections.csv_files()?);
    let sweep = sweep::points(runs);
    if !sweep.is_empty() {
        files.push(ReportFile {
            path: "tables/checkpoint_interval.csv".into(),
            bytes: table_bytes("checkpoint_interval.csv", |v| sweep::write_csv(v, &sweep))?,
        });
    }
    let frontier = frontier::points(runs);
    if !frontier.is_empty() {
        files.push(ReportFile {
            path: "tables/cost_vs_slo.csv".into(),
            bytes: table_bytes("cost_vs_slo.csv", |v| frontier::write_csv(v, &frontier))?,
        });
    }
    let mut plots = plot_list(runs, &pols, &sections);
    if !frontier.is_empty() {
        let series = frontier::series(&frontier);
        plots.push(PlotJob::new(
            "cost_vs_slo",
            "The bill against the inference services' SLO-violation minutes, per setting (the frontier: none cheaper and better)",
            Section::Distributions,
            move |f| {
                let chart = Chart {
                    title: "Bill against SLO violations",
                    x_label: "bill (price × node-hours)",
                    y_label: "SLO-violation minutes",
                    log_x: false,
                };
                plots::lines(&chart, &series, false, f)
            },
        ));
    }
    if !sweep.is_empty() {
        let series = sweep::series(&sweep);
        plots.push(PlotJob::new(
            "checkpoint_interval",
            "Time lost against the checkpoint interval (auto: each job at Young's interval for its nodes)",
            Section::Distributions,
            move |f| {
                let chart = Chart {
                    title: "Time lost against the checkpoint interval",
                    x_label: "checkpoint interval (s, log scale)",
                    y_label: "share of time lost, 1 − ETTR",
                    log_x: true,
                };
                plots::lines(&chart, &series, false, f)
            },
        ));
    }
    for (key, file, title, y_label) in service_series::DRAWN {
        let lines = service_series::lines(runs, key);
        if lines.is_empty() {
            continue;
        }
        plots.push(PlotJob::new(file, title, Section::Distributions, move |f| {
            let chart = Chart { title, x_label: "hour", y_label, log_x: false };
            plots::lines(&chart, &lines, true, f)
        }));
    }
    let drawn: Vec<Result<Vec<ReportFile>, ReportError>> = plots.par_iter().map(PlotJob::draw).collect();
    let mut svgs = Vec::new();
    for (job, f) in plots.iter().zip(drawn) {
        let f = f?;
        svgs.push((job.section, job.title.clone(), String::from_utf8_lossy(&f[0].bytes).into_owned()));
        files.extend(f);
    }
    let html = page::html(runs, &pols, &compared, &sections, &groups, &svgs);
    files.push(ReportFile { path: "report.html".into(), bytes: html.into_bytes() });
    Ok(files)
}

// Names of runs in the legends of the comparison's plots.

/// How many policies the runs compare.
fn policy_count(runs: &[RunData]) -> usize {
    let p: std::collections::BTreeSet<&str> =
        runs.iter().filter_map(|r| r.summary.get("policy").and_then(serde_json::Value::as_str)).collect();
    p.len()
}

/// A run's name in a legend: its varied settings alone (`unneeded=600 target=10`), after
/// its policy when `with_policy`; its label when nothing was varied.
fn legend_name(r: &RunData, with_policy: bool) -> String {
    let settings: Vec<String> = r
        .summary
        .get("variant")
        .and_then(serde_json::Value::as_object)
        .map(|v| v.iter().map(|(k, x)| format!("{}={}", short_key(k), x.as_str().unwrap_or_default())).collect())
        .unwrap_or_default();
    let policy = r.summary.get("policy_given").and_then(serde_json::Value::as_str).unwrap_or_default();
    match (settings.is_empty(), with_policy) {
        (true, _) => r.label(),
        (false, true) => format!("{policy} {}", settings.join(" ")),
        (false, false) => settings.join(" "),
    }
}

/// A varied setting's name for a legend: the controller's option alone, without the
/// Cluster Autoscaler's `scale_down_` prefix and `_time` suffix (`unneeded`, `target`).
fn short_key(k: &str) -> &str {
    let k = k.rsplit('.').next().unwrap_or(k);
    let k = k.strip_prefix("scale_down_").unwrap_or(k);
    k.strip_suffix("_time").unwrap_or(k)
}

/// The page's computed sections.
pub struct Sections {
    /// The summary table's metrics and labels.
    pub metrics: Vec<(compare::Metric, String)>,
    /// Wait and slowdown by group.
    pub breakdowns: Vec<breakdown::Breakdown>,
    /// Whom each policy helped and hurt.
    pub why: Vec<why::Why>,
    /// Simulated against observed waits, when the trace has observed ones.
    pub observed: Option<Vec<observed::Fit>>,
    /// The summary table as CSV.
    summary_csv: Vec<u8>,
    /// Each breakdown as CSV.
    breakdown_csv: Vec<(String, Vec<u8>)>,
}

impl Sections {
    fn of(runs: &[RunData], pols: &[policies::PolicyRuns<'_>], compared: &[compare::Compared]) -> Self {
        let metrics = headline::shown(runs);
        let summary_csv = headline::csv(pols, compared, &metrics).unwrap_or_default();
        let (breakdowns, (why, observed)) =
            rayon::join(|| breakdown::breakdowns(pols), || rayon::join(|| why::why(pols), || observed::fits(pols)));
        let breakdown_csv = breakdowns
            .iter()
            .map(|b| (format!("tables/by_{}.csv", b.by.name()), breakdown::csv(pols, b).unwrap_or_default()))
            .collect();
        Sections { metrics, why, observed, breakdowns, summary_csv, breakdown_csv }
    }

    /// The page's tables as CSV files.
    fn csv_files(&self) -> Result<Vec<ReportFile>, ReportError> {
        let mut out = vec![ReportFile { path: "tables/summary.csv".into(), bytes: self.summary_csv.clone() }];
        out.extend(
            self.breakdown_csv.iter().map(|(path, bytes)| ReportFile { path: path.clone(), bytes: bytes.clone() }),
        );
        if !self.why.is_empty() {
            out.push(ReportFile {
                path: "tables/why.csv".into(),
                bytes: why::csv(&self.why).map_err(|e| ReportError::Table("why.csv".into(), e))?,
            });
        }
        if let Some(f) = &self.observed {
            out.push(ReportFile {
                path: "tables/observed.csv".into(),
                bytes: observed::csv(f).map_err(|e| ReportError::Table("observed.csv".into(), e))?,
            });
        }
        Ok(out)
    }
}

/// Where a plot goes on the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// Simulated against observed.
    Observed,
    /// Distributions (waits, slowdown by size).
    Distributions,
    /// Over time.
    OverTime,
    /// Gantt charts.
    Gantt,
}

/// A plot to draw: its file name, caption, section and what it draws.
struct PlotJob {
    name: String,
    title: String,
    section: Section,
    draw: Box<dyn Fn(Format) -> Result<Vec<u8>, plots::PlotError> + Send + Sync>,
}

impl PlotJob {
    fn new(
        name: &str,
        title: &str,
        section: Section,
        draw: impl Fn(Format) -> Result<Vec<u8>, plots::PlotError> + Send + Sync + 'static,
    ) -> Self {
        PlotJob { name: name.into(), title: title.into(), section, draw: Box::new(draw) }
    }

    /// `plots/NAME.svg` and `.png` (the SVG first).
    fn draw(&self) -> Result<Vec<ReportFile>, ReportError> {
        let mut out = Vec::new();
        for (fmt, ext) in [(Format::Svg, "svg"), (Format::Png, "png")] {
            let bytes = (self.draw)(fmt).map_err(|source| ReportError::Plot { what: self.name.clone(), source })?;
            out.push(ReportFile { path: format!("plots/{}.{ext}", self.name), bytes });
        }
        Ok(out)
    }
}

/// Seconds per bucket of the over-time plots: an hour up to two weeks of trace, a day up
/// to ten years (3,650 points still read as a line at the plot's width), a week beyond.
fn time_bucket_secs(span_s: f64) -> f64 {
    if span_s <= 14.0 * 86_400.0 {
        3_600.0
    } else if span_s <= 10.0 * 365.0 * 86_400.0 {
        86_400.0
    } else {
        7.0 * 86_400.0
    }
}

/// Every plot of the page, in order.
fn plot_list(runs: &[RunData], pols: &[policies::PolicyRuns<'_>], sections: &Sections) -> Vec<PlotJob> {
    let mut jobs = Vec::new();
    if sections.observed.is_some() {
        let mut sets: Vec<(String, Vec<f64>)> = Vec::new();
        if let Some(first) = pols.iter().find(|p| !observed::pairs(p).is_empty()) {
            sets.push(("observed".into(), observed::pairs(first).iter().map(|x| x.1).collect()));
        }
        for p in pols {
            let pairs = observed::pairs(p);
            if !pairs.is_empty() {
                sets.push((format!("{} (simulated)", p.label), pairs.iter().map(|x| x.0).collect()));
            }
        }
        jobs.push(PlotJob::new(
            "observed_wait_cdf",
            "Wait-time CDF: simulated and observed",
            Section::Observed,
            move |f| {
                let chart = Chart {
                    title: "Simulated and observed waits",
                    x_label: "wait (s)",
                    y_label: "fraction of jobs",
                    log_x: true,
                };
                plots::cdf(&chart, &sets, f)
            },
        ));
    }
    let waits: Vec<(String, Vec<f64>)> =
        pols.iter().map(|p| (p.label.clone(), p.rows().filter_map(JobRow::wait_s).collect())).collect();
    jobs.push(PlotJob::new("wait_cdf", "Wait-time CDF (every run of each policy)", Section::Distributions, move |f| {
        let chart =
            Chart { title: "Wait time CDF", x_label: "wait (s, log scale)", y_label: "fraction of jobs", log_x: true };
        plots::cdf(&chart, &waits, f)
    }));
    if let Some(size) = sections.breakdowns.iter().find(|b| b.by == tables::GroupBy::SizeClass) {
        let classes = size.keys.clone();
        let bsld: Vec<(String, Vec<f64>)> = pols
            .iter()
            .zip(&size.cells)
            .map(|(p, cells)| {
                (p.label.clone(), cells.iter().map(|c| c.as_ref().map_or(f64::NAN, |g| g.bsld.mean)).collect())
            })
            .collect();
        jobs.push(PlotJob::new(
            "bsld_by_size",
            "Mean bounded slowdown per size class",
            Section::Distributions,
            move |f| {
                let chart = Chart {
                    title: "Bounded slowdown by size class",
                    x_label: "size class",
                    y_label: "mean bounded slowdown",
                    log_x: false,
                };
                plots::bars(&chart, &classes, &bsld, f)
            },
        ));
    }
    jobs.extend(over_time_plots(runs, pols));
    for p in pols {
        if let Some(j) = gantt_plot(p.first()) {
            jobs.push(j);
        }
    }
    jobs
}

/// Utilization of the scarce resource and queue length over time, per hour, day or week
/// ([`time_bucket_secs`]) with time in days: the baseline's own, and every other policy's
/// difference to it (first seed of each), in separate plots.
fn over_time_plots(runs: &[RunData], pols: &[policies::PolicyRuns<'_>]) -> Vec<PlotJob> {
    let Some(base) = pols.first().map(|p| p.first()) else { return Vec::new() };
    let gpus = runs.iter().any(|r| r.number("machine_gpus") > 0);
    let t0 = base.rows.iter().map(|r| r.submit_us).min().unwrap_or(0);
    let t1 = base.rows.iter().map(|r| r.end_us.unwrap_or(r.submit_us).max(r.submit_us)).max().unwrap_or(t0);
    let bucket = time_bucket_secs((t1 - t0) as f64 / 1e6);
    let buckets = (((t1 - t0) as f64 / 1e6 / bucket).ceil() as usize).clamp(1, 4_000);
    let unit = match bucket as u64 {
        3_600 => "hour",
        86_400 => "day",
        _ => "week",
    };
    let series_of =
        |r: &RunData| timeseries::series(&r.rows, r.number("machine_units"), r.number("machine_gpus"), buckets);
    let pick = |s: &[timeseries::TimeSeries], key: &str| -> Vec<(f64, f64)> {
        s.iter()
            .find(|x| x.name == key)
            .map_or(Vec::new(), |x| x.points.iter().map(|&(t, v)| ((t - t0 as f64 / 1e6) / 86_400.0, v)).collect())
    };
    let base_s = series_of(base);
    let others: Vec<(String, Vec<timeseries::TimeSeries>)> =
        pols.iter().skip(1).map(|p| (p.label.clone(), series_of(p.first()))).collect();
    let (util_key, util_name) =
        if gpus { ("gpus_allocated", "GPU allocation") } else { ("units_allocated", "Utilization") };
    let mut jobs = Vec::new();
    for (key, file, what, y_label) in [
        (util_key, "utilization", util_name, "fraction"),
        ("queue_length", "queue_length", "Queue length", "jobs waiting"),
    ] {
        let own = vec![Series { name: pols[0].label.clone(), points: pick(&base_s, key) }];
        let title = format!("{what} per {unit}: {}", pols[0].label);
        let x_label = "time (days since the first submission)";
        let t2 = title.clone();
        jobs.push(PlotJob::new(file, &title, Section::OverTime, move |f| {
            plots::lines(&Chart { title: &t2, x_label, y_label, log_x: false }, &own, true, f)
        }));
        if others.is_empty() {
            continue;
        }
        let base_pts = pick(&base_s, key);
        let diffs: Vec<Series> = others
            .iter()
            .map(|(label, s)| {
                let pts = pick(s, key).iter().zip(&base_pts).map(|(a, b)| (a.0, a.1 - b.1)).collect();
                Series { name: label.clone(), points: pts }
            })
            .collect();
        let title = format!("{what} per {unit}: each policy minus {}", pols[0].label);
        let t2 = title.clone();
        let y = format!("{y_label}, difference");
        jobs.push(PlotJob::new(&format!("{file}_difference"), &title, Section::OverTime, move |f| {
            plots::lines(&Chart { title: &t2, x_label, y_label: &y, log_x: false }, &diffs, true, f)
        }));
    }
    if gpus {
        let frag: Vec<Series> = pols
            .iter()
            .filter(|p| !p.first().fragmentation.is_empty())
            .map(|p| {
                let pts = p.first().fragmentation.iter().map(|&(t, v)| ((t - t0 as f64 / 1e6) / 86_400.0, v)).collect();
                Series { name: p.label.clone(), points: pts }
            })
            .collect();
        if !frag.is_empty() {
            let title = "GPU fragmentation over time (idle capacity the typical pods cannot use)";
            jobs.push(PlotJob::new("gpu_fragmentation", title, Section::OverTime, move |f| {
                let chart = Chart {
                    title: "GPU fragmentation",
                    x_label: "time (days since the first submission)",
                    y_label: "fragment / free",
                    log_x: false,
                };
                plots::lines(&chart, &frag, true, f)
            }));
        }
    }
    jobs
}

/// The Gantt chart of a run of at most [`GANTT_MAX_JOBS`] jobs: every job that ran, at the
/// units it held when the run tracked them (the frame's `allocated`), else laid out over
/// the lowest free units (never above the machine for a valid schedule); coloured by user
/// (palette index = user modulo 10).
fn gantt_plot(r: &RunData) -> Option<PlotJob> {
    if r.rows.len() > GANTT_MAX_JOBS {
        return None;
    }
    let (bars, allocated): (Vec<plots::Bar>, Vec<Vec<(u64, u64)>>) = r
        .rows
        .iter()
        .filter_map(|j| {
            let bar = plots::Bar {
                start: j.start_us? as f64 / 1e6,
                end: j.end_us? as f64 / 1e6,
                units: j.units,
                category: j.user as usize,
            };
            Some((bar, j.allocated.clone()))
        })
        .unzip();
    let tracked = allocated.iter().any(|a| !a.is_empty());
    let y_label = if tracked { "units" } else { "units (positions not tracked)" };
    let units = r.number("machine_units");
    let title = format!("Gantt chart: {}", r.label());
    let t2 = title.clone();
    Some(PlotJob::new(&format!("gantt_{}", r.name), &title, Section::Gantt, move |f| {
        let chart = Chart { title: &t2, x_label: "time (s)", y_label, log_x: false };
        plots::gantt_placed(&chart, &bars, &allocated, units, f)
    }))
}

fn fmt(v: f64) -> String {
    if !v.is_finite() {
        "–".into()
    } else if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// The comparison as a text table (`sim compare` prints it): one block per headline metric
/// ([`headline::shown`]: no GPU rows without GPUs), a line per policy as the user spelled
/// it, with its change against the baseline and whether the paired difference is
/// significant; the policies' full specs and what the intervals mean below.
pub fn comparison_text(runs: &[RunData]) -> String {
    let summaries: Vec<RunSummary> = runs.iter().map(RunData::run_summary).collect();
    let compared = compare::compare(&summaries);
    let pols = policies::by_policy(runs);
    let width = pols.iter().map(|p| p.label.chars().count()).max().unwrap_or(6).max(6);
    let mut s = String::new();
    for (m, label) in headline::shown(runs) {
        let _ = writeln!(s, "{label}");
        for p in &pols {
            let Some(c) = compared.iter().find(|c| c.policy == p.spec && c.metric.key == m.key && c.n > 0) else {
                continue;
            };
            let runs = if p.deterministic { "1 (deterministic)".to_string() } else { c.n.to_string() };
            let ci = if c.n > 1 { format!("± {}", fmt(c.ci95)) } else { String::new() };
            let change = headline::verdict_text(c);
            let _ = writeln!(s, "  {:<width$}  runs {runs:>3}  mean {:>12} {ci:>12}  {change}", p.label, fmt(c.mean));
        }
    }
    for p in &pols {
        if p.label != p.spec {
            let _ = writeln!(s, "{}: {}", p.label, p.spec);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    #[test]
    fn time_plots_use_hours_then_days_then_weeks() {
        let day = 86_400.0;
        assert_eq!(time_bucket_secs(14.0 * day), 3_600.0);
        assert_eq!(time_bucket_secs(15.0 * day), day);
        // HPC2N's 3.5 years read per day.
        assert_eq!(time_bucket_secs(3.5 * 365.0 * day), day);
        assert_eq!(time_bucket_secs(11.0 * 365.0 * day), 7.0 * day);
    }
}
