//! The NVML-backed [`GpuProbe`] and [`GpuSampler`].
//!
//! Both run on an [`NvmlBackend`]: the driver ([`live::LiveNvml`], through
//! `nvml-wrapper` 0.13, which loads `libnvidia-ml.so.1` at run time, so `sim` builds and
//! runs on machines without a driver, where [`open`] answers
//! [`CalibrateError::NoDriver`]), or recorded answers ([`recorded::RecordedNvml`]) in
//! tests and in `scripts/device-check.sh --self-test`.
//!
//! What a real machine answers, and what is done with it (NVIDIA's [NVML API
//! reference](https://docs.nvidia.com/deploy/nvml-api/), nvml-wrapper 0.13's
//! documentation of the same calls):
//!
//! * **A GPU that refuses** (`NoPermission` for a GPU outside the job's cgroup under
//!   Slurm or Kubernetes, `GpuLost`) is skipped with a note; the probe and the sample go
//!   on with the others. Only when no GPU can be read at all do they fail
//!   ([`CalibrateError::NoReadableGpu`]). `LibraryNotFound`, a library that cannot be
//!   loaded and `DriverNotLoaded` read as "no driver".
//! * **A query a device cannot answer** (`NotSupported`: utilization on MIG-enabled GPUs,
//!   power on boards without a sensor, energy before Volta) is a missing value, never 0.
//! * **MIG**: on a MIG-enabled GPU the MIG devices are enumerated
//!   (`nvmlDeviceGetMigDeviceHandleByIndex` up to `nvmlDeviceGetMaxMigDeviceCount`,
//!   unused slots answer `NotFound`); memory and processes are read per MIG device, and
//!   utilization is not available (NVML answers `NotSupported` for MIG).
//! * **Processes**: NVML lists host process ids (it does not translate PID namespaces),
//!   so inside a container the command's own ids never match; the MPS server's clients
//!   are listed by `nvmlDeviceGetMPSComputeRunningProcesses_v3`, not by the plain list;
//!   with accounting mode on (set by root), `nvmlDeviceGetAccountingStats` gives each
//!   process's true peak (`maxMemoryUsage`), also after it ended; per-process SM
//!   utilization comes from `nvmlDeviceGetProcessUtilization` where the device supports
//!   it. [`crate::sample::job_profile`] says which of these it used.
//! * **Power**: `nvmlDeviceGetPowerUsage` is a 1 s average on recent boards but an
//!   instantaneous reading on GA100; `nvmlDeviceGetTotalEnergyConsumption` (mJ since
//!   the driver loaded, Volta and newer) is read too, and the job profile takes power per
//!   interval from its change where both ends have it.

pub mod backend;
pub mod live;
pub mod recorded;

use crate::CalibrateError;
use crate::probe::{GpuProbe, ProbedDevice, ProbedMig};
use crate::sample::{GpuReading, GpuSampler, SampledDevice};
use backend::{ClockKind, DeviceId, GpuProcess, NvmlBackend, NvmlFailure, optional};
use std::collections::BTreeSet;

const MIB: u64 = 1024 * 1024;

/// The NVML answers to use: the file named by [`recorded::RECORDED_NVML_ENV`] when that
/// variable is set, else the driver ([`CalibrateError::NoDriver`] without one).
pub fn open() -> Result<Box<dyn NvmlBackend>, CalibrateError> {
    match std::env::var_os(recorded::RECORDED_NVML_ENV) {
        Some(path) if !path.is_empty() => open_recorded(std::path::Path::new(&path)),
        _ => match live::LiveNvml::init() {
            Ok(l) => Ok(Box::new(l)),
            Err(e) => Err(fatal("init", e)),
        },
    }
}

/// The recorded NVML answers of a file, initialised as NVML would be (a recorded
/// `LibraryNotFound` is [`CalibrateError::NoDriver`]).
pub fn open_recorded(path: &std::path::Path) -> Result<Box<dyn NvmlBackend>, CalibrateError> {
    match recorded::RecordedNvml::load(path)?.init() {
        Ok(r) => Ok(Box::new(r)),
        Err(e) => Err(fatal("init", e)),
    }
}

/// A failure that ends the probe or the sample.
fn fatal(call: &str, e: NvmlFailure) -> CalibrateError {
    match e {
        NvmlFailure::NoDriver(m) => CalibrateError::NoDriver(m),
        other => CalibrateError::Nvml { call: call.to_string(), message: other.to_string() },
    }
}

fn watts(mw: u32) -> f64 {
    mw as f64 / 1000.0
}

/// The MIG devices of GPU `index` (MIG enabled): every slot up to the maximum that
/// answers its name.
fn mig_devices(b: &dyn NvmlBackend, index: u32) -> Result<Vec<(DeviceId, String)>, NvmlFailure> {
    let max = b.max_mig_devices(DeviceId::gpu(index))?;
    let mut out = Vec::new();
    for m in 0..max {
        let id = DeviceId::mig(index, m);
        match b.name(id) {
            Ok(name) => out.push((id, name)),
            Err(NvmlFailure::NotFound) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The machine's GPUs through NVML.
pub struct NvmlProbe {
    nvml: Box<dyn NvmlBackend>,
    notes: Vec<String>,
}

impl NvmlProbe {
    /// Loads NVML (or the recorded answers [`open`] picks).
    pub fn open() -> Result<Self, CalibrateError> {
        Ok(Self::new(open()?))
    }

    /// A probe on these NVML answers.
    pub fn new(nvml: Box<dyn NvmlBackend>) -> Self {
        NvmlProbe { nvml, notes: Vec::new() }
    }

    fn device(&mut self, index: u32) -> Result<ProbedDevice, NvmlFailure> {
        let b = &*self.nvml;
        let d = DeviceId::gpu(index);
        let name = b.name(d)?;
        let uuid = b.uuid(d)?;
        let mem = b.memory(d)?;
        let mig = match b.mig_enabled(d) {
            Ok(true) => Some("enabled".to_string()),
            Ok(false) => Some("disabled".to_string()),
            Err(NvmlFailure::NotSupported) => Some("not supported".to_string()),
            Err(e) if e.device_gone() => return Err(e),
            Err(_) => None,
        };
        let mig_on = mig.as_deref() == Some("enabled");
        let mut mig_devices_out = Vec::new();
        if mig_on {
            for (id, mig_name) in mig_devices(b, index)? {
                let m = b.memory(id)?;
                mig_devices_out.push(ProbedMig {
                    mig: id.mig.unwrap_or(0),
                    name: mig_name,
                    uuid: optional(b.uuid(id))?.unwrap_or_default(),
                    memory_total_mib: m.total / MIB,
                    memory_used_mib: Some(m.used / MIB),
                    compute_processes: optional(b.compute_processes(id))?.map(|p| p.len() as u32),
                });
            }
            self.notes.push(format!(
                "GPU {index} ({name}): MIG enabled, {} MIG device(s): memory and processes are per MIG device; \
                 utilization is not available with MIG (NVML answers NotSupported)",
                mig_devices_out.len()
            ));
        }
        let power_usage_w = optional(b.power_usage_mw(d))?.map(watts);
        if power_usage_w.is_none() {
            self.notes.push(format!(
                "GPU {index} ({name}): no power reading (NVML power_usage NotSupported: no power sensor): idle \
                 power not measured"
            ));
        }
        let util_pct = if mig_on { None } else { optional(b.utilization(d))?.map(|u| u.gpu as f64) };
        let compute_processes = if mig_on {
            Some(mig_devices_out.iter().filter_map(|m| m.compute_processes).sum())
        } else {
            optional(b.compute_processes(d))?.map(|p| p.len() as u32)
        };
        Ok(ProbedDevice {
            index,
            name,
            uuid,
            pci_bus_id: optional(b.pci_bus_id(d))?,
            memory_total_mib: mem.total / MIB,
            memory_used_mib: Some(mem.used / MIB),
            compute_capability: optional(b.compute_capability(d))?,
            max_sm_clock_mhz: optional(b.max_clock_mhz(d, ClockKind::Sm))?,
            max_mem_clock_mhz: optional(b.max_clock_mhz(d, ClockKind::Memory))?,
            power_limit_w: optional(b.power_limit_default_mw(d))?.map(watts),
            enforced_power_limit_w: optional(b.enforced_power_limit_mw(d))?.map(watts),
            power_usage_w,
            util_pct,
            compute_processes,
            nvlink_peers: b.nvlink_peers(d),
            mig,
            pcie_gen: optional(b.max_pcie_gen(d))?,
            pcie_width: optional(b.max_pcie_width(d))?,
            mig_devices: mig_devices_out,
        })
    }
}

impl GpuProbe for NvmlProbe {
    fn host(&self) -> String {
        self.nvml.host()
    }

    fn source(&self) -> Option<String> {
        Some(self.nvml.describe())
    }

    fn devices(&mut self) -> Result<Vec<ProbedDevice>, CalibrateError> {
        let n = self.nvml.device_count().map_err(|e| fatal("device_count", e))?;
        let mut out = Vec::new();
        let mut skipped = Vec::new();
        for i in 0..n {
            match self.device(i) {
                Ok(d) => out.push(d),
                Err(NvmlFailure::NoDriver(m)) => return Err(CalibrateError::NoDriver(m)),
                Err(e) => skipped.push(format!("GPU {i} skipped: {}", e.explain())),
            }
        }
        if out.is_empty() && !skipped.is_empty() {
            return Err(CalibrateError::NoReadableGpu { skipped });
        }
        self.notes.extend(skipped);
        Ok(out)
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

/// A device the sampler reads: a GPU, or a MIG device of one.
struct Unit {
    id: DeviceId,
    name: String,
    /// Stopped answering (GpuLost, NoPermission): no longer read.
    gone: bool,
    accounting: bool,
    process_util: bool,
    last_util_us: u64,
    /// The workload's process ids ever listed here (for accounting's peaks).
    seen: BTreeSet<u32>,
}

/// Reads every GPU (every MIG device of a MIG-enabled GPU) through NVML.
pub struct NvmlSampler {
    nvml: Box<dyn NvmlBackend>,
    units: Vec<Unit>,
    notes: Vec<String>,
}

/// Whether this process runs in a PID namespace below the host's (a container): the
/// `NSpid` line of `/proc/self/status` then lists more than one id.
pub fn in_pid_namespace() -> bool {
    std::fs::read_to_string("/proc/self/status").ok().is_some_and(|s| {
        s.lines().find_map(|l| l.strip_prefix("NSpid:")).is_some_and(|ids| ids.split_whitespace().count() > 1)
    })
}

impl NvmlSampler {
    /// Loads NVML (or the recorded answers [`open`] picks) and lists the devices.
    pub fn open() -> Result<Self, CalibrateError> {
        let mut s = Self::new(open()?)?;
        if in_pid_namespace() {
            s.notes.push(
                "this process runs in a PID namespace (a container): NVML lists host process ids, so the \
                 command's processes cannot be matched by id"
                    .to_string(),
            );
        }
        Ok(s)
    }

    /// A sampler on these NVML answers: every GPU that answers its name and memory
    /// ([`CalibrateError::NoGpu`] when there is none, [`CalibrateError::NoReadableGpu`]
    /// when none answers).
    pub fn new(nvml: Box<dyn NvmlBackend>) -> Result<Self, CalibrateError> {
        let n = nvml.device_count().map_err(|e| fatal("device_count", e))?;
        if n == 0 {
            return Err(CalibrateError::NoGpu);
        }
        let mut units = Vec::new();
        let mut notes = Vec::new();
        let mut skipped = Vec::new();
        for i in 0..n {
            let d = DeviceId::gpu(i);
            let first = nvml.name(d).and_then(|name| nvml.memory(d).map(|_| name));
            let name = match first {
                Ok(name) => name,
                Err(NvmlFailure::NoDriver(m)) => return Err(CalibrateError::NoDriver(m)),
                Err(e) => {
                    skipped.push(format!("GPU {i} skipped: {}", e.explain()));
                    continue;
                }
            };
            let unit = |id: DeviceId, name: String| Unit {
                id,
                name,
                gone: false,
                accounting: nvml.accounting_enabled(id) == Ok(true),
                process_util: true,
                last_util_us: 0,
                seen: BTreeSet::new(),
            };
            if nvml.mig_enabled(d) == Ok(true) {
                match mig_devices(&*nvml, i) {
                    Ok(migs) => {
                        notes.push(format!(
                            "GPU {i} ({name}): MIG enabled: memory and processes are read per MIG device ({}); \
                             utilization is not available with MIG (NVML answers NotSupported) and board power \
                             is not attributed to MIG devices",
                            migs.len()
                        ));
                        units.extend(migs.into_iter().map(|(id, n)| unit(id, n)));
                    }
                    Err(e) => skipped.push(format!("GPU {i} skipped: its MIG devices: {}", e.explain())),
                }
            } else {
                units.push(unit(d, name));
            }
        }
        if units.is_empty() {
            return Err(CalibrateError::NoReadableGpu { skipped });
        }
        notes.extend(skipped);
        for u in units.iter().filter(|u| u.accounting) {
            notes.push(format!("{}: accounting mode on: peaks from NVML's accounting stats", u.id));
        }
        Ok(NvmlSampler { nvml, units, notes })
    }
}

/// The listed processes, MPS clients included, each id once.
fn listed(plain: Option<Vec<GpuProcess>>, mps: Option<Vec<GpuProcess>>) -> Option<Vec<GpuProcess>> {
    let mps = mps.unwrap_or_default();
    let mut all = match plain {
        Some(p) => p,
        None if mps.is_empty() => return None,
        None => Vec::new(),
    };
    for p in mps {
        if !all.iter().any(|q| q.pid == p.pid) {
            all.push(p);
        }
    }
    Some(all)
}

fn read_unit(nvml: &dyn NvmlBackend, u: &mut Unit, pids: &[u32]) -> Result<GpuReading, NvmlFailure> {
    let id = u.id;
    let mig = id.mig.is_some();
    let mem = nvml.memory(id)?;
    let util = if mig { None } else { optional(nvml.utilization(id))? };
    let power_w = if mig { None } else { optional(nvml.power_usage_mw(id))?.map(watts) };
    let energy_mj = if mig { None } else { optional(nvml.total_energy_mj(id))? };
    let processes = listed(optional(nvml.compute_processes(id))?, optional(nvml.mps_compute_processes(id))?);
    let ours: Vec<GpuProcess> = processes.iter().flatten().filter(|p| pids.contains(&p.pid)).copied().collect();
    let others = processes.as_ref().map_or(0, |ps| ps.len() - ours.len());
    let unavailable = ours.iter().any(|p| p.used_bytes.is_none());
    let process_memory_mib = if ours.is_empty() || unavailable {
        None
    } else {
        Some(ours.iter().filter_map(|p| p.used_bytes).sum::<u64>() / MIB)
    };
    u.seen.extend(ours.iter().map(|p| p.pid));
    let accounting_peak_mib = if u.accounting && !u.seen.is_empty() {
        let mut sum = None;
        for &pid in &u.seen {
            if let Some(b) = optional(nvml.accounting_max_memory(id, pid))?.flatten() {
                sum = Some(sum.unwrap_or(0) + b / MIB);
            }
        }
        sum
    } else {
        None
    };
    let mut process_util_pct = None;
    if u.process_util && !ours.is_empty() {
        match optional(nvml.process_utilization(id, u.last_util_us))? {
            Some(samples) => {
                u.last_util_us = samples.iter().map(|s| s.timestamp_us).max().unwrap_or(u.last_util_us);
                // NVML lists only processes with some utilization in the period: one of
                // ours without a sample was idle.
                let mut latest: std::collections::BTreeMap<u32, (u64, u32)> = Default::default();
                for s in samples.iter().filter(|s| pids.contains(&s.pid)) {
                    let e = latest.entry(s.pid).or_insert((0, 0));
                    if s.timestamp_us >= e.0 {
                        *e = (s.timestamp_us, s.sm_pct);
                    }
                }
                process_util_pct = Some(latest.values().map(|v| v.1 as f64).sum::<f64>().min(100.0));
            }
            None => u.process_util = false,
        }
    }
    Ok(GpuReading {
        index: id.index,
        mig: id.mig,
        process_memory_mib,
        memory_used_mib: mem.used / MIB,
        util_pct: util.map(|u| u.gpu as f64),
        mem_util_pct: util.map(|u| u.memory as f64),
        power_w,
        energy_mj,
        job_processes: ours.len() as u32,
        other_processes: others as u32,
        process_memory_unavailable: unavailable,
        process_util_pct,
        accounting_peak_mib,
    })
}

impl GpuSampler for NvmlSampler {
    fn devices(&self) -> Vec<SampledDevice> {
        self.units.iter().map(|u| SampledDevice { index: u.id.index, mig: u.id.mig, name: u.name.clone() }).collect()
    }

    fn read(&mut self, pids: &[u32]) -> Result<Vec<GpuReading>, CalibrateError> {
        self.nvml.begin_reading(pids);
        let mut out = Vec::with_capacity(self.units.len());
        for u in self.units.iter_mut().filter(|u| !u.gone) {
            match read_unit(&*self.nvml, u, pids) {
                Ok(r) => out.push(r),
                Err(NvmlFailure::NoDriver(m)) => return Err(CalibrateError::NoDriver(m)),
                Err(e) => {
                    u.gone = true;
                    self.notes.push(format!("{} skipped from this reading on: {}", u.id, e.explain()));
                }
            }
        }
        if out.is_empty() {
            return Err(CalibrateError::NoReadableGpu { skipped: self.notes.clone() });
        }
        Ok(out)
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn source(&self) -> Option<String> {
        Some(self.nvml.describe())
    }
}
