//! GPU fragmentation samples on a time grid: an observer of the ledger.

use crate::ledger::Ledger;
use crate::time::{SimDuration, SimTime};

/// The cluster's GPUs at one moment: what is free, and how much of it is stranded on
/// partly used GPUs, where no whole-GPU task fits (the fragmentation Alibaba's FGD paper
/// measures for its typical one-GPU pod).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuSample {
    /// When.
    pub t: SimTime,
    /// Free milli-GPU over all GPUs.
    pub free_milli: u64,
    /// Of it, free milli-GPU on GPUs partly in use.
    pub stranded_milli: u64,
}

/// The fragmentation observer: it reads the ledger (shared, never mutably) between
/// events and records samples of its own, so it cannot change a schedule.
pub(super) struct GpuSampler {
    every: Option<SimDuration>,
    next: SimTime,
    pub(super) samples: Vec<GpuSample>,
}

impl GpuSampler {
    /// A sampler every `every` (none: it samples nothing).
    pub(super) fn new(every: Option<SimDuration>) -> Self {
        GpuSampler { every, next: SimTime::ZERO, samples: Vec::new() }
    }

    /// Samples the GPUs at every sample time before `t`, the time of the next events: the
    /// state then is the current one (events change it only at their times). `first`:
    /// no event has happened yet.
    pub(super) fn before(&mut self, t: SimTime, ledger: &Ledger, first: bool) {
        let Some(every) = self.every else { return };
        if every.0 == 0 || ledger.nodes().is_empty() {
            return;
        }
        if first {
            // Sampling starts at the first grid time at or after the first event.
            self.next = SimTime(t.0.div_ceil(every.0).saturating_mul(every.0));
            return;
        }
        if self.next >= t {
            return;
        }
        let (mut free, mut stranded) = (0u64, 0u64);
        for n in ledger.nodes() {
            for g in n.gpus.iter() {
                free += g.milli_left as u64;
                if g.milli_left > 0 && g.milli_left < crate::ledger::MILLI {
                    stranded += g.milli_left as u64;
                }
            }
        }
        while self.next < t {
            self.samples.push(GpuSample { t: self.next, free_milli: free, stranded_milli: stranded });
            self.next = SimTime(self.next.0.saturating_add(every.0));
        }
    }
}
