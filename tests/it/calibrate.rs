//! `sim calibrate` end to end: imports of the hw-calibrate fixtures write profiles that
//! read back, recorded probes and samples replay, and without an NVIDIA driver `probe`
//! and `sample` say so in one line and exit 2.

use crate::{root, sim};
use std::process::Output;

fn fixture(name: &str) -> String {
    root().join("crates/hw-calibrate/tests/fixtures").join(name).display().to_string()
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn import_writes_profiles_that_read_back() {
    let dir = tempfile::tempdir().unwrap();
    for (log, model, idle, max) in [
        ("nvidia-smi-a100.csv", "NVIDIA A100-SXM4-80GB", 60.0, 400.0),
        ("nvidia-smi-h100-nounits.csv", "NVIDIA H100 80GB HBM3", 67.71, 695.29),
        ("dcgm-exporter-h100.prom", "NVIDIA H100 80GB HBM3", 70.0, 700.0),
    ] {
        let out = dir.path().join(format!("{log}.toml"));
        let job = dir.path().join(format!("{log}.job.toml"));
        let o = sim(&[
            "calibrate",
            "import",
            &fixture(log),
            "--out",
            out.to_str().unwrap(),
            "--job-out",
            job.to_str().unwrap(),
        ]);
        ok(&o);
        let p = hw_calibrate::load_profile(&out).unwrap();
        let g = &p.gpu[0];
        assert_eq!((g.model.as_str(), g.idle_power_w, g.max_power_w), (model, Some(idle), Some(max)), "{log}");
        // A cluster config can reference the written file by model.
        let r = format!("{}#{model}", out.file_name().unwrap().to_str().unwrap());
        assert_eq!(hw_calibrate::resolve_gpu(&r, dir.path()).unwrap().memory_mib, g.memory_mib);
        let j = hw_calibrate::load_job_profile(&job).unwrap();
        assert_eq!(j.gpus, 2, "{log}");
        // Every written figure says where it came from, in the file's [sources] table.
        assert!(j.sources.contains_key("peak_memory_mib"), "{log}: {:?}", j.sources);
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains(&format!("wrote {}", out.display())), "{text}");
    }
}

#[test]
fn a_job_profile_without_utilization_generates_the_jobs_of_a_class_that_does_not_say() {
    // As `sim calibrate sample` writes it on a MIG device: no utilization, no power.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mig.toml"),
        "duration_s = 60.0\npeak_memory_mib = 9000\nmean_memory_mib = 8000\n\n[sources]\n\
         mean_util_pct = \"not measured: NVML answered utilization NotSupported\"\n",
    )
    .unwrap();
    let head = "[arrivals]\nprocess = \"poisson\"\nrate_per_hour = 60\n[users]\ncount = 3\n[[classes]]\nname = \"t\"\n\
                weight = 1\ntasks = { values = [1], weights = [1] }\ngpus = { values = [1], weights = [1] }\n\
                runtime = { dist = \"constant\", value = 100 }\n";
    let generate = |name: &str, class: &str| {
        let m = dir.path().join(name);
        std::fs::write(&m, format!("{head}{class}")).unwrap();
        let o = sim(&["gen", "--model", m.to_str().unwrap(), "--jobs", "50", "--seed", "3", "--out", "-"]);
        ok(&o);
        o.stdout
    };
    // The run's --gpu-util applies to both, not 0 %.
    assert_eq!(
        generate("a.toml", "job_profile = \"mig.toml\"\n"),
        generate("b.toml", "gpu_peak_mib = { dist = \"constant\", value = 9000 }\n")
    );
}

#[test]
fn import_of_bad_input_exits_2_naming_the_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("bad.csv");
    std::fs::write(&log, "name, memory.total [MiB]\nNVIDIA A10, 22731 MiB\nNVIDIA A10, ??? MiB\n").unwrap();
    let out = dir.path().join("p.toml");
    let o = sim(&["calibrate", "import", log.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.starts_with(&format!("error: {}:3: column 'memory.total [MiB]': expected MiB", log.display())), "{e}");
    assert!(!out.exists());
    let o =
        sim(&["calibrate", "import", dir.path().join("none.csv").to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn recorded_probe_and_samples_replay() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("probe.toml");
    ok(&sim(&["calibrate", "probe", "--replay", &fixture("recorded-probe.toml"), "--out", p.to_str().unwrap()]));
    let profile = hw_calibrate::load_profile(&p).unwrap();
    assert_eq!(profile.find("H200").unwrap().idle_power_w, Some(74.52));
    let j = dir.path().join("job.toml");
    ok(&sim(&["calibrate", "sample", "--replay", &fixture("recorded-samples.toml"), "--out", j.to_str().unwrap()]));
    let job = hw_calibrate::load_job_profile(&j).unwrap();
    // The start-up zero is not a reading of the job: mean over the samples where it was
    // present, (1000 + 2000 + 2000 + 1500) / 4.
    assert_eq!((job.peak_memory_mib, job.mean_memory_mib, job.gpus), (2000, 1625, 1));
}

#[cfg(unix)]
#[test]
fn sample_reports_the_commands_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("job.toml");
    let o = sim(&[
        "calibrate",
        "sample",
        "--replay",
        &fixture("recorded-samples.toml"),
        "--interval-ms",
        "20",
        "--out",
        j.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "exit 3",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("`sh -c exit 3` ended with exit status 3"), "{}", stderr(&o));
    let job = hw_calibrate::load_job_profile(&j).unwrap();
    assert!(job.origin.contains("(exit status 3)"), "{}", job.origin);
    let o = sim(&[
        "calibrate",
        "sample",
        "--replay",
        &fixture("recorded-samples.toml"),
        "--out",
        j.to_str().unwrap(),
        "--",
        "/nonexistent/x",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Whether this machine can load NVML (then the no-driver checks are skipped).
fn has_driver(o: &Output) -> bool {
    // Success, or an NVML failure other than a missing driver (exit 1): a driver is there.
    if o.status.success() || (o.status.code() == Some(1) && stderr(o).contains("NVML")) {
        eprintln!("an NVIDIA driver is present: the no-driver check is skipped");
        return true;
    }
    false
}

#[test]
fn probe_without_a_driver_says_so_in_one_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.toml");
    let o = sim(&["calibrate", "probe", "--out", out.to_str().unwrap()]);
    if has_driver(&o) {
        return;
    }
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.starts_with("error: no NVIDIA driver: NVML could not be loaded (") || e.contains("no NVIDIA GPU"), "{e}");
    assert!(!out.exists());
}

#[test]
fn sample_without_a_driver_says_so_in_one_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.toml");
    let marker = dir.path().join("ran");
    let o = sim(&["calibrate", "sample", "--out", out.to_str().unwrap(), "--", "touch", marker.to_str().unwrap()]);
    if has_driver(&o) {
        return;
    }
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("no NVIDIA driver") || e.contains("no NVIDIA GPU"), "{e}");
    assert!(!marker.exists(), "the command does not run without NVML");
    assert!(!out.exists());
}
