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
    /// Its policy spec, as its summary gives it.
    pub fn policy(&self) -> String {
        self.summary.get("policy").and_then(Value::as_str).unwrap_or("?").to_string()
    }
    /// Its seed.
    pub fn seed(&self) -> u64 {
        self.summary.get("seed").and_then(Value::as_u64).unwrap_or(0)
    }
    fn number(&self, key: &str) -> u64 {
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

/// The first run of each policy, in first-seen order: the one the plots show.
fn representatives(runs: &[RunData]) -> Vec<&RunData> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for r in runs {
        let p = r.policy();
        if !seen.contains(&p) {
            seen.push(p);
            out.push(r);
        }
    }
    out
}

/// Builds every file of the report of `runs` (in the order given). With the `parquet`
/// feature, also every table as Parquet and the by-size-class analysis over all runs
/// (`parquet::report_files`).
pub fn build(runs: &[RunData]) -> Result<Vec<ReportFile>, ReportError> {
    let mut files = Vec::new();
    let summaries: Vec<RunSummary> =
        runs.iter().map(|r| RunSummary { policy: r.policy(), seed: r.seed(), summary: r.summary.clone() }).collect();
    let compared = compare::compare(&summaries);
    files.push(ReportFile {
        path: "comparison.csv".into(),
        bytes: table_bytes("comparison.csv", |v| compare::write_csv(v, &compared))?,
    });
    let mut groups = Vec::new();
    let mut series = Vec::new();
    for r in runs {
        let g = tables::all_groups(&r.rows);
        files.push(ReportFile {
            path: format!("tables/{}.groups.csv", r.name),
            bytes: table_bytes("groups", |v| tables::write_group_csv(v, &g))?,
        });
        let s = timeseries::series(&r.rows, r.number("machine_units"), r.number("machine_gpus"), BUCKETS);
        files.push(ReportFile {
            path: format!("tables/{}.timeseries.csv", r.name),
            bytes: table_bytes("timeseries", |v| timeseries::write_series_csv(v, &s))?,
        });
        groups.push(g);
        series.push(s);
    }
    // Every table again as Parquet, and the lazy-polars analysis over all runs.
    #[cfg(feature = "parquet")]
    files.extend(
        crate::parquet::report_files(runs, &compared, &groups, &series)
            .map_err(ReportError::Parquet)?
            .into_iter()
            .map(|(path, bytes)| ReportFile { path, bytes }),
    );
    let reps = representatives(runs);
    let series_of = |r: &RunData| &series[runs.iter().position(|x| x.name == r.name).unwrap_or(0)];
    let by_series = |key: &str| -> Vec<Series> {
        reps.iter()
            .filter_map(|r| {
                let s = series_of(r).iter().find(|s| s.name == key)?;
                Some(Series { name: r.policy(), points: s.points.clone() })
            })
            .collect()
    };
    let mut p = Plots::default();
    over_time_plots(&mut p, &reps, by_series)?;
    distribution_plots(&mut p, &reps)?;
    for r in &reps {
        gantt_plot(&mut p, r)?;
    }
    files.extend(p.files);
    let svgs = p.svgs;
    let html = html(runs, &compared, &groups, &svgs);
    files.push(ReportFile { path: "report.html".into(), bytes: html.into_bytes() });
    Ok(files)
}

/// The plots of a report: each as SVG and PNG files, and its SVG for the HTML page.
#[derive(Default)]
struct Plots {
    files: Vec<ReportFile>,
    /// (caption, SVG text), in the order drawn.
    svgs: Vec<(String, String)>,
}

impl Plots {
    /// Draws `plots/NAME.svg` and `.png`, captioned `title` in the page.
    fn add(
        &mut self,
        name: &str,
        title: &str,
        draw: &dyn Fn(Format) -> Result<Vec<u8>, plots::PlotError>,
    ) -> Result<(), ReportError> {
        for (fmt, ext) in [(Format::Svg, "svg"), (Format::Png, "png")] {
            let bytes = draw(fmt).map_err(|source| ReportError::Plot { what: name.into(), source })?;
            if ext == "svg" {
                self.svgs.push((title.to_string(), String::from_utf8_lossy(&bytes).into_owned()));
            }
            self.files.push(ReportFile { path: format!("plots/{name}.{ext}"), bytes });
        }
        Ok(())
    }
}

/// Utilization, GPU use, GPU fragmentation and queue length over time, one line per policy
/// (`by_series(name)`: each policy's time series of that name).
fn over_time_plots(
    p: &mut Plots,
    reps: &[&RunData],
    by_series: impl Fn(&str) -> Vec<Series>,
) -> Result<(), ReportError> {
    let chart = |title, y_label| Chart { title, x_label: "time (s)", y_label, log_x: false };
    let util = by_series("units_allocated");
    p.add("utilization", "Utilization over time (units allocated)", &|f| {
        plots::lines(&chart("Utilization", "fraction"), &util, true, f)
    })?;
    let gpu = by_series("gpus_allocated");
    if !gpu.is_empty() {
        p.add("gpu_utilization", "GPU utilization over time (allocated)", &|f| {
            plots::lines(&chart("GPUs allocated", "fraction"), &gpu, true, f)
        })?;
    }
    let frag: Vec<Series> = reps
        .iter()
        .filter(|r| !r.fragmentation.is_empty())
        .map(|r| Series { name: r.policy(), points: r.fragmentation.clone() })
        .collect();
    if !frag.is_empty() {
        p.add("gpu_fragmentation", "GPU fragmentation over time (idle capacity the typical pods cannot use)", &|f| {
            plots::lines(&chart("GPU fragmentation", "fragment / free"), &frag, true, f)
        })?;
    }
    let queue = by_series("queue_length");
    p.add("queue_length", "Queue length over time", &|f| {
        plots::lines(&chart("Queue length", "jobs waiting"), &queue, true, f)
    })
}

/// The wait-time CDF and the mean bounded slowdown per size class, per policy.
fn distribution_plots(p: &mut Plots, reps: &[&RunData]) -> Result<(), ReportError> {
    let waits: Vec<(String, Vec<f64>)> =
        reps.iter().map(|r| (r.policy(), r.rows.iter().filter_map(JobRow::wait_s).collect())).collect();
    p.add("wait_cdf", "Wait-time CDF", &|f| {
        plots::cdf(
            &Chart { title: "Wait time CDF", x_label: "wait (s)", y_label: "fraction of jobs", log_x: true },
            &waits,
            f,
        )
    })?;
    let size_rows: Vec<Vec<tables::GroupRow>> =
        reps.iter().map(|r| tables::group_table(&r.rows, tables::GroupBy::SizeClass)).collect();
    let mut classes: Vec<String> = Vec::new();
    for g in size_rows.iter().flatten() {
        if !classes.contains(&g.key) {
            classes.push(g.key.clone());
        }
    }
    let bsld: Vec<(String, Vec<f64>)> = reps
        .iter()
        .zip(&size_rows)
        .map(|(r, g)| {
            (r.policy(), classes.iter().map(|c| g.iter().find(|x| &x.key == c).map_or(0.0, |x| x.bsld.mean)).collect())
        })
        .collect();
    p.add("bsld_by_size", "Mean bounded slowdown per size class", &|f| {
        plots::bars(
            &Chart {
                title: "Bounded slowdown by size class",
                x_label: "size class",
                y_label: "mean bounded slowdown",
                log_x: false,
            },
            &classes,
            &bsld,
            f,
        )
    })
}

/// The Gantt chart of a run of at most [`GANTT_MAX_JOBS`] jobs: every job that ran, at the
/// units it held when the run tracked them (the frame's `allocated`), else laid out over
/// the lowest free units (never above the machine for a valid schedule); coloured by user
/// (palette index = user modulo 10).
fn gantt_plot(p: &mut Plots, r: &RunData) -> Result<(), ReportError> {
    if r.rows.len() > GANTT_MAX_JOBS {
        return Ok(());
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
    let title = format!("Gantt chart: {}", r.policy());
    p.add(&format!("gantt_{}", r.name), &title, &|f| {
        let chart = Chart { title: &title, x_label: "time (s)", y_label, log_x: false };
        plots::gantt_placed(&chart, &bars, &allocated, units, f)
    })
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

/// The comparison as a text table (`sim compare` prints it): one block per metric.
pub fn comparison_text(runs: &[RunData]) -> String {
    let summaries: Vec<RunSummary> =
        runs.iter().map(|r| RunSummary { policy: r.policy(), seed: r.seed(), summary: r.summary.clone() }).collect();
    let compared = compare::compare(&summaries);
    let width = compared.iter().map(|c| c.policy.len()).max().unwrap_or(6).max(6);
    let mut s = String::new();
    let mut last = "";
    for c in compared.iter().filter(|c| c.n > 0) {
        if c.metric.key != last {
            last = c.metric.key;
            let _ = writeln!(s, "{}", c.metric.label);
        }
        let change = c.change_pct.map_or(String::new(), |p| format!("{p:+.1}%"));
        let _ = writeln!(
            s,
            "  {:<width$}  runs {:>3}  mean {:>12}  ±95% {:>10}  {change}",
            c.policy,
            c.n,
            fmt(c.mean),
            fmt(c.ci95)
        );
    }
    s
}

fn html(
    runs: &[RunData],
    compared: &[compare::Compared],
    groups: &[Vec<tables::GroupRow>],
    svgs: &[(String, String)],
) -> String {
    let mut h = String::new();
    let trace = runs.first().and_then(|r| r.summary.get("trace")).and_then(Value::as_str).unwrap_or("");
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>schedlab report</title>\n<style>\
body{{font-family:sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse;margin:1em 0}}\
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}th{{background:#eee}}td:nth-child(-n+2),th:nth-child(-n+2){{text-align:left}}\
.better{{color:#070}}.worse{{color:#a00}}figure{{margin:1em 0}}figure svg{{max-width:100%;height:auto}}</style></head><body>\n\
<h1>schedlab report</h1>\n<p>Trace <code>{}</code>; {} run(s).</p>\n",
        esc(trace),
        runs.len()
    );
    let _ = write!(
        h,
        "<h2>Comparison</h2>\n<p>Mean over seeds with the 95 % confidence interval (Student's t); change of the mean against the first policy.</p>\n<table><tr><th>metric</th><th>policy</th><th>runs</th><th>mean</th><th>95 % CI</th><th>vs first</th></tr>\n"
    );
    html_comparison(&mut h, compared);
    h.push_str("</table>\n<h2>Plots</h2>\n");
    for (title, svg) in svgs {
        // The SVG is embedded as is: plotters writes it, and every label in it is a
        // policy spec or a fixed title (policy specs hold no markup characters).
        let _ = writeln!(h, "<figure><figcaption>{}</figcaption>\n{}</figure>", esc(title), strip_xml_decl(svg));
    }
    h.push_str("<h2>Runs</h2>\n<table><tr><th>run</th><th>policy</th><th>seed</th><th>jobs</th><th>mean wait (s)</th><th>p95 wait (s)</th><th>mean bounded slowdown</th><th>utilization</th><th>Jain fairness (users)</th></tr>\n");
    for r in runs {
        let f = |k: &str| r.summary.get(k).and_then(Value::as_f64).map_or("–".into(), fmt);
        let jain = tables::jain_fairness(&r.rows).map_or("–".into(), fmt);
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{jain}</td></tr>",
            esc(&r.name),
            esc(&r.policy()),
            r.seed(),
            r.rows.len(),
            f("wait_mean"),
            f("wait_p95"),
            f("bounded_slowdown_mean"),
            f("utilization")
        );
    }
    h.push_str("</table>\n");
    html_groups(&mut h, runs, groups);
    h.push_str("</body></html>\n");
    h
}

/// The comparison table's rows: one per policy and metric with runs.
fn html_comparison(h: &mut String, compared: &[compare::Compared]) {
    for c in compared.iter().filter(|c| c.n > 0) {
        let (class, change) = match c.change_pct {
            Some(p) => {
                let better = if c.metric.lower_is_better { p < 0.0 } else { p > 0.0 };
                (
                    if p == 0.0 {
                        ""
                    } else if better {
                        "better"
                    } else {
                        "worse"
                    },
                    format!("{p:+.1} %"),
                )
            }
            None => ("", String::new()),
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td><td class=\"{class}\">{change}</td></tr>",
            esc(c.metric.label),
            esc(&c.policy),
            c.n,
            fmt(c.mean),
            fmt(c.mean - c.ci95),
            fmt(c.mean + c.ci95)
        );
    }
}

/// Each run's group tables, folded.
fn html_groups(h: &mut String, runs: &[RunData], groups: &[Vec<tables::GroupRow>]) {
    for (r, g) in runs.iter().zip(groups) {
        let _ = write!(
            h,
            "<details><summary>Groups of {}</summary>\n<table><tr><th>group by</th><th>key</th><th>jobs</th><th>started</th><th>failed</th><th>OOM-killed</th><th>wait p50</th><th>wait p95</th><th>wait p99</th><th>bsld p50</th><th>bsld p95</th><th>bsld p99</th><th>JCT p50</th><th>JCT p95</th><th>JCT p99</th></tr>\n",
            esc(&r.name)
        );
        for x in g {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(x.group_by),
                esc(&x.key),
                x.jobs,
                x.started,
                x.failed,
                x.oom_killed,
                fmt(x.wait.p50),
                fmt(x.wait.p95),
                fmt(x.wait.p99),
                fmt(x.bsld.p50),
                fmt(x.bsld.p95),
                fmt(x.bsld.p99),
                fmt(x.jct.p50),
                fmt(x.jct.p95),
                fmt(x.jct.p99)
            );
        }
        h.push_str("</table></details>\n");
    }
}

/// An SVG document without its `<?xml …?>` declaration, for inline use.
fn strip_xml_decl(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
