//! Controller actions, each in a tiny hand-computed scenario under strict FCFS on
//! processor units (one-core nodes), or kube-like binding for taints.

use sim_core::cluster::{NodeId, NodeState};
use sim_core::constraints::{Taint, TaintEffect};
use sim_core::controller::{Action, Controller, Interests, Observed};
use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason};
use sim_core::{Cluster, EngineError, Hooks, Job, Outcome, SimConfig, SimDuration, SimTime};

/// Strict FCFS over free units.
struct Fcfs;

impl Policy for Fcfs {
    fn spec(&self) -> String {
        "test-fcfs".into()
    }
    fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        let mut free = v.free_units();
        for &j in v.queue() {
            let need = v.job(j).units();
            if need > free {
                break;
            }
            free -= need;
            out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
        }
    }
}

/// Returns the scripted actions at their times.
struct Script {
    steps: Vec<(u64, Vec<Action>)>,
    next: usize,
}

impl Controller for Script {
    fn spec(&self) -> String {
        "script".into()
    }
    fn start(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
        out.extend(self.steps.iter().map(|(t, _)| Action::WakeAt { at: SimTime::from_secs(*t) }));
    }
    fn on_timer(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
        out.append(&mut self.steps[self.next].1);
        self.next += 1;
    }
}

fn job(id: &str, submit: u64, units: u32, run: u64) -> Job {
    Job::rigid(id, SimTime::from_secs(submit), units, SimDuration::from_secs(run), SimDuration::from_secs(run))
}

fn run_with(procs: u32, jobs: &[Job], c: Vec<Box<dyn Controller>>) -> Result<sim_core::RunResult, EngineError> {
    let (cluster, cfg) = (Cluster::processor_pool(procs), SimConfig::default());
    let hooks = Hooks { controllers: c, ..Hooks::default() };
    sim_core::simulate_with(&cluster, jobs, &mut Fcfs, &cfg, hooks)
}

fn script(steps: Vec<(u64, Vec<Action>)>) -> Vec<Box<dyn Controller>> {
    vec![Box::new(Script { steps, next: 0 })]
}

fn times(r: &sim_core::RunResult) -> Vec<(Option<u64>, Option<u64>)> {
    let s = |t: Option<SimTime>| t.map(|t| t.as_micros() / 1_000_000);
    r.records.iter().map(|x| (s(x.start), s(x.end))).collect()
}

fn id(i: u32) -> sim_core::JobId {
    sim_core::JobId(i)
}

/// A (1 unit, 100 s) is evicted at 10 with a 5 s grace: it stops at 15 and starts again
/// at once on the free unit, running its whole 100 s again: 15 → 115, two attempts.
#[test]
fn an_eviction_stops_the_job_after_its_grace_period() {
    let evict = Action::Evict { job: id(0), grace: SimDuration::from_secs(5), reason: "test".into() };
    let r = run_with(1, &[job("A", 0, 1, 100)], script(vec![(10, vec![evict])])).unwrap();
    assert_eq!(times(&r), [(Some(15), Some(115))]);
    assert_eq!(r.records[0].attempts, 2);
}

/// A checkpoint at 40 keeps 40 s of A's work: evicted at 60 (no grace), it needs 60 s
/// more and ends at 120 instead of 160.
#[test]
fn a_checkpoint_keeps_the_work_done_before_it() {
    let steps = vec![
        (40, vec![Action::Checkpoint { job: id(0) }]),
        (60, vec![Action::Evict { job: id(0), grace: SimDuration::ZERO, reason: "test".into() }]),
    ];
    let r = run_with(1, &[job("A", 0, 1, 100)], script(steps)).unwrap();
    assert_eq!(times(&r), [(Some(60), Some(120))]);
}

/// A node failure takes its unit away; B (2 units) waits for the repair at 50 while A
/// (on the failed node, unit 0) is requeued and restarts on unit 1 at 20.
#[test]
fn failing_and_repairing_a_node() {
    let steps = vec![
        (20, vec![Action::SetNodeState { node: NodeId(0), state: NodeState::Down }]),
        (50, vec![Action::SetNodeState { node: NodeId(0), state: NodeState::Up }]),
    ];
    let jobs = [job("A", 0, 1, 100), job("B", 30, 2, 10)];
    let r = run_with(2, &jobs, script(steps)).unwrap();
    // A restarts at 20 on unit 1 and ends at 120; B needs both units: 120.
    assert_eq!(times(&r), [(Some(20), Some(120)), (Some(120), Some(130))]);
    // A removed node is not a failure but takes the unit away the same way.
    let steps = vec![(20, vec![Action::SetNodeState { node: NodeId(0), state: NodeState::Absent }])];
    let r = run_with(2, &[job("A", 0, 1, 100)], script(steps)).unwrap();
    assert_eq!(times(&r), [(Some(20), Some(120))]);
}

/// A submitted job gets the next id, arrives now and has a record after the input's.
#[test]
fn a_submitted_job_runs_and_is_recorded() {
    let steps = vec![(5, vec![Action::Submit { job: Box::new(job("X", 0, 1, 7)) }])];
    let r = run_with(2, &[job("A", 0, 1, 100)], script(steps)).unwrap();
    assert_eq!(times(&r), [(Some(0), Some(100)), (Some(5), Some(12))]);
    assert_eq!(r.submitted.len(), 1);
    assert_eq!(r.submitted[0].submit, SimTime::from_secs(5));
    assert_eq!(r.records[1].outcome, Outcome::Completed);
}

/// Observations: a controller interested in starts and ends sees them in order.
#[test]
fn controllers_observe_starts_and_ends_in_order() {
    struct Watch(std::sync::Arc<std::sync::Mutex<Vec<String>>>);
    impl Controller for Watch {
        fn spec(&self) -> String {
            "watch".into()
        }
        fn interests(&self) -> Interests {
            Interests { starts: true, ends: true, arrivals: true, ..Interests::default() }
        }
        fn on_event(&mut self, v: &SchedView<'_>, e: &Observed, _: &mut Vec<Action>) {
            self.0.lock().unwrap().push(format!("{}:{e:?}", v.now().as_micros() / 1_000_000));
        }
    }
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let jobs = [job("A", 0, 1, 10), job("B", 5, 1, 10)];
    run_with(1, &jobs, vec![Box::new(Watch(seen.clone()))]).unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "0:Arrived { job: JobId(0) }",
            "0:Started { job: JobId(0) }",
            "5:Arrived { job: JobId(1) }",
            "10:Ended { job: JobId(0) }",
            "10:Started { job: JobId(1) }",
            "20:Ended { job: JobId(1) }",
        ]
    );
}

/// An impossible action stops the run naming the controller.
#[test]
fn invalid_actions_are_refused() {
    let steps = vec![(1, vec![Action::Evict { job: id(0), grace: SimDuration::ZERO, reason: "x".into() }])];
    let e = run_with(1, &[job("A", 5, 1, 10)], script(steps)).unwrap_err().to_string();
    assert!(e.contains("controller script took an invalid action at t=1s: eviction of job index 0"), "{e}");
    let steps = vec![(1, vec![Action::SetNodeState { node: NodeId(9), state: NodeState::Down }])];
    let e = run_with(1, &[job("A", 5, 1, 10)], script(steps)).unwrap_err().to_string();
    assert!(e.contains("node 9 does not exist"), "{e}");
}

/// A taint keeps pods off a node from the next pass: a binding policy that places on the
/// first untainted node goes to node 1 after node 0 is tainted at 5.
#[test]
fn taints_change_what_binding_policies_see() {
    struct FirstUntainted;
    impl Policy for FirstUntainted {
        fn spec(&self) -> String {
            "first-untainted".into()
        }
        fn binds_nodes(&self) -> bool {
            true
        }
        fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
            let mut taken = vec![false; v.ledger().nodes().len()];
            for &j in v.queue() {
                let free = v.ledger().nodes().iter().enumerate().position(|(i, n)| {
                    !taken[i] && n.meta.taints.is_empty() && n.cpu_milli_left >= v.job(j).task().cpu_milli()
                });
                if let Some(i) = free {
                    taken[i] = true;
                    let binding = vec![sim_core::TaskBinding { node: NodeId(i as u32), gpus: Vec::new() }];
                    out.push(Decision::Bind { job: j, binding: binding.into(), reason: StartReason::Placed });
                }
            }
        }
    }
    let taint = Taint { key: "maintenance".into(), value: String::new(), effect: TaintEffect::NoSchedule };
    let steps = vec![(5, vec![Action::SetTaint { node: NodeId(0), taint }])];
    let jobs = [job("A", 0, 1, 2), job("B", 10, 1, 2)];
    struct Starts(Vec<String>);
    impl sim_core::log::LogSink for Starts {
        fn record(&mut self, _: SimTime, ev: &sim_core::log::LogEvent<'_>) -> std::io::Result<()> {
            if let sim_core::log::LogEvent::Start { job, units, .. } = ev {
                self.0.push(format!("{job} on {units}"));
            }
            Ok(())
        }
    }
    let (cluster, cfg) = (Cluster::processor_pool(2), SimConfig::default());
    let mut log = Starts(Vec::new());
    let hooks = Hooks { controllers: script(steps), log: Some(&mut log), ..Hooks::default() };
    let r = sim_core::simulate_with(&cluster, &jobs, &mut FirstUntainted, &cfg, hooks).unwrap();
    assert_eq!(r.records[1].start, Some(SimTime::from_secs(10)));
    // A went to node 0 (untainted then); B to node 1 (node 0 tainted by then).
    assert_eq!(log.0, ["A on node 0", "B on node 1"]);
}

/// A job whose node selector matches no node is rejected at submit (`no_matching_node`)
/// unless a controller that may relabel nodes is attached: then it waits, and starts when
/// a node gets the label (at 5, on node 1).
#[test]
fn a_selector_no_node_matches_is_rejected_unless_labels_may_change() {
    /// Binds each waiting job to the first free node its selector allows.
    struct FirstMatching;
    impl Policy for FirstMatching {
        fn spec(&self) -> String {
            "first-matching".into()
        }
        fn binds_nodes(&self) -> bool {
            true
        }
        fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
            for &j in v.queue() {
                let allowed =
                    |n: &sim_core::NodeUse| v.job(j).constraints().is_none_or(|c| c.node_matches(&n.meta.labels));
                let free = v.ledger().nodes().iter().position(|n| n.tasks == 0 && allowed(n));
                if let Some(i) = free {
                    let binding = vec![sim_core::TaskBinding { node: NodeId(i as u32), gpus: Vec::new() }];
                    out.push(Decision::Bind { job: j, binding: binding.into(), reason: StartReason::Placed });
                }
            }
        }
    }
    let mut picky = job("P", 0, 1, 10);
    picky.constraints = Some(Box::new(sim_core::constraints::PodConstraints {
        node_selector: [("pool".to_string(), "a100".to_string())].into(),
        ..Default::default()
    }));
    let (cluster, cfg) = (Cluster::processor_pool(2), SimConfig::default());
    let r = sim_core::simulate_with(&cluster, std::slice::from_ref(&picky), &mut FirstMatching, &cfg, Hooks::default());
    let rejected = sim_core::Outcome::Rejected(sim_core::RejectReason::NoMatchingNode);
    assert_eq!(r.unwrap().records[0].outcome, rejected);
    let label = Action::SetLabel { node: NodeId(1), key: "pool".into(), value: "a100".into() };
    let hooks = Hooks { controllers: script(vec![(5, vec![label])]), ..Hooks::default() };
    let r = sim_core::simulate_with(&cluster, &[picky], &mut FirstMatching, &cfg, hooks).unwrap();
    assert_eq!(times(&r), [(Some(5), Some(15))]);
}
