//! The NVML probe and sampler on recorded NVML answers (`tests/fixtures/nvml-*.toml`):
//! a MIG GPU, a board without a power sensor, a GPU that answers NoPermission, a GPU lost
//! mid-run, a container that cannot match its processes, MPS clients with accounting,
//! and the failures that read as "no driver".

use crate::fixture;
use hw_calibrate::CalibrateError;
use hw_calibrate::nvml::backend::{NvmlBackend, NvmlFailure};
use hw_calibrate::nvml::recorded::RecordedNvml;
use hw_calibrate::nvml::{NvmlProbe, NvmlSampler};
use hw_calibrate::probe::probe;
use hw_calibrate::sample::{GpuSampler, MemorySource, Sampled, Tick, job_profile};
use sim_core::hardware::JobProfile;

fn recorded(name: &str) -> Box<dyn NvmlBackend> {
    Box::new(RecordedNvml::load(&fixture(name)).unwrap().init().unwrap())
}

/// Reads every recorded reading once, 1 s apart, with the workload's process id 4242.
fn sample(name: &str) -> (Sampled, Vec<String>) {
    let mut s = NvmlSampler::new(recorded(name)).unwrap();
    let n = RecordedNvml::load(&fixture(name)).unwrap().reading.len();
    let ticks: Vec<Tick> = (0..n).map(|i| Tick { t_s: i as f64, gpu: s.read(&[4242]).unwrap() }).collect();
    let mut out = job_profile(&s.devices(), &ticks, (n - 1) as f64, name);
    out.job.notes.extend(s.notes());
    (out, s.notes())
}

#[test]
fn mig_devices_are_read_per_instance_and_utilization_is_unknown() {
    let p = probe(&mut NvmlProbe::new(recorded("nvml-mig-h100.toml"))).unwrap();
    assert!(p.profile.origin.starts_with("nvml probe on mig-node (recorded NVML answers "), "{}", p.profile.origin);
    let g = &p.profile.gpu[0];
    let mig = g.mig.as_deref().unwrap();
    assert!(
        mig.starts_with("enabled (GPU 0 MIG 0 'NVIDIA H100 80GB HBM3 MIG 3g.40gb' 40192 MiB, 0 process(es)"),
        "{mig}"
    );
    assert!(mig.contains("MIG 1 'NVIDIA H100 80GB HBM3 MIG 1g.10gb' 9984 MiB"), "{mig}");
    assert!(mig.ends_with("utilization not available on MIG)"), "{mig}");
    assert_eq!(p.devices[0].util_pct, None, "NVML gives no utilization with MIG on");
    assert_eq!(p.devices[0].mig_devices.len(), 2);
    // No utilization, but no process on any MIG device: idle, and the source says how.
    assert_eq!(g.idle_power_w, Some(88.5));
    assert!(g.sources["idle_power_w"].contains("MIG enabled, so no utilization"), "{:?}", g.sources);
    assert!(p.notes.iter().any(|n| n.contains("MIG enabled, 2 MIG device(s)")), "{:?}", p.notes);

    let (s, notes) = sample("nvml-mig-h100.toml");
    assert!(notes[0].contains("MIG enabled: memory and processes are read per MIG device (2)"), "{notes:?}");
    assert_eq!(s.memory, MemorySource::Process);
    let j = &s.job;
    // MIG device 0 only, over the two readings that listed the command.
    assert_eq!((j.gpus, j.gpu_model.as_str(), j.samples), (1, "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 2));
    assert_eq!((j.peak_memory_mib, j.mean_memory_mib), (20_000, 16_000));
    assert_eq!((j.mean_util_pct, j.peak_util_pct, j.mean_power_w), (None, None, None));
    assert!(j.sources["mean_util_pct"].starts_with("not measured: NVML answered utilization NotSupported"));
    // The file: no utilization or power figures (unknown, neither 0 % nor 100 %), the
    // sources in its [sources] table, and still a job profile the generator reads.
    let text = j.to_toml("test");
    assert!(!text.contains("100.0") && !text.contains("= 0.0"), "{text}");
    assert!(text.contains("\n[sources]\n"), "{text}");
    let read: JobProfile = toml::from_str(&text).unwrap();
    assert_eq!((read.peak_memory_mib, read.mean_memory_mib), (20_000, 16_000));
    assert_eq!(
        (read.mean_util_pct, read.peak_util_pct, read.mean_mem_util_pct, read.mean_power_w, read.peak_power_w),
        (None, None, None, None, None)
    );
    assert_eq!(read.sources, j.sources);
    assert!(read.sources["mean_util_pct"].starts_with("not measured: NVML answered utilization NotSupported"));
    assert!(read.sources["mean_power_w"].starts_with("not measured"), "{:?}", read.sources);
    assert_eq!(read, j.to_job_profile());
}

#[test]
fn a_board_without_a_power_sensor_has_no_power_and_falls_back_to_its_shipped_profile() {
    let p = probe(&mut NvmlProbe::new(recorded("nvml-no-power-sensor.toml"))).unwrap();
    let g = &p.profile.gpu[0];
    assert_eq!((g.idle_power_w, g.max_power_w, g.power_limit_w), (None, None, None));
    assert!(g.sources["idle_power_w"].starts_with("not measured: NVML power_usage NotSupported"), "{:?}", g.sources);
    assert!(p.notes.iter().any(|n| n.contains("no power reading")), "{:?}", p.notes);
    // Referenced from a cluster configuration, the shipped T4's figures stand in, and say so.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t4.toml"), hw_calibrate::to_toml(&p.profile, "test")).unwrap();
    let r = hw_calibrate::resolve_gpu("t4.toml", dir.path()).unwrap();
    assert_eq!((r.idle_power_w, r.max_power_w), (Some(10.0), Some(70.0)));
    assert!(
        r.sources["idle_power_w"].starts_with("shipped profile 'T4', not in this profile (this profile: not measured")
    );
    assert_eq!(r.power().unwrap().unwrap().at_permille(1000), 70_000);

    let (s, _) = sample("nvml-no-power-sensor.toml");
    let j = &s.job;
    assert_eq!((j.samples, j.peak_memory_mib, j.mean_util_pct), (2, 6144, Some(75.0)));
    assert_eq!((j.mean_power_w, j.peak_power_w), (None, None));
    assert!(j.sources["mean_power_w"].starts_with("not measured: no power reading"), "{:?}", j.sources);
    let read: JobProfile = toml::from_str(&j.to_toml("t")).unwrap();
    assert_eq!((read.mean_util_pct, read.mean_power_w, read.peak_power_w), (Some(75.0), None, None));
    assert_eq!(read.sources["mean_power_w"], j.sources["mean_power_w"]);
}

#[test]
fn a_gpu_answering_no_permission_is_skipped_and_the_other_is_measured() {
    let p = probe(&mut NvmlProbe::new(recorded("nvml-nopermission.toml"))).unwrap();
    assert_eq!(p.devices.iter().map(|d| d.index).collect::<Vec<_>>(), [1]);
    assert!(p.notes.iter().any(|n| n.starts_with("GPU 0 skipped: NoPermission (a GPU outside this job's cgroup")));
    let (s, notes) = sample("nvml-nopermission.toml");
    assert!(notes.iter().any(|n| n.starts_with("GPU 0 skipped: NoPermission")), "{notes:?}");
    assert_eq!((s.job.gpus, s.job.peak_memory_mib, s.job.mean_power_w), (1, 8192, Some(650.0)));
    // Every GPU refusing: the probe fails, naming each.
    let mut all: RecordedNvml = RecordedNvml::load(&fixture("nvml-nopermission.toml")).unwrap();
    all.device[1].fail = Some("NoPermission".into());
    let e = probe(&mut NvmlProbe::new(Box::new(all.clone()))).unwrap_err();
    assert!(matches!(&e, CalibrateError::NoReadableGpu { skipped } if skipped.len() == 2), "{e}");
    assert_eq!(e.exit_code(), 2);
    assert!(matches!(NvmlSampler::new(Box::new(all)), Err(CalibrateError::NoReadableGpu { .. })));
}

#[test]
fn a_gpu_lost_mid_run_is_skipped_from_then_on() {
    let mut r = RecordedNvml::load(&fixture("nvml-nopermission.toml")).unwrap();
    r.device[0].fail = None;
    r.device[0].memory_total_mib = 143_771;
    for reading in &mut r.reading {
        let mut g0 = reading.gpu[0].clone();
        g0.index = 0;
        reading.gpu.insert(0, g0);
    }
    r.reading[1].gpu[0].fail = Some("GpuLost".into());
    let mut s = NvmlSampler::new(Box::new(r)).unwrap();
    assert_eq!(s.read(&[7]).unwrap().len(), 2);
    let second = s.read(&[7]).unwrap();
    assert_eq!(second.iter().map(|g| g.index).collect::<Vec<_>>(), [1]);
    assert_eq!(s.read(&[7]).unwrap().len(), 1, "not read again");
    assert!(s.notes().iter().any(|n| n.starts_with("GPU 0 skipped from this reading on: GpuLost")), "{:?}", s.notes());
}

#[test]
fn in_a_container_the_device_wide_memory_is_used_and_said() {
    let (s, _) = sample("nvml-container.toml");
    assert_eq!(s.memory, MemorySource::DeviceContainer);
    let j = &s.job;
    // Busy readings only (the first holds the least memory at 0 %): 32 000 and 42 000 MiB,
    // every tenant counting.
    assert_eq!((j.samples, j.peak_memory_mib, j.mean_memory_mib), (2, 42_000, 37_000));
    let src = &j.sources["peak_memory_mib"];
    assert!(src.starts_with("device-wide memory in use, all tenants (NVML listed processes but none of the command's"));
    assert!(src.contains("host process ids"), "{src}");
    assert!(j.sources["mean_util_pct"].contains("device-wide utilization"), "{:?}", j.sources);
}

#[test]
fn mps_clients_accounting_peaks_process_utilization_and_energy() {
    let (s, notes) = sample("nvml-mps-accounting.toml");
    assert!(notes.iter().any(|n| n.contains("accounting mode on")), "{notes:?}");
    assert_eq!(s.memory, MemorySource::Accounting);
    let j = &s.job;
    // The MPS client is the command: 3000, 3000, 2000 MiB sampled; accounting's peak is 3500.
    assert_eq!((j.samples, j.peak_memory_mib, j.mean_memory_mib), (3, 3500, 2667));
    assert!(j.sources["peak_memory_mib"].starts_with("NVML accounting stats maxMemoryUsage"));
    // Its own SM utilization (40, 40, 60), not the device's (50, 90, 95).
    assert_eq!((j.mean_util_pct, j.peak_util_pct), (Some(46.67), Some(60.0)));
    assert!(j.sources["mean_util_pct"].starts_with("3 samples: the command's own SM utilization"));
    // Power: 280 W as read at the first sample, then 300 J and 400 J over 1 s.
    assert_eq!((j.mean_power_w, j.peak_power_w), (Some(326.67), Some(400.0)));
    let p = &j.sources["mean_power_w"];
    assert!(
        p.starts_with("2 samples: change of NVML total_energy_consumption")
            && p.contains("1 samples: NVML power_usage")
    );
}

#[test]
fn library_not_found_and_driver_not_loaded_read_as_no_driver() {
    use nvml_wrapper::error::NvmlError;
    for e in [NvmlError::LibraryNotFound, NvmlError::DriverNotLoaded] {
        assert!(matches!(hw_calibrate::nvml::live::failure(e), NvmlFailure::NoDriver(_)));
    }
    assert_eq!(hw_calibrate::nvml::live::failure(NvmlError::NoPermission), NvmlFailure::NoPermission);
    let mut r = RecordedNvml::load(&fixture("nvml-nopermission.toml")).unwrap();
    r.init_fail = Some("LibraryNotFound".into());
    assert!(matches!(r.init(), Err(NvmlFailure::NoDriver(_))));
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("nodriver.toml");
    std::fs::write(&f, "init_fail = \"LibraryNotFound\"\n").unwrap();
    match hw_calibrate::nvml::open_recorded(&f) {
        Err(e @ CalibrateError::NoDriver(_)) => assert_eq!(e.exit_code(), 2),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("opened"),
    }
}
