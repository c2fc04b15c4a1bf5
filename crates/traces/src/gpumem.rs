//! A seeded generator of GPU memory demand, for traces that carry none (openb, Philly).
//!
//! Each GPU job gets a *declared* GPU memory per GPU (what it asks the scheduler for)
//! and an *actual peak* (what it really uses). Memory demand is drawn independently of
//! the compute share, as measured clusters show (the Alibaba PAI trace reports GPU
//! memory use unrelated to SM use); users mostly over-declare, and a fraction
//! under-declare, which is what makes a memory-aware scheduler still see some OOMs.
//!
//! * declared = `frac × reference_mib`, `frac` uniform in `[0.1, 0.6)` for a shared GPU
//!   and `[0.3, 1.0)` for whole GPUs;
//! * peak = declared × `f`, with `f` uniform in `[1.0, 1.0 + overrun)` for a share
//!   `under` of jobs and in `[0.6, 1.0)` for the others.
//!
//! Draws come from the named stream `gpu-memory` of the run's seed (ChaCha8), one fixed
//! number of draws per job, so a job's values do not depend on the others.

use sim_core::Job;
use sim_core::rng::{RngStreams, uniform_f64};

/// The generator's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuMemoryModel {
    /// Memory of the reference GPU, MiB (the declared fractions are of it).
    pub reference_mib: u64,
    /// Share of jobs whose peak exceeds their declaration.
    pub under: f64,
    /// How far those exceed it at most (0.3 = up to 30 % over).
    pub overrun: f64,
}

impl Default for GpuMemoryModel {
    fn default() -> Self {
        GpuMemoryModel { reference_mib: 16_160, under: 0.1, overrun: 0.3 }
    }
}

impl GpuMemoryModel {
    /// Sets `gpu_memory_mib` (declared) and `gpu_peak_mib` (actual) of every GPU job.
    pub fn assign(&self, jobs: &mut [Job], seed: u64) {
        let mut rng = RngStreams::new(seed).stream("gpu-memory");
        for j in jobs.iter_mut() {
            let (a, b, c) = (uniform_f64(&mut rng), uniform_f64(&mut rng), uniform_f64(&mut rng));
            if j.task.gpus == 0 {
                continue;
            }
            let frac = if j.task.shares_gpu() { 0.1 + 0.5 * a } else { 0.3 + 0.7 * a };
            let declared = ((frac * self.reference_mib as f64).round() as u64).max(1);
            let f = if b < self.under { 1.0 + self.overrun * c } else { 0.6 + 0.4 * c };
            j.task.gpu_memory_mib = declared;
            j.task.gpu_peak_mib = ((declared as f64 * f).round() as u64).max(1);
        }
    }
}
