//! Why a policy differs from the baseline: every job paired with itself in the baseline's
//! run of the same seed, and the change of its wait summed by job size class and by
//! requested-time class; the classes it helped and hurt most.

use super::policies::PolicyRuns;
use super::{RunData, esc, fmt};
use crate::frame::JobRow;
use crate::tables;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Requested-time classes: (upper bound in seconds, name), the last unbounded.
const REQUESTED: [(u64, &str); 6] = [
    (600, "≤ 10 min"),
    (3_600, "10 min – 1 h"),
    (4 * 3_600, "1 – 4 h"),
    (24 * 3_600, "4 – 24 h"),
    (7 * 86_400, "1 – 7 d"),
    (u64::MAX, "> 7 d"),
];

/// A job's requested-time class (`unknown` without a request).
pub fn requested_class(r: &JobRow) -> &'static str {
    let Some(us) = r.requested_us else { return "unknown" };
    let s = us / 1_000_000;
    REQUESTED.iter().find(|(hi, _)| s <= *hi).map_or("> 7 d", |c| c.1)
}

/// One class's change: jobs paired, their mean wait under the baseline and the policy.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassChange {
    /// `size_class` or `requested`.
    pub by: &'static str,
    /// The class.
    pub class: String,
    /// Jobs that started under both.
    pub jobs: u64,
    /// Mean wait under the baseline, seconds.
    pub base_wait: f64,
    /// Mean wait under the policy, seconds.
    pub wait: f64,
}

impl ClassChange {
    /// Total change of wait over the class's jobs, seconds (negative: helped).
    pub fn total(&self) -> f64 {
        (self.wait - self.base_wait) * self.jobs as f64
    }
}

/// A policy's changes against the baseline, by size class then requested-time class (in
/// their natural orders).
pub struct Why {
    /// The policy's label.
    pub label: String,
    /// Its class changes.
    pub classes: Vec<ClassChange>,
}

/// The changes of every policy but the baseline.
pub fn why(pols: &[PolicyRuns<'_>]) -> Vec<Why> {
    let Some(base) = pols.first() else { return Vec::new() };
    pols[1..].par_iter().map(|p| Why { label: p.label.clone(), classes: changes(base, p) }).collect()
}

/// The baseline's run that pairs with `run`: the same seed, or its only one.
fn partner<'a>(base: &PolicyRuns<'a>, run: &RunData) -> Option<&'a RunData> {
    if base.runs.len() == 1 {
        return base.runs.first().copied();
    }
    base.runs.iter().copied().find(|b| b.seed() == run.seed())
}

/// A class's place in the table: size classes first (`false`), then by what, the class's
/// rank and name; summed into (jobs, Σ baseline wait, Σ wait).
type ClassKey = (bool, &'static str, usize, String);

/// One run against the baseline's of the same seed, summed by class.
fn pair_changes(mine: &RunData, theirs: &RunData) -> BTreeMap<ClassKey, (u64, f64, f64)> {
    let mut acc: BTreeMap<ClassKey, (u64, f64, f64)> = BTreeMap::new();
    let by_id: BTreeMap<&str, &JobRow> = theirs.rows.iter().map(|r| (r.id.as_str(), r)).collect();
    for r in &mine.rows {
        let (Some(w), Some(bw)) = (r.wait_s(), by_id.get(r.id.as_str()).and_then(|b| b.wait_s())) else { continue };
        let size = tables::size_class(r);
        let size_rank = tables::SIZE_CLASSES.iter().position(|c| *c == size).unwrap_or(usize::MAX);
        let req = requested_class(r);
        let req_rank = REQUESTED.iter().position(|c| c.1 == req).unwrap_or(usize::MAX);
        for key in [(false, "size_class", size_rank, size.to_string()), (true, "requested", req_rank, req.to_string())]
        {
            let e = acc.entry(key).or_default();
            e.0 += 1;
            e.1 += bw;
            e.2 += w;
        }
    }
    acc
}

fn changes(base: &PolicyRuns<'_>, p: &PolicyRuns<'_>) -> Vec<ClassChange> {
    let mut acc: BTreeMap<ClassKey, (u64, f64, f64)> = BTreeMap::new();
    // Each run of the policy with the baseline's of the same seed; a deterministic side
    // (one run) with every run of the other.
    let pairs: Vec<(&RunData, &RunData)> = if p.runs.len() == 1 && base.runs.len() > 1 {
        base.runs.iter().map(|b| (p.runs[0], *b)).collect()
    } else {
        p.runs.iter().filter_map(|r| partner(base, r).map(|b| (*r, b))).collect()
    };
    // Each pair summed on its own, in parallel; the sums added in pair order, so the
    // result does not depend on the thread count.
    let per_pair: Vec<BTreeMap<ClassKey, (u64, f64, f64)>> =
        pairs.par_iter().map(|(mine, theirs)| pair_changes(mine, theirs)).collect();
    for part in per_pair {
        for (key, (n, b, w)) in part {
            let e = acc.entry(key).or_default();
            e.0 += n;
            e.1 += b;
            e.2 += w;
        }
    }
    acc.into_iter()
        .map(|((_, by, _, class), (n, b, w))| ClassChange {
            by,
            class,
            jobs: n,
            base_wait: b / n as f64,
            wait: w / n as f64,
        })
        .collect()
}

/// The classes that gained and lost the most wait in all (at most `k` each, non-zero).
fn extremes(classes: &[ClassChange], k: usize) -> (Vec<&ClassChange>, Vec<&ClassChange>) {
    let mut sorted: Vec<&ClassChange> = classes.iter().filter(|c| c.total() != 0.0).collect();
    sorted.sort_by(|a, b| a.total().total_cmp(&b.total()));
    let helped: Vec<&ClassChange> = sorted.iter().copied().filter(|c| c.total() < 0.0).take(k).collect();
    let hurt: Vec<&ClassChange> = sorted.iter().rev().copied().filter(|c| c.total() > 0.0).take(k).collect();
    (helped, hurt)
}

/// The section's HTML: per policy, a sentence on whom it helped and hurt most, and the
/// table of every class.
pub fn html(h: &mut String, base_label: &str, ws: &[Why]) {
    for w in ws {
        let (helped, hurt) = extremes(&w.classes, 2);
        let say = |cs: &[&ClassChange]| -> String {
            if cs.is_empty() {
                return "none".into();
            }
            cs.iter()
                .map(|c| {
                    let by = if c.by == "size_class" { "size" } else { "requested time" };
                    format!(
                        "{by} {} ({} jobs, mean wait {} s → {} s)",
                        esc(&c.class),
                        c.jobs,
                        fmt(c.base_wait),
                        fmt(c.wait)
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let _ = writeln!(
            h,
            "<p><b>{}</b> against <b>{}</b>: helped most {}; hurt most {}.</p>",
            esc(&w.label),
            esc(base_label),
            say(&helped),
            say(&hurt)
        );
        let _ = writeln!(
            h,
            "<details><summary>{} by class</summary><div class=\"wide\"><table><tr><th>by</th><th>class</th><th>jobs</th>\
             <th>{} mean wait (s)</th><th>{} mean wait (s)</th><th>change (s)</th></tr>",
            esc(&w.label),
            esc(base_label),
            esc(&w.label)
        );
        for c in &w.classes {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                c.by,
                esc(&c.class),
                c.jobs,
                fmt(c.base_wait),
                fmt(c.wait),
                fmt(c.wait - c.base_wait)
            );
        }
        h.push_str("</table></div></details>\n");
    }
}

/// The section as CSV: `label,by,class,jobs,baseline_wait_mean,wait_mean,change`.
pub fn csv(ws: &[Why]) -> std::io::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record(["label", "by", "class", "jobs", "baseline_wait_mean", "wait_mean", "change"])?;
    for y in ws {
        for c in &y.classes {
            w.write_record([
                y.label.clone(),
                c.by.to_string(),
                c.class.clone(),
                c.jobs.to_string(),
                format!("{:.3}", c.base_wait),
                format!("{:.3}", c.wait),
                format!("{:.3}", c.wait - c.base_wait),
            ])?;
        }
    }
    w.into_inner().map_err(|e| std::io::Error::other(e.to_string()))
}
