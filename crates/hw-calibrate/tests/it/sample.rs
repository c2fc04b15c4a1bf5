//! `sim calibrate sample` on recorded samples.

use crate::fixture;
use hw_calibrate::sample::{GpuReading, MemorySource, RecordedSamples, SampledDevice, Tick, job_profile, run_sampled};
use std::time::Duration;

#[test]
fn recorded_samples_become_a_job_profile() {
    let rec = RecordedSamples::load(&fixture("recorded-samples.toml")).unwrap();
    let s = rec.job_profile("python3 train.py");
    assert_eq!(s.memory, MemorySource::Process);
    let j = &s.job;
    // Only GPU 1 ran the job's processes; GPU 0 stays out, and so does GPU 1's first
    // reading, before the process was listed.
    assert_eq!((j.gpus, j.gpu_model.as_str(), j.samples, j.duration_s), (1, "NVIDIA H200", 4, 1.0));
    // Process memory 1000, 2000, 2000, 1500.
    assert_eq!((j.peak_memory_mib, j.mean_memory_mib), (2000, 1625));
    assert_eq!(j.memory_mib_quantiles, [1000, 1000, 1500, 1500, 1500, 2000, 2000, 2000, 2000, 2000, 2000]);
    // Utilization 80, 100, 100, 20; memory utilization 30, 50, 50, 10.
    assert_eq!((j.mean_util_pct, j.peak_util_pct, j.mean_mem_util_pct), (Some(75.0), Some(100.0), Some(35.0)));
    // Power 500, 690, 700, 200 (no energy counter recorded: power_usage as read).
    assert_eq!((j.mean_power_w, j.peak_power_w), (Some(522.5), Some(700.0)));
    assert!(j.sources["mean_power_w"].starts_with("4 samples: NVML power_usage at each sample"), "{:?}", j.sources);
}

#[test]
fn without_process_memory_the_busy_devices_count() {
    let dev = |i| SampledDevice { index: i, name: "Tesla T4".into(), mig: None };
    let r = |index, used, util| GpuReading {
        index,
        memory_used_mib: used,
        util_pct: Some(util),
        power_w: Some(10.0 + util / 2.0),
        ..Default::default()
    };
    let ticks = vec![
        Tick { t_s: 0.0, gpu: vec![r(0, 100, 0.0), r(1, 500, 0.0)] },
        Tick { t_s: 0.5, gpu: vec![r(0, 100, 0.0), r(1, 900, 60.0)] },
    ];
    let s = job_profile(&[dev(0), dev(1)], &ticks, 0.5, "x");
    assert_eq!(s.memory, MemorySource::DeviceNotListed);
    // GPU 1 only, and only its busy sample (the first holds its least memory at 0 %).
    assert_eq!((s.job.gpus, s.job.samples, s.job.peak_memory_mib, s.job.mean_memory_mib), (1, 1, 900, 900));
    assert!(
        s.job.sources["peak_memory_mib"].starts_with("device-wide memory in use, all tenants"),
        "{:?}",
        s.job.sources
    );
    // Nothing ever busy: every device counts, and the profile says so.
    let idle = vec![Tick { t_s: 0.0, gpu: vec![r(0, 100, 0.0), r(1, 500, 0.0)] }];
    let s = job_profile(&[dev(0), dev(1)], &idle, 0.0, "x");
    assert_eq!(s.job.gpus, 2);
    assert!(s.job.notes.iter().any(|n| n.starts_with("no GPU was ever busy")), "{:?}", s.job.notes);
}

#[cfg(unix)]
#[test]
fn the_command_runs_and_its_exit_status_is_reported() {
    let mut rec = RecordedSamples::load(&fixture("recorded-samples.toml")).unwrap();
    let cmd = |s: &str| vec!["sh".to_string(), "-c".to_string(), s.to_string()];
    let run = run_sampled(&cmd("sleep 0.3; exit 3"), Duration::from_millis(50), &mut rec).unwrap();
    assert_eq!(run.exit_code, Some(3));
    assert!(!run.success());
    assert!(run.duration_s >= 0.3, "{}", run.duration_s);
    assert!(run.ticks.len() >= 3, "{}", run.ticks.len());
    assert_eq!(run.ticks[0].t_s, 0.0f64.max(run.ticks[0].t_s));
    let ok = run_sampled(&cmd("true"), Duration::from_millis(50), &mut rec).unwrap();
    assert!(ok.success() && !ok.ticks.is_empty());
    let e = run_sampled(&["/nonexistent/program".to_string()], Duration::from_millis(50), &mut rec).unwrap_err();
    assert!(e.to_string().starts_with("cannot run `/nonexistent/program`: "), "{e}");
    assert_eq!(e.exit_code(), 2);
}

#[cfg(target_os = "linux")]
#[test]
fn the_process_tree_holds_the_children() {
    let mut child = std::process::Command::new("sh").args(["-c", "sleep 5 & wait"]).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let tree = hw_calibrate::sample::process_tree(child.id());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(tree.contains(&child.id()) && tree.len() >= 2, "{tree:?}");
}
