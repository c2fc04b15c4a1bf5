//! kube-scheduler's scheduling queue (`queue=skip`: back-off, unschedulable pods, their
//! flush and order, by release) and DefaultPreemption (`preemption=on`: victims,
//! the node picked, the grace period, the nomination), on hand-computed runs.

use sim_core::log::{LogEvent, LogSink};
use sim_core::{Cluster, Job, RunResult, SimConfig, SimDuration, SimTime};
use sim_core::{Outcome, TaskShape};

fn nodes(count: u32, gpus: usize) -> Cluster {
    crate::gpu_nodes(count, gpus)
}

/// A pod of one core and `gpus` whole GPUs, submitted at `submit` µs, `run` s long.
fn pod_at(id: &str, submit: SimTime, run: u64, gpus: u32, priority: i64) -> Job {
    let d = SimDuration::from_secs(run);
    let mut j = Job::rigid(id, submit, 1, d, d);
    j.task = TaskShape { cores: 1, cpu_milli: 1000, gpus, gpu_milli: 1000, ..TaskShape::default() };
    j.priority = priority;
    j
}

fn pod(id: &str, submit: u64, run: u64, gpus: u32, priority: i64) -> Job {
    pod_at(id, SimTime::from_secs(submit), run, gpus, priority)
}

/// Starts (job, node, time in ms) and requeues (job, reason, time in ms), in order.
#[derive(Default)]
struct Log {
    starts: Vec<(String, String, u64)>,
    requeues: Vec<(String, u64)>,
}

impl LogSink for Log {
    fn record(&mut self, now: SimTime, ev: &LogEvent<'_>) -> std::io::Result<()> {
        match ev {
            LogEvent::Start { job, units, .. } => {
                let node = units.split(" gpu").next().unwrap_or(units).to_string();
                self.starts.push((job.to_string(), node, now.0 / 1000));
            }
            LogEvent::Requeue { job, .. } => self.requeues.push((job.to_string(), now.0 / 1000)),
            _ => {}
        }
        Ok(())
    }
}

fn run(spec: &str, cluster: &Cluster, jobs: &[Job]) -> (RunResult, Log) {
    let mut p = policies::build(spec).unwrap();
    let mut log = Log::default();
    let r = sim_core::simulate(cluster, jobs, p.as_mut(), &SimConfig::default(), Some(&mut log)).unwrap();
    (r, log)
}

/// Start times in ms.
fn starts_ms(r: &RunResult) -> Vec<Option<u64>> {
    r.records.iter().map(|x| x.start.map(|t| t.0 / 1000)).collect()
}

#[test]
fn a_moved_pod_waits_out_its_backoff_before_v1_33() {
    // One node of one GPU. A runs 0–10 s; B arrives at 9.5 s and fits nowhere (its first
    // failed attempt: a 1 s back-off, to 10.5 s). A ends at 10 s and moves B.
    let c = nodes(1, 1);
    let jobs = [pod("A", 0, 10, 1, 0), pod_at("B", SimTime(9_500_000), 10, 1, 0)];
    // Current (SchedulerPopFromBackoffQ): B is popped from backoffQ at once: 10 s.
    assert_eq!(starts_ms(&run("kube", &c, &jobs).0), [Some(0), Some(10_000)]);
    // 1.23 and 1.20: B waits for the back-off flush's tick at or after 10.5 s: 11 s.
    for k8s in ["1.23", "1.20"] {
        assert_eq!(starts_ms(&run(&format!("kube[k8s={k8s}]"), &c, &jobs).0), [Some(0), Some(11_000)], "{k8s}");
    }
    // Without a back-off (podMaxBackoffSeconds 0) it starts at 10 s there too.
    assert_eq!(starts_ms(&run("kube[k8s=1.20,pod_max_backoff=0]", &c, &jobs).0), [Some(0), Some(10_000)]);
    // With an initial back-off of 5 s (to 14.5 s, the tick at 15 s).
    assert_eq!(starts_ms(&run("kube[k8s=1.20,pod_initial_backoff=5]", &c, &jobs).0), [Some(0), Some(15_000)]);
}

#[test]
fn a_pod_that_keeps_failing_goes_behind_one_that_failed_after_it() {
    // One node of one GPU, held by A from 0 to 670 s. B (at 1 s) and C (at 40 s), both
    // priority 0, fit nowhere. Nothing frees anything until 670, so only the flush of
    // unschedulable pods retries them: every pod there longer than 5 min at a 30 s tick.
    // B: 330 (more than 300 s after 1), then 660; C: 360, then 690. Each retry fails and
    // refreshes its queue timestamp: at 670 B's is 660 and C's 360, so C goes first
    // (670–770) and B after (770–870).
    let c = nodes(1, 1);
    let jobs = [pod("A", 0, 670, 1, 0), pod("B", 1, 100, 1, 0), pod("C", 40, 100, 1, 0)];
    assert_eq!(starts_ms(&run("kube", &c, &jobs).0), [Some(0), Some(770_000), Some(670_000)]);
    // With a 60 s limit (1.20; ticks after 61 and 100: B 90, 180, ..., 630; C 120, ...,
    // 660) B's last retry (630) is older than C's (660): B first.
    assert_eq!(starts_ms(&run("kube[k8s=1.20]", &c, &jobs).0), [Some(0), Some(670_000), Some(770_000)]);
    // order=fifo keeps arrival order whatever the retries.
    assert_eq!(starts_ms(&run("kube[order=fifo]", &c, &jobs).0), [Some(0), Some(670_000), Some(770_000)]);
}

#[test]
fn preemption_evicts_the_lowest_priority_victims_after_their_grace() {
    // One node of 2 GPUs: L1 (priority 0) from 0 and L2 (priority 0) from 5, one GPU
    // each, 1000 s. H (priority 1, 2 GPUs, 50 s) arrives at 10 and fits nowhere: evicting
    // both lets it fit, so both are victims. They run out their 30 s grace period and end
    // at 40; H, nominated to node 0, starts there at 40 and runs to 90. L1 and L2 are
    // re-created at 40 (new pods, from the start): they fit at 90 and end at 1090.
    let c = nodes(1, 2);
    let jobs = [pod("L1", 0, 1000, 1, 0), pod("L2", 5, 1000, 1, 0), pod("H", 10, 50, 2, 1)];
    let (r, log) = run("kube", &c, &jobs);
    assert_eq!(starts_ms(&r), [Some(90_000), Some(90_000), Some(40_000)]);
    assert_eq!(log.requeues, [("L1".to_string(), 40_000), ("L2".to_string(), 40_000)]);
    assert_eq!(r.records.iter().map(|x| x.attempts).collect::<Vec<_>>(), [2, 2, 1]);
    assert!(r.records.iter().all(|x| x.outcome == Outcome::Completed));
    // grace=0: at once, at 10.
    assert_eq!(starts_ms(&run("kube[grace=0]", &c, &jobs).0), [Some(60_000), Some(60_000), Some(10_000)]);
    // preemption=off: H waits for both to end (1000 and 1005).
    assert_eq!(starts_ms(&run("kube[preemption=off]", &c, &jobs).0), [Some(0), Some(5_000), Some(1_005_000)]);
    // Equal priorities never preempt.
    let mut same = jobs.clone();
    same[2].priority = 0;
    assert_eq!(starts_ms(&run("kube", &c, &same).0), [Some(0), Some(5_000), Some(1_005_000)]);
}

/// The node job `job` first started on.
fn node_of(log: &Log, job: &str) -> String {
    log.starts.iter().find(|s| s.0 == job).map(|s| s.1.clone()).expect("started")
}

#[test]
fn preemption_picks_the_node_upstream_picks() {
    let c = nodes(2, 1);
    // One node runs M (priority 5), the other L (priority 0); H (priority 10) evicts L,
    // the lowest highest-priority victim, and starts on L's node after the 30 s grace.
    let jobs = [pod("M", 0, 1000, 1, 5), pod("L", 0, 1000, 1, 0), pod("H", 10, 50, 1, 10)];
    let (r, log) = run("kube", &c, &jobs);
    assert_eq!(log.requeues, [("L".to_string(), 40_000)]);
    assert_eq!(node_of(&log, "H"), node_of(&log, "L"));
    assert_eq!(starts_ms(&r), [Some(0), Some(90_000), Some(40_000)]);
    // Equal victim priorities: the node whose victim started last (B, at 5).
    let jobs = [pod("A", 0, 1000, 1, 0), pod("B", 5, 1000, 1, 0), pod("H", 10, 50, 1, 10)];
    let (_, log) = run("kube", &c, &jobs);
    assert_eq!(log.requeues, [("B".to_string(), 40_000)]);
    assert_eq!(node_of(&log, "H"), node_of(&log, "B"));
    // Fewest victims: R (2 GPUs, at 0) fills one node of 2 GPUs, P and Q (one GPU each, at
    // 1 and 2) the other, all priority 0. H needs 2 GPUs: R's node, one victim (the
    // smaller sum of priorities).
    let c2 = nodes(2, 2);
    let jobs = [pod("R", 0, 1000, 2, 0), pod("P", 1, 1000, 1, 0), pod("Q", 2, 1000, 1, 0), pod("H", 10, 50, 2, 10)];
    let (_, log) = run("kube", &c2, &jobs);
    assert_eq!(node_of(&log, "P"), node_of(&log, "Q"));
    assert_eq!(log.requeues, [("R".to_string(), 40_000)]);
    assert_eq!(node_of(&log, "H"), node_of(&log, "R"));
}

#[test]
fn victims_are_reprieved_most_important_first() {
    // One node of 4 GPUs: P1 (2 GPUs, from 0), P2 (1 GPU, from 1), P3 (1 GPU, from 2), all
    // priority 0. H (priority 1, 1 GPU) at 10: all three out, then put back in order of
    // importance (earlier start first): P1 and P2 fit back with H, P3 does not — the only
    // victim.
    let c = nodes(1, 4);
    let jobs = [pod("P1", 0, 1000, 2, 0), pod("P2", 1, 1000, 1, 0), pod("P3", 2, 1000, 1, 0), pod("H", 10, 50, 1, 1)];
    let (r, log) = run("kube", &c, &jobs);
    assert_eq!(log.requeues, [("P3".to_string(), 40_000)]);
    assert_eq!(starts_ms(&r), [Some(0), Some(1_000), Some(90_000), Some(40_000)]);
}

#[test]
fn a_nominated_node_is_kept_from_lower_priority_pods() {
    // One node of 2 GPUs; L (priority 0, 1 GPU) runs from 0. H (priority 1, 2 GPUs) at 10
    // evicts L (grace to 40) and is nominated to the node. Q (priority 0, 1 GPU) at 15
    // would fit the free GPU, but the node is H's: Q waits. H starts at 40; L, re-created
    // then, and Q fit nowhere until H ends at 90, when both start.
    let c = nodes(1, 2);
    let jobs = [pod("L", 0, 1000, 1, 0), pod("H", 10, 50, 2, 1), pod("Q", 15, 100, 1, 0)];
    let (r, _) = run("kube", &c, &jobs);
    assert_eq!(starts_ms(&r), [Some(90_000), Some(40_000), Some(90_000)]);
    // A pod of higher priority than H (Q, priority 2) is not kept off it: Q takes the
    // free GPU at 15 and runs to 115. At 40 L is gone, but H finds one GPU free, and
    // nothing of lower priority runs: its preemption finds no node, so its nomination is
    // dropped, and the re-created L takes the free GPU at 40. At 115 Q ends; H evicts L
    // again (grace to 145) and runs 145–195; L, re-created at 145, starts at 195.
    let mut jobs2 = jobs.clone();
    jobs2[2].priority = 2;
    let (r, log) = run("kube", &c, &jobs2);
    assert_eq!(starts_ms(&r), [Some(195_000), Some(145_000), Some(15_000)]);
    assert_eq!(log.requeues, [("L".to_string(), 40_000), ("L".to_string(), 145_000)]);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 40,
        rng_seed: proptest::test_runner::RngSeed::Fixed(26),
        ..proptest::test_runner::Config::default()
    })]
    /// The scheduling queue keeps pods that share their state in a block and tries only
    /// the first of each class there (`kube/queue_block.rs`): the schedules are those of
    /// the queue kept pod by pod, on workloads long enough to make blocks (pods that fail
    /// five times together), with gangs, priorities that preempt or not, and node
    /// selectors.
    #[test]
    fn blocks_schedule_as_pods_one_by_one(
        jobs in proptest::collection::vec((0u64..400, 1u32..3, 0u32..5, 1u64..200, 0i64..2, 0u8..8), 20..120),
    ) {
        let c = nodes(3, 4);
        let jobs: Vec<Job> = jobs
            .iter()
            .enumerate()
            .map(|(i, &(submit, tasks, gpus, run, priority, kind))| {
                let mut j = pod(&format!("j{i}"), submit, run, gpus, priority % 2);
                j.tasks = tasks;
                if kind == 0 {
                    // A label: constrained, never in a block.
                    j.constraints = Some(Box::new(sim_core::constraints::PodConstraints {
                        labels: [("app".to_string(), "web".to_string())].into(),
                        ..Default::default()
                    }));
                }
                if kind == 1 {
                    j.priority = 0;
                }
                j
            })
            .collect();
        for spec in ["kube", "kube[preemption=off]", "kube[gang=none]", "kube[k8s=1.20]", "kube[score=bestfit]"] {
            let run = |blocks: bool| {
                let s: sim_core::spec::Spec = spec.parse().unwrap();
                let k = policies::kube::KubeScheduler::from_spec(&s, 0).unwrap();
                let mut k = if blocks { k } else { k.without_queue_blocks() };
                sim_core::simulate(&c, &jobs, &mut k, &SimConfig::default(), None).unwrap()
            };
            let (with, without) = (run(true), run(false));
            let starts = |r: &sim_core::RunResult| -> Vec<Option<u64>> { r.records.iter().map(|x| x.start.map(|t| t.0 / 1_000_000)).collect() };
            proptest::prop_assert_eq!(starts(&with), starts(&without), "{}", spec);
            proptest::prop_assert!(with.records == without.records, "{}", spec);
        }
    }
}
