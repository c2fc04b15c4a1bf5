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
