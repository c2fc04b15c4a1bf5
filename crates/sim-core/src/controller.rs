//! Controllers: the second kind of plug-in, beside the scheduling [`crate::policy::Policy`].
//!
//! A policy places waiting jobs. A controller changes the cluster or the workload over
//! time, as Kubernetes controllers do (the node lifecycle controller tainting and evicting,
//! the Job controller re-creating failed pods after a back-off, the Cluster Autoscaler) and
//! as Slurm's background threads do (node health checks, the priority recalculation,
//! power saving). It wakes on timers it asks for and on engine events it is interested
//! in, sees the same read-only [`SchedView`] a policy sees, and returns [`Action`]s;
//! it never reaches into the engine.
//!
//! ## Order (part of the engine's ordering contract, see [`crate::engine`])
//!
//! * Controllers are called in the order they are attached: the built-in ones first
//!   (`node-events` when the run has node events, the node lifecycle controller
//!   [`NodeLifecycleController`] under Kubernetes semantics when nodes may change, then the Job
//!   controller [`JobRetry`]), then those of the cluster configuration, then those given
//!   on the command line.
//! * [`Controller::start`] is called once, in that order, before the first event.
//! * A timer ([`Action::WakeAt`]) is an event of class
//!   [`crate::event::EventClass::Controller`]: at one instant after the job ends and
//!   before arrivals; timers due at one instant fire in the order they were asked for.
//! * What happens in the engine is observed as [`Observed`] items, in the order it
//!   happens. They are delivered in batches: after the instant's events and arrivals
//!   (before its scheduling pass) and after each pass (starts happen in passes); each
//!   item goes to every interested controller in controller order.
//! * Actions are applied one by one in the order a controller returns them, right after
//!   it returns, and checked: an impossible one (an unknown node, evicting a job that is
//!   not running) stops the run with [`crate::EngineError::InvalidAction`]. When actions
//!   changed anything, the pass runs again at the same instant.
//!
//! Each controller draws its randomness from its own named stream (see
//! [`crate::rng::RngStreams`]), so adding one never changes another's draws.

use crate::cluster::{NodeId, NodeState};
use crate::constraints::Taint;
use crate::job::{Job, JobId};
use crate::policy::SchedView;
use crate::time::{SimDuration, SimTime};

mod node_lifecycle;
pub use node_lifecycle::NodeLifecycleController;

/// Something a controller asks the engine to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Call this controller's [`Controller::on_timer`] at `at` (not before now).
    WakeAt {
        /// When.
        at: SimTime,
    },
    /// Put a node in a state: [`NodeState::Down`] fails it (held gang tasks are
    /// released; its running jobs are requeued, Slurm DOWN, or under
    /// [`crate::engine::NodeLifecycle::Kubernetes`] stop making progress until evicted,
    /// see [`NodeLifecycleController`]), [`NodeState::Draining`] drains it (running jobs finish, nothing new
    /// starts: `scontrol update state=drain`, `kubectl cordon`), [`NodeState::Up`]
    /// repairs or resumes it, [`NodeState::Absent`] removes it from the cluster (as
    /// `Down`, but not a failure: scaled in) and `Up` adds it back.
    SetNodeState {
        /// The node.
        node: NodeId,
        /// Its new state.
        state: NodeState,
    },
    /// Add a taint to a node, or replace the one with the same key and effect
    /// (`kubectl taint`). Placement filters and scores see it from the next pass. A
    /// `NoExecute` taint evicts the pods bound to the node that do not tolerate it at once,
    /// those that tolerate it with `tolerationSeconds` that long after, the others never
    /// (Kubernetes' taint eviction controller; see [`crate::constraints::no_execute`]).
    SetTaint {
        /// The node.
        node: NodeId,
        /// The taint.
        taint: Taint,
    },
    /// Remove a node's taints with this key (a pending NoExecute eviction of a pod there
    /// is cancelled when none of its nodes has a NoExecute taint left).
    ClearTaint {
        /// The node.
        node: NodeId,
        /// The taint key.
        key: String,
    },
    /// Set a node label (`kubectl label`).
    SetLabel {
        /// The node.
        node: NodeId,
        /// Label key.
        key: String,
        /// Label value.
        value: String,
    },
    /// Remove a node label.
    ClearLabel {
        /// The node.
        node: NodeId,
        /// Label key.
        key: String,
    },
    /// Stop a running job after `grace` and put it back in the queue (Kubernetes
    /// eviction with `terminationGracePeriodSeconds`; Slurm's requeue after `KillWait`).
    /// It keeps running, holding its resources, until the grace period ends; with a grace
    /// of 0 it stops at once. Progress saved by [`Action::Checkpoint`] is kept.
    Evict {
        /// The job.
        job: JobId,
        /// How long it may still run.
        grace: SimDuration,
        /// Why (the decision log's words).
        reason: String,
    },
    /// Save a running job's progress now: an attempt that is stopped later (evicted, its
    /// node failed) resumes from here when it runs again instead of from the start.
    Checkpoint {
        /// The job.
        job: JobId,
    },
    /// A running job stops making progress now (its processes died with a node that failed
    /// silently): it keeps what it holds until it is requeued (its node set
    /// [`NodeState::Down`] when the failure is detected) or evicted, and its work since its
    /// last checkpoint is lost. It does not end by itself.
    Stall {
        /// The job.
        job: JobId,
    },
    /// Put a job whose attempt was killed (see [`Observed::AttemptKilled`]) back in the
    /// queue at `at` (Kubernetes' Job controller re-creating the pod after its back-off).
    Resubmit {
        /// The job.
        job: JobId,
        /// When it re-enters the queue (not before now).
        at: SimTime,
    },
    /// End a job whose attempt was killed: it ends with that attempt's outcome (the Job
    /// controller's `backoffLimit` reached). A job killed in place
    /// ([`crate::job::RestartPolicy::OnFailure`]) ends when the kubelet would have restarted
    /// it (after its CrashLoopBackOff, [`crate::engine::crash_loop_backoff`]): the restart
    /// that brings its restart count to `backoffLimit` makes the Job controller fail the
    /// Job and delete the pod; until then its pod holds its GPUs.
    GiveUp {
        /// The job.
        job: JobId,
    },
    /// Let a job killed in place ([`crate::job::RestartPolicy::OnFailure`]: its pod keeps
    /// its binding) be restarted by the kubelet, on the same node and GPUs, after its
    /// CrashLoopBackOff ([`crate::engine::crash_loop_backoff`]).
    Restart {
        /// The job.
        job: JobId,
    },
    /// Submit a new job now (it gets the next job id; its record follows the input's).
    Submit {
        /// The job (its `submit` is set to now).
        job: Box<Job>,
    },
    /// End a job for good now, as its owner deleting it does (a Deployment scaled down
    /// deletes a replica's pod): a running one ends `completed` (a service replica has no
    /// work of its own left to do), a waiting one leaves the queue, `unfinished` with
    /// `reason`, one backing off after an out-of-memory kill ends `oom_killed`; one that
    /// has ended is left alone.
    Stop {
        /// The job.
        job: JobId,
        /// Why (the decision log's words, and a waiting job's reason).
        reason: String,
    },
    /// Give a node to a scheduling domain ([`crate::domain`]): from the next pass only that
    /// domain's scheduler places new work there; what runs there runs on. With `reclaim`,
    /// the node is lent: the lender's scheduler may still place work there, and what
    /// runs there then is evicted after the kill wait (CoreWeave SUNK's node lock).
    SetNodeDomain {
        /// The node.
        node: NodeId,
        /// Its new owner (the index of its name).
        domain: u8,
        /// The lender's right to take it back by eviction.
        reclaim: Option<crate::domain::Reclaim>,
    },
    /// Have another domain's scheduler decide a domain's jobs (slurm-bridge: every pod is
    /// a Slurm job).
    RouteDomain {
        /// The domain whose jobs are routed.
        domain: u8,
        /// Where to.
        route: crate::domain::Route,
    },
    /// Record one of the controller's decisions in the decision log (`decisions.jsonl`,
    /// event `controller`), e.g. a scale-up and why. It changes nothing.
    Note {
        /// What it decided (`scale-up`, `scale-down`, ...).
        what: String,
        /// The details and the reason.
        reason: String,
    },
}

/// What a controller measured over a run ([`Controller::report`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Named figures.
    pub figures: Vec<(String, f64)>,
    /// Named series of (time in seconds, value) points, e.g. per hour.
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

impl Report {
    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.figures.is_empty() && self.series.is_empty()
    }
}

/// What a controller can observe happening in the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// A job was submitted (and not rejected).
    Arrived {
        /// The job.
        job: JobId,
    },
    /// A job started an attempt.
    Started {
        /// The job.
        job: JobId,
    },
    /// A job ended for good (see its record for the outcome).
    Ended {
        /// The job.
        job: JobId,
    },
    /// A job's attempt was killed for running out of GPU memory; it waits for a
    /// controller to [`Action::Resubmit`] it or [`Action::GiveUp`] — or, killed in place
    /// (its job's [`crate::job::RestartPolicy::OnFailure`]), to [`Action::Restart`] it or
    /// [`Action::GiveUp`].
    AttemptKilled {
        /// The job.
        job: JobId,
        /// Its attempts killed so far, this one included.
        kills: u32,
    },
    /// A node changed state.
    NodeChanged {
        /// The node.
        node: NodeId,
        /// Its new state.
        state: NodeState,
    },
}

/// Which [`Observed`] items a controller wants (it gets nothing else).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Interests {
    /// Arrivals.
    pub arrivals: bool,
    /// Starts.
    pub starts: bool,
    /// Ends.
    pub ends: bool,
    /// Killed attempts.
    pub kills: bool,
    /// Node changes.
    pub nodes: bool,
}

impl Interests {
    /// Whether it wants `o`.
    pub fn wants(&self, o: &Observed) -> bool {
        match o {
            Observed::Arrived { .. } => self.arrivals,
            Observed::Started { .. } => self.starts,
            Observed::Ended { .. } => self.ends,
            Observed::AttemptKilled { .. } => self.kills,
            Observed::NodeChanged { .. } => self.nodes,
        }
    }

    /// What either wants.
    pub fn union(self, o: Interests) -> Interests {
        Interests {
            arrivals: self.arrivals || o.arrivals,
            starts: self.starts || o.starts,
            ends: self.ends || o.ends,
            kills: self.kills || o.kills,
            nodes: self.nodes || o.nodes,
        }
    }

    /// Whether it wants anything.
    pub fn any(&self) -> bool {
        self.arrivals || self.starts || self.ends || self.kills || self.nodes
    }
}

/// A controller (see the module documentation).
pub trait Controller: Send {
    /// The canonical spec that rebuilds it, e.g. `maintenance[at=3600,...]`.
    fn spec(&self) -> String;
    /// The engine events it wants to observe.
    fn interests(&self) -> Interests {
        Interests::default()
    }
    /// Called once before the first event.
    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let _ = (view, out);
    }
    /// Called at a time it asked for with [`Action::WakeAt`] (once per request).
    fn on_timer(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let _ = (view, out);
    }
    /// Called for each observed item it is interested in.
    fn on_event(&mut self, view: &SchedView<'_>, event: &Observed, out: &mut Vec<Action>) {
        let _ = (view, event, out);
    }
    /// What it measured over the run (`summary.json`, `controllers`); empty for none.
    /// Called once, when the run ends.
    fn report(&self) -> Report {
        Report::default()
    }
    /// Whether it may set or clear node labels ([`Action::SetLabel`],
    /// [`Action::ClearLabel`]): while one that may is attached, a job whose node
    /// selector matches no node's labels is not rejected at submit, since a node may come
    /// to match. Say `false` only when it never does.
    fn may_relabel(&self) -> bool {
        true
    }
}

/// Kubernetes' Job controller for pods killed for running out of GPU memory: the pod is
/// re-created after a back-off of 10 s doubling to 6 min ([`crate::engine::oom_backoff`],
/// `pkg/controller/job` in Kubernetes 1.31) until `backoffLimit` kills (default 6;
/// Volcano's `maxRetry` is 3), then the job fails. A job whose pods restart in place
/// ([`crate::job::RestartPolicy::OnFailure`]) is restarted by the kubelet instead, until
/// its container's restart count reaches `backoffLimit` (`pastBackoffLimitOnFailure`:
/// restarts ≥ `backoffLimit`, or > 0 for a limit of 0): the `backoffLimit`-th kill (the
/// first for 0) is given up. Always attached, after `node-events` and `node-lifecycle`;
/// its limit is [`crate::SimConfig::oom_retries`].
pub struct JobRetry {
    /// Kills after which the job ends `oom_killed`.
    pub retries: u32,
}

impl Controller for JobRetry {
    fn may_relabel(&self) -> bool {
        false
    }
    fn spec(&self) -> String {
        format!("job-retry[retries={}]", self.retries)
    }
    fn interests(&self) -> Interests {
        Interests { kills: true, ..Interests::default() }
    }
    fn on_event(&mut self, view: &SchedView<'_>, event: &Observed, out: &mut Vec<Action>) {
        if let Observed::AttemptKilled { job, kills } = *event {
            if view.job(job).restart_policy() == crate::job::RestartPolicy::OnFailure {
                // The k-th kill is followed by the k-th restart; the Job fails at the one
                // that reaches the limit.
                out.push(if kills < self.retries.max(1) { Action::Restart { job } } else { Action::GiveUp { job } });
            } else if kills <= self.retries {
                out.push(Action::Resubmit { job, at: view.now() + crate::engine::oom_backoff(kills) });
            } else {
                out.push(Action::GiveUp { job });
            }
        }
    }
}

/// Node events given as input ([`crate::SimConfig::node_events`]: a failure trace, a
/// maintenance calendar): each is applied at its time, in time order (input order at
/// equal times), one timer per event.
pub struct NodeEvents {
    events: Vec<(SimTime, NodeId, NodeState)>,
    next: usize,
}

impl NodeEvents {
    /// The events, sorted stably by time.
    pub fn new(mut events: Vec<(SimTime, NodeId, NodeState)>) -> Self {
        events.sort_by_key(|e| e.0);
        NodeEvents { events, next: 0 }
    }
}

impl Controller for NodeEvents {
    fn may_relabel(&self) -> bool {
        false
    }
    fn spec(&self) -> String {
        format!("node-events[events={}]", self.events.len())
    }
    fn start(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
        out.extend(self.events.iter().map(|&(at, _, _)| Action::WakeAt { at }));
    }
    fn on_timer(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
        if let Some(&(_, node, state)) = self.events.get(self.next) {
            self.next += 1;
            out.push(Action::SetNodeState { node, state });
        }
    }
}
