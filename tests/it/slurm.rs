//! The `slurm` policy against a real Slurm run (`data/slurm/real-1node/`: Slurm 22.05.8,
//! 40 jobs on one 16-CPU node, its own slurm.conf and sacct output).

use super::{data, read, run_into};
use std::collections::BTreeMap;

/// The real start of each job, seconds since midnight (sacct's `Start`).
fn real_starts() -> BTreeMap<String, i64> {
    let text = std::fs::read_to_string(data("slurm/real-1node/sacct.txt")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split('|').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (id, start) = (col("JobID"), col("Start"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            let hms: Vec<i64> = f[start].split('T').nth(1).unwrap().split(':').map(|x| x.parse().unwrap()).collect();
            (f[id].to_string(), hms[0] * 3600 + hms[1] * 60 + hms[2])
        })
        .collect()
}

/// (job, simulated start) of a run's jobs.csv.
fn starts(jobs_csv: &str) -> Vec<(String, i64)> {
    let mut lines = jobs_csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (id, start) =
        (head.iter().position(|h| *h == "job_id").unwrap(), head.iter().position(|h| *h == "start").unwrap());
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[id].to_string(), f[start].parse::<f64>().unwrap() as i64)
        })
        .collect()
}

fn replay(policy: &str) -> Vec<(String, i64)> {
    let conf = data("slurm/real-1node/slurm.conf");
    let sacct = data("slurm/real-1node/sacct.txt");
    let (out, dir) = run_into(&["--trace", &sacct, "--slurm-conf", &conf, "--policy", policy]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    starts(&read(&dir, "jobs.csv"))
}

fn matched(sim: &[(String, i64)], within: i64) -> usize {
    let real = real_starts();
    sim.iter().filter(|(id, s)| (s - real[id]).abs() <= within).count()
}

#[test]
fn reproduces_the_real_runs_start_times() {
    let sim = replay("slurm");
    assert_eq!(sim.len(), 40);
    let within_1 = matched(&sim, 1);
    assert!(within_1 >= 38, "only {within_1} of 40 starts within 1 s of the real ones");
    // Slurm's submit-time start, its main scheduler at job ends and its one-second
    // backfill cycles: most starts are exact to the second of sacct's clock.
    assert!(matched(&sim, 0) >= 30, "only {} exact", matched(&sim, 0));
}

#[test]
fn the_textbook_algorithms_do_not() {
    // Processor-count EASY and conservative ignore the whole-node reservations and the
    // cycles: they reproduce far fewer of the real starts.
    for p in ["easy", "conservative"] {
        let n = matched(&replay(p), 1);
        assert!(n < 30, "{p}: {n} of 40 within 1 s");
    }
}

#[test]
fn without_backfill_jobs_wait_for_the_main_scheduler() {
    // sched/builtin: no cycles, so a job that is not first in line at its submission
    // starts only when a job ends or at the next sched_interval pass; strictly in order.
    let sim = replay("slurm[backfill=off]");
    let mut by_start = sim.clone();
    by_start.sort_by_key(|(id, s)| (*s, id.parse::<u32>().unwrap()));
    let order: Vec<u32> = by_start.iter().map(|(id, _)| id.parse().unwrap()).collect();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(order, sorted, "the main scheduler alone starts jobs in priority (submit) order");
    assert!(matched(&sim, 1) < 38);
}

#[test]
fn a_job_that_ends_while_nothing_waits_frees_its_cpus() {
    // 4 processors. Job 1 (4 procs, 10 s) ends at 10 while the queue is empty; job 2
    // (4 procs) arrives at 20 and is alone in its partition: it starts at submission.
    // Job 3 (4 procs) arrives at 21 while 2 runs (until 120): it starts when 2 ends.
    let dir = tempfile::tempdir().unwrap();
    let swf = dir.path().join("t.swf");
    std::fs::write(
        &swf,
        "; MaxProcs: 4\n1 0 -1 10 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 20 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n\
         3 21 -1 5 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n",
    )
    .unwrap();
    let (out, run) = run_into(&["--trace", swf.to_str().unwrap(), "--policy", "slurm"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = starts(&read(&run, "jobs.csv"));
    assert_eq!(s, [("1".to_string(), 0), ("2".to_string(), 20), ("3".to_string(), 120)]);
}

/// A one-node cluster of 4 CPUs, with `extra` slurm.conf lines, a QOS file and an SWF
/// trace; the (job, start, end) of each job.
fn preemption_run(extra: &str, qos: &str, swf_jobs: &str) -> Vec<(String, i64, i64)> {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        format!(
            "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nSchedulerType=sched/backfill\n\
             PriorityType=priority/basic\nNodeName=n1 CPUs=4 RealMemory=1000\n{extra}"
        ),
    )
    .unwrap();
    let qos_file = dir.path().join("qos.txt");
    std::fs::write(&qos_file, qos).unwrap();
    let swf = dir.path().join("t.swf");
    std::fs::write(&swf, format!("; MaxProcs: 4\n{swf_jobs}")).unwrap();
    let (out, run) = run_into(&[
        "--trace",
        swf.to_str().unwrap(),
        "--slurm-conf",
        conf.to_str().unwrap(),
        "--qos",
        qos_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = read(&run, "jobs.csv");
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let secs = |c: &str| f[col(c)].parse::<f64>().unwrap() as i64;
            (f[col("job_id")].to_string(), secs("start"), secs("end"))
        })
        .collect()
}

/// Two QOSes: `high` preempts `low` (slurm.conf PreemptType=preempt/qos, `Preempt` of
/// `sacctmgr show qos`), `low`'s jobs requeued (`PreemptMode=REQUEUE`) after `grace`.
fn qos_file(grace: &str) -> String {
    format!("Name|Priority|Preempt|PreemptMode|GraceTime\nlow|0||requeue|{grace}\nhigh|100|low|requeue|00:00:00\n")
}

/// Job 1 (QOS low, queue 0: 4 CPUs, 100 s) starts at 0; job 2 (QOS high, queue 1: 4 CPUs,
/// 50 s) arrives at 10 and preempts it.
const PREEMPTED: &str = "1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 0 -1 -1 -1\n\
                         2 10 -1 50 4 -1 -1 4 100 -1 1 2 2 -1 1 -1 -1 -1\n";

#[test]
fn a_qos_that_preempts_requeues_its_victim_at_once() {
    // Slurm's preempt.shtml: with GraceTime 0 the victim is requeued when the preemptor
    // is scheduled (at its submission here: select_nodes preempts); the preemptor starts
    // as soon as the CPUs are back, at 10, and the victim, requeued with its id and one
    // restart, runs again from the start when the preemptor ends: 60 to 160.
    let r = preemption_run(
        "PreemptType=preempt/qos\nPreemptMode=REQUEUE\nPartitionName=p Nodes=n1 Default=YES\n",
        &qos_file("00:00:00"),
        PREEMPTED,
    );
    assert_eq!(r, [("1".into(), 60, 160), ("2".into(), 10, 60)]);
}

#[test]
fn grace_time_lets_the_victim_run_on_holding_its_cpus() {
    // GraceTime=00:00:30 on the victim's QOS: SIGTERM at 10, SIGKILL at 40; the preemptor
    // starts at 40 and ends at 90, when the victim starts again (90 to 190).
    let r = preemption_run(
        "PreemptType=preempt/qos\nPreemptMode=REQUEUE\nPartitionName=p Nodes=n1 Default=YES\n",
        &qos_file("00:00:30"),
        PREEMPTED,
    );
    assert_eq!(r, [("1".into(), 90, 190), ("2".into(), 40, 90)]);
}

#[test]
fn preempt_exempt_time_protects_a_young_job() {
    // PreemptExemptTime=00:00:30: job 1 may not be preempted before 30. Job 2 waits for
    // the next scheduler run after that, the periodic main scheduler at 60
    // (sched_interval 60), which preempts: job 2 runs 60 to 110, job 1 again 110 to 210.
    let r = preemption_run(
        "PreemptType=preempt/qos\nPreemptMode=REQUEUE\nPreemptExemptTime=00:00:30\nPartitionName=p Nodes=n1 Default=YES\n",
        &qos_file("00:00:00"),
        PREEMPTED,
    );
    assert_eq!(r, [("1".into(), 110, 210), ("2".into(), 60, 110)]);
}

#[test]
fn a_higher_tier_partition_preempts_a_lower_one() {
    // preempt/partition_prio: job 2 in partition `high` (PriorityTier 2, the SWF partition
    // field 1) preempts job 1 of `low` (PriorityTier 1, PreemptMode=REQUEUE) on the shared
    // node. No QOS preempts here (both jobs QOS low).
    let jobs = "1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 0 0 -1 -1\n\
                2 10 -1 50 4 -1 -1 4 100 -1 1 2 2 -1 0 1 -1 -1\n";
    let r = preemption_run(
        "PreemptType=preempt/partition_prio\nPartitionName=low Nodes=n1 Default=YES PriorityTier=1 PreemptMode=REQUEUE\n\
         PartitionName=high Nodes=n1 PriorityTier=2 PreemptMode=OFF\n",
        &qos_file("00:00:00"),
        jobs,
    );
    assert_eq!(r, [("1".into(), 60, 160), ("2".into(), 10, 60)]);
}

#[test]
fn a_qos_limit_holds_a_job_without_blocking_others() {
    // QOS low: MaxJobsPerUser=1. User 1's second job (2) waits for its first to end at 50
    // (QOSMaxJobsPerUserLimit) though CPUs are free, and does not block job 3 of user 2,
    // which starts at its submission.
    let qos = "Name|Priority|MaxJobsPU\nlow|0|1\n";
    let jobs = "1 0 -1 50 1 -1 -1 1 100 -1 1 1 1 -1 0 -1 -1 -1\n\
                2 5 -1 50 1 -1 -1 1 100 -1 1 1 1 -1 0 -1 -1 -1\n\
                3 6 -1 50 1 -1 -1 1 100 -1 1 2 2 -1 0 -1 -1 -1\n";
    let r = preemption_run("AccountingStorageEnforce=limits\nPartitionName=p Nodes=n1 Default=YES\n", qos, jobs);
    assert_eq!(r, [("1".into(), 0, 50), ("2".into(), 50, 100), ("3".into(), 6, 56)]);
    // Without AccountingStorageEnforce=limits (Slurm's default) no limit is applied.
    let r = preemption_run("PartitionName=p Nodes=n1 Default=YES\n", qos, jobs);
    assert_eq!(r, [("1".into(), 0, 50), ("2".into(), 5, 55), ("3".into(), 6, 56)]);
}

/// preempt/partition_prio with suspension: `low` (PriorityTier 1) and `high` (2) share
/// the node, the gang scheduler on (`PreemptMode=SUSPEND,GANG`), `OverSubscribe=FORCE:1`
/// as preempt.shtml asks for partitions whose jobs are suspended.
const SUSPENDING_TIERS: &str = "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n\
     PartitionName=low Nodes=n1 Default=YES PriorityTier=1 OverSubscribe=FORCE:1\n\
     PartitionName=high Nodes=n1 PriorityTier=2 OverSubscribe=FORCE:1 PreemptMode=OFF\n";

#[test]
fn a_higher_tier_partition_suspends_a_lower_one_until_it_ends() {
    // preempt.shtml (SUSPEND): job 2 of `high` (4 CPUs, 50 s) arrives at 10 and starts at
    // once on the CPUs of job 1 (`low`, 100 s), which is suspended after 10 s of its run
    // and resumed by the gang scheduler when job 2 ends at 60: it ends at 60 + 90 = 150
    // and keeps its first start. GraceTime is not used with SUSPEND: the QOS's 30 s
    // change nothing.
    let jobs = "1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 0 0 -1 -1\n\
                2 10 -1 50 4 -1 -1 4 100 -1 1 2 2 -1 0 1 -1 -1\n";
    for grace in ["00:00:00", "00:00:30"] {
        let r = preemption_run(SUSPENDING_TIERS, &qos_file(grace), jobs);
        assert_eq!(r, [("1".into(), 0, 150), ("2".into(), 10, 60)], "GraceTime {grace}");
    }
}

#[test]
fn a_suspended_jobs_cpus_stay_its_own() {
    // Job 2 (`high`, 2 CPUs) suspends job 1 (`low`, 4 CPUs) at 10. The 2 CPUs it does not
    // use stay job 1's (a suspended job keeps its allocation; only its preemptor runs on
    // it): job 3 (`low`, 2 CPUs, 10 s, at 20) waits for job 1, resumed at 60 when job 2
    // ends, to end at 150.
    let jobs = "1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 0 0 -1 -1\n\
                2 10 -1 50 2 -1 -1 2 100 -1 1 2 2 -1 0 1 -1 -1\n\
                3 20 -1 10 2 -1 -1 2 100 -1 1 3 3 -1 0 0 -1 -1\n";
    let r = preemption_run(SUSPENDING_TIERS, &qos_file("00:00:00"), jobs);
    assert_eq!(r, [("1".into(), 0, 150), ("2".into(), 10, 60), ("3".into(), 150, 160)]);
}

#[test]
fn a_qos_suspends_only_jobs_of_a_lower_tier_partition() {
    // preempt/qos with SUSPEND: the preemptor must be in a partition of a higher
    // PriorityTier (preempt.shtml); in the same partition the gang scheduler would
    // time-slice, which is not modelled, so job 2 (QOS high) does not preempt job 1 (QOS
    // low) there and waits for it to end at 100. Submitted to partition `high` (tier 2)
    // it suspends job 1 as partition_prio does.
    let qos = "Name|Priority|Preempt|PreemptMode\nlow|0||suspend\nhigh|100|low|off\n";
    let conf = "PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG\n\
                PartitionName=low Nodes=n1 Default=YES PriorityTier=1\nPartitionName=high Nodes=n1 PriorityTier=2\n";
    let same = "1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 0 0 -1 -1\n\
                2 10 -1 50 4 -1 -1 4 100 -1 1 2 2 -1 1 0 -1 -1\n";
    assert_eq!(preemption_run(conf, qos, same), [("1".into(), 0, 100), ("2".into(), 100, 150)]);
    let higher = "1 0 -1 100 4 -1 -1 4 200 -1 1 1 1 -1 0 0 -1 -1\n\
                  2 10 -1 50 4 -1 -1 4 100 -1 1 2 2 -1 1 1 -1 -1\n";
    assert_eq!(preemption_run(conf, qos, higher), [("1".into(), 0, 150), ("2".into(), 10, 60)]);
}

#[test]
fn suspension_without_the_gang_scheduler_is_refused() {
    // Without GANG slurmctld kills a job SUSPEND preempts (preempt.c, slurm_job_preempt);
    // select/linear cannot suspend at all (preempt.shtml).
    for (extra, expected) in [
        ("PreemptMode=SUSPEND\n", "SUSPEND with GANG in the cluster's PreemptMode"),
        ("PreemptMode=SUSPEND,GANG\nSelectType=select/linear\n", "SUSPEND needs select/cons_tres"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("slurm.conf");
        std::fs::write(
            &conf,
            format!("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\nPreemptType=preempt/qos\n{extra}"),
        )
        .unwrap();
        let (out, _) =
            run_into(&["--trace", &data("slurm/real-1node/sacct.txt"), "--slurm-conf", conf.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cannot be 'SUSPEND'") && err.contains(expected), "{err}");
    }
}

#[test]
fn sacct_qos_and_partition_names_pick_the_files_own() {
    // sacct names QOSes and partitions: jobs get the QOS and partition of their name, not
    // the line of the trace's first-seen order (low 1, high 2 would be `high` and
    // `normal`-less first line `low` here, and job 2 could not preempt). Job 2 (QOS high) preempts
    // job 1 (QOS low) at 10 as in `a_qos_that_preempts_requeues_its_victim_at_once`.
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nPriorityType=priority/basic\n\
         PreemptType=preempt/qos\nPreemptMode=REQUEUE\nNodeName=n1 CPUs=4 RealMemory=1000\n\
         PartitionName=other Nodes=n1\nPartitionName=p Nodes=n1 Default=YES\n",
    )
    .unwrap();
    let qos = dir.path().join("qos.txt");
    std::fs::write(&qos, "Name|Priority|Preempt|PreemptMode\nlow|0||requeue\nhigh|100|low|requeue\n").unwrap();
    let sacct = dir.path().join("sacct.txt");
    std::fs::write(
        &sacct,
        "JobID|JobName|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|ReqTRES|AllocTRES|Partition|QOS|User|Account|State\n\
         1|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:01:40|00:01:40|00:04:00|4|1|cpu=4,node=1|cpu=4,node=1|p|low|u|x|COMPLETED\n\
         2|b|2026-01-01T00:00:10|2026-01-01T00:00:10|2026-01-01T00:01:00|00:00:50|00:02:00|4|1|cpu=4,node=1|cpu=4,node=1|p|high|u|x|COMPLETED\n",
    )
    .unwrap();
    let (out, run) = run_into(&[
        "--trace",
        sacct.to_str().unwrap(),
        "--slurm-conf",
        conf.to_str().unwrap(),
        "--qos",
        qos.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = read(&run, "jobs.csv");
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let t0: i64 = csv
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(head.iter().position(|h| *h == "submit").unwrap())
        .unwrap()
        .parse::<f64>()
        .unwrap() as i64;
    let rel: Vec<(String, i64)> = starts(&csv).into_iter().map(|(j, t)| (j, t - t0)).collect();
    assert_eq!(rel, [("1".to_string(), 60), ("2".to_string(), 10)]);
}

#[test]
fn a_cancelling_qos_ends_its_victim_for_good() {
    // PreemptMode=CANCEL on QOS low (preempt.shtml: the preempted job is cancelled): job 1
    // ends `preempted` at 10 when job 2 preempts it, and never runs again; with GraceTime
    // 20 it runs on until 30, when job 2 starts.
    for (grace, end1, start2) in [("00:00:00", 10, 10), ("00:00:20", 30, 30)] {
        let qos = format!(
            "Name|Priority|Preempt|PreemptMode|GraceTime\nlow|0||cancel|{grace}\nhigh|100|low|cancel|00:00:00\n"
        );
        let r = preemption_run(
            "PreemptType=preempt/qos\nPreemptMode=CANCEL\nPartitionName=p Nodes=n1 Default=YES\n",
            &qos,
            PREEMPTED,
        );
        assert_eq!(r, [("1".into(), 0, end1), ("2".into(), start2, start2 + 50)], "GraceTime {grace}");
    }
}

/// A sacct dump (`sacct --parsable2` columns) of one-node jobs given as (id, submit,
/// run, CPUs, user, account), times in seconds from 2026-01-01T00:00:00, each started at
/// its submission (the replay takes run times as End − Start), limit 5 minutes.
fn sacct_dump(jobs: &[(&str, u32, u32, u32, &str, &str)]) -> String {
    let t = |s: u32| format!("2026-01-01T00:{:02}:{:02}", s / 60, s % 60);
    let mut text = String::from(
        "JobID|JobName|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|ReqTRES|AllocTRES|Partition|QOS|User|Account|State\n",
    );
    for &(id, submit, run, cpus, user, account) in jobs {
        let (start, end, elapsed) = (t(submit), t(submit + run), format!("00:{:02}:{:02}", run / 60, run % 60));
        text.push_str(&format!(
            "{id}|{id}|{start}|{start}|{end}|{elapsed}|00:05:00|{cpus}|1|cpu={cpus},node=1|cpu={cpus},node=1|p|normal|{user}|{account}|COMPLETED\n"
        ));
    }
    text
}

/// Start times of jobs and the priorities sacct.txt gives them.
type StartsAndPriorities = (Vec<(String, i64)>, Vec<(String, u64)>);

/// Jobs a1 (alice, account A) and b1 (bob, account B) share a 2-CPU node from 0 to 100;
/// b2 (bob) at 10 and a2 (alice) at 20 each need the whole node. The start times of b2
/// and a2, relative to the first submission, with or without an association file, and
/// each job's `Priority` in `sacct.txt`.
fn fair_share_run(assoc: Option<&str>) -> StartsAndPriorities {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nSchedulerType=sched/backfill\n\
         PriorityType=priority/multifactor\nPriorityWeightFairshare=1000\nPriorityWeightAge=0\n\
         PriorityCalcPeriod=1\nNodeName=n1 CPUs=2 RealMemory=1000\nPartitionName=p Nodes=n1 Default=YES\n",
    )
    .unwrap();
    let sacct = dir.path().join("sacct.txt");
    let text = sacct_dump(&[
        ("a1", 0, 100, 1, "alice", "A"),
        ("b1", 0, 100, 1, "bob", "B"),
        ("b2", 10, 50, 2, "bob", "B"),
        ("a2", 20, 50, 2, "alice", "A"),
    ]);
    std::fs::write(&sacct, text).unwrap();
    let mut args = vec!["--trace".to_string(), sacct.display().to_string()];
    args.extend(["--slurm-conf".to_string(), conf.display().to_string()]);
    if let Some(a) = assoc {
        let path = dir.path().join("assoc.txt");
        std::fs::write(&path, a).unwrap();
        args.extend(["--assoc".to_string(), path.display().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, run) = run_into(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = read(&run, "jobs.csv");
    let s = starts(&csv);
    let t0 = s.iter().map(|(_, t)| *t).min().unwrap();
    let sacct = read(&run, "sacct.txt");
    let head: Vec<&str> = sacct.lines().next().unwrap().split('|').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let prio = sacct
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            (f[col("JobID")].to_string(), f[col("Priority")].parse().unwrap())
        })
        .collect();
    (s.into_iter().filter(|(j, _)| j.ends_with('2')).map(|(j, t)| (j, t - t0)).collect(), prio)
}

#[test]
fn association_shares_order_the_fair_share() {
    // By the recalculation at 60 s (PriorityCalcPeriod=1) alice and bob have used 60
    // CPU-seconds each. Without --assoc both accounts have one share: equal fair share,
    // and b2, submitted first, starts first when the node frees at 100. With account A
    // holding 3 of the 4 shares (Fair Tree: A's level fair share 0.75 / 0.5 against B's
    // 0.25 / 0.5), alice ranks first and a2 starts first.
    assert_eq!(fair_share_run(None).0, [("b2".to_string(), 100), ("a2".to_string(), 150)]);
    let assoc = "Cluster|Account|User|Share\nc|root||1\nc|A||3\nc|A|alice|1\nc|B||1\nc|B|bob|1\n";
    let (starts, priorities) = fair_share_run(Some(assoc));
    assert_eq!(starts, [("b2".to_string(), 150), ("a2".to_string(), 100)]);
    // sacct's Priority is the multifactor priority last computed: 1000 × the fair-share
    // factor. a1 and b1 started at their submission, before any usage (factor 1); from
    // the recalculation at 60 Fair Tree ranks alice first of two users (factor 2/2 = 1)
    // and bob second (1/2), and so it stays while b2 waits.
    let p: Vec<(&str, u64)> = priorities.iter().map(|(j, p)| (j.as_str(), *p)).collect();
    assert_eq!(p, [("a1", 1000), ("b1", 1000), ("b2", 500), ("a2", 1000)]);
}

#[test]
fn a_bad_association_file_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(&conf, "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 Default=YES\n").unwrap();
    let assoc = dir.path().join("assoc.txt");
    for (text, expected) in [
        ("Account|User|Share\nA||x\n", "assoc.txt line 2, column Share"),
        ("Account|GrpTRES\nA|cpu=lots\n", "assoc.txt line 2, column GrpTRES"),
    ] {
        std::fs::write(&assoc, text).unwrap();
        let (out, _) = run_into(&[
            "--trace",
            &data("slurm/real-1node/sacct.txt"),
            "--slurm-conf",
            conf.to_str().unwrap(),
            "--assoc",
            assoc.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{err}");
    }
}

#[test]
fn association_limits_hold_jobs_with_slurms_reasons() {
    // resource_limits.shtml: account A's GrpTRES=cpu=2 caps its running jobs at 2 CPUs;
    // account B's MaxJobs=1 is inherited by bob's association. On a 4-CPU node alice's
    // third job waits for her first two (AssocGrpCpuLimit) and bob's second for his first
    // (AssocMaxJobsLimit), though a CPU is free from 3 to 100.
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nPriorityType=priority/basic\n\
         AccountingStorageEnforce=associations,limits\n\
         NodeName=n1 CPUs=4 RealMemory=1000\nPartitionName=p Nodes=n1 Default=YES\n",
    )
    .unwrap();
    let assoc = dir.path().join("assoc.txt");
    std::fs::write(
        &assoc,
        "Account|User|Share|GrpTRES|MaxJobs\nroot||||\nA||1|cpu=2|\nA|alice|1||\nB||1||1\nB|bob|1||\n",
    )
    .unwrap();
    let text = sacct_dump(&[
        ("a1", 0, 100, 1, "alice", "A"),
        ("a2", 0, 100, 1, "alice", "A"),
        ("a3", 1, 100, 1, "alice", "A"),
        ("b1", 2, 100, 1, "bob", "B"),
        ("b2", 3, 100, 1, "bob", "B"),
    ]);
    let sacct = dir.path().join("sacct.txt");
    std::fs::write(&sacct, text).unwrap();
    let rel_starts = || {
        let (out, run) = run_into(&[
            "--trace",
            sacct.to_str().unwrap(),
            "--slurm-conf",
            conf.to_str().unwrap(),
            "--assoc",
            assoc.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let s = starts(&read(&run, "jobs.csv"));
        let t0 = s.iter().map(|(_, t)| *t).min().unwrap();
        s.into_iter().map(|(j, t)| (j, t - t0)).collect::<Vec<_>>()
    };
    let want = |v: [(&str, i64); 5]| v.map(|(j, t)| (j.to_string(), t)).to_vec();
    assert_eq!(rel_starts(), want([("a1", 0), ("a2", 0), ("a3", 100), ("b1", 2), ("b2", 102)]));
    // Without AccountingStorageEnforce=limits the limits are not applied: a3 takes the
    // third CPU at 1, b1 the fourth at 2, and b2 waits for a CPU until 100.
    let text = std::fs::read_to_string(&conf).unwrap().replace("AccountingStorageEnforce=associations,limits\n", "");
    std::fs::write(&conf, text).unwrap();
    assert_eq!(rel_starts(), want([("a1", 0), ("a2", 0), ("a3", 1), ("b1", 2), ("b2", 100)]));
}
