//! The inference services' hourly series (`summary.json` `controllers[].series`: OOM kills
//! and GPUs used per hour), one line per setting, averaged over seeds and summed over the
//! services of a run: the with-and-without view of a `sim compare --vary
//! inference-service.vpa=none,recreate`.

use super::RunData;
use serde_json::Value;

/// The series the report draws: (name in `summary.json`, plot file, title, y label).
pub const DRAWN: [(&str, &str, &str, &str); 2] = [
    ("oom_kills_per_hour", "oom_kills_per_hour", "Out-of-memory kills per hour", "OOM kills"),
    ("gpus_per_hour", "gpus_per_hour", "GPUs used by the services per hour", "GPUs"),
];

/// For series `name`: one line per setting (hour start in hours, mean value), named by its
/// varied settings, in first-seen order; empty when no run has it.
pub fn lines(runs: &[RunData], name: &str) -> Vec<crate::plots::Series> {
    // (legend name, each seed's hourly points).
    type Group = (String, Vec<Vec<(f64, f64)>>);
    let mut groups: Vec<Group> = Vec::new();
    let with_policy = super::policy_count(runs) > 1;
    for r in runs {
        let Some(services) = r.summary.get("controllers").and_then(Value::as_array) else { continue };
        let mut sum: Vec<(f64, f64)> = Vec::new();
        for c in services {
            let Some(points) = c.pointer(&format!("/series/{name}")).and_then(Value::as_array) else { continue };
            for (i, p) in points.iter().enumerate() {
                let (t, v) = (p.get(0).and_then(Value::as_f64), p.get(1).and_then(Value::as_f64));
                let (Some(t), Some(v)) = (t, v) else { continue };
                if sum.len() <= i {
                    sum.push((t / 3600.0, 0.0));
                }
                sum[i].1 += v;
            }
        }
        if sum.is_empty() {
            continue;
        }
        let label = super::legend_name(r, with_policy);
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(g) => g.1.push(sum),
            None => groups.push((label, vec![sum])),
        }
    }
    groups
        .into_iter()
        .map(|(label, runs)| {
            let n = runs.len() as f64;
            let longest = runs.iter().map(Vec::len).max().unwrap_or(0);
            let points = (0..longest)
                .map(|i| {
                    let t = runs.iter().find_map(|r| r.get(i)).map_or(i as f64, |p| p.0);
                    (t, runs.iter().map(|r| r.get(i).map_or(0.0, |p| p.1)).sum::<f64>() / n)
                })
                .collect();
            crate::plots::Series { name: label, points }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_averaged_and_services_summed() {
        let run = |name: &str, vpa: &str, a: f64, b: f64| {
            let summary = serde_json::json!({
                "policy": "kube", "policy_given": "kube", "variant": { "inference-service.vpa": vpa },
                "controllers": [
                    { "spec": "inference-service[name=a]", "figures": {}, "series": { "oom_kills_per_hour": [[0.0, a], [3600.0, a]] } },
                    { "spec": "inference-service[name=b]", "figures": {}, "series": { "oom_kills_per_hour": [[0.0, b]] } },
                ],
            });
            RunData { name: name.into(), summary, rows: Vec::new(), fragmentation: Vec::new() }
        };
        let runs = [run("x1", "none", 4.0, 1.0), run("x2", "none", 6.0, 1.0), run("y", "recreate", 2.0, 0.0)];
        let l = lines(&runs, "oom_kills_per_hour");
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].points, [(0.0, 6.0), (1.0, 5.0)]);
        assert_eq!(l[1].points, [(0.0, 2.0), (1.0, 2.0)]);
        assert!(lines(&runs, "gpus_per_hour").is_empty());
    }
}
