//! `maintenance` on two racks of two 4-core nodes (units 0–7 on rack r1, 8–15 on r2).

use sim_core::cluster::{GpuSharing, NodePool, NodeSpec, TopologyPath};
use sim_core::{Cluster, Hooks, Job, SimConfig, SimDuration, SimTime};

fn cluster() -> Cluster {
    let rack = |name: &str| {
        let mut spec = NodeSpec::cores_only(4);
        spec.topology = TopologyPath { zone: None, rack: Some(name.into()), switch: None };
        NodePool { name: format!("pool-{name}"), count: 2, spec, sharing: GpuSharing::Exclusive, group: None }
    };
    Cluster { pools: vec![rack("r1"), rack("r2")] }
}

fn job(id: &str, submit: u64, units: u32, run: u64) -> Job {
    Job::rigid(id, SimTime::from_secs(submit), units, SimDuration::from_secs(run), SimDuration::from_secs(run))
}

/// Start times (s) of `jobs` under `policy` with the controllers `specs`.
fn starts(policy: &str, specs: &[&str], jobs: &[Job]) -> Vec<Option<u64>> {
    let controllers = specs.iter().enumerate().map(|(i, s)| controllers::build(s, 0, i).unwrap()).collect();
    let mut p = policies::build(policy).unwrap();
    let (cluster, cfg) = (cluster(), SimConfig::default());
    let hooks = Hooks { controllers, ..Hooks::default() };
    let r = sim_core::simulate_with(&cluster, jobs, p.as_mut(), &cfg, hooks).unwrap();
    r.records.iter().map(|r| r.start.map(|t| t.0 / 1_000_000)).collect()
}

/// A: 8 units at 0 for 100 s (rack r1's units, the lowest). r1 drains at 50 until 300.
/// B: 8 units at 60 → r2 is free: 60. C: 4 units at 70 → A's units do not come back
/// when it ends at 100 (draining), r2 is busy until B ends at 160: 160. D: 12 units at
/// 80 → only r2's 8 are up until r1 resumes at 300: 300.
fn workload() -> Vec<Job> {
    vec![job("A", 0, 8, 100), job("B", 60, 8, 100), job("C", 70, 4, 50), job("D", 80, 12, 10)]
}

#[test]
fn draining_a_rack_delays_what_needs_it_until_it_resumes() {
    let spec = "maintenance[rack=r1,at=50,until=300]";
    for policy in ["fcfs", "easy", "conservative"] {
        assert_eq!(starts(policy, &[spec], &workload()), [Some(0), Some(60), Some(160), Some(300)], "{policy}");
    }
    // Without the window: A 0, B 60 (r2), C 100 (A's units), D 160 (when B ends).
    assert_eq!(starts("easy", &[], &workload()), [Some(0), Some(60), Some(100), Some(160)]);
}

/// `mode=down`: at 50 rack r1 goes down and A (on it) is requeued; r2 is free, so A
/// starts again at 50 and runs its 100 s to 150. B (8 at 60) waits for r2: 150, to 250.
/// C (4 at 70) waits behind B, then takes half of r2 when B ends: 250, to 300. D (12 at
/// 80) needs more than r2: it starts when r1 is back up and C has ended, at 300.
#[test]
fn taking_a_rack_down_requeues_its_jobs() {
    let spec = "maintenance[rack=r1,at=50,until=300,mode=down]";
    let s = starts("fcfs", &[spec], &workload());
    assert_eq!(s, [Some(50), Some(150), Some(250), Some(300)]);
}

#[test]
fn specs_are_checked() {
    for (bad, says) in [
        ("maintenance[at=100,until=50]", "cannot be '50' (expected one of: a time after at=100)"),
        ("maintenance[mode=off]", "option 'mode' cannot be 'off'"),
        ("maintenance[depth=1]", "controller 'maintenance': unknown option 'depth'"),
        ("repair", "unknown controller 'repair'"),
    ] {
        let e = controllers::build(bad, 0, 0).err().expect(bad).to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
}
