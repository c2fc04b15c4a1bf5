//! `sacct.txt`: a run's jobs in Slurm's `sacct --parsable2` layout (docs/cli.md#sacctxt).

use super::{data, read, run_into};
use std::path::Path;

const HEADER: &str = "JobID|JobName|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|Timelimit|NCPUS|NNodes|NodeList|State|Reason|Priority|Restarts";

/// Three jobs on a 4-processor machine whose log started at 1996-09-23T12:00:31 UTC.
/// Job 1 (2 procs) starts at once; job 2 needs all 4 and waits for it; job 3 (3 procs)
/// cannot start beside either (backfill cannot help: never 3 free) and starts when job 2
/// ends. Job 2 was cancelled (status 5) after its run, job 3 failed (status 0); job 4
/// asks for more than the machine and is refused at submission.
const SWF: &str = "\
; UnixStartTime: 843480031
; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 300 -1 1 1 1 -1 1 -1 -1 -1
2 10 -1 50 4 -1 -1 4 120 -1 5 2 1 -1 -1 -1 -1 -1
3 20 -1 30 3 -1 -1 3 61 -1 0 3 2 -1 -1 -1 -1 -1
4 30 -1 30 8 -1 -1 8 60 -1 1 3 2 -1 -1 -1 -1 -1
";

fn swf(dir: &Path) -> String {
    let p = dir.join("three.swf");
    std::fs::write(&p, SWF).unwrap();
    p.display().to_string()
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

/// Column `name` of every job line.
fn column<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let i = HEADER.split('|').position(|h| h == name).unwrap();
    text.lines().skip(1).map(|l| l.split('|').nth(i).unwrap()).collect()
}

#[test]
fn a_slurm_run_writes_the_jobs_as_sacct_shows_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, dir) = run_into(&["--trace", &swf(tmp.path()), "--policy", "slurm"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Hand-computed: 843480031 s is 1996-09-23T12:00:31; limits 300 s, 120 s and 61 s
    // (rounded up to whole minutes); the adopted cluster's nodes are n0..n3, one CPU each;
    // the refused job 4 is not in the accounting. Priority 1: Slurm's default
    // priority/multifactor with every weight 0 gives each job the minimum, 1.
    let want = [
        HEADER,
        "1|1|u1|g1|batch|q1|1996-09-23T12:00:31|1996-09-23T12:00:31|1996-09-23T12:00:31|1996-09-23T12:02:11|00:01:40|00:05:00|2|2|n[0-1]|COMPLETED|None|1|0",
        "2|2|u2|g1|batch|normal|1996-09-23T12:00:41|1996-09-23T12:00:41|1996-09-23T12:02:11|1996-09-23T12:03:01|00:00:50|00:02:00|4|4|n[0-3]|CANCELLED|None|1|0",
        "3|3|u3|g2|batch|normal|1996-09-23T12:00:51|1996-09-23T12:00:51|1996-09-23T12:03:01|1996-09-23T12:03:31|00:00:30|00:02:00|3|3|n[0-2]|FAILED|None|1|0",
    ];
    assert_eq!(lines(&read(&dir, "sacct.txt")), want);
    // The same run's jobs.csv agrees (job 4 rejected there).
    let jobs = read(&dir, "jobs.csv");
    assert!(jobs.contains("\n4,30,,,,,60,8,rejected,"), "{jobs}");
}

#[test]
fn the_horizon_leaves_jobs_running_and_pending() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, dir) = run_into(&["--trace", &swf(tmp.path()), "--policy", "slurm", "--horizon", "120"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want = [
        HEADER,
        "1|1|u1|g1|batch|q1|1996-09-23T12:00:31|1996-09-23T12:00:31|1996-09-23T12:00:31|1996-09-23T12:02:11|00:01:40|00:05:00|2|2|n[0-1]|COMPLETED|None|1|0",
        // Running since 100 s: 20 s at the horizon, no end yet.
        "2|2|u2|g1|batch|normal|1996-09-23T12:00:41|1996-09-23T12:00:41|1996-09-23T12:02:11|Unknown|00:00:20|00:02:00|4|4|n[0-3]|RUNNING|None|1|0",
        "3|3|u3|g2|batch|normal|1996-09-23T12:00:51|1996-09-23T12:00:51|Unknown|Unknown|00:00:00|00:02:00|3|1|None assigned|PENDING|Resources|1|0",
    ];
    assert_eq!(lines(&read(&dir, "sacct.txt")), want);
    // A job the horizon stopped before its submission is not in the accounting either.
    let (out, dir) = run_into(&["--trace", &swf(tmp.path()), "--policy", "slurm", "--horizon", "15"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(column(&read(&dir, "sacct.txt"), "JobID"), ["1", "2"]);
    assert_eq!(column(&read(&dir, "sacct.txt"), "State"), ["RUNNING", "PENDING"]);
}

#[test]
fn other_policies_write_it_only_with_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = swf(tmp.path());
    let (out, dir) = run_into(&["--trace", &trace, "--policy", "easy"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.path().join("out/sacct.txt").exists());
    let (out, dir) = run_into(&["--trace", &trace, "--policy", "easy", "--sacct"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = read(&dir, "sacct.txt");
    assert_eq!(text.lines().next(), Some(HEADER));
    assert_eq!(column(&text, "Start"), ["1996-09-23T12:00:31", "1996-09-23T12:02:11", "1996-09-23T12:03:01"]);
    assert_eq!(column(&text, "State"), ["COMPLETED", "CANCELLED", "FAILED"]);
    // Where EASY put them: the units it held, one processor per node.
    for (list, n) in column(&text, "NodeList").into_iter().zip([2, 4, 3]) {
        let nodes = policies::slurm::conf::expand_hostlist(list).unwrap();
        assert_eq!(nodes.len(), n, "{list}");
        assert!(nodes.iter().all(|x| ["n0", "n1", "n2", "n3"].contains(&x.as_str())), "{list}");
    }
    // A later run into the same folder that writes none removes it.
    let folder = dir.path().join("out");
    let o = super::sim(&["run", "--quiet", "--out", folder.to_str().unwrap(), "--trace", &trace, "--policy", "easy"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!dir.path().join("out/sacct.txt").exists());
}

/// The real Slurm run (data/slurm/real-1node) replayed under its own slurm.conf: the
/// columns sacct printed there are spelled and written the same way here, and the values
/// a replay keeps (the submissions, limits, CPUs, nodes, partition) come back as sacct
/// printed them.
#[test]
fn the_real_runs_columns_and_values_come_back() {
    let real = std::fs::read_to_string(data("slurm/real-1node/sacct.txt")).unwrap();
    let (out, dir) = run_into(&[
        "--trace",
        &data("slurm/real-1node/sacct.txt"),
        "--slurm-conf",
        &data("slurm/real-1node/slurm.conf"),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ours = read(&dir, "sacct.txt");
    assert_eq!(ours.lines().next(), Some(HEADER));
    assert!(ours.lines().all(|l| l.split('|').count() == 19 && !l.ends_with('|')));
    let real_head: Vec<&str> = real.lines().next().unwrap().split('|').collect();
    let shared: Vec<&str> = HEADER.split('|').filter(|h| real_head.contains(h)).collect();
    assert_eq!(
        shared,
        [
            "JobID",
            "JobName",
            "User",
            "Account",
            "Partition",
            "QOS",
            "Submit",
            "Start",
            "End",
            "Elapsed",
            "Timelimit",
            "NCPUS",
            "NNodes",
            "State"
        ]
    );
    let real_col = |name: &str| -> Vec<&str> {
        let i = real_head.iter().position(|h| *h == name).unwrap();
        real.lines().skip(1).map(|l| l.split('|').nth(i).unwrap()).collect()
    };
    for name in ["JobID", "Submit", "Timelimit", "NCPUS", "NNodes", "Partition", "QOS", "State"] {
        assert_eq!(column(&ours, name), real_col(name), "{name}");
    }
    assert!(column(&ours, "NodeList").iter().all(|n| *n == "localhost"));
    // Every time and duration is written as sacct writes them.
    let time = |t: &str| t.len() == 19 && t.as_bytes()[10] == b'T' && t.starts_with("2026-11-30T");
    let hms = |d: &str| d.len() == 8 && d.split(':').all(|p| p.len() == 2 && p.parse::<u8>().is_ok());
    for name in ["Submit", "Eligible", "Start", "End"] {
        assert!(column(&ours, name).iter().all(|t| time(t)), "{name}");
    }
    assert!(column(&ours, "Elapsed").iter().chain(&column(&ours, "Timelimit")).all(|d| hms(d)));
    // The simulated starts are the real ones within a second for almost every job.
    let secs = |t: &str| -> i64 {
        let p: Vec<i64> = t[11..].split(':').map(|x| x.parse().unwrap()).collect();
        p[0] * 3600 + p[1] * 60 + p[2]
    };
    let close =
        column(&ours, "Start").iter().zip(real_col("Start")).filter(|(a, b)| (secs(a) - secs(b)).abs() <= 1).count();
    assert!(close >= 38, "{close} of 40");
    // schedlab's own sacct reader reads it back: the same 40 jobs.
    let (out, dir2) = run_into(&[
        "--trace",
        dir.path().join("out/sacct.txt").to_str().unwrap(),
        "--format",
        "sacct",
        "--slurm-conf",
        &data("slurm/real-1node/slurm.conf"),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(column(&read(&dir2, "sacct.txt"), "Submit"), real_col("Submit"));
}

#[test]
fn host_lists_read_back_as_slurm_expands_them() {
    let sets: [&[&str]; 4] = [
        &["thin0001", "thin0002", "thin0003", "thin0007"],
        &["n0", "n1", "n2", "n5", "n9", "n10", "n11"],
        &["gpu1", "gpu2", "cpu001", "cpu002", "login"],
        &["localhost"],
    ];
    for names in sets {
        let list = reports::sacct::hostlist(names.iter().copied());
        assert_eq!(policies::slurm::conf::expand_hostlist(&list).unwrap(), names, "{list}");
    }
    assert_eq!(reports::sacct::hostlist(["thin0001", "thin0002", "thin0003", "thin0007"]), "thin[0001-0003,0007]");
}
