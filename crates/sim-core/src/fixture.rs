//! A [`SchedView`] without a run, for a policy's unit tests: build the state a pass
//! should see — the time, the waiting jobs, the running ones and where they run, node
//! states — and call the policy's `schedule` on it.
//!
//! ```
//! use sim_core::fixture::ViewFixture;
//! use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason};
//! use sim_core::{Cluster, Job, SimDuration, SimTime};
//!
//! /// Starts the queue's head when it fits.
//! struct HeadOnly;
//! impl Policy for HeadOnly {
//!     fn spec(&self) -> String { "head-only".into() }
//!     fn schedule(&mut self, v: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
//!         if let Some(&j) = v.queue().first() && v.job(j).units() <= v.free_units() {
//!             out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
//!         }
//!     }
//! }
//!
//! let s = SimDuration::from_secs;
//! let jobs = vec![
//!     Job::rigid("running", SimTime::ZERO, 3, s(100), s(100)),
//!     Job::rigid("big", SimTime::from_secs(5), 2, s(10), s(10)),
//! ];
//! let cluster = Cluster::processor_pool(4);
//! // At 10 s, "running" holds 3 of the 4 processors and "big" waits for 2.
//! let f = ViewFixture::new(&cluster, &jobs).at(SimTime::from_secs(10)).running(0, SimTime::ZERO).waiting(&[1]);
//! let mut out = Vec::new();
//! HeadOnly.schedule(&f.view(), &PassInfo::default(), &mut out);
//! assert!(out.is_empty());
//! assert_eq!(f.view().free_units(), 1);
//! ```

use crate::binding::Binding;
use crate::cluster::{Cluster, NodeId, NodeState};
use crate::job::{Job, JobId};
use crate::ledger::{Ledger, TaskBinding};
use crate::policy::{RunningJob, SchedView};
use crate::time::SimTime;
use crate::units::FreePool;
use std::collections::BTreeSet;

/// The state behind a [`SchedView`], built by hand (see the module documentation).
pub struct ViewFixture<'a> {
    cluster: &'a Cluster,
    jobs: &'a [Job],
    now: SimTime,
    queue: Vec<JobId>,
    running: Vec<Option<RunningJob>>,
    by_start: BTreeSet<(u64, JobId)>,
    on_nodes: crate::running_on_nodes::RunningOnNodes,
    by_requested_end: BTreeSet<(SimTime, u64, JobId, u64)>,
    free: FreePool,
    ledger: Ledger,
    holds: Vec<Binding>,
    node_state: Vec<NodeState>,
    node_epoch: u64,
    capacity: u64,
    walltime_kill: bool,
    logging: bool,
}

impl<'a> ViewFixture<'a> {
    /// At time 0: every node up, every unit free, nothing waiting or running.
    pub fn new(cluster: &'a Cluster, jobs: &'a [Job]) -> Self {
        let units = cluster.total_units();
        ViewFixture {
            cluster,
            jobs,
            now: SimTime::ZERO,
            queue: Vec::new(),
            running: vec![None; jobs.len()],
            by_start: BTreeSet::new(),
            on_nodes: Default::default(),
            by_requested_end: BTreeSet::new(),
            free: FreePool::all_free(units as u32),
            ledger: Ledger::new(cluster),
            holds: vec![Binding::new(); jobs.len()],
            node_state: vec![NodeState::Up; cluster.node_count() as usize],
            node_epoch: 0,
            capacity: units,
            walltime_kill: false,
            logging: false,
        }
    }

    /// The time of the pass.
    pub fn at(mut self, now: SimTime) -> Self {
        self.now = now;
        self
    }

    /// These jobs wait, in this queue order.
    pub fn waiting(mut self, jobs: &[usize]) -> Self {
        self.queue = jobs.iter().map(|&j| JobId(j as u32)).collect();
        self
    }

    /// Job `j` runs since `start` on the lowest free units (as the engine gives them).
    ///
    /// # Panics
    /// When not enough units are free: the fixture is wrong.
    pub fn running(mut self, j: usize, start: SimTime) -> Self {
        let count = self.jobs[j].units();
        let units = self.free.take_lowest(count).expect("fixture: not enough free units for the running job");
        self.add_running(j, start, units, count, Binding::new());
        self
    }

    /// Job `j` runs since `start` bound to these nodes and GPUs, taken on the ledger (its
    /// pods recorded there when they have labels or inter-pod terms, as the engine does).
    ///
    /// # Panics
    /// When the binding does not fit the ledger: the fixture is wrong.
    pub fn bound(mut self, j: usize, start: SimTime, binding: Vec<TaskBinding>) -> Self {
        let job = &self.jobs[j];
        let pod = job.constraints.as_deref().and_then(crate::constraints::PodInfo::of);
        for b in &binding {
            self.ledger.take(&job.task, &job.gpu_models, b, true).expect("fixture: the binding does not fit");
            if let Some(pod) = &pod {
                self.ledger.label_pod(b.node, j as u32, pod.clone());
            }
        }
        self.add_running(j, start, crate::units::UnitSet::new(), 0, binding.into());
        self
    }

    fn add_running(&mut self, j: usize, start: SimTime, units: crate::units::UnitSet, count: u64, b: Binding) {
        let job = &self.jobs[j];
        let requested_end = start + job.requested.or(job.runtime).unwrap_or_default();
        let (seq, id) = (self.by_start.len() as u64, JobId(j as u32));
        self.by_start.insert((seq, id));
        self.by_requested_end.insert((requested_end, seq, id, count));
        self.running[j] = Some(RunningJob { job: id, start, requested_end, units, count, binding: b });
    }

    /// A node is in `state` (not up: its units are not free and not counted).
    pub fn node(mut self, node: u32, state: NodeState) -> Self {
        let (spec, first) = self.cluster.node(NodeId(node)).expect("fixture: no such node");
        if self.node_state[node as usize] == NodeState::Up && state != NodeState::Up {
            self.capacity -= spec.cores as u64;
            for u in first as u32..first as u32 + spec.cores {
                if self.free.contains(u) {
                    self.free.take(&crate::units::UnitSet::range(u, 1));
                }
            }
        }
        self.node_state[node as usize] = state;
        self.node_epoch += 1;
        self
    }

    /// Jobs are killed at their requested time; the policy may plan with that.
    pub fn walltime_kill(mut self, on: bool) -> Self {
        self.walltime_kill = on;
        self
    }

    /// A decision log is written (policies build `Wait` decisions only then).
    pub fn logging(mut self, on: bool) -> Self {
        self.logging = on;
        self
    }

    /// The view a pass would get.
    pub fn view(&self) -> SchedView<'_> {
        SchedView {
            now: self.now,
            cluster: self.cluster,
            jobs: crate::job_table::Ids::all(self.jobs),
            queue: &self.queue,
            running: crate::job_table::Ids::all(&self.running),
            running_by_start: &self.by_start,
            running_on_nodes: &self.on_nodes,
            running_by_requested_end: &self.by_requested_end,
            free: &self.free,
            ledger: &self.ledger,
            holds: crate::job_table::Ids::all(&self.holds),
            node_state: &self.node_state,
            node_epoch: self.node_epoch,
            node_domain: &[],
            node_reclaim: &[],
            routes: &[],
            domain_names: &[],
            scope: None,
            capacity: self.capacity,
            walltime_kill: self.walltime_kill,
            logging: self.logging,
            jobs_left: self.jobs.len(),
        }
    }
}
