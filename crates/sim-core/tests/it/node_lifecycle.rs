//! Kubernetes' node lifecycle under a policy that binds nodes: NoExecute taints evicting
//! pods after their tolerations, a failed node's pods kept bound until the node
//! lifecycle controller's `unreachable` taint and their 300 s default toleration evict
//! them, a node back before that. Each scenario is hand-computed; the times and nodes are
//! pinned exactly.

use sim_core::cluster::{NodeId, NodeState};
use sim_core::constraints::{PodConstraints, TAINT_UNREACHABLE, Taint, TaintEffect, Toleration};
use sim_core::controller::{Action, Controller};
use sim_core::engine::{NODE_MONITOR_GRACE_V1_31, NodeLifecycle};
use sim_core::log::{LogEvent, LogSink};
use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason};
use sim_core::{
    Cluster, GpuSharing, GpuSpec, Hooks, Job, NodePool, NodeSpec, Outcome, RestartPolicy, RunResult, SimConfig,
    SimDuration, SimTime, TaskBinding, TaskShape,
};

/// Binds each waiting one-task job to the first node (in id order) that is up, whose
/// NoSchedule and NoExecute taints it tolerates and that has a whole GPU free (as
/// kube-scheduler's NodeUnschedulable, TaintToleration and GPU fit filters would, with
/// the lowest node winning ties).
struct FirstFit;

impl Policy for FirstFit {
    fn spec(&self) -> String {
        "first-fit".into()
    }
    fn binds_nodes(&self) -> bool {
        true
    }
    fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        let mut taken = vec![false; v.ledger().nodes().len()];
        for &j in v.queue() {
            let tolerates = |n: &sim_core::NodeUse| {
                let none = PodConstraints::default();
                v.job(j).constraints().unwrap_or(&none).tolerates_all(&n.meta.taints)
            };
            let fit = v.ledger().nodes().iter().enumerate().position(|(i, n)| {
                !taken[i] && v.node_states()[i] == NodeState::Up && tolerates(n) && n.free_gpus() == 1
            });
            if let Some(i) = fit {
                taken[i] = true;
                let binding = vec![TaskBinding { node: NodeId(i as u32), gpus: vec![0] }];
                out.push(Decision::Bind { job: j, binding: binding.into(), reason: StartReason::Placed });
            }
        }
    }
}

/// `n` nodes of 8 cores and one 16000 MiB GPU.
fn nodes(n: u32) -> Cluster {
    let spec = NodeSpec {
        cores: 8,
        memory_mib: 65_536,
        gpus: vec![GpuSpec { model: "V100M16".into(), memory_mib: 16_000, power: None }],
        labels: Default::default(),
        taints: Vec::new(),
        topology: Default::default(),
    };
    Cluster { pools: vec![NodePool { name: "n".into(), count: n, spec, sharing: GpuSharing::Exclusive, group: None }] }
}

/// A one-GPU job submitted at `submit` that runs `run` seconds.
fn gpu_job(id: &str, submit: u64, run: u64) -> Job {
    let s = SimDuration::from_secs(run);
    let mut j = Job::rigid(id, SimTime::from_secs(submit), 1, s, s);
    j.task = TaskShape { cores: 1, gpus: 1, ..TaskShape::default() };
    j
}

fn tolerating(mut j: Job, key: Option<&str>, effect: Option<TaintEffect>, secs: Option<u64>) -> Job {
    let t =
        Toleration { key: key.map(Into::into), exists: true, value: String::new(), effect, toleration_seconds: secs };
    j.constraints.get_or_insert_with(Default::default).tolerations.push(t);
    j
}

fn taint(key: &str, effect: TaintEffect) -> Taint {
    Taint { key: key.into(), value: String::new(), effect }
}

/// Returns its scripted actions at their times.
struct Script(Vec<(u64, Vec<Action>)>, usize);

impl Controller for Script {
    fn spec(&self) -> String {
        "script".into()
    }
    fn start(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
        out.extend(self.0.iter().map(|(t, _)| Action::WakeAt { at: SimTime::from_secs(*t) }));
    }
    fn on_timer(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
        out.append(&mut self.0[self.1].1);
        self.1 += 1;
    }
}

/// The decision log's starts (`id@t on node n gpu 0`) and requeues (`id@t: reason`).
#[derive(Default)]
struct Log(Vec<String>);

impl LogSink for Log {
    fn record(&mut self, now: SimTime, ev: &LogEvent<'_>) -> std::io::Result<()> {
        let t = now.0 / 1_000_000;
        match ev {
            LogEvent::Start { job, units, .. } => self.0.push(format!("{job}@{t} on {units}")),
            LogEvent::Requeue { job, reason } => self.0.push(format!("{job}@{t}: {reason}")),
            _ => {}
        }
        Ok(())
    }
}

fn run(cluster: &Cluster, jobs: &[Job], cfg: &SimConfig, steps: Vec<(u64, Vec<Action>)>) -> (RunResult, Vec<String>) {
    let mut log = Log::default();
    let controllers: Vec<Box<dyn Controller>> =
        if steps.is_empty() { Vec::new() } else { vec![Box::new(Script(steps, 0))] };
    let hooks = Hooks { controllers, log: Some(&mut log), ..Hooks::default() };
    let r = sim_core::simulate_with(cluster, jobs, &mut FirstFit, cfg, hooks).unwrap();
    (r, log.0)
}

fn secs(t: Option<SimTime>) -> Option<u64> {
    t.map(|t| t.0 / 1_000_000)
}

fn spans(r: &RunResult) -> Vec<(Option<u64>, Option<u64>)> {
    r.records.iter().map(|x| (secs(x.start), secs(x.end))).collect()
}

/// At 100 nodes 0–2 are tainted `dedicated` NoSchedule and NoExecute (a cordon with
/// eviction). `none` (node 0) tolerates nothing: evicted at 100, re-placed at once on the
/// first untainted node, 3. `sixty` (node 1) tolerates the NoExecute taint for 60 s:
/// evicted at 100 + 60 = 160, re-placed on node 4 (it does not tolerate NoSchedule).
/// `forever` (node 2) tolerates it without seconds: stays and ends at 1000. Work is lost:
/// `none` ends at 100 + 1000 = 1100, `sixty` at 160 + 1000 = 1160.
#[test]
fn a_no_execute_taint_evicts_after_each_pods_toleration() {
    let ne = Some(TaintEffect::NoExecute);
    let jobs = [
        gpu_job("none", 0, 1000),
        tolerating(gpu_job("sixty", 0, 1000), Some("dedicated"), ne, Some(60)),
        tolerating(gpu_job("forever", 0, 1000), Some("dedicated"), ne, None),
    ];
    let taints = (0..3).flat_map(|n| {
        [TaintEffect::NoSchedule, TaintEffect::NoExecute]
            .map(|effect| Action::SetTaint { node: NodeId(n), taint: taint("dedicated", effect) })
    });
    let (r, log) = run(&nodes(5), &jobs, &SimConfig::default(), vec![(100, taints.collect())]);
    assert_eq!(spans(&r), [(Some(100), Some(1100)), (Some(160), Some(1160)), (Some(0), Some(1000))]);
    assert_eq!(
        log,
        [
            "none@0 on node 0 gpu 0",
            "sixty@0 on node 1 gpu 0",
            "forever@0 on node 2 gpu 0",
            "none@100: evicted: node 0's NoExecute taint dedicated is not tolerated",
            "none@100 on node 3 gpu 0",
            "sixty@160: evicted: node 1's NoExecute taint dedicated tolerated for 60 s",
            "sixty@160 on node 4 gpu 0",
        ]
    );
    assert_eq!((r.records[0].attempts, r.records[1].attempts, r.records[2].attempts), (2, 2, 1));
}

/// The eviction keeps the time it was first given: `two` tolerates the NoExecute taints
/// `a` for 60 s and `b` for 30 s. `a` at 100 (with `a:NoSchedule`, which it does not
/// tolerate, so that it is re-placed elsewhere) schedules its eviction at 160; `b` at 110
/// would say 110 + 30 = 140, but a pending eviction queued earlier is kept (the taint
/// eviction controller's `processPodOnNode`): evicted at 160, re-placed on node 1, ends at
/// 160 + 1000. Removing the taints before then cancels it: with both cleared at 150, it
/// ends at 1000 where it started.
#[test]
fn a_pending_taint_eviction_keeps_its_time_and_is_cancelled_by_removing_the_taints() {
    let ne = Some(TaintEffect::NoExecute);
    let two = tolerating(tolerating(gpu_job("two", 0, 1000), Some("a"), ne, Some(60)), Some("b"), ne, Some(30));
    let set = |key: &str| Action::SetTaint { node: NodeId(0), taint: taint(key, TaintEffect::NoExecute) };
    let cordon = Action::SetTaint { node: NodeId(0), taint: taint("a", TaintEffect::NoSchedule) };
    let steps = vec![(100, vec![set("a"), cordon]), (110, vec![set("b")])];
    let (r, log) = run(&nodes(2), std::slice::from_ref(&two), &SimConfig::default(), steps.clone());
    assert_eq!(spans(&r), [(Some(160), Some(1160))]);
    assert_eq!(
        log[1..],
        ["two@160: evicted: node 0's NoExecute taint a tolerated for 60 s", "two@160 on node 1 gpu 0"]
    );
    let clear = |key: &str| Action::ClearTaint { node: NodeId(0), key: key.into() };
    let steps = [steps, vec![(150, vec![clear("a"), clear("b")])]].concat();
    let (r, _) = run(&nodes(2), &[two], &SimConfig::default(), steps);
    assert_eq!((spans(&r), r.records[0].attempts), (vec![(Some(0), Some(1000))], 1));
}

/// Node 0 fails at 1000 under the Kubernetes node lifecycle. `a` (started at 0 on node 0,
/// 5000 s) stays bound there without progress; the node lifecycle controller taints the
/// node `unreachable:NoExecute` at 1000 + 50 (node-monitor-grace-period, v1.32+) = 1050;
/// `a` declares no toleration of it, so the DefaultTolerationSeconds one applies: evicted
/// at 1050 + 300 = 1350 and re-placed on node 1 at once, where it runs its 5000 s again:
/// ends at 6350.
#[test]
fn a_failed_nodes_pod_is_evicted_after_the_grace_period_and_its_default_toleration() {
    let cfg =
        SimConfig { node_events: vec![(SimTime::from_secs(1000), NodeId(0), NodeState::Down)], ..Default::default() };
    let (r, log) = run(&nodes(2), &[gpu_job("a", 0, 5000)], &cfg, Vec::new());
    assert_eq!((spans(&r), r.records[0].attempts), (vec![(Some(1350), Some(6350))], 2));
    assert_eq!(
        log,
        [
            "a@0 on node 0 gpu 0",
            "a@1350: evicted: node 0's NoExecute taint node.kubernetes.io/unreachable tolerated for 300 s",
            "a@1350 on node 1 gpu 0",
        ]
    );
    // Kubernetes v1.31's grace period, 40 s: evicted at 1000 + 40 + 300 = 1340.
    let old = SimConfig { node_monitor_grace: NODE_MONITOR_GRACE_V1_31, ..cfg.clone() };
    assert_eq!(spans(&run(&nodes(2), &[gpu_job("a", 0, 5000)], &old, Vec::new()).0), [(Some(1340), Some(6340))]);
    // A pod tolerating `unreachable` for 30 s itself: 1000 + 50 + 30 = 1080.
    let quick = tolerating(gpu_job("a", 0, 5000), Some(TAINT_UNREACHABLE), Some(TaintEffect::NoExecute), Some(30));
    assert_eq!(spans(&run(&nodes(2), &[quick], &cfg, Vec::new()).0), [(Some(1080), Some(6080))]);
    // One tolerating every taint for ever is never evicted: bound to the dead node when
    // the run runs out of events, unfinished, saying why.
    let stubborn = tolerating(gpu_job("a", 0, 5000), None, None, None);
    let r = run(&nodes(2), &[stubborn], &cfg, Vec::new()).0;
    assert_eq!((r.records[0].outcome, secs(r.records[0].start)), (Outcome::Unfinished, Some(0)));
    let why = r.records[0].unfinished_reason.as_deref();
    assert_eq!(why, Some("bound to a node that is down, not evicted: it tolerates its taints"));
    // Slurm's semantics (requeue at once) on request: re-placed on node 1 at 1000.
    let slurm = SimConfig { node_lifecycle: NodeLifecycle::Requeue, ..cfg };
    assert_eq!(spans(&run(&nodes(2), &[gpu_job("a", 0, 5000)], &slurm, Vec::new()).0), [(Some(1000), Some(6000))]);
}

/// Node 0 fails at 1000 and is back at 1200, before the eviction due at 1350. `a`'s
/// containers died with it: with restart policy Never its pod fails and is re-created at
/// once, placed on node 0 again (its taint was cleared at 1200, before the pass): starts
/// 1200, ends 6200, requeued. With OnFailure the kubelet restarts it in place at 1200: the
/// same times, one restart, no requeue. The eviction at 1350 is cancelled either way.
#[test]
fn a_node_back_before_the_eviction_keeps_or_recreates_its_pods() {
    let events = vec![
        (SimTime::from_secs(1000), NodeId(0), NodeState::Down),
        (SimTime::from_secs(1200), NodeId(0), NodeState::Up),
    ];
    let cfg = SimConfig { node_events: events, ..Default::default() };
    let (r, log) = run(&nodes(2), &[gpu_job("a", 0, 5000)], &cfg, Vec::new());
    assert_eq!((spans(&r), r.records[0].attempts, r.records[0].restarts), (vec![(Some(1200), Some(6200))], 2, 0));
    assert_eq!(
        log,
        ["a@0 on node 0 gpu 0", "a@1200: node 0 up again: its pod's containers died with it", "a@1200 on node 0 gpu 0"]
    );
    let mut on_failure = gpu_job("a", 0, 5000);
    on_failure.restart_policy = RestartPolicy::OnFailure;
    let (r, log) = run(&nodes(2), &[on_failure], &cfg, Vec::new());
    assert_eq!((spans(&r), r.records[0].attempts, r.records[0].restarts), (vec![(Some(1200), Some(6200))], 2, 1));
    assert_eq!(log, ["a@0 on node 0 gpu 0", "a@1200 on node 0 gpu 0"]);
}
