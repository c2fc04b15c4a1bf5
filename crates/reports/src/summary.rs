//! `summary.json`: one run in numbers.

use serde::Serialize;
use sim_core::outcome::RejectReason;
use sim_core::{Job, JobRecord, Outcome, SimTime};
use std::collections::BTreeMap;

/// Bounded-slowdown threshold τ in seconds (Feitelson et al., JSSPP 1997; pyss, Alea).
pub const BSLD_TAU_SECS: f64 = 10.0;

/// What identifies a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunMeta {
    /// Trace file as given (or the embedded default's name).
    pub trace: String,
    /// SHA-256 of the trace file.
    pub trace_sha256: String,
    /// The trace format (`swf`, `batsim`, `openb`, `native`, `sacct`, …).
    pub format: String,
    /// Machine size in units.
    pub machine_units: u64,
    /// GPUs in the cluster.
    pub machine_gpus: u64,
    /// Canonical policy spec.
    pub policy: String,
    /// The policy as the user spelled it (`--policy`, `--policies`); absent when the
    /// default was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_given: Option<String>,
    /// How the workload was varied for this seed (`--perturb`, canonical); absent when it
    /// was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub perturb: Option<String>,
    /// Master seed.
    pub seed: u64,
    /// Whether jobs were killed at their requested time.
    pub walltime_kill: bool,
    /// Rows of the trace that became no job, by reason (a `sacct` dump's job steps and
    /// pending jobs, say); empty when every row is a job. Each job read has its outcome
    /// in `outcomes`.
    pub trace_rows_skipped: BTreeMap<String, u64>,
    /// Canonical specs of the controllers attached (besides the engine's built-in ones),
    /// in order; left out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<String>,
    /// The settings `sim compare --vary` gave this run (key to value, e.g.
    /// `checkpoint_interval` to `600`); left out when none.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub variant: BTreeMap<String, String>,
    /// The run's checkpointing (`--checkpoint`); left out without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<CheckpointMeta>,
    /// The restart rule of interrupted jobs (`--restarts`, e.g. `slurm[requeue=yes,max=5]`);
    /// left out when they are requeued every time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<String>,
}

/// A run's checkpointing, with Young's interval where the failure rate is known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointMeta {
    /// The interval: seconds, or `auto` (Young's optimum per job).
    pub interval: String,
    /// Seconds to write one.
    pub cost_s: f64,
    /// Seconds to read one back.
    pub restore_s: f64,
    /// A node's mean time between failures, hours (from the `failures` controller), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_mtbf_h: Option<f64>,
    /// Young's interval √(2 · cost · MTBF) for a job on one node, seconds, when the MTBF is
    /// known (a job on n nodes sees MTBF / n: its interval is this over √n).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub young_1node_s: Option<f64>,
}

/// Summary statistics of one run (written as `summary.json`).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Run identification.
    #[serde(flatten)]
    pub meta: RunMeta,
    /// Jobs read.
    pub jobs_total: u64,
    /// Jobs per outcome (every outcome listed, zeros included); they add up to
    /// `jobs_total`.
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Rejected jobs per reason.
    pub rejected_by_reason: BTreeMap<&'static str, u64>,
    /// Jobs that started.
    pub jobs_started: u64,
    /// Mean wait (start − submit) of started jobs, seconds.
    pub wait_mean: f64,
    /// Median wait (mean of the two middle values for an even count), seconds.
    pub wait_median: f64,
    /// 95th percentile of wait (nearest rank), seconds.
    pub wait_p95: f64,
    /// Longest wait, seconds.
    pub wait_max: f64,
    /// Mean bounded slowdown of jobs that ran to an end: max(1, (wait+run)/max(run, 10 s)).
    pub bounded_slowdown_mean: f64,
    /// The share of the scarce resource held: on a cluster with GPUs the GPU allocation
    /// (`gpu_allocation`), else the share of cores (`cpu_utilization`).
    pub utilization: f64,
    /// Σ run × units of jobs that ran / (machine units × makespan): the share of the
    /// cores (processors) held.
    pub cpu_utilization: f64,
    /// Σ run × GPUs held (milli-GPU over its GPUs, out-of-memory attempts included) of
    /// attempts that ran / (the cluster's GPUs × makespan): the share of the GPUs
    /// allocated. 0 on a cluster without GPUs.
    pub gpu_allocation: f64,
    /// Last end − first submit, seconds.
    pub makespan: f64,
    /// GPU-hours of the attempts that ran to an end (milli-GPU held over their GPUs × run;
    /// an exclusive pool's GPUs count whole).
    pub gpu_hours: f64,
    /// Attempts killed for running out of GPU memory.
    pub oom_kills: u64,
    /// Of those, how many were requeued or, with restart policy OnFailure, restarted in place
    /// (the rest ended their job `oom_killed`).
    pub oom_retries: u64,
    /// GPU-hours the out-of-memory attempts used before they were killed.
    pub wasted_gpu_hours: f64,
    /// GPU-hours held by gangs waiting for the rest of their tasks.
    pub gang_held_gpu_hours: f64,
    /// Mean time from a gang's first held task to its start, seconds (gangs held in parts).
    pub gang_wait_mean: f64,
    /// Jobs that ended the run holding part of their gang, waiting for the rest: with no
    /// event left to free resources, a deadlock.
    pub stuck_partial_gangs: u64,
    /// The hold-and-wait deadlock the run ended in, if any (`null` otherwise).
    pub deadlock: Option<DeadlockReport>,
    /// Set when the run was ended because its policy would retry for ever on the same
    /// cluster (`null` otherwise).
    pub stalled: Option<StallReport>,
    /// GPU energy of the run, kWh: every GPU with a power curve at idle over the makespan,
    /// plus what each job adds above idle while it runs ([`sim_core::GpuEnergy`]). 0 when
    /// no GPU has a power curve (see `gpus_with_power`).
    pub gpu_energy_kwh: f64,
    /// Of it, the energy attributed to jobs (their GPUs' power while they ran, idle share
    /// included), kWh; out-of-memory and preempted attempts count.
    pub gpu_energy_jobs_kwh: f64,
    /// Of it, GPUs idle (no job on them), kWh.
    pub gpu_energy_idle_kwh: f64,
    /// Mean GPU board power over the makespan, watts.
    pub gpu_power_mean_w: f64,
    /// GPUs whose power is modelled (from a hardware profile).
    pub gpus_with_power: u64,
    /// Jobs stopped and started again (node failures, evictions, preemption requeues);
    /// absent when no job was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interruptions: Option<InterruptionReport>,
    /// The bill, when the cluster configuration prices its pools; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostReport>,
    /// What the controllers measured (an inference service's latency and SLO figures),
    /// one entry per controller that reported; absent when none did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<ControllerFigures>,
    /// Per scheduling domain, by name (Slurm and Kubernetes on one cluster); absent in a
    /// run without domains.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub domains: BTreeMap<String, crate::domains::DomainFigures>,
    /// Nodes that moved between domains; absent in a run without domains.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_moves: Option<u64>,
}

/// One controller's figures ([`sim_core::controller::Controller::report`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ControllerFigures {
    /// Its spec.
    pub spec: String,
    /// Its figures, by name.
    pub figures: BTreeMap<String, f64>,
    /// Its series of [time (s), value] points, by name (absent when none).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub series: BTreeMap<String, Vec<[f64; 2]>>,
}

/// What the run's nodes cost (`price_per_hour` of each pool × its node-hours present over
/// the makespan), and per useful GPU-hour.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostReport {
    /// The bill.
    pub total: f64,
    /// Node-hours present, per capacity type (`on-demand`, `spot`, `reserved`).
    pub node_hours: BTreeMap<&'static str, f64>,
    /// The bill per capacity type.
    pub by_capacity: BTreeMap<&'static str, f64>,
    /// GPU-hours of work of the jobs that completed (run time × GPUs, once each).
    pub useful_gpu_hours: f64,
    /// The bill over them (`null` without GPU work).
    pub per_useful_gpu_hour: Option<f64>,
}

/// What interruptions cost the jobs: their restarts and their effective training time
/// ratio (ETTR: the work done over the time from a job's first start to its end, as Meta
/// reports for Llama 3 and the checkpointing literature defines it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InterruptionReport {
    /// Attempts beyond the first, over all jobs.
    pub restarts: u64,
    /// Jobs with more than one attempt.
    pub jobs_interrupted: u64,
    /// Σ work / Σ (end − first start) over the jobs that completed.
    pub ettr: f64,
    /// The same over the completed jobs that were interrupted.
    pub ettr_interrupted: f64,
    /// GPU-hours lost, by cause: work thrown away by a node failure, an eviction (spot
    /// reclaim, drain), a preemption, an out-of-memory kill; checkpoint writes and
    /// restores; waiting to run again after an interruption (the GPUs the job holds when it
    /// runs, over that time).
    pub lost_gpu_hours: BTreeMap<&'static str, f64>,
    /// The same in core-hours (processor units).
    pub lost_core_hours: BTreeMap<&'static str, f64>,
}

/// A deadlock of partial gangs (see [`sim_core::Deadlock`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DeadlockReport {
    /// Seconds from the trace start at which the hold-and-wait cycle formed (the last
    /// time one of its gangs had a task placed).
    pub since: f64,
    /// Gangs holding part of their tasks.
    pub partial_gangs: u32,
    /// GPUs they hold.
    pub gpus_held: u64,
}

/// A run ended because it would spin (see [`sim_core::Stall`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StallReport {
    /// Seconds from the trace start at which the state that repeats was first seen.
    pub since: f64,
    /// When it was seen again: the run stopped there.
    pub at: f64,
    /// Jobs still waiting then.
    pub waiting: u32,
}

impl From<&sim_core::Stall> for StallReport {
    fn from(s: &sim_core::Stall) -> Self {
        StallReport { since: s.since.0 as f64 / 1e6, at: s.at.0 as f64 / 1e6, waiting: s.waiting }
    }
}

impl From<&sim_core::Deadlock> for DeadlockReport {
    fn from(d: &sim_core::Deadlock) -> Self {
        DeadlockReport { since: d.since.0 as f64 / 1e6, partial_gangs: d.partial_gangs, gpus_held: d.gpus_held }
    }
}

impl Summary {
    /// Computes the summary of a run. Sums run in input order, so the result does not
    /// depend on anything but the inputs.
    pub fn compute(meta: RunMeta, jobs: &[Job], records: &[JobRecord]) -> Summary {
        let mut b = SummaryBuilder::new(sim_core::order_stats::OrderStats::in_memory());
        for (job, rec) in jobs.iter().zip(records) {
            b.add(job, rec).expect("held in memory");
        }
        b.finish(meta).expect("held in memory")
    }

    /// Adds the run's GPU energy ([`sim_core::RunResult::gpu_energy`]): idle power over the
    /// makespan plus the jobs' energy above idle.
    pub fn set_energy(&mut self, e: &sim_core::GpuEnergy) {
        self.gpus_with_power = e.gpus_with_power;
        let idle_j = e.idle_power_mw as f64 / 1000.0 * self.makespan;
        let total_kwh = (idle_j + e.dynamic_mj as f64 / 1000.0) / 3.6e6;
        self.gpu_energy_kwh = total_kwh;
        self.gpu_energy_idle_kwh = (total_kwh - self.gpu_energy_jobs_kwh).max(0.0);
        self.gpu_power_mean_w = if self.makespan > 0.0 { total_kwh * 3.6e6 / self.makespan } else { 0.0 };
    }

    /// A short human-readable table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let row = |s: &mut String, k: &str, v: String| s.push_str(&format!("  {k:<24} {v}\n"));
        row(&mut s, "policy", self.meta.policy.clone());
        row(&mut s, "trace", format!("{} ({} units)", self.meta.trace, self.meta.machine_units));
        if let Some(r) = &self.meta.restarts {
            row(&mut s, "restarts", r.clone());
        }
        row(&mut s, "jobs", self.jobs_total.to_string());
        for (k, v) in &self.outcomes {
            if *v > 0 {
                // `failed` is the trace's word (SWF status 0, sacct FAILED): the job ran
                // its logged time and the log says it failed; the simulation fails a job
                // only past its restart limit (`--restarts`).
                let label = match (*k, &self.meta.restarts) {
                    ("failed", None) => "failed (trace status)",
                    ("failed", Some(_)) => "failed (trace, limit)",
                    _ => k,
                };
                row(&mut s, &format!("  {label}"), v.to_string());
            }
        }
        row(&mut s, "wait mean / median (s)", format!("{:.1} / {:.1}", self.wait_mean, self.wait_median));
        row(&mut s, "wait p95 / max (s)", format!("{:.1} / {:.1}", self.wait_p95, self.wait_max));
        row(&mut s, "bounded slowdown (mean)", format!("{:.3}", self.bounded_slowdown_mean));
        if self.meta.machine_gpus > 0 {
            // On a GPU cluster the GPUs are what is scarce: their allocation leads.
            row(&mut s, "GPU allocation", format!("{:.4} of {} GPUs", self.gpu_allocation, self.meta.machine_gpus));
            row(&mut s, "core utilization", format!("{:.4}", self.cpu_utilization));
        } else {
            row(&mut s, "utilization", format!("{:.4}", self.utilization));
        }
        row(&mut s, "makespan (s)", format!("{:.0}", self.makespan));
        if self.gpu_hours > 0.0 || self.oom_kills > 0 {
            row(&mut s, "GPU-hours", format!("{:.1}", self.gpu_hours));
            row(&mut s, "OOM kills / retries", format!("{} / {}", self.oom_kills, self.oom_retries));
            row(&mut s, "wasted GPU-hours", format!("{:.2}", self.wasted_gpu_hours));
        }
        if self.gpus_with_power > 0 {
            let e = format!(
                "{:.1} (jobs {:.1}, idle GPUs {:.1}); mean power {:.0} W in all, {:.0} W per GPU ({} GPUs)",
                self.gpu_energy_kwh,
                self.gpu_energy_jobs_kwh,
                self.gpu_energy_idle_kwh,
                self.gpu_power_mean_w,
                self.gpu_power_mean_w / self.gpus_with_power as f64,
                self.gpus_with_power
            );
            row(&mut s, "GPU energy (kWh)", e);
        }
        if self.gang_held_gpu_hours > 0.0 || self.stuck_partial_gangs > 0 {
            row(&mut s, "GPU-hours held by gangs", format!("{:.2}", self.gang_held_gpu_hours));
            row(&mut s, "gang wait mean (s)", format!("{:.1}", self.gang_wait_mean));
            row(&mut s, "stuck partial gangs", self.stuck_partial_gangs.to_string());
        }
        if let Some(i) = &self.interruptions {
            let what = format!(
                "{} restarts of {} jobs; ETTR {:.4} ({:.4} of those)",
                i.restarts, i.jobs_interrupted, i.ettr, i.ettr_interrupted
            );
            row(&mut s, "interruptions", what);
            // GPU-hours on a GPU cluster, core-hours otherwise.
            let (lost, unit) = if self.meta.machine_gpus > 0 {
                (&i.lost_gpu_hours, "GPU-hours")
            } else {
                (&i.lost_core_hours, "core-hours")
            };
            let parts: Vec<String> = sim_core::LostTime::CAUSES
                .iter()
                .filter(|k| lost[*k] > 0.0)
                .map(|k| format!("{k} {:.1}", lost[k]))
                .collect();
            if !parts.is_empty() {
                row(&mut s, &format!("lost {unit}"), parts.join(", "));
            }
        }
        if let Some(c) = &self.cost {
            let per = c.per_useful_gpu_hour.map_or(String::new(), |p| format!("; {p:.3} per useful GPU-hour"));
            let parts: Vec<String> = c.by_capacity.iter().map(|(k, v)| format!("{k} {v:.2}")).collect();
            row(&mut s, "cost", format!("{:.2} ({}){per}", c.total, parts.join(", ")));
        }
        for (name, d) in &self.domains {
            let util = d.gpu_utilization.map_or("no nodes of its own".to_string(), |u| format!("{u:.3} of its nodes"));
            let what = format!(
                "{} jobs; wait mean {:.1} s, p95 {:.1} s; GPUs {util}, {:.3} of the cluster; {} requeued, {:.1} \
                 GPU-hours lost",
                d.jobs, d.wait_mean, d.wait_p95, d.gpu_share, d.requeues, d.lost_gpu_hours
            );
            row(&mut s, &format!("domain {name}"), what);
        }
        if let Some(m) = self.node_moves {
            row(&mut s, "node moves", m.to_string());
        }
        for c in &self.controllers {
            let name = c.spec.split('[').next().unwrap_or_default();
            let parts: Vec<String> = c.figures.iter().map(|(k, v)| format!("{k} {}", short(*v))).collect();
            row(&mut s, name, parts.join(", "));
        }
        if let Some(d) = &self.deadlock {
            let what = format!(
                "since {:.0} s: {} partial gangs hold {} GPUs, nothing can progress",
                d.since, d.partial_gangs, d.gpus_held
            );
            row(&mut s, "DEADLOCK", what);
        }
        if let Some(st) = &self.stalled {
            let what = format!(
                "from {:.0} s the policy's retries saw the same cluster again ({:.0} s): stopped with {} jobs waiting",
                st.since, st.at, st.waiting
            );
            row(&mut s, "STALLED", what);
        }
        s
    }
}

/// [`Summary::compute`] a job at a time, for a replay that streams its records: the same
/// figures, byte for byte, with the waits' order statistics spilled to disk past a
/// budget ([`sim_core::order_stats`]).
pub struct SummaryBuilder {
    t: Totals,
    jobs: u64,
    first_submit: Option<u64>,
    energy_mj: u128,
}

impl SummaryBuilder {
    /// Nothing added yet; the waits kept in `waits`.
    pub fn new(waits: sim_core::order_stats::OrderStats) -> Self {
        let mut t = Totals::new();
        t.waits = waits;
        SummaryBuilder { t, jobs: 0, first_submit: None, energy_mj: 0 }
    }

    /// Adds one job and its record, in input order.
    pub fn add(&mut self, job: &Job, rec: &JobRecord) -> std::io::Result<()> {
        let in_order = self.add_unordered(job, rec)?;
        self.add_in_order(in_order);
        Ok(())
    }

    /// Adds what of a job's figures does not depend on the order jobs are added (counts,
    /// integer sums, extremes, the waits); returns what does, for
    /// [`SummaryBuilder::add_in_order`] in input order (a streamed replay gets its records
    /// as the jobs end).
    pub fn add_unordered(&mut self, job: &Job, rec: &JobRecord) -> std::io::Result<InOrder> {
        self.jobs += 1;
        self.first_submit = Some(self.first_submit.map_or(job.submit.0, |f| f.min(job.submit.0)));
        self.energy_mj += rec.gpu_energy_mj as u128;
        self.t.add(job, rec)
    }

    /// Adds a job's [`InOrder`] part; jobs in input order.
    pub fn add_in_order(&mut self, o: InOrder) {
        if let Some(b) = o.bounded_slowdown {
            self.t.bsld_sum += b;
        }
    }
}

/// What of a job's figures is summed in floating point, so in input order: its bounded
/// slowdown, when it ran to an end.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InOrder {
    /// `max(1, (wait + run) / max(run, τ))`.
    pub bounded_slowdown: Option<f64>,
}

impl SummaryBuilder {
    /// The summary of the jobs added.
    pub fn finish(self, meta: RunMeta) -> std::io::Result<Summary> {
        let mut t = self.t;
        let waits = Waits::of(std::mem::replace(&mut t.waits, sim_core::order_stats::OrderStats::in_memory()))?;
        let jobs_started = waits.n;
        let first_submit = self.first_submit;
        let makespan_us = match (first_submit, t.last_end) {
            (Some(f), Some(l)) => l.saturating_sub(f),
            _ => 0,
        };
        let cpu_utilization = if makespan_us == 0 || meta.machine_units == 0 {
            0.0
        } else {
            t.area as f64 / (meta.machine_units as f64 * makespan_us as f64)
        };
        let gpu_allocation = if makespan_us == 0 || meta.machine_gpus == 0 {
            0.0
        } else {
            (t.gpu_milli_us + t.wasted_milli_us) as f64 / 1000.0 / (meta.machine_gpus as f64 * makespan_us as f64)
        };
        // On a GPU cluster the GPUs are what is scarce: their allocation is the utilization.
        let utilization = if meta.machine_gpus > 0 { gpu_allocation } else { cpu_utilization };
        Ok(Summary {
            meta,
            jobs_total: self.jobs,
            outcomes: t.outcomes,
            rejected_by_reason: t.rejected_by_reason,
            jobs_started,
            wait_mean: waits.mean,
            wait_median: waits.median,
            wait_p95: waits.p95,
            wait_max: waits.max,
            bounded_slowdown_mean: if t.bsld_n == 0 { 0.0 } else { t.bsld_sum / t.bsld_n as f64 },
            utilization,
            cpu_utilization,
            gpu_allocation,
            makespan: makespan_us as f64 / 1e6,
            gpu_hours: t.gpu_milli_us as f64 / 1000.0 / 3.6e9,
            oom_kills: t.oom_kills,
            oom_retries: t.oom_retries,
            wasted_gpu_hours: t.wasted_milli_us as f64 / 1000.0 / 3.6e9,
            gang_held_gpu_hours: t.held_milli_us as f64 / 1000.0 / 3.6e9,
            gang_wait_mean: if t.gang_n == 0 { 0.0 } else { t.gang_wait as f64 / t.gang_n as f64 / 1e6 },
            stuck_partial_gangs: t.stuck,
            deadlock: None,
            stalled: None,
            gpu_energy_kwh: 0.0,
            gpu_energy_jobs_kwh: self.energy_mj as f64 / 3.6e9,
            gpu_energy_idle_kwh: 0.0,
            gpu_power_mean_w: 0.0,
            gpus_with_power: 0,
            cost: None,
            controllers: Vec::new(),
            domains: BTreeMap::new(),
            node_moves: None,
            interruptions: (t.restarts > 0 || t.lost_gpu.iter().chain(&t.lost_core).any(|&x| x > 0)).then(|| {
                let hours = |v: &[u128; 7]| {
                    sim_core::LostTime::CAUSES.iter().zip(v).map(|(k, &x)| (*k, x as f64 / 3.6e9)).collect()
                };
                InterruptionReport {
                    restarts: t.restarts,
                    jobs_interrupted: t.interrupted,
                    ettr: ratio(t.work_all, t.life_all),
                    ettr_interrupted: ratio(t.work_interrupted, t.life_interrupted),
                    lost_gpu_hours: hours(&t.lost_gpu),
                    lost_core_hours: hours(&t.lost_core),
                }
            }),
        })
    }
}

/// What [`Summary::compute`] sums over a run's jobs, in input order.
struct Totals {
    outcomes: BTreeMap<&'static str, u64>,
    rejected_by_reason: BTreeMap<&'static str, u64>,
    /// Waits of the jobs that started, µs.
    waits: sim_core::order_stats::OrderStats,
    bsld_sum: f64,
    bsld_n: u64,
    /// Σ run × units, µs.
    area: u128,
    last_end: Option<u64>,
    gpu_milli_us: u128,
    wasted_milli_us: u128,
    oom_kills: u64,
    oom_retries: u64,
    held_milli_us: u128,
    gang_wait: u128,
    gang_n: u64,
    stuck: u64,
    /// Attempts beyond the first; jobs with any.
    restarts: u64,
    interrupted: u64,
    /// Σ work and Σ life (end − first start) of completed jobs, µs: all, interrupted.
    work_all: u128,
    life_all: u128,
    work_interrupted: u128,
    life_interrupted: u128,
    /// Lost GPU-µs and unit-µs by cause ([`sim_core::LostTime::CAUSES`]).
    lost_gpu: [u128; 7],
    lost_core: [u128; 7],
}

/// `a / b`, 0 when `b` is 0.
fn ratio(a: u128, b: u128) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

impl Totals {
    /// Nothing summed yet: every outcome listed at zero.
    fn new() -> Totals {
        Totals {
            outcomes: Outcome::NAMES.iter().map(|n| (*n, 0)).collect(),
            rejected_by_reason: BTreeMap::new(),
            waits: sim_core::order_stats::OrderStats::in_memory(),
            bsld_sum: 0.0,
            bsld_n: 0,
            area: 0,
            last_end: None,
            gpu_milli_us: 0,
            wasted_milli_us: 0,
            oom_kills: 0,
            oom_retries: 0,
            held_milli_us: 0,
            gang_wait: 0,
            gang_n: 0,
            stuck: 0,
            restarts: 0,
            interrupted: 0,
            work_all: 0,
            life_all: 0,
            work_interrupted: 0,
            life_interrupted: 0,
            lost_gpu: [0; 7],
            lost_core: [0; 7],
        }
    }

    /// Adds one job and its record but its [`InOrder`] part, returned.
    fn add(&mut self, job: &Job, rec: &JobRecord) -> std::io::Result<InOrder> {
        self.held_milli_us += rec.gang_held_gpu_milli_us as u128;
        if let Some(w) = rec.gang_wait_us {
            self.gang_wait += w as u128;
            self.gang_n += 1;
        }
        self.stuck += u64::from(rec.stuck_holding);
        let gpus = u128::from(job.tasks) * u128::from(job.task.gpus);
        for (i, us) in rec.lost.by_cause().into_iter().enumerate() {
            self.lost_gpu[i] += u128::from(us) * gpus;
            self.lost_core[i] += u128::from(us) * u128::from(job.units());
        }
        let again = u64::from(rec.attempts.saturating_sub(1));
        self.restarts += again;
        // A job failed or held at its first interruption (`--restarts`) ran once.
        let l = &rec.lost;
        self.interrupted += u64::from(again > 0 || l.failure + l.eviction + l.preemption + l.oom > 0);
        if let (Outcome::Completed, Some(f), Some(e)) = (rec.outcome, rec.first_start, rec.end) {
            let (work, life) = (rec.work(job.runtime.unwrap_or_default()).0 as u128, (e - f).0 as u128);
            self.work_all += work;
            self.life_all += life;
            if again > 0 {
                self.work_interrupted += work;
                self.life_interrupted += life;
            }
        }
        self.oom_kills += rec.oom_kills as u64;
        self.oom_retries += rec.oom_kills as u64 - u64::from(rec.outcome == Outcome::OomKilled);
        self.wasted_milli_us += rec.wasted_gpu_milli_us as u128;
        *self.outcomes.get_mut(rec.outcome.name()).expect("all outcomes listed") += 1;
        if let Outcome::Rejected(r) = rec.outcome {
            *self.rejected_by_reason.entry(RejectReason::as_str(r)).or_default() += 1;
        }
        let mut in_order = InOrder::default();
        if let Some(s) = rec.start {
            self.waits.push((s - job.submit).0)?;
            if let Some(e) = rec.end {
                in_order.bounded_slowdown = Some(self.add_ended(job, rec, s, e));
            }
        }
        Ok(in_order)
    }

    /// Adds a job that started at `s` and ended at `e`; returns its bounded slowdown.
    fn add_ended(&mut self, job: &Job, rec: &JobRecord, s: SimTime, e: SimTime) -> f64 {
        let run = (e - s).0;
        self.area += run as u128 * job.units() as u128;
        if rec.outcome != Outcome::OomKilled {
            self.gpu_milli_us += run as u128 * gpu_milli_held(job, rec);
        }
        let w = (s - job.submit).0 as f64 / 1e6;
        let r = run as f64 / 1e6;
        self.bsld_n += 1;
        self.last_end = Some(self.last_end.map_or(e.0, |l: u64| l.max(e.0)));
        ((w + r) / r.max(BSLD_TAU_SECS)).max(1.0)
    }
}

/// The milli-GPUs a job's last attempt held: what the engine recorded, else its request
/// (an exclusive pool's GPUs count whole).
pub(crate) fn gpu_milli_held(job: &Job, rec: &JobRecord) -> u128 {
    if rec.gpu_milli_held > 0 {
        u128::from(rec.gpu_milli_held)
    } else {
        u128::from(job.tasks) * u128::from(job.task.gpus) * u128::from(job.task.gpu_milli())
    }
}

/// Wait statistics of the jobs that started, seconds (0 when none started).
struct Waits {
    n: u64,
    mean: f64,
    median: f64,
    p95: f64,
    max: f64,
}

impl Waits {
    /// Of `waits` (µs).
    fn of(waits: sim_core::order_stats::OrderStats) -> std::io::Result<Waits> {
        let secs = |us: u64| us as f64 / 1e6;
        let n = waits.len();
        if n == 0 {
            return Ok(Waits { n, mean: 0.0, median: 0.0, p95: 0.0, max: 0.0 });
        }
        let mean = waits.sum() as f64 / n as f64 / 1e6;
        let max = secs(waits.max());
        // The median's two middle ranks (one when odd), the 95th percentile's nearest
        // rank.
        let ranks = [(n - 1) / 2, n / 2, (n * 95).div_ceil(100) - 1];
        let v = waits.at_ranks(&ranks)?;
        let median = if n % 2 == 1 { secs(v[1]) } else { (secs(v[0]) + secs(v[1])) / 2.0 };
        Ok(Waits { n, mean, median, p95: secs(v[2]), max })
    }
}

/// A figure with at most three decimals, trailing zeros dropped.
fn short(v: f64) -> String {
    let t = format!("{v:.3}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" { "0".into() } else { t.to_string() }
}
