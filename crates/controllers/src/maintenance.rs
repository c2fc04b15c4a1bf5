//! `maintenance`: a maintenance window. At `at` the nodes of one rack (or pool) are
//! drained — running jobs finish, nothing new starts on them (Slurm's `scontrol update
//! state=drain reason=maintenance`; `kubectl drain` without eviction) — or, with
//! `mode=down`, taken down at once (their jobs are requeued, as when a rack is powered off).
//! At `until` they are resumed.
//!
//! This file is the worked example of the controller guide: a controller is a struct, a
//! `from_spec` that checks its options, and the three hooks of
//! [`sim_core::controller::Controller`] it needs — here `start`, which asks for two
//! timers, and `on_timer`, which returns the node changes.

use sim_core::cluster::{NodeId, NodeState};
use sim_core::controller::{Action, Controller};
use sim_core::policy::SchedView;
use sim_core::spec::{Chosen, NUMBER, OptionInfo, Spec, SpecError, canonical_values};
use sim_core::time::SimTime;

/// `rack=<name>`: the rack whose nodes are maintained.
pub const RACK: OptionInfo = OptionInfo {
    key: "rack",
    values: &["*"],
    doc: "the rack (the cluster configuration's `topology.rack`) whose nodes are maintained; * = any rack",
};

/// `pool=<name>`: the pool whose nodes are maintained.
pub const POOL: OptionInfo = OptionInfo {
    key: "pool",
    values: &["*"],
    doc: "the node pool whose nodes are maintained; * = any pool (with rack=*: every node)",
};

/// `at=<seconds>`: when the window opens.
pub const AT: OptionInfo = OptionInfo { key: "at", values: NUMBER, doc: "when the window opens, seconds (default 0)" };

/// `until=<seconds>`: when it closes.
pub const UNTIL: OptionInfo =
    OptionInfo { key: "until", values: NUMBER, doc: "when the nodes are resumed, seconds (default: never)" };

/// `mode=drain|down`.
pub const MODE: OptionInfo = OptionInfo {
    key: "mode",
    values: &["drain", "down"],
    doc: "drain: running jobs finish, nothing new starts (Slurm DRAIN); down: the nodes go down at once and \
          their jobs are requeued",
};

/// A maintenance window over one rack or pool (see the module documentation).
pub struct Maintenance {
    rack: Option<String>,
    pool: Option<String>,
    at: u64,
    until: Option<u64>,
    mode: NodeState,
    /// The nodes it maintains, found at start; whether the window is open.
    nodes: Vec<NodeId>,
    open: bool,
}

impl Maintenance {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[RACK, POOL, AT, UNTIL, MODE];

    /// Builds it from a spec. `rack` and `pool` take any name, so they are read as given;
    /// `until` must come after `at`.
    pub fn from_spec(spec: &Spec) -> Result<Self, SpecError> {
        // Free-text options are checked for their key only.
        let mut keys_only = spec.clone();
        keys_only.options.retain(|k, _| k != RACK.key && k != POOL.key);
        let c = Chosen::check(&keys_only, Self::OPTIONS, "controller")?;
        let name = |o: OptionInfo| spec.options.get(o.key).filter(|v| v.as_str() != "*").cloned();
        let at = c.number(AT).unwrap_or(0);
        let until = c.number(UNTIL);
        if until.is_some_and(|u| u <= at) {
            return Err(SpecError::BadValue {
                kind: "controller",
                plugin: spec.name.clone(),
                key: UNTIL.key.into(),
                value: spec.options[UNTIL.key].clone(),
                expected: format!("a time after at={at}"),
            });
        }
        let mode = [NodeState::Draining, NodeState::Down][c.index(MODE)];
        Ok(Maintenance { rack: name(RACK), pool: name(POOL), at, until, mode, nodes: Vec::new(), open: false })
    }
}

impl Controller for Maintenance {
    /// It drains or takes nodes down; labels stay.
    fn may_relabel(&self) -> bool {
        false
    }
    fn spec(&self) -> String {
        let mut opts = vec![
            ("rack", self.rack.clone().unwrap_or_else(|| "*".into())),
            ("pool", self.pool.clone().unwrap_or_else(|| "*".into())),
            ("at", self.at.to_string()),
        ];
        if let Some(u) = self.until {
            opts.push(("until", u.to_string()));
        }
        opts.push(("mode", if self.mode == NodeState::Down { "down" } else { "drain" }.into()));
        canonical_values("maintenance", &opts)
    }

    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        for (pool, nodes) in view.cluster().pool_nodes() {
            let rack_ok = self.rack.as_ref().is_none_or(|r| pool.spec.topology.rack.as_ref() == Some(r));
            let pool_ok = self.pool.as_ref().is_none_or(|p| &pool.name == p);
            if rack_ok && pool_ok {
                self.nodes.extend(nodes.map(NodeId));
            }
        }
        out.push(Action::WakeAt { at: SimTime::from_secs(self.at) });
        if let Some(u) = self.until {
            out.push(Action::WakeAt { at: SimTime::from_secs(u) });
        }
    }

    fn on_timer(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
        // Timers fire in order: the first opens the window, the second closes it.
        let state = if self.open { NodeState::Up } else { self.mode };
        self.open = !self.open;
        out.extend(self.nodes.iter().map(|&node| Action::SetNodeState { node, state }));
    }
}
