//! Controllers from the command line and the cluster configuration.

use crate::{read, run_into, sim};
use std::path::PathBuf;

const CLUSTER: &str = "[[pool]]\nname = \"r1\"\ncount = 2\ncores = 4\ntopology = { rack = \"r1\" }\n\n\
[[pool]]\nname = \"r2\"\ncount = 2\ncores = 4\ntopology = { rack = \"r2\" }\n";

const WORKLOAD: &str = "{\"id\":\"A\",\"submit\":0,\"runtime\":100,\"tasks\":8}\n\
{\"id\":\"B\",\"submit\":60,\"runtime\":100,\"tasks\":8}\n\
{\"id\":\"C\",\"submit\":70,\"runtime\":50,\"tasks\":4}\n\
{\"id\":\"D\",\"submit\":80,\"runtime\":10,\"tasks\":12}\n";

fn starts(jobs_csv: &str) -> Vec<String> {
    jobs_csv.lines().skip(1).map(|l| l.split(',').nth(2).unwrap().to_string()).collect()
}

/// The maintenance window of the controller guide, from `--controller` and from a
/// `[[controller]]` table: rack r1 drains at 50 until 300 (see
/// crates/controllers/tests/it/maintenance.rs for the hand computation).
#[test]
fn a_maintenance_window_from_the_flag_or_the_cluster_file() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = dir.path().join("cluster.toml");
    let workload = dir.path().join("w.jsonl");
    std::fs::write(&cluster, CLUSTER).unwrap();
    std::fs::write(&workload, WORKLOAD).unwrap();
    let (w, c) = (workload.to_str().unwrap(), cluster.to_str().unwrap());
    let base = ["--trace", w, "--cluster", c, "--policy", "easy"];
    let (out, plain) = run_into(&base);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(starts(&read(&plain, "jobs.csv")), ["0", "60", "100", "160"]);
    let mut args = base.to_vec();
    args.extend(["--controller", "maintenance[rack=r1,at=50,until=300]"]);
    let (out, flag) = run_into(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(starts(&read(&flag, "jobs.csv")), ["0", "60", "160", "300"]);
    let s: serde_json::Value = serde_json::from_str(&read(&flag, "summary.json")).unwrap();
    assert_eq!(s["controllers"][0], "maintenance[rack=r1,pool=*,at=50,until=300,mode=drain]");
    let with_table = dir.path().join("maintained.toml");
    std::fs::write(
        &with_table,
        format!("{CLUSTER}\n[[controller]]\nspec = \"maintenance[rack=r1,at=50,until=300]\"\n"),
    )
    .unwrap();
    let (out, table) = run_into(&["--trace", w, "--cluster", with_table.to_str().unwrap(), "--policy", "easy"]);
    assert!(out.status.success());
    assert_eq!(read(&table, "jobs.csv"), read(&flag, "jobs.csv"));
}

#[test]
fn controllers_are_listed_and_bad_specs_refused() {
    let out = sim(&["controllers"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("maintenance\n"), "{text}");
    assert!(text.contains("    mode=drain|down (default drain)") && text.contains("job-retry"), "{text}");
    let (out, _) = run_into(&["--controller", "maintenance[when=3]"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--controller 'maintenance[when=3]': controller 'maintenance': unknown option 'when'"),
        "{err}"
    );
}

/// A rack powered off under `kube` (maintenance `mode=down`): Kubernetes' node lifecycle.
/// A (one GPU, 1000 s, preferring `tier=a`) starts at 0 on rack r1's node; r1 goes down
/// at 100; the node lifecycle controller taints it unreachable at 100 + 50 = 150; A's
/// default toleration (300 s) evicts it at 450, and it is placed on r2 at once: 450–1450.
/// With Kubernetes v1.31's 40 s grace: 440–1440; with Slurm's semantics (`--node-lifecycle
/// requeue`) it is requeued at 100: 100–1100.
#[test]
fn a_rack_down_under_kube_evicts_its_pods_after_grace_and_toleration() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = dir.path().join("cluster.toml");
    let workload = dir.path().join("w.jsonl");
    let pool = |name: &str, tier: &str| {
        format!(
            "[[pool]]\nname = \"{name}\"\ncount = 1\ncores = 8\nlabels = {{ tier = \"{tier}\" }}\n\
             gpus = {{ count = 1, model = \"A100\", memory_mib = 40960 }}\ntopology = {{ rack = \"{name}\" }}\n"
        )
    };
    std::fs::write(&cluster, format!("{}\n{}", pool("r1", "a"), pool("r2", "b"))).unwrap();
    std::fs::write(
        &workload,
        "{\"id\":\"A\",\"submit\":0,\"runtime\":1000,\"gpus\":1,\
         \"preferred\":[[100,[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"a\"]}]]]}\n",
    )
    .unwrap();
    let (w, c) = (workload.to_str().unwrap(), cluster.to_str().unwrap());
    let base =
        ["--trace", w, "--cluster", c, "--policy", "kube", "--controller", "maintenance[rack=r1,at=100,mode=down]"];
    let span = |extra: &[&str]| {
        let (out, run) = run_into(&[&base[..], extra].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let jobs = read(&run, "jobs.csv");
        let f: Vec<String> = jobs.lines().nth(1).unwrap().split(',').map(str::to_string).collect();
        (f[2].clone(), f[3].clone())
    };
    assert_eq!(span(&[]), ("450".into(), "1450".into()));
    assert_eq!(span(&["--node-monitor-grace", "v1.31"]), ("440".into(), "1440".into()));
    assert_eq!(span(&["--node-lifecycle", "requeue"]), ("100".into(), "1100".into()));
}

/// Two 4-core nodes, A (4 tasks of 100 s at 0: all on node 0) and a fault log in which
/// node 0 (the log's first node, `x`) fails at 50 and is back at 200, written into `dir`:
/// the cluster configuration, the workload and the log.
fn one_fault(dir: &tempfile::TempDir) -> (PathBuf, PathBuf, PathBuf) {
    let (cluster, workload, faults) =
        (dir.path().join("c.toml"), dir.path().join("w.jsonl"), dir.path().join("faults.csv"));
    std::fs::write(&cluster, "[[pool]]\nname = \"n\"\ncount = 2\ncores = 4\n").unwrap();
    std::fs::write(&workload, "{\"id\":\"A\",\"submit\":0,\"runtime\":100,\"tasks\":4}\n").unwrap();
    std::fs::write(&faults, "time,node,event,cause\n50,x,fault_start,GPU\n200,x,fault_end,GPU\n").unwrap();
    (cluster, workload, faults)
}

/// A fault log replayed with `--faults`: node 0 (the log's first node, `x`) fails at 50
/// and is back at 200. A (4 tasks of 100 s at 0, on node 0) is requeued at 50 and starts
/// again at once on node 1. Without checkpoints it runs its 100 s again: 50–150. With a
/// checkpoint every 20 s (free to write) and a 5 s restore it keeps 40 s of work and ends
/// at 50 + 5 + 60 = 115. The summary counts the restart; its ETTR is 100 / 115.
#[test]
fn a_fault_log_interrupts_jobs_and_checkpoints_keep_their_work() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, workload, faults) = one_fault(&dir);
    let (w, c, f) = (workload.to_str().unwrap(), cluster.to_str().unwrap(), faults.to_str().unwrap());
    let base = ["--trace", w, "--cluster", c, "--policy", "fcfs", "--faults", f];
    let times = |csv: &str| -> Vec<String> {
        csv.lines().skip(1).flat_map(|l| l.split(',').skip(2).take(2).map(str::to_string).collect::<Vec<_>>()).collect()
    };
    let (out, plain) = run_into(&base);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(times(&read(&plain, "jobs.csv")), ["50", "150"]);
    let mut args = base.to_vec();
    args.extend(["--checkpoint", "interval=20,restore=5"]);
    let (out, kept) = run_into(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(times(&read(&kept, "jobs.csv")), ["50", "115"]);
    let s: serde_json::Value = serde_json::from_str(&read(&kept, "summary.json")).unwrap();
    assert_eq!(s["interruptions"]["restarts"], 1);
    assert!((s["interruptions"]["ettr"].as_f64().unwrap() - 100.0 / 115.0).abs() < 1e-9, "{s}");
    // A bad log or checkpoint setting is bad input, named.
    std::fs::write(&faults, "time,node,event\n50,x,exploded\n").unwrap();
    let (out, _) = run_into(&base);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("faults.csv:2: event"));
    args.truncate(base.len());
    args.extend(["--checkpoint", "interval=auto"]);
    let (out, _) = run_into(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interval=auto needs a failures controller"));
}

/// `sim compare --vary checkpoint_interval=...` on the fault-log scenario above: with a
/// checkpoint every 20 s A keeps 40 s of work (ends at 115: ETTR 100/115), every 30 s it
/// keeps 30 s (ends at 50 + 5 + 70 = 125: ETTR 0.8), every 60 s nothing (no checkpoint
/// to restore: ends at 150, ETTR 2/3). Each interval is a run of its own and a policy of
/// its own in the comparison; the sweep's table and plot are written.
#[test]
fn a_checkpoint_interval_sweep_compares_each_interval() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, workload, faults) = one_fault(&dir);
    let out = dir.path().join("sweep");
    let (w, c, f, o) =
        (workload.to_str().unwrap(), cluster.to_str().unwrap(), faults.to_str().unwrap(), out.to_str().unwrap());
    let mut args = vec!["compare", "--quiet", "--trace", w, "--cluster", c, "--faults", f, "--out", o];
    args.extend(["--policies", "fcfs", "--checkpoint", "interval=600,restore=5"]);
    args.extend(["--vary", "checkpoint_interval=60,20,30"]);
    let run = sim(&args);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let runs = std::fs::read_to_string(out.join("runs.txt")).unwrap();
    assert_eq!(
        runs,
        "fcfs__checkpoint_interval_60__seed0\nfcfs__checkpoint_interval_20__seed0\nfcfs__checkpoint_interval_30__seed0\n"
    );
    let s: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("fcfs__checkpoint_interval_30__seed0/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s["variant"]["checkpoint_interval"], "30");
    assert_eq!(s["checkpoint"]["interval"], "30");
    let table = std::fs::read_to_string(out.join("tables/checkpoint_interval.csv")).unwrap();
    let ettr: Vec<(String, f64)> = table
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (format!("{} {}", f[0], f[1]), f[3].parse().unwrap())
        })
        .collect();
    let expected = [("fcfs 20", 100.0 / 115.0), ("fcfs 30", 0.8), ("fcfs 60", 100.0 / 150.0)];
    assert_eq!(ettr.len(), expected.len(), "{table}");
    for ((got, e), (want, x)) in ettr.iter().zip(expected) {
        assert_eq!(got, want);
        assert!((e - x).abs() < 1e-6, "{got}: {e} against {x}");
    }
    assert!(out.join("plots/checkpoint_interval.png").is_file());
    let comparison = std::fs::read_to_string(out.join("comparison.csv")).unwrap();
    assert!(comparison.contains(",fcfs checkpoint_interval=30,"), "{comparison}");
    // Without --checkpoint there is no interval to vary.
    let run = sim(&[
        "compare",
        "--quiet",
        "--trace",
        w,
        "--cluster",
        c,
        "--policies",
        "fcfs",
        "--out",
        o,
        "--vary",
        "checkpoint_interval=20",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--vary checkpoint_interval: needs --checkpoint"));
}

/// `sim trace fit-failures` on the committed InfiniteHBD log (as CSV, see data/README.md)
/// over its 400-server fleet: 584 faults in 345.1 days, 4.2e-3 per node-day, repairs of
/// median 20.4 h and mean 133 h — the figures `failures`' defaults come from.
#[test]
fn fit_failures_reads_infinitehbd_rates() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("failures.toml");
    let o = sim(&[
        "trace",
        "fit-failures",
        &crate::data("infinitehbd-faults.csv"),
        "--nodes",
        "400",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("584 faults on a fleet of 400 nodes over 345.1 days"), "{text}");
    assert!(text.contains("4.231e-3 faults per node-day") && text.contains("median 20.4 h, mean 132.8 h"), "{text}");
    assert!(text.contains("#   GPU: 158 (27.1 %)"), "{text}");
    assert!(
        text.ends_with("[[controller]]\nspec = \"failures[mtbf=5672.619,repair=20.414,repair_sigma=1.935]\"\n"),
        "{text}"
    );
    // By cause: GPU's own rate (158 faults) and repairs (median 16.8 h); the rates add up.
    let log = crate::data("infinitehbd-faults.csv");
    let o = sim(&["trace", "fit-failures", &log, "--nodes", "400", "--by-cause", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("spec = \"failures[cause=GPU,mtbf=20967.147,repair=16.789,repair_sigma=2.11]\""), "{text}");
    let rate: f64 = text
        .lines()
        .filter_map(|l| l.split("mtbf=").nth(1))
        .map(|m| 24.0 / m.split(',').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!((rate - 4.231e-3).abs() < 2e-6, "{rate}");
    // Samples: the repairs file holds the log's 584 repairs, and the controller it
    // writes runs.
    let o = sim(&["trace", "fit-failures", &log, "--nodes", "400", "--samples", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let repairs = std::fs::read_to_string(dir.path().join("failures.repairs.txt")).unwrap();
    assert_eq!(repairs.lines().filter(|l| !l.starts_with('#')).count(), 584);
    let text = std::fs::read_to_string(&out).unwrap();
    let spec = text.lines().last().unwrap().trim_start_matches("spec = \"").trim_end_matches('"');
    assert!(spec.contains("repair_file="), "{spec}");
    let (run, _) = crate::run_into(&["--controller", spec]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
}

/// Spot capacity and the bill. Pool `od` (1 node, 3 per hour) and pool `sp` (1 spot node,
/// 1 per hour, availability trace of 1,800 s ticks: 1 then 0). A and B (3,600 s each at
/// 0): A on od, B on sp. At 1,800 sp gets its notice: B checkpoints (1,800 s done) and is
/// evicted at 1,920, when sp leaves. B restarts on od when A ends, at 3,600, and ends at
/// 5,400. The bill over 0–5,400: od 1.5 h × 3 = 4.5, sp 1,920 s × 1 = 0.5333.
#[test]
fn a_spot_pool_is_reclaimed_and_the_bill_counts_what_was_present() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, workload, trace) =
        (dir.path().join("c.toml"), dir.path().join("w.jsonl"), dir.path().join("avail.json"));
    std::fs::write(
        &cluster,
        "[[pool]]\nname = \"od\"\ncount = 1\ncores = 1\nprice_per_hour = 3.0\n\n\
         [[pool]]\nname = \"sp\"\ncount = 1\ncores = 1\nprice_per_hour = 1.0\ncapacity = \"spot\"\n",
    )
    .unwrap();
    std::fs::write(
        &workload,
        "{\"id\":\"A\",\"submit\":0,\"runtime\":3600,\"tasks\":1}\n{\"id\":\"B\",\"submit\":0,\"runtime\":3600,\"tasks\":1}\n",
    )
    .unwrap();
    std::fs::write(&trace, r#"{"metadata": {"gap_seconds": 1800}, "data": [1, 0]}"#).unwrap();
    let spot = format!("spot[pool=sp,trace={},notice=120]", trace.display());
    let (w, c) = (workload.to_str().unwrap(), cluster.to_str().unwrap());
    let (out, d) = run_into(&["--trace", w, "--cluster", c, "--policy", "fcfs", "--controller", &spot]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let jobs = read(&d, "jobs.csv");
    let rows: Vec<Vec<&str>> = jobs.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!((rows[0][2], rows[0][3]), ("0", "3600"));
    assert_eq!((rows[1][2], rows[1][3]), ("3600", "5400"));
    let s: serde_json::Value = serde_json::from_str(&read(&d, "summary.json")).unwrap();
    let cost = &s["cost"];
    let near = |v: &serde_json::Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert!(near(&cost["total"], 4.5 + 1920.0 / 3600.0), "{cost}");
    assert!(
        near(&cost["by_capacity"]["spot"], 1920.0 / 3600.0) && near(&cost["node_hours"]["on-demand"], 1.5),
        "{cost}"
    );
    assert_eq!(cost["per_useful_gpu_hour"], serde_json::Value::Null);
    // B lost the 120 s of its notice (evicted) and waited 1,680 s for od.
    let lost = &s["interruptions"]["lost_core_hours"];
    assert!(near(&lost["eviction"], 120.0 / 3600.0) && near(&lost["waiting"], 1680.0 / 3600.0), "{lost}");
    assert!(near(&lost["failure"], 0.0), "{lost}");
    // Without prices there is no bill.
    std::fs::write(&cluster, "[[pool]]\nname = \"od\"\ncount = 2\ncores = 1\n").unwrap();
    let (_, d) = run_into(&["--trace", w, "--cluster", c, "--policy", "fcfs"]);
    let s: serde_json::Value = serde_json::from_str(&read(&d, "summary.json")).unwrap();
    assert!(s.get("cost").is_none());
    std::fs::write(&cluster, "[[pool]]\nname = \"od\"\ncount = 2\ncores = 1\ncapacity = \"cheap\"\n").unwrap();
    let (out, _) = run_into(&["--trace", w, "--cluster", c]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pool 'od': capacity: expected on-demand, spot or reserved"));
}

#[test]
fn restart_rules_fail_or_hold_an_interrupted_job_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, workload, faults) = one_fault(&dir);
    let (w, c, f) = (workload.to_str().unwrap(), cluster.to_str().unwrap(), faults.to_str().unwrap());
    let run = |restarts: &str| {
        let out = dir.path().join(format!("out-{}", restarts.len()));
        let o = out.to_str().unwrap();
        let args = ["run", "--quiet", "--trace", w, "--cluster", c, "--faults", f, "--out", o, "--restarts", restarts];
        let r = sim(&args);
        (r, out)
    };
    // --no-requeue: A fails when its node goes down, at 50.
    let (r, out) = run("slurm[requeue=no]");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["restarts"], "slurm[requeue=no,max=5]");
    assert_eq!(s["outcomes"]["failed"], 1);
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    assert!(jobs.lines().nth(1).unwrap().contains(",50,"), "{jobs}");
    // MaxBatchRequeue=0: held at its first requeue, unfinished.
    let (r, out) = run("slurm[max=0]");
    assert!(r.status.success());
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["outcomes"]["unfinished"], 1);
    // A bad rule: exit 2, naming the flag and what was expected.
    let (r, _) = run("slurm[max_retry=1]");
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("--restarts") && err.contains("requeue, max"), "{err}");
}

/// Placing spot capacity: the spot pool carries a `NoSchedule` taint (GKE taints Spot node
/// pools `cloud.google.com/gke-spot=true:NoSchedule` when asked; Karpenter users taint
/// spot NodePools the same way) and only the jobs that tolerate it — those that can lose
/// a node — go there. od and sp have one 1-core node each; A, B (no toleration) and C
/// (tolerates it) run 3,600 s from 0 under kube. A runs on od at 0, C on sp; B waits for
/// od, not sp. sp's notice at 1,800 evicts C (its progress saved) at 1,920; B, first in
/// the queue, takes od at 3,600 and C, which may run anywhere, follows at 7,200 and
/// finishes its remaining 1,800 s at 9,000.
#[test]
fn a_tainted_spot_pool_takes_only_the_jobs_that_tolerate_it() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, workload, trace) =
        (dir.path().join("c.toml"), dir.path().join("w.jsonl"), dir.path().join("avail.json"));
    std::fs::write(
        &cluster,
        "[[pool]]\nname = \"od\"\ncount = 1\ncores = 1\n\n\
         [[pool]]\nname = \"sp\"\ncount = 1\ncores = 1\ncapacity = \"spot\"\n\
         taints = [{ key = \"cloud.google.com/gke-spot\", value = \"true\", effect = \"NoSchedule\" }]\n",
    )
    .unwrap();
    let job = |id: &str, tolerates: bool| {
        let t = if tolerates {
            ",\"tolerations\":[{\"key\":\"cloud.google.com/gke-spot\",\"value\":\"true\",\"effect\":\"NoSchedule\"}]"
        } else {
            ""
        };
        format!("{{\"id\":\"{id}\",\"submit\":0,\"runtime\":3600,\"tasks\":1{t}}}\n")
    };
    std::fs::write(&workload, job("A", false) + &job("B", false) + &job("C", true)).unwrap();
    std::fs::write(&trace, r#"{"metadata": {"gap_seconds": 1800}, "data": [1, 0]}"#).unwrap();
    let spot = format!("spot[pool=sp,trace={},notice=120]", trace.display());
    let (w, c) = (workload.to_str().unwrap(), cluster.to_str().unwrap());
    let (out, d) = run_into(&["--trace", w, "--cluster", c, "--policy", "kube", "--controller", &spot]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let jobs = read(&d, "jobs.csv");
    let rows: Vec<Vec<&str>> = jobs.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let times: Vec<(&str, &str)> = rows.iter().map(|r| (r[2], r[3])).collect();
    assert_eq!(times, [("0", "3600"), ("3600", "7200"), ("7200", "9000")], "{jobs}");
}

/// torchrun's elastic restart. Three 1-core nodes; A (3 tasks, 3,000 s) runs one task on
/// each under kube. Node x (node 0) fails at 1,000 for good (until 20,000); the node
/// lifecycle controller taints it unreachable 50 s later and A's pod there is evicted after
/// its 300 s toleration, at 1,350. With `min_tasks` 2 and max_restarts 1, torchrun restarts
/// A at once on the two tasks left: 3,000 × 3/2 = 4,500 s from scratch, ending at 5,850.
/// With torchrun's default max_restarts 0 it fails at 1,350; a job that needs all three
/// tasks cannot go on and is requeued, to start when node 0 is back, at 20,000.
#[test]
fn torchrun_continues_an_elastic_job_on_the_nodes_left() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, faults) = (dir.path().join("c.toml"), dir.path().join("faults.csv"));
    std::fs::write(&cluster, "[[pool]]\nname = \"n\"\ncount = 3\ncores = 1\n").unwrap();
    std::fs::write(&faults, "time,node,event,cause\n1000,x,fault_start,GPU\n20000,x,fault_end,GPU\n").unwrap();
    let run = |min_tasks: u32, restarts: &str| {
        let workload = dir.path().join(format!("w{min_tasks}.jsonl"));
        let a = format!("{{\"id\":\"A\",\"submit\":0,\"runtime\":3000,\"tasks\":3,\"min_tasks\":{min_tasks}}}\n");
        std::fs::write(&workload, a).unwrap();
        let (w, c, f) = (workload.to_str().unwrap(), cluster.to_str().unwrap(), faults.to_str().unwrap());
        let args = ["--trace", w, "--cluster", c, "--faults", f, "--policy", "kube", "--restarts", restarts, "--log"];
        let (out, d) = run_into(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let jobs = read(&d, "jobs.csv");
        let row: Vec<String> = jobs.lines().nth(1).unwrap().split(',').map(String::from).collect();
        (row[2].clone(), row[3].clone(), row[8].clone(), read(&d, "decisions.jsonl"))
    };
    let (start, end, outcome, log) = run(2, "torchrun[max_restarts=1]");
    assert_eq!((start.as_str(), end.as_str(), outcome.as_str()), ("1350", "5850", "completed"));
    assert!(log.contains("torchrun restarts it on the 2 of its 3 tasks left"), "{log}");
    let (_, end, outcome, _) = run(2, "torchrun");
    assert_eq!((end.as_str(), outcome.as_str()), ("1350", "failed"));
    let (start, end, outcome, _) = run(0, "torchrun[max_restarts=1]");
    assert_eq!((start.as_str(), end.as_str(), outcome.as_str()), ("20000", "23000", "completed"));
}

/// A job's own checkpoints (native `checkpoint`) take the place of the run's. The run
/// checkpoints every 20 s (5 s restores): A, interrupted at 50, keeps 40 s and ends at
/// 115. With its own `{"interval": 30, "restore": 5}` it keeps 30 s: 50 + 5 + 70 = 125;
/// with `"none"` it starts over: 150. `auto` needs a failures controller.
#[test]
fn a_jobs_own_checkpoints_replace_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (cluster, workload, faults) = one_fault(&dir);
    let (c, f) = (cluster.to_str().unwrap(), faults.to_str().unwrap());
    let run = |own: &str| {
        let a = format!("{{\"id\":\"A\",\"submit\":0,\"runtime\":100,\"tasks\":4{own}}}\n");
        std::fs::write(&workload, a).unwrap();
        let w = workload.to_str().unwrap();
        let args =
            ["--trace", w, "--cluster", c, "--policy", "fcfs", "--faults", f, "--checkpoint", "interval=20,restore=5"];
        let (out, d) = run_into(&args);
        let end = if out.status.success() {
            read(&d, "jobs.csv").lines().nth(1).unwrap().split(',').nth(3).unwrap().to_string()
        } else {
            String::from_utf8_lossy(&out.stderr).to_string()
        };
        (out.status.code(), end)
    };
    assert_eq!(run(""), (Some(0), "115".into()));
    assert_eq!(run(",\"checkpoint\":{\"interval\":30,\"restore\":5}"), (Some(0), "125".into()));
    assert_eq!(run(",\"checkpoint\":\"none\""), (Some(0), "150".into()));
    let (code, err) = run(",\"checkpoint\":{\"interval\":\"auto\",\"cost\":10}");
    assert_eq!(code, Some(2));
    assert!(err.contains("job A: checkpoint interval \"auto\" needs a failures controller"), "{err}");
    let (code, err) = run(",\"checkpoint\":{\"every\":30}");
    assert_eq!(code, Some(2));
    assert!(err.contains("w.jsonl:1: field 'checkpoint'"), "{err}");
}
