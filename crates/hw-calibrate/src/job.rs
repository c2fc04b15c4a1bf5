//! What a job did on its GPUs ([`MeasuredJob`]), with what was not measured left
//! unknown and the source of every value.
//!
//! A reading NVML cannot give is missing, not 0: utilization on MIG (NVML answers
//! `NotSupported`), power on a board without a sensor. [`MeasuredJob`] keeps such values
//! as `None` and says in `sources` where each value came from or why it is missing.
//!
//! The job-profile file is [`sim_core::hardware::JobProfile`]'s shape, which the
//! workload generator reads (`job_profile` of a class): [`MeasuredJob::to_toml`] leaves
//! an unknown figure out of it and writes the sources into its `[sources]` table, the
//! notes as comment lines on top. A reader takes an absent figure as unknown: the
//! generator leaves the class's utilization unset, so the run's `--gpu-util` applies.

use crate::fit::{deciles, mean_max, round2};
use sim_core::hardware::JobProfile;
use std::collections::BTreeMap;

/// A job profile as measured ([`JobProfile`]: `None` where a value could not be
/// measured, `sources` saying why), with the notes that go on top of its file. It
/// dereferences to its profile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeasuredJob {
    /// The figures and their sources.
    pub profile: JobProfile,
    /// GPUs skipped and other things to know, one line each.
    pub notes: Vec<String>,
}

impl std::ops::Deref for MeasuredJob {
    type Target = JobProfile;
    fn deref(&self) -> &JobProfile {
        &self.profile
    }
}

impl std::ops::DerefMut for MeasuredJob {
    fn deref_mut(&mut self) -> &mut JobProfile {
        &mut self.profile
    }
}

/// Per-GPU values of the samples where the job was present; each list may be shorter
/// than the number of samples (or empty) where a reading was missing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobReadings {
    /// GPU memory used, MiB.
    pub memory_mib: Vec<u64>,
    /// GPU utilization, percent.
    pub util_pct: Vec<f64>,
    /// Memory-bandwidth utilization, percent.
    pub mem_util_pct: Vec<f64>,
    /// Board power, watts.
    pub power_w: Vec<f64>,
}

impl MeasuredJob {
    /// The figures of `readings` (samples of `gpus` GPUs of `gpu_model` over
    /// `duration_s`): peaks, means and memory deciles, rounded as profiles are written;
    /// a figure without readings is `None`. Sources and notes are left empty.
    pub fn from_readings(origin: &str, gpu_model: String, gpus: u32, duration_s: f64, r: &JobReadings) -> Self {
        let mem = mean_max(r.memory_mib.iter().map(|&m| m as f64));
        let util = mean_max(r.util_pct.iter().copied());
        let mem_util = mean_max(r.mem_util_pct.iter().copied());
        let power = mean_max(r.power_w.iter().copied());
        let profile = JobProfile {
            origin: origin.to_string(),
            gpu_model,
            gpus,
            duration_s: (duration_s * 1000.0).round() / 1000.0,
            samples: r.memory_mib.len() as u64,
            peak_memory_mib: mem.map_or(0, |m| m.1 as u64),
            mean_memory_mib: mem.map_or(0, |m| m.0.round() as u64),
            memory_mib_quantiles: deciles(&r.memory_mib),
            mean_util_pct: util.map(|u| round2(u.0)),
            peak_util_pct: util.map(|u| round2(u.1)),
            mean_mem_util_pct: mem_util.map(|u| round2(u.0)),
            mean_power_w: power.map(|p| round2(p.0)),
            peak_power_w: power.map(|p| round2(p.1)),
            sources: BTreeMap::new(),
        };
        MeasuredJob { profile, notes: Vec::new() }
    }

    /// The fields that were not measured.
    pub fn unknown(&self) -> Vec<&'static str> {
        [
            ("mean_util_pct", self.mean_util_pct),
            ("peak_util_pct", self.peak_util_pct),
            ("mean_mem_util_pct", self.mean_mem_util_pct),
            ("mean_power_w", self.mean_power_w),
            ("peak_power_w", self.peak_power_w),
        ]
        .into_iter()
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| k)
        .collect()
    }

    /// As the simulator's job profile: unknown figures stay `None`, and each has a
    /// `sources` entry (`not measured` where none says why).
    pub fn to_job_profile(&self) -> JobProfile {
        let mut profile = self.profile.clone();
        for k in self.unknown() {
            profile.sources.entry(k.to_string()).or_insert_with(|| "not measured".to_string());
        }
        profile
    }

    /// The job-profile file: `comment` and the notes as comment lines, then
    /// [`MeasuredJob::to_job_profile`]: the known figures and the `[sources]` table.
    pub fn to_toml(&self, comment: &str) -> String {
        let mut head = comment.to_string();
        if !self.notes.is_empty() {
            head.push_str("\nnotes:");
            for n in &self.notes {
                head.push_str(&format!("\n  {n}"));
            }
        }
        crate::to_toml(&self.to_job_profile(), &head)
    }
}
