//! `sim calibrate import`: hardware and job profiles from the logs operators keep.
//!
//! Two formats, told apart by content ([`detect`]):
//!
//! * **nvidia-smi CSV** ([`smi`]): `nvidia-smi --query-gpu=… --format=csv` (values with
//!   units, `81559 MiB`, `69.47 W`, `35 %`) or `--format=csv,nounits`, with its header
//!   line. Columns are found by header name in any order; `name` and `memory.total` are
//!   required, and `timestamp`, `index`, `uuid`, `pci.bus_id`, `memory.used`,
//!   `utilization.gpu`, `utilization.memory`, `power.draw` (or `power.draw.average` /
//!   `power.draw.instant`), `power.limit` (or `enforced.power.limit` /
//!   `power.default_limit`), `clocks.max.sm` and `clocks.max.memory` are read when
//!   present. `[N/A]`, `[Not Supported]` and other bracketed values are missing values.
//! * **dcgm-exporter scrapes** ([`dcgm`]): Prometheus text with `DCGM_FI_DEV_*` samples
//!   labelled `gpu`, `UUID`, `device`, `modelName`, …; several scrapes may be
//!   concatenated, with or without sample timestamps. Memory total is `FB_TOTAL`, else
//!   `FB_USED + FB_FREE (+ FB_RESERVED)`.
//!
//! Both become per-GPU readings; [`build`] makes from them one [`GpuProfile`] per model
//! (memory, power limit, idle and full-load power fitted as [`crate::fit`] says) and one
//! [`JobProfile`] over the whole log.

pub mod dcgm;
pub mod smi;

use crate::CalibrateError;
use crate::fit::{PowerCap, fit_power, windows};
use crate::job::{JobReadings, MeasuredJob};
use sim_core::hardware::{DeviceRecord, GpuProfile, HardwareProfile};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The log formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// `nvidia-smi --query-gpu … --format=csv[,nounits]`.
    NvidiaSmiCsv,
    /// dcgm-exporter's Prometheus text.
    DcgmExporter,
}

impl LogFormat {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::NvidiaSmiCsv => "nvidia-smi CSV",
            LogFormat::DcgmExporter => "dcgm-exporter scrape",
        }
    }
}

/// One GPU at one instant, as a log gives it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// Line it starts on (1-based).
    pub line: usize,
    /// Which GPU: its UUID, else its index, else its bus id, else its model.
    pub gpu: String,
    /// Model name.
    pub model: String,
    /// UUID.
    pub uuid: Option<String>,
    /// Index.
    pub index: Option<u32>,
    /// PCI bus id.
    pub pci_bus_id: Option<String>,
    /// Seconds (any origin).
    pub t_s: Option<f64>,
    /// Memory total, MiB.
    pub memory_total_mib: Option<u64>,
    /// Memory used, MiB.
    pub memory_used_mib: Option<u64>,
    /// GPU utilization, percent.
    pub util_pct: Option<f64>,
    /// Memory-bandwidth utilization, percent.
    pub mem_util_pct: Option<f64>,
    /// Board power, watts.
    pub power_w: Option<f64>,
    /// Energy counter, millijoules (dcgm-exporter's `TOTAL_ENERGY_CONSUMPTION`).
    pub energy_mj: Option<f64>,
    /// Power limit, watts.
    pub power_limit_w: Option<f64>,
    /// Maximum SM clock, MHz.
    pub max_sm_clock_mhz: Option<u32>,
    /// Maximum memory clock, MHz.
    pub max_mem_clock_mhz: Option<u32>,
}

/// What an import made.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// The format read.
    pub format: LogFormat,
    /// One entry per GPU model.
    pub hardware: HardwareProfile,
    /// The whole log as one job.
    pub job: MeasuredJob,
    /// Readings (GPU × instant).
    pub readings: usize,
    /// Things skipped or assumed, one line each.
    pub notes: Vec<String>,
}

/// The format of a log, from its content; `None` when it is neither. A dcgm-exporter
/// scrape starts with a `# HELP`/`# TYPE` line or a `DCGM_` sample, or has a `DCGM_`
/// sample after its leading comments; an nvidia-smi log starts with a comma-separated
/// header.
pub fn detect(text: &str) -> Option<LogFormat> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next()?;
    let dcgm_sample = |l: &str| l.starts_with("DCGM_");
    if first.starts_with("# HELP ") || first.starts_with("# TYPE ") || dcgm_sample(first) {
        Some(LogFormat::DcgmExporter)
    } else if first.starts_with('#') {
        lines.find(|l| !l.starts_with('#')).filter(|l| dcgm_sample(l)).map(|_| LogFormat::DcgmExporter)
    } else if first.contains(',') {
        Some(LogFormat::NvidiaSmiCsv)
    } else {
        // nvidia-smi's messages may come before its header.
        lines
            .find(|l| l.contains(','))
            .filter(|l| l.to_ascii_lowercase().contains("memory.total"))
            .map(|_| LogFormat::NvidiaSmiCsv)
    }
}

/// Imports a log file.
pub fn import_file(path: &Path) -> Result<Imported, CalibrateError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CalibrateError::Read { path: path.display().to_string(), message: e.to_string() })?;
    import_bytes(&bytes, &path.display().to_string())
}

/// Imports a log held in memory; `name` names it in messages and in the profiles'
/// `origin`. Never panics, whatever the bytes.
pub fn import_bytes(bytes: &[u8], name: &str) -> Result<Imported, CalibrateError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        CalibrateError::invalid(name, line, "expected UTF-8 text (an nvidia-smi CSV log or a dcgm-exporter scrape)")
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let format = detect(text).ok_or_else(|| {
        CalibrateError::invalid(
            name,
            0,
            "expected an `nvidia-smi --query-gpu=… --format=csv` log with its header line, or a dcgm-exporter \
             scrape (Prometheus text with DCGM_FI_DEV_* metrics)",
        )
    })?;
    let mut notes = Vec::new();
    let readings = match format {
        LogFormat::NvidiaSmiCsv => smi::parse(text, name, &mut notes)?,
        LogFormat::DcgmExporter => dcgm::parse(text, name, &mut notes)?,
    };
    if readings.is_empty() {
        return Err(CalibrateError::invalid(name, 0, format!("no GPU readings in this {}", format.name())));
    }
    let origin = match format {
        LogFormat::NvidiaSmiCsv => format!("nvidia-smi log {name}"),
        LogFormat::DcgmExporter => format!("dcgm-exporter scrape {name}"),
    };
    let (hardware, job) = build(&readings, &origin, name, &mut notes)?;
    Ok(Imported { format, hardware, job, readings: readings.len(), notes })
}

/// The most frequent value (ties: the largest).
fn mode<T: Ord + Copy>(values: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: BTreeMap<T, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0))).map(|(v, _)| v)
}

/// The readings of each GPU (by its `gpu` key), in log order.
fn by_gpu(readings: &[Reading]) -> BTreeMap<&str, Vec<&Reading>> {
    let mut m: BTreeMap<&str, Vec<&Reading>> = BTreeMap::new();
    for r in readings {
        m.entry(r.gpu.as_str()).or_default().push(r);
    }
    m
}

/// Board power of each reading, by its line: the change of the energy counter since the
/// GPU's previous reading where both have a timestamp and a counter (and the counter did
/// not go back), else the power the log gives.
fn powers(readings: &[Reading]) -> (BTreeMap<usize, f64>, usize) {
    let mut out = BTreeMap::new();
    let mut from_energy = 0;
    for (_, rs) in by_gpu(readings) {
        let mut prev: Option<(f64, f64)> = None;
        for r in rs {
            let now = r.t_s.zip(r.energy_mj);
            let w = match (prev, now) {
                (Some((t0, e0)), Some((t1, e1))) if t1 > t0 && e1 >= e0 => {
                    from_energy += 1;
                    Some((e1 - e0) / (t1 - t0) / 1000.0)
                }
                _ => r.power_w,
            };
            if now.is_some() {
                prev = now;
            }
            if let Some(w) = w {
                out.insert(r.line, w);
            }
        }
    }
    (out, from_energy)
}

/// The `(util %, watts)` points of one model's readings for the power fit: per GPU,
/// averaged over windows of at least a second ([`windows`]) where the readings have
/// timestamps, as they are otherwise.
fn fit_points(rs: &[&Reading], power: &BTreeMap<usize, f64>) -> (Vec<(f64, f64)>, bool) {
    // Per GPU: (seconds if known, util %, watts).
    type Point = (Option<f64>, f64, f64);
    let mut per_gpu: BTreeMap<&str, Vec<Point>> = BTreeMap::new();
    for r in rs {
        if let (Some(u), Some(&w)) = (r.util_pct, power.get(&r.line)) {
            per_gpu.entry(r.gpu.as_str()).or_default().push((r.t_s, u, w));
        }
    }
    let mut pts = Vec::new();
    let mut untimed = false;
    for (_, mut v) in per_gpu {
        if v.iter().all(|p| p.0.is_some()) {
            v.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
            let timed: Vec<(f64, f64, f64)> = v.iter().map(|p| (p.0.unwrap_or(0.0), p.1, p.2)).collect();
            pts.extend(windows(&timed, 1.0));
        } else {
            untimed = true;
            pts.extend(v.iter().map(|p| (p.1, p.2)));
        }
    }
    (pts, untimed)
}

/// Whether the job was on each reading's GPU: the GPU busy (utilization above 0) or
/// holding more memory than the least it held in the log. A GPU never busy is idle
/// throughout and its readings are not the job's; if no GPU ever was, every reading is.
fn presence(readings: &[Reading], notes: &mut Vec<String>) -> Vec<bool> {
    let mut floor: BTreeMap<&str, u64> = BTreeMap::new();
    for r in readings {
        if let Some(m) = r.memory_used_mib {
            let f = floor.entry(r.gpu.as_str()).or_insert(m);
            *f = (*f).min(m);
        }
    }
    let busy: Vec<bool> = readings
        .iter()
        .map(|r| {
            r.util_pct.is_some_and(|u| u > 0.0)
                || r.memory_used_mib.zip(floor.get(r.gpu.as_str())).is_some_and(|(m, f)| m > *f)
        })
        .collect();
    if busy.iter().any(|&b| b) {
        let idle = readings.len() - busy.iter().filter(|&&b| b).count();
        if idle > 0 {
            notes.push(format!(
                "{idle} readings of idle GPUs or idle moments (0 % utilization, no memory above the GPU's least) left \
                 out of the job profile"
            ));
        }
        busy
    } else {
        notes.push("no GPU was ever busy in the log: the job profile covers every reading".to_string());
        vec![true; readings.len()]
    }
}

/// The profiles of a log's readings.
///
/// Per model: `memory_mib` the most frequent memory total; `power_limit_w` the most
/// frequent power limit; clocks the largest maximum; idle and max power (and a curve) by
/// [`fit_power`] over the readings with both utilization and power (power from the
/// change of the energy counter where the log has one), averaged per GPU over windows of
/// at least 1 s when the log has timestamps, the maximum capped at the power limit, or
/// at the shipped profile's TDP when the log has no limit; a [`DeviceRecord`] per GPU.
/// The job profile covers the readings where the job was on the GPU (see [`presence`]):
/// memory used, utilization, power (mean and peak), memory quantiles, the span of the
/// timestamps (0 without them).
pub fn build(
    readings: &[Reading],
    origin: &str,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<(HardwareProfile, MeasuredJob), CalibrateError> {
    let mut by_model: BTreeMap<&str, Vec<&Reading>> = BTreeMap::new();
    for r in readings {
        by_model.entry(r.model.as_str()).or_default().push(r);
    }
    let (power, from_energy) = powers(readings);
    let mut gpu = Vec::new();
    for (model, rs) in &by_model {
        let memory_mib = mode(rs.iter().filter_map(|r| r.memory_total_mib)).ok_or_else(|| {
            CalibrateError::invalid(
                name,
                rs[0].line,
                format!(
                    "no memory total for model '{model}': expected a memory.total value (nvidia-smi) or \
                     DCGM_FI_DEV_FB_USED with DCGM_FI_DEV_FB_FREE, or DCGM_FI_DEV_FB_TOTAL (dcgm-exporter)"
                ),
            )
        })?;
        let limit = mode(rs.iter().filter_map(|r| r.power_limit_w).map(|w| (w * 100.0).round() as i64))
            .map(|c| c as f64 / 100.0);
        let shipped = crate::shipped().find(model);
        let cap = match (limit, shipped.and_then(|s| s.max_power_w.map(|w| (s, w)))) {
            (Some(w), _) => Some(PowerCap { watts: w, what: "power limit in the log".to_string() }),
            (None, Some((s, w))) => {
                Some(PowerCap { watts: w, what: format!("shipped TDP of {} (the log has no power limit)", s.model) })
            }
            (None, None) => None,
        };
        let (pts, untimed) = fit_points(rs, &power);
        if untimed && !pts.is_empty() {
            notes.push(format!(
                "{model}: readings without timestamps enter the power fit as they are: NVML's utilization covers the \
                 last 1/6 to 1 s and power may be instantaneous, so readings less than 1 s apart pair different \
                 periods"
            ));
        }
        let fit = fit_power(&pts, cap.as_ref());
        if fit.idle_w.is_none() {
            notes.push(format!(
                "{model}: no idle power (no reading at 0 % utilization and no fit): set idle_power_w by hand"
            ));
        }
        let workload = format!("; workload: {origin}");
        let mut sources = BTreeMap::new();
        sources.insert("memory_mib".to_string(), "most frequent memory total in the log".to_string());
        if !fit.idle_how.is_empty() {
            sources.insert("idle_power_w".to_string(), format!("{}{workload}", fit.idle_how));
        }
        if !fit.max_how.is_empty() {
            sources.insert("max_power_w".to_string(), format!("{}{workload}", fit.max_how));
        }
        if from_energy > 0 {
            sources.insert(
                "power".to_string(),
                format!("{from_energy} readings' power from the change of the energy counter"),
            );
        }
        if limit.is_some() {
            sources.insert("power_limit_w".to_string(), "most frequent power limit in the log".to_string());
        }
        if !fit.curve.is_empty() {
            sources.insert(
                "power_curve".to_string(),
                format!("mean power of each 10 % utilization bin holding at least 3 readings{workload}"),
            );
        }
        let mut devices: BTreeMap<&str, DeviceRecord> = BTreeMap::new();
        for r in rs {
            devices.entry(r.gpu.as_str()).or_insert_with(|| DeviceRecord {
                index: r.index.unwrap_or(0),
                uuid: r.uuid.clone().unwrap_or_default(),
                pci_bus_id: r.pci_bus_id.clone(),
                nvlink_peers: Vec::new(),
            });
        }
        let mut devices: Vec<DeviceRecord> = devices.into_values().collect();
        devices.sort_by(|a, b| (a.index, &a.uuid).cmp(&(b.index, &b.uuid)));
        let aliases = match shipped {
            Some(s) if s.model != *model => vec![s.model.clone()],
            _ => Vec::new(),
        };
        gpu.push(GpuProfile {
            model: model.to_string(),
            aliases,
            memory_mib,
            idle_power_w: fit.idle_w,
            max_power_w: fit.max_w,
            power_curve: fit.curve,
            power_limit_w: limit,
            max_sm_clock_mhz: rs.iter().filter_map(|r| r.max_sm_clock_mhz).max(),
            max_mem_clock_mhz: rs.iter().filter_map(|r| r.max_mem_clock_mhz).max(),
            sources,
            devices,
            ..Default::default()
        });
    }
    let job = job_of(readings, origin, &power, notes);
    Ok((HardwareProfile { origin: origin.to_string(), gpu }, job))
}

/// The log as one job: the readings where the job was on its GPU ([`presence`]).
fn job_of(readings: &[Reading], origin: &str, power: &BTreeMap<usize, f64>, notes: &mut Vec<String>) -> MeasuredJob {
    let times: Vec<f64> = readings.iter().filter_map(|r| r.t_s).collect();
    let duration = match (times.iter().copied().reduce(f64::min), times.iter().copied().reduce(f64::max)) {
        (Some(a), Some(b)) => b - a,
        _ => {
            notes.push("no timestamps: the job profile's duration_s is 0".to_string());
            0.0
        }
    };
    let present = presence(readings, notes);
    let job: Vec<&Reading> = readings.iter().zip(&present).filter(|(_, p)| **p).map(|(r, _)| r).collect();
    let gpus: BTreeSet<(&str, &str)> = job.iter().map(|r| (r.model.as_str(), r.gpu.as_str())).collect();
    let values = JobReadings {
        memory_mib: job.iter().filter_map(|r| r.memory_used_mib).collect(),
        util_pct: job.iter().filter_map(|r| r.util_pct).collect(),
        mem_util_pct: job.iter().filter_map(|r| r.mem_util_pct).collect(),
        power_w: job.iter().filter_map(|r| power.get(&r.line).copied()).collect(),
    };
    let mut models: Vec<&str> = gpus.iter().map(|g| g.0).collect();
    models.dedup();
    let mut j = MeasuredJob::from_readings(origin, models.join(", "), gpus.len() as u32, duration, &values);
    let over = "over the readings where the GPU was busy (utilization above 0 or memory above the GPU's least)";
    for k in ["peak_memory_mib", "mean_memory_mib", "memory_mib_quantiles"] {
        j.sources.insert(k.to_string(), format!("device memory used, every process on the GPU, {over}"));
    }
    let or_missing = |v: Option<f64>, what: &str, missing: &str| match v {
        Some(_) => format!("{what}, {over}"),
        None => format!("not measured: {missing}"),
    };
    let util = or_missing(j.mean_util_pct, "device-wide GPU utilization in the log", "no utilization in the log");
    j.sources.insert("mean_util_pct".to_string(), util.clone());
    j.sources.insert("peak_util_pct".to_string(), util);
    let mem_util = or_missing(
        j.mean_mem_util_pct,
        "device-wide memory utilization in the log",
        "no memory utilization in the log",
    );
    j.sources.insert("mean_mem_util_pct".to_string(), mem_util);
    let p = or_missing(j.mean_power_w, "board power in the log", "no power in the log (no power sensor)");
    j.sources.insert("mean_power_w".to_string(), p.clone());
    j.sources.insert("peak_power_w".to_string(), p);
    j
}
