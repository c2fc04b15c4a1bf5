//! The runs of a report grouped by policy, in first-seen order (the first is the
//! baseline): what every section of the page reads.

use super::RunData;
use crate::compare::{self, RunSummary};
use crate::frame::JobRow;

/// One policy's runs.
pub struct PolicyRuns<'a> {
    /// The policy as the user spelled it (its canonical spec when not given).
    pub label: String,
    /// Its canonical spec.
    pub spec: String,
    /// Its runs, by seed as given; one when its runs were alike on an unvaried workload.
    pub runs: Vec<&'a RunData>,
    /// Its runs were alike on an unvaried workload (one deterministic run).
    pub deterministic: bool,
}

impl<'a> PolicyRuns<'a> {
    /// The run the plots and per-job sections show: the first.
    pub fn first(&self) -> &'a RunData {
        self.runs[0]
    }

    /// Every job of every run kept (pooled over seeds).
    pub fn rows(&self) -> impl Iterator<Item = &'a JobRow> + '_ {
        self.runs.iter().flat_map(|r| r.rows.iter())
    }
}

/// The runs grouped by policy, labels made unique (a label given twice gets its spec).
pub fn by_policy(runs: &[RunData]) -> Vec<PolicyRuns<'_>> {
    let summaries: Vec<RunSummary> = runs.iter().map(RunData::run_summary).collect();
    let compared = compare::compare(&summaries);
    let mut out: Vec<PolicyRuns<'_>> = Vec::new();
    for spec in compare::policies(&summaries) {
        let mine: Vec<&RunData> = runs.iter().filter(|r| r.policy() == spec).collect();
        let c = compared.iter().find(|c| c.policy == spec).expect("every policy is compared");
        let runs = if c.deterministic { mine[..1].to_vec() } else { mine };
        out.push(PolicyRuns { label: c.label.clone(), spec, runs, deterministic: c.deterministic });
    }
    let labels: Vec<String> = out.iter().map(|p| p.label.clone()).collect();
    for p in &mut out {
        if labels.iter().filter(|l| **l == p.label).count() > 1 {
            p.label = p.spec.clone();
        }
    }
    out
}
