//! `spot`: reclaims with a notice, by a hazard and by an availability trace.

use sim_core::cluster::{GpuSharing, NodePool, NodeSpec};
use sim_core::{Cluster, Hooks, Job, JobRecord, SimConfig, SimDuration, SimTime};

/// A 1-node spot pool, then `od` 1-node on-demand pools.
fn cluster(od: u32) -> Cluster {
    let pool = |name: &str, count| NodePool {
        name: name.into(),
        count,
        spec: NodeSpec::cores_only(1),
        sharing: GpuSharing::Exclusive,
        group: None,
    };
    let mut pools = vec![pool("spot", 1)];
    if od > 0 {
        pools.push(pool("od", od));
    }
    Cluster { pools }
}

fn run(od: u32, jobs: &[Job], spec: &str, seed: u64) -> Vec<JobRecord> {
    let cluster = cluster(od);
    let cfg = SimConfig::default();
    let mut p = policies::build("fcfs").unwrap();
    let hooks = Hooks { controllers: vec![controllers::build(spec, seed, 0).unwrap()], ..Hooks::default() };
    sim_core::simulate_with(&cluster, jobs, p.as_mut(), &cfg, hooks).unwrap().records
}

fn secs(t: Option<SimTime>) -> f64 {
    t.map_or(f64::NAN, |t| t.0 as f64 / 1e6)
}

fn job(run: u64) -> Job {
    Job::rigid("A", SimTime::ZERO, 1, SimDuration::from_secs(run), SimDuration::from_secs(run))
}

/// A 10,000 s job on the spot node (the first), reclaimed at R (a draw) with a 120 s
/// notice: it checkpoints at R, is evicted at R + 120 and restarts at once on the
/// on-demand node with 10,000 − R left: it ends at 10,120 whatever R. Without saving, it
/// starts over: R + 120 + 10,000.
#[test]
fn a_reclaim_notice_saves_the_work_and_evicts_after_it() {
    let mut reclaimed = 0;
    for seed in 0..8 {
        let a = run(1, &[job(10_000)], "spot[pool=spot,reclaim=1,back=1,notice=120]", seed)[0].clone();
        if a.attempts == 1 {
            assert_eq!(secs(a.end), 10_000.0);
            continue;
        }
        reclaimed += 1;
        assert_eq!(a.attempts, 2, "{a:?}");
        assert_eq!(secs(a.end), 10_120.0, "{a:?}");
        let b = run(1, &[job(10_000)], "spot[pool=spot,reclaim=1,back=1,notice=120,save=no]", seed)[0].clone();
        let restart = a.start.unwrap();
        assert_eq!((b.start, b.end), (Some(restart), Some(restart + SimDuration::from_secs(10_000))), "{b:?}");
    }
    assert!(reclaimed >= 6, "{reclaimed} of 8 seeds reclaimed the node within 10,000 s");
}

/// An availability trace of 1000 s ticks: 1, 0, 1 instances. A (4,000 s, spot pool only)
/// starts at 0; at 1000 the node gets its notice, A checkpoints (1,000 s done) and is
/// evicted at 1,120; the node is back at 2,000, where A resumes with 3,000 s left: 5,000.
#[test]
fn an_availability_trace_takes_nodes_away_and_gives_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("avail.json");
    std::fs::write(&trace, r#"{"metadata": {"gap_seconds": 1000}, "data": [1, 0, 1]}"#).unwrap();
    let spec = format!("spot[pool=spot,trace={},notice=120]", trace.display());
    let a = run(0, &[job(4000)], &spec, 0)[0].clone();
    assert_eq!((a.attempts, secs(a.start), secs(a.end)), (2, 2000.0, 5000.0), "{a:?}");
    // The same trace from 500: the notice at 1,500 (1,500 s done), evicted at 1,620, back at
    // 2,500 with 2,500 s left: 5,000 again; from 5,000 it never touches A (ended at 4,000).
    let later = format!("spot[pool=spot,trace={},notice=120,start=500]", trace.display());
    let b = run(0, &[job(4000)], &later, 0)[0].clone();
    assert_eq!((b.attempts, secs(b.start), secs(b.end)), (2, 2500.0, 5000.0), "{b:?}");
    let after = format!("spot[pool=spot,trace={},notice=120,start=5000]", trace.display());
    let c = run(0, &[job(4000)], &after, 0)[0].clone();
    assert_eq!((c.attempts, secs(c.end)), (1, 4000.0), "{c:?}");
    // A bad trace is refused, naming what was expected.
    std::fs::write(&trace, r#"{"metadata": {"gap_seconds": 0}, "data": [1]}"#).unwrap();
    let e = controllers::build(&spec, 0, 0).err().unwrap().to_string();
    assert!(e.contains("gap_seconds"), "{e}");
    assert!(controllers::build("spot[reclaim=1]", 0, 0).is_err());
}
