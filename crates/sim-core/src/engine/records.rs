//! What a run produced: one record per job, the run's figures, the deadlock if any.

use super::{Engine, EngineError, GpuEnergy, GpuSample, Phase};
use crate::job::JobId;
use crate::outcome::JobRecord;
use crate::time::SimTime;

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// One record per job: the input's in input order, then those controllers submitted
    /// ([`RunResult::submitted`]) in submission order.
    pub records: Vec<JobRecord>,
    /// The jobs controllers submitted during the run, in order (their records follow
    /// the input's).
    pub submitted: Vec<crate::job::Job>,
    /// Scheduling passes run.
    pub passes: u64,
    /// Events processed (arrivals, ends, node changes).
    pub events: u64,
    /// Longest the queue ever was (at the start of a pass).
    pub max_queue: usize,
    /// Set when the run ended with partial gangs holding resources and nothing left to
    /// happen: hold-and-wait with no way out.
    pub deadlock: Option<Deadlock>,
    /// Set when the run was ended because it would spin: nothing ran, nothing was left to
    /// arrive, only the policy's own timers were pending, and a pass would see a state
    /// (queue, held tasks, nodes, timers, the policy's [`crate::policy::Policy::retry_state`])
    /// it had seen before — its retries would see the same cluster for ever.
    pub stall: Option<Stall>,
    /// The GPUs' state over time (see [`super::SimConfig::gpu_sample_every`]).
    pub gpu_samples: Vec<GpuSample>,
    /// GPU energy figures (see [`GpuEnergy`]).
    pub gpu_energy: GpuEnergy,
    /// What each controller that measured something reported at the end
    /// ([`crate::controller::Controller::report`]): its spec and its figures.
    pub controller_reports: Vec<(String, crate::controller::Report)>,
    /// Nodes that changed scheduling domain ([`crate::domain`]), in order; every node
    /// starts in the first domain.
    pub domain_moves: Vec<crate::domain::DomainMove>,
    /// Each domain's scheduler at the end ([`crate::domain::Route::scheduler`]).
    pub domain_schedulers: Vec<u8>,
}

/// A hold-and-wait deadlock of partial gangs, found at the end of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// When the hold-and-wait cycle formed: the last time one of these gangs had a task
    /// placed (jobs that started and ended elsewhere after it do not move it).
    pub since: SimTime,
    /// Gangs holding some of their tasks' resources.
    pub partial_gangs: u32,
    /// GPUs they hold.
    pub gpus_held: u64,
}

/// A run ended because its policy would retry for ever on the same cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stall {
    /// When the state that repeats was first seen.
    pub since: SimTime,
    /// When it was seen again: the run stopped there.
    pub at: SimTime,
    /// Jobs still waiting then.
    pub waiting: u32,
}

impl Engine<'_> {
    /// Why each job without an outcome did not end, in job order: `(index, reason)`.
    /// Waiting jobs are explained by the policy ([`Policy::explain_wait`]) when it can.
    pub(super) fn unfinished_reasons(&mut self) -> Vec<(usize, Box<str>)> {
        // Events or arrivals left: the horizon (or the spin check) stopped the run, not a
        // lack of anything to do.
        let stalled = self.quiet.stall.is_some();
        let stopped = stalled || self.events.peek_key().is_some() || self.next_arrival_time().is_some();
        let prefix = if stalled { "stalled: " } else { "waiting at the horizon: " };
        let mut out = Vec::new();
        if self.ended == self.state.end() {
            return out;
        }
        for i in self.held_ids() {
            if self.state[i].outcome.is_some() || self.state[i].written {
                continue;
            }
            let j = JobId(i as u32);
            if let Some(why) = self.withdrawn.get(&j) {
                out.push((i, why.clone()));
                continue;
            }
            let b = self.bound.get(i);
            let why = match self.state[i].phase {
                Phase::Running if b.is_some_and(|b| b.stalled) => {
                    let what = "bound to a node that is down, not evicted";
                    if stopped { format!("{what} by the horizon") } else { format!("{what}: it tolerates its taints") }
                }
                Phase::Running if b.is_some_and(|b| b.crash_wait.is_some()) => {
                    "waiting to restart in place (CrashLoopBackOff) at the horizon".to_string()
                }
                Phase::Running => "running at the horizon".to_string(),
                Phase::Suspended => "suspended at the horizon (preempted, PreemptMode=SUSPEND)".to_string(),
                Phase::NotArrived => "not submitted by the horizon".to_string(),
                Phase::BackingOff => "backing off before a retry at the horizon".to_string(),
                Phase::Waiting | Phase::Done => {
                    let job = &self.jobs[i];
                    let held = self.holds.get(i).map_or(0, crate::binding::Binding::len);
                    let why = if held > 0 {
                        format!("gang incomplete: {held} of its {} tasks held", job.needed_tasks())
                    } else {
                        let view = sched_view!(self);
                        self.policy.explain_wait(&view, j).unwrap_or_else(|| {
                            format!("never started: {} units asked, {} up", job.units(), self.capacity)
                        })
                    };
                    if stopped { format!("{prefix}{why}") } else { why }
                }
            };
            out.push((i, why.into_boxed_str()));
        }
        out
    }

    /// The ids of the jobs held, in order: a streamed run's kept aside, then its window.
    fn held_ids(&self) -> Vec<usize> {
        self.state.early_ids().chain(self.state.first()..self.state.end()).collect()
    }

    pub(super) fn finish(mut self) -> Result<RunResult, EngineError> {
        // Jobs still running at the end (horizon) used energy up to now.
        let accounted = if self.energy.any_power { self.held_ids() } else { Vec::new() };
        for i in accounted {
            self.account_energy(JobId(i as u32));
        }
        let gpu_energy = self.energy.totals(self.cluster);
        let nothing_left = self.events.peek_key().is_none() && self.next_arrival_time().is_none();
        let mut unfinished = self.unfinished_reasons().into_iter();
        // Nothing is left to happen (the run stops when its events run out, never spins),
        // so partial gangs still holding resources at the end can never complete.
        let partial: Vec<usize> = self.holds.iter().filter(|(_, h)| !h.is_empty()).map(|(i, _)| i).collect();
        let deadlock = (!partial.is_empty() && nothing_left).then(|| Deadlock {
            since: partial.iter().map(|&i| self.bound[i].hold.since).max().unwrap_or_default(),
            partial_gangs: partial.len() as u32,
            gpus_held: partial.iter().map(|&i| self.holds[i].iter().map(|b| b.gpus.len() as u64).sum::<u64>()).sum(),
        });
        // The running jobs' units go to their states, and the per-job tables the records
        // do not need are freed before the records are made (a peak of both otherwise).
        let suspended = self.suspended.keys().map(|&j| (0, j));
        for (_, j) in self.running_by_start.iter().copied().chain(suspended) {
            if let Some(r) = self.running[j.idx()].take() {
                self.state[j.idx()].units = r.units;
            }
        }
        if self.stream.is_none() {
            self.running = Default::default();
            self.rank = Default::default();
            self.arrival_order = Vec::new();
        }
        let ids = self.held_ids();
        let mut records = Vec::new();
        if self.stream.is_none() {
            // Every job, in order (nothing was written).
            records = ids
                .into_iter()
                .map(|i| {
                    let why = if self.state[i].outcome.is_none() { unfinished.next().map(|(_, r)| r) } else { None };
                    self.record_of(i, why)
                })
                .collect();
        } else {
            for i in ids {
                if self.state[i].written {
                    continue;
                }
                let why = if self.state[i].outcome.is_none() { unfinished.next().map(|(_, r)| r) } else { None };
                let record = self.record_of(i, why);
                self.write_record(JobId(i as u32), record)?;
            }
        }
        // A streamed run's jobs not read by the end: not submitted by then.
        while self.stream.as_ref().is_some_and(|s| s.next.is_some()) {
            let (j, _) = self.take_arrival()?;
            let record = self.record_of(j.idx(), Some("not submitted by the horizon".into()));
            self.write_record(j, record)?;
        }
        Ok(RunResult {
            records,
            passes: self.passes,
            events: self.event_count,
            max_queue: self.max_queue,
            deadlock,
            stall: self.quiet.stall.take(),
            gpu_samples: std::mem::take(&mut self.sampler.samples),
            gpu_energy,
            submitted: self.jobs.take_submitted(),
            controller_reports: self
                .controllers
                .iter()
                .map(|c| (c.spec(), c.report()))
                .filter(|(_, r)| !r.is_empty())
                .collect(),
            domain_moves: std::mem::take(&mut self.domains.moves),
            domain_schedulers: self.domains.routes.iter().map(|r| r.scheduler).collect(),
        })
    }
}
