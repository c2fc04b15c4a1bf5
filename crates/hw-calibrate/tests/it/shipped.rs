//! The shipped profiles: they parse, every value has a source, and every GPU model name
//! the repository's traces and examples use resolves.

use hw_calibrate::{HardwareProfile, shipped};

#[test]
fn shipped_profiles_parse_and_are_complete() {
    let p: HardwareProfile = toml::from_str(hw_calibrate::SHIPPED_TOML).unwrap();
    assert_eq!(&p, shipped());
    let models: Vec<&str> = p.gpu.iter().map(|g| g.model.as_str()).collect();
    assert_eq!(models, ["T4", "P100", "V100M16", "V100M32", "A10", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100", "H200"]);
    for g in &p.gpu {
        let m = &g.model;
        let (idle, max) = (g.idle_power_w.unwrap(), g.max_power_w.unwrap());
        assert!(0.0 < idle && idle < max / 4.0, "{m}: idle {idle} W, max {max} W");
        assert_eq!(g.power_limit_w, Some(max), "{m}");
        assert!(g.power().unwrap().is_some(), "{m}");
        for field in [
            "memory_mib",
            "idle_power_w",
            "max_power_w",
            "memory_bandwidth_gbps",
            "fp16_tflops",
            "compute_capability",
            "max_sm_clock_mhz",
            "nvlink_links",
            "pcie_gen",
        ] {
            assert!(g.sources.get(field).is_some_and(|s| !s.is_empty()), "{m}: no source for {field}");
        }
        for field in g.sources.keys() {
            assert!(
                [
                    "memory_mib",
                    "idle_power_w",
                    "max_power_w",
                    "power_limit_w",
                    "compute_capability",
                    "max_sm_clock_mhz",
                    "max_mem_clock_mhz",
                    "memory_bandwidth_gbps",
                    "fp16_tflops",
                    "nvlink_links",
                    "pcie_gen",
                    "pcie_width",
                    "mig"
                ]
                .contains(&field.as_str()),
                "{m}: a source for unknown field {field}"
            );
        }
        assert!(g.memory_bandwidth_gbps.is_some() && g.fp16_tflops.is_some() && g.pcie_gen.is_some(), "{m}");
    }
    // No name or alias is taken twice, in any case.
    let mut names: Vec<String> = p.gpu.iter().flat_map(|g| g.names()).map(str::to_ascii_lowercase).collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n);
}

#[test]
fn the_repositorys_model_names_resolve() {
    let s = shipped();
    for (name, model, mib) in [
        // openb (crates/traces/src/openb.rs GPU_MEMORY_MIB) and PAI gpu_type.
        ("T4", "T4", 15_109),
        ("V100M16", "V100M16", 16_160),
        ("V100M32", "V100M32", 32_510),
        ("P100", "P100", 16_280),
        ("A10", "A10", 22_731),
        ("A100", "A100-SXM4-80GB", 81_251),
        ("V100", "V100M16", 16_160),
        // examples/ cluster configs.
        ("A100-SXM4-80GB", "A100-SXM4-80GB", 81_251),
        // NVML names.
        ("Tesla V100-SXM2-16GB", "V100M16", 16_160),
        ("Tesla V100-SXM2-32GB", "V100M32", 32_510),
        ("Tesla T4", "T4", 15_109),
        ("Tesla P100-PCIE-16GB", "P100", 16_280),
        ("NVIDIA A10", "A10", 22_731),
        ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB", 40_536),
        ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB", 81_251),
        ("NVIDIA H100 80GB HBM3", "H100", 81_559),
        ("NVIDIA H200", "H200", 143_771),
        ("h100", "H100", 81_559),
    ] {
        let g = s.find(name).unwrap_or_else(|| panic!("{name} resolves"));
        assert_eq!((g.model.as_str(), g.memory_mib), (model, mib), "{name}");
    }
    // Undisclosed models have no profile.
    for name in ["G1", "G2", "G3", "MISC"] {
        assert!(s.find(name).is_none(), "{name}");
    }
}

#[test]
fn shipped_values() {
    let t: Vec<(String, u64, f64, f64)> = shipped()
        .gpu
        .iter()
        .map(|g| (g.model.clone(), g.memory_mib, g.idle_power_w.unwrap(), g.max_power_w.unwrap()))
        .collect();
    let want = [
        ("T4", 15_109, 10.0, 70.0),
        ("P100", 16_280, 28.0, 250.0),
        ("V100M16", 16_160, 40.0, 300.0),
        ("V100M32", 32_510, 40.0, 300.0),
        ("A10", 22_731, 20.0, 150.0),
        ("A100-SXM4-40GB", 40_536, 45.0, 400.0),
        ("A100-SXM4-80GB", 81_251, 55.0, 400.0),
        ("H100", 81_559, 70.0, 700.0),
        ("H200", 143_771, 75.0, 700.0),
    ];
    let want: Vec<(String, u64, f64, f64)> = want.iter().map(|&(m, a, b, c)| (m.to_string(), a, b, c)).collect();
    assert_eq!(t, want);
}
