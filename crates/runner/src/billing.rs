//! The bill of a run: each node's hours present × its pool's price per node-hour
//! (`price_per_hour` in the cluster configuration), over the run's span — from the first
//! submission to the last end, the summary's makespan. A node is paid for while it is up,
//! draining or down (a failed on-demand server is still rented); a node removed from the
//! cluster (`Absent`: a spot node reclaimed, a node scaled in) costs nothing until it is
//! back.

use reports::summary::CostReport;
use sim_core::controller::{Action, Controller, Interests, Observed};
use sim_core::policy::SchedView;
use sim_core::{Cluster, Job, JobRecord, NodeState, Outcome, SimTime};
use std::collections::BTreeMap;
use traces::cluster_toml::PoolPrice;

/// When nodes left or rejoined the cluster: (time, node, present).
pub type Presence = Vec<(SimTime, u32, bool)>;

/// Observes node changes for the bill.
pub struct Billing<'a> {
    /// Where it keeps them.
    pub presence: &'a mut Presence,
}

impl Controller for Billing<'_> {
    fn spec(&self) -> String {
        "billing".into()
    }
    fn interests(&self) -> Interests {
        Interests { nodes: true, ..Interests::default() }
    }
    fn may_relabel(&self) -> bool {
        false
    }
    fn on_event(&mut self, view: &SchedView<'_>, event: &Observed, _: &mut Vec<Action>) {
        if let Observed::NodeChanged { node, state } = *event {
            self.presence.push((view.now(), node.0, state != NodeState::Absent));
        }
    }
}

/// Each node's pool price (a pool without a price: free).
pub fn node_prices(cluster: &Cluster, prices: &[PoolPrice]) -> Vec<PoolPrice> {
    let mut node_price: Vec<PoolPrice> = Vec::with_capacity(cluster.node_count() as usize);
    for (pool, price) in cluster.pools.iter().zip(prices.iter().copied().chain(std::iter::repeat(PoolPrice::default())))
    {
        node_price.extend(std::iter::repeat_n(price, pool.count as usize));
    }
    node_price
}

/// The bill of a run of `jobs` (their `records`) on `cluster` whose pools cost `prices`,
/// its nodes present as `presence` says (all present from the start). `None` when no pool
/// has a price.
pub fn bill(
    cluster: &Cluster,
    prices: &[PoolPrice],
    presence: &Presence,
    jobs: &[Job],
    records: &[JobRecord],
) -> Option<CostReport> {
    if prices.iter().all(|p| p.per_hour == 0.0) {
        return None;
    }
    let from = jobs.iter().map(|j| j.submit).min()?;
    let to = records.iter().filter_map(|r| r.end).max().unwrap_or(from).max(from);
    let node_price = node_prices(cluster, prices);
    // Microseconds present within [from, to], per node.
    let mut present_us = vec![0u128; node_price.len()];
    let mut since: Vec<Option<SimTime>> = vec![Some(from); node_price.len()];
    for &(t, n, here) in presence {
        let (t, n) = (t.clamp(from, to), n as usize);
        match (since[n], here) {
            (Some(s), false) => {
                present_us[n] += u128::from(t.0 - s.0);
                since[n] = None;
            }
            (None, true) => since[n] = Some(t),
            _ => {}
        }
    }
    let mut by_capacity: BTreeMap<&'static str, (f64, f64)> = BTreeMap::new();
    let mut total = 0.0;
    for (n, price) in node_price.iter().enumerate() {
        let us = present_us[n] + since[n].map_or(0, |s| u128::from(to.0 - s.0));
        let hours = us as f64 / 3.6e9;
        let e = by_capacity.entry(price.capacity.name()).or_default();
        e.0 += hours;
        e.1 += hours * price.per_hour;
        total += hours * price.per_hour;
    }
    let useful_gpu_hours: f64 = jobs
        .iter()
        .zip(records)
        .filter(|(_, r)| r.outcome == Outcome::Completed)
        .map(|(j, r)| {
            r.work(j.runtime.unwrap_or_default()).0 as f64 / 3.6e9 * f64::from(j.tasks) * f64::from(j.task.gpus)
        })
        .sum();
    Some(CostReport {
        total,
        node_hours: by_capacity.iter().map(|(k, v)| (*k, v.0)).collect(),
        by_capacity: by_capacity.iter().map(|(k, v)| (*k, v.1)).collect(),
        useful_gpu_hours,
        per_useful_gpu_hour: (useful_gpu_hours > 0.0).then(|| total / useful_gpu_hours),
    })
}
