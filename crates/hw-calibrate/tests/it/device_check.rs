//! `scripts/device-check.sh`, run as a lent GPU machine would run it but without a GPU or
//! a network: without a sim binary it says to carry one and exits 2; with recorded NVML
//! answers that fail as a machine without a driver, it skips the GPU steps and exits 3;
//! with `--self-test` (recorded NVML answers, a stand-in nvidia-smi) every step and check
//! passes and at most 8 files are written.
//!
//! The last two need a `sim` binary: `SCHEDLAB_SIM`, else `sim` beside this test binary
//! (`cargo build --bin sim` with the same target folder; `cargo test --workspace` builds
//! it). Without one they say so and pass, unless `SCHEDLAB_REQUIRE_SIM` is set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The script with no way to the network: proxies that lead nowhere, cargo offline.
fn script(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new("bash");
    c.arg(root().join("scripts/device-check.sh")).args(args).current_dir(std::env::temp_dir());
    for k in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        c.env(k, "http://127.0.0.1:9");
    }
    c.env("CARGO_NET_OFFLINE", "true").env_remove("SCHEDLAB_RECORDED_NVML");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn sim() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SCHEDLAB_SIM") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let beside = exe.parent()?.parent()?.join("sim");
    if beside.is_file() {
        return Some(beside);
    }
    assert!(
        std::env::var_os("SCHEDLAB_REQUIRE_SIM").is_none(),
        "SCHEDLAB_REQUIRE_SIM is set and there is no sim binary at {}",
        beside.display()
    );
    eprintln!("skipped: no sim binary at {} (cargo build --bin sim, or SCHEDLAB_SIM)", beside.display());
    None
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn without_a_sim_binary_it_says_to_build_elsewhere_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = script(
        &["--self-test"],
        &[("OUT", &out), ("SIM", Path::new("/nonexistent/sim")), ("CARGO", Path::new("/nonexistent/cargo"))],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("build elsewhere and carry the binary"), "{}", text(&o));
    assert!(std::fs::read_to_string(out.join("device-check.log")).unwrap().contains("build elsewhere"));
}

#[test]
fn without_a_driver_the_gpu_steps_are_skipped_with_exit_3() {
    let Some(sim) = sim() else { return };
    let dir = tempfile::tempdir().unwrap();
    let nvml = dir.path().join("nodriver.toml");
    std::fs::write(&nvml, "init_fail = \"LibraryNotFound\"\n").unwrap();
    let out = dir.path().join("out");
    let o = script(
        &[],
        &[
            ("OUT", &out),
            ("SIM", &sim),
            ("SCHEDLAB_RECORDED_NVML", &nvml),
            ("NVIDIA_SMI", Path::new("/nonexistent/nvidia-smi")),
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("no NVIDIA driver on this machine (NVML cannot be loaded): the GPU steps are skipped"));
}

#[test]
fn the_self_test_runs_every_step_offline() {
    let Some(sim) = sim() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = script(&["--self-test"], &[("OUT", &out), ("SIM", &sim)]);
    let log = std::fs::read_to_string(out.join("device-check.log")).unwrap_or_default();
    assert_eq!(o.status.code(), Some(0), "{}\n--- log\n{log}", text(&o));
    for line in [
        "status probe: 0",
        "status sample: 0",
        "status import: 0",
        "check gpu-count: ok (probe read 1 GPU(s), nvidia-smi -L lists 1)",
        "check idle-below-limit: ok (\"NVIDIA H200\": idle 74.5 W < limit 700.0 W; )",
        "check workload-peak: ok (sampled peak 2590 MiB, the workload allocates 2048 MiB)",
        "check memory-source: ok (memory of the command's processes (NVML running compute processes)",
        "all steps and checks passed",
    ] {
        assert!(log.contains(line), "no '{line}' in the log:\n{log}");
    }
    let mut files: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert_eq!(
        files,
        [
            "device-check.log",
            "import-job.toml",
            "import.toml",
            "nvidia-smi-q.txt",
            "nvidia-smi.csv",
            "probe.toml",
            "sample-job.toml"
        ]
    );
    let job = std::fs::read_to_string(out.join("sample-job.toml")).unwrap();
    assert!(job.contains("recorded NVML answers"), "a profile from recorded answers says so:\n{job}");
    let csv = std::fs::read_to_string(out.join("nvidia-smi.csv")).unwrap();
    assert!(csv.lines().count() >= 3, "nvidia-smi logged while sampling:\n{csv}");
}
