//! Wait and slowdown by group — job size class, user (the most active users, and Jain's
//! fairness index), queue, partition, job kind — one column pair per policy, over every
//! job of its runs (pooled over seeds).

use super::policies::PolicyRuns;
use super::{esc, fmt};
use crate::tables::{self, GroupBy, GroupRow};
use rayon::prelude::*;
use std::fmt::Write as _;

/// Users shown by name in the by-user table (the most active in the baseline's runs).
pub const TOP_USERS: usize = 10;

/// One breakdown: its rows' keys and, per policy, each key's row (when it has jobs).
pub struct Breakdown {
    /// What it groups by.
    pub by: GroupBy,
    /// Heading.
    pub title: &'static str,
    /// Keys, in the table's order.
    pub keys: Vec<String>,
    /// Per policy (in order), the group row of each key.
    pub cells: Vec<Vec<Option<GroupRow>>>,
    /// Jain's fairness index over users per policy (the by-user table only).
    pub jain: Option<Vec<Option<f64>>>,
}

/// The breakdowns worth showing: by size class always; by user when there are several
/// users; by queue, partition and kind when the jobs have more than one.
pub fn breakdowns(pols: &[PolicyRuns<'_>]) -> Vec<Breakdown> {
    const BY: [(GroupBy, &str); 5] = [
        (GroupBy::SizeClass, "By job size class"),
        (GroupBy::User, "By user"),
        (GroupBy::Queue, "By queue"),
        (GroupBy::Partition, "By partition"),
        (GroupBy::Kind, "By job kind"),
    ];
    // Every (grouping, policy) table at once, in parallel, collected in that order.
    let mut tables: Vec<Vec<GroupRow>> = (0..BY.len() * pols.len())
        .into_par_iter()
        .map(|i| tables::group_table(pols[i % pols.len()].rows(), BY[i / pols.len()].0))
        .collect();
    let mut out = Vec::new();
    for (by, title) in BY {
        let per_policy: Vec<Vec<GroupRow>> = tables.drain(..pols.len()).collect();
        let mut keys: Vec<String> = Vec::new();
        for g in per_policy.iter().flatten() {
            if !keys.contains(&g.key) {
                keys.push(g.key.clone());
            }
        }
        if by != GroupBy::SizeClass && keys.len() < 2 {
            continue;
        }
        let mut jain = None;
        if by == GroupBy::User {
            // The most active users of the baseline, most jobs first (ties by id).
            let mut counted: Vec<(u64, i64, String)> = per_policy[0]
                .iter()
                .map(|g| (g.jobs, g.key.parse::<i64>().unwrap_or(i64::MAX), g.key.clone()))
                .collect();
            counted.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            keys = counted.into_iter().take(TOP_USERS).map(|c| c.2).collect();
            jain = Some(pols.par_iter().map(|p| tables::jain_fairness(p.rows())).collect());
        }
        let cells =
            per_policy.iter().map(|t| keys.iter().map(|k| t.iter().find(|g| &g.key == k).cloned()).collect()).collect();
        out.push(Breakdown { by, title, keys, cells, jain });
    }
    out
}

/// The breakdowns' HTML: per key, the jobs and per policy the mean wait and mean bounded
/// slowdown.
pub fn html(h: &mut String, pols: &[PolicyRuns<'_>], bs: &[Breakdown]) {
    for b in bs {
        let _ = write!(h, "<h3>{}</h3>\n<div class=\"wide\"><table><tr><th>{}</th><th>jobs</th>", b.title, b.by.name());
        for p in pols {
            let _ = write!(h, "<th>{} mean wait (s)</th><th>{} mean bsld</th>", esc(&p.label), esc(&p.label));
        }
        h.push_str("</tr>\n");
        for (i, key) in b.keys.iter().enumerate() {
            let jobs = b.cells.first().and_then(|c| c[i].as_ref()).map_or(0, |g| g.jobs);
            let _ = write!(h, "<tr><td>{}</td><td>{jobs}</td>", esc(key));
            for cells in &b.cells {
                match &cells[i] {
                    Some(g) => {
                        let _ = write!(h, "<td>{}</td><td>{}</td>", fmt(g.wait.mean), fmt(g.bsld.mean));
                    }
                    None => h.push_str("<td>–</td><td>–</td>"),
                }
            }
            h.push_str("</tr>\n");
        }
        if let Some(jain) = &b.jain {
            h.push_str("<tr><td>Jain's fairness (all users)</td><td></td>");
            for j in jain {
                let _ = write!(h, "<td colspan=\"2\">{}</td>", j.map_or("–".into(), fmt));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table></div>\n");
    }
}

/// One breakdown as CSV: `group_by,key,label,jobs,wait_mean,wait_p95,bsld_mean,bsld_p95,jain`,
/// a row per key and policy; the by-user table adds a row per policy with key `all` and
/// Jain's fairness index over all users in `jain` (empty elsewhere).
pub fn csv(pols: &[PolicyRuns<'_>], b: &Breakdown) -> std::io::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record(["group_by", "key", "label", "jobs", "wait_mean", "wait_p95", "bsld_mean", "bsld_p95", "jain"])?;
    let f = |v: f64| format!("{v:.3}");
    for (i, key) in b.keys.iter().enumerate() {
        for (p, cells) in pols.iter().zip(&b.cells) {
            if let Some(g) = &cells[i] {
                w.write_record([
                    b.by.name().to_string(),
                    key.clone(),
                    p.label.clone(),
                    g.jobs.to_string(),
                    f(g.wait.mean),
                    f(g.wait.p95),
                    f(g.bsld.mean),
                    f(g.bsld.p95),
                    String::new(),
                ])?;
            }
        }
    }
    if let Some(jain) = &b.jain {
        for (p, j) in pols.iter().zip(jain) {
            let v = j.map(|x| format!("{x:.6}")).unwrap_or_default();
            let empty = String::new;
            w.write_record([
                b.by.name().to_string(),
                "all".into(),
                p.label.clone(),
                empty(),
                empty(),
                empty(),
                empty(),
                empty(),
                v,
            ])?;
        }
    }
    w.into_inner().map_err(|e| std::io::Error::other(e.to_string()))
}
