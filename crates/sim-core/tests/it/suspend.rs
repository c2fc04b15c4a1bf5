//! Suspending and resuming a running job (`Decision::Suspend`, `Decision::Resume`), as
//! Slurm's gang scheduler does for `PreemptMode=SUSPEND,GANG`: the suspended job stops
//! progressing, lends its CPUs and GPUs, keeps its memory, and runs on for the time it
//! had left when resumed; its time limit does not count the time suspended.

use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason};
use sim_core::{
    Cluster, EngineError, GpuSharing, GpuSpec, Job, NodeId, NodePool, NodeSpec, Outcome, SimConfig, SimDuration,
    SimTime, TaskBinding, TaskShape, simulate,
};

/// One node of 8 cores, 64 GiB and one GPU.
fn node() -> Cluster {
    let spec = NodeSpec {
        cores: 8,
        memory_mib: 65_536,
        gpus: vec![GpuSpec { model: "A100".into(), memory_mib: 40_000, power: None }],
        labels: Default::default(),
        taints: Vec::new(),
        topology: Default::default(),
    };
    Cluster { pools: vec![NodePool { name: "n".into(), count: 1, spec, sharing: GpuSharing::Exclusive, group: None }] }
}

/// A job of one task on the whole node's CPUs and its GPU, with `mem` MiB of memory.
fn job(id: &str, submit: u64, run: u64, limit: u64, mem: u64) -> Job {
    let mut j =
        Job::rigid(id, SimTime::from_secs(submit), 8, SimDuration::from_secs(run), SimDuration::from_secs(limit));
    j.tasks = 1;
    j.task = TaskShape { cores: 8, cpu_milli: 8000, gpus: 1, memory_mib: mem, ..TaskShape::default() };
    j
}

/// Starts what fits on node 0; a job whose id begins with `hi` suspends the job running
/// there and starts on its CPUs and GPU; a suspended job resumes when they are free again.
#[derive(Default)]
struct SuspendForHi {
    suspended: Vec<sim_core::JobId>,
}

impl Policy for SuspendForHi {
    fn spec(&self) -> String {
        "suspend-for-hi".into()
    }
    fn binds_nodes(&self) -> bool {
        true
    }
    fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        let n = v.ledger().node(NodeId(0));
        let mut free = n.cpu_milli_left == n.cpu_milli && n.gpus[0].milli_left == 1000;
        if free && let Some(j) = self.suspended.pop() {
            out.push(Decision::Resume { job: j });
            free = false;
        }
        for &j in v.queue() {
            let bind = vec![TaskBinding { node: NodeId(0), gpus: vec![0] }];
            if free {
                out.push(Decision::Bind { job: j, binding: bind.into(), reason: StartReason::Placed });
                free = false;
            } else if v.job(j).trace_id().starts_with("hi")
                && let Some(r) = v.running().next()
            {
                out.push(Decision::Suspend { job: r.job, reason: "preempted".into() });
                self.suspended.push(r.job);
                out.push(Decision::Bind { job: j, binding: bind.into(), reason: StartReason::Placed });
            }
        }
    }
}

fn secs(t: Option<SimTime>) -> Option<u64> {
    t.map(|t| t.0 / 1_000_000)
}

#[test]
fn a_suspended_job_runs_on_for_what_it_had_left_when_its_preemptor_ends() {
    // lo runs 0–30 (30 of its 100 s), is suspended while hi runs 30–70, resumes at 70 and
    // ends at 140; its record keeps its first start.
    let jobs = [job("lo", 0, 100, 200, 32_768), job("hi", 30, 40, 40, 16_384)];
    let r = simulate(&node(), &jobs, &mut SuspendForHi::default(), &SimConfig::default(), None).unwrap().records;
    assert_eq!((secs(r[0].start), secs(r[0].end), r[0].outcome), (Some(0), Some(140), Outcome::Completed));
    assert_eq!((secs(r[1].start), secs(r[1].end), r[1].outcome), (Some(30), Some(70), Outcome::Completed));
    assert_eq!(r[0].attempts, 1);
}

#[test]
fn the_time_limit_does_not_count_the_time_suspended() {
    // lo's limit is 50 s of its 100: killed after 50 s of running, at 50 + 40 = 90.
    let jobs = [job("lo", 0, 100, 50, 0), job("hi", 30, 40, 40, 0)];
    let cfg = SimConfig { walltime_kill: true, ..SimConfig::default() };
    let r = simulate(&node(), &jobs, &mut SuspendForHi::default(), &cfg, None).unwrap().records;
    assert_eq!((secs(r[0].end), r[0].outcome), (Some(90), Outcome::Killed));
}

#[test]
fn a_suspended_job_keeps_its_memory() {
    // lo keeps 40 GiB of the 64: hi's 30 GiB do not fit beside it.
    let jobs = [job("lo", 0, 100, 200, 40_960), job("hi", 30, 40, 40, 30_720)];
    let e = simulate(&node(), &jobs, &mut SuspendForHi::default(), &SimConfig::default(), None).unwrap_err();
    assert!(matches!(e, EngineError::InvalidDecision { .. }), "{e}");
}

#[test]
fn a_suspended_job_left_at_the_horizon_says_so() {
    let jobs = [job("lo", 0, 100, 200, 0), job("hi", 30, 40, 40, 0)];
    let cfg = SimConfig { horizon: Some(SimTime::from_secs(50)), ..SimConfig::default() };
    let r = simulate(&node(), &jobs, &mut SuspendForHi::default(), &cfg, None).unwrap().records;
    assert_eq!(r[0].outcome, Outcome::Unfinished);
    assert!(r[0].unfinished_reason.as_deref().unwrap().contains("suspended"), "{:?}", r[0].unfinished_reason);
}
