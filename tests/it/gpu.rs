//! `sim fgd` and GPU replays on the committed openb slices.

use crate::{data, read, run_into, sim};

fn nodes() -> String {
    data("openb/openb_node_list_gpu_node.every20th.csv")
}
fn pods() -> String {
    data("openb/openb_pod_list_default.first400.csv")
}

fn fgd(dir: &std::path::Path, threads: &str) -> std::process::Output {
    sim(&[
        "fgd",
        "--quiet",
        "--nodes",
        &nodes(),
        "--pods",
        &pods(),
        "--seeds",
        "42..44",
        "--threads",
        threads,
        "--out",
        dir.to_str().unwrap(),
    ])
}

#[test]
fn fgd_writes_three_curves_the_same_on_any_thread_count() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let out = fgd(a.path(), "1");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(fgd(b.path(), "2").status.success());
    for f in ["allocation.csv", "fragmentation.csv", "fragmentation_ratio.csv"] {
        let x = std::fs::read_to_string(a.path().join(f)).unwrap();
        let y = std::fs::read_to_string(b.path().join(f)).unwrap();
        assert_eq!(x, y, "{f} differs between 1 and 2 threads");
        let lines: Vec<&str> = x.lines().collect();
        // Header + 6 policies × 3 seeds.
        assert_eq!(lines.len(), 1 + 18, "{f}");
        let header: Vec<&str> = lines[0].split(',').collect();
        assert_eq!(header.len(), 3 + 131);
        assert_eq!(&header[..4], &["workload", "policy", "seed", "0"]);
        assert_eq!(header[133], "130");
        assert!(lines[1].starts_with("openb_pod_list_default.first400,random,42,"), "{}", lines[1]);
    }
    // At low load every pod fits: allocation equals arrival, whatever the policy.
    let alloc = std::fs::read_to_string(a.path().join("allocation.csv")).unwrap();
    for line in alloc.lines().skip(1) {
        let v: Vec<&str> = line.split(',').collect();
        let at10: f64 = v[3 + 10].parse().unwrap();
        assert!((at10 - 10.0).abs() < 1.0, "{line}");
    }
}

#[test]
fn fgd_rejects_bad_input_with_status_2() {
    let d = tempfile::tempdir().unwrap();
    let out = sim(&[
        "fgd",
        "--nodes",
        &nodes(),
        "--pods",
        &pods(),
        "--policies",
        "tetris",
        "--out",
        d.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown placement 'tetris'"));
    let bad = d.path().join("pods.csv");
    std::fs::write(&bad, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,100,1,1200\n").unwrap();
    let out = sim(&["fgd", "--nodes", &nodes(), "--pods", bad.to_str().unwrap(), "--out", d.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pods.csv:2: column 'gpu_milli': expected an integer 0..=1000, found '1200'"), "{err}");
}

#[test]
fn a_gzipped_openb_pod_list_is_read_as_openb() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("pods.csv.gz");
    let mut e = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::fast());
    e.write_all(&std::fs::read(pods()).unwrap()).unwrap();
    e.finish().unwrap();
    let (out, d) = run_into(&["--trace", gz.to_str().unwrap(), "--nodes", &nodes()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s: serde_json::Value = serde_json::from_str(&read(&d, "summary.json")).unwrap();
    assert_eq!((s["format"].as_str(), s["jobs_total"].as_u64()), (Some("openb"), Some(400)));
}

#[test]
fn openb_replay_needs_its_node_list() {
    let (out, _d) = run_into(&["--trace", &pods(), "--policy", "kube"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs its nodes"));
}

#[test]
fn memory_aware_placement_avoids_out_of_memory_kills() {
    let summary = |memory: &str| {
        let (out, d) = run_into(&[
            "--trace",
            &pods(),
            "--nodes",
            &nodes(),
            "--policy",
            &format!("kube[score=bestfit,memory={memory}]"),
            "--gpu-memory",
            "synthetic",
            "--seed",
            "7",
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let s: serde_json::Value = serde_json::from_str(&read(&d, "summary.json")).unwrap();
        let total: u64 = s["outcomes"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(total, 400, "every pod has one outcome");
        (s["oom_kills"].as_u64().unwrap(), s["wasted_gpu_hours"].as_f64().unwrap())
    };
    let (kills_blind, wasted_blind) = summary("oblivious");
    let (kills_aware, wasted_aware) = summary("aware");
    assert!(kills_aware < kills_blind, "{kills_aware} >= {kills_blind}");
    assert!(wasted_aware < wasted_blind, "{wasted_aware} >= {wasted_blind}");
}

#[test]
fn a_toml_cluster_replaces_the_traces_machine() {
    let cluster = crate::root().join("examples/gpu-cluster.toml").display().to_string();
    let (out, d) = run_into(&["--trace", &pods(), "--cluster", &cluster, "--policy", "kube[score=bestfit]"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s: serde_json::Value = serde_json::from_str(&read(&d, "summary.json")).unwrap();
    assert_eq!(s["machine_units"], 8 * 64 + 16 * 32 + 8 * 96);
    // An SWF log on the same cluster: its processors are the cluster's cores.
    let (out, d) = run_into(&["--trace", &data("KTH-SP2-1996-2.1-cln.first3000.swf.gz"), "--cluster", &cluster]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(read(&d, "summary.json").contains("\"machine_units\": 1792"));
    // A bad key is an error naming the file and line.
    let bad = d.path().join("bad.toml");
    std::fs::write(&bad, "[[pool]]\nname = \"x\"\ncount = 1\ncores = 4\ngpu = 2\n").unwrap();
    let (out, _d) = run_into(&["--cluster", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:5:") && err.contains("unknown field `gpu`"), "{err}");
}

#[test]
fn native_format_round_trips_through_convert() {
    let cluster = crate::root().join("examples/gpu-cluster.toml").display().to_string();
    let d = tempfile::tempdir().unwrap();
    let native = d.path().join("w.jsonl");
    let out = sim(&[
        "trace",
        "convert",
        "--trace",
        &pods(),
        "--nodes",
        &nodes(),
        "--gpu-memory",
        "synthetic",
        "--seed",
        "3",
        "--to",
        "native",
        "--out",
        native.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&native).unwrap();
    assert_eq!(text.lines().count(), 400);
    assert!(text.lines().next().unwrap().contains("\"gpu_peak_mib\""));
    // The same replay from the native file and from the openb file.
    let run = |trace: &str, extra: &[&str]| {
        let mut args = vec!["--trace", trace, "--cluster", &cluster, "--policy", "kube", "--seed", "3"];
        args.extend_from_slice(extra);
        let (out, d) = run_into(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        read(&d, "jobs.csv")
    };
    assert_eq!(run(native.to_str().unwrap(), &[]), run(&pods(), &["--gpu-memory", "synthetic"]));
    // A native workload needs a cluster.
    let (out, _d) = run_into(&["--trace", native.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs its cluster"));
}

/// `fragmentation.csv` by the FGD paper's definition on one node of 8 cores and two
/// shared GPUs. Pods: A (6 cores, a whole GPU, 0–100 s), B (1 core, half a GPU, 0–200 s),
/// C (1 core, a quarter GPU, 300–310 s); each is a typical pod with share 1/3. F_n =
/// Σ over typical pods of ⅓ × (all idle GPU when the pod cannot be hosted, else the
/// idle GPU too small for it):
/// * 0–100: GPUs left [0, 500], CPU left 1000: A lacks CPU (all 500 idle), B and C fit
///   with nothing too small: F = 500/3 = 167 of 500 free, 0.334 (the capacity left on
///   partly used GPUs alone would have said 500, 1.0);
/// * 100–200: [1000, 500], CPU 7000: A fits, the 500 GPU too small for it: F = 500/3 =
///   167 of 1500, 0.111333;
/// * 200–300: nothing runs: 0 of 2000;
/// * 300–310: C on one GPU, [750, 1000], CPU 7000: A fits, the 750 GPU too small for it:
///   F = 750/3 = 250 of 1750 free, 0.142857.
#[test]
fn fragmentation_follows_the_fgd_definition() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = dir.path().join("cluster.toml");
    let workload = dir.path().join("w.jsonl");
    std::fs::write(
        &cluster,
        "[[pool]]\nname = \"g\"\ncount = 1\ncores = 8\nsharing = \"shared\"\n\
         gpus = { count = 2, model = \"A100\", memory_mib = 40960 }\n",
    )
    .unwrap();
    std::fs::write(
        &workload,
        "{\"id\":\"A\",\"submit\":0,\"runtime\":100,\"cores\":6,\"gpus\":1}\n\
         {\"id\":\"B\",\"submit\":0,\"runtime\":200,\"cores\":1,\"gpus\":1,\"gpu_milli\":500}\n\
         {\"id\":\"C\",\"submit\":300,\"runtime\":10,\"cores\":1,\"gpus\":1,\"gpu_milli\":250}\n",
    )
    .unwrap();
    let (out, run) = run_into(&["--trace", workload.to_str().unwrap(), "--cluster", cluster.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = read(&run, "fragmentation.csv");
    let row = |t: &str| csv.lines().find(|l| l.starts_with(&format!("{t},"))).map(str::to_string);
    assert_eq!(csv.lines().next(), Some("t,free_gpus,fragment_gpus,fragmentation"));
    assert_eq!(row("0").as_deref(), Some("0,0.5,0.167,0.334000"));
    assert_eq!(row("150").as_deref(), Some("150,1.5,0.167,0.111333"));
    assert_eq!(row("250").as_deref(), Some("250,2,0,0.000000"));
    assert_eq!(row("305").as_deref(), Some("305,1.75,0.25,0.142857"));
}

/// openb's LS pods (priority 1) preempt its BE pods (priority 0) as kube-scheduler's
/// DefaultPreemption does: one node of 2 GPUs; a BE pod holds both from 0 for 1000 s; an
/// LS pod asking one GPU at 10 fits nowhere and evicts it (grace 30 s: at 40). The LS pod
/// runs 40–140; the BE pod, re-created at 40, starts again at 140 (both GPUs free) and
/// runs its full 1000 s.
#[test]
fn openb_ls_pods_preempt_be_pods() {
    let dir = tempfile::tempdir().unwrap();
    let pods = dir.path().join("pods.csv");
    let nodes = dir.path().join("nodes.csv");
    std::fs::write(
        &pods,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
         be-0,8000,16384,2,1000,,BE,Running,0,1000,0\n\
         ls-0,4000,8192,1,1000,,LS,Running,10,110,10\n",
    )
    .unwrap();
    std::fs::write(&nodes, "sn,cpu_milli,memory_mib,gpu,model\nnode-0,64000,262144,2,P100\n").unwrap();
    let (p, n) = (pods.to_str().unwrap(), nodes.to_str().unwrap());
    let (out, o) = run_into(&["--trace", p, "--nodes", n, "--policy", "kube", "--log"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let jobs = read(&o, "jobs.csv");
    let rows: Vec<Vec<&str>> = jobs.lines().skip(1).map(|l| l.split(',').collect()).collect();
    // job_id, submit, start, end.
    assert_eq!(rows[0][..4], ["be-0", "0", "140", "1140"]);
    assert_eq!(rows[1][..4], ["ls-0", "10", "40", "140"]);
    assert!(read(&o, "decisions.jsonl").contains(
        r#""event":"requeue","job":"be-0","reason":"preempted by ls-0 (priority 1) on node 0: kube-scheduler DefaultPreemption","t":40"#
    ));
    // Without preemption the LS pod waits for the BE pod to end.
    let (out, o) = run_into(&["--trace", p, "--nodes", n, "--policy", "kube[preemption=off]"]);
    assert!(out.status.success());
    let jobs = read(&o, "jobs.csv");
    assert!(jobs.contains("\nls-0,10,1000,1100,"), "{jobs}");
}

type Rows = std::collections::BTreeMap<(String, String, u64), Vec<String>>;

/// The committed rows of one of the FGD paper's published curve files (`data/fgd/`:
/// `allo` or `frag`), by (workload, placement, seed): their values from bucket 0 on.
fn published(curve: &str) -> Rows {
    let text = std::fs::read_to_string(data(&format!("fgd/analysis_{curve}_discrete.subset.csv"))).unwrap();
    let mut rows = std::collections::BTreeMap::new();
    let mut lines = text.lines();
    // workload, sc_policy (`06-FGD`), tune, seed[, total_gpus], then buckets from 0.
    let first = lines.next().unwrap().split(',').position(|c| c == "0").unwrap();
    for line in lines {
        let v: Vec<&str> = line.split(',').collect();
        let policy = v[1].split_once('-').unwrap().1.to_lowercase();
        let key = (v[0].to_string(), policy, v[3].parse().unwrap());
        rows.insert(key, v[first..].iter().map(|s| s.to_string()).collect());
    }
    rows
}

/// Each row of the CSV `got` that `want` has is equal to it, bucket for bucket; how
/// many rows were compared.
fn same_rows(got: &str, want: &Rows) -> usize {
    let mut rows = 0;
    for line in got.lines().skip(1) {
        let v: Vec<&str> = line.split(',').collect();
        let key = (v[0].to_string(), v[1].to_string(), v[2].parse::<u64>().unwrap());
        let Some(w) = want.get(&key) else { continue };
        for (b, (x, y)) in v[3..].iter().zip(w).enumerate() {
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert_eq!(x, y, "{key:?} at {b} % arrived");
        }
        rows += 1;
    }
    rows
}

/// `sim fgd --rng go` on the paper's 1,213 nodes for the committed pod list `pods`
/// (tuned to 1.3), checked row by row against the published rows: how many allocation
/// and fragmentation rows.
fn reproduces(pods: &str, policies: &str, seeds: &str) -> (usize, usize) {
    let d = tempfile::tempdir().unwrap();
    let out = sim(&[
        "fgd",
        "--quiet",
        "--nodes",
        &data("openb/openb_node_list_gpu_node.csv"),
        "--pods",
        &data(pods),
        "--policies",
        policies,
        "--seeds",
        seeds,
        "--rng",
        "go",
        "--out",
        d.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = |f: &str| std::fs::read_to_string(d.path().join(f)).unwrap();
    (same_rows(&read("allocation.csv"), &published("allo")), same_rows(&read("fragmentation.csv"), &published("frag")))
}

#[test]
fn fgd_with_gos_random_source_reproduces_the_published_curves() {
    // The whole openb default workload (the tuning clones pods): seed 42, and 48 (where
    // only NumPy's sum and rounding give the published 87.94 at 88 %); fragmentation
    // published for seed 42.
    let five = "dotprod,gpuclustering,gpupacking,bestfit,fgd";
    assert_eq!(reproduces("openb/openb_pod_list_default.csv.gz", five, "42,48"), (10, 5));
    // multigpu30, which the tuning shrinks: one reflector draw fewer lands before the
    // node permutation.
    assert_eq!(reproduces("openb/openb_pod_list_multigpu30.csv.gz", "bestfit,fgd", "42"), (2, 0));
    // gpuspec10 (pods that ask for GPU models) under FGD: its scores tie and split on
    // the last bits of the fragmentation, summed as the Go code sums it.
    assert_eq!(reproduces("openb/openb_pod_list_gpuspec10.csv.gz", "fgd", "42"), (1, 0));
}
