//! `spot`: a pool of spot (preemptible) capacity, whose nodes the provider reclaims with a
//! short notice and gives back later.
//!
//! A reclaim sends a notice: the node is cordoned, the jobs on it save their progress at once (`save=yes`,
//! a checkpoint written within the notice, as SkyPilot and training frameworks do on the
//! termination notice) and are evicted when it runs out, when the node leaves the cluster
//! (`Absent`: not billed, not schedulable). The capacity comes back later and the node
//! rejoins. Notices: 120 s on AWS (EC2 spot instance interruption notice), 30 s on GCP
//! Spot VMs (Compute Engine preemption notice; 120 s for standard VMs) and Azure.
//!
//! Two ways to say when:
//!
//! * **A hazard** (`reclaim=HOURS,back=HOURS`): each node is reclaimed after an exponential
//!   time of mean `reclaim` and comes back after an exponential time of mean `back`. The
//!   spot traces of `skypilot-org/spot-traces` (Wu et al., "Can't Be Late", NSDI'24) give
//!   a mean time between preemptions of 1.4–3.2 h for AWS p3.2xlarge V100 in April 2023.
//! * **A trace** (`trace=FILE`): a `spot-traces` availability file, `{"metadata":
//!   {"gap_seconds": G}, "data": [n0, n1, …]}`, the spot instances obtainable at each tick
//!   of G seconds from time `start` (default 0: a trace's time 0 is not the workload's,
//!   say where it falls). The pool's first `min(n, count)` nodes are present during a
//!   tick; when `n` drops, its highest nodes get their notice at the tick, and when it rises
//!   they come back. After the last tick the pool stays as it was.
//!
//! Draws (hazard mode) come from the controller's own stream.

use crate::timers::NodeTimers;
use rand_distr::{Distribution, Exp1};
use sim_core::cluster::{NodeId, NodeState};
use sim_core::controller::{Action, Controller};
use sim_core::policy::SchedView;
use sim_core::rng::SimRng;
use sim_core::spec::{Chosen, DECIMAL, OptionInfo, Spec, SpecError, canonical_values, permille_string};
use sim_core::time::{SimDuration, SimTime};

/// `pool=<name>`.
pub const POOL: OptionInfo = OptionInfo { key: "pool", values: &["*"], doc: "the spot pool (required)" };
/// `reclaim=<hours>`.
pub const RECLAIM: OptionInfo = OptionInfo {
    key: "reclaim",
    values: &["2", DECIMAL],
    doc: "mean time a node runs before it is reclaimed, hours (AWS p3.2xlarge V100, April 2023: 1.4-3.2 h)",
};
/// `back=<hours>`.
pub const BACK: OptionInfo =
    OptionInfo { key: "back", values: &["1", DECIMAL], doc: "mean time until reclaimed capacity comes back, hours" };
/// `notice=<seconds>`.
pub const NOTICE: OptionInfo = OptionInfo {
    key: "notice",
    values: &["120", DECIMAL],
    doc: "seconds from the reclaim notice to the node's removal (AWS 120; GCP Spot 30)",
};
/// `save=yes|no`.
pub const SAVE: OptionInfo = OptionInfo {
    key: "save",
    values: &["yes", "no"],
    doc: "yes: jobs checkpoint on the notice and resume from there; no: they lose their work since their last checkpoint",
};
/// `start=<seconds>`.
pub const START: OptionInfo = OptionInfo {
    key: "start",
    values: &["0", "<integer>"],
    doc: "seconds of the run at which the trace's first tick falls (a trace's time 0 is not the workload's)",
};
/// `trace=<file>`.
pub const TRACE: OptionInfo = OptionInfo {
    key: "trace",
    values: &["none"],
    doc: "a skypilot-org/spot-traces availability JSON file replayed instead of the hazard",
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Next {
    /// The notice of a reclaim.
    Notice,
    /// The node leaves.
    Gone,
    /// It comes back.
    Back,
    /// The trace's next tick.
    Tick,
}

/// A spot pool (see the module documentation).
pub struct Spot {
    pool: String,
    reclaim_h: u64,
    back_h: u64,
    notice_s: u64,
    save: bool,
    trace: Option<(String, SimDuration, Vec<u32>)>,
    /// When the trace's first tick falls, seconds.
    start_s: u64,
    rng: SimRng,
    /// The pool's nodes.
    nodes: Vec<u32>,
    /// Nodes present or on notice (trace mode: how many of the first nodes are wanted).
    wanted: usize,
    tick: usize,
    timers: NodeTimers<Next>,
}

impl Spot {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[POOL, RECLAIM, BACK, NOTICE, SAVE, TRACE, START];

    /// Builds it from a spec; `rng` is its own stream. A trace is read here.
    pub fn from_spec(spec: &Spec, rng: SimRng) -> Result<Self, SpecError> {
        let mut keys_only = spec.clone();
        keys_only.options.retain(|k, _| k != POOL.key && k != TRACE.key);
        let c = Chosen::check(&keys_only, Self::OPTIONS, "controller")?;
        let bad = |key: &str, value: &str, expected: String| SpecError::BadValue {
            kind: "controller",
            plugin: spec.name.clone(),
            key: key.into(),
            value: value.into(),
            expected,
        };
        let pool = spec.options.get(POOL.key).filter(|p| p.as_str() != "*").cloned();
        let pool = pool.ok_or_else(|| bad("pool", "*", "the name of the spot pool".into()))?;
        let (reclaim_h, back_h) = (c.permille(RECLAIM), c.permille(BACK));
        if reclaim_h == 0 || back_h == 0 {
            return Err(bad("reclaim", "0", "hours above 0 for reclaim and back".into()));
        }
        let trace = match spec.options.get(TRACE.key).filter(|t| t.as_str() != "none") {
            Some(path) => Some(read_trace(path).map_err(|e| bad("trace", path, e))?),
            None => None,
        };
        Ok(Spot {
            pool,
            reclaim_h,
            back_h,
            notice_s: c.permille(NOTICE),
            save: c.index(SAVE) == 0,
            trace,
            start_s: c.number(START).unwrap_or(0),
            rng,
            nodes: Vec::new(),
            wanted: 0,
            tick: 0,
            timers: NodeTimers::new(),
        })
    }

    fn exp_hours(&mut self, mean_milli_h: u64) -> SimDuration {
        let e: f64 = Exp1.sample(&mut self.rng);
        SimDuration(((mean_milli_h as f64 * 3600.0 * e * 1000.0).round().min(u64::MAX as f64) as u64).max(1))
    }

    /// The notice: the node is cordoned (nothing new starts there, as the AWS Node
    /// Termination Handler does), its jobs save their work and are evicted when the notice
    /// runs out.
    fn notice(&mut self, view: &SchedView<'_>, now: SimTime, node: u32, out: &mut Vec<Action>) {
        let grace = SimDuration(self.notice_s * 1000);
        out.push(Action::SetNodeState { node: NodeId(node), state: NodeState::Draining });
        for job in crate::failures::jobs_on(view, node) {
            if self.save && view.running_job(job).is_some() {
                out.push(Action::Checkpoint { job });
            }
            out.push(Action::Evict { job, grace, reason: format!("spot node {node} reclaimed") });
        }
        self.timers.at(view, now + grace, node, Next::Gone, out);
    }
}

/// Reads a spot-traces availability file: its tick and counts.
fn read_trace(path: &str) -> Result<(String, SimDuration, Vec<u32>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("a readable spot-traces JSON file ({e})"))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("spot-traces JSON, line {}: {e}", e.line()))?;
    let gap = v
        .pointer("/metadata/gap_seconds")
        .and_then(serde_json::Value::as_u64)
        .filter(|&g| g > 0)
        .ok_or("metadata.gap_seconds, a whole number of seconds above 0")?;
    let data = v.get("data").and_then(serde_json::Value::as_array).ok_or("data, an array of instance counts")?;
    let counts = data
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_u64().map(|n| n.min(u64::from(u32::MAX)) as u32).ok_or(format!("data[{i}]: a count, found {x}"))
        })
        .collect::<Result<Vec<u32>, String>>()?;
    Ok((path.to_string(), SimDuration::from_secs(gap), counts))
}

impl Controller for Spot {
    fn may_relabel(&self) -> bool {
        false
    }

    fn spec(&self) -> String {
        let mut opts = vec![("pool", self.pool.clone())];
        if let Some((path, _, _)) = &self.trace {
            opts.push(("trace", path.clone()));
            opts.push(("start", self.start_s.to_string()));
        } else {
            opts.push(("reclaim", permille_string(self.reclaim_h)));
            opts.push(("back", permille_string(self.back_h)));
        }
        opts.push(("notice", permille_string(self.notice_s)));
        opts.push(("save", if self.save { "yes" } else { "no" }.into()));
        canonical_values("spot", &opts)
    }

    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        for (pool, nodes) in view.cluster().pool_nodes() {
            if pool.name == self.pool {
                self.nodes.extend(nodes);
            }
        }
        self.wanted = self.nodes.len();
        if self.trace.is_some() {
            let first = view.now().max(SimTime::from_secs(self.start_s));
            self.timers.at(view, first, 0, Next::Tick, out);
        } else {
            for n in self.nodes.clone() {
                let at = view.now() + self.exp_hours(self.reclaim_h);
                self.timers.at(view, at, n, Next::Notice, out);
            }
        }
    }

    fn on_timer(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let Some((now, node, what)) = self.timers.fired() else { return };
        match what {
            Next::Notice => self.notice(view, now, node, out),
            Next::Gone => {
                out.push(Action::SetNodeState { node: NodeId(node), state: NodeState::Absent });
                if self.trace.is_none() {
                    let at = now + self.exp_hours(self.back_h);
                    self.timers.at(view, at, node, Next::Back, out);
                }
            }
            Next::Back => {
                out.push(Action::SetNodeState { node: NodeId(node), state: NodeState::Up });
                if self.trace.is_none() {
                    let at = now + self.exp_hours(self.reclaim_h);
                    self.timers.at(view, at, node, Next::Notice, out);
                }
            }
            Next::Tick => {
                let (gap, want) = {
                    let (_, gap, data) = self.trace.as_ref().expect("trace mode");
                    (*gap, data.get(self.tick).map(|&n| (n as usize).min(self.nodes.len())))
                };
                let Some(want) = want else { return };
                // The highest nodes leave first and come back last.
                for i in want..self.wanted {
                    self.notice(view, now, self.nodes[i], out);
                }
                for i in self.wanted..want {
                    self.timers.at(view, now, self.nodes[i], Next::Back, out);
                }
                self.wanted = want;
                self.tick += 1;
                self.timers.at(view, now + gap, 0, Next::Tick, out);
            }
        }
    }
}
