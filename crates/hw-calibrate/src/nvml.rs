//! The NVML-backed [`GpuProbe`] and [`GpuSampler`] (through `nvml-wrapper`, which loads
//! `libnvidia-ml.so.1` at run time: this builds and runs on machines without a driver,
//! where [`open`] returns [`CalibrateError::NoDriver`]).

use crate::CalibrateError;
use crate::probe::{GpuProbe, ProbedDevice};
use crate::sample::{GpuReading, GpuSampler, SampledDevice};
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;

/// NVML's most NVLink links per GPU (`NVML_NVLINK_MAX_LINKS`).
const MAX_NVLINKS: u32 = 18;
const MIB: u64 = 1024 * 1024;

/// Loads NVML once: [`CalibrateError::NoDriver`] when the library or the kernel driver is
/// missing.
pub fn open() -> Result<Nvml, CalibrateError> {
    Nvml::init().map_err(|e| match e {
        NvmlError::LibloadingError(_) | NvmlError::DriverNotLoaded => CalibrateError::NoDriver(one_line(&e)),
        other => CalibrateError::Nvml { call: "init".into(), message: one_line(&other) },
    })
}

fn one_line(e: &NvmlError) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

fn failed(call: &str, index: u32) -> impl Fn(NvmlError) -> CalibrateError + '_ {
    move |e| CalibrateError::Nvml { call: format!("{call} of GPU {index}"), message: one_line(&e) }
}

fn device_count(nvml: &Nvml) -> Result<u32, CalibrateError> {
    nvml.device_count().map_err(|e| CalibrateError::Nvml { call: "device_count".into(), message: one_line(&e) })
}

/// The machine's GPUs through NVML.
pub struct NvmlProbe {
    nvml: Nvml,
}

impl NvmlProbe {
    /// Loads NVML.
    pub fn open() -> Result<Self, CalibrateError> {
        Ok(NvmlProbe { nvml: open()? })
    }
}

impl GpuProbe for NvmlProbe {
    fn host(&self) -> String {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_default()
    }

    fn devices(&mut self) -> Result<Vec<ProbedDevice>, CalibrateError> {
        let n = device_count(&self.nvml)?;
        let mut out = Vec::new();
        for i in 0..n {
            let d = self.nvml.device_by_index(i).map_err(failed("device_by_index", i))?;
            let mem = d.memory_info().map_err(failed("memory_info", i))?;
            let mut nvlink_peers = Vec::new();
            for l in 0..MAX_NVLINKS {
                let link = d.link_wrapper_for(l);
                match link.is_active() {
                    Ok(true) => nvlink_peers.push(link.remote_pci_info().map(|p| p.bus_id).unwrap_or_default()),
                    Ok(false) => {}
                    Err(_) => break,
                }
            }
            let mig = match d.mig_mode() {
                Ok(m) => Some(if m.current == 1 { "enabled" } else { "disabled" }.to_string()),
                Err(NvmlError::NotSupported) => Some("not supported".to_string()),
                Err(_) => None,
            };
            let watts = |mw: u32| mw as f64 / 1000.0;
            out.push(ProbedDevice {
                index: i,
                name: d.name().map_err(failed("name", i))?,
                uuid: d.uuid().map_err(failed("uuid", i))?,
                pci_bus_id: d.pci_info().ok().map(|p| p.bus_id),
                memory_total_mib: mem.total / MIB,
                memory_used_mib: Some(mem.used / MIB),
                compute_capability: d.cuda_compute_capability().ok().map(|c| format!("{}.{}", c.major, c.minor)),
                max_sm_clock_mhz: d.max_clock_info(Clock::SM).ok(),
                max_mem_clock_mhz: d.max_clock_info(Clock::Memory).ok(),
                power_limit_w: d.power_management_limit_default().ok().map(watts),
                enforced_power_limit_w: d.enforced_power_limit().ok().map(watts),
                power_usage_w: d.power_usage().ok().map(watts),
                util_pct: d.utilization_rates().ok().map(|u| u.gpu as f64),
                compute_processes: d.running_compute_processes().ok().map(|p| p.len() as u32),
                nvlink_peers,
                mig,
                pcie_gen: d.max_pcie_link_gen().ok(),
                pcie_width: d.max_pcie_link_width().ok(),
            });
        }
        Ok(out)
    }
}

/// Reads every GPU through NVML.
pub struct NvmlSampler {
    nvml: Nvml,
    devices: Vec<SampledDevice>,
}

impl NvmlSampler {
    /// Loads NVML and lists the GPUs ([`CalibrateError::NoGpu`] when there is none).
    pub fn open() -> Result<Self, CalibrateError> {
        let nvml = open()?;
        let n = device_count(&nvml)?;
        if n == 0 {
            return Err(CalibrateError::NoGpu);
        }
        let mut devices = Vec::new();
        for i in 0..n {
            let d = nvml.device_by_index(i).map_err(failed("device_by_index", i))?;
            devices.push(SampledDevice { index: i, name: d.name().map_err(failed("name", i))? });
        }
        Ok(NvmlSampler { nvml, devices })
    }
}

impl GpuSampler for NvmlSampler {
    fn devices(&self) -> Vec<SampledDevice> {
        self.devices.clone()
    }

    fn read(&mut self, pids: &[u32]) -> Result<Vec<GpuReading>, CalibrateError> {
        let mut out = Vec::with_capacity(self.devices.len());
        for dev in &self.devices {
            let i = dev.index;
            let d = self.nvml.device_by_index(i).map_err(failed("device_by_index", i))?;
            let mem = d.memory_info().map_err(failed("memory_info", i))?;
            let process_memory_mib = d.running_compute_processes().ok().and_then(|ps| {
                let mine: Vec<_> = ps.iter().filter(|p| pids.contains(&p.pid)).collect();
                if mine.is_empty() {
                    return None;
                }
                let bytes: u64 = mine
                    .iter()
                    .map(|p| match p.used_gpu_memory {
                        UsedGpuMemory::Used(b) => b,
                        UsedGpuMemory::Unavailable => 0,
                    })
                    .sum();
                Some(bytes / MIB)
            });
            let util = d.utilization_rates().ok();
            out.push(GpuReading {
                index: i,
                process_memory_mib,
                memory_used_mib: mem.used / MIB,
                util_pct: util.as_ref().map(|u| u.gpu as f64),
                mem_util_pct: util.as_ref().map(|u| u.memory as f64),
                power_w: d.power_usage().ok().map(|mw| mw as f64 / 1000.0),
            });
        }
        Ok(out)
    }
}
