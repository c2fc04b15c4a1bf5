//! Gangs under Coscheduling (`kube[gang=permit-wait]`: PostFilter's optimistic
//! rejection, the reject percentage, the group back-off) and Kueue (`kube[gang=kueue]`:
//! waitForPodsReady per configuration API, blockAdmission, requeue order, the requeue
//! limit, partial admission), and the engine's deadlock and spin reports, on hand-computed
//! runs.

use sim_core::{Cluster, Job, NodeId, NodeState, Outcome, RunResult, SimConfig, SimDuration, SimTime, TaskShape};

fn nodes(count: u32, gpus: usize) -> Cluster {
    crate::gpu_nodes(count, gpus)
}

/// A job of `tasks` tasks of one core and `gpus` whole GPUs each, `run` seconds long.
fn gang(id: &str, submit: u64, run: u64, tasks: u32, gpus: u32) -> Job {
    let mut j = Job::rigid(id, SimTime::from_secs(submit), 1, SimDuration::from_secs(run), SimDuration::from_secs(run));
    j.tasks = tasks;
    j.task = TaskShape {
        cores: 1,
        cpu_milli: 1000,
        gpus,
        gpu_milli: if gpus == 0 { 0 } else { 1000 },
        ..TaskShape::default()
    };
    j
}

fn run_cfg(spec: &str, cluster: &Cluster, jobs: &[Job], cfg: &SimConfig) -> RunResult {
    let mut p = policies::build(spec).unwrap();
    sim_core::simulate(cluster, jobs, p.as_mut(), cfg, None).unwrap()
}

fn run(spec: &str, cluster: &Cluster, jobs: &[Job]) -> RunResult {
    run_cfg(spec, cluster, jobs, &SimConfig::default())
}

/// (start, end) of each job in whole seconds.
fn times(r: &RunResult) -> Vec<(Option<u64>, Option<u64>)> {
    let s = |t: Option<SimTime>| t.map(|t| t.0 / 1_000_000);
    r.records.iter().map(|x| (s(x.start), s(x.end))).collect()
}

/// GPU-seconds each job held while its gang was incomplete.
fn held_gpu_secs(r: &RunResult) -> Vec<u64> {
    r.records.iter().map(|x| x.gang_held_gpu_milli_us / 1000 / 1_000_000).collect()
}

/// `examples/gang-deadlock` (one node of 8 GPUs; `warmup` holds 4 until 100; two gangs
/// of 6 one-GPU workers, `train-a` at 1 and `train-b` at 2 with a higher priority) with a
/// one-GPU job `small` submitted at 30.
fn deadlock_with_small() -> (Cluster, Vec<Job>) {
    let mut b = gang("train-b", 2, 50, 6, 1);
    b.priority = 1;
    let jobs = vec![gang("warmup", 0, 100, 1, 4), gang("train-a", 1, 50, 6, 1), b, gang("small", 30, 50, 1, 1)];
    (nodes(1, 8), jobs)
}

#[test]
fn postfilter_rejects_a_gang_that_cannot_reach_its_minimum_at_once() {
    let (c, jobs) = deadlock_with_small();
    // At 1 train-a's 5th pod fits nowhere with 4 of 6 placed: a gap of 2/6 = 33 % > 10 %,
    // so its 4 waiting pods are given back at once (PostFilter); train-b likewise at 2.
    // small fits at 30 and runs to 80. At 100 warmup ends: train-b (priority 1) places
    // all 6 and runs 100–150; train-a, 2 of 6, is rejected again; at 150 it starts (8
    // free) and runs to 200. No GPU is ever held by a partial gang.
    let r = run("kube[gang=permit-wait]", &c, &jobs);
    assert_eq!(times(&r), [(Some(0), Some(100)), (Some(150), Some(200)), (Some(100), Some(150)), (Some(30), Some(80))]);
    assert_eq!(held_gpu_secs(&r), [0, 0, 0, 0]);
    assert!(r.deadlock.is_none() && r.stall.is_none());
    // reject=100 turns PostFilter's rejection off: only the 60 s permit timeout releases.
    // train-a holds 4 GPUs over [1, 61]; at 61 train-b (priority 1) takes them and holds
    // them to 100, when warmup's 4 free GPUs give train-b its last 2 (start 100), small
    // one (start 100; train-a failed at 61, so Coscheduling's QueueSort puts it behind
    // small) and train-a the last one, held [100, 150]; at 150 train-a gets 5 more.
    let r = run("kube[gang=permit-wait,reject=100]", &c, &jobs);
    assert_eq!(
        times(&r),
        [(Some(0), Some(100)), (Some(150), Some(200)), (Some(100), Some(150)), (Some(100), Some(150))]
    );
    // train-a: 4 × 60 + 1 × 50; train-b: 4 × 39.
    assert_eq!(held_gpu_secs(&r), [0, 290, 156, 0]);
}

#[test]
fn a_gap_within_the_reject_percentage_waits_for_the_permit_timeout() {
    // One node of 10 GPUs; X holds one until 100. G, 10 one-GPU pods at 1: 9 fit, a gap
    // of 1/10 = 10 % ≤ 10 %, so they wait; the 60 s permit timeout releases them at 61,
    // they are placed again at once and wait until X ends at 100, when G starts: 9 GPUs
    // held over [1, 100]. With reject=0 any gap rejects: nothing is held, G starts at 100.
    let c = nodes(1, 10);
    let jobs = [gang("X", 0, 100, 1, 1), gang("G", 1, 10, 10, 1)];
    let r = run("kube[gang=permit-wait]", &c, &jobs);
    assert_eq!(times(&r)[1], (Some(100), Some(110)));
    assert_eq!(held_gpu_secs(&r), [0, 9 * 99]);
    let r = run("kube[gang=permit-wait,reject=0]", &c, &jobs);
    assert_eq!(times(&r)[1], (Some(100), Some(110)));
    assert_eq!(held_gpu_secs(&r), [0, 0]);
}

#[test]
fn a_rejected_group_backs_off_for_pod_group_backoff_seconds() {
    let (c, jobs) = deadlock_with_small();
    // backoff=200: train-a, rejected at 1, is not tried before 201; train-b, rejected at
    // 2, not before 202. small runs 30–80, warmup ends at 100 with both backing off. At
    // 201 train-a finds 8 free GPUs and runs to 251; at 202 train-b finds 2, is rejected
    // and backs off to 402, when it runs to 452.
    let r = run("kube[gang=permit-wait,backoff=200]", &c, &jobs);
    assert_eq!(times(&r), [(Some(0), Some(100)), (Some(201), Some(251)), (Some(402), Some(452)), (Some(30), Some(80))]);
    assert_eq!(held_gpu_secs(&r), [0, 0, 0, 0]);
}

#[test]
fn a_deadlock_dates_from_the_cycle_not_from_later_jobs() {
    let (c, mut jobs) = deadlock_with_small();
    // Pod at a time: train-a holds 4 GPUs from 1; small waits; at 100 train-b takes the
    // 4 warmup freed: the cycle forms then. A CPU job submitted at 300 runs 300–310 on
    // the same node; the deadlock still dates from 100.
    jobs.pop();
    jobs.push(gang("cpu", 300, 10, 1, 0));
    let r = run("kube[gang=none]", &c, &jobs);
    assert_eq!(times(&r)[3], (Some(300), Some(310)));
    let d = r.deadlock.expect("a deadlock");
    assert_eq!((d.since, d.partial_gangs, d.gpus_held), (SimTime::from_secs(100), 2, 8));
}

/// The gang-deadlock example under an over-committed Kueue quota (200 %).
fn deadlock_example() -> (Cluster, Vec<Job>) {
    let (c, mut jobs) = deadlock_with_small();
    jobs.pop();
    (c, jobs)
}

#[test]
fn kueue_block_admission_admits_one_job_at_a_time() {
    let (c, jobs) = deadlock_example();
    // v1beta1 (timeout 300 s, blockAdmission on): train-a is admitted at 1 and holds 4
    // GPUs; not running, it blocks train-b's admission. At 100 warmup ends: train-a gets
    // its last 2 and runs 100–150; train-b is admitted then, holds the 2 left and gets 4
    // more when train-a ends: 150–200. Held: train-a 4 × 99, train-b 2 × 50.
    for spec in ["kube[gang=kueue,quota=200,kueue_api=v1beta1]", "kube[gang=kueue,quota=200,block_admission=true]"] {
        let r = run(spec, &c, &jobs);
        assert_eq!(times(&r), [(Some(0), Some(100)), (Some(100), Some(150)), (Some(150), Some(200))], "{spec}");
        assert_eq!(held_gpu_secs(&r), [0, 396, 100], "{spec}");
    }
    // v1beta2 (timeout 1800 s, no blockAdmission): both are admitted; train-a holds 4 from
    // 1, train-b (first by priority) the 4 warmup frees at 100: neither can run until
    // train-a's timeout evicts it at 1801; train-b then starts (1801–1851), train-a is
    // admitted again after its 60 s back-off and runs 1861–1911.
    let r = run("kube[gang=kueue,quota=200]", &c, &jobs);
    assert_eq!(times(&r), [(Some(0), Some(100)), (Some(1861), Some(1911)), (Some(1801), Some(1851))]);
    assert_eq!(held_gpu_secs(&r), [0, 4 * 1800, 4 * 1701]);
}

#[test]
fn kueue_pods_ready_timeouts_follow_the_configuration_api() {
    // Two nodes of 4 GPUs; W takes 2 GPUs of one until 2000. G, 2 tasks × 4 GPUs at 1,
    // admitted against a 200 % quota, places a task on the empty node and waits.
    let c = nodes(2, 4);
    let jobs = [gang("W", 0, 2000, 1, 2), gang("G", 1, 50, 2, 4)];
    // v1beta1, 300 s: evicted at 301, 661, 1081 and 1621 after admissions at 1, 361, 781
    // and 1321 (back-offs 60, 120, 240 s); the 480 s back-off ends at 2101, when W has
    // ended and G runs whole. Held: 4 GPUs × 4 × 300 s.
    let r = run("kube[gang=kueue,quota=200,kueue_api=v1beta1]", &c, &jobs);
    assert_eq!(times(&r)[1], (Some(2101), Some(2151)));
    assert_eq!(held_gpu_secs(&r)[1], 4 * 4 * 300);
    // v1beta2, 1800 s: evicted at 1801, admitted again at 1861, and starts when W ends at
    // 2000. Held: 4 GPUs × (1800 + 139) s.
    let r = run("kube[gang=kueue,quota=200]", &c, &jobs);
    assert_eq!(times(&r)[1], (Some(2000), Some(2050)));
    assert_eq!(held_gpu_secs(&r)[1], 4 * 1939);
    // timeout=0 is v1beta2's default again; under v1beta1 it evicts G one microsecond
    // after each admission.
    assert_eq!(times(&run("kube[gang=kueue,quota=200,timeout=0]", &c, &jobs))[1], (Some(2000), Some(2050)));
}

#[test]
fn kueue_requeues_an_evicted_job_by_its_eviction_time_or_its_creation() {
    // Two nodes of 4 GPUs, the quota the cluster's 8. X (2 GPUs) runs 0–250 on one node.
    // A (2 × 3 GPUs, at 1) is admitted (2 + 6 = 8) but only one task fits (3 GPUs on the
    // other node); timeout=100 evicts it at 101 (back-off to 161). E (4 GPUs, at 40) is
    // admitted then and runs 101–201; D (4 GPUs, at 50) does not fit the quota beside X
    // and E. When E ends at 201 the quota has 6 free: A (6) and D (4) cannot both go.
    let c = nodes(2, 4);
    let jobs = [gang("X", 0, 250, 1, 2), gang("A", 1, 10, 2, 3), gang("E", 40, 100, 1, 4), gang("D", 50, 10, 1, 4)];
    // requeue=eviction (default): A's place is its eviction (101), behind D (50): D runs
    // 201–211; A is admitted at 211, places one task, and the other fits when X ends: 250.
    let r = run("kube[gang=kueue,timeout=100]", &c, &jobs);
    assert_eq!(
        times(&r),
        [(Some(0), Some(250)), (Some(250), Some(260)), (Some(101), Some(201)), (Some(201), Some(211))]
    );
    // requeue=creation: A keeps its place (1): it is admitted at 201 and starts at 250; D
    // is admitted when A ends at 260.
    let r = run("kube[gang=kueue,timeout=100,requeue=creation]", &c, &jobs);
    assert_eq!(
        times(&r),
        [(Some(0), Some(250)), (Some(250), Some(260)), (Some(101), Some(201)), (Some(260), Some(270))]
    );
}

#[test]
fn kueue_deactivates_a_job_requeued_backoff_limit_times() {
    // As above, but W holds its 2 GPUs until 5000: G never becomes ready. With
    // backoff_limit=2 it is evicted at 301 and 661 (requeued twice) and deactivated at
    // its third timeout, 1081: it never runs, its outcome is unfinished with the reason.
    let c = nodes(2, 4);
    let jobs = [gang("W", 0, 5000, 1, 2), gang("G", 1, 50, 2, 4)];
    let r = run("kube[gang=kueue,quota=200,kueue_api=v1beta1,backoff_limit=2]", &c, &jobs);
    let g = &r.records[1];
    assert_eq!((g.outcome, g.start), (Outcome::Unfinished, None));
    assert_eq!(held_gpu_secs(&r)[1], 3 * 4 * 300);
    assert!(g.unfinished_reason.as_deref().unwrap().starts_with("deactivated by Kueue"), "{:?}", g.unfinished_reason);
    assert_eq!(times(&r)[0], (Some(0), Some(5000)));
    assert!(r.deadlock.is_none() && r.stall.is_none());
}

#[test]
fn kueue_admits_an_elastic_job_partially_and_places_no_more() {
    // One node of 4 GPUs; the quota 75 % of it: 3 GPUs. E, 4 one-GPU tasks with a minimum
    // of 2, does not fit whole (4 > 3): it is admitted with 3, the largest count that
    // fits, and exactly 3 pods are placed although the node has room for 4. It starts at
    // once with 3 workers and runs 30 × 4/3 = 40 s; it holds 3 GPUs.
    let c = nodes(1, 4);
    let mut e = gang("E", 0, 30, 4, 1);
    e.min_tasks = 2;
    let r = run("kube[gang=kueue,quota=75]", &c, std::slice::from_ref(&e));
    assert_eq!(times(&r), [(Some(0), Some(40))]);
    assert_eq!(r.records[0].gpu_milli_held, 3000);
    // With the whole quota it is admitted whole: 4 workers, 30 s.
    let r = run("kube[gang=kueue]", &c, std::slice::from_ref(&e));
    assert_eq!((times(&r), r.records[0].gpu_milli_held), (vec![(Some(0), Some(30))], 4000));
    // Under queue=conservative, whose placement binds all tasks in one decision, too.
    let r = run("kube[gang=kueue,quota=75,queue=conservative]", &c, std::slice::from_ref(&e));
    assert_eq!((times(&r), r.records[0].gpu_milli_held), (vec![(Some(0), Some(40))], 3000));
}

#[test]
fn retries_that_see_the_same_cluster_end_the_run() {
    // Two nodes of 4 GPUs; node 1 goes down at 0 for good. G (2 tasks × 4 GPUs, at 1) fits
    // the cluster, but only one task fits what is up.
    let c = nodes(2, 4);
    let cfg = SimConfig { node_events: vec![(SimTime::ZERO, NodeId(1), NodeState::Down)], ..SimConfig::default() };
    let jobs = [gang("G", 1, 50, 2, 4)];
    // Pod at a time: it holds 4 GPUs for ever; nothing is left to happen: a deadlock.
    let r = run_cfg("kube[gang=none]", &c, &jobs, &cfg);
    assert!(r.deadlock.is_some() && r.stall.is_none());
    // PostFilter rejects it (1 of 2); nothing is held, no timer is set: the run ends.
    let r = run_cfg("kube[gang=permit-wait]", &c, &jobs, &cfg);
    assert!(r.deadlock.is_none() && r.stall.is_none());
    assert_eq!(r.records[0].outcome, Outcome::Unfinished);
    // Without rejection the permit timeout releases and the next pass holds again, every
    // 60 s. Each hold leaves a pod unplaced: a failed attempt in kube-scheduler's queue,
    // whose back-off grows 1, 2, 4, 8 s and reaches its 10 s cap at the 5th (the pass at
    // 241); the group's QueueSort time is its last failure from 61 on. At 301 the run sees
    // what it saw at 241 (attempts past the cap change nothing) and ends there.
    let r = run_cfg("kube[gang=permit-wait,reject=100]", &c, &jobs, &cfg);
    let s = r.stall.clone().expect("a stall");
    assert_eq!((s.since, s.at, s.waiting), (SimTime::from_secs(241), SimTime::from_secs(301), 1));
    let why = r.records[0].unfinished_reason.as_deref().unwrap();
    assert!(why.starts_with("stalled: "), "{why}");
    // Kueue (v1beta1, 300 s) evicts it at 301, 661, 1081, 1621, 2401, 3661 and 5881 after
    // admissions at 1, 361, 781, 1321, 2101, 3361 and 5581 (back-offs 60 s doubling to
    // 1920 s, then the 3,600 s cap). Its next back-off is 3,600 s at 5581 and again at
    // 9481: the run sees the same state and ends, 7 × 300 s of 4 GPUs held.
    let r = run_cfg("kube[gang=kueue,kueue_api=v1beta1]", &c, &jobs, &cfg);
    let s = r.stall.clone().expect("a stall");
    assert_eq!((s.since, s.at), (SimTime::from_secs(5581), SimTime::from_secs(9481)));
    assert_eq!(held_gpu_secs(&r), [7 * 4 * 300]);
    let why = r.records[0].unfinished_reason.as_deref().unwrap();
    assert!(why.starts_with("stalled: evicted by Kueue 7 time(s)"), "{why}");
}
