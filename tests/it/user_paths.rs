//! What a new user meets following the README with the shipped examples: GPU workloads
//! that run, defaults that see GPUs, clear refusals of bad input, outputs that belong to
//! one run. Each test pins one fix with the figures it failed on before.

use crate::{data, read, root, run_into, sim};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn gpu_cluster() -> String {
    root().join("examples/gpu-cluster.toml").display().to_string()
}

fn summary(dir: &tempfile::TempDir) -> serde_json::Value {
    serde_json::from_str(&read(dir, "summary.json")).unwrap()
}

/// `gres/gpu:a100` and `gres/gpu:t4` find the cluster's `A100-SXM4-80GB` and `T4` (they
/// ended `unfinished` with an empty reason before); `h100` and `v100`, which it lacks,
/// are rejected at submit with a reason, and the load says so with a count.
#[test]
fn gpu_models_match_in_any_case_and_by_family() {
    let (out, dir) =
        run_into(&["--trace", &data("sacct/sample.parsable2.txt"), "--cluster", &gpu_cluster(), "--policy", "kube"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let jobs = read(&dir, "jobs.csv");
    let row = |id: &str| jobs.lines().find(|l| l.starts_with(&format!("{id},"))).unwrap().to_string();
    for (id, outcome) in
        [("4002", ",completed,"), ("4017", ",completed,"), ("4021", ",completed,"), ("4003", ",rejected,")]
    {
        assert!(row(id).contains(outcome), "{id}: {}", row(id));
    }
    assert!(row("4003").contains("no_matching_gpu_model") && row("4010+1").contains("no_matching_gpu_model"));
    assert!(!jobs.contains("unfinished"), "{jobs}");
    // The warning needs no --quiet.
    let out = sim(&[
        "run",
        "--trace",
        &data("sacct/sample.parsable2.txt"),
        "--cluster",
        &gpu_cluster(),
        "--out",
        dir.path().join("again").to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert!(err.contains("2 of 14 jobs ask for GPU models no node has: 'h100' (1), 'v100' (1)"), "{err}");
}

/// A workload whose jobs ask for GPUs gets a GPU-aware default policy, said on stderr:
/// Philly under the default `easy` showed a mean wait of 0 and a bounded slowdown of
/// 1.000 on a cluster of 128 GPUs.
#[test]
fn gpu_workloads_default_to_a_policy_that_places_gpus() {
    let (out, dir) = run_into(&[
        "--trace",
        &data("philly/philly.first2000.csv.gz"),
        "--format",
        "philly",
        "--cluster",
        &gpu_cluster(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = summary(&dir);
    assert_eq!(
        s["policy"],
        "kube[score=least-allocated,memory=oblivious,order=fifo,queue=easy,gang=atomic,topology=none,k8s=current,\
         nodes_to_score=adaptive]"
    );
    assert!(s["wait_mean"].as_f64().unwrap() > 3600.0, "{}", s["wait_mean"]);
    assert!(s["gpu_allocation"].as_f64().unwrap() > 0.1);
    // The choice is printed, unless --quiet.
    let out = sim(&[
        "run",
        "--trace",
        &data("philly/philly.first2000.csv.gz"),
        "--cluster",
        &gpu_cluster(),
        "--out",
        dir.path().join("loud").to_str().unwrap(),
    ]);
    assert!(stderr(&out).contains("policy: kube[order=fifo,queue=easy,gang=atomic] (EASY backfilling over GPU nodes"));
    // openb's pods (a Kubernetes cluster's) default to kube; CPU logs stay on easy.
    let (_, d) = run_into(&[
        "--trace",
        &data("openb/openb_pod_list_default.first400.csv"),
        "--nodes",
        &data("openb/openb_node_list_gpu_node.every20th.csv"),
    ]);
    assert!(summary(&d)["policy"].as_str().unwrap().starts_with("kube[score=least-allocated"));
    let (_, d) = run_into(&[]);
    assert!(summary(&d)["policy"].as_str().unwrap().starts_with("easy["));
}

/// On a GPU cluster the table leads with GPU allocation (openb showed only a core
/// utilization of 0.0008 while 99.7 % of its GPUs idled); `trace stats` gives the offered
/// GPU load; a replay offering under 1 % of the cluster is warned about.
#[test]
fn gpu_allocation_leads_and_idle_replays_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let out = sim(&[
        "run",
        "--trace",
        &data("openb/openb_pod_list_default.first400.csv"),
        "--nodes",
        &data("openb/openb_node_list_gpu_node.every20th.csv"),
        "--out",
        dir.path().join("o").to_str().unwrap(),
    ]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("GPU allocation           0.0316 of 314 GPUs"), "{table}");
    assert!(table.contains("core utilization"), "{table}");
    assert!(!stderr(&out).contains("capacity over their span"), "{}", stderr(&out));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("o/summary.json")).unwrap()).unwrap();
    let alloc = s["gpu_allocation"].as_f64().unwrap();
    // 35,588.8 GPU-hours over 314 GPUs × 12,902,960 s.
    assert!((alloc - 35_588.8 * 3600.0 / (314.0 * 12_902_960.0)).abs() < 1e-4, "{alloc}");

    // One small GPU job a day on 128 GPUs: far below 1 %.
    let wl = dir.path().join("idle.jsonl");
    std::fs::write(
        &wl,
        "{\"id\":\"a\",\"submit\":0,\"runtime\":600,\"gpus\":1}\n{\"id\":\"b\",\"submit\":86400,\"runtime\":600,\"gpus\":1}\n",
    )
    .unwrap();
    let out = sim(&[
        "run",
        "--trace",
        wl.to_str().unwrap(),
        "--cluster",
        &gpu_cluster(),
        "--out",
        dir.path().join("i").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("the jobs offer 0.01 % of the cluster's GPU capacity"), "{}", stderr(&out));

    let out = sim(&["trace", "stats", wl.to_str().unwrap(), "--cluster", &gpu_cluster(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // 1,200 GPU-s over 128 GPUs × 87,000 s.
    assert!((v["offered_gpu_load"].as_f64().unwrap() - 1200.0 / (128.0 * 87_000.0)).abs() < 1e-12);
    assert_eq!(v["machine_gpus"], 128);
}

/// Under kube, `--log` explains every unplaced pod with the filters that rejected it, as
/// kube-scheduler's FailedScheduling event does, once per pod until the reason changes
/// (the Philly run logged no `wait` at all before, with a mean wait of 52 h).
#[test]
fn kube_logs_why_pods_wait() {
    let (out, dir) = run_into(&[
        "--trace",
        &data("philly/philly.first2000.csv.gz"),
        "--cluster",
        &gpu_cluster(),
        "--policy",
        "kube",
        "--log",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let log = read(&dir, "decisions.jsonl");
    let waits: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["event"] == "wait")
        .collect();
    assert!(waits.len() > 1000, "{}", waits.len());
    assert!(waits.iter().all(|v| v["reason"].as_str().unwrap().starts_with("0/32 nodes are available: ")));
    assert!(waits.iter().any(|v| v["reason"] == "0/32 nodes are available: 32 Insufficient nvidia.com/gpu."));
    let mut seen = std::collections::BTreeMap::new();
    for v in &waits {
        let reason: String = v["reason"].as_str().unwrap().chars().filter(|c| !c.is_ascii_digit()).collect();
        assert!(seen.insert((v["job"].to_string(), reason), ()).is_none(), "{v} logged twice");
    }
    // Logging changes no schedule.
    let (_, quiet) = run_into(&[
        "--trace",
        &data("philly/philly.first2000.csv.gz"),
        "--cluster",
        &gpu_cluster(),
        "--policy",
        "kube",
    ]);
    assert_eq!(read(&dir, "jobs.csv"), read(&quiet, "jobs.csv"));
}

/// A job that never ran says why in jobs.csv: an incomplete gang, or kube-scheduler's
/// message for a pod no node can take.
#[test]
fn unfinished_jobs_say_why() {
    let ex = root().join("examples/gang-deadlock");
    let (out, dir) = run_into(&[
        "--trace",
        ex.join("workload.jsonl").to_str().unwrap(),
        "--cluster",
        ex.join("cluster.toml").to_str().unwrap(),
        "--policy",
        "kube[gang=none]",
    ]);
    assert!(out.status.success());
    let jobs = read(&dir, "jobs.csv");
    assert!(jobs.contains("train-a,1,,,,,50,6,unfinished,gang incomplete: 4 of its 6 tasks held,"), "{jobs}");
    // A pod no node could ever hold (16 GPUs; nodes have 8 at most) is rejected at submit.
    let wl = dir.path().join("big.jsonl");
    std::fs::write(&wl, "{\"id\":\"big\",\"submit\":0,\"runtime\":60,\"gpus\":16}\n").unwrap();
    let (_, d) = run_into(&["--trace", wl.to_str().unwrap(), "--cluster", &gpu_cluster(), "--policy", "kube"]);
    assert!(read(&d, "jobs.csv").contains("big,0,,,,,60,1,rejected,no_fitting_node,"));
    // One that fits the A100 nodes, all taken by `hog` until the horizon, says why in
    // kube-scheduler's words.
    let hog = "{\"id\":\"hog\",\"submit\":0,\"runtime\":1000,\"gpus\":8,\"tasks\":8}";
    std::fs::write(&wl, format!("{hog}\n{{\"id\":\"big\",\"submit\":1,\"runtime\":60,\"gpus\":8}}\n")).unwrap();
    let args = ["--trace", wl.to_str().unwrap(), "--cluster", &gpu_cluster(), "--policy", "kube", "--horizon", "100"];
    let (_, d) = run_into(&args);
    let jobs = read(&d, "jobs.csv");
    let why = "waiting at the horizon: 0/32 nodes are available: 32 Insufficient nvidia.com/gpu.";
    assert!(jobs.contains(&format!("big,1,,,,,60,1,unfinished,{why},")), "{jobs}");
}

/// An empty file is "no jobs (empty file)" with exit 2, whatever its name (an empty
/// `.jsonl` ran with no jobs and exit 0; an empty `.csv` asked for an SWF header).
#[test]
fn empty_traces_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["empty.jsonl", "empty.csv", "blank.swf"] {
        let p = dir.path().join(name);
        std::fs::write(&p, if name.starts_with("blank") { "\n  \n" } else { "" }).unwrap();
        let expected = format!("{}: no jobs (empty file)", p.display());
        for args in [
            vec!["run", "--quiet", "--trace", p.to_str().unwrap(), "--cluster", &gpu_cluster()],
            vec!["trace", "stats", p.to_str().unwrap()],
        ] {
            let out = sim(&args);
            assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
            assert!(stderr(&out).contains(&expected), "{name}: {}", stderr(&out));
        }
    }
}

/// `--procs 4294967295` took 4.2 GB (a state per processor) and aborted under a 4 GB
/// limit; counted processors now need no per-processor memory, and a policy that binds
/// nodes refuses a machine of that many one-processor nodes with exit 2.
#[test]
fn huge_processor_counts_need_no_per_processor_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("o");
    // Under a 1 GiB address-space limit (ulimit -v, KiB).
    let limited = |policy: &str| {
        std::process::Command::new("sh")
            .args(["-c", "ulimit -v 1048576 && exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_sim"))
            .args(["run", "--quiet", "--procs", "4294967295", "--policy", policy, "--out", out_dir.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let out = limited("easy");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = limited("kube");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("at most 16777216 when jobs are bound to nodes"), "{}", stderr(&out));
    let out = sim(&["run", "--quiet", "--procs", "4294967296", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--policies easy,easy` exited 1 with a missing file and left partial folders; a
/// reversed seed range said only "expected a range".
#[test]
fn compare_refuses_repeated_policies_and_reversed_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("cmp");
    for (policies, seeds, says) in [
        ("easy,easy", "1", "'easy' is the same policy as 'easy'"),
        ("easy,easy[pass=per-time]", "1", "is the same policy as 'easy'"),
        ("easy,fcfs", "5..1", "the range '5..1' is reversed"),
        ("easy", "1,1", "seed 1 is listed twice"),
    ] {
        let out =
            sim(&["compare", "--quiet", "--policies", policies, "--seeds", seeds, "--out", out_dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{policies} {seeds}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert!(!out_dir.exists(), "{policies} {seeds}: left a folder");
    }
}

/// Flags that do nothing for the input are warned about instead of silently ignored.
#[test]
fn flags_that_do_nothing_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let out = sim(&[
        "run",
        "--trace",
        &data("HPC2N-2002-2.2-cln.first2000.swf.gz"),
        "--nodes",
        &data("openb/openb_node_list_gpu_node.every20th.csv"),
        "--gpu-sharing",
        "exclusive",
        "--gpu-memory",
        "synthetic",
        "--pai-jobs",
        "x.csv",
        "--out",
        dir.path().join("o").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    for says in [
        "warning: --nodes is ignored: only an openb pod list reads it",
        "warning: --gpu-sharing is ignored",
        "warning: --gpu-memory synthetic does nothing: no job asks for GPUs",
        "warning: --pai-jobs is ignored: the trace is swf",
    ] {
        assert!(err.contains(says), "{says}: {err}");
    }
    let out = sim(&[
        "run",
        "--trace",
        &data("HPC2N-2002-2.2-cln.first2000.swf.gz"),
        "--out",
        dir.path().join("p").to_str().unwrap(),
    ]);
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
}

/// A second run into the same folder leaves no file of the first: its decision log and
/// report went stale beside the new outputs. Files the program does not write stay.
#[test]
fn a_rerun_leaves_no_file_of_the_earlier_run() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("o");
    let trace = data("batsim-medium_late.json");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--quiet", "--trace", &trace, "--out", out_dir.to_str().unwrap()];
        args.extend_from_slice(extra);
        assert!(sim(&args).status.success());
    };
    run(&["--log", "--report"]);
    for f in ["decisions.jsonl", "report.html", "comparison.csv", "plots", "tables"] {
        assert!(out_dir.join(f).exists(), "{f}");
    }
    std::fs::write(out_dir.join("notes.txt"), "mine").unwrap();
    run(&[]);
    for f in ["decisions.jsonl", "report.html", "comparison.csv", "plots", "tables"] {
        assert!(!out_dir.join(f).exists(), "{f} left from the earlier run");
    }
    for f in ["jobs.csv", "summary.json", "frame.csv", "notes.txt"] {
        assert!(out_dir.join(f).exists(), "{f}");
    }
}

/// `sim report` pooled runs of different traces into one comparison with confidence
/// intervals; it now refuses them, naming each trace's runs.
#[test]
fn report_refuses_runs_of_different_traces() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("kth");
    let b = dir.path().join("hpc2n");
    assert!(sim(&["run", "--quiet", "--out", a.to_str().unwrap()]).status.success());
    let hpc2n = data("HPC2N-2002-2.2-cln.first2000.swf.gz");
    assert!(sim(&["run", "--quiet", "--trace", &hpc2n, "--out", b.to_str().unwrap()]).status.success());
    let out =
        sim(&["report", a.to_str().unwrap(), b.to_str().unwrap(), "--out", dir.path().join("r").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("the runs replay 2 different traces or machines"), "{}", stderr(&out));
    assert!(!dir.path().join("r").join("report.html").exists());
}

/// `sim trace convert --to swf` writes the machine (MaxProcs, MaxNodes) so the file
/// replays (it wrote none, and the replay exited 2); it refuses an input that states no
/// machine without --cluster or --procs, and lists what SWF cannot carry.
#[test]
fn converted_swf_states_its_machine() {
    let dir = tempfile::tempdir().unwrap();
    let swf = dir.path().join("sacct.swf");
    let trace = data("sacct/sample.parsable2.txt");
    let out = sim(&["trace", "convert", &trace, "--to", "swf", "--out", swf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("add --cluster CLUSTER.toml or --procs N"), "{}", stderr(&out));
    let out =
        sim(&["trace", "convert", &trace, "--cluster", &gpu_cluster(), "--to", "swf", "--out", swf.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("SWF has no field for GPUs: left out of 6 jobs"), "{}", stderr(&out));
    let text = std::fs::read_to_string(&swf).unwrap();
    assert!(text.contains("; MaxNodes: 32\n; MaxProcs: 1792\n"), "{text}");
    let out =
        sim(&["run", "--quiet", "--trace", swf.to_str().unwrap(), "--out", dir.path().join("o").to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    // An SWF input keeps its own header's machine.
    let kth = dir.path().join("kth.swf");
    let out = sim(&[
        "trace",
        "convert",
        &data("KTH-SP2-1996-2.1-cln.first3000.swf.gz"),
        "--to",
        "swf",
        "--out",
        kth.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&kth).unwrap().contains("; MaxNodes: 100\n; MaxProcs: 100\n"));
}

/// The table says what `failed` means for a log: the trace's status, not a failure of
/// the simulation (the KTH slice: `failed 1086`).
#[test]
fn trace_failures_are_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let out = sim(&["run", "--out", dir.path().join("o").to_str().unwrap()]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("    failed (trace status)  "), "{table}");
}
