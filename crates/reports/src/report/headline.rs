//! The page's first table: policies (rows, as the user spelled them) × headline metrics
//! (columns), each cell the mean over seeds with its interval, and for every policy but
//! the baseline its change against the baseline and whether the paired difference is
//! significant. GPU, out-of-memory, gang and energy columns appear only when some run has
//! them.

use super::policies::PolicyRuns;
use super::{RunData, esc, fmt};
use crate::compare::{Compared, METRICS, Metric};
use std::fmt::Write as _;

/// Metrics always shown, in order.
const ALWAYS: [&str; 5] = ["wait_mean", "wait_p95", "bounded_slowdown_mean", "utilization", "makespan"];
/// Metrics shown only when some run has a non-zero value (the interruptions' and the
/// bill's only where runs report them).
const WHEN_NONZERO: [&str; 9] = [
    "gpu_hours",
    "oom_kills",
    "gang_held_gpu_hours",
    "gpu_energy_kwh",
    "ettr",
    "lost_gpu_hours",
    "lost_core_hours",
    "cost_total",
    "cost_per_useful_gpu_hour",
];
/// Metrics shown when some run has them at all: the scheduling domains' (Slurm and
/// Kubernetes on one cluster).
const WHEN_PRESENT: [&str; 7] = [
    "slurm_wait_mean",
    "slurm_wait_p95",
    "slurm_gpu_utilization",
    "kubernetes_wait_mean",
    "kubernetes_wait_p95",
    "kubernetes_gpu_utilization",
    "node_moves",
];

/// The headline metrics of these runs, with the label the table gives each
/// (`utilization` reads "GPU allocation" on a cluster with GPUs).
pub fn shown(runs: &[RunData]) -> Vec<(Metric, String)> {
    let gpus = runs.iter().any(|r| r.number("machine_gpus") > 0);
    let metric = |k: &str| *METRICS.iter().find(|m| m.key == k).expect("a compared metric");
    let mut out: Vec<(Metric, String)> = ALWAYS
        .iter()
        .map(|k| {
            let m = metric(k);
            let label = if *k == "utilization" && gpus { "GPU allocation" } else { m.label };
            (m, label.to_string())
        })
        .collect();
    for k in WHEN_NONZERO {
        let nonzero = runs.iter().any(|r| crate::compare::metric_value(&r.summary, k).is_some_and(|v| v != 0.0));
        if nonzero {
            let m = metric(k);
            out.push((m, m.label.to_string()));
        }
    }
    for k in WHEN_PRESENT {
        if runs.iter().any(|r| crate::compare::metric_value(&r.summary, k).is_some()) {
            let m = metric(k);
            out.push((m, m.label.to_string()));
        }
    }
    out
}

/// A cell's verdict on a policy's change against the baseline.
fn verdict(c: &Compared) -> (&'static str, String) {
    let Some(d) = c.delta else { return ("", String::new()) };
    let better = if c.metric.lower_is_better { d.mean < 0.0 } else { d.mean > 0.0 };
    let change = c.change_pct.map_or_else(|| format!("{:+}", fmt(d.mean)), |p| format!("{p:+.1} %"));
    match d.significant() {
        Some(true) if better => ("better", format!("{change} ✓")),
        Some(true) => ("worse", format!("{change} ✗")),
        Some(false) => ("same", format!("{change} (n.s.)")),
        None if d.mean == 0.0 => ("", "±0".into()),
        None => (if better { "better" } else { "worse" }, change),
    }
}

/// A policy's change against the baseline in words, for the text table: `-12.3 % ✓`
/// (significantly better), `✗` (worse), `(n.s.)`, or empty for the baseline.
pub fn verdict_text(c: &Compared) -> String {
    verdict(c).1
}

/// The summary table's HTML.
pub fn html(h: &mut String, pols: &[PolicyRuns<'_>], compared: &[Compared], metrics: &[(Metric, String)]) {
    h.push_str("<div class=\"wide\"><table class=\"summary\"><tr><th>policy</th><th>runs</th>");
    for (_, label) in metrics {
        let _ = write!(h, "<th>{}</th>", esc(label));
    }
    h.push_str("</tr>\n");
    for (k, p) in pols.iter().enumerate() {
        let runs = if p.deterministic { "1 (deterministic)".to_string() } else { p.runs.len().to_string() };
        let base = if k == 0 { " <small>(baseline)</small>" } else { "" };
        let _ = write!(h, "<tr><td>{}{base}</td><td>{runs}</td>", esc(&p.label));
        for (m, _) in metrics {
            let Some(c) = compared.iter().find(|c| c.policy == p.spec && c.metric.key == m.key) else {
                h.push_str("<td>–</td>");
                continue;
            };
            let ci = if c.n > 1 { format!(" <small>± {}</small>", fmt(c.ci95)) } else { String::new() };
            let (class, change) = verdict(c);
            let tip = c.delta.map_or(String::new(), |d| {
                format!(
                    " title=\"paired difference to the baseline: {} [{}, {}] over {} seed(s)\"",
                    fmt(d.mean),
                    fmt(d.mean - d.ci95),
                    fmt(d.mean + d.ci95),
                    d.n
                )
            });
            let change =
                if change.is_empty() { String::new() } else { format!("<br><span class=\"{class}\">{change}</span>") };
            let _ = write!(h, "<td{tip}>{}{ci}{change}</td>", fmt(c.mean));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n");
}

/// The summary table as CSV: a row per policy; per metric its mean, the 95 % half-width,
/// the change against the baseline in percent and whether the paired difference is
/// significant.
pub fn csv(pols: &[PolicyRuns<'_>], compared: &[Compared], metrics: &[(Metric, String)]) -> std::io::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    let mut header = vec!["label".to_string(), "policy".into(), "runs".into(), "deterministic".into()];
    for (m, _) in metrics {
        for part in ["mean", "ci95", "change_pct", "significant"] {
            header.push(format!("{}_{part}", m.key));
        }
    }
    w.write_record(&header)?;
    for p in pols {
        let mut row = vec![p.label.clone(), p.spec.clone(), p.runs.len().to_string(), p.deterministic.to_string()];
        for (m, _) in metrics {
            let c = compared.iter().find(|c| c.policy == p.spec && c.metric.key == m.key);
            row.push(c.map_or(String::new(), |c| format!("{:.6}", c.mean)));
            row.push(c.map_or(String::new(), |c| format!("{:.6}", c.ci95)));
            row.push(c.and_then(|c| c.change_pct).map_or(String::new(), |v| format!("{v:.6}")));
            row.push(c.and_then(|c| c.delta).and_then(|d| d.significant()).map_or(String::new(), |b| b.to_string()));
        }
        w.write_record(&row)?;
    }
    w.into_inner().map_err(|e| std::io::Error::other(e.to_string()))
}

/// The legend under the summary table: each label's full spec, and what the intervals
/// and marks mean for these runs.
pub fn legend(h: &mut String, pols: &[PolicyRuns<'_>], runs: &[RunData]) {
    h.push_str("<p class=\"legend\">");
    for p in pols {
        let _ = write!(h, "<b>{}</b>: <code>{}</code><br>", esc(&p.label), esc(&p.spec));
    }
    h.push_str("</p>\n");
    let perturb = runs.iter().find_map(|r| r.summary.get("perturb").and_then(serde_json::Value::as_str));
    let seeds: std::collections::BTreeSet<u64> = runs.iter().map(RunData::seed).collect();
    let note = match (perturb, pols.iter().all(|p| p.deterministic)) {
        (Some(p), _) => format!(
            "Each of the {} seeds replays a different version of the trace (<code>--perturb {}</code>), the same for \
             every policy: ± is the 95 % interval over seeds (Student's t); the change is against the baseline, \
             ✓/✗ when the paired difference's 95 % interval excludes 0 (better/worse), n.s. when it does not.",
            seeds.len(),
            esc(p)
        ),
        (None, true) if seeds.len() > 1 => format!(
            "The {} seeds gave the same results: the policies are deterministic on this trace, so each is one run and \
             there is no interval. Use <code>--perturb</code> (e.g. <code>resample</code>) to vary the workload per \
             seed.",
            seeds.len()
        ),
        _ => "± is the 95 % interval over seeds (Student's t); the change is against the baseline, ✓/✗ when the \
              paired difference's 95 % interval excludes 0, n.s. when it does not."
            .to_string(),
    };
    let _ = writeln!(h, "<p class=\"note\">{note}</p>");
}
