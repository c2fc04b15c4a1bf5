//! GPU jobs bound to nodes and GPUs: out-of-memory kills in each sharing mode, retries
//! with back-off, wasted GPU time, invalid bindings.

use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason};
use sim_core::{
    Cluster, EngineError, GpuSharing, GpuSpec, Job, NodeId, NodePool, NodeSpec, Outcome, SimConfig, SimDuration,
    SimTime, TaskBinding, TaskShape, simulate,
};

/// One node of 8 cores, 64 GiB and `gpus` GPUs of 16000 MiB.
fn node(gpus: usize, sharing: GpuSharing) -> Cluster {
    let spec = NodeSpec {
        cores: 8,
        memory_mib: 65_536,
        gpus: vec![GpuSpec { model: "V100M16".into(), memory_mib: 16_000, power: None }; gpus],
        labels: Default::default(),
        taints: Vec::new(),
        topology: Default::default(),
    };
    Cluster { pools: vec![NodePool { name: "n".into(), count: 1, spec, sharing, group: None }] }
}

/// A one-task job on `milli` of one GPU, declaring `declared` MiB and peaking at `peak`.
fn gpu_job(id: &str, submit: u64, run: u64, milli: u32, declared: u64, peak: u64) -> Job {
    let mut j = Job::rigid(id, SimTime::from_secs(submit), 1, SimDuration::from_secs(run), SimDuration::from_secs(run));
    j.task = TaskShape {
        cores: 1,
        cpu_milli: 1000,
        gpus: 1,
        gpu_milli: milli,
        gpu_memory_mib: declared,
        gpu_peak_mib: peak,
        ..TaskShape::default()
    };
    j
}

/// Binds every queued job to GPU 0 of node 0 when its milli-GPU is left there.
struct OnGpuZero;
impl Policy for OnGpuZero {
    fn spec(&self) -> String {
        "on-gpu-zero".into()
    }
    fn binds_nodes(&self) -> bool {
        true
    }
    fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        let mut left = v.ledger().node(NodeId(0)).gpus[0].milli_left;
        for &j in v.queue() {
            let need = v.ledger().node(NodeId(0)).milli_taken(&v.job(j).task());
            if need <= left {
                left -= need;
                let binding = vec![TaskBinding { node: NodeId(0), gpus: vec![0] }];
                out.push(Decision::Bind { job: j, binding: binding.into(), reason: StartReason::Placed });
            }
        }
    }
}

fn run(cluster: &Cluster, jobs: &[Job], retries: u32) -> Vec<sim_core::JobRecord> {
    let cfg = SimConfig { oom_retries: retries, ..SimConfig::default() };
    simulate(cluster, jobs, &mut OnGpuZero, &cfg, None).unwrap().records
}

fn secs(t: Option<SimTime>) -> Option<u64> {
    t.map(|t| t.0 / 1_000_000)
}

#[test]
fn exclusive_gpu_runs_out_when_the_peak_exceeds_its_memory() {
    // Peak 20000 > 16000: killed 120 s after each start; retried after 10 s, then 20 s;
    // with 2 retries the third kill is final. Starts 0, 130, 270; kills 120, 250, 390.
    let r = run(&node(1, GpuSharing::Exclusive), &[gpu_job("big", 0, 1000, 1000, 0, 20_000)], 2);
    assert_eq!(r[0].outcome, Outcome::OomKilled);
    assert_eq!((secs(r[0].start), secs(r[0].end)), (Some(270), Some(390)));
    assert_eq!((r[0].attempts, r[0].oom_kills), (3, 3));
    assert_eq!(r[0].wasted_gpu_milli_us, 3 * 1000 * 120_000_000);
    // One that fits runs to its end.
    let r = run(&node(1, GpuSharing::Exclusive), &[gpu_job("ok", 0, 1000, 1000, 0, 15_000)], 2);
    assert_eq!((r[0].outcome, secs(r[0].end), r[0].oom_kills), (Outcome::Completed, Some(1000), 0));
}

#[test]
fn exclusive_gpus_are_not_shared_even_for_fractional_requests() {
    // Two half-GPU jobs on one exclusive GPU: the second waits for the first.
    let jobs = [gpu_job("a", 0, 100, 500, 0, 0), gpu_job("b", 0, 100, 500, 0, 0)];
    let r = run(&node(1, GpuSharing::Exclusive), &jobs, 0);
    assert_eq!((secs(r[0].start), secs(r[1].start)), (Some(0), Some(100)));
}

#[test]
fn shared_gpu_fails_the_allocation_of_the_last_arrival() {
    // Two half-GPU jobs without isolation: peaks 9000 + 9000 > 16000. The first keeps
    // running; the second (arrived last) is killed at 120 s and, with no retry left,
    // ends oom_killed.
    let jobs = [gpu_job("first", 0, 1000, 500, 4000, 9000), gpu_job("second", 10, 1000, 500, 4000, 9000)];
    let r = run(&node(1, GpuSharing::Shared), &jobs, 0);
    assert_eq!((r[0].outcome, secs(r[0].end)), (Outcome::Completed, Some(1000)));
    assert_eq!((r[1].outcome, secs(r[1].start), secs(r[1].end)), (Outcome::OomKilled, Some(10), Some(130)));
    assert_eq!(r[1].wasted_gpu_milli_us, 500 * 120_000_000);
    // With one retry it comes back at 140 s, fails again while the first still runs.
    let r = run(&node(1, GpuSharing::Shared), &jobs, 1);
    assert_eq!((r[1].outcome, secs(r[1].start), r[1].oom_kills), (Outcome::OomKilled, Some(140), 2));
    // Peaks that fit together: both complete.
    let jobs = [gpu_job("first", 0, 1000, 500, 4000, 7000), gpu_job("second", 10, 1000, 500, 4000, 7000)];
    let r = run(&node(1, GpuSharing::Shared), &jobs, 0);
    assert!(r.iter().all(|x| x.outcome == Outcome::Completed));
}

#[test]
fn isolated_gpu_kills_only_the_job_over_its_own_limit() {
    // Declared 4000, peak 5000: over its limit, killed alone, although the GPU has room.
    // Its neighbour (declared 8000, peak 7000) completes.
    let jobs = [gpu_job("over", 0, 1000, 300, 4000, 5000), gpu_job("under", 0, 1000, 300, 8000, 7000)];
    let r = run(&node(1, GpuSharing::Isolated), &jobs, 0);
    assert_eq!((r[0].outcome, secs(r[0].end)), (Outcome::OomKilled, Some(120)));
    assert_eq!(r[1].outcome, Outcome::Completed);
    // Without isolation the same pair fits physically (12000 ≤ 16000): both complete.
    let r = run(&node(1, GpuSharing::Shared), &jobs, 0);
    assert!(r.iter().all(|x| x.outcome == Outcome::Completed));
}

#[test]
fn a_killed_job_runs_for_its_run_time_at_most() {
    // A 60 s job that would be killed at 120 s is killed when it ends its run, at 60 s.
    let r = run(&node(1, GpuSharing::Exclusive), &[gpu_job("short", 0, 60, 1000, 0, 20_000)], 0);
    assert_eq!((r[0].outcome, secs(r[0].end)), (Outcome::OomKilled, Some(60)));
}

/// Binds to a GPU that does not exist.
struct BadGpu;
impl Policy for BadGpu {
    fn spec(&self) -> String {
        "bad-gpu".into()
    }
    fn binds_nodes(&self) -> bool {
        true
    }
    fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
        for &j in v.queue() {
            let binding = vec![TaskBinding { node: NodeId(0), gpus: vec![7] }];
            out.push(Decision::Bind { job: j, binding: binding.into(), reason: StartReason::Placed });
        }
    }
}

#[test]
fn an_invalid_binding_is_refused_naming_the_policy() {
    let e = simulate(
        &node(1, GpuSharing::Shared),
        &[gpu_job("j", 0, 10, 500, 0, 0)],
        &mut BadGpu,
        &SimConfig::default(),
        None,
    )
    .unwrap_err();
    assert!(matches!(e, EngineError::InvalidDecision { .. }));
    assert!(e.to_string().contains("bad-gpu") && e.to_string().contains("GPU index 7"), "{e}");
}

/// `node` with a power curve on every GPU: 50 W idle, 250 W at full load.
fn powered(gpus: usize, sharing: GpuSharing) -> Cluster {
    let mut c = node(gpus, sharing);
    for g in &mut c.pools[0].spec.gpus {
        g.power = Some(sim_core::PowerCurve::linear(50_000, 250_000));
    }
    c
}

#[test]
fn energy_counts_idle_gpus_and_each_jobs_power_above_idle() {
    // Two GPUs, exclusive; one job on GPU 0 for 100 s at 50 % utilization: 150 W, so
    // 15,000 J for the job; the run adds 100 W above idle for 100 s (10,000 J) to both
    // GPUs' 100 W idle draw.
    let mut j = gpu_job("a", 0, 100, 1000, 0, 0);
    j.task.gpu_util_permille = 500;
    let res = simulate(&powered(2, GpuSharing::Exclusive), &[j.clone()], &mut OnGpuZero, &SimConfig::default(), None)
        .unwrap();
    assert_eq!(res.records[0].gpu_energy_mj, 15_000_000);
    assert_eq!(
        res.gpu_energy,
        sim_core::GpuEnergy { gpus_with_power: 2, idle_power_mw: 100_000, dynamic_mj: 10_000_000 }
    );
    // Without a stated utilization the run's default applies (100 %: 250 W).
    j.task.gpu_util_permille = 0;
    let cfg = SimConfig { gpu_util_permille: 1000, ..SimConfig::default() };
    let res = simulate(&powered(2, GpuSharing::Exclusive), &[j.clone()], &mut OnGpuZero, &cfg, None).unwrap();
    assert_eq!((res.records[0].gpu_energy_mj, res.gpu_energy.dynamic_mj), (25_000_000, 20_000_000));
    // Two quarter-GPU jobs sharing GPU 0 for 100 s, fully busy in their share: each adds
    // 250 ‰ of load (50 W above idle) and carries a quarter of the idle 50 W.
    let (a, b) = (gpu_job("a", 0, 100, 250, 0, 0), gpu_job("b", 0, 100, 250, 0, 0));
    let res = simulate(&powered(1, GpuSharing::Shared), &[a, b], &mut OnGpuZero, &cfg, None).unwrap();
    assert_eq!((res.records[0].gpu_energy_mj, res.records[1].gpu_energy_mj), (6_250_000, 6_250_000));
    assert_eq!(res.gpu_energy.dynamic_mj, 10_000_000);
    // An out-of-memory attempt uses energy too: killed after 120 s, twice, then it ends.
    let big = gpu_job("big", 0, 1000, 1000, 0, 20_000);
    let cfg = SimConfig { oom_retries: 1, ..SimConfig::default() };
    let res = simulate(&powered(1, GpuSharing::Exclusive), &[big], &mut OnGpuZero, &cfg, None).unwrap();
    assert_eq!(res.records[0].outcome, Outcome::OomKilled);
    assert_eq!(res.records[0].gpu_energy_mj, 2 * 120 * 250_000);
    // GPUs without a power curve count for nothing.
    let res =
        simulate(&node(1, GpuSharing::Exclusive), &[gpu_job("a", 0, 100, 1000, 0, 0)], &mut OnGpuZero, &cfg, None)
            .unwrap();
    assert_eq!((res.records[0].gpu_energy_mj, res.gpu_energy), (0, sim_core::GpuEnergy::default()));
}

fn on_failure(mut j: Job) -> Job {
    j.restart_policy = sim_core::RestartPolicy::OnFailure;
    j
}

#[test]
fn on_failure_restarts_in_place_after_crash_loop_back_off() {
    // Peak 20000 > 16000 on an exclusive GPU: every run is killed 120 s after it starts.
    // With restart policy OnFailure the pod keeps GPU 0 and the kubelet restarts the
    // container there: the first restart at once (120), the second 10 s after its kill
    // (240 + 10 = 250), the third 20 s after (370 + 20 = 390). backoffLimit 3: the third
    // restart brings the restart count to 3, so the Job controller fails the Job then: it
    // ends oom_killed at 390, its last run having started at 250. `next`, waiting for the
    // GPU since 0, starts at 390.
    let jobs = [on_failure(gpu_job("big", 0, 1000, 1000, 0, 20_000)), gpu_job("next", 0, 100, 1000, 0, 0)];
    let r = run(&node(1, GpuSharing::Exclusive), &jobs, 3);
    assert_eq!((r[0].outcome, secs(r[0].start), secs(r[0].end)), (Outcome::OomKilled, Some(250), Some(390)));
    assert_eq!((r[0].attempts, r[0].oom_kills, r[0].restarts), (3, 3, 2));
    assert_eq!(r[0].wasted_gpu_milli_us, 3 * 1000 * 120_000_000);
    assert_eq!((secs(r[1].start), secs(r[1].end)), (Some(390), Some(490)));
    // The default backoffLimit 6 (docs/gpu.md): kills at 120, 240, 370, 510, 670, 870
    // (restarts at 120, 250, 390, 550, 750); the sixth is followed by the end at
    // 870 + 160 = 1030.
    let r = run(&node(1, GpuSharing::Exclusive), &jobs, 6);
    assert_eq!((secs(r[0].start), secs(r[0].end), r[0].oom_kills), (Some(750), Some(1030), 6));
    // backoffLimit 0: the first restart already fails it, at its kill (no back-off yet).
    let r = run(&node(1, GpuSharing::Exclusive), &jobs, 0);
    assert_eq!((r[0].outcome, secs(r[0].end), r[0].restarts), (Outcome::OomKilled, Some(120), 0));
}

#[test]
fn the_crash_loop_back_off_starts_again_after_ten_minutes_of_running() {
    // Killed 300 s after each start: kills at 300 (restart at once), 600 (+10 s: 610),
    // 910 (+20 s: 930); retries 3 fails it at the third restart, 930.
    let big = on_failure(gpu_job("big", 0, 10_000, 1000, 0, 20_000));
    let cfg =
        |after: u64| SimConfig { oom_retries: 3, oom_after: SimDuration::from_secs(after), ..SimConfig::default() };
    let r =
        simulate(&node(1, GpuSharing::Exclusive), std::slice::from_ref(&big), &mut OnGpuZero, &cfg(300), None).unwrap();
    assert_eq!((secs(r.records[0].start), secs(r.records[0].end)), (Some(610), Some(930)));
    // Killed 700 s after each start: each run lasted more than 10 min since the last
    // restart, so every restart is immediate: kills at 700, 1400, 2100, ended at 2100.
    let r = simulate(&node(1, GpuSharing::Exclusive), &[big], &mut OnGpuZero, &cfg(700), None).unwrap();
    assert_eq!((secs(r.records[0].start), secs(r.records[0].end)), (Some(1400), Some(2100)));
}

#[test]
fn a_restarted_container_allocates_its_memory_again() {
    // Shared GPU: `first` (peak 9000) runs 0–1000; `second` (peak 9000, OnFailure)
    // arrives at 10 and fails its allocation each time `first` is there (18000 > 16000).
    // Kills and restarts: 130 → 130, 250 → 260 (+10), 380 → 400 (+20), 520 → 560 (+40),
    // 680 → 760 (+80), 880 → 1040 (+160). At 1040 `first` is gone: the allocation succeeds
    // and the run (no checkpoint) takes its 1000 s: ends at 2040, after 6 kills and 6
    // restarts, on the GPU it held throughout.
    let jobs = [gpu_job("first", 0, 1000, 500, 4000, 9000), on_failure(gpu_job("second", 10, 1000, 500, 4000, 9000))];
    let r = run(&node(1, GpuSharing::Shared), &jobs, 10);
    assert_eq!((r[1].outcome, secs(r[1].start), secs(r[1].end)), (Outcome::Completed, Some(1040), Some(2040)));
    assert_eq!((r[1].oom_kills, r[1].restarts, r[1].attempts), (6, 6, 7));
}

#[test]
fn an_isolated_pod_without_declared_memory_is_limited_by_the_whole_device() {
    // HAMi's default for a vGPU with no gpumem: 100 % of the device. A 300-milli pod with
    // no declaration peaking at 10000 MiB fits the 16000 MiB GPU (a share proportional to
    // its milli-GPU would have been 4800 MiB); one peaking at 17000 MiB does not.
    let r = run(&node(1, GpuSharing::Isolated), &[gpu_job("fits", 0, 1000, 300, 0, 10_000)], 0);
    assert_eq!((r[0].outcome, r[0].oom_kills), (Outcome::Completed, 0));
    let r = run(&node(1, GpuSharing::Isolated), &[gpu_job("over", 0, 1000, 300, 0, 17_000)], 0);
    assert_eq!((r[0].outcome, secs(r[0].end)), (Outcome::OomKilled, Some(120)));
}
