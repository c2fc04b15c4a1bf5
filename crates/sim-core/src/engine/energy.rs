//! The GPU energy model: an observer of attempts that end.

use crate::binding::Binding;
use crate::cluster::Cluster;
use crate::job::{Job, JobId};
use crate::time::SimTime;

/// The run's GPU energy, from the GPUs' power curves ([`crate::PowerCurve`]).
///
/// The model (as GPU simulators without a power trace do it): each GPU draws its idle
/// power all the time, and a job adds, on each of its GPUs, the difference between the
/// board power at its utilization and idle, while it runs. A job that shares a GPU
/// (milli-GPU) contributes its share of the utilization; in an exclusive pool it holds the
/// whole GPU. So the run's GPU energy is `idle_power_mw × span + dynamic_mj`, where the
/// span is the report's makespan; a job's energy ([`crate::JobRecord::gpu_energy_mj`]) is its
/// dynamic energy plus its share of its GPUs' idle power. Exact for power linear in
/// utilization, or exclusive GPUs; with curved power and shared GPUs the shares are each
/// job's own utilization's, not the sum's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuEnergy {
    /// GPUs with a power curve (the others count for nothing).
    pub gpus_with_power: u64,
    /// Sum of their idle power, milliwatts.
    pub idle_power_mw: u64,
    /// Energy above idle of every attempt that ran on them (out-of-memory and preempted
    /// attempts included), millijoules.
    pub dynamic_mj: u64,
}

/// The energy observer: it sees each attempt that ends (read-only) and adds up its
/// energy; it holds no reference into the engine and returns nothing the engine reads
/// back before the run ends, so it cannot change a schedule.
pub(super) struct EnergyMeter {
    /// Whether any GPU has a power curve (else nothing is counted, and nothing is spent).
    pub(super) any_power: bool,
    /// Utilization of a job that does not say, per mille.
    default_util: u16,
    /// Energy above idle of the attempts ended so far, millijoules.
    dynamic_mj: u64,
    /// Whether energy is kept per job (policies that bind nodes, GPUs with power).
    per_job: bool,
    /// Per job, its attempts' energy, millijoules.
    job_mj: crate::job_table::JobTable<u64>,
}

impl EnergyMeter {
    /// A meter for `jobs` jobs on `cluster`; `binds`: jobs are bound to GPUs.
    pub(super) fn new(cluster: &Cluster, jobs: usize, binds: bool, default_util: u16) -> Self {
        let any_power = cluster.pools.iter().any(|p| p.spec.gpus.iter().any(|g| g.power.is_some()));
        let per_job = any_power && binds;
        EnergyMeter {
            any_power,
            default_util,
            dynamic_mj: 0,
            per_job,
            job_mj: crate::job_table::JobTable::from_vec(if per_job { vec![0; jobs] } else { Vec::new() }),
        }
    }

    /// Adds the GPU energy of job `j` on `binding` from `from` to `to` (an attempt, or
    /// the part of it that used its GPUs; [`GpuEnergy`]'s model).
    #[inline(never)]
    pub(super) fn attempt_ended(
        &mut self,
        cluster: &Cluster,
        job: &Job,
        j: JobId,
        binding: &Binding,
        from: SimTime,
        to: SimTime,
    ) {
        let task = &job.task;
        let util = if task.gpu_util_permille > 0 { task.gpu_util_permille } else { self.default_util };
        let us = (to - from).0 as u128;
        let (mut total, mut dynamic) = (0u128, 0u128);
        for b in binding {
            let Some(pool) = cluster.pool_of(b.node) else { continue };
            let share = if pool.sharing == crate::cluster::GpuSharing::Exclusive { 1000 } else { task.gpu_milli() };
            for &g in &b.gpus {
                let Some(curve) = pool.spec.gpus.get(g as usize).and_then(|g| g.power.as_ref()) else { continue };
                let load = u32::from(util).min(1000) * share / 1000;
                let above = curve.at_permille(load).saturating_sub(curve.idle_mw()) as u128;
                dynamic += above * us;
                total += (above + curve.idle_mw() as u128 * share as u128 / 1000) * us;
            }
        }
        // milliwatt × microsecond = 1e-6 millijoule.
        let mj = |x: u128| (x / 1_000_000).min(u64::MAX as u128) as u64;
        self.dynamic_mj = self.dynamic_mj.saturating_add(mj(dynamic));
        if let Some(e) = self.job_mj.get_mut(j.idx()) {
            *e = e.saturating_add(mj(total));
        }
    }

    /// Makes room for a job submitted during the run.
    pub(super) fn add_job(&mut self) {
        if self.per_job {
            self.job_mj.push(0);
        }
    }

    /// Forgets the oldest job's energy (a streamed run's, once its record is written).
    pub(super) fn drop_first(&mut self) {
        if self.per_job {
            self.job_mj.drop_first();
        }
    }

    /// Keeps the oldest job's energy aside (a streamed run's job still running).
    pub(super) fn keep_first(&mut self) {
        if self.per_job {
            self.job_mj.keep_first();
        }
    }

    /// Forgets the energy of job `i`, kept aside.
    pub(super) fn drop_early(&mut self, i: usize) {
        self.job_mj.drop_early(i);
    }

    /// Job `j`'s energy so far, millijoules.
    pub(super) fn job_mj(&self, j: usize) -> u64 {
        self.job_mj.get(j).copied().unwrap_or(0)
    }

    /// The run's figures: the GPUs with a power curve and their idle power, and the
    /// energy above idle.
    pub(super) fn totals(&self, cluster: &Cluster) -> GpuEnergy {
        let mut e = GpuEnergy { dynamic_mj: self.dynamic_mj, ..GpuEnergy::default() };
        for (_, spec, _) in cluster.nodes() {
            for g in spec.gpus.iter().filter_map(|g| g.power.as_ref()) {
                e.gpus_with_power += 1;
                e.idle_power_mw += g.idle_mw();
            }
        }
        e
    }
}
