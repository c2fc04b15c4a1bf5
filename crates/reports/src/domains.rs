//! Per-domain figures of a run with scheduling domains (Slurm and Kubernetes on one
//! cluster, `sim_core::domain`): each domain's waits and slowdown, the GPU-hours its jobs
//! used, the share of the cluster that is, how busy the nodes it owned were, what it
//! lost to reclaims, and the nodes that moved (`summary.json`, `domains`).
//!
//! The GPU shares, utilizations and idle hours are measured over the **arrival span**
//! (first to last submission, of all domains): while work keeps coming, which is what an
//! arrangement is for. A trace's few long-running pods would otherwise stretch the
//! measure over months of a drained cluster. Attempts lost to interruptions are counted
//! whole (they precede the last start).

use serde::Serialize;
use sim_core::domain::DomainMove;
use sim_core::{Cluster, Job, JobRecord};
use std::collections::BTreeMap;

/// One domain's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DomainFigures {
    /// Its jobs.
    pub jobs: u64,
    /// Its jobs by outcome.
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Mean wait of its jobs that started, seconds (submission to the last start).
    pub wait_mean: f64,
    /// 95th percentile of those waits, seconds.
    pub wait_p95: f64,
    /// Mean bounded slowdown (τ = 10 s) of its jobs that ended.
    pub bounded_slowdown_mean: f64,
    /// GPU-hours its jobs held: their last attempts, attempts killed for memory, and
    /// attempts interrupted (their work lost).
    pub gpu_hours: f64,
    /// Its jobs' GPU-hours over all the cluster's GPU-hours, over the arrival span.
    pub gpu_share: f64,
    /// GPU-hours of the nodes it owned over the arrival span.
    pub owned_gpu_hours: f64,
    /// GPU-hours held on its nodes (by its jobs and the jobs routed to its scheduler) over
    /// its nodes' GPU-hours; absent when it owned no node (its jobs ran on another
    /// domain's, `bridge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_utilization: Option<f64>,
    /// Its nodes' GPU-hours nothing held.
    pub idle_gpu_hours: f64,
    /// Attempts of its jobs interrupted and run again (evictions by a reclaim,
    /// preemptions, failures).
    pub requeues: u64,
    /// GPU-hours of work its jobs lost to those interruptions.
    pub lost_gpu_hours: f64,
    /// Nodes it was given during the run, and nodes it gave up.
    pub nodes_in: u64,
    /// Nodes it gave up.
    pub nodes_out: u64,
    /// What its nodes cost over the arrival span (their pools' `price_per_hour`); absent without
    /// prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// That cost over the GPU-hours of its jobs' completed work; absent without prices
    /// or work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_useful_gpu_hour: Option<f64>,
}

/// What the figures are computed from besides the jobs and their records.
pub struct DomainRun<'a> {
    /// The domains' names, by index.
    pub names: &'a [String],
    /// Each node's owner at the start (empty: the first domain).
    pub initial: &'a [u8],
    /// The nodes that changed owner, in order.
    pub moves: &'a [DomainMove],
    /// Each domain's scheduler at the end of the run (the domain itself unless routed).
    pub schedulers: &'a [u8],
    /// The cluster.
    pub cluster: &'a Cluster,
    /// Each node's price per hour, when the cluster is priced.
    pub node_price: Option<Vec<f64>>,
}

const HOUR_US: f64 = 3.6e9;

/// Each domain's figures, by name.
pub fn compute(run: &DomainRun<'_>, jobs: &[Job], records: &[JobRecord]) -> BTreeMap<String, DomainFigures> {
    let d_count = run.names.len();
    let start = jobs.iter().map(|j| j.submit.0).min().unwrap_or(0);
    let last_submit = jobs.iter().map(|j| j.submit.0).max().unwrap_or(start);
    let end = if last_submit > start {
        last_submit
    } else {
        records.iter().filter_map(|r| r.end.map(|e| e.0)).max().unwrap_or(start).max(start)
    };
    let span = (end - start) as f64;
    let nodes = run.cluster.node_count() as usize;
    // Each node's owned time per domain within [start, end], and each domain's moves.
    let mut owned_gpu_us = vec![0f64; d_count];
    let mut cost = vec![0f64; d_count];
    let (mut nodes_in, mut nodes_out) = (vec![0u64; d_count], vec![0u64; d_count]);
    let mut by_node: Vec<Vec<&DomainMove>> = vec![Vec::new(); nodes];
    for m in run.moves {
        if let Some(v) = by_node.get_mut(m.node.0 as usize) {
            v.push(m);
        }
        nodes_in[m.to as usize] += 1;
        nodes_out[m.from as usize] += 1;
    }
    for (id, spec, _) in run.cluster.nodes() {
        let n = id.0 as usize;
        let gpus = spec.gpus.len() as f64;
        let mut owner = run.initial.get(n).copied().unwrap_or(0) as usize;
        let mut since = start;
        let mut close = |owner: usize, from: u64, to: u64| {
            let t = to.clamp(start, end).saturating_sub(from.clamp(start, end)) as f64;
            owned_gpu_us[owner] += gpus * t;
            if let Some(p) = &run.node_price {
                cost[owner] += p[n] * t / HOUR_US;
            }
        };
        for m in &by_node[n] {
            close(owner, since, m.at.0);
            owner = m.to as usize;
            since = m.at.0.max(start);
        }
        close(owner, since, end);
    }
    let mut out = BTreeMap::new();
    let mut held_on = vec![0f64; d_count];
    let mut rows = Vec::with_capacity(d_count);
    for d in 0..d_count {
        // One domain's jobs at a time: its summary reads slices of them.
        let (js, rs): (Vec<Job>, Vec<JobRecord>) = jobs
            .iter()
            .zip(records)
            .filter(|(j, _)| j.domain as usize == d)
            .map(|(j, r)| (j.clone(), r.clone()))
            .unzip();
        let s = crate::summary::Summary::compute(crate::summary::RunMeta::default(), &js, &rs);
        let lost: f64 = s.interruptions.as_ref().map_or(0.0, |i| {
            ["failure", "eviction", "preemption"].iter().filter_map(|k| i.lost_gpu_hours.get(k)).sum()
        });
        let held = s.gpu_hours + s.wasted_gpu_hours + lost;
        // Within the arrival span: last attempts clipped to it, the rest whole.
        let mut in_span = s.wasted_gpu_hours + lost;
        for (j, r) in js.iter().zip(&rs) {
            if let (Some(a), Some(b), false) = (r.start, r.end, r.outcome == sim_core::Outcome::OomKilled) {
                let t = b.0.min(end).saturating_sub(a.0.max(start)) as f64;
                in_span += t * crate::summary::gpu_milli_held(j, r) as f64 / 1000.0 / HOUR_US;
            }
        }
        let scheduler = run.schedulers.get(d).copied().unwrap_or(d as u8) as usize;
        held_on[scheduler.min(d_count - 1)] += in_span;
        let useful = s.gpu_hours;
        rows.push((d, s, held, in_span, lost, useful));
    }
    let cluster_gpu_hours = run.cluster.total_gpus() as f64 * span / HOUR_US;
    for (d, s, held, in_span, lost, useful) in rows {
        let owned = owned_gpu_us[d] / HOUR_US;
        let priced = run.node_price.is_some();
        out.insert(
            run.names[d].clone(),
            DomainFigures {
                jobs: s.jobs_total,
                outcomes: s.outcomes.clone(),
                wait_mean: s.wait_mean,
                wait_p95: s.wait_p95,
                bounded_slowdown_mean: s.bounded_slowdown_mean,
                gpu_hours: held,
                gpu_share: if cluster_gpu_hours > 0.0 { in_span / cluster_gpu_hours } else { 0.0 },
                owned_gpu_hours: owned,
                gpu_utilization: (owned > 0.0).then(|| held_on[d] / owned),
                idle_gpu_hours: (owned - held_on[d]).max(0.0),
                requeues: s.interruptions.as_ref().map_or(0, |i| i.restarts),
                lost_gpu_hours: lost,
                nodes_in: nodes_in[d],
                nodes_out: nodes_out[d],
                cost: priced.then_some(cost[d]),
                cost_per_useful_gpu_hour: (priced && useful > 0.0).then(|| cost[d] / useful),
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::cluster::{GpuSharing, GpuSpec, NodeId, NodePool, NodeSpec};
    use sim_core::{Outcome, SimDuration, SimTime, TaskShape};

    fn job(id: &str, domain: u8, submit: u64, gpus: u32, run: u64) -> Job {
        let s = SimDuration::from_secs(run);
        let mut j = Job::rigid(id, SimTime::from_secs(submit), 1, s, s);
        j.task = TaskShape { cores: 1, gpus, ..TaskShape::default() };
        j.domain = domain;
        j
    }

    fn ran(start: u64, end: u64) -> JobRecord {
        JobRecord::of(Some(SimTime::from_secs(start)), Some(SimTime::from_secs(end)), Outcome::Completed)
    }

    /// Two nodes of 4 GPUs at 2.00 an hour, node 0 Slurm's, node 1 Kubernetes' until it
    /// moves to Slurm at 1 h. Slurm's A holds 4 GPUs over 0-1 h and C over 2-3 h, the pod B
    /// 2 GPUs over 0-0.5 h. The arrival span is 0-2 h (16 GPU-hours): Slurm owned 8 + 4
    /// of them and held 4 (C starts at its end); Kubernetes owned 4 and held 1.
    #[test]
    fn figures_over_the_arrival_span_with_a_move() {
        let mut spec = NodeSpec::cores_only(8);
        spec.gpus = vec![GpuSpec { model: "A100".into(), memory_mib: 81_920, power: None }; 4];
        let pool = NodePool { name: "g".into(), count: 2, spec, sharing: GpuSharing::Exclusive, group: None };
        let cluster = Cluster { pools: vec![pool] };
        let jobs = [job("A", 0, 0, 4, 3600), job("B", 1, 0, 2, 1800), job("C", 0, 7200, 4, 3600)];
        let records = [ran(0, 3600), ran(0, 1800), ran(7200, 10_800)];
        let names = ["slurm".to_string(), "kubernetes".to_string()];
        let moves = [DomainMove { at: SimTime::from_secs(3600), node: NodeId(1), from: 1, to: 0 }];
        let run = DomainRun {
            names: &names,
            initial: &[0, 1],
            moves: &moves,
            schedulers: &[0, 1],
            cluster: &cluster,
            node_price: Some(vec![2.0, 2.0]),
        };
        let f = compute(&run, &jobs, &records);
        let (s, k) = (&f["slurm"], &f["kubernetes"]);
        assert_eq!((s.jobs, k.jobs), (2, 1));
        assert_eq!((s.owned_gpu_hours, k.owned_gpu_hours), (12.0, 4.0));
        assert_eq!((s.gpu_hours, k.gpu_hours), (8.0, 1.0));
        assert_eq!((s.gpu_share, k.gpu_share), (0.25, 0.0625));
        assert_eq!((s.gpu_utilization, k.gpu_utilization), (Some(4.0 / 12.0), Some(0.25)));
        assert_eq!((s.idle_gpu_hours, k.idle_gpu_hours), (8.0, 3.0));
        assert_eq!((s.nodes_in, s.nodes_out, k.nodes_in, k.nodes_out), (1, 0, 0, 1));
        assert_eq!((s.cost, k.cost), (Some(6.0), Some(2.0)));
        assert_eq!((s.cost_per_useful_gpu_hour, k.cost_per_useful_gpu_hour), (Some(0.75), Some(2.0)));
        assert_eq!((s.wait_mean, s.requeues, s.lost_gpu_hours), (0.0, 0, 0.0));
        // Routed to Slurm (bridge), the pod's GPUs count on Slurm's nodes.
        let bridged = DomainRun { schedulers: &[0, 0], ..run };
        let f = compute(&bridged, &jobs, &records);
        assert_eq!(f["slurm"].gpu_utilization, Some(5.0 / 12.0));
        assert_eq!(f["kubernetes"].gpu_utilization, Some(0.0));
    }
}
