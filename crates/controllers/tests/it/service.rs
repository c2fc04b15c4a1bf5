//! `inference-service`: load, latency and SLO per interval; the HPA and KEDA scaling its
//! replicas, with exact times.

use crate::cluster_autoscaler::{Log, gpu_pool};
use sim_core::{Cluster, Hooks, Job, SimConfig, SimDuration, SimTime};
use std::collections::BTreeMap;

/// Four 8-GPU nodes, always there (a node group at its maximum).
fn cluster() -> Cluster {
    let mut g = crate::cluster_autoscaler::group(60, 60, 0, 0);
    g.initial = 4;
    Cluster { pools: vec![gpu_pool("gpu", 4, 8, true, g)] }
}

/// A one-second job, so that the run has an input.
fn filler() -> Job {
    Job::rigid("filler", SimTime::ZERO, 1, SimDuration::from_secs(1), SimDuration::from_secs(1))
}

/// The service's figures, the decision log and the records of a run of `opts` on the rate
/// series `csv`.
fn service(csv: &str, opts: &str) -> (BTreeMap<String, f64>, Vec<String>, Vec<sim_core::JobRecord>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rps.csv");
    std::fs::write(&path, csv).unwrap();
    let spec = format!("inference-service[name=chat,rps={},{opts}]", path.display());
    let (cluster, jobs) = (cluster(), [filler()]);
    let mut log = Log::default();
    let mut p = policies::build("kube").unwrap();
    let hooks =
        Hooks { controllers: vec![controllers::build(&spec, 3, 0).unwrap()], log: Some(&mut log), ..Hooks::default() };
    let r = sim_core::simulate_with(&cluster, &jobs, p.as_mut(), &SimConfig::default(), hooks).unwrap();
    let figures = r.controller_reports.first().map(|x| x.1.figures.iter().cloned().collect()).unwrap_or_default();
    (figures, log.0, r.records)
}

/// Two fixed replicas of 8 slots × 0.5 s (16 requests per second each), 10 requests per
/// second for 600 s, replicas serving 120 s after they start (at 0). The 12 intervals
/// before 120 have nothing serving: 2 unserved minutes, 1,200 of 6,000 requests late.
/// After, each replica is an M/M/8 at 5 per second: p99 2.30 s, within a 3 s SLO. The
/// replicas run 0–610 (the series' last point, 600, plus one interval) and complete then.
#[test]
fn fixed_replicas_serve_after_their_startup() {
    let (f, _, records) =
        service("time,rps\n0,10\n600,0\n", "autoscaler=none,replicas=2,slots=8,service_ms=500,slo_ms=3000");
    assert_eq!(f["requests"], 6000.0);
    assert_eq!((f["unserved_minutes"], f["slo_violation_minutes"]), (2.0, 2.0));
    assert!((f["late_share"] - 0.2).abs() < 1e-9, "{f:?}");
    let p99 = latency_p99(8, 0.5, 5.0);
    assert!((f["p99_s"] - p99).abs() < 1e-6 && (p99 - 2.3).abs() < 0.05, "{f:?} {p99}");
    // Counted at the measures of 10 to 600 (at 0 they are not yet placed): 60 × 10 s × 2.
    assert!((f["replica_hours"] - 1200.0 / 3600.0).abs() < 1e-9, "{f:?}");
    let replicas: Vec<_> = records.iter().skip(1).map(|r| (r.outcome.name(), r.end.map(|t| t.0 / 1_000_000))).collect();
    assert_eq!(replicas, [("completed", Some(610)), ("completed", Some(610))]);
    // With a 2 s SLO the serving intervals violate it too.
    let (f, _, _) = service("time,rps\n0,10\n600,0\n", "autoscaler=none,replicas=2,slo_ms=2000");
    assert_eq!(f["slo_violation_minutes"], 10.0);
}

fn latency_p99(slots: u32, service: f64, lambda: f64) -> f64 {
    controllers::service::latency::latency(controllers::service::latency::Model::MMc, slots, service, lambda)
        .unwrap()
        .p99
}

/// The HPA on requests per replica, target 70 % of 16 = 11.2. At 300 the rate jumps from
/// 10 to 60: the sync at 300 wants ceil(60 / 11.2) = 6, limited to max(2 × 1, 4) = 4.
/// At 900 it drops to 10: the syncs want 1, but the 5-minute stabilization keeps 6 until
/// the last recommendation of 6 (885) is older than 300 s: 6 → 1 at 1200.
#[test]
fn the_hpa_scales_with_the_rate_and_stabilizes_scale_down() {
    let (f, log, _) = service("time,rps\n0,10\n300,60\n900,10\n1800,0\n", "autoscaler=hpa,replicas=1,max=10");
    let scales: Vec<&String> = log.iter().filter(|l| l.starts_with("scale@")).collect();
    assert!(scales[0].starts_with("scale@0: service chat: 0 → 1 replicas"), "{scales:#?}");
    assert!(scales[1].starts_with("scale@300: service chat: 1 → 4 replicas"), "{scales:#?}");
    assert_eq!(f["most_replicas"], 6.0, "{scales:#?}");
    let down = scales.iter().find(|l| l.contains("6 → 1")).unwrap();
    assert!(down.starts_with("scale@1200:"), "{scales:#?}");
}

/// KEDA from zero: the rate is 0 until 60, then 20 until 600. The poll at 60 activates
/// (0 → 1); its HPA at 75 wants ceil(20 / 11.2) = 2. The last active poll is at 570; 300 s
/// later, at 870, KEDA scales to zero.
#[test]
fn keda_scales_from_and_to_zero() {
    let (f, log, _) = service("time,rps\n0,0\n60,20\n600,0\n1500,0\n", "autoscaler=keda,replicas=0,min=0,max=10");
    let scales: Vec<&String> = log.iter().filter(|l| l.starts_with("scale@")).collect();
    let at: Vec<&str> = scales.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(at, ["scale@60", "scale@75", "scale@870"], "{scales:#?}");
    assert!(scales[2].contains("2 → 0 replicas"), "{scales:#?}");
    assert_eq!(f["most_replicas"], 2.0);
}

/// Two nodes of four A100s shared with per-pod memory limits (`isolated`, HAMi-style).
fn shared_gpus() -> Cluster {
    let gpu = sim_core::GpuSpec { model: "A100".into(), memory_mib: 40_960, power: None };
    let spec = sim_core::NodeSpec { gpus: vec![gpu; 4], memory_mib: 262_144, ..sim_core::NodeSpec::cores_only(64) };
    let sharing = sim_core::GpuSharing::Isolated;
    Cluster { pools: vec![sim_core::NodePool { name: "shared".into(), count: 2, spec, sharing, group: None }] }
}

/// Four replicas, each half of a GPU on `isolated` (HAMi-style) GPUs, declaring 8,000 MiB
/// of GPU memory but peaking at 12,000: each is killed for it soon after it starts, over and
/// over. With the VPA in `recreate` mode each kill bumps its recommendation (× 1.2); the
/// replicas are recreated above their peak and the kills stop; without it they go on.
#[test]
fn the_vpa_stops_out_of_memory_kills() {
    let cluster = shared_gpus();
    let (jobs, cfg) = ([filler()], SimConfig::default());
    let run = |vpa: &str| {
        let spec = format!(
            "inference-service[name=chat,autoscaler=none,replicas=4,gpu_milli=500,gpu_memory=8000,gpu_peak=12000,\
             mean=20,amplitude=0,days=0.5,vpa={vpa}]"
        );
        let mut p = policies::build("kube").unwrap();
        let hooks = Hooks { controllers: vec![controllers::build(&spec, 3, 0).unwrap()], ..Hooks::default() };
        let r = sim_core::simulate_with(&cluster, &jobs, p.as_mut(), &cfg, hooks).unwrap();
        r.controller_reports[0].1.clone()
    };
    let figure = |r: &sim_core::controller::Report, k: &str| r.figures.iter().find(|f| f.0 == k).unwrap().1;
    let series = |r: &sim_core::controller::Report, k: &str| r.series.iter().find(|f| f.0 == k).unwrap().1.clone();
    let (without, with) = (run("none"), run("recreate"));
    let (a, b) = (figure(&without, "oom_kills"), figure(&with, "oom_kills"));
    assert!(b < a / 4.0 && b > 0.0, "{a} kills without the VPA, {b} with it");
    assert!(figure(&with, "vpa_target_mib") >= 12_000.0, "{with:?}");
    // The last hours: kills go on without the VPA, none with it.
    let late =
        |r: &sim_core::controller::Report| series(r, "oom_kills_per_hour").iter().skip(4).map(|p| p.1).sum::<f64>();
    assert!(late(&without) > 0.0 && late(&with) == 0.0, "{without:?} {with:?}");
    // GPUs used per hour: 4 replicas of half a GPU when they run.
    assert!(series(&with, "gpus_per_hour").iter().skip(2).all(|p| (p.1 - 2.0).abs() < 0.2), "{with:?}");
}

/// The same jump under the other metrics and settings: on the busy share of the slots (70 %)
/// or on the requests waiting (1), the sync at 300 wants more than 4 and gets 4; with
/// Kubernetes' default `behavior` the scale-up limit is max(+4 pods, +100 %) per 15 s: 5;
/// with a 60 s downscale window the scale-down comes at 960 instead of 1200.
#[test]
fn the_hpa_metric_behavior_and_window_are_options() {
    let csv = "time,rps\n0,10\n300,60\n900,10\n1800,0\n";
    let scales = |opts: &str| -> Vec<String> {
        let (_, log, _) = service(csv, &format!("autoscaler=hpa,replicas=1,max=10,{opts}"));
        log.into_iter().filter(|l| l.starts_with("scale@")).collect()
    };
    for metric in ["utilization", "queue"] {
        let s = scales(&format!("metric={metric}"));
        assert!(s[1].starts_with("scale@300: service chat: 1 → 4 replicas"), "{metric}: {s:#?}");
    }
    let s = scales("behavior=default");
    assert!(s[1].starts_with("scale@300: service chat: 1 → 5 replicas"), "{s:#?}");
    let s = scales("down_window=60");
    let down = s.iter().find(|l| l.contains("→ 1 replicas") && !l.starts_with("scale@0")).unwrap();
    assert!(down.starts_with("scale@960:"), "{s:#?}");
}

/// Replicas killed for running out of GPU memory back off before they are re-created; a
/// scale-down then (KEDA to zero when the load stops at 1,800 s) deletes them for good
/// (`oom_killed`) and the run goes on.
#[test]
fn replicas_backing_off_can_be_scaled_down() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rps.csv");
    std::fs::write(&path, "time,rps\n0,30\n1800,0\n3600,0\n").unwrap();
    let spec = format!(
        "inference-service[name=llm,rps={},autoscaler=keda,replicas=0,min=0,max=6,gpu_milli=500,gpu_memory=8000,gpu_peak=12000]",
        path.display()
    );
    let (cluster, jobs, cfg) = (shared_gpus(), [filler()], SimConfig::default());
    let mut p = policies::build("kube").unwrap();
    let hooks = Hooks { controllers: vec![controllers::build(&spec, 3, 0).unwrap()], ..Hooks::default() };
    let r = sim_core::simulate_with(&cluster, &jobs, p.as_mut(), &cfg, hooks).unwrap();
    let replicas: Vec<_> = r.records.iter().skip(1).collect();
    assert!(!replicas.is_empty() && replicas.iter().all(|x| x.outcome != sim_core::Outcome::Unfinished));
    assert!(replicas.iter().any(|x| x.outcome == sim_core::Outcome::OomKilled), "{replicas:?}");
    assert!(replicas.iter().all(|x| x.end.is_some_and(|e| e <= SimTime::from_secs(3610))), "{replicas:?}");
}
