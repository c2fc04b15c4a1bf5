//! The checkpoint-interval sweep (`sim compare --vary checkpoint_interval=...`): the share
//! of time lost (1 − ETTR) and the GPU- and core-hours lost against the interval, per
//! policy, with the `auto` run (Young's interval per job) as a level across the curve:
//! the U-shaped curve of Young (1974) and Daly (2006).

use super::RunData;
use serde_json::Value;

/// The runs of one policy with one checkpoint interval, averaged over their seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The policy's label without the interval (other varied settings kept).
    pub policy: String,
    /// The interval as given: seconds, or `auto`.
    pub interval: String,
    /// Runs averaged.
    pub runs: usize,
    /// Mean ETTR (1 when nothing was lost).
    pub ettr: f64,
    /// Mean GPU-hours lost, every cause.
    pub lost_gpu_hours: f64,
    /// Mean core-hours lost, every cause.
    pub lost_core_hours: f64,
    /// Young's interval for a one-node job, seconds, when the run knew the failure rate.
    pub young_1node_s: Option<f64>,
}

impl Point {
    /// The interval in seconds (`None` for `auto`).
    pub fn seconds(&self) -> Option<f64> {
        self.interval.parse().ok()
    }
}

/// The sweep's points, when some run varied the checkpoint interval: policies in
/// first-seen order, each by interval (seconds rising, `auto` last).
pub fn points(runs: &[RunData]) -> Vec<Point> {
    let mut groups: Vec<(String, String, Vec<&RunData>)> = Vec::new();
    for r in runs {
        let Some(interval) = r.summary.pointer("/variant/checkpoint_interval").and_then(Value::as_str) else {
            continue;
        };
        let policy = r.label().replace(&format!(" checkpoint_interval={interval}"), "");
        match groups.iter_mut().find(|g| g.0 == policy && g.1 == interval) {
            Some(g) => g.2.push(r),
            None => groups.push((policy, interval.to_string(), vec![r])),
        }
    }
    let order: Vec<String> = groups.iter().fold(Vec::new(), |mut seen, g| {
        if !seen.contains(&g.0) {
            seen.push(g.0.clone());
        }
        seen
    });
    let mut out: Vec<Point> = groups.into_iter().map(|(policy, interval, rs)| point(policy, interval, &rs)).collect();
    let rank = |p: &Point| {
        (order.iter().position(|o| *o == p.policy), p.seconds().is_none(), p.seconds().unwrap_or(0.0).to_bits())
    };
    // Seconds are non-negative: their bit patterns sort as the numbers do.
    out.sort_by_key(rank);
    out
}

fn point(policy: String, interval: String, rs: &[&RunData]) -> Point {
    let n = rs.len() as f64;
    let mean = |f: &dyn Fn(&RunData) -> f64| rs.iter().map(|r| f(r)).sum::<f64>() / n;
    let lost = |r: &RunData, key: &str| {
        r.summary
            .pointer(&format!("/interruptions/{key}"))
            .and_then(Value::as_object)
            .map_or(0.0, |m| m.values().filter_map(Value::as_f64).sum())
    };
    Point {
        policy,
        interval,
        runs: rs.len(),
        ettr: mean(&|r| r.summary.pointer("/interruptions/ettr").and_then(Value::as_f64).unwrap_or(1.0)),
        lost_gpu_hours: mean(&|r| lost(r, "lost_gpu_hours")),
        lost_core_hours: mean(&|r| lost(r, "lost_core_hours")),
        young_1node_s: rs[0].summary.pointer("/checkpoint/young_1node_s").and_then(Value::as_f64),
    }
}

/// `tables/checkpoint_interval.csv`.
pub fn write_csv(w: &mut Vec<u8>, points: &[Point]) -> std::io::Result<()> {
    let mut c = csv::Writer::from_writer(w);
    c.write_record([
        "policy",
        "checkpoint_interval",
        "runs",
        "ettr",
        "lost_share",
        "lost_gpu_hours",
        "lost_core_hours",
        "young_1node_s",
    ])?;
    for p in points {
        c.write_record([
            p.policy.clone(),
            p.interval.clone(),
            p.runs.to_string(),
            format!("{:.6}", p.ettr),
            format!("{:.6}", 1.0 - p.ettr),
            format!("{:.3}", p.lost_gpu_hours),
            format!("{:.3}", p.lost_core_hours),
            p.young_1node_s.map_or_else(String::new, |y| format!("{y:.0}")),
        ])?;
    }
    c.flush()
}

/// The curves: 1 − ETTR against the interval per policy, and each policy's `auto` run as
/// a level across them.
pub fn series(points: &[Point]) -> Vec<crate::plots::Series> {
    let mut out = Vec::new();
    let mut policies: Vec<&str> = Vec::new();
    for p in points {
        if !policies.contains(&p.policy.as_str()) {
            policies.push(&p.policy);
        }
    }
    for pol in policies {
        let mine: Vec<&Point> = points.iter().filter(|p| p.policy == pol).collect();
        let curve: Vec<(f64, f64)> = mine.iter().filter_map(|p| p.seconds().map(|s| (s, 1.0 - p.ettr))).collect();
        if !curve.is_empty() {
            out.push(crate::plots::Series { name: pol.to_string(), points: curve.clone() });
        }
        // Young's interval differs by job (by its node count): `auto` is a level to compare
        // the curve's minimum with, drawn across the intervals tried.
        if let Some(auto) = mine.iter().find(|p| p.seconds().is_none()) {
            let (lo, hi) = curve.iter().fold((f64::INFINITY, 0f64), |(lo, hi), c| (lo.min(c.0), hi.max(c.0)));
            let (lo, hi) = if curve.is_empty() { auto.young_1node_s.map_or((1.0, 1.0), |y| (y, y)) } else { (lo, hi) };
            out.push(crate::plots::Series {
                name: format!("{pol}, auto"),
                points: vec![(lo, 1.0 - auto.ettr), (hi, 1.0 - auto.ettr)],
            });
        }
    }
    // Young's optimum for a one-node job, √(2·C·M), marked where the curves are: the
    // interval to compare the curves' floor with (wider jobs see their nodes fail more
    // often, and their optimum is shorter).
    let top = out.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0f64, f64::max);
    if let Some(y) = points.iter().find_map(|p| p.young_1node_s)
        && y > 0.0
        && top > 0.0
    {
        out.push(crate::plots::Series { name: format!("Young, 1 node: {y:.0} s"), points: vec![(y, 0.0), (y, top)] });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(interval: &str, ettr: f64) -> Point {
        Point {
            policy: "easy".into(),
            interval: interval.into(),
            runs: 1,
            ettr,
            lost_gpu_hours: 0.0,
            lost_core_hours: 0.0,
            young_1node_s: Some(150.0),
        }
    }

    /// The curve, `auto` as a level across its intervals, and Young's one-node interval
    /// as a vertical mark up to the highest point.
    #[test]
    fn the_curve_auto_and_youngs_interval() {
        let s = series(&[point("100", 0.8), point("200", 0.9), point("auto", 0.95)]);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["easy", "easy, auto", "Young, 1 node: 150 s"]);
        let near = |a: &[(f64, f64)], b: &[(f64, f64)]| {
            a.iter().zip(b).all(|(x, y)| (x.0 - y.0).abs() + (x.1 - y.1).abs() < 1e-9)
        };
        assert!(near(&s[0].points, &[(100.0, 0.2), (200.0, 0.1)]), "{:?}", s[0].points);
        assert!(near(&s[1].points, &[(100.0, 0.05), (200.0, 0.05)]), "{:?}", s[1].points);
        assert!(near(&s[2].points, &[(150.0, 0.0), (150.0, 0.2)]), "{:?}", s[2].points);
    }
}
