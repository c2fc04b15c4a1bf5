//! The bill against the SLO: for runs that price their nodes and run inference services
//! (`sim compare` over autoscaler settings), each setting's bill against the minutes its
//! services violated their latency objective, averaged over seeds, and the settings no
//! other beats on both (the Pareto frontier: the cheapest way to each level of service).

use super::RunData;
use crate::compare::metric_value;

/// One setting (a run label) averaged over its seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The run label (policy and varied settings).
    pub label: String,
    /// The legend's name: the varied settings alone (`target=10 scale_down_unneeded_time=600`),
    /// with the policy when several policies ran.
    pub short: String,
    /// Runs averaged.
    pub runs: usize,
    /// Mean bill.
    pub cost: f64,
    /// Mean SLO-violation minutes, every service.
    pub slo_minutes: f64,
    /// Mean of the services' worst p99 latency, seconds.
    pub p99_s: f64,
    /// On the frontier: no other point is cheaper and violates no more.
    pub frontier: bool,
}

/// The points, labels in first-seen order, when runs have both a bill and SLO figures.
pub fn points(runs: &[RunData]) -> Vec<Point> {
    // (label, legend name, each seed's (cost, SLO minutes, p99)).
    type Group = (String, String, Vec<(f64, f64, f64)>);
    let mut groups: Vec<Group> = Vec::new();
    let policies = super::policy_count(runs);
    for r in runs {
        let (Some(cost), Some(slo)) =
            (metric_value(&r.summary, "cost_total"), metric_value(&r.summary, "slo_violation_minutes"))
        else {
            continue;
        };
        let p99 = metric_value(&r.summary, "p99_latency_s").unwrap_or(0.0);
        let label = r.label();
        let short = super::legend_name(r, policies > 1);
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(g) => g.2.push((cost, slo, p99)),
            None => groups.push((label, short, vec![(cost, slo, p99)])),
        }
    }
    let mut out: Vec<Point> = groups
        .into_iter()
        .map(|(label, short, v)| {
            let n = v.len() as f64;
            let mean = |f: fn(&(f64, f64, f64)) -> f64| v.iter().map(f).sum::<f64>() / n;
            Point {
                label,
                short,
                runs: v.len(),
                cost: mean(|x| x.0),
                slo_minutes: mean(|x| x.1),
                p99_s: mean(|x| x.2),
                frontier: false,
            }
        })
        .collect();
    let dominated = |p: &Point, all: &[Point]| {
        all.iter().any(|q| {
            q.cost <= p.cost && q.slo_minutes <= p.slo_minutes && (q.cost < p.cost || q.slo_minutes < p.slo_minutes)
        })
    };
    let flags: Vec<bool> = out.iter().map(|p| !dominated(p, &out)).collect();
    out.iter_mut().zip(flags).for_each(|(p, f)| p.frontier = f);
    out
}

/// `tables/cost_vs_slo.csv`.
pub fn write_csv(w: &mut Vec<u8>, points: &[Point]) -> std::io::Result<()> {
    let mut c = csv::Writer::from_writer(w);
    c.write_record(["label", "runs", "cost", "slo_violation_minutes", "p99_latency_s", "frontier"])?;
    for p in points {
        c.write_record([
            p.label.clone(),
            p.runs.to_string(),
            format!("{:.4}", p.cost),
            format!("{:.3}", p.slo_minutes),
            format!("{:.4}", p.p99_s),
            p.frontier.to_string(),
        ])?;
    }
    c.flush()
}

/// One marker per setting, and the frontier as a line through its points by cost.
pub fn series(points: &[Point]) -> Vec<crate::plots::Series> {
    let mut out: Vec<crate::plots::Series> = points
        .iter()
        .map(|p| crate::plots::Series { name: p.short.clone(), points: vec![(p.cost, p.slo_minutes)] })
        .collect();
    let mut front: Vec<(f64, f64)> = points.iter().filter(|p| p.frontier).map(|p| (p.cost, p.slo_minutes)).collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    if front.len() > 1 {
        out.push(crate::plots::Series { name: "frontier".into(), points: front });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, target: &str, cost: f64, slo: f64) -> RunData {
        let summary = serde_json::json!({
            "policy": "kube", "policy_given": "kube", "variant": { "inference-service.target": target },
            "cost": { "total": cost },
            "controllers": [{ "spec": "inference-service[name=a]", "figures": { "slo_violation_minutes": slo, "p99_s": 1.0 } }],
        });
        RunData { name: name.into(), summary, rows: Vec::new(), fragmentation: Vec::new() }
    }

    /// Cheaper settings violate more; one setting is beaten on both counts and is off the
    /// frontier; seeds of a setting are averaged.
    #[test]
    fn points_average_seeds_and_mark_the_frontier() {
        let runs = [
            run("a1", "5", 100.0, 2.0),
            run("a2", "5", 110.0, 4.0),
            run("b", "10", 60.0, 30.0),
            run("c", "15", 120.0, 40.0),
        ];
        let p = points(&runs);
        assert_eq!(p.len(), 3);
        assert_eq!((p[0].runs, p[0].cost, p[0].slo_minutes), (2, 105.0, 3.0));
        assert_eq!(p.iter().map(|p| p.frontier).collect::<Vec<_>>(), [true, true, false]);
        let s = series(&p);
        assert_eq!(s.last().unwrap().points, [(60.0, 30.0), (105.0, 3.0)]);
    }
}
