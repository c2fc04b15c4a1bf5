//! `sim calibrate sample`: what a workload does on the GPUs.
//!
//! [`run_sampled`] starts the command and reads every GPU through a [`GpuSampler`] every
//! interval until the command ends; [`job_profile`] turns the readings ([`Tick`]s) into
//! a [`JobProfile`]. The NVML sampler is [`crate::nvml::NvmlSampler`];
//! [`RecordedSamples`] replays readings recorded in a TOML or JSON file.
//!
//! # Which GPUs and which memory
//!
//! The job's GPUs are those on which NVML's `running_compute_processes` listed the
//! command or one of its descendants at some reading; its memory there is what those
//! processes used (0 before they appear). When the process was never listed (a
//! container's pid namespace hides it, or the query is unsupported), the fallback is the
//! device's memory in use (`memory_info().used`) on the GPUs that were ever busy (or on
//! every GPU, if none was): other work on those GPUs then counts too.
//!
//! Every figure is per GPU: means and peaks are over every (reading, job GPU) pair.

use crate::CalibrateError;
use crate::fit::{JobReadings, job_profile_of};
use serde::{Deserialize, Serialize};
use sim_core::hardware::JobProfile;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// One GPU at one reading.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuReading {
    /// NVML index.
    pub index: u32,
    /// GPU memory of the workload's processes on this GPU, MiB; `None` when none of them
    /// is listed on it (or the query is unsupported).
    #[serde(default)]
    pub process_memory_mib: Option<u64>,
    /// Device memory in use, MiB.
    pub memory_used_mib: u64,
    /// GPU utilization, percent.
    #[serde(default)]
    pub util_pct: Option<f64>,
    /// Memory-bandwidth utilization, percent.
    #[serde(default)]
    pub mem_util_pct: Option<f64>,
    /// Board power, watts.
    #[serde(default)]
    pub power_w: Option<f64>,
}

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

/// A GPU a sampler reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampledDevice {
    /// NVML index.
    pub index: u32,
    /// Model name.
    pub name: String,
}

/// Something that reads every GPU of the machine.
pub trait GpuSampler {
    /// The GPUs it reads.
    fn devices(&self) -> Vec<SampledDevice>;
    /// One reading of every GPU; `pids` are the workload's processes.
    fn read(&mut self, pids: &[u32]) -> Result<Vec<GpuReading>, CalibrateError>;
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
        job_profile(&self.device, &self.tick, self.duration(), origin)
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
}

/// Where the job's memory figures come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemorySource {
    /// The workload's own processes (`running_compute_processes`).
    Process,
    /// The device's memory in use (the processes were never listed).
    Device,
}

impl MemorySource {
    /// A phrase for messages.
    pub fn describe(self) -> &'static str {
        match self {
            MemorySource::Process => "memory of the command's processes",
            MemorySource::Device => "device memory in use (the command's processes were not listed by NVML)",
        }
    }
}

/// A job profile and where its memory came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    /// The profile.
    pub profile: JobProfile,
    /// The memory source.
    pub memory: MemorySource,
}

/// The job profile of readings taken over `duration_s` seconds (see the module
/// documentation for which GPUs and memory count).
pub fn job_profile(devices: &[SampledDevice], ticks: &[Tick], duration_s: f64, origin: &str) -> Sampled {
    let with_process: BTreeSet<u32> =
        ticks.iter().flat_map(|t| t.gpu.iter()).filter(|g| g.process_memory_mib.is_some()).map(|g| g.index).collect();
    let (set, memory) = if !with_process.is_empty() {
        (with_process, MemorySource::Process)
    } else {
        let busy: BTreeSet<u32> = ticks
            .iter()
            .flat_map(|t| t.gpu.iter())
            .filter(|g| g.util_pct.is_some_and(|u| u > 0.0))
            .map(|g| g.index)
            .collect();
        let set =
            if busy.is_empty() { ticks.iter().flat_map(|t| t.gpu.iter()).map(|g| g.index).collect() } else { busy };
        (set, MemorySource::Device)
    };
    let readings: Vec<&GpuReading> =
        ticks.iter().flat_map(|t| t.gpu.iter()).filter(|g| set.contains(&g.index)).collect();
    let values = JobReadings {
        memory_mib: readings
            .iter()
            .map(|g| match memory {
                MemorySource::Process => g.process_memory_mib.unwrap_or(0),
                MemorySource::Device => g.memory_used_mib,
            })
            .collect(),
        util_pct: readings.iter().filter_map(|g| g.util_pct).collect(),
        mem_util_pct: readings.iter().filter_map(|g| g.mem_util_pct).collect(),
        power_w: readings.iter().filter_map(|g| g.power_w).collect(),
    };
    let names: BTreeMap<u32, &str> = devices.iter().map(|d| (d.index, d.name.as_str())).collect();
    let mut models: Vec<&str> = set.iter().filter_map(|i| names.get(i).copied()).collect();
    models.sort_unstable();
    models.dedup();
    let profile =
        job_profile_of(origin, models.join(", "), set.len() as u32, duration_s, readings.len() as u64, &values);
    Sampled { profile, memory }
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
