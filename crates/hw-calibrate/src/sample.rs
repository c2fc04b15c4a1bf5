//! `sim calibrate sample`: what a workload does on the GPUs.
//!
//! [`run_sampled`] starts the command and reads every GPU through a [`GpuSampler`] every
//! interval until the command ends; [`job_profile`] turns the readings ([`Tick`]s) into
//! a [`MeasuredJob`]. The NVML sampler is [`crate::nvml::NvmlSampler`];
//! [`RecordedSamples`] replays readings recorded in a TOML or JSON file.
//!
//! # Which GPUs, which samples, which memory ([`MemorySource`])
//!
//! The job's GPUs (MIG devices count as GPUs) are those on which NVML listed the
//! command or one of its descendants at some reading (`running_compute_processes`, and
//! the MPS clients' list), and its samples there those where it was listed. Its memory
//! is what those processes used; with accounting mode on, the peak is NVML's accounting
//! peak (`maxMemoryUsage`), which also sees what a process held between two readings.
//! When the command's processes were never listed, the memory is the device's memory in
//! use (`memory_info().used`, every tenant of the GPU counts) on the GPUs that were
//! busy, over the samples where they were busy (utilization above 0, or memory above
//! the least seen on that GPU): inside a container, whose PID namespace NVML does not
//! see, processes are listed under host ids that never match ([`MemorySource::DeviceContainer`]);
//! otherwise the list was unavailable ([`MemorySource::DeviceNotListed`]). When a listed
//! process's memory is unavailable (NVML's "not available"), the device's memory is used
//! on the job's GPUs ([`MemorySource::DeviceUnavailable`]).
//!
//! # Utilization and power
//!
//! Utilization is the command's own SM utilization where NVML gave per-process samples
//! (`nvmlDeviceGetProcessUtilization`), else the device's (every process on the GPU);
//! MIG devices have none (NVML answers `NotSupported`), and then it is unknown, not 0.
//! Power per sample is the change of the energy counter (`total_energy_consumption`,
//! mJ) over the interval before it where both ends have it, else the board power NVML
//! reported (`power_usage`); a board without a power sensor has none. Every figure is
//! per GPU over the (sample, job GPU) pairs where the job was present, and the profile's
//! `sources` say which reading each came from.

use crate::CalibrateError;
use crate::job::{JobReadings, MeasuredJob};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// One GPU (or MIG device) at one reading.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuReading {
    /// NVML index.
    pub index: u32,
    /// MIG device index, for a MIG device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig: Option<u32>,
    /// GPU memory of the workload's processes on this GPU, MiB; `None` when none of them
    /// is listed on it, or the memory of one is unavailable.
    #[serde(default)]
    pub process_memory_mib: Option<u64>,
    /// Device memory in use, MiB.
    pub memory_used_mib: u64,
    /// GPU utilization, percent (device-wide).
    #[serde(default)]
    pub util_pct: Option<f64>,
    /// Memory-bandwidth utilization, percent.
    #[serde(default)]
    pub mem_util_pct: Option<f64>,
    /// Board power, watts (`power_usage`).
    #[serde(default)]
    pub power_w: Option<f64>,
    /// Energy counter, millijoules since the driver loaded (`total_energy_consumption`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_mj: Option<u64>,
    /// The workload's processes listed on it (MPS clients included).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub job_processes: u32,
    /// Other processes listed on it (other tenants, or host ids a container cannot match).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub other_processes: u32,
    /// Whether NVML listed one of the workload's processes without its memory.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub process_memory_unavailable: bool,
    /// SM utilization of the workload's processes, percent (per-process samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_util_pct: Option<f64>,
    /// Accounting's peak memory of the workload's processes so far, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounting_peak_mib: Option<u64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl GpuReading {
    /// Whether the workload's processes were listed on it.
    pub fn job_listed(&self) -> bool {
        self.job_processes > 0 || self.process_memory_mib.is_some()
    }

    fn unit(&self) -> Unit {
        (self.index, self.mig)
    }
}

/// A GPU or MIG device: (index, MIG device index).
type Unit = (u32, Option<u32>);

/// Every GPU at one instant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tick {
    /// Seconds since the command started.
    pub t_s: f64,
    /// The GPUs.
    #[serde(default)]
    pub gpu: Vec<GpuReading>,
}

/// A GPU (or MIG device) a sampler reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampledDevice {
    /// NVML index.
    pub index: u32,
    /// MIG device index, for a MIG device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig: Option<u32>,
    /// Model name.
    pub name: String,
}

/// Something that reads every GPU of the machine.
pub trait GpuSampler {
    /// The GPUs it reads.
    fn devices(&self) -> Vec<SampledDevice>;
    /// One reading of every GPU that can be read; `pids` are the workload's processes.
    fn read(&mut self, pids: &[u32]) -> Result<Vec<GpuReading>, CalibrateError>;
    /// GPUs skipped and other things to know, one line each.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// What answered, when the profile's origin should say (`NVML (driver …)`).
    fn source(&self) -> Option<String> {
        None
    }
}

/// Readings recorded in a file (`[[device]]` and `[[tick]]` tables in TOML, or the same
/// keys in JSON). As a [`GpuSampler`] it hands out the ticks in order, then the last one
/// again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedSamples {
    /// What was sampled (a command line).
    #[serde(default)]
    pub command: String,
    /// The run's wall time, seconds; without it, the span of the ticks.
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// What the sampler noted (GPUs skipped, a PID namespace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The GPUs.
    #[serde(default)]
    pub device: Vec<SampledDevice>,
    /// The readings.
    #[serde(default)]
    pub tick: Vec<Tick>,
    #[serde(skip)]
    next: usize,
}

impl RecordedSamples {
    /// Reads a recording: JSON when the name ends in `.json`, TOML otherwise.
    pub fn load(path: &Path) -> Result<Self, CalibrateError> {
        crate::read_structured(path)
    }

    /// The recorded run's wall time: `duration_s`, else the span of the ticks.
    pub fn duration(&self) -> f64 {
        self.duration_s.unwrap_or_else(|| match (self.tick.first(), self.tick.last()) {
            (Some(a), Some(b)) => (b.t_s - a.t_s).max(0.0),
            _ => 0.0,
        })
    }

    /// The job profile of the whole recording.
    pub fn job_profile(&self, origin: &str) -> Sampled {
        let mut s = job_profile(&self.device, &self.tick, self.duration(), origin);
        s.job.notes.splice(0..0, self.notes.iter().cloned());
        s
    }
}

impl GpuSampler for RecordedSamples {
    fn devices(&self) -> Vec<SampledDevice> {
        self.device.clone()
    }

    fn read(&mut self, _pids: &[u32]) -> Result<Vec<GpuReading>, CalibrateError> {
        let i = self.next.min(self.tick.len().saturating_sub(1));
        self.next += 1;
        Ok(self.tick.get(i).map(|t| t.gpu.clone()).unwrap_or_default())
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

/// Where the job's memory figures come from (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemorySource {
    /// The workload's own processes as NVML listed them.
    Process,
    /// The workload's own processes, with the peak from NVML's accounting stats.
    Accounting,
    /// The device's memory in use: the workload's processes were never listed, and no
    /// other process was either (the list is unsupported or empty).
    DeviceNotListed,
    /// The device's memory in use: NVML listed processes, none of them the workload's
    /// (host process ids, seen from a container's PID namespace, or other tenants).
    DeviceContainer,
    /// The device's memory in use on the job's GPUs: NVML listed the workload's
    /// processes without their memory.
    DeviceUnavailable,
}

impl MemorySource {
    /// A phrase for messages and the profile's sources.
    pub fn describe(self) -> &'static str {
        match self {
            MemorySource::Process => "memory of the command's processes (NVML running compute processes)",
            MemorySource::Accounting => {
                "memory of the command's processes, peak from NVML accounting stats (maxMemoryUsage)"
            }
            MemorySource::DeviceNotListed => {
                "device-wide memory in use, all tenants (NVML listed no process of the command)"
            }
            MemorySource::DeviceContainer => {
                "device-wide memory in use, all tenants (NVML listed processes but none of the command's: NVML \
                 reports host process ids, which a container's PID namespace does not match)"
            }
            MemorySource::DeviceUnavailable => {
                "device-wide memory in use, all tenants (NVML listed the command's processes without their memory)"
            }
        }
    }

    /// Whether the figures are the device's, every process on it counting.
    pub fn device_wide(self) -> bool {
        !matches!(self, MemorySource::Process | MemorySource::Accounting)
    }
}

/// A job profile and where its memory came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    /// The profile.
    pub job: MeasuredJob,
    /// The memory source.
    pub memory: MemorySource,
}

/// The memory source of these readings, and the job's GPUs.
fn memory_source(readings: &[&GpuReading]) -> (MemorySource, BTreeSet<Unit>) {
    let listed: BTreeSet<Unit> = readings.iter().filter(|g| g.job_listed()).map(|g| g.unit()).collect();
    if !listed.is_empty() {
        let source = if readings.iter().any(|g| g.job_processes > 0 && g.process_memory_mib.is_none()) {
            MemorySource::DeviceUnavailable
        } else if readings.iter().any(|g| g.accounting_peak_mib.is_some()) {
            MemorySource::Accounting
        } else {
            MemorySource::Process
        };
        return (source, listed);
    }
    let source = if readings.iter().any(|g| g.other_processes > 0) {
        MemorySource::DeviceContainer
    } else {
        MemorySource::DeviceNotListed
    };
    (source, BTreeSet::new())
}

/// Counts of where a figure's readings came from, as a source phrase.
fn phrase(parts: &[(usize, &str)], missing: &str) -> String {
    let used: Vec<String> = parts.iter().filter(|p| p.0 > 0).map(|(n, what)| format!("{n} samples: {what}")).collect();
    if used.is_empty() { format!("not measured: {missing}") } else { used.join("; ") }
}

/// The job profile of readings taken over `duration_s` seconds (see the module
/// documentation for which GPUs, samples and memory count).
pub fn job_profile(devices: &[SampledDevice], ticks: &[Tick], duration_s: f64, origin: &str) -> Sampled {
    let all: Vec<&GpuReading> = ticks.iter().flat_map(|t| t.gpu.iter()).collect();
    let (memory, listed) = memory_source(&all);
    let mut notes = Vec::new();
    // The least memory seen on each device: what it holds without the job.
    let mut floor: BTreeMap<Unit, u64> = BTreeMap::new();
    for g in &all {
        let f = floor.entry(g.unit()).or_insert(g.memory_used_mib);
        *f = (*f).min(g.memory_used_mib);
    }
    let busy = |g: &GpuReading| g.util_pct.is_some_and(|u| u > 0.0) || g.memory_used_mib > floor[&g.unit()];
    let present: Box<dyn Fn(&GpuReading) -> bool> = if listed.is_empty() {
        if all.iter().any(|g| busy(g)) {
            Box::new(busy)
        } else {
            if !all.is_empty() {
                notes.push("no GPU was ever busy: every sample of every GPU counts".to_string());
            }
            Box::new(|_| true)
        }
    } else {
        Box::new(|g: &GpuReading| g.job_listed())
    };
    let units: BTreeSet<Unit> = all.iter().filter(|g| present(g)).map(|g| g.unit()).collect();
    let mut r = JobReadings::default();
    let (mut process_util, mut device_util, mut from_energy, mut from_power) = (0, 0, 0, 0);
    let mut last_energy: BTreeMap<Unit, (f64, u64)> = BTreeMap::new();
    let mut accounting_peak = None;
    for t in ticks {
        for g in &t.gpu {
            let previous = match g.energy_mj {
                Some(e) => last_energy.insert(g.unit(), (t.t_s, e)),
                None => last_energy.remove(&g.unit()),
            };
            if !units.contains(&g.unit()) || !present(g) {
                continue;
            }
            r.memory_mib.push(match (memory.device_wide(), g.process_memory_mib) {
                (false, Some(m)) => m,
                _ => g.memory_used_mib,
            });
            accounting_peak = accounting_peak.max(g.accounting_peak_mib);
            if let Some(u) = g.process_util_pct {
                process_util += 1;
                r.util_pct.push(u);
            } else if let Some(u) = g.util_pct {
                device_util += 1;
                r.util_pct.push(u);
            }
            r.mem_util_pct.extend(g.mem_util_pct);
            let by_energy = match (previous, g.energy_mj) {
                (Some((t0, e0)), Some(e1)) if t.t_s > t0 && e1 >= e0 => Some((e1 - e0) as f64 / (t.t_s - t0) / 1000.0),
                _ => None,
            };
            if let Some(w) = by_energy {
                from_energy += 1;
                r.power_w.push(w);
            } else if let Some(w) = g.power_w {
                from_power += 1;
                r.power_w.push(w);
            }
        }
    }
    let names: BTreeMap<Unit, &str> = devices.iter().map(|d| ((d.index, d.mig), d.name.as_str())).collect();
    let mut models: Vec<&str> = units.iter().filter_map(|u| names.get(u).copied()).collect();
    models.sort_unstable();
    models.dedup();
    let mut job = MeasuredJob::from_readings(origin, models.join(", "), units.len() as u32, duration_s, &r);
    let presence = if listed.is_empty() {
        "the samples where the GPU was busy (utilization above 0 or memory above the least seen on it)"
    } else {
        "the samples where NVML listed the command's processes"
    };
    let mem_source = format!("{}, over {presence}", memory.describe());
    for k in ["peak_memory_mib", "mean_memory_mib", "memory_mib_quantiles"] {
        job.sources.insert(k.to_string(), mem_source.clone());
    }
    if let Some(peak) = accounting_peak.filter(|_| memory == MemorySource::Accounting) {
        job.peak_memory_mib = job.peak_memory_mib.max(peak);
        job.sources.insert(
            "peak_memory_mib".to_string(),
            "NVML accounting stats maxMemoryUsage of the command's processes (summed per GPU), or the largest \
             sample if higher"
                .to_string(),
        );
    }
    let util = phrase(
        &[
            (process_util, "the command's own SM utilization (NVML per-process utilization samples)"),
            (device_util, "device-wide utilization, every process on the GPU (NVML utilization_rates)"),
        ],
        "NVML answered utilization NotSupported (MIG devices, or this board)",
    );
    for k in ["mean_util_pct", "peak_util_pct"] {
        job.sources.insert(k.to_string(), util.clone());
    }
    let mem_util = if job.mean_mem_util_pct.is_some() {
        "device-wide memory utilization (NVML utilization_rates)".to_string()
    } else {
        "not measured: NVML answered utilization NotSupported".to_string()
    };
    job.sources.insert("mean_mem_util_pct".to_string(), mem_util);
    let power = phrase(
        &[
            (from_energy, "change of NVML total_energy_consumption over the interval before each sample"),
            (from_power, "NVML power_usage at each sample (a 1 s average on recent boards, instantaneous on GA100)"),
        ],
        "no power reading (NVML power_usage NotSupported: no power sensor; MIG devices get no share of board power)",
    );
    for k in ["mean_power_w", "peak_power_w"] {
        job.sources.insert(k.to_string(), power.clone());
    }
    job.notes = notes;
    Sampled { job, memory }
}

/// A sampled run of a command.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleRun {
    /// The readings.
    pub ticks: Vec<Tick>,
    /// Wall time from start to exit, seconds.
    pub duration_s: f64,
    /// The exit status; `None` when a signal ended it.
    pub exit_code: Option<i32>,
}

impl SampleRun {
    /// Whether the command exited with status 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Runs `command` (program and arguments; standard streams inherited) and reads the GPUs
/// through `sampler` at start and then every `interval` until it exits. On a sampler
/// failure the command is killed.
pub fn run_sampled(
    command: &[String],
    interval: Duration,
    sampler: &mut dyn GpuSampler,
) -> Result<SampleRun, CalibrateError> {
    let shown = command.join(" ");
    let Some((program, args)) = command.split_first() else {
        return Err(CalibrateError::Command { command: shown, message: "no command given".into() });
    };
    let interval = interval.max(Duration::from_millis(1));
    let start = Instant::now();
    let mut child = std::process::Command::new(program)
        .args(args)
        .spawn()
        .map_err(|e| CalibrateError::Command { command: shown.clone(), message: e.to_string() })?;
    let root = child.id();
    let mut ticks = Vec::new();
    let mut next = start;
    loop {
        let now = Instant::now();
        if now >= next {
            let pids = process_tree(root);
            let t_s = (now.duration_since(start).as_secs_f64() * 1000.0).round() / 1000.0;
            match sampler.read(&pids) {
                Ok(gpu) => ticks.push(Tick { t_s, gpu }),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(e);
                }
            }
            while next <= Instant::now() {
                next += interval;
            }
        }
        match child.try_wait() {
            Ok(Some(status)) => {
                let duration_s = start.elapsed().as_secs_f64();
                return Ok(SampleRun { ticks, duration_s, exit_code: status.code() });
            }
            Ok(None) => {}
            Err(e) => {
                let _ = child.kill();
                return Err(CalibrateError::Command { command: shown, message: e.to_string() });
            }
        }
        let wait = next.saturating_duration_since(Instant::now()).min(Duration::from_millis(10));
        std::thread::sleep(wait.max(Duration::from_millis(1)));
    }
}

/// `root` and its descendants (from `/proc` on Linux; just `root` elsewhere).
pub fn process_tree(root: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
            // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
            if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|s| s.parse::<u32>().ok()) {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        for &(c, pp) in &parent_of {
            if pp == p && !tree.contains(&c) {
                tree.push(c);
            }
        }
        i += 1;
    }
    tree.sort_unstable();
    tree.dedup();
    tree
}
