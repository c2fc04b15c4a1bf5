//! Hardware profiles in cluster configs, and GPU energy in `summary.json` and `jobs.csv`.

use crate::sim;

/// A one-node cluster config whose GPU comes from `profile`.
fn cluster(dir: &std::path::Path, profile: &str) -> String {
    let p = dir.join(format!("cluster-{}.toml", profile.replace(['/', '#', ' '], "_")));
    let text =
        format!("[[pool]]\nname = \"g\"\ncount = 1\ncores = 8\ngpus = {{ count = 1, profile = \"{profile}\" }}\n");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// One job of one GPU for 100 s whose real peak is 90,000 MiB (more than an 80 GB card).
fn workload(dir: &std::path::Path) -> String {
    let p = dir.join("w.jsonl");
    std::fs::write(&p, "{\"id\":\"big\",\"submit\":0,\"runtime\":100,\"gpus\":1,\"gpu_peak_mib\":90000}\n").unwrap();
    p.display().to_string()
}

fn run(cluster: &str, trace: &str, out: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", "--quiet", "--trace", trace, "--cluster", cluster, "--policy", "kube"];
    args.extend_from_slice(&["--oom-retries", "0", "--out", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let o = sim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn a_profile_gives_the_gpus_their_memory_and_power() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload(dir.path());
    // On an H100 (81,559 MiB) the job runs out of memory; on an H200 (141 GB) it completes.
    let h100 = run(&cluster(dir.path(), "H100"), &w, &dir.path().join("h100"), &[]);
    assert_eq!(h100["outcomes"]["oom_killed"], 1);
    let h200 = run(&cluster(dir.path(), "H200"), &w, &dir.path().join("h200"), &[]);
    assert_eq!(h200["outcomes"]["completed"], 1);

    // Energy: fully busy for 100 s at the profile's maximum power; the one GPU is never
    // idle, so the run's energy is the job's.
    let p = hw_calibrate::shipped().find("H200").unwrap().clone();
    let max_w = p.max_power_w.unwrap();
    let kwh = max_w * 100.0 / 3.6e6;
    let got = h200["gpu_energy_kwh"].as_f64().unwrap();
    assert!((got - kwh).abs() < 1e-9, "{got} vs {kwh}");
    assert!((h200["gpu_energy_jobs_kwh"].as_f64().unwrap() - kwh).abs() < 1e-9);
    assert!(h200["gpu_energy_idle_kwh"].as_f64().unwrap().abs() < 1e-9);
    assert_eq!(h200["gpus_with_power"], 1);
    let jobs = std::fs::read_to_string(dir.path().join("h200/jobs.csv")).unwrap();
    assert!(jobs.lines().next().unwrap().ends_with(",gpu_energy_j"));
    assert!(jobs.lines().nth(1).unwrap().ends_with(&format!(",{}", max_w * 100.0)), "{jobs}");

    // At 50 % utilization, linear between idle and max.
    let half = run(&cluster(dir.path(), "H200"), &w, &dir.path().join("half"), &["--gpu-util", "50"]);
    let idle_w = p.idle_power_w.unwrap();
    let want = (idle_w + (max_w - idle_w) / 2.0) * 100.0 / 3.6e6;
    assert!((half["gpu_energy_kwh"].as_f64().unwrap() - want).abs() < 1e-6, "{half}");
}

#[test]
fn a_profile_file_next_to_the_config_is_found_and_bad_references_are_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.toml"),
        "origin = \"test\"\n[[gpu]]\nmodel = \"Lab GPU\"\nmemory_mib = 100000\nidle_power_w = 10.0\nmax_power_w = 110.0\n",
    )
    .unwrap();
    let w = workload(dir.path());
    let s = run(&cluster(dir.path(), "mine.toml#Lab GPU"), &w, &dir.path().join("o"), &[]);
    assert_eq!(s["outcomes"]["completed"], 1);
    assert!((s["gpu_energy_kwh"].as_f64().unwrap() - 110.0 * 100.0 / 3.6e6).abs() < 1e-9);
    let c = cluster(dir.path(), "NoSuchGpu");
    let o = sim(&["run", "--quiet", "--trace", &w, "--cluster", &c, "--policy", "kube", "--out", "/nonexistent/x"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("gpus.profile 'NoSuchGpu'"), "{err}");
}

#[test]
fn processor_runs_have_no_gpu_energy() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let o = sim(&["run", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success());
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!((s["gpu_energy_kwh"].as_f64(), s["gpus_with_power"].as_u64()), (Some(0.0), Some(0)));
}
