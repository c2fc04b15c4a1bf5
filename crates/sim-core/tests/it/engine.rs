use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason};
use sim_core::units::UnitSet;
use sim_core::{Cluster, EngineError, Job, NodeId, NodeState, Outcome, SimConfig, SimDuration, SimTime, simulate};

fn secs(s: u64) -> SimTime {
    SimTime::from_secs(s)
}

fn job(id: &str, submit: u64, procs: u32, run: u64) -> Job {
    Job::rigid(id, secs(submit), procs, SimDuration::from_secs(run), SimDuration::from_secs(run))
}

/// Starts queue heads while they fit.
struct Greedy;
impl Policy for Greedy {
    fn spec(&self) -> String {
        "greedy".into()
    }
    fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        let mut free = v.free_units();
        for &j in v.queue() {
            if v.job(j).units() > free {
                break;
            }
            free -= v.job(j).units();
            out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
        }
    }
}

/// Starts everything, whether it fits or not.
struct Reckless;
impl Policy for Reckless {
    fn spec(&self) -> String {
        "reckless[x=1]".into()
    }
    fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        for &j in v.queue() {
            out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
        }
    }
}

#[test]
fn invalid_decisions_are_refused_naming_the_policy() {
    let jobs = vec![job("a", 0, 3, 10), job("b", 0, 3, 10)];
    let err = simulate(&Cluster::processor_pool(4), &jobs, &mut Reckless, &SimConfig::default(), None).unwrap_err();
    assert!(matches!(err, EngineError::InvalidDecision { .. }));
    assert_eq!(
        err.to_string(),
        "policy reckless[x=1] made an invalid decision at t=0s: start of job b needing 3 units with 1 free"
    );
}

/// Places the head on units 2-3 explicitly.
struct Explicit;
impl Policy for Explicit {
    fn spec(&self) -> String {
        "explicit".into()
    }
    fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        if let Some(&j) = v.queue().first()
            && v.free_pool().contains_all(&UnitSet::range(2, 2))
        {
            out.push(Decision::Start { job: j, units: Some(UnitSet::range(2, 2)), reason: StartReason::HeadFits });
        }
    }
}

#[test]
fn explicit_placements_are_honoured_and_checked() {
    let jobs = vec![job("a", 0, 2, 10), job("b", 1, 2, 10)];
    let r = simulate(&Cluster::processor_pool(4), &jobs, &mut Explicit, &SimConfig::default(), None).unwrap();
    assert_eq!(r.records[0].units.to_interval_string(), "2-3");
    assert_eq!(r.records[1].start, Some(secs(10)));
    // A placement of the wrong size is refused.
    let jobs = vec![job("a", 0, 3, 10)];
    let err = simulate(&Cluster::processor_pool(4), &jobs, &mut Explicit, &SimConfig::default(), None).unwrap_err();
    assert!(err.to_string().contains("job a needs 3 units, decision gives 2"), "{err}");
}

/// Two 2-core nodes (units 0-1 and 2-3).
fn two_nodes_of_two_cores() -> Cluster {
    Cluster {
        pools: vec![sim_core::NodePool {
            name: "n".into(),
            count: 2,
            spec: sim_core::NodeSpec::cores_only(2),
            sharing: sim_core::GpuSharing::Exclusive,
            group: None,
        }],
    }
}

#[test]
fn node_failure_requeues_its_jobs_and_recovery_restores_capacity() {
    // Two 2-core nodes. a runs on node 0 (units 0-1) from 0; node 0 fails at 5 and comes
    // back at 20. a restarts from scratch on node 1 at 5 (b holds nothing yet).
    let cluster = two_nodes_of_two_cores();
    let jobs = vec![job("a", 0, 2, 10), job("b", 1, 4, 10)];
    let cfg = SimConfig {
        node_events: vec![(secs(5), NodeId(0), NodeState::Down), (secs(20), NodeId(0), NodeState::Up)],
        ..SimConfig::default()
    };
    let r = simulate(&cluster, &jobs, &mut Greedy, &cfg, None).unwrap();
    assert_eq!(r.records[0].start, Some(secs(5)));
    assert_eq!(r.records[0].end, Some(secs(15)));
    assert_eq!(r.records[0].attempts, 2);
    assert_eq!(r.records[0].units.to_interval_string(), "2-3");
    // b needs all 4 cores: only after node 0 is back at 20.
    assert_eq!(r.records[1].start, Some(secs(20)));
    assert_eq!(r.records[1].outcome, Outcome::Completed);
}

#[test]
fn draining_nodes_finish_their_jobs_but_take_no_new_ones() {
    let cluster = Cluster::processor_pool(2);
    let jobs = vec![job("a", 0, 1, 10), job("b", 1, 2, 5)];
    let cfg = SimConfig { node_events: vec![(secs(2), NodeId(0), NodeState::Draining)], ..SimConfig::default() };
    let r = simulate(&cluster, &jobs, &mut Greedy, &cfg, None).unwrap();
    assert_eq!(r.records[0].end, Some(secs(10)));
    assert_eq!(r.records[0].outcome, Outcome::Completed);
    // b needs both units; unit 0 never returns: b is unfinished when events run out.
    assert_eq!(r.records[1].outcome, Outcome::Unfinished);
    assert_eq!(r.records[1].start, None);
}

/// Preempts every running job whenever a new job waits; then starts heads.
struct PreemptOnce {
    done: bool,
}
impl Policy for PreemptOnce {
    fn spec(&self) -> String {
        "preempt-once".into()
    }
    fn schedule(&mut self, v: &SchedView<'_>, info: &PassInfo, out: &mut Vec<Decision>) {
        if !self.done && v.now() == secs(4) && !info.queued.is_empty() {
            self.done = true;
            for r in v.running() {
                out.push(Decision::Preempt { job: r.job });
            }
            return;
        }
        Greedy.schedule(v, info, out);
    }
}

#[test]
fn preempted_jobs_return_to_their_queue_place_and_restart() {
    let jobs = vec![job("long", 0, 4, 10), job("short", 4, 4, 2)];
    let r = simulate(&Cluster::processor_pool(4), &jobs, &mut PreemptOnce { done: false }, &SimConfig::default(), None)
        .unwrap();
    // At 4 long is preempted and requeued at its place (before short); the engine passes
    // again at once: long restarts at 4 and short follows at 14.
    assert_eq!(r.records[0].attempts, 2);
    assert_eq!(r.records[0].start, Some(secs(4)));
    assert_eq!(r.records[0].end, Some(secs(14)));
    assert_eq!(r.records[1].start, Some(secs(14)));
    assert_eq!(r.records[1].outcome, Outcome::Completed);
}

/// Preempts everything and starts the queue head in its place, at every pass: decisions
/// apply in order, so the head gets the preempted units.
struct Livelock;
impl Policy for Livelock {
    fn spec(&self) -> String {
        "livelock".into()
    }
    fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        for r in v.running() {
            out.push(Decision::Preempt { job: r.job });
        }
        if let Some(&j) = v.queue().first() {
            out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
        }
    }
}

#[test]
fn endless_preemption_is_an_error_not_a_hang() {
    let jobs = vec![job("a", 0, 4, 10), job("b", 1, 4, 10)];
    let err = simulate(&Cluster::processor_pool(4), &jobs, &mut Livelock, &SimConfig::default(), None).unwrap_err();
    assert!(matches!(err, EngineError::Livelock { .. }), "{err}");
}

#[test]
fn horizon_leaves_jobs_unfinished() {
    let jobs = vec![job("a", 0, 4, 10), job("b", 1, 4, 10), job("c", 50, 1, 1)];
    let cfg = SimConfig { horizon: Some(secs(15)), ..SimConfig::default() };
    let r = simulate(&Cluster::processor_pool(4), &jobs, &mut Greedy, &cfg, None).unwrap();
    assert_eq!(r.records[0].outcome, Outcome::Completed);
    assert_eq!(r.records[1].outcome, Outcome::Unfinished);
    assert_eq!(r.records[1].start, Some(secs(10)));
    assert_eq!(r.records[1].end, None);
    assert_eq!(r.records[2].outcome, Outcome::Unfinished);
    assert_eq!(r.records[2].start, None);
}

#[test]
fn restart_rules_requeue_back_off_fail_or_hold_an_interrupted_job() {
    use sim_core::restart::Restarts;
    // Two 2-core nodes; a (2 cores, 10 s) is hit by every failure: node 0 down 3–4, node 1
    // down 6–7, node 0 down 9–10. Greedy places the lowest free units.
    let cluster = two_nodes_of_two_cores();
    let jobs = vec![job("a", 0, 2, 10)];
    let run = |restarts: Restarts| {
        let (down, up) = (NodeState::Down, NodeState::Up);
        let cfg = SimConfig {
            node_events: vec![
                (secs(3), NodeId(0), down),
                (secs(4), NodeId(0), up),
                (secs(6), NodeId(1), down),
                (secs(7), NodeId(1), up),
                (secs(9), NodeId(0), down),
                (secs(10), NodeId(0), up),
            ],
            restarts,
            ..SimConfig::default()
        };
        let r = simulate(&cluster, &jobs, &mut Greedy, &cfg, None).unwrap();
        let a = &r.records[0];
        (
            a.outcome,
            a.start.map(|t| t.0 / 1_000_000),
            a.end.map(|t| t.0 / 1_000_000),
            a.attempts,
            a.unfinished_reason.clone(),
        )
    };
    // Requeued every time: started at 0, 3 (node 1), 6 (node 0), 9 (node 1), done at 19.
    assert_eq!(run(Restarts::Always), (Outcome::Completed, Some(9), Some(19), 4, None));
    // Slurm, MaxBatchRequeue=2: the third requeue holds it.
    let (outcome, start, end, attempts, why) = run(Restarts::Slurm { requeue: true, max_requeue: 2 });
    assert_eq!((outcome, start, end, attempts), (Outcome::Unfinished, None, None, 3));
    assert!(why.unwrap().contains("JobHoldMaxRequeue"));
    // --no-requeue: NODE_FAIL at the first failure.
    assert_eq!(run(Restarts::Slurm { requeue: false, max_requeue: 5 }), (Outcome::Failed, Some(0), Some(3), 1, None));
    // Kubernetes Job, backoffLimit 1: the new pod comes after the 10 s back-off (at 13,
    // every node up again) and completes at 23; backoffLimit 0 fails the Job at once.
    let kube = |backoff_limit| Restarts::Kube { backoff_limit, ignore_disruptions: false };
    assert_eq!(run(kube(1)), (Outcome::Completed, Some(13), Some(23), 2, None));
    assert_eq!(run(kube(0)), (Outcome::Failed, Some(0), Some(3), 1, None));
    // Ignoring disruptions: replaced at once, never counted.
    let ignore = Restarts::Kube { backoff_limit: 0, ignore_disruptions: true };
    assert_eq!(run(ignore), (Outcome::Completed, Some(9), Some(19), 4, None));
    // Volcano, maxRetry 1: restarted once (at 3), failed at the second interruption.
    assert_eq!(run(Restarts::Volcano { max_retry: 1 }), (Outcome::Failed, Some(3), Some(6), 2, None));
}
