//! [`NvmlBackend`] answered from a file: NVML's answers recorded on a machine, or
//! written by hand to stand for one (the test fixtures of a MIG GPU, a board without a
//! power sensor, a GPU that answers `NoPermission`, a container that cannot see its
//! processes). `sim` reads such a file instead of the driver when the environment
//! variable [`RECORDED_NVML_ENV`] names it, which is how `scripts/device-check.sh
//! --self-test` runs the whole device check without a GPU; the profiles then say
//! `recorded NVML answers FILE` in their origin, never that they were measured.
//!
//! ```toml
//! host = "node-1"
//! [[device]]                      # one per GPU, in NVML index order
//! index = 0
//! name = "NVIDIA H100 80GB HBM3"
//! uuid = "GPU-…"
//! memory_total_mib = 81559
//! power_limit_w = 700.0           # absent: the query answers NotSupported
//! mig = true                      # nvmlDeviceGetMigMode; absent: NotSupported
//! fail = "NoPermission"           # every query of this GPU fails so
//! [[device.instance]]             # MIG devices
//! mig = 0
//! name = "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
//! uuid = "MIG-…"
//! memory_total_mib = 40192
//! [[reading]]                     # one per reading, in order; the last one repeats
//! gpu = [{ index = 0, memory_used_mib = 1024, util_pct = 50, power_w = 300.0,
//!          energy_mj = 123456, processes = [{ pid = 7, used_mib = 1000, workload = true }] }]
//! ```
//!
//! In a reading, an absent value is a query that answers `NotSupported`; a process with
//! `workload = true` takes the process id of the sampled command (so the sampler finds
//! it), others keep the recorded id; a `fail` value makes every query of that device
//! fail so at that reading. Failure names are NVML's: `NotSupported`, `NoPermission`,
//! `GpuLost`, `NotFound`, `LibraryNotFound`, `DriverNotLoaded`.

use super::backend::{
    ClockKind, DeviceId, GpuProcess, MemoryInfo, NvmlBackend, NvmlFailure, ProcessUtilization, Utilization,
};
use crate::CalibrateError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The environment variable that makes `sim calibrate probe|sample` read a
/// [`RecordedNvml`] file instead of the driver.
pub const RECORDED_NVML_ENV: &str = "SCHEDLAB_RECORDED_NVML";

const MIB: u64 = 1024 * 1024;

/// A recorded GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedGpu {
    /// NVML index.
    pub index: u32,
    /// `nvmlDeviceGetName`.
    #[serde(default)]
    pub name: String,
    /// `nvmlDeviceGetUUID`.
    #[serde(default)]
    pub uuid: String,
    /// PCI bus id.
    #[serde(default)]
    pub pci_bus_id: Option<String>,
    /// Total memory, MiB.
    #[serde(default)]
    pub memory_total_mib: u64,
    /// Compute capability.
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
    /// Maximum PCIe generation.
    #[serde(default)]
    pub pcie_gen: Option<u32>,
    /// Maximum PCIe width.
    #[serde(default)]
    pub pcie_width: Option<u32>,
    /// Peers of the active NVLink links.
    #[serde(default)]
    pub nvlink_peers: Vec<String>,
    /// Current MIG mode; absent: `NotSupported`.
    #[serde(default)]
    pub mig: Option<bool>,
    /// `nvmlDeviceGetMaxMigDeviceCount`; absent: the number of instances (or
    /// `NotSupported` without MIG).
    #[serde(default)]
    pub max_mig_devices: Option<u32>,
    /// Accounting mode; absent: `NotSupported`.
    #[serde(default)]
    pub accounting: Option<bool>,
    /// Every query of this GPU fails so.
    #[serde(default)]
    pub fail: Option<String>,
    /// Its MIG devices.
    #[serde(default)]
    pub instance: Vec<RecordedMig>,
}

/// A recorded MIG device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedMig {
    /// MIG device index on its GPU.
    pub mig: u32,
    /// Name (`… MIG 1g.10gb`).
    #[serde(default)]
    pub name: String,
    /// UUID (`MIG-…`).
    #[serde(default)]
    pub uuid: String,
    /// Memory of the instance, MiB.
    #[serde(default)]
    pub memory_total_mib: u64,
}

/// A recorded process.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedProcess {
    /// Host process id.
    #[serde(default)]
    pub pid: u32,
    /// Its memory, MiB; absent: NVML's "not available".
    #[serde(default)]
    pub used_mib: Option<u64>,
    /// Stands for the sampled command: takes its process id.
    #[serde(default)]
    pub workload: bool,
    /// Per-process SM utilization, percent (`nvmlDeviceGetProcessUtilization`).
    #[serde(default)]
    pub sm_pct: Option<u32>,
    /// Accounting's `maxMemoryUsage`, MiB.
    #[serde(default)]
    pub accounting_max_mib: Option<u64>,
}

/// One device at one reading.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedValues {
    /// NVML index.
    pub index: u32,
    /// MIG device index, for a MIG device.
    #[serde(default)]
    pub mig: Option<u32>,
    /// Memory in use, MiB.
    #[serde(default)]
    pub memory_used_mib: Option<u64>,
    /// GPU utilization, percent.
    #[serde(default)]
    pub util_pct: Option<u32>,
    /// Memory utilization, percent.
    #[serde(default)]
    pub mem_util_pct: Option<u32>,
    /// Board power, watts.
    #[serde(default)]
    pub power_w: Option<f64>,
    /// Energy counter, millijoules.
    #[serde(default)]
    pub energy_mj: Option<u64>,
    /// Compute processes; absent: `NotSupported`.
    #[serde(default)]
    pub processes: Option<Vec<RecordedProcess>>,
    /// MPS clients; absent: none.
    #[serde(default)]
    pub mps: Vec<RecordedProcess>,
    /// Every query of this device fails so at this reading.
    #[serde(default)]
    pub fail: Option<String>,
}

/// Every device at one reading.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedReading {
    /// The devices.
    #[serde(default)]
    pub gpu: Vec<RecordedValues>,
}

/// NVML answers from a file; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedNvml {
    /// The machine.
    #[serde(default)]
    pub host: String,
    /// Fails `nvmlInit` so (`LibraryNotFound`, `DriverNotLoaded`, `NoPermission`).
    #[serde(default)]
    pub init_fail: Option<String>,
    /// The GPUs.
    #[serde(default)]
    pub device: Vec<RecordedGpu>,
    /// The readings.
    #[serde(default)]
    pub reading: Vec<RecordedReading>,
    #[serde(skip)]
    file: String,
    #[serde(skip)]
    current: usize,
    #[serde(skip)]
    next: usize,
    #[serde(skip)]
    workload: Vec<u32>,
}

fn named_failure(name: &str) -> NvmlFailure {
    match name {
        "NotSupported" => NvmlFailure::NotSupported,
        "NoPermission" => NvmlFailure::NoPermission,
        "GpuLost" => NvmlFailure::GpuLost,
        "NotFound" => NvmlFailure::NotFound,
        "LibraryNotFound" | "DriverNotLoaded" => NvmlFailure::NoDriver(format!("recorded {name}")),
        other => NvmlFailure::Other(other.to_string()),
    }
}

fn supported<T>(v: Option<T>) -> Result<T, NvmlFailure> {
    v.ok_or(NvmlFailure::NotSupported)
}

impl RecordedNvml {
    /// Reads a recording (TOML, or JSON by name).
    pub fn load(path: &Path) -> Result<Self, CalibrateError> {
        let mut r: RecordedNvml = crate::read_structured(path)?;
        r.file = path.display().to_string();
        Ok(r)
    }

    /// `nvmlInit` as recorded: the failure it was given, if any.
    pub fn init(self) -> Result<Self, NvmlFailure> {
        match &self.init_fail {
            Some(f) => Err(named_failure(f)),
            None => Ok(self),
        }
    }

    fn gpu(&self, d: DeviceId) -> Result<&RecordedGpu, NvmlFailure> {
        let g = self.device.iter().find(|g| g.index == d.index).ok_or(NvmlFailure::Other("InvalidArg".into()))?;
        match &g.fail {
            Some(f) => Err(named_failure(f)),
            None => Ok(g),
        }
    }

    fn instance(&self, d: DeviceId) -> Result<Option<&RecordedMig>, NvmlFailure> {
        let g = self.gpu(d)?;
        match d.mig {
            None => Ok(None),
            Some(m) => g.instance.iter().find(|i| i.mig == m).map(Some).ok_or(NvmlFailure::NotFound),
        }
    }

    fn values(&self, d: DeviceId) -> Result<&RecordedValues, NvmlFailure> {
        self.instance(d)?;
        let reading = self.reading.get(self.current).ok_or(NvmlFailure::Other("no recorded reading".into()))?;
        let v = reading
            .gpu
            .iter()
            .find(|v| v.index == d.index && v.mig == d.mig)
            .ok_or_else(|| NvmlFailure::Other(format!("no recorded reading of {d}")))?;
        match &v.fail {
            Some(f) => Err(named_failure(f)),
            None => Ok(v),
        }
    }

    fn pid(&self, p: &RecordedProcess) -> u32 {
        match (p.workload, self.workload.first()) {
            (true, Some(&w)) => w,
            _ => p.pid,
        }
    }

    fn processes(&self, ps: &[RecordedProcess]) -> Vec<GpuProcess> {
        ps.iter().map(|p| GpuProcess { pid: self.pid(p), used_bytes: p.used_mib.map(|m| m * MIB) }).collect()
    }

    fn all_processes(&self, d: DeviceId) -> Result<Vec<&RecordedProcess>, NvmlFailure> {
        let v = self.values(d)?;
        Ok(v.processes.iter().flatten().chain(&v.mps).collect())
    }
}

impl NvmlBackend for RecordedNvml {
    fn describe(&self) -> String {
        format!("recorded NVML answers {}", self.file)
    }

    fn host(&self) -> String {
        self.host.clone()
    }

    fn device_count(&self) -> Result<u32, NvmlFailure> {
        Ok(self.device.len() as u32)
    }

    fn name(&self, d: DeviceId) -> Result<String, NvmlFailure> {
        Ok(match self.instance(d)? {
            Some(i) => i.name.clone(),
            None => self.gpu(d)?.name.clone(),
        })
    }

    fn uuid(&self, d: DeviceId) -> Result<String, NvmlFailure> {
        Ok(match self.instance(d)? {
            Some(i) => i.uuid.clone(),
            None => self.gpu(d)?.uuid.clone(),
        })
    }

    fn pci_bus_id(&self, d: DeviceId) -> Result<String, NvmlFailure> {
        supported(self.gpu(d)?.pci_bus_id.clone())
    }

    fn memory(&self, d: DeviceId) -> Result<MemoryInfo, NvmlFailure> {
        let total = match self.instance(d)? {
            Some(i) => i.memory_total_mib,
            None => self.gpu(d)?.memory_total_mib,
        };
        let used = supported(self.values(d)?.memory_used_mib)?;
        Ok(MemoryInfo { total: total * MIB, used: used * MIB })
    }

    fn compute_capability(&self, d: DeviceId) -> Result<String, NvmlFailure> {
        supported(self.gpu(d)?.compute_capability.clone())
    }

    fn max_clock_mhz(&self, d: DeviceId, kind: ClockKind) -> Result<u32, NvmlFailure> {
        let g = self.gpu(d)?;
        supported(match kind {
            ClockKind::Sm => g.max_sm_clock_mhz,
            ClockKind::Memory => g.max_mem_clock_mhz,
        })
    }

    fn power_limit_default_mw(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        supported(self.gpu(d)?.power_limit_w.map(|w| (w * 1000.0).round() as u32))
    }

    fn enforced_power_limit_mw(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        supported(self.gpu(d)?.enforced_power_limit_w.map(|w| (w * 1000.0).round() as u32))
    }

    fn power_usage_mw(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        supported(self.values(d)?.power_w.map(|w| (w * 1000.0).round() as u32))
    }

    fn total_energy_mj(&self, d: DeviceId) -> Result<u64, NvmlFailure> {
        supported(self.values(d)?.energy_mj)
    }

    fn utilization(&self, d: DeviceId) -> Result<Utilization, NvmlFailure> {
        let v = self.values(d)?;
        supported(v.util_pct).map(|gpu| Utilization { gpu, memory: v.mem_util_pct.unwrap_or(0) })
    }

    fn compute_processes(&self, d: DeviceId) -> Result<Vec<GpuProcess>, NvmlFailure> {
        Ok(self.processes(supported(self.values(d)?.processes.as_ref())?))
    }

    fn mps_compute_processes(&self, d: DeviceId) -> Result<Vec<GpuProcess>, NvmlFailure> {
        Ok(self.processes(&self.values(d)?.mps))
    }

    fn accounting_enabled(&self, d: DeviceId) -> Result<bool, NvmlFailure> {
        supported(self.gpu(d)?.accounting)
    }

    fn accounting_max_memory(&self, d: DeviceId, pid: u32) -> Result<Option<u64>, NvmlFailure> {
        if self.gpu(d)?.accounting != Some(true) {
            return Err(NvmlFailure::NotSupported);
        }
        let p = self.all_processes(d)?.into_iter().find(|p| self.pid(p) == pid).ok_or(NvmlFailure::NotFound)?;
        Ok(p.accounting_max_mib.map(|m| m * MIB))
    }

    fn process_utilization(&self, d: DeviceId, since_us: u64) -> Result<Vec<ProcessUtilization>, NvmlFailure> {
        let ps = self.all_processes(d)?;
        if ps.iter().all(|p| p.sm_pct.is_none()) {
            return Err(NvmlFailure::NotSupported);
        }
        // One sample per reading, stamped with the reading's number (in seconds).
        let timestamp_us = (self.current as u64 + 1) * 1_000_000;
        Ok(ps
            .iter()
            .filter(|_| timestamp_us > since_us)
            .filter_map(|p| {
                p.sm_pct.map(|sm| ProcessUtilization { pid: self.pid(p), timestamp_us, sm_pct: sm, mem_pct: 0 })
            })
            .collect())
    }

    fn mig_enabled(&self, d: DeviceId) -> Result<bool, NvmlFailure> {
        supported(self.gpu(d)?.mig)
    }

    fn max_mig_devices(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        let g = self.gpu(d)?;
        match (g.max_mig_devices, g.mig) {
            (Some(n), _) => Ok(n),
            (None, Some(_)) => Ok(g.instance.iter().map(|i| i.mig + 1).max().unwrap_or(0)),
            (None, None) => Err(NvmlFailure::NotSupported),
        }
    }

    fn nvlink_peers(&self, d: DeviceId) -> Vec<String> {
        self.gpu(d).map(|g| g.nvlink_peers.clone()).unwrap_or_default()
    }

    fn max_pcie_gen(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        supported(self.gpu(d)?.pcie_gen)
    }

    fn max_pcie_width(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        supported(self.gpu(d)?.pcie_width)
    }

    fn begin_reading(&mut self, workload: &[u32]) {
        self.current = self.next.min(self.reading.len().saturating_sub(1));
        self.next += 1;
        self.workload = workload.to_vec();
    }
}
