//! Hardware and job profiles: what a GPU model is (memory, power) and what a job does on
//! it (peak memory, utilization, power), as measured through NVML, read from
//! `nvidia-smi`/DCGM logs, or taken from public specifications.
//!
//! The types live here so that every crate can read them: `hw-calibrate` writes them
//! (`sim calibrate probe|sample|import`), cluster configs reference hardware profiles by
//! GPU model, and workload generators take job profiles. Files are TOML; this crate only
//! defines the serde shape.

use crate::cluster::GpuSpec;
use crate::power::{PowerCurve, PowerCurveError};
use serde::{Deserialize, Serialize};

/// A hardware profile file: one entry per GPU model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareProfile {
    /// How the profile was made: `nvml probe on HOST`, `nvidia-smi log FILE`,
    /// `public specifications`.
    #[serde(default)]
    pub origin: String,
    /// The GPU models.
    #[serde(default)]
    pub gpu: Vec<GpuProfile>,
}

impl HardwareProfile {
    /// The entry for a model name or one of its aliases (exact match first, then
    /// ASCII-case-insensitive).
    pub fn find(&self, model: &str) -> Option<&GpuProfile> {
        self.gpu
            .iter()
            .find(|g| g.names().any(|n| n == model))
            .or_else(|| self.gpu.iter().find(|g| g.names().any(|n| n.eq_ignore_ascii_case(model))))
    }
}

/// One GPU model's calibrated facts. Only `model`, `memory_mib` and the power figures
/// enter the simulation; the rest documents the hardware.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuProfile {
    /// Model name as NVML reports it (`NVIDIA H100 80GB HBM3`), or the short name a
    /// trace uses.
    pub model: String,
    /// Other names the same hardware goes by in traces and cluster configs (`V100M16`,
    /// `Tesla V100-SXM2-16GB`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Device memory in MiB (NVML `memory_info().total`).
    pub memory_mib: u64,
    /// Board power at idle, watts.
    #[serde(default)]
    pub idle_power_w: Option<f64>,
    /// Board power at full load, watts (without measurements: the power limit / TDP).
    #[serde(default)]
    pub max_power_w: Option<f64>,
    /// Measured `[utilization %, watts]` points; when given they replace the straight
    /// line from idle to max.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub power_curve: Vec<[f64; 2]>,
    /// Default power limit, watts (NVML `power_management_limit_default`).
    #[serde(default)]
    pub power_limit_w: Option<f64>,
    /// CUDA compute capability, `major.minor`.
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// Maximum SM clock, MHz.
    #[serde(default)]
    pub max_sm_clock_mhz: Option<u32>,
    /// Maximum memory clock, MHz.
    #[serde(default)]
    pub max_mem_clock_mhz: Option<u32>,
    /// Memory bandwidth, GB/s (specification).
    #[serde(default)]
    pub memory_bandwidth_gbps: Option<f64>,
    /// Dense FP16/BF16 tensor throughput, TFLOPS (specification; a speed factor).
    #[serde(default)]
    pub fp16_tflops: Option<f64>,
    /// NVLink links per GPU.
    #[serde(default)]
    pub nvlink_links: Option<u32>,
    /// PCIe generation (the maximum link).
    #[serde(default)]
    pub pcie_gen: Option<u32>,
    /// PCIe lane width.
    #[serde(default)]
    pub pcie_width: Option<u32>,
    /// Whether MIG can be enabled, and whether it was.
    #[serde(default)]
    pub mig: Option<String>,
    /// Where each value comes from (`field = "source"`), for shipped profiles.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sources: std::collections::BTreeMap<String, String>,
    /// The measured devices behind this entry (probe): index, UUID and what differs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceRecord>,
}

/// One physical GPU seen by a probe.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceRecord {
    /// NVML index.
    pub index: u32,
    /// UUID.
    pub uuid: String,
    /// PCI bus id.
    #[serde(default)]
    pub pci_bus_id: Option<String>,
    /// Active NVLink links and the bus ids of their peers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlink_peers: Vec<String>,
}

impl GpuProfile {
    /// The model name and the aliases.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.model.as_str()).chain(self.aliases.iter().map(String::as_str))
    }

    /// The power curve: the measured points if any, else linear from idle to max;
    /// `None` when neither is known.
    pub fn power(&self) -> Result<Option<PowerCurve>, PowerCurveError> {
        let mw = |w: f64| (w.max(0.0) * 1000.0).round() as u64;
        if !self.power_curve.is_empty() {
            let pts = self.power_curve.iter().map(|p| ((p[0].clamp(0.0, 100.0) * 10.0).round() as u16, mw(p[1])));
            return PowerCurve::from_points(pts.collect()).map(Some);
        }
        match (self.idle_power_w, self.max_power_w.or(self.power_limit_w)) {
            (Some(i), Some(m)) => Ok(Some(PowerCurve::linear(mw(i), mw(m)))),
            _ => Ok(None),
        }
    }

    /// The GPU the cluster model gets: model name, memory and power.
    ///
    /// ```
    /// let p = sim_core::hardware::GpuProfile {
    ///     model: "H100".into(), memory_mib: 81_559, idle_power_w: Some(70.0), max_power_w: Some(700.0),
    ///     ..Default::default()
    /// };
    /// let g = p.gpu_spec().unwrap();
    /// assert_eq!(g.memory_mib, 81_559);
    /// assert_eq!(g.power.unwrap().at_permille(500), 385_000);
    /// ```
    pub fn gpu_spec(&self) -> Result<GpuSpec, PowerCurveError> {
        Ok(GpuSpec { model: self.model.clone(), memory_mib: self.memory_mib, power: self.power()? })
    }
}

/// What one job did on its GPUs (`sim calibrate sample`, or a monitoring log): the
/// figures a job class takes for out-of-memory modelling and energy.
///
/// A figure that was not measured (utilization on a MIG device, power on a board without
/// a sensor) is `None` and left out of the file: unknown, never 0. Readers fall back to
/// what they use for a job that does not say (the workload generator leaves the class's
/// utilization unset, so the run's `--gpu-util` applies). `sources` says where each figure
/// came from, or why it is missing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobProfile {
    /// The command or log it was measured from.
    #[serde(default)]
    pub origin: String,
    /// GPU model it ran on.
    #[serde(default)]
    pub gpu_model: String,
    /// GPUs it used.
    #[serde(default)]
    pub gpus: u32,
    /// Wall time, seconds.
    pub duration_s: f64,
    /// Samples taken.
    #[serde(default)]
    pub samples: u64,
    /// Peak GPU memory per GPU, MiB.
    pub peak_memory_mib: u64,
    /// Mean GPU memory per GPU, MiB.
    pub mean_memory_mib: u64,
    /// Quantiles 0, 10, …, 100 % (11 values) of the sampled per-GPU memory, MiB (the
    /// value at rank `round(q × (n − 1))` of the sorted samples): the distribution a job
    /// class draws peaks from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_mib_quantiles: Vec<u64>,
    /// Mean GPU utilization, percent; `None` when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_util_pct: Option<f64>,
    /// Peak GPU utilization, percent; `None` when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_util_pct: Option<f64>,
    /// Mean memory-bandwidth utilization, percent; `None` when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_mem_util_pct: Option<f64>,
    /// Mean board power per GPU, watts; `None` when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_power_w: Option<f64>,
    /// Peak board power per GPU, watts; `None` when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_power_w: Option<f64>,
    /// Where each figure comes from, or why it is missing (`field = "source"`:
    /// `"NVML process list"`, `"device-wide (all tenants)"`, `"shipped profile H100"`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sources: std::collections::BTreeMap<String, String>,
}
