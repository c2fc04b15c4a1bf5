//! `sim calibrate import` on the nvidia-smi and dcgm-exporter fixtures.

use crate::fixture;
use hw_calibrate::import::{LogFormat, import_bytes, import_file};

#[test]
fn nvidia_smi_csv_with_units() {
    let i = import_file(&fixture("nvidia-smi-a100.csv")).unwrap();
    assert_eq!(i.format, LogFormat::NvidiaSmiCsv);
    assert_eq!(i.readings, 9);
    let hw = &i.hardware;
    assert_eq!(hw.gpu.len(), 1);
    let g = &hw.gpu[0];
    assert_eq!(g.model, "NVIDIA A100-SXM4-80GB");
    assert_eq!(g.aliases, ["A100-SXM4-80GB"], "the shipped model it matches");
    assert_eq!(g.memory_mib, 81920);
    assert_eq!(g.power_limit_w, Some(400.0));
    assert_eq!(g.max_sm_clock_mhz, Some(1410));
    // 8 readings with power (the [N/A] one is left out): mean util 50, mean power 230,
    // Sxy 51 000, Sxx 15 000, so slope 3.4 W per %, 60 W at 0 %, 400 W at 100 %.
    assert_eq!((g.idle_power_w, g.max_power_w), (Some(60.0), Some(400.0)));
    // Bins: 0 % holds 3 readings, 50 % 2, 100 % 3: two points, too few for a curve.
    assert!(g.power_curve.is_empty());
    assert_eq!(g.devices.len(), 2);
    assert_eq!((g.devices[1].index, g.devices[1].uuid.as_str()), (1, "GPU-5f1c1a52-7a9e-4c41-9d0e-0c4b6e1a0a01"));
    let spec = g.gpu_spec().unwrap();
    assert_eq!(spec.power.unwrap().at_permille(500), 230_000);

    // The job: the 5 readings where a GPU was busy (utilization above 0, or memory above
    // the GPU's least: 0 MiB on GPU 0, 4 MiB on GPU 1); the start-up zeros and GPU 1's
    // idle readings are left out.
    let j = &i.job;
    assert_eq!((j.gpus, j.samples, j.gpu_model.as_str()), (2, 5, "NVIDIA A100-SXM4-80GB"));
    assert_eq!(j.duration_s, 4.01);
    assert_eq!((j.peak_memory_mib, j.mean_memory_mib), (78_000, 55_200)); // 276 000 / 5
    assert_eq!(
        j.memory_mib_quantiles,
        [20_000, 20_000, 40_000, 40_000, 60_000, 60_000, 60_000, 78_000, 78_000, 78_000, 78_000]
    );
    assert_eq!((j.mean_util_pct, j.peak_util_pct), (Some(80.0), Some(100.0))); // 400 / 5
    assert_eq!(j.mean_mem_util_pct, Some(32.0)); // 160 / 5
    assert_eq!((j.mean_power_w, j.peak_power_w), (Some(332.0), Some(404.0))); // 1660 / 5
    assert!(i.notes.iter().any(|n| n.starts_with("4 readings of idle GPUs")), "{:?}", i.notes);
    assert!(j.sources["mean_util_pct"].starts_with("device-wide GPU utilization"), "{:?}", j.sources);
}

#[test]
fn nvidia_smi_csv_nounits_any_column_order() {
    let i = import_file(&fixture("nvidia-smi-h100-nounits.csv")).unwrap();
    let g = &i.hardware.gpu[0];
    assert_eq!((g.model.as_str(), g.memory_mib), ("NVIDIA H100 80GB HBM3", 81559));
    assert_eq!(g.aliases, ["H100"]);
    assert_eq!(g.power_limit_w, Some(700.0), "enforced.power.limit when power.limit is absent");
    assert_eq!(g.max_mem_clock_mhz, Some(2619));
    // Three readings at each of 0, 30, 70, 100 %: mean util 50, mean power 381.5,
    // Sxx 17 400, Sxy 109 200: slope 546/87, at 0 % 5890.5/87 = 67.71 W, at 100 %
    // 60490.5/87 = 695.29 W (under the 700 W limit).
    assert_eq!((g.idle_power_w, g.max_power_w), (Some(67.71), Some(695.29)));
    // Four bins of three readings: the curve is their means.
    assert_eq!(g.power_curve, [[0.0, 72.0], [30.0, 252.0], [70.0, 502.0], [100.0, 700.0]]);
    let curve = g.power().unwrap().unwrap();
    assert_eq!(curve.at_permille(150), 162_000);
    assert_eq!(g.devices.iter().map(|d| d.index).collect::<Vec<_>>(), [0, 1]);
    // The first reading of each GPU is idle (0 %, 0 MiB, the least): 10 readings count.
    let j = &i.job;
    assert_eq!((j.gpus, j.samples, j.duration_s), (2, 10, 0.0));
    assert!(i.notes.iter().any(|n| n.contains("no timestamps")), "{:?}", i.notes);
    assert!(i.notes.iter().any(|n| n.contains("without timestamps enter the power fit")), "{:?}", i.notes);
    assert_eq!((j.peak_memory_mib, j.mean_memory_mib), (71_680, 36_915)); // 369 152 / 10
    assert_eq!((j.mean_power_w, j.peak_power_w), (Some(443.6), Some(710.0))); // 4436 / 10
}

#[test]
fn dcgm_exporter_scrapes() {
    let i = import_file(&fixture("dcgm-exporter-h100.prom")).unwrap();
    assert_eq!(i.format, LogFormat::DcgmExporter);
    assert_eq!(i.readings, 6, "three scrapes of two GPUs");
    let g = &i.hardware.gpu[0];
    assert_eq!(g.model, "NVIDIA H100 80GB HBM3");
    // FB_USED + FB_FREE + FB_RESERVED.
    assert_eq!(g.memory_mib, 81_559);
    // Util 0/50/100 on both GPUs, power 70/380/700 and 70/390/700: mean 50 %, 385 W,
    // Sxy 63 000, Sxx 10 000: 6.3 W per %, 70 W idle, 700 W at full load. No power
    // limit metric in the default counters.
    assert_eq!((g.idle_power_w, g.max_power_w, g.power_limit_w), (Some(70.0), Some(700.0), None));
    assert_eq!(g.devices.len(), 2);
    assert_eq!(g.devices[0].uuid, "GPU-3b8e1f0c-2d4a-4e59-8a61-7c2f90d1e0a0");
    assert_eq!(g.devices[1].pci_bus_id.as_deref(), Some("00000000:2A:00.0"));
    // The first scrape is idle (0 %, 1 MiB, the least on both GPUs): 4 readings count.
    let j = &i.job;
    assert_eq!((j.gpus, j.samples), (2, 4));
    assert_eq!((j.peak_memory_mib, j.mean_memory_mib), (75_000, 48_750)); // 195 000 / 4
    assert_eq!(
        j.memory_mib_quantiles,
        [20_000, 20_000, 30_000, 30_000, 30_000, 70_000, 70_000, 70_000, 70_000, 75_000, 75_000]
    );
    assert_eq!((j.mean_util_pct, j.mean_mem_util_pct), (Some(75.0), Some(47.5)));
    assert_eq!((j.mean_power_w, j.peak_power_w), (Some(542.5), Some(700.0)));
}

#[test]
fn dcgm_timestamps_split_scrapes_and_mig_is_skipped() {
    let l = |m: &str, gpu: &str, extra: &str, v: &str, ts: &str| {
        format!(
            "{m}{{gpu=\"{gpu}\",UUID=\"GPU-{gpu}\",device=\"nvidia{gpu}\",modelName=\"NVIDIA A100-SXM4-40GB\"{extra}}} {v} {ts}\n"
        )
    };
    let mut text = String::new();
    for (ts, util, power) in [("1700000000000", "0", "50"), ("1700000010000", "100", "350")] {
        text += &l("DCGM_FI_DEV_GPU_UTIL", "0", "", util, ts);
        text += &l("DCGM_FI_DEV_POWER_USAGE", "0", "", power, ts);
        text += &l("DCGM_FI_DEV_FB_TOTAL", "0", "", "40960", ts);
        text += &l("DCGM_FI_DEV_FB_USED", "0", "", "1000", ts);
        text += &l("DCGM_FI_DEV_POWER_MGMT_LIMIT", "0", "", "400", ts);
        text += &l("DCGM_FI_DEV_FB_USED", "0", ",GPU_I_ID=\"1\",GPU_I_PROFILE=\"1g.5gb\"", "9", ts);
    }
    let i = import_bytes(text.as_bytes(), "inline.prom").unwrap();
    assert_eq!(i.readings, 2);
    let g = &i.hardware.gpu[0];
    assert_eq!((g.memory_mib, g.power_limit_w), (40_960, Some(400.0)));
    assert_eq!((g.idle_power_w, g.max_power_w), (Some(50.0), Some(350.0)));
    assert_eq!(i.job.duration_s, 10.0);
    assert!(i.notes.iter().any(|n| n.contains("MIG")), "{:?}", i.notes);
}

#[test]
fn constant_utilization_uses_the_idle_minimum_and_the_limit() {
    let csv = "name, memory.total [MiB], utilization.gpu [%], power.draw [W], power.limit [W]\n\
               Tesla T4, 15360 MiB, 0 %, 9.50 W, 70.00 W\n\
               Tesla T4, 15360 MiB, 0 %, 11.00 W, 70.00 W\n";
    let i = import_bytes(csv.as_bytes(), "t4.csv").unwrap();
    let g = &i.hardware.gpu[0];
    assert_eq!((g.idle_power_w, g.max_power_w), (Some(9.5), Some(70.0)));
    assert_eq!(g.aliases, ["T4"]);
}

fn error(text: &str) -> String {
    let e = import_bytes(text.as_bytes(), "log.csv").unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    e.to_string()
}

#[test]
fn errors_name_file_line_column_and_expectation() {
    let head = "name, memory.total [MiB], power.draw [W]\n";
    let e = error(&format!("{head}NVIDIA A10, lots, 20 W\n"));
    assert_eq!(e, "log.csv:2: column 'memory.total [MiB]': expected MiB, e.g. '81559 MiB' or '81559', found 'lots'");
    let e = error(&format!("{head}NVIDIA A10, 22731 MiB, 20 W, 3\n"));
    assert_eq!(e, "log.csv:2: expected 3 comma-separated fields as the header has, found 4");
    let e = error(&format!("{head}NVIDIA A10, 22731 MiB, 20 MHz\n"));
    assert!(e.starts_with("log.csv:2: column 'power.draw [W]': expected watts"), "{e}");
    let e = error("index, memory.used [MiB]\n0, 1 MiB\n");
    assert!(e.starts_with("log.csv:1: expected an nvidia-smi --query-gpu CSV header") && e.contains("'name'"), "{e}");
    let e = error("0, NVIDIA A10, 22731 MiB\n");
    assert!(e.contains("without noheader"), "{e}");
    let e = error("# HELP x\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\n");
    assert_eq!(e, "log.csv:2: DCGM_FI_DEV_FB_USED: expected a modelName label (dcgm-exporter's GPU model name)");
    let e = error("DCGM_FI_DEV_FB_USED{gpu=\"0\",modelName=\"X\"} many\n");
    assert_eq!(e, "log.csv:1: DCGM_FI_DEV_FB_USED: expected a number as the value, found 'many'");
    let e = error("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",modelName=\"X\"} 5\n");
    assert!(e.starts_with("log.csv:1: no memory total for model 'X'"), "{e}");
    let e = error("# a README\n\nSome text, with a comma.\n");
    assert!(e.starts_with("log.csv: expected an `nvidia-smi --query-gpu"), "{e}");
    let e = error("hello\n");
    assert!(e.starts_with("log.csv: expected an `nvidia-smi --query-gpu"), "{e}");
    let e = import_bytes(b"name, memory.total\n\xff\xfe\n", "bin.csv").unwrap_err().to_string();
    assert_eq!(e, "bin.csv:2: expected UTF-8 text (an nvidia-smi CSV log or a dcgm-exporter scrape)");
}

#[test]
fn a_truncated_nvidia_smi_log_with_messages_imports_what_it_holds() {
    // Two "Unable to determine the device handle" lines among the readings, and a last
    // line cut short while nvidia-smi wrote it (no newline after it).
    let raw = std::fs::read(fixture("nvidia-smi-truncated.csv")).unwrap();
    assert!(!raw.ends_with(b"\n"), "the fixture ends unterminated");
    let i = import_file(&fixture("nvidia-smi-truncated.csv")).unwrap();
    assert_eq!(i.readings, 4);
    assert!(i.notes.iter().any(|n| n.starts_with("skipped the unterminated last line 8")), "{:?}", i.notes);
    assert!(
        i.notes.iter().any(|n| n.starts_with("skipped 2 lines that are not CSV (nvidia-smi's messages), the first at line 3: 'Unable to determine the device handle")),
        "{:?}",
        i.notes
    );
    let g = &i.hardware.gpu[0];
    // No power limit in the log: the line (51.82 W at 0 %, 460.91 W at 100 %) is capped at
    // the shipped TDP of the A100 40 GB, and the sources name it and the workload.
    assert_eq!((g.idle_power_w, g.max_power_w, g.power_limit_w), (Some(51.82), Some(400.0), None));
    let max = &g.sources["max_power_w"];
    assert!(
        max.starts_with("shipped TDP of A100-SXM4-40GB (the log has no power limit) (the least-squares line"),
        "{max}"
    );
    assert!(max.ends_with("workload: nvidia-smi log ") || max.contains("; workload: nvidia-smi log "), "{max}");
    assert_eq!((i.job.samples, i.job.peak_memory_mib), (3, 30_000));
    // A message before the header still reads as nvidia-smi's.
    let text = format!(
        "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n{}",
        String::from_utf8(raw).unwrap()
    );
    assert_eq!(import_bytes(text.as_bytes(), "m.csv").unwrap().readings, 4);
}

#[test]
fn power_fit_windows_are_a_second_long() {
    // Readings 0.25 s apart: power and utilization of a second are averaged before the fit,
    // so the short 100 % spike at 0.5 s (a utilization period power does not cover yet)
    // does not pull the line up.
    let mut csv = "timestamp, name, index, memory.total [MiB], utilization.gpu [%], power.draw [W], power.limit [W]\n"
        .to_string();
    let rows = [
        (0.0, 0, 100.0),
        (0.25, 0, 100.0),
        (0.5, 100, 100.0),
        (0.75, 0, 100.0),
        (1.0, 100, 400.0),
        (1.25, 100, 400.0),
        (1.5, 100, 400.0),
        (1.75, 100, 400.0),
    ];
    for (t, u, w) in rows {
        csv.push_str(&format!("2024/05/01 12:00:{t:06.3}, Tesla T4, 0, 15360 MiB, {u} %, {w} W, 70.00 W\n"));
    }
    let i = import_bytes(csv.as_bytes(), "w.csv").unwrap();
    let g = &i.hardware.gpu[0];
    // Two windows, (25 %, 100 W) and (100 %, 400 W): the line reaches 400 W at 100 %, capped at
    // the 70 W limit. Unwindowed, the 0.5 s spike would make three points at 100 %.
    assert_eq!((g.idle_power_w, g.max_power_w), (Some(0.0), Some(70.0)));
    assert!(g.sources["max_power_w"].contains("least-squares line over 2 samples reaches 400.00 W"), "{:?}", g.sources);
}

#[test]
fn dcgm_copies_per_pod_of_a_time_sliced_gpu_are_merged() {
    let l = |m: &str, pod: &str, v: &str| {
        format!(
            "{m}{{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA A10\",namespace=\"ml\",pod=\"{pod}\",container=\"c\"}} {v}\n"
        )
    };
    let mut text = String::new();
    for (used, util, power) in [("0", "0", "20"), ("8000", "60", "110"), ("12000", "100", "150")] {
        for pod in ["train-a", "train-b", "infer-c"] {
            text += &l("DCGM_FI_DEV_FB_USED", pod, used);
            text += &l("DCGM_FI_DEV_FB_FREE", pod, "14000");
            text += &l("DCGM_FI_DEV_GPU_UTIL", pod, util);
            text += &l("DCGM_FI_DEV_POWER_USAGE", pod, power);
        }
    }
    let i = import_bytes(text.as_bytes(), "ts.prom").unwrap();
    assert_eq!(i.readings, 3, "one reading per scrape of the GPU, not one per pod");
    assert_eq!(i.job.gpus, 1);
    assert!(i.notes.iter().any(|n| n.starts_with("merged 24 samples repeated per pod")), "{:?}", i.notes);
    assert_eq!((i.job.samples, i.job.peak_memory_mib), (2, 12_000));
}

#[test]
fn dcgm_energy_counter_gives_power_over_the_interval() {
    let l = |m: &str, v: &str, ts: u64| {
        format!("{m}{{gpu=\"0\",UUID=\"GPU-e\",modelName=\"NVIDIA H100 80GB HBM3\"}} {v} {ts}\n")
    };
    let mut text = String::new();
    // Energy +150 J over 2 s (75 W), then +1300 J over 2 s (650 W); POWER_USAGE says otherwise.
    for (ts, util, energy) in [
        (1_700_000_000_000u64, "0", "1000000"),
        (1_700_000_002_000, "0", "1150000"),
        (1_700_000_004_000, "100", "2450000"),
    ] {
        text += &l("DCGM_FI_DEV_FB_TOTAL", "81559", ts);
        text += &l("DCGM_FI_DEV_FB_USED", if util == "0" { "0" } else { "1000" }, ts);
        text += &l("DCGM_FI_DEV_GPU_UTIL", util, ts);
        text += &l("DCGM_FI_DEV_POWER_USAGE", "999", ts);
        text += &l("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", energy, ts);
    }
    let i = import_bytes(text.as_bytes(), "e.prom").unwrap();
    let g = &i.hardware.gpu[0];
    // Points (0 %, 999 W as read: no interval before it), (0 %, 75 W), (100 %, 650 W).
    assert!(
        g.sources["power"].starts_with("2 readings' power from the change of the energy counter"),
        "{:?}",
        g.sources
    );
    assert_eq!((i.job.mean_power_w, i.job.samples), (Some(650.0), 1));
}
