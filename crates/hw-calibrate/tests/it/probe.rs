//! `sim calibrate probe` on a recorded probe.

use crate::fixture;
use hw_calibrate::probe::{GpuProbe, ProbedDevice, RecordedProbe, probe, profile_from_probe};

#[test]
fn recorded_probe_becomes_one_entry_per_model() {
    let mut rec = RecordedProbe::load(&fixture("recorded-probe.toml")).unwrap();
    assert_eq!(rec.host(), "dgx-h200-01");
    let p = probe(&mut rec).unwrap().profile;
    assert_eq!(p.origin, "nvml probe on dgx-h200-01");
    let models: Vec<&str> = p.gpu.iter().map(|g| g.model.as_str()).collect();
    assert_eq!(models, ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]);

    let h200 = p.find("H200").expect("the shipped name is an alias");
    assert_eq!(h200.model, "NVIDIA H200");
    assert_eq!(h200.memory_mib, 143_771);
    // Device 0 is idle (0 %, no process) at 74.52 W; device 1 is busy and does not count.
    assert_eq!((h200.idle_power_w, h200.max_power_w, h200.power_limit_w), (Some(74.52), Some(700.0), Some(700.0)));
    assert_eq!(h200.compute_capability.as_deref(), Some("9.0"));
    assert_eq!((h200.max_sm_clock_mhz, h200.max_mem_clock_mhz), (Some(1980), Some(3201)));
    assert_eq!((h200.nvlink_links, h200.pcie_gen, h200.pcie_width), (Some(18), Some(5), Some(16)));
    assert_eq!(h200.mig.as_deref(), Some("disabled"));
    assert_eq!(h200.devices.len(), 2);
    assert_eq!(h200.devices[1].uuid, "GPU-0a1b2c3d-0000-4000-8000-000000000001");
    assert_eq!(h200.devices[0].nvlink_peers.len(), 18);
    assert_eq!(h200.gpu_spec().unwrap().power.unwrap().at_permille(1000), 700_000);

    // The H100 was busy: no idle figure, so no power curve.
    let h100 = p.find("NVIDIA H100 80GB HBM3").unwrap();
    assert_eq!((h100.idle_power_w, h100.max_power_w), (None, Some(700.0)));
    assert_eq!(h100.power().unwrap(), None);
    assert_eq!(h100.nvlink_links, Some(0));
}

#[test]
fn the_written_profile_reads_back() {
    let mut rec = RecordedProbe::load(&fixture("recorded-probe.toml")).unwrap();
    let p = probe(&mut rec).unwrap().profile;
    let text = hw_calibrate::to_toml(&p, "test");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.toml");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(hw_calibrate::load_profile(&path).unwrap(), p);
    // JSON recordings too.
    let json = dir.path().join("r.json");
    std::fs::write(&json, serde_json::to_string(&rec).unwrap()).unwrap();
    assert_eq!(RecordedProbe::load(&json).unwrap(), rec);
}

#[test]
fn no_device_is_no_gpu() {
    let mut rec = RecordedProbe::default();
    let e = probe(&mut rec).unwrap_err();
    assert_eq!((e.to_string().as_str(), e.exit_code()), ("no NVIDIA GPU: NVML found no device", 2));
    let one = ProbedDevice { name: "X".into(), memory_total_mib: 10, ..Default::default() };
    assert_eq!(profile_from_probe("", &[one]).origin, "nvml probe");
}

#[test]
fn without_a_driver_nvml_says_so_in_one_line() {
    match hw_calibrate::nvml::NvmlProbe::open() {
        Err(hw_calibrate::CalibrateError::NoDriver(m)) => {
            let e = hw_calibrate::CalibrateError::NoDriver(m);
            let s = e.to_string();
            assert!(s.starts_with("no NVIDIA driver: NVML could not be loaded ("), "{s}");
            assert!(!s.contains('\n'));
            assert_eq!(e.exit_code(), 2);
        }
        Err(other) => eprintln!("NVML present but failing: {other}"),
        Ok(_) => eprintln!("a driver is present: nothing to check"),
    }
}
