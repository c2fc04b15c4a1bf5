//! The runnable examples under `examples/`, each with its expected outcome.

use crate::{read, root, run_into};

/// `sim run` on an example's cluster and workload with `extra` flags; it must succeed.
fn run_example(dir: &str, extra: &[&str]) -> tempfile::TempDir {
    let base = root().join("examples").join(dir);
    let (cluster, trace) = (base.join("cluster.toml"), base.join("workload.jsonl"));
    let mut args = vec!["--cluster", cluster.to_str().unwrap(), "--trace", trace.to_str().unwrap(), "--log"];
    args.extend_from_slice(extra);
    let (out, d) = run_into(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    d
}

fn example(dir: &str, policy: &str) -> (String, serde_json::Value) {
    let d = run_example(dir, &["--policy", policy]);
    (read(&d, "jobs.csv"), serde_json::from_str(&read(&d, "summary.json")).unwrap())
}

#[test]
fn gang_deadlock_under_pod_at_a_time_but_not_under_gang_admission() {
    // Pod at a time: both gangs hold 4 GPUs each and wait for ever.
    let (jobs, s) = example("gang-deadlock", "kube[gang=none]");
    assert!(s["gang_held_gpu_hours"].as_f64().unwrap() > 0.0);
    assert_eq!(s["stuck_partial_gangs"], 2);
    // The deadlock is detected: nothing progressed after 100 s, 8 GPUs held.
    assert_eq!(s["deadlock"]["since"].as_f64(), Some(100.0));
    assert_eq!((s["deadlock"]["partial_gangs"].as_u64(), s["deadlock"]["gpus_held"].as_u64()), (Some(2), Some(8)));
    assert_eq!(s["outcomes"]["unfinished"], 2);
    assert!(jobs.contains("train-a,1,,,,,50,6,unfinished,"), "{jobs}");
    // All or nothing: nothing is held, every job completes (train-b first, by priority).
    let (jobs, s) = example("gang-deadlock", "kube[gang=atomic]");
    assert_eq!(s["gang_held_gpu_hours"].as_f64().unwrap(), 0.0);
    assert_eq!((s["stuck_partial_gangs"].as_u64(), s["outcomes"]["completed"].as_u64()), (Some(0), Some(3)));
    assert!(jobs.contains("train-b,2,100,150,"), "{jobs}");
    assert!(jobs.contains("train-a,1,150,200,"), "{jobs}");
    // Permit-wait (Coscheduling): a gang's 5th pod fits nowhere with 4 of 6 placed, so
    // PostFilter gives its 4 back at once: nothing is ever held; train-b starts when
    // warmup ends, train-a after it.
    let (jobs, s) = example("gang-deadlock", "kube[gang=permit-wait]");
    assert_eq!(s["outcomes"]["completed"], 3);
    assert_eq!((s["stuck_partial_gangs"].as_u64(), s["gang_held_gpu_hours"].as_f64()), (Some(0), Some(0.0)));
    assert!(jobs.contains("train-b,2,100,150,") && jobs.contains("train-a,1,150,200,"), "{jobs}");
    assert!(s["deadlock"].is_null() && s["stalled"].is_null());
    // Without PostFilter's rejection (reject=100) only the 60 s permit timeout releases:
    // train-a holds 4 GPUs over [1, 61], then train-b over [61, 100]; same starts.
    let (jobs, s) = example("gang-deadlock", "kube[gang=permit-wait,reject=100]");
    assert_eq!(s["stuck_partial_gangs"], 0);
    assert!(s["gang_held_gpu_hours"].as_f64().unwrap() > 0.0);
    assert!(jobs.contains("train-b,2,100,150,") && jobs.contains("train-a,1,150,200,"), "{jobs}");
    // Kueue: with the quota at the node's 8 GPUs neither gang is admitted while warmup
    // holds 4; at 100 train-b is admitted and placed whole, train-a after it.
    let (jobs, s) = example("gang-deadlock", "kube[gang=kueue]");
    assert_eq!((s["outcomes"]["completed"].as_u64(), s["gang_held_gpu_hours"].as_f64()), (Some(3), Some(0.0)));
    assert!(jobs.contains("train-b,2,100,150,") && jobs.contains("train-a,1,150,200,"), "{jobs}");
    // Over-committed quota (v1beta2: 1800 s, no blockAdmission): both are admitted and
    // hold 4 GPUs each from 100; train-a is evicted at its timeout (1801), its GPUs are
    // free at once and train-b starts then; train-a is admitted again after the 60 s
    // back-off and starts at 1861.
    let (jobs, s) = example("gang-deadlock", "kube[gang=kueue,quota=200]");
    assert_eq!(s["outcomes"]["completed"], 3);
    assert!(s["gang_held_gpu_hours"].as_f64().unwrap() > 0.0);
    assert!(jobs.contains("train-a,1,1861,1911,") && jobs.contains("train-b,2,1801,1851,"), "{jobs}");
    // v1beta1 (blockAdmission): train-b is not admitted while train-a's pods are not all
    // running; train-a completes its gang when warmup ends, train-b follows.
    let (jobs, _) = example("gang-deadlock", "kube[gang=kueue,quota=200,kueue_api=v1beta1]");
    assert!(jobs.contains("train-a,1,100,150,") && jobs.contains("train-b,2,150,200,"), "{jobs}");
}

/// (job, node) of every start in a run's decision log.
fn starts(dir: &str, policy: &str) -> Vec<(String, String)> {
    let d = run_example(dir, &["--policy", policy]);
    read(&d, "decisions.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event"] == "start")
        .map(|v| {
            let units = v["units"].as_str().unwrap();
            (v["job"].as_str().unwrap().to_string(), units.split(" gpu").next().unwrap().to_string())
        })
        .collect()
}

#[test]
fn anti_affinity_spreads_inference_replicas() {
    let s = starts("inference-spread", "kube[score=bestfit]");
    let nodes = |prefix: &str| {
        let mut v: Vec<&String> = s.iter().filter(|(j, _)| j.starts_with(prefix)).map(|(_, n)| n).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    assert_eq!(nodes("spread-"), 4, "{s:?}");
    assert_eq!(nodes("packed-"), 1, "{s:?}");
}

#[test]
fn rack_local_training_avoids_the_cross_switch_slowdown() {
    let run = |policy: &str| {
        let d = run_example("rack-local", &["--cross-switch-slowdown", "25", "--policy", policy]);
        read(&d, "jobs.csv").lines().find(|l| l.starts_with("train,")).unwrap().to_string()
    };
    // Last column: 8 V100s (shipped profile: 300 W at full load) for 1000 s, or 1250 s.
    assert_eq!(run("kube[topology=tree]"), "train,1,1,1001,0,1000,1000,16,completed,,2400000");
    assert_eq!(run("kube[topology=none]"), "train,1,1,1251,0,1250,1000,16,completed,,3000000");
}

#[test]
fn policy_parts_compose_on_the_command_line() {
    let d = run_example(
        "gang-deadlock",
        &["--policy", "easy", "--placement", "bestfit,nodeaffinity=2,interpodaffinity=2", "--gang", "atomic"],
    );
    let s: serde_json::Value = serde_json::from_str(&read(&d, "summary.json")).unwrap();
    assert_eq!(s["policy"], "easy+placement[bestfit,nodeaffinity=2,interpodaffinity=2]+gang[atomic]+topology[none]");
    // In arrival order (EASY's), train-a goes first once 6 GPUs are free.
    let jobs = read(&d, "jobs.csv");
    assert!(jobs.contains("train-a,1,100,150,") && jobs.contains("train-b,2,150,200,"), "{jobs}");
    let (out, _d) = run_into(&["--policy", "easy", "--placement", "bestfit,affinity=2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--placement 'bestfit,affinity=2': unknown plugin 'affinity'")
    );
    let (out, _d) = run_into(&["--policy", "easy", "--gang", "sometimes"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The `controller` events of a run's decision log: (time, what, reason).
fn controller_events(d: &tempfile::TempDir) -> Vec<(f64, String, String)> {
    read(d, "decisions.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event"] == "controller")
        .map(|v| (v["t"].as_f64().unwrap(), v["what"].as_str().unwrap().into(), v["reason"].as_str().unwrap().into()))
        .collect()
}

#[test]
fn gpu_autoscaling_overprovisions_without_the_gpu_label() {
    let base = root().join("examples/gpu-autoscaling");
    let trace = base.join("workload.jsonl");
    let run = |cluster: &str| {
        let c = base.join(cluster);
        let args = ["--cluster", c.to_str().unwrap(), "--trace", trace.to_str().unwrap(), "--policy", "kube", "--log"];
        let (out, d) = run_into(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let s: serde_json::Value = serde_json::from_str(&read(&d, "summary.json")).unwrap();
        (controller_events(&d), s)
    };
    // Without the label: a scale-up at 30 (the GPU pod's 30 s), then one at each loop that
    // finds the newest node Ready without GPUs (120, 210, 300): 4 nodes for one pod.
    let (ev, s) = run("cluster.toml");
    let ups: Vec<f64> = ev.iter().filter(|e| e.1 == "scale-up").map(|e| e.0).collect();
    assert_eq!(ups, [30.0, 120.0, 210.0, 300.0], "{ev:#?}");
    assert!(ev.iter().filter(|e| e.1 == "scale-down").count() == 4, "{ev:#?}");
    // Nodes present 930 + 900 + 900 + 4260 s at 32.77 an hour.
    assert_eq!(s["cost"]["node_hours"]["on-demand"].as_f64().map(|h| (h * 3600.0).round()), Some(6990.0));
    // With it: one node, present from 30 until the pod ends at 3930.
    let (ev, s) = run("cluster-labelled.toml");
    assert_eq!(ev.iter().filter(|e| e.1 == "scale-up").count(), 1, "{ev:#?}");
    assert_eq!(s["cost"]["node_hours"]["on-demand"].as_f64().map(|h| (h * 3600.0).round()), Some(3900.0));
}

/// `sim compare` under `kube` on an example folder's `cluster.toml` and `trace` with the
/// `--vary` flags `vary`, into a temporary folder; it must succeed.
fn compare_example(dir: &str, trace: &str, vary: &[&str]) -> tempfile::TempDir {
    let base = root().join("examples").join(dir);
    let (cluster, trace) = (base.join("cluster.toml"), base.join(trace));
    let out_dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "compare",
        "--quiet",
        "--cluster",
        cluster.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--policies",
        "kube",
        "--out",
        out_dir.path().to_str().unwrap(),
    ];
    for v in vary {
        args.extend(["--vary", v]);
    }
    let out = crate::sim(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out_dir
}

/// A day of inference load beside training on an on-demand and a spot group: `sim
/// compare` over HPA targets and the Cluster Autoscaler's unneeded time writes the bill
/// against the SLO-violation minutes, table and plot, into the report.
#[test]
fn autoscaling_day_compares_cost_against_the_slo() {
    let dir = compare_example(
        "autoscaling-day",
        "training.jsonl",
        &["inference-service.target=10,18", "cluster-autoscaler.scale_down_unneeded_time=120,600"],
    );
    let table = std::fs::read_to_string(dir.path().join("tables/cost_vs_slo.csv")).unwrap();
    let rows: Vec<Vec<String>> = table.lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect();
    assert_eq!(rows.len(), 4, "{table}");
    // (label, cost, SLO minutes) by target: fewer replicas per request violate more.
    let slo = |target: &str, unneeded: &str| -> f64 {
        let r = rows
            .iter()
            .find(|r| r[0].contains(&format!("target={target}")) && r[0].contains(&format!("time={unneeded}")))
            .unwrap();
        r[3].parse().unwrap()
    };
    assert!(slo("18", "600") > slo("10", "600") && slo("18", "120") > slo("10", "120"), "{table}");
    assert!(rows.iter().any(|r| r[5] == "true"), "{table}");
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("Bill against SLO violations"), "the plot is in report.html");
    assert!(dir.path().join("plots/cost_vs_slo.svg").exists());
    // Each run's summary has the service's figures and the bill by capacity type.
    let run = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir() && p.join("summary.json").exists())
        .unwrap();
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    assert!(s["controllers"][0]["figures"]["requests"].as_f64().unwrap() > 1e7, "{s}");
    assert!(s["cost"]["node_hours"]["spot"].as_f64().unwrap() > 0.0, "{s}");
}

/// The VPA on replicas that declare less GPU memory than they use: with `recreate` the
/// out-of-memory kills stop in the first hour; without it they go on; the report plots both.
#[test]
fn vpa_stops_the_out_of_memory_kills_of_shared_gpu_replicas() {
    let dir = compare_example("vpa-gpu-memory", "workload.jsonl", &["inference-service.vpa=none,recreate"]);
    let figures = |vpa: &str| -> serde_json::Value {
        let d = dir.path().join(format!("kube__inference-service_vpa_{vpa}__seed0"));
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap();
        s["controllers"][0].clone()
    };
    let (none, vpa) = (figures("none"), figures("recreate"));
    let kills = |c: &serde_json::Value| c["figures"]["oom_kills"].as_f64().unwrap();
    assert!(kills(&none) > 1000.0 && kills(&vpa) < 100.0, "{none} {vpa}");
    let after_first_hour = |c: &serde_json::Value| {
        c["series"]["oom_kills_per_hour"].as_array().unwrap()[1..].iter().map(|p| p[1].as_f64().unwrap()).sum::<f64>()
    };
    assert!(after_first_hour(&none) > 0.0 && after_first_hour(&vpa) == 0.0, "{none} {vpa}");
    assert!(vpa["figures"]["vpa_target_mib"].as_f64().unwrap() >= 12_000.0);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("Out-of-memory kills per hour") && html.contains("GPUs used by the services per hour"));
}
