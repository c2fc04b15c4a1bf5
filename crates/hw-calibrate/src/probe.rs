//! `sim calibrate probe`: what the GPUs of this machine are.
//!
//! A [`GpuProbe`] lists the devices ([`ProbedDevice`]); [`profile_from_probe`] turns them
//! into a hardware profile, one entry per model. The NVML probe is
//! [`crate::nvml::NvmlProbe`]; [`RecordedProbe`] reads devices recorded in a TOML or
//! JSON file (tests, or a probe taken on another machine).

use crate::CalibrateError;
use serde::{Deserialize, Serialize};
use sim_core::hardware::{DeviceRecord, GpuProfile, HardwareProfile};
use std::collections::BTreeMap;
use std::path::Path;

/// One GPU as a probe sees it. Everything NVML may not support is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbedDevice {
    /// NVML index.
    pub index: u32,
    /// Model name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// UUID (`GPU-…`).
    pub uuid: String,
    /// PCI bus id.
    #[serde(default)]
    pub pci_bus_id: Option<String>,
    /// Device memory, MiB (`memory_info().total`).
    pub memory_total_mib: u64,
    /// Memory in use at probe time, MiB.
    #[serde(default)]
    pub memory_used_mib: Option<u64>,
    /// CUDA compute capability, `major.minor`.
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// Maximum SM clock, MHz.
    #[serde(default)]
    pub max_sm_clock_mhz: Option<u32>,
    /// Maximum memory clock, MHz.
    #[serde(default)]
    pub max_mem_clock_mhz: Option<u32>,
    /// Default power limit, watts.
    #[serde(default)]
    pub power_limit_w: Option<f64>,
    /// Enforced power limit, watts.
    #[serde(default)]
    pub enforced_power_limit_w: Option<f64>,
    /// Board power at probe time, watts.
    #[serde(default)]
    pub power_usage_w: Option<f64>,
    /// GPU utilization at probe time, percent.
    #[serde(default)]
    pub util_pct: Option<f64>,
    /// Compute processes running at probe time.
    #[serde(default)]
    pub compute_processes: Option<u32>,
    /// PCI bus ids of the peers of the active NVLink links (one entry per active link).
    #[serde(default)]
    pub nvlink_peers: Vec<String>,
    /// MIG mode: `enabled`, `disabled` or `not supported`.
    #[serde(default)]
    pub mig: Option<String>,
    /// Maximum PCIe generation.
    #[serde(default)]
    pub pcie_gen: Option<u32>,
    /// Maximum PCIe lane width.
    #[serde(default)]
    pub pcie_width: Option<u32>,
    /// The MIG devices of a MIG-enabled GPU.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mig_devices: Vec<ProbedMig>,
}

/// One MIG device of a MIG-enabled GPU as a probe sees it (NVML answers utilization
/// `NotSupported` for MIG, so there is none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbedMig {
    /// MIG device index on its GPU.
    pub mig: u32,
    /// Name (`NVIDIA H100 80GB HBM3 MIG 3g.40gb`).
    pub name: String,
    /// UUID (`MIG-…`).
    #[serde(default)]
    pub uuid: String,
    /// Its memory, MiB.
    pub memory_total_mib: u64,
    /// Its memory in use at probe time, MiB.
    #[serde(default)]
    pub memory_used_mib: Option<u64>,
    /// Compute processes on it at probe time.
    #[serde(default)]
    pub compute_processes: Option<u32>,
}

impl ProbedDevice {
    /// Whether the device was idle when probed: 0 % utilization and no compute process
    /// (when that is known); on a MIG-enabled GPU, whose utilization NVML does not give,
    /// no compute process on any of its MIG devices.
    pub fn idle(&self) -> bool {
        let no_process = self.compute_processes.is_none_or(|n| n == 0);
        match self.util_pct {
            Some(u) => u == 0.0 && no_process,
            None => {
                self.mig.as_deref() == Some("enabled")
                    && self.compute_processes == Some(0)
                    && self.mig_devices.iter().all(|m| m.compute_processes == Some(0))
            }
        }
    }
}

/// Something that lists the GPUs of a machine.
pub trait GpuProbe {
    /// The machine's name, for the profile's `origin`.
    fn host(&self) -> String;
    /// What answered, when the profile's `origin` should say (`NVML (driver …)`,
    /// `recorded NVML answers FILE`).
    fn source(&self) -> Option<String> {
        None
    }
    /// Every GPU that could be read, by index.
    fn devices(&mut self) -> Result<Vec<ProbedDevice>, CalibrateError>;
    /// What was skipped or could not be measured, one line each (after
    /// [`GpuProbe::devices`]).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Devices recorded in a file: `host = "…"` and one `[[device]]` table (TOML) or a
/// `device` array (JSON) of [`ProbedDevice`]s.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedProbe {
    /// Where it was recorded.
    #[serde(default)]
    pub host: String,
    /// The devices.
    #[serde(default)]
    pub device: Vec<ProbedDevice>,
}

impl RecordedProbe {
    /// Reads a recording: JSON when the name ends in `.json`, TOML otherwise.
    pub fn load(path: &Path) -> Result<Self, CalibrateError> {
        crate::read_structured(path)
    }
}

impl GpuProbe for RecordedProbe {
    fn host(&self) -> String {
        self.host.clone()
    }

    fn devices(&mut self) -> Result<Vec<ProbedDevice>, CalibrateError> {
        Ok(self.device.clone())
    }
}

/// A probe's profile and what it could not measure.
#[derive(Clone, Debug, PartialEq)]
pub struct Probed {
    /// The profile.
    pub profile: HardwareProfile,
    /// GPUs skipped, values not measured, MIG devices: one line each.
    pub notes: Vec<String>,
    /// The devices read.
    pub devices: Vec<ProbedDevice>,
}

/// Probes and builds the profile.
pub fn probe(p: &mut dyn GpuProbe) -> Result<Probed, CalibrateError> {
    let devices = p.devices()?;
    if devices.is_empty() {
        return Err(CalibrateError::NoGpu);
    }
    let mut profile = profile_from_probe(&p.host(), &devices);
    if let Some(source) = p.source() {
        profile.origin = format!("{} ({source})", profile.origin);
    }
    Ok(Probed { profile, notes: p.notes(), devices })
}

/// The MIG devices of `devs`, for the profile's `mig`.
fn mig_summary(devs: &[&ProbedDevice]) -> Option<String> {
    let mut modes: Vec<&str> = devs.iter().filter_map(|d| d.mig.as_deref()).collect();
    modes.sort_unstable();
    modes.dedup();
    if modes.is_empty() {
        return None;
    }
    let mut s = modes.join(", ");
    let parts: Vec<String> = devs
        .iter()
        .flat_map(|d| {
            d.mig_devices.iter().map(move |m| {
                let procs =
                    m.compute_processes.map_or_else(|| "processes unknown".to_string(), |n| format!("{n} process(es)"));
                format!("GPU {} MIG {} '{}' {} MiB, {procs}", d.index, m.mig, m.name, m.memory_total_mib)
            })
        })
        .collect();
    if !parts.is_empty() {
        s.push_str(&format!(" ({}; utilization not available on MIG)", parts.join("; ")));
    }
    Some(s)
}

/// The hardware profile of probed devices: one entry per model name (sorted by name),
/// with a [`DeviceRecord`] per device.
///
/// Per model: `memory_mib` is the smallest device total (what every device of the model
/// can give); `idle_power_w` the lowest board power among the idle devices (0 %
/// utilization, no compute process), none when every device was busy;
/// `max_power_w` and `power_limit_w` the default power limit (the largest, should
/// devices differ); clocks, NVLink links and PCIe the largest seen; `mig` the modes seen.
/// A model that is also a shipped profile gets the shipped model name as an alias.
pub fn profile_from_probe(host: &str, devices: &[ProbedDevice]) -> HardwareProfile {
    let mut by_model: BTreeMap<&str, Vec<&ProbedDevice>> = BTreeMap::new();
    for d in devices {
        by_model.entry(d.name.as_str()).or_default().push(d);
    }
    let max_u32 = |v: &[&ProbedDevice], f: fn(&ProbedDevice) -> Option<u32>| v.iter().filter_map(|d| f(d)).max();
    let max_f64 = |v: &[&ProbedDevice], f: fn(&ProbedDevice) -> Option<f64>| {
        v.iter().filter_map(|d| f(d)).fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    };
    let mut gpu = Vec::new();
    for (model, mut devs) in by_model {
        devs.sort_by_key(|d| d.index);
        let idle = devs
            .iter()
            .filter(|d| d.idle())
            .filter_map(|d| d.power_usage_w)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))));
        let limit = max_f64(&devs, |d| d.power_limit_w.or(d.enforced_power_limit_w));
        let mut sources = BTreeMap::new();
        sources.insert("memory_mib".to_string(), "NVML memory_info().total (smallest device)".to_string());
        let no_power = devs.iter().all(|d| d.power_usage_w.is_none());
        let idle_source = match (idle, no_power) {
            (Some(_), _) if devs.iter().any(|d| d.idle() && d.util_pct.is_none()) => {
                "NVML power_usage of an idle device (MIG enabled, so no utilization: no compute process on any \
                 MIG device) at probe time"
            }
            (Some(_), _) => "NVML power_usage of an idle device (0 % utilization, no compute process) at probe time",
            (None, true) => {
                "not measured: NVML power_usage NotSupported on every device (no power sensor); the shipped \
                 profile of the model stands in where there is one"
            }
            (None, false) => "not measured: no device was idle at probe time",
        };
        sources.insert("idle_power_w".to_string(), idle_source.to_string());
        if limit.is_some() {
            sources.insert("max_power_w".to_string(), "NVML power_management_limit_default".to_string());
            sources.insert("power_limit_w".to_string(), "NVML power_management_limit_default".to_string());
        }
        let mig = mig_summary(&devs);
        if mig.as_deref().is_some_and(|m| m.starts_with("enabled") || m.contains(", enabled")) {
            sources.insert(
                "mig".to_string(),
                "NVML mig_mode; per MIG device memory_info and running_compute_processes (utilization is \
                 NotSupported on MIG)"
                    .to_string(),
            );
        }
        let aliases = match crate::shipped().find(model) {
            Some(s) if s.model != model => vec![s.model.clone()],
            _ => Vec::new(),
        };
        gpu.push(GpuProfile {
            model: model.to_string(),
            aliases,
            memory_mib: devs.iter().map(|d| d.memory_total_mib).min().unwrap_or(0),
            idle_power_w: idle.map(crate::fit::round2),
            max_power_w: limit.map(crate::fit::round2),
            power_curve: Vec::new(),
            power_limit_w: limit.map(crate::fit::round2),
            compute_capability: devs.iter().find_map(|d| d.compute_capability.clone()),
            max_sm_clock_mhz: max_u32(&devs, |d| d.max_sm_clock_mhz),
            max_mem_clock_mhz: max_u32(&devs, |d| d.max_mem_clock_mhz),
            memory_bandwidth_gbps: None,
            fp16_tflops: None,
            nvlink_links: devs.iter().map(|d| d.nvlink_peers.len() as u32).max(),
            pcie_gen: max_u32(&devs, |d| d.pcie_gen),
            pcie_width: max_u32(&devs, |d| d.pcie_width),
            mig,
            sources,
            devices: devs
                .iter()
                .map(|d| DeviceRecord {
                    index: d.index,
                    uuid: d.uuid.clone(),
                    pci_bus_id: d.pci_bus_id.clone(),
                    nvlink_peers: d.nvlink_peers.clone(),
                })
                .collect(),
        });
    }
    let origin = if host.is_empty() { "nvml probe".to_string() } else { format!("nvml probe on {host}") };
    HardwareProfile { origin, gpu }
}
