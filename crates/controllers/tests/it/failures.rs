//! `failures` with periodic checkpoints: a hand-computed interruption, the Monte-Carlo
//! effective training time ratio against Young's first-order formula, and Young's
//! interval at the curve's best.

use sim_core::checkpoint::{CheckpointInterval, Checkpointing};
use sim_core::cluster::{GpuSharing, NodePool, NodeSpec};
use sim_core::{Cluster, Hooks, Job, JobRecord, SimConfig, SimDuration, SimTime};

/// `nodes` 1-core nodes in pool `a`, then one in pool `b`.
fn cluster(nodes: u32) -> Cluster {
    let pool = |name: &str, count| NodePool {
        name: name.into(),
        count,
        spec: NodeSpec::cores_only(1),
        sharing: GpuSharing::Exclusive,
        group: None,
    };
    Cluster { pools: vec![pool("a", nodes), pool("b", 1)] }
}

fn run(nodes: u32, jobs: &[Job], specs: &[&str], seed: u64, ckpt: Option<Checkpointing>) -> Vec<JobRecord> {
    let cluster = cluster(nodes);
    let cfg = SimConfig { checkpointing: ckpt, ..SimConfig::default() };
    let mut p = policies::build("fcfs").unwrap();
    let controllers = specs.iter().enumerate().map(|(i, s)| controllers::build(s, seed, i).unwrap()).collect();
    let hooks = Hooks { controllers, ..Hooks::default() };
    sim_core::simulate_with(&cluster, jobs, p.as_mut(), &cfg, hooks).unwrap().records
}

fn secs(t: Option<SimTime>) -> f64 {
    t.map_or(f64::NAN, |t| t.0 as f64 / 1e6)
}

/// One 1-core job of 10,000 s on node 0 (pool a, which fails; pool b's node does not),
/// checkpointing every 1,000 s at a cost of 100 s, restoring in 50 s. Node 0 fails at F
/// (the controller's first draw), detected 300 s later: the job stops
/// progressing at F and is requeued at F + 300 onto pool b's node at once, where it
/// resumes from its last completed checkpoint (segments of 1,100 s: each completed by F
/// saved 1,000 s) after the restore, writing a checkpoint after each 1,000 s left but the
/// last.
#[test]
fn an_interruption_loses_the_work_since_the_last_checkpoint_and_the_detection() {
    let s = SimDuration::from_secs;
    let ckpt = Checkpointing { interval: CheckpointInterval::Every(s(1000)), cost: s(100), restore: s(50) };
    let spec = ["failures[pool=a,mtbf=1,repair=1,repair_sigma=0,detect=300]"];
    let mut interrupted = 0;
    // Seeds whose first failure comes before the job's end (10,900 s): most of them.
    for seed in 0..10 {
        let job = Job::rigid("A", SimTime::ZERO, 1, s(10_000), s(10_000));
        let a = run(1, &[job], &spec, seed, Some(ckpt))[0].clone();
        if a.attempts == 1 {
            assert_eq!(secs(a.end), 10_900.0, "{a:?}");
            continue;
        }
        interrupted += 1;
        assert_eq!((a.attempts, secs(a.first_start)), (2, 0.0), "{a:?}");
        let f = secs(a.start) - 300.0;
        assert!(f > 0.0 && f < 10_900.0, "failure at {f}");
        let kept = (f / 1100.0).floor().min(9.0) * 1000.0;
        let left = 10_000.0 - kept;
        let writes = ((left - 1e-6) / 1000.0).floor() * 100.0;
        let restore = if kept > 0.0 { 50.0 } else { 0.0 };
        let end = f + 300.0 + restore + left + writes;
        assert!((secs(a.end) - end).abs() < 1e-3, "failure at {f}: end {} expected {end}", secs(a.end));
        // Lost: the compute since the last checkpoint (a write under way counts as
        // writing) and the 300 s until detection; all writes and the restore.
        let rem = f - (f / 1100.0).floor().min(9.0) * 1100.0;
        let l = a.lost;
        assert!((l.failure as f64 / 1e6 - (rem.min(1000.0) + 300.0)).abs() < 1e-3, "{l:?} at {f}");
        assert_eq!((l.restore as f64 / 1e6, l.waiting), (restore, 0));
        assert_life_is_work_and_losses(&a, 10_000);
        // Without checkpoints it starts over: 10,000 s from the requeue.
        let job = Job::rigid("A", SimTime::ZERO, 1, s(10_000), s(10_000));
        let r = run(1, &[job], &spec, seed, None);
        assert!((secs(r[0].end) - (f + 300.0 + 10_000.0)).abs() < 1e-3, "{:?}", r[0]);
    }
    assert!(interrupted >= 5, "only {interrupted} of 10 seeds interrupted the job");
}

/// A completed job's life from its first start is its work and the time it lost.
fn assert_life_is_work_and_losses(r: &JobRecord, work_secs: u64) {
    let l = r.lost;
    let life = r.end.unwrap().0 - r.first_start.unwrap().0;
    let sum = work_secs * 1_000_000
        + l.failure
        + l.eviction
        + l.preemption
        + l.oom
        + l.checkpoint_writes
        + l.restore
        + l.waiting;
    assert_eq!(life, sum, "{r:?}");
}

/// `1 − C/τ − (τ/2 + R)/M`: Young's first-order effective training time ratio.
fn young(c: f64, tau: f64, r: f64, m: f64) -> f64 {
    1.0 - c / tau - (tau / 2.0 + r) / m
}

/// The Monte-Carlo ETTR of one job of 400 days of work on one node of four, each failing
/// with an exponential MTBF of 24 h (detected at once, repaired in 1 h), over `seeds`.
fn ettr(interval: CheckpointInterval, seeds: u64) -> f64 {
    let s = SimDuration::from_secs;
    let work = 400 * 86_400;
    let ckpt = Checkpointing { interval, cost: s(60), restore: s(120) };
    let (mut useful, mut wall) = (0.0, 0.0);
    for seed in 0..seeds {
        let job = Job::rigid("J", SimTime::ZERO, 1, s(work), s(work));
        let r = run(3, &[job], &["failures[mtbf=24,repair=1,repair_sigma=0,detect=0]"], seed, Some(ckpt));
        assert_eq!(r[0].outcome, sim_core::Outcome::Completed);
        assert!(r[0].attempts > 100, "{:?}", r[0]);
        assert_life_is_work_and_losses(&r[0], work);
        useful += work as f64;
        wall += secs(r[0].end) - secs(r[0].first_start);
    }
    useful / wall
}

#[test]
fn monte_carlo_ettr_follows_young_and_auto_is_at_its_best() {
    let (c, r, m) = (60.0, 120.0, 86_400.0);
    let mut best = (0.0, 0.0);
    for tau in [1200u64, 2400, 4800, 7200] {
        let got = ettr(CheckpointInterval::Every(SimDuration::from_secs(tau)), 4);
        let want = young(c, tau as f64, r, m);
        assert!((got - want).abs() < 0.01, "τ = {tau}: ETTR {got:.4}, Young {want:.4}");
        if got > best.0 {
            best = (got, tau as f64);
        }
    }
    // Young's interval sqrt(2·60·86400) = 3,219 s: the best ETTR of all.
    let auto = ettr(CheckpointInterval::Auto { node_mtbf: SimDuration::from_secs(86_400) }, 4);
    assert!((auto - young(c, 3219.0, r, m)).abs() < 0.01, "auto: {auto:.4}");
    assert!(auto >= best.0, "auto {auto:.4} below τ = {} ({:.4})", best.1, best.0);
}

/// The same seed gives the same failures and the same records; another seed does not.
#[test]
fn failures_are_reproducible() {
    let jobs: Vec<Job> = (0..20)
        .map(|i| {
            let d = SimDuration::from_secs(20_000 + 1000 * i);
            Job::rigid(format!("j{i}"), SimTime::from_secs(100 * i), 1, d, d)
        })
        .collect();
    let spec = ["failures[mtbf=5,repair=2,detect=300]"];
    let a = run(4, &jobs, &spec, 3, None);
    assert_eq!(a, run(4, &jobs, &spec, 3, None));
    assert_ne!(a, run(4, &jobs, &spec, 4, None));
    assert!(a.iter().any(|r| r.attempts > 1));
    assert!(a.iter().all(|r| r.outcome == sim_core::Outcome::Completed));
    for (r, j) in a.iter().zip(&jobs) {
        assert_life_is_work_and_losses(r, j.runtime.unwrap().0 / 1_000_000);
    }
}

/// Meta's Llama 3 pre-training (Dubey et al. 2024, §3.3.4, Table 5): 419 unexpected
/// interruptions in 54 days on 16,384 H100s (2,048 servers of 8): 7.76 a day, a per-server
/// MTBF of 54 × 24 × 2048 / 419 = 6,335 h. A gang of 2,048 8-GPU nodes (here 8-unit nodes,
/// 16,384 units) on a cluster of 2,304 whose nodes fail at that rate (`mtbf=6316` h, the
/// 3.8e-3 per node-day rounding), checkpointing at Young's interval, should see
/// 2,048 × 24 / 6,316 = 7.78 interruptions a day of its life.
#[test]
fn a_2048_node_gang_sees_llama_3s_interruption_rate() {
    let s = SimDuration::from_secs;
    let cluster = Cluster {
        pools: vec![NodePool {
            name: "h100".into(),
            count: 2304,
            spec: NodeSpec::cores_only(8),
            sharing: GpuSharing::Exclusive,
            group: None,
        }],
    };
    let days = 60;
    let job = Job::rigid("llama", SimTime::ZERO, 2048 * 8, s(days * 86_400), s(days * 86_400));
    let jobs = [job];
    let spec = "failures[mtbf=6316,detect=300]";
    let node_mtbf = controllers::failures::node_mtbf_of(spec).unwrap().unwrap();
    let ckpt = Checkpointing { interval: CheckpointInterval::Auto { node_mtbf }, cost: s(60), restore: s(120) };
    let cfg = SimConfig { checkpointing: Some(ckpt), ..SimConfig::default() };
    let mut p = policies::build("fcfs").unwrap();
    let hooks = Hooks { controllers: vec![controllers::build(spec, 1, 0).unwrap()], ..Hooks::default() };
    let r = sim_core::simulate_with(&cluster, &jobs, p.as_mut(), &cfg, hooks).unwrap();
    let j = &r.records[0];
    assert_eq!(j.outcome, sim_core::Outcome::Completed);
    let life_days = (secs(j.end) - secs(j.first_start)) / 86_400.0;
    let per_day = f64::from(j.attempts - 1) / life_days;
    let implied = 2048.0 * 24.0 / 6316.0;
    assert!((per_day / implied - 1.0).abs() < 0.10, "{per_day:.2} interruptions a day, the model implies {implied:.2}");
    // Young's interval for M = 6316 h / 2048 = 3.08 h and C = 60 s: 1,490 s; the job's
    // effective training time ratio is then about 1 − 60/1490 − (745 + 120 + 300)/11,102.
    let ettr = days as f64 / life_days;
    assert!((0.84..0.9).contains(&ettr), "ETTR {ettr:.3}");
}

/// Two pools of 2 one-core nodes: `a` in rack `r1`, `c` with no rack.
fn racked() -> Cluster {
    let pool = |name: &str, rack: Option<&str>| {
        let mut spec = NodeSpec::cores_only(1);
        spec.topology.rack = rack.map(String::from);
        NodePool { name: name.into(), count: 2, spec, sharing: GpuSharing::Exclusive, group: None }
    };
    Cluster { pools: vec![pool("a", Some("r1")), pool("c", None)] }
}

fn run_on(cluster: &Cluster, jobs: &[Job], spec: &str, seed: u64) -> Vec<JobRecord> {
    let mut p = policies::build("fcfs").unwrap();
    let hooks = Hooks { controllers: vec![controllers::build(spec, seed, 0).unwrap()], ..Hooks::default() };
    sim_core::simulate_with(cluster, jobs, p.as_mut(), &SimConfig::default(), hooks).unwrap().records
}

/// A and B (1,000 s each) start together on the lowest free nodes: with `domain=2` the
/// blocks {0, 1} and {2, 3} of four nodes fail as one, so the two always share a block and
/// are interrupted together (same attempts, same end); with nodes failing alone they part
/// for some seed. With `domain=rack`, only rack r1's nodes fail, together: C and D, on
/// pool c without a rack, never.
#[test]
fn a_failure_domain_takes_its_nodes_down_together() {
    let s = SimDuration::from_secs;
    let two = |id: &str| Job::rigid(id, SimTime::ZERO, 1, s(1000), s(1000));
    let four = Cluster {
        pools: vec![NodePool {
            name: "a".into(),
            count: 4,
            spec: NodeSpec::cores_only(1),
            sharing: GpuSharing::Exclusive,
            group: None,
        }],
    };
    let (mut together, mut parted) = (0, 0);
    for seed in 0..40 {
        let r = run_on(
            &four,
            &[two("A"), two("B")],
            "failures[domain=2,mtbf=0.5,repair=0.5,repair_sigma=0,detect=60]",
            seed,
        );
        assert_eq!((r[0].attempts, r[0].end), (r[1].attempts, r[1].end), "seed {seed}: {r:?}");
        together += usize::from(r[0].attempts > 1);
        let r = run_on(&four, &[two("A"), two("B")], "failures[mtbf=0.5,repair=0.5,repair_sigma=0,detect=60]", seed);
        parted += usize::from(r[0].attempts != r[1].attempts);
    }
    assert!(together >= 10 && parted >= 5, "interrupted together {together}, parted {parted}");
    let jobs = [two("A"), two("B"), two("C"), two("D")];
    let mut hit = 0;
    for seed in 0..20 {
        let r = run_on(&racked(), &jobs, "failures[domain=rack,mtbf=0.5,repair=0.5,repair_sigma=0,detect=60]", seed);
        assert_eq!((r[0].attempts, r[0].end), (r[1].attempts, r[1].end), "seed {seed}: {r:?}");
        assert_eq!((r[2].attempts, r[3].attempts), (1, 1), "seed {seed}: {r:?}");
        hit += usize::from(r[0].attempts > 1);
    }
    assert!(hit >= 5, "rack r1 failed under its jobs for {hit} seeds of 20");
}

#[test]
fn domains_and_causes_read_back_and_bad_domains_are_refused() {
    for spec in [
        "failures[pool=*,cause=NIC,domain=rack,mtbf=100,dist=exponential,repair=11.8,repair_sigma=1,detect=300]",
        "failures[pool=a,domain=16,mtbf=100,dist=exponential,repair=1,repair_sigma=0,detect=0]",
    ] {
        assert_eq!(controllers::build(spec, 0, 0).unwrap().spec(), spec);
    }
    // The defaults are left out: an older spec reads the same.
    let plain = "failures[pool=*,mtbf=5714,dist=exponential,repair=20.4,repair_sigma=1.94,detect=300]";
    assert_eq!(controllers::build("failures", 0, 0).unwrap().spec(), plain);
    for bad in ["failures[domain=0]", "failures[domain=shelf]"] {
        let e = controllers::build(bad, 0, 0).err().expect(bad).to_string();
        assert!(e.contains("domain"), "{e}");
    }
}

/// Empirical draws: with every time between failures 1 h and every repair 2 h, node 0
/// fails at 3,600 s whatever the seed; its job is requeued at detection (3,900) onto pool
/// b's node and runs its 10,000 s again: it ends at 13,900.
#[test]
fn empirical_samples_are_drawn_from_and_bad_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (tbf, repairs, bad) = (dir.path().join("tbf.txt"), dir.path().join("rep.txt"), dir.path().join("bad.txt"));
    std::fs::write(&tbf, "# hours\n1\n1.0\n").unwrap();
    std::fs::write(&repairs, "2\n").unwrap();
    std::fs::write(&bad, "1\n-3\n").unwrap();
    let spec = format!(
        "failures[pool=a,mtbf=5714,dist=exponential,repair=20.4,repair_sigma=1.94,detect=300,tbf_file={},repair_file={}]",
        tbf.display(),
        repairs.display()
    );
    assert_eq!(controllers::build(&spec, 0, 0).unwrap().spec(), spec);
    let s = SimDuration::from_secs;
    for seed in 0..4 {
        let job = Job::rigid("A", SimTime::ZERO, 1, s(10_000), s(10_000));
        let a = run(1, &[job], &[spec.as_str()], seed, None)[0].clone();
        assert_eq!((a.attempts, secs(a.start), secs(a.end)), (2, 3900.0, 13_900.0), "seed {seed}: {a:?}");
    }
    let e = controllers::build(&format!("failures[repair_file={}]", bad.display()), 0, 0).err().unwrap().to_string();
    assert!(e.contains("repair_file") && e.contains("line 2 has '-3'"), "{e}");
}
