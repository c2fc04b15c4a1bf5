//! `report.html`: one self-contained page (inline CSS and SVG, nothing from the network,
//! every string from a trace or a folder name escaped) that answers "which policy wins, by
//! how much, and why", in that order: the summary table first, then simulated against
//! observed, the "why", the breakdowns, the plots, and the per-run detail folded away.

use super::policies::PolicyRuns;
use super::{RunData, Section, Sections, breakdown, esc, fmt, headline, observed, why};
use crate::compare::Compared;
use crate::tables;
use serde_json::Value;
use std::fmt::Write as _;

/// The page's style: tables scroll inside their own box rather than widen the page, and
/// plots shrink to the column.
const CSS: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:1180px;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;vertical-align:top}\
th{background:#eee}td:first-child,th:first-child{text-align:left}.wide{overflow-x:auto;max-width:100%}\
.better{color:#070}.worse{color:#a00}.same{color:#666}small{color:#555}.legend,.note{font-size:90%}\
figure{margin:1em 0}figure svg{max-width:100%;height:auto;display:block}figcaption{font-weight:bold;margin-bottom:.3em}\
details{margin:.4em 0}summary{cursor:pointer}";

/// The whole page. `svgs` are the plots in order: (section, caption, SVG document).
pub fn html(
    runs: &[RunData],
    pols: &[PolicyRuns<'_>],
    compared: &[Compared],
    sections: &Sections,
    groups: &[Vec<tables::GroupRow>],
    svgs: &[(Section, String, String)],
) -> String {
    let mut h = String::new();
    let trace = runs.first().and_then(|r| r.summary.get("trace")).and_then(Value::as_str).unwrap_or("");
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>schedlab report</title>\n\
         <style>{CSS}</style></head><body>\n<h1>schedlab report</h1>\n<p>Trace <code>{}</code>: {} polic{} × {} run(s).</p>\n",
        esc(trace),
        pols.len(),
        if pols.len() == 1 { "y" } else { "ies" },
        runs.len()
    );
    h.push_str("<h2 id=\"summary\">Summary</h2>\n");
    headline::html(&mut h, pols, compared, &sections.metrics);
    headline::legend(&mut h, pols, runs);
    if let Some(fits) = &sections.observed {
        h.push_str(
            "<h2 id=\"observed\">Simulated against observed</h2>\n<p>Each policy's simulated waits beside the waits the \
             real system gave the same jobs (first run of each policy): the Kolmogorov–Smirnov distance is the largest \
             gap between the two CDFs (0 = same distribution); the error is simulated − observed, job by job.</p>\n",
        );
        observed::html(&mut h, fits);
        figures(&mut h, svgs, Section::Observed);
    }
    if !sections.why.is_empty() {
        let base = pols.first().map_or("", |p| p.label.as_str());
        h.push_str(
            "<h2 id=\"why\">Why</h2>\n<p>Every job paired with itself under the baseline (same seed): the classes \
             whose waits the policy shortened and lengthened most in all (mean wait of the class's jobs, before → \
             after).</p>\n",
        );
        why::html(&mut h, base, &sections.why);
    }
    h.push_str("<h2 id=\"groups\">Wait and slowdown by group</h2>\n<p>Every job of every run of each policy.</p>\n");
    breakdown::html(&mut h, pols, &sections.breakdowns);
    h.push_str("<h2 id=\"distributions\">Distributions</h2>\n");
    figures(&mut h, svgs, Section::Distributions);
    h.push_str("<h2 id=\"over-time\">Over time</h2>\n<p>First run of each policy.</p>\n");
    figures(&mut h, svgs, Section::OverTime);
    if svgs.iter().any(|s| s.0 == Section::Gantt) {
        h.push_str("<h2 id=\"gantt\">Schedules</h2>\n");
        figures(&mut h, svgs, Section::Gantt);
    }
    runs_table(&mut h, runs);
    group_tables(&mut h, runs, groups);
    h.push_str("</body></html>\n");
    h
}

/// The plots of one section.
fn figures(h: &mut String, svgs: &[(Section, String, String)], section: Section) {
    for (_, title, svg) in svgs.iter().filter(|s| s.0 == section) {
        // The SVG is embedded as is: plotters writes it and escapes its text.
        let _ = writeln!(h, "<figure><figcaption>{}</figcaption>\n{}</figure>", esc(title), strip_xml_decl(svg));
    }
}

/// Every run's headline figures.
fn runs_table(h: &mut String, runs: &[RunData]) {
    h.push_str(
        "<h2 id=\"runs\">Runs</h2>\n<details><summary>Every run</summary><div class=\"wide\"><table><tr><th>run</th>\
         <th>policy</th><th>seed</th><th>jobs</th><th>mean wait (s)</th><th>p95 wait (s)</th><th>mean bounded \
         slowdown</th><th>utilization</th><th>Jain fairness (users)</th></tr>\n",
    );
    for r in runs {
        let f = |k: &str| r.summary.get(k).and_then(Value::as_f64).map_or("–".into(), fmt);
        let jain = tables::jain_fairness(&r.rows).map_or("–".into(), fmt);
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{jain}</td></tr>",
            esc(&r.name),
            esc(&r.label()),
            r.seed(),
            r.rows.len(),
            f("wait_mean"),
            f("wait_p95"),
            f("bounded_slowdown_mean"),
            f("utilization")
        );
    }
    h.push_str("</table></div></details>\n");
}

/// Each run's group tables, folded.
fn group_tables(h: &mut String, runs: &[RunData], groups: &[Vec<tables::GroupRow>]) {
    for (r, g) in runs.iter().zip(groups) {
        let _ = write!(
            h,
            "<details><summary>Groups of {}</summary>\n<div class=\"wide\"><table><tr><th>group by</th><th>key</th><th>jobs</th>\
             <th>started</th><th>failed</th><th>OOM-killed</th><th>wait p50</th><th>wait p95</th><th>wait p99</th>\
             <th>bsld p50</th><th>bsld p95</th><th>bsld p99</th><th>JCT p50</th><th>JCT p95</th><th>JCT p99</th></tr>\n",
            esc(&r.name)
        );
        for x in g {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                esc(x.group_by),
                esc(&x.key),
                x.jobs,
                x.started,
                x.failed,
                x.oom_killed
            );
            for d in [&x.wait, &x.bsld, &x.jct] {
                let _ = write!(h, "<td>{}</td><td>{}</td><td>{}</td>", fmt(d.p50), fmt(d.p95), fmt(d.p99));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table></div></details>\n");
    }
}

/// An SVG document without its `<?xml …?>` declaration, for inline use.
fn strip_xml_decl(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}
