//! `failures`: random node failures and repairs, per node, as a failure model fitted to a
//! real fleet describes them.
//!
//! Each node of the chosen pool fails after a time drawn from an exponential or Weibull
//! distribution of mean `mtbf`, independently of the others. A failure is silent at first:
//! the jobs on the node stop making progress at once (their work since their last
//! checkpoint is lost) but keep what they hold until the failure is detected `detect`
//! seconds later, when the node goes `DOWN` and they are requeued — Slurm's
//! `SlurmdTimeout` (300 s default, `slurm.conf(5)`, 24.05: slurmctld marks a node that has
//! not answered for that long DOWN and requeues its jobs). Under the Kubernetes node
//! lifecycle (`kube` policies), use `detect=0`: the node goes down at once and the built-in
//! `node-lifecycle` controller models the node-monitor grace period and the
//! `unreachable:NoExecute` toleration. The node is repaired after a lognormal time drawn
//! from its detection, then fails again after a new draw.
//!
//! Defaults are those of the InfiniteHBD fault trace (`stepfun-ai/InfiniteHBD-Trace`,
//! SIGCOMM'25: 400 GPU servers over 348 days): 4.2e-3 faults per server-day (`mtbf` =
//! 5714 h), repairs of median 20.4 h and mean 133 h (a lognormal of σ = √(2 ln(133/20.4))
//! = 1.94). Meta's Llama 3 run (419 interruptions in 54 days on 2,048 8-GPU servers,
//! Dubey et al. 2024, Table 5) gives 3.8e-3 per server-day (`mtbf=6316`).
//!
//! With `domain=rack|switch|zone|N`, what fails is a failure domain instead of a node:
//! the nodes of a rack, a leaf switch or a zone (the cluster's topology; nodes without one
//! at that level never fail under it), or each block of `N` consecutive nodes (a power
//! feed, a chassis). All its nodes that are up fail together, are detected together and
//! come back together, at the domain's own `mtbf` — the correlated failures that a gang
//! spread over one rack meets all at once. Attach one `failures` per failure process:
//! per-node failures and rack failures, or one per cause (`cause=GPU`, with its own rate
//! and repair time, as `sim trace fit-failures --by-cause` writes them).
//!
//! **Empirical distributions.** `tbf_file=FILE` and `repair_file=FILE` replace the
//! exponential or Weibull time between failures and the lognormal repair by draws, with
//! replacement, from the hours a file lists (one per line, `#` comments), as
//! `sim trace fit-failures --samples` writes them from a fault log.
//!
//! While no job runs, nodes do not fail (their draws are skipped): the repairs bring the
//! cluster back whole, so a job that needs more nodes than the failures leave up starts
//! in the end, and every run ends.
//!
//! Draws come from the controller's own stream (`controller/failures/<position>`), one
//! per failure and one per repair, node by node in time order: the same seed gives the
//! same failures whatever the workload or policy.

use crate::timers::NodeTimers;
use rand_distr::{Distribution, Exp1, StandardNormal};
use sim_core::cluster::{NodeId, NodeState};
use sim_core::controller::{Action, Controller};
use sim_core::policy::SchedView;
use sim_core::rng::{SimRng, uniform_index};
use sim_core::spec::{Chosen, DECIMAL, OptionInfo, Spec, SpecError, canonical_values, permille_string};
use sim_core::time::SimDuration;
use std::collections::{BTreeMap, BTreeSet};

/// `pool=<name>`.
pub const POOL: OptionInfo =
    OptionInfo { key: "pool", values: &["*"], doc: "the node pool whose nodes fail; * = every node" };
/// `mtbf=<hours>`.
pub const MTBF: OptionInfo = OptionInfo {
    key: "mtbf",
    values: &["5714", DECIMAL],
    doc: "mean time between failures of one node, hours (InfiniteHBD: 4.2e-3 faults per node-day; Llama 3: 6316)",
};
/// `dist=exponential|weibull`.
pub const DIST: OptionInfo = OptionInfo {
    key: "dist",
    values: &["exponential", "weibull"],
    doc: "the distribution of the time to a node's next failure (mean mtbf)",
};
/// `shape=<k>`.
pub const SHAPE: OptionInfo = OptionInfo {
    key: "shape",
    values: &["1", DECIMAL],
    doc: "Weibull shape k (below 1: early failures more likely, infant mortality; 1: exponential)",
};
/// `repair=<hours>`.
pub const REPAIR: OptionInfo = OptionInfo {
    key: "repair",
    values: &["20.4", DECIMAL],
    doc: "median repair time, hours, from detection (lognormal; InfiniteHBD median 20.4 h)",
};
/// `repair_sigma=<σ>`.
pub const REPAIR_SIGMA: OptionInfo = OptionInfo {
    key: "repair_sigma",
    values: &["1.94", DECIMAL],
    doc: "σ of the repair time's logarithm (InfiniteHBD: mean 133 h over median 20.4 h gives 1.94; 0: always the median)",
};
/// `detect=<seconds>`.
pub const DETECT: OptionInfo = OptionInfo {
    key: "detect",
    values: &["300", DECIMAL],
    doc: "seconds from a failure to the node marked DOWN and its jobs requeued (Slurm SlurmdTimeout, 300 s; \
          0 under kube, whose node-lifecycle controller models detection)",
};

/// `domain=node|rack|switch|zone|<N>`.
pub const DOMAIN: OptionInfo = OptionInfo {
    key: "domain",
    values: &["node", "rack", "switch", "zone", "<integer>"],
    doc: "what fails: a node; every node of a rack, leaf switch or zone (the cluster's topology) at once; or \
          each block of N consecutive nodes (a chassis, a power feed)",
};
/// `cause=<name>`.
pub const CAUSE: OptionInfo = OptionInfo {
    key: "cause",
    values: &["any"],
    doc: "the cause these failures stand for (GPU, NIC, ...; a label: one controller per cause gives each its rate and repair)",
};

/// `tbf_file=<path>`.
pub const TBF_FILE: OptionInfo = OptionInfo {
    key: "tbf_file",
    values: &["none"],
    doc: "a file of times between one node's failures, hours, one per line: drawn from instead of dist and mtbf",
};
/// `repair_file=<path>`.
pub const REPAIR_FILE: OptionInfo = OptionInfo {
    key: "repair_file",
    values: &["none"],
    doc: "a file of repair times, hours, one per line: drawn from instead of the lognormal",
};

/// Hours read from a samples file, with its path.
type Samples = Option<(String, Vec<f64>)>;

/// Reads a samples file: one non-negative number of hours per line; blank lines and `#`
/// comments skipped; at least one value.
fn read_samples(path: &str) -> Result<Vec<f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("a readable file of hours ({e})"))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let v: f64 = line
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("hours, one non-negative number per line; line {} has '{line}'", i + 1))?;
        out.push(v);
    }
    if out.is_empty() {
        return Err("at least one number of hours".into());
    }
    Ok(out)
}

/// What fails together.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Domain {
    Node,
    Rack,
    Switch,
    Zone,
    Block(u32),
}

/// What happens next to a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Next {
    Fail,
    Detect,
    Repair,
}

/// Random node failures (see the module documentation).
pub struct Failures {
    pool: Option<String>,
    cause: Option<String>,
    domain: Domain,
    tbf_samples: Samples,
    repair_samples: Samples,
    /// The nodes of each failure domain, by domain index (the timers' key).
    domains: Vec<Vec<u32>>,
    /// The nodes each domain's failure took down (those up when it failed).
    taken: Vec<Vec<u32>>,
    /// Thousandths of the options' values.
    mtbf_h: u64,
    weibull: bool,
    shape: u64,
    repair_h: u64,
    repair_sigma: u64,
    detect_s: u64,
    rng: SimRng,
    timers: NodeTimers<Next>,
}

impl Failures {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] =
        &[POOL, CAUSE, DOMAIN, MTBF, DIST, SHAPE, REPAIR, REPAIR_SIGMA, DETECT, TBF_FILE, REPAIR_FILE];

    /// Builds it from a spec; `rng` is its own stream.
    pub fn from_spec(spec: &Spec, rng: SimRng) -> Result<Self, SpecError> {
        let mut keys_only = spec.clone();
        let free_text = [POOL.key, CAUSE.key, TBF_FILE.key, REPAIR_FILE.key];
        keys_only.options.retain(|k, _| !free_text.contains(&k.as_str()));
        let c = Chosen::check(&keys_only, Self::OPTIONS, "controller")?;
        let positive = |o: OptionInfo| {
            let v = c.permille(o);
            if v == 0 {
                return Err(SpecError::BadValue {
                    kind: "controller",
                    plugin: spec.name.clone(),
                    key: o.key.into(),
                    value: "0".into(),
                    expected: "a number above 0".into(),
                });
            }
            Ok(v)
        };
        let domain = match spec.options.get(DOMAIN.key).map(String::as_str) {
            None | Some("node") => Domain::Node,
            Some("rack") => Domain::Rack,
            Some("switch") => Domain::Switch,
            Some("zone") => Domain::Zone,
            Some(_) => match c.number(DOMAIN) {
                Some(n) if n > 0 && n <= u32::MAX as u64 => Domain::Block(n as u32),
                _ => {
                    return Err(SpecError::BadValue {
                        kind: "controller",
                        plugin: spec.name.clone(),
                        key: DOMAIN.key.into(),
                        value: spec.options[DOMAIN.key].clone(),
                        expected: "node, rack, switch, zone or a number of nodes above 0".into(),
                    });
                }
            },
        };
        let samples = |o: OptionInfo| -> Result<Samples, SpecError> {
            let Some(path) = spec.options.get(o.key).filter(|p| p.as_str() != "none") else { return Ok(None) };
            let values = read_samples(path).map_err(|expected| SpecError::BadValue {
                kind: "controller",
                plugin: spec.name.clone(),
                key: o.key.into(),
                value: path.clone(),
                expected,
            })?;
            Ok(Some((path.clone(), values)))
        };
        let (tbf_samples, repair_samples) = (samples(TBF_FILE)?, samples(REPAIR_FILE)?);
        Ok(Failures {
            pool: spec.options.get(POOL.key).filter(|v| v.as_str() != "*").cloned(),
            tbf_samples,
            repair_samples,
            cause: spec.options.get(CAUSE.key).filter(|v| v.as_str() != "any").cloned(),
            domain,
            domains: Vec::new(),
            taken: Vec::new(),
            mtbf_h: positive(MTBF)?,
            weibull: c.index(DIST) == 1,
            shape: positive(SHAPE)?,
            repair_h: c.permille(REPAIR),
            repair_sigma: c.permille(REPAIR_SIGMA),
            detect_s: c.permille(DETECT),
            rng,
            timers: NodeTimers::new(),
        })
    }

    /// The mean time between failures of one node (of the samples, when drawn from them).
    pub fn node_mtbf(&self) -> SimDuration {
        match &self.tbf_samples {
            Some((_, v)) => secs_duration(v.iter().sum::<f64>() / v.len() as f64 * 3600.0),
            None => SimDuration(self.mtbf_h * 3_600_000),
        }
    }

    /// The time to a node's next failure.
    fn time_to_failure(&mut self) -> SimDuration {
        if let Some((_, v)) = &self.tbf_samples {
            return secs_duration(v[uniform_index(&mut self.rng, v.len())] * 3600.0);
        }
        let mean = self.mtbf_h as f64 * 3600.0 / 1000.0;
        let e: f64 = Exp1.sample(&mut self.rng);
        let secs = if self.weibull {
            // Weibull(k, λ) by inversion of an Exp(1) draw, λ set for the mean.
            let k = self.shape as f64 / 1000.0;
            let scale = mean / gamma(1.0 + 1.0 / k);
            scale * e.powf(1.0 / k)
        } else {
            mean * e
        };
        secs_duration(secs)
    }

    /// A repair time.
    fn time_to_repair(&mut self) -> SimDuration {
        if let Some((_, v)) = &self.repair_samples {
            return secs_duration(v[uniform_index(&mut self.rng, v.len())] * 3600.0);
        }
        let median = self.repair_h as f64 * 3600.0 / 1000.0;
        let z: f64 = StandardNormal.sample(&mut self.rng);
        secs_duration(median * (z * self.repair_sigma as f64 / 1000.0).exp())
    }
}

/// The jobs running on `node` (bound to it, or holding its units).
pub(crate) fn jobs_on(view: &SchedView<'_>, node: u32) -> Vec<sim_core::JobId> {
    view.jobs_on(NodeId(node))
}

/// The node MTBF of a controller spec when it is a `failures` one (`None` for others).
pub fn node_mtbf_of(spec: &str) -> Result<Option<SimDuration>, SpecError> {
    let parsed: Spec = spec.parse()?;
    if parsed.name != "failures" {
        return Ok(None);
    }
    let rng = sim_core::rng::RngStreams::new(0).stream("unused");
    Ok(Some(Failures::from_spec(&parsed, rng)?.node_mtbf()))
}

/// Seconds as a duration, rounded to the microsecond (at least 1 µs).
fn secs_duration(secs: f64) -> SimDuration {
    SimDuration(((secs * 1e6).round().min(u64::MAX as f64) as u64).max(1))
}

/// Γ(x) for x > 0, by Lanczos' approximation (g = 7, 9 terms; relative error below 1e-13),
/// for the Weibull scale that gives a mean.
fn gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x));
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, &g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
}

impl Controller for Failures {
    fn may_relabel(&self) -> bool {
        false
    }

    fn spec(&self) -> String {
        let mut opts = vec![("pool", self.pool.clone().unwrap_or_else(|| "*".into()))];
        // Left out at their defaults, so that older specs read the same.
        if let Some(c) = &self.cause {
            opts.push(("cause", c.clone()));
        }
        let domain = match &self.domain {
            Domain::Node => None,
            Domain::Rack => Some("rack".to_string()),
            Domain::Switch => Some("switch".to_string()),
            Domain::Zone => Some("zone".to_string()),
            Domain::Block(n) => Some(n.to_string()),
        };
        if let Some(d) = domain {
            opts.push(("domain", d));
        }
        opts.extend([
            ("mtbf", permille_string(self.mtbf_h)),
            ("dist", if self.weibull { "weibull" } else { "exponential" }.into()),
        ]);
        if self.weibull {
            opts.push(("shape", permille_string(self.shape)));
        }
        opts.push(("repair", permille_string(self.repair_h)));
        opts.push(("repair_sigma", permille_string(self.repair_sigma)));
        opts.push(("detect", permille_string(self.detect_s)));
        for (key, samples) in [("tbf_file", &self.tbf_samples), ("repair_file", &self.repair_samples)] {
            if let Some((path, _)) = samples {
                opts.push((key, path.clone()));
            }
        }
        canonical_values("failures", &opts)
    }

    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let mut by_place: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut nodes: Vec<u32> = Vec::new();
        for (pool, pool_nodes) in view.cluster().pool_nodes() {
            if self.pool.as_ref().is_some_and(|p| &pool.name != p) {
                continue;
            }
            let t = &pool.spec.topology;
            let place = match self.domain {
                Domain::Rack => t.rack.as_ref(),
                Domain::Switch => t.switch.as_ref(),
                Domain::Zone => t.zone.as_ref(),
                Domain::Node | Domain::Block(_) => None,
            };
            match place {
                Some(p) => by_place.entry(p.clone()).or_default().extend(pool_nodes),
                None => nodes.extend(pool_nodes),
            }
        }
        self.domains = match self.domain {
            Domain::Node => nodes.into_iter().map(|n| vec![n]).collect(),
            Domain::Block(size) => nodes.chunks(size as usize).map(<[u32]>::to_vec).collect(),
            Domain::Rack | Domain::Switch | Domain::Zone => by_place.into_values().collect(),
        };
        self.taken = vec![Vec::new(); self.domains.len()];
        for d in 0..self.domains.len() as u32 {
            let at = view.now() + self.time_to_failure();
            self.timers.at(view, at, d, Next::Fail, out);
        }
    }

    fn on_timer(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let Some((now, d, what)) = self.timers.fired() else { return };
        let di = d as usize;
        let down = |node: u32, out: &mut Vec<Action>| {
            out.push(Action::SetNodeState { node: NodeId(node), state: NodeState::Down });
        };
        match what {
            Next::Fail => {
                // Nodes already down or removed (maintenance, another controller) do not
                // fail again. Nor do any while no job runs: the cluster heals by its
                // repairs, so that jobs waiting for more nodes than the failures leave up
                // still start and the run ends. The domain's clock then starts over.
                let up = |n: &u32| {
                    let state = view.node_states().get(*n as usize).copied().unwrap_or(NodeState::Up);
                    matches!(state, NodeState::Up | NodeState::Draining)
                };
                let taken: Vec<u32> = self.domains[di].iter().copied().filter(up).collect();
                if taken.is_empty() || view.running_count() == 0 {
                    let at = now + self.time_to_failure();
                    self.timers.at(view, at, d, Next::Fail, out);
                    return;
                }
                let detect = SimDuration(self.detect_s * 1000);
                if detect.0 == 0 {
                    taken.iter().for_each(|&n| down(n, out));
                } else {
                    // A job on several of its nodes stalls once, in the order the nodes
                    // list them (their start order).
                    let mut seen = BTreeSet::new();
                    let jobs = taken.iter().flat_map(|&n| jobs_on(view, n)).filter(|j| seen.insert(*j));
                    out.extend(jobs.map(|job| Action::Stall { job }).collect::<Vec<_>>());
                }
                self.taken[di] = taken;
                self.timers.at(view, now + detect, d, Next::Detect, out);
            }
            Next::Detect => {
                self.taken[di].iter().for_each(|&n| down(n, out));
                let at = now + self.time_to_repair();
                self.timers.at(view, at, d, Next::Repair, out);
            }
            Next::Repair => {
                for n in std::mem::take(&mut self.taken[di]) {
                    out.push(Action::SetNodeState { node: NodeId(n), state: NodeState::Up });
                }
                let at = now + self.time_to_failure();
                self.timers.at(view, at, d, Next::Fail, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::gamma;

    #[test]
    fn gamma_matches_known_values() {
        for (x, g) in
            [(1.0, 1.0), (2.0, 1.0), (5.0, 24.0), (0.5, std::f64::consts::PI.sqrt()), (1.5, 0.886_226_925_452_758)]
        {
            assert!((gamma(x) - g).abs() < 1e-12 * g.max(1.0), "Γ({x}) = {} not {g}", gamma(x));
        }
    }
}
