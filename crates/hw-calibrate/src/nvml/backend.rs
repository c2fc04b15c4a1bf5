//! The NVML calls calibration makes, as a trait: [`NvmlBackend`].
//!
//! [`super::live::LiveNvml`] answers them from the driver through `nvml-wrapper` 0.13;
//! [`super::recorded::RecordedNvml`] from a file of recorded or synthetic answers, so
//! that every decision the probe and the sampler take on NVML's answers (a GPU that
//! refuses, a board without a power sensor, a MIG instance, a container that cannot see
//! its processes) runs in tests without a GPU.
//!
//! Each method is one NVML query (named after the `nvml-wrapper` method and the NVML
//! function, see the [NVML API reference](https://docs.nvidia.com/deploy/nvml-api/)),
//! on one [`DeviceId`]: a physical GPU, or a MIG device of one.

/// A device: GPU `index` (NVML's enumeration order), or MIG device `mig` of it
/// (`nvmlDeviceGetMigDeviceHandleByIndex`; MIG device indices are dense from 0 up to
/// `nvmlDeviceGetMaxMigDeviceCount`, unused slots answer `NotFound`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceId {
    /// NVML index of the physical GPU.
    pub index: u32,
    /// MIG device index on it, for a MIG device.
    pub mig: Option<u32>,
}

impl DeviceId {
    /// Physical GPU `index`.
    pub fn gpu(index: u32) -> Self {
        DeviceId { index, mig: None }
    }

    /// MIG device `mig` of GPU `index`.
    pub fn mig(index: u32, mig: u32) -> Self {
        DeviceId { index, mig: Some(mig) }
    }
}

impl std::fmt::Display for DeviceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.mig {
            None => write!(f, "GPU {}", self.index),
            Some(m) => write!(f, "GPU {} MIG device {m}", self.index),
        }
    }
}

/// How an NVML query failed: the `nvmlReturn_t` codes calibration tells apart
/// (nvml-wrapper's `NvmlError` variants of the same names).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NvmlFailure {
    /// `NVML_ERROR_NOT_SUPPORTED`: the device cannot answer this query (utilization on a
    /// MIG-enabled GPU, power on a board without a sensor, energy before Volta).
    #[error("NotSupported")]
    NotSupported,
    /// `NVML_ERROR_NO_PERMISSION`: this process may not query the device (for example a
    /// GPU outside the job's cgroup under Slurm or Kubernetes, or accounting without root).
    #[error("NoPermission")]
    NoPermission,
    /// `NVML_ERROR_GPU_IS_LOST`: the GPU fell off the bus or is otherwise inaccessible.
    #[error("GpuLost")]
    GpuLost,
    /// `NVML_ERROR_NOT_FOUND`: no such object (an unused MIG slot, a process without
    /// accounting stats).
    #[error("NotFound")]
    NotFound,
    /// NVML itself is absent (`NVML_ERROR_LIBRARY_NOT_FOUND`, the shared library could
    /// not be loaded) or the kernel driver is not running (`NVML_ERROR_DRIVER_NOT_LOADED`).
    #[error("no driver ({0})")]
    NoDriver(String),
    /// Anything else, as NVML worded it.
    #[error("{0}")]
    Other(String),
}

impl NvmlFailure {
    /// Whether this failure means the device is gone for the rest of the run (`GpuLost`,
    /// or the driver went away), rather than one query it cannot answer.
    pub fn device_gone(&self) -> bool {
        matches!(self, NvmlFailure::GpuLost | NvmlFailure::NoDriver(_))
    }

    /// Why a device is skipped, for notes.
    pub fn explain(&self) -> String {
        match self {
            NvmlFailure::NoPermission => "NoPermission (a GPU outside this job's cgroup, as Slurm's \
                ConstrainDevices or a Kubernetes device plugin leave them, or a query that needs root)"
                .to_string(),
            NvmlFailure::GpuLost => "GpuLost (the GPU fell off the bus or is otherwise inaccessible)".to_string(),
            other => other.to_string(),
        }
    }
}

/// `nvmlMemory_t`, bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Total device (or MIG device) memory.
    pub total: u64,
    /// Memory in use, by every process on the device (or MIG device).
    pub used: u64,
}

/// `nvmlUtilization_t`: percent of the last sample period (1/6 s to 1 s depending on
/// the product) during which a kernel ran, and during which device memory was read or
/// written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Utilization {
    /// GPU utilization, percent.
    pub gpu: u32,
    /// Memory utilization, percent.
    pub memory: u32,
}

/// One entry of `nvmlDeviceGetComputeRunningProcesses_v3` or
/// `nvmlDeviceGetMPSComputeRunningProcesses_v3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuProcess {
    /// The process id as the host kernel numbers it (NVML does not translate PID
    /// namespaces).
    pub pid: u32,
    /// Its device memory in bytes; `None` when NVML reports `NVML_VALUE_NOT_AVAILABLE`.
    pub used_bytes: Option<u64>,
}

/// One `nvmlProcessUtilizationSample_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessUtilization {
    /// Host process id.
    pub pid: u32,
    /// CPU timestamp of the sample, microseconds.
    pub timestamp_us: u64,
    /// SM utilization of this process, percent.
    pub sm_pct: u32,
    /// Frame-buffer memory utilization of this process, percent.
    pub mem_pct: u32,
}

/// Which maximum clock (`nvmlClockType_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockKind {
    /// `NVML_CLOCK_SM`.
    Sm,
    /// `NVML_CLOCK_MEM`.
    Memory,
}

/// The NVML queries calibration makes. See the module documentation.
pub trait NvmlBackend {
    /// What answers: `NVML (driver …)` or `recorded NVML answers FILE`, for the
    /// profiles' `origin`.
    fn describe(&self) -> String;
    /// The machine's name.
    fn host(&self) -> String;
    /// `nvmlDeviceGetCount_v2` (`Nvml::device_count`).
    fn device_count(&self) -> Result<u32, NvmlFailure>;
    /// `nvmlDeviceGetName` (`Device::name`).
    fn name(&self, d: DeviceId) -> Result<String, NvmlFailure>;
    /// `nvmlDeviceGetUUID` (`Device::uuid`).
    fn uuid(&self, d: DeviceId) -> Result<String, NvmlFailure>;
    /// `nvmlDeviceGetPciInfo_v3` bus id (`Device::pci_info`).
    fn pci_bus_id(&self, d: DeviceId) -> Result<String, NvmlFailure>;
    /// `nvmlDeviceGetMemoryInfo` (`Device::memory_info`).
    fn memory(&self, d: DeviceId) -> Result<MemoryInfo, NvmlFailure>;
    /// `nvmlDeviceGetCudaComputeCapability`, as `major.minor`.
    fn compute_capability(&self, d: DeviceId) -> Result<String, NvmlFailure>;
    /// `nvmlDeviceGetMaxClockInfo` (`Device::max_clock_info`), MHz.
    fn max_clock_mhz(&self, d: DeviceId, kind: ClockKind) -> Result<u32, NvmlFailure>;
    /// `nvmlDeviceGetPowerManagementDefaultLimit`, milliwatts.
    fn power_limit_default_mw(&self, d: DeviceId) -> Result<u32, NvmlFailure>;
    /// `nvmlDeviceGetEnforcedPowerLimit`, milliwatts.
    fn enforced_power_limit_mw(&self, d: DeviceId) -> Result<u32, NvmlFailure>;
    /// `nvmlDeviceGetPowerUsage` (`Device::power_usage`), milliwatts: a 1 s average on
    /// recent boards, an instantaneous reading on GA100 (A100).
    fn power_usage_mw(&self, d: DeviceId) -> Result<u32, NvmlFailure>;
    /// `nvmlDeviceGetTotalEnergyConsumption` (`Device::total_energy_consumption`),
    /// millijoules since the driver was last loaded (Volta and newer).
    fn total_energy_mj(&self, d: DeviceId) -> Result<u64, NvmlFailure>;
    /// `nvmlDeviceGetUtilizationRates` (`Device::utilization_rates`); `NotSupported` on
    /// MIG-enabled GPUs and on MIG devices.
    fn utilization(&self, d: DeviceId) -> Result<Utilization, NvmlFailure>;
    /// `nvmlDeviceGetComputeRunningProcesses_v3` (`Device::running_compute_processes`).
    fn compute_processes(&self, d: DeviceId) -> Result<Vec<GpuProcess>, NvmlFailure>;
    /// `nvmlDeviceGetMPSComputeRunningProcesses_v3`
    /// (`Device::mps_running_compute_processes`): the clients of an MPS server, which
    /// the plain list shows as the one server process.
    fn mps_compute_processes(&self, d: DeviceId) -> Result<Vec<GpuProcess>, NvmlFailure>;
    /// `nvmlDeviceGetAccountingMode` (`Device::is_accounting_enabled`); accounting is
    /// switched on by root (`nvidia-smi -am 1`).
    fn accounting_enabled(&self, d: DeviceId) -> Result<bool, NvmlFailure>;
    /// `nvmlDeviceGetAccountingStats` (`Device::accounting_stats_for`) `maxMemoryUsage`
    /// of `pid`, bytes: the most it ever allocated, also after it ended; `None` when NVML
    /// has no value.
    fn accounting_max_memory(&self, d: DeviceId, pid: u32) -> Result<Option<u64>, NvmlFailure>;
    /// `nvmlDeviceGetProcessUtilization` (`Device::process_utilization_stats`): the
    /// per-process samples newer than `since_us` (0: every buffered sample).
    fn process_utilization(&self, d: DeviceId, since_us: u64) -> Result<Vec<ProcessUtilization>, NvmlFailure>;
    /// `nvmlDeviceGetMigMode` current mode (`Device::mig_mode`): whether MIG is enabled.
    fn mig_enabled(&self, d: DeviceId) -> Result<bool, NvmlFailure>;
    /// `nvmlDeviceGetMaxMigDeviceCount` (`Device::mig_device_count`).
    fn max_mig_devices(&self, d: DeviceId) -> Result<u32, NvmlFailure>;
    /// PCI bus ids of the peers of the active NVLink links (`nvmlDeviceGetNvLinkState`,
    /// `nvmlDeviceGetNvLinkRemotePciInfo_v2`), one entry per active link.
    fn nvlink_peers(&self, d: DeviceId) -> Vec<String>;
    /// `nvmlDeviceGetMaxPcieLinkGeneration`.
    fn max_pcie_gen(&self, d: DeviceId) -> Result<u32, NvmlFailure>;
    /// `nvmlDeviceGetMaxPcieLinkWidth`.
    fn max_pcie_width(&self, d: DeviceId) -> Result<u32, NvmlFailure>;
    /// Called once before every reading of every device with the workload's process ids.
    /// The driver needs nothing; a recorded backend moves on to its next recorded
    /// reading and stands the workload's ids in for the ones it recorded.
    fn begin_reading(&mut self, _workload: &[u32]) {}
}

/// `Ok(Some(v))`, `Ok(None)` for a query the device cannot answer (any failure but one
/// that means the device is gone), `Err` when the device is gone.
pub fn optional<T>(r: Result<T, NvmlFailure>) -> Result<Option<T>, NvmlFailure> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.device_gone() => Err(e),
        Err(_) => Ok(None),
    }
}
