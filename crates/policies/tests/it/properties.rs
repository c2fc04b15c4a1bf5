//! Invariants on random workloads.

use crate::Reservations;
use proptest::prelude::*;
use sim_core::{Cluster, Job, SimConfig, SimDuration, SimTime};

const SPECS: &[&str] = &[
    "fcfs",
    "fcfs[pass=per-event]",
    "easy",
    "easy[pass=per-event]",
    "easy[backfill_estimate=actual]",
    "easy[reservation=nodes]",
    "easy[reservation=nodes,pass=per-event,backfill_estimate=actual]",
    "conservative",
    "conservative[pass=per-event]",
    "conservative[replan=rebuild]",
    "conservative[reservation=nodes]",
    "conservative[backfill_estimate=actual]",
    "conservative[reservation=nodes,replan=rebuild,pass=per-event]",
];

/// Random jobs on a machine of `procs`; `overrun` allows run > requested.
fn workload(overrun: bool) -> impl Strategy<Value = (u32, Vec<Job>)> {
    (2u32..12).prop_flat_map(move |procs| {
        let job = (0u64..60, 0u32..=procs + 1, 0u64..40, 1u64..40);
        (Just(procs), prop::collection::vec(job, 1..25)).prop_map(move |(procs, raw)| {
            let mut jobs: Vec<Job> = raw
                .into_iter()
                .enumerate()
                .map(|(i, (submit, p, run, req))| {
                    let req = if overrun { req } else { req.max(run) };
                    Job::rigid(
                        i.to_string(),
                        SimTime::from_secs(submit),
                        p,
                        SimDuration::from_secs(run),
                        SimDuration::from_secs(req),
                    )
                })
                .collect();
            jobs.sort_by_key(|j| j.submit);
            for (i, j) in jobs.iter_mut().enumerate() {
                j.trace_id = i.to_string();
            }
            (procs, jobs)
        })
    })
}

fn check_run(spec: &str, procs: u32, jobs: &[Job], kill: bool) -> Result<(), TestCaseError> {
    let mut p = policies::build(spec).unwrap();
    let cfg = SimConfig { walltime_kill: kill, ..SimConfig::default() };
    let r = sim_core::simulate(&Cluster::processor_pool(procs), jobs, p.as_mut(), &cfg, None)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(r.records.len(), jobs.len());
    // One outcome each; started jobs ran exactly their (possibly cut) length.
    let mut events: Vec<(u64, i64)> = Vec::new();
    for (j, rec) in jobs.iter().zip(&r.records) {
        if rec.outcome.ran() {
            let (s, e) = (rec.start.unwrap(), rec.end.unwrap());
            prop_assert!(s >= j.submit);
            let run = j.runtime.unwrap();
            let want = if kill { run.min(j.requested.unwrap()) } else { run };
            prop_assert_eq!(e - s, want);
            prop_assert_eq!(rec.units.len(), j.units());
            events.push((e.0, -(j.units() as i64)));
            events.push((s.0, j.units() as i64));
        } else {
            // With no horizon every job that can run does.
            prop_assert!(
                matches!(rec.outcome, sim_core::Outcome::Rejected(_)),
                "{} kill={}: job {} {:?} in {:?}",
                spec,
                kill,
                j.trace_id,
                rec.outcome,
                brief(jobs)
            );
            prop_assert!(rec.start.is_none());
        }
    }
    // No over-allocation: sweep, ends before starts at equal times.
    events.sort();
    let mut used = 0i64;
    for (_, d) in events {
        used += d;
        prop_assert!(used <= procs as i64, "{} units in use on {}", used, procs);
    }
    // No unit held by two jobs at once.
    for (a, ra) in r.records.iter().enumerate() {
        for rb in &r.records[a + 1..] {
            if let (Some(s1), Some(e1), Some(s2), Some(e2)) = (ra.start, ra.end, rb.start, rb.end)
                && s1 < e2
                && s2 < e1
            {
                prop_assert!(ra.units.iter().all(|u| !rb.units.contains(u)));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_over_allocation_and_one_outcome_per_job((procs, jobs) in workload(true), kill in any::<bool>()) {
        for spec in SPECS {
            check_run(spec, procs, &jobs, kill)?;
        }
    }

    #[test]
    fn easy_never_delays_the_heads_reservation((procs, jobs) in workload(false)) {
        // Not with backfill_estimate=actual: the shadow comes from running jobs' requested
        // ends, and a candidate passed on its true length can make a later pass's shadow
        // later than the one it was given.
        for spec in ["easy", "easy[pass=per-event]", "easy[reservation=nodes]", "easy[reservation=nodes,pass=per-event]"] {
            reservations_hold(spec, procs, &jobs)?;
        }
    }

    #[test]
    fn conservative_never_delays_any_reservation((procs, jobs) in workload(false)) {
        // Not with replan=rebuild: rebuilding in queue order lets an earlier job take a
        // later job's slot, as in Slurm's backfill cycle; only the revisit rule promises it.
        for spec in ["conservative", "conservative[pass=per-event]", "conservative[reservation=nodes]", "conservative[backfill_estimate=actual]", "conservative[reservation=nodes,pass=per-event]"] {
            reservations_hold(spec, procs, &jobs)?;
        }
    }

    #[test]
    fn runs_are_deterministic((procs, jobs) in workload(true)) {
        for spec in SPECS {
            let a = crate::run(spec, procs, &jobs, false);
            let b = crate::run(spec, procs, &jobs, false);
            prop_assert_eq!(a, b);
        }
    }
}

/// A workload in a short form for failure messages: (submit, procs, run, requested) in s.
fn brief(jobs: &[Job]) -> Vec<(u64, u32, u64, u64)> {
    let s = |d: SimDuration| d.0 / 1_000_000;
    jobs.iter().map(|j| (j.submit.0 / 1_000_000, j.tasks, s(j.runtime.unwrap()), s(j.requested.unwrap()))).collect()
}

/// With estimates never below run times, every job starts no later than any reservation
/// it was ever given.
fn reservations_hold(spec: &str, procs: u32, jobs: &[Job]) -> Result<(), TestCaseError> {
    let mut p = policies::build(spec).unwrap();
    let mut log = Reservations::default();
    let r =
        sim_core::simulate(&Cluster::processor_pool(procs), jobs, p.as_mut(), &SimConfig::default(), Some(&mut log))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
    for (id, at) in log.0 {
        let i: usize = id.parse().unwrap();
        let start = r.records[i].start.expect("reserved jobs start").0;
        prop_assert!(
            start <= at,
            "{} on {}: job {} reserved at {} but started at {} in {:?}",
            spec,
            procs,
            id,
            at,
            start,
            brief(jobs)
        );
    }
    Ok(())
}

/// Each restart rule of `--restarts` but torchrun's (no elastic jobs here).
const RESTARTS: &[&str] =
    &["always", "slurm[max=1]", "slurm[requeue=no]", "kube[backoff_limit=1]", "volcano[max_retry=1]"];

/// Nodes going down in the first minute and all back by 100 s (each node at most once).
fn outages(procs: u32) -> impl Strategy<Value = Vec<(u64, u32, u64)>> {
    prop::collection::vec((0u64..60, 0..procs, 100u64..160), 0..6).prop_map(|mut v| {
        v.sort_by_key(|&(_, n, _)| n);
        v.dedup_by_key(|&mut (_, n, _)| n);
        v
    })
}

/// Under node failures and every restart rule: one outcome per job, only the outcomes the
/// rule allows, a completed job's last attempt its whole run time, no unit held twice at
/// once, and the same records again from the same inputs.
fn check_restarts(
    spec: &str,
    rule: &str,
    procs: u32,
    jobs: &[Job],
    down: &[(u64, u32, u64)],
) -> Result<(), TestCaseError> {
    use sim_core::{NodeId, NodeState, Outcome};
    let mut node_events = Vec::new();
    for &(at, node, back) in down {
        node_events.push((SimTime::from_secs(at), NodeId(node), NodeState::Down));
        node_events.push((SimTime::from_secs(back), NodeId(node), NodeState::Up));
    }
    node_events.sort_by_key(|e| e.0);
    let restarts = sim_core::restart::Restarts::parse(rule).unwrap();
    let cfg = SimConfig { node_events, restarts, ..SimConfig::default() };
    let run = || {
        let mut p = policies::build(spec).unwrap();
        sim_core::simulate(&Cluster::processor_pool(procs), jobs, p.as_mut(), &cfg, None)
            .map_err(|e| TestCaseError::fail(format!("{spec} {rule}: {e}")))
    };
    let r = run()?;
    prop_assert_eq!(r.records.len(), jobs.len());
    let mut spans = Vec::new();
    for (j, rec) in jobs.iter().zip(&r.records) {
        match rec.outcome {
            Outcome::Completed => {
                let (s, e) = (rec.start.unwrap(), rec.end.unwrap());
                prop_assert_eq!(e - s, j.runtime.unwrap(), "{} {}: job {}", spec, rule, j.trace_id);
                spans.push((s, e, rec.units.clone()));
            }
            Outcome::Failed => prop_assert!(rule != "always" && rec.end.is_some(), "{} {}: {:?}", spec, rule, rec),
            Outcome::Unfinished => {
                prop_assert!(rule.starts_with("slurm[max"), "{} {}: {:?}", spec, rule, rec);
                prop_assert!(rec.unfinished_reason.as_deref().unwrap_or("").starts_with("JobHoldMaxRequeue"));
            }
            Outcome::Rejected(_) => prop_assert!(rec.start.is_none()),
            other => prop_assert!(false, "{} {}: unexpected outcome {:?}", spec, rule, other),
        }
    }
    for (a, (s1, e1, u1)) in spans.iter().enumerate() {
        for (s2, e2, u2) in &spans[a + 1..] {
            if s1 < e2 && s2 < e1 {
                prop_assert!(u1.iter().all(|u| !u2.contains(u)), "{} {}: a unit held twice", spec, rule);
            }
        }
    }
    let again = run()?;
    for (x, y) in r.records.iter().zip(&again.records) {
        prop_assert_eq!((x.outcome, x.start, x.end, x.attempts), (y.outcome, y.start, y.end, y.attempts));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn restart_rules_keep_one_outcome_per_job(
        (procs, jobs, down) in workload(true).prop_flat_map(|(p, j)| (Just(p), Just(j), outages(p)))
    ) {
        for spec in ["fcfs", "easy", "conservative"] {
            for rule in RESTARTS {
                check_restarts(spec, rule, procs, &jobs, &down)?;
            }
        }
    }
}

/// Jobs handed out one at a time, as a streamed run reads them.
struct Jobs(std::vec::IntoIter<Job>);

impl sim_core::JobSource for Jobs {
    fn next_job(&mut self) -> Result<Option<Job>, String> {
        Ok(self.0.next())
    }
    fn remaining(&self) -> usize {
        self.0.len()
    }
}

/// Records as a streamed run writes them, with their ids.
#[derive(Default)]
struct Records(Vec<(u32, sim_core::JobRecord)>);

impl sim_core::RecordSink for Records {
    fn record(&mut self, id: sim_core::JobId, _: &Job, record: sim_core::JobRecord) -> Result<(), String> {
        self.0.push((id.0, record));
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A streamed run (jobs read as they arrive, records written as they leave) gives
    /// every job the record of a run that holds them all, in input order, under every
    /// policy, with time limits enforced or not, to the end or to a horizon.
    #[test]
    fn streamed_runs_give_the_records_of_whole_runs(
        (procs, jobs) in workload(true),
        kill in any::<bool>(),
        horizon in prop::option::of(0u64..120),
        which in 0usize..16,
        window in 1usize..6,
    ) {
        let spec = SPECS.iter().copied().chain(["sjf-aging", "kube", "kube[order=fifo,queue=easy,gang=atomic]"]).nth(which).unwrap();
        let cluster = Cluster::processor_pool(procs);
        let cfg = SimConfig { walltime_kill: kill, horizon: horizon.map(SimTime::from_secs), ..SimConfig::default() };
        let mut p = policies::build(spec).unwrap();
        let whole = sim_core::simulate(&cluster, &jobs, p.as_mut(), &cfg, None).unwrap();
        let mut p = policies::build(spec).unwrap();
        let (mut source, mut sink) = (Jobs(jobs.clone().into_iter()), Records::default());
        // A window of a few ids: jobs still in the system are kept aside all the time.
        let streamed = sim_core::simulate_stream_in(&cluster, (&mut source, &mut sink, window), p.as_mut(), &cfg, Default::default()).unwrap();
        prop_assert!(streamed.records.is_empty());
        // Each job once (in id order unless the window kept one aside).
        let mut got = sink.0;
        got.sort_by_key(|r| r.0);
        prop_assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), (0..jobs.len() as u32).collect::<Vec<_>>());
        let records: Vec<_> = got.into_iter().map(|r| r.1).collect();
        prop_assert_eq!(records, whole.records, "{}", spec);
        prop_assert_eq!((streamed.passes, streamed.events), (whole.passes, whole.events));
    }
}

/// A streamed input out of submission order stops the run, naming both jobs.
#[test]
fn a_streamed_input_out_of_order_is_refused() {
    let s = SimDuration::from_secs;
    let jobs = vec![
        Job::rigid("a", SimTime::from_secs(10), 1, s(5), s(5)),
        Job::rigid("b", SimTime::from_secs(3), 1, s(5), s(5)),
    ];
    let (mut source, mut sink) = (Jobs(jobs.into_iter()), Records::default());
    let mut p = policies::build("easy").unwrap();
    let cfg = SimConfig::default();
    let e = sim_core::simulate_stream(
        &Cluster::processor_pool(2),
        &mut source,
        &mut sink,
        p.as_mut(),
        &cfg,
        Default::default(),
    )
    .unwrap_err();
    assert!(matches!(e, sim_core::EngineError::Unsorted(_)) && e.is_bad_input(), "{e}");
    assert!(e.to_string().starts_with("job b is submitted at 3s, before job a read before it (10s)"), "{e}");
}
