//! [`NvmlBackend`] on the driver, through `nvml-wrapper` 0.13 (which loads
//! `libnvidia-ml.so.1` at run time: this builds and runs on machines without a driver).
//!
//! Every query looks the device up again (`nvmlDeviceGetHandleByIndex_v2`, then
//! `nvmlDeviceGetMigDeviceHandleByIndex` for a MIG device): handles are cheap, and a
//! device that is lost between two readings then fails that reading alone.

use super::backend::{
    ClockKind, DeviceId, GpuProcess, MemoryInfo, NvmlBackend, NvmlFailure, ProcessUtilization, Utilization,
};
use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::ProcessInfo;
use nvml_wrapper::{Device, Nvml};

/// NVML's most NVLink links per GPU (`NVML_NVLINK_MAX_LINKS`).
const MAX_NVLINKS: u32 = 18;

/// The driver's NVML.
pub struct LiveNvml {
    nvml: Nvml,
}

fn one_line(e: &NvmlError) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// nvml-wrapper's error as the failure calibration tells apart.
pub fn failure(e: NvmlError) -> NvmlFailure {
    match e {
        NvmlError::NotSupported => NvmlFailure::NotSupported,
        NvmlError::NoPermission => NvmlFailure::NoPermission,
        NvmlError::GpuLost => NvmlFailure::GpuLost,
        NvmlError::NotFound => NvmlFailure::NotFound,
        NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound | NvmlError::DriverNotLoaded => {
            NvmlFailure::NoDriver(one_line(&e))
        }
        other => NvmlFailure::Other(one_line(&other)),
    }
}

impl LiveNvml {
    /// `nvmlInit_v2` (`Nvml::init`).
    pub fn init() -> Result<Self, NvmlFailure> {
        Nvml::init().map(|nvml| LiveNvml { nvml }).map_err(failure)
    }

    fn with<T>(&self, d: DeviceId, f: impl FnOnce(&Device<'_>) -> Result<T, NvmlError>) -> Result<T, NvmlFailure> {
        let dev = self.nvml.device_by_index(d.index).map_err(failure)?;
        match d.mig {
            None => f(&dev).map_err(failure),
            Some(m) => f(&dev.mig_device_by_index(m).map_err(failure)?).map_err(failure),
        }
    }
}

fn process(p: &ProcessInfo) -> GpuProcess {
    GpuProcess {
        pid: p.pid,
        used_bytes: match p.used_gpu_memory {
            UsedGpuMemory::Used(b) => Some(b),
            UsedGpuMemory::Unavailable => None,
        },
    }
}

impl NvmlBackend for LiveNvml {
    fn describe(&self) -> String {
        match self.nvml.sys_driver_version() {
            Ok(v) => format!("NVML (driver {v})"),
            Err(_) => "NVML".to_string(),
        }
    }

    fn host(&self) -> String {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_default()
    }

    fn device_count(&self) -> Result<u32, NvmlFailure> {
        self.nvml.device_count().map_err(failure)
    }

    fn name(&self, d: DeviceId) -> Result<String, NvmlFailure> {
        self.with(d, |x| x.name())
    }

    fn uuid(&self, d: DeviceId) -> Result<String, NvmlFailure> {
        self.with(d, |x| x.uuid())
    }

    fn pci_bus_id(&self, d: DeviceId) -> Result<String, NvmlFailure> {
        self.with(d, |x| x.pci_info().map(|p| p.bus_id))
    }

    fn memory(&self, d: DeviceId) -> Result<MemoryInfo, NvmlFailure> {
        self.with(d, |x| x.memory_info().map(|m| MemoryInfo { total: m.total, used: m.used }))
    }

    fn compute_capability(&self, d: DeviceId) -> Result<String, NvmlFailure> {
        self.with(d, |x| x.cuda_compute_capability().map(|c| format!("{}.{}", c.major, c.minor)))
    }

    fn max_clock_mhz(&self, d: DeviceId, kind: ClockKind) -> Result<u32, NvmlFailure> {
        let clock = match kind {
            ClockKind::Sm => Clock::SM,
            ClockKind::Memory => Clock::Memory,
        };
        self.with(d, |x| x.max_clock_info(clock))
    }

    fn power_limit_default_mw(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        self.with(d, |x| x.power_management_limit_default())
    }

    fn enforced_power_limit_mw(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        self.with(d, |x| x.enforced_power_limit())
    }

    fn power_usage_mw(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        self.with(d, |x| x.power_usage())
    }

    fn total_energy_mj(&self, d: DeviceId) -> Result<u64, NvmlFailure> {
        self.with(d, |x| x.total_energy_consumption())
    }

    fn utilization(&self, d: DeviceId) -> Result<Utilization, NvmlFailure> {
        self.with(d, |x| x.utilization_rates().map(|u| Utilization { gpu: u.gpu, memory: u.memory }))
    }

    fn compute_processes(&self, d: DeviceId) -> Result<Vec<GpuProcess>, NvmlFailure> {
        self.with(d, |x| x.running_compute_processes().map(|ps| ps.iter().map(process).collect()))
    }

    fn mps_compute_processes(&self, d: DeviceId) -> Result<Vec<GpuProcess>, NvmlFailure> {
        self.with(d, |x| x.mps_running_compute_processes().map(|ps| ps.iter().map(process).collect()))
    }

    fn accounting_enabled(&self, d: DeviceId) -> Result<bool, NvmlFailure> {
        self.with(d, |x| x.is_accounting_enabled())
    }

    fn accounting_max_memory(&self, d: DeviceId, pid: u32) -> Result<Option<u64>, NvmlFailure> {
        self.with(d, |x| x.accounting_stats_for(pid).map(|s| s.max_memory_usage))
    }

    fn process_utilization(&self, d: DeviceId, since_us: u64) -> Result<Vec<ProcessUtilization>, NvmlFailure> {
        self.with(d, |x| {
            x.process_utilization_stats(since_us).map(|ss| {
                ss.iter()
                    .map(|s| ProcessUtilization {
                        pid: s.pid,
                        timestamp_us: s.timestamp,
                        sm_pct: s.sm_util,
                        mem_pct: s.mem_util,
                    })
                    .collect()
            })
        })
    }

    fn mig_enabled(&self, d: DeviceId) -> Result<bool, NvmlFailure> {
        // NVML_DEVICE_MIG_ENABLE is 1.
        self.with(d, |x| x.mig_mode().map(|m| m.current == 1))
    }

    fn max_mig_devices(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        self.with(d, |x| x.mig_device_count())
    }

    fn nvlink_peers(&self, d: DeviceId) -> Vec<String> {
        self.with(d, |x| {
            let mut peers = Vec::new();
            for l in 0..MAX_NVLINKS {
                let link = x.link_wrapper_for(l);
                match link.is_active() {
                    Ok(true) => peers.push(link.remote_pci_info().map(|p| p.bus_id).unwrap_or_default()),
                    Ok(false) => {}
                    Err(_) => break,
                }
            }
            Ok(peers)
        })
        .unwrap_or_default()
    }

    fn max_pcie_gen(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        self.with(d, |x| x.max_pcie_link_gen())
    }

    fn max_pcie_width(&self, d: DeviceId) -> Result<u32, NvmlFailure> {
        self.with(d, |x| x.max_pcie_link_width())
    }
}
