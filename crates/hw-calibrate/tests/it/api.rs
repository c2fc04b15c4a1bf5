//! The API the rest of the workspace calls: load_profile, load_job_profile, resolve_gpu,
//! attach_power.

use crate::fixture;
use hw_calibrate::{CalibrateError, attach_power, load_job_profile, load_profile, resolve_gpu};
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

const TWO: &str = r#"origin = "test"

[[gpu]]
model = "NVIDIA H100 80GB HBM3"
aliases = ["mine"]
memory_mib = 81559
idle_power_w = 65.0
max_power_w = 690.0

[[gpu]]
model = "Tesla T4"
memory_mib = 15360
"#;

#[test]
fn resolve_by_file_by_entry_and_by_shipped_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("profiles")).unwrap();
    write(&d.join("profiles"), "two.toml", TWO);
    write(d, "one.toml", "[[gpu]]\nmodel = \"X\"\nmemory_mib = 1000\n");

    let g = resolve_gpu("profiles/two.toml#NVIDIA H100 80GB HBM3", d).unwrap();
    assert_eq!((g.memory_mib, g.idle_power_w), (81_559, Some(65.0)));
    assert_eq!(resolve_gpu("profiles/two.toml#MINE", d).unwrap().model, "NVIDIA H100 80GB HBM3");
    assert_eq!(resolve_gpu("one.toml", d).unwrap().model, "X");
    assert_eq!(resolve_gpu("H100", d).unwrap().memory_mib, 81_559);
    assert_eq!(resolve_gpu("tesla v100-sxm2-32gb", d).unwrap().model, "V100M32");

    let e = resolve_gpu("profiles/two.toml", d).unwrap_err().to_string();
    assert!(e.contains("holds 2 entries, expected one") && e.contains("'Tesla T4'"), "{e}");
    let e = resolve_gpu("profiles/two.toml#A10", d).unwrap_err().to_string();
    assert!(e.contains("holds no model or alias 'A10'"), "{e}");
    let e = resolve_gpu("B300", d).unwrap_err();
    assert!(e.is_bad_input());
    let e = e.to_string();
    assert!(e.starts_with("GPU profile 'B300' not found: no file ") && e.contains("no shipped model or alias"), "{e}");
    assert!(e.contains("'H200'"), "{e}");
    let e = resolve_gpu("missing.toml", d).unwrap_err().to_string();
    assert!(e.contains("no file") && !e.contains("shipped"), "{e}");
}

#[test]
fn load_errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, "origin = \"x\"\n\n[[gpu]]\nmodel = \"A\"\nmemory_mib = \"lots\"\n").unwrap();
    let e = load_profile(&p).unwrap_err();
    assert!(matches!(e, CalibrateError::Invalid { line: 5, .. }), "{e:?}");
    assert!(e.to_string().starts_with(&format!("{}:5: ", p.display())), "{e}");
    std::fs::write(&p, "[[gpu]]\nmodel = \"A\"\nmemory_mib = 10\npower_curve = [[10.0, 5.0], [100.0, 9.0]]\n").unwrap();
    let e = load_profile(&p).unwrap_err().to_string();
    assert!(e.contains("gpu 'A': power_curve: a power curve needs points from 0 % to 100 %"), "{e}");
    let e = load_profile(&dir.path().join("none.toml")).unwrap_err();
    assert!(matches!(e, CalibrateError::Read { .. }) && e.is_bad_input());
    std::fs::write(&p, "duration_s = 1.0\npeak_memory_mib = 5\nmean_memory_mib = 4\nmean_util_pct = 50.0\n").unwrap();
    assert_eq!(load_job_profile(&p).unwrap().peak_memory_mib, 5);
    assert_eq!(load_job_profile(&p).unwrap().mean_util_pct, Some(50.0));
    // Utilization and power are optional (unknown when absent), with their sources.
    std::fs::write(
        &p,
        "duration_s = 1.0\npeak_memory_mib = 5\nmean_memory_mib = 4\n[sources]\nmean_util_pct = \"not measured\"\n",
    )
    .unwrap();
    let j = load_job_profile(&p).unwrap();
    assert_eq!((j.mean_util_pct, j.mean_power_w, j.sources["mean_util_pct"].as_str()), (None, None, "not measured"));
    std::fs::write(&p, "duration_s = 1.0\n").unwrap();
    let e = load_job_profile(&p).unwrap_err().to_string();
    assert!(e.contains("peak_memory_mib"), "{e}");
    // A recorded-samples file is not a job profile.
    assert!(load_job_profile(&fixture("recorded-samples.toml")).is_err());
}

#[test]
fn attach_power_fills_only_unknown_curves_of_known_models() {
    use sim_core::{Cluster, GpuSpec, PowerCurve};
    let mut c = Cluster::processor_pool(1);
    let gpu = |model: &str, power| GpuSpec { model: model.into(), memory_mib: 1234, power };
    c.pools[0].spec.gpus = vec![
        gpu("V100M32", None),
        gpu("g2", None),
        gpu("nvidia h200", None),
        gpu("T4", Some(PowerCurve::linear(1, 2))),
    ];
    attach_power(&mut c);
    let g = &c.pools[0].spec.gpus;
    assert_eq!(g[0].power, Some(PowerCurve::linear(40_000, 300_000)));
    assert_eq!(g[0].memory_mib, 1234, "memory stays as the cluster says");
    assert_eq!(g[1].power, None);
    assert_eq!(g[2].power, Some(PowerCurve::linear(75_000, 700_000)));
    assert_eq!(g[3].power, Some(PowerCurve::linear(1, 2)));
}
