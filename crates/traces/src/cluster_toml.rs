//! Cluster configuration in TOML: node pools with count, cores, memory, GPUs (count,
//! model, memory), labels, taints, GPU sharing mode and network position, and the
//! switch tree above them.
//!
//! ```toml
//! [[switch]]                 # the topology tree (Slurm topology/tree): name and parent
//! name = "spine"
//! [[switch]]
//! name = "leaf1"
//! parent = "spine"
//!
//! [[pool]]
//! name = "a100"
//! count = 16
//! cores = 64
//! memory_mib = 524288
//! sharing = "exclusive"       # exclusive | shared | isolated
//! gpus = { count = 8, model = "A100-SXM4-80GB", memory_mib = 81251 }
//! # or from a hardware profile (memory and power; `model`/`memory_mib` given beside it win):
//! # gpus = { count = 8, profile = "H100" }                          # a shipped profile
//! # gpus = { count = 8, profile = "profiles/mine.toml#NVIDIA H100 80GB HBM3" }  # a file
//! labels = { "nvidia.com/gpu.product" = "A100", pool = "train" }
//! taints = [{ key = "nvidia.com/gpu", value = "", effect = "NoSchedule" }]
//! topology = { zone = "z1", rack = "r1", switch = "leaf1" }
//! price_per_hour = 32.77      # the bill; capacity = "on-demand" (default), "spot" or "reserved"
//! # a node group of at most `count` nodes for the autoscalers (delays: S, uniform:LO,HI,
//! # lognormal:MEDIAN,SIGMA seconds from the create request):
//! autoscale = { min = 0, initial = 0, ready = "lognormal:90,0.25", gpus_ready = "lognormal:300,0.25" }
//!
//! [[controller]]             # attached to every run on this cluster (see `sim controllers`)
//! spec = "maintenance[rack=r1,at=86400,until=93600]"
//! ```
//!
//! Slurm and Kubernetes on one cluster (docs/hybrid.md): `[[domain]]` tables name the
//! scheduling domains, each with its scheduler and, optionally, its workload (a path
//! relative to this file); a pool's `domain` says which owns its nodes at the start (the
//! first domain by default); `arrangement` is how nodes move between them (see
//! `sim controllers`; `--arrangement` chooses another).
//!
//! ```toml
//! arrangement = "lend-drain"
//! [[domain]]
//! name = "slurm"
//! policy = "slurm[bf_interval=30]"
//! trace = "batch.csv"         # any format sim run reads; `format` when it cannot tell
//! window = "37d..39d"         # only the jobs submitted then, moved to start at 0
//! [[domain]]
//! name = "kubernetes"
//! policy = "kube"
//! ```
//!
//! Unknown keys are errors; every error names the file and, where the TOML parser
//! knows it, the line. Profile references are resolved by the caller ([`load_with`]):
//! `sim` resolves them with `hw_calibrate::resolve_gpu` (a profile file relative to the
//! config's folder, or a shipped profile by model name).

use crate::error::TraceError;
use serde::Deserialize;
use sim_core::constraints::Taint;
use sim_core::hardware::GpuProfile;
use sim_core::{Cluster, GpuSharing, GpuSpec, NodePool, NodeSpec};
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    switch: Vec<Switch>,
    pool: Vec<Pool>,
    #[serde(default)]
    controller: Vec<ControllerTable>,
    #[serde(default)]
    domain: Vec<DomainTable>,
    #[serde(default)]
    arrangement: Option<String>,
}

/// A `[[domain]]` table: a scheduling domain of the cluster.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainTable {
    name: String,
    policy: String,
    #[serde(default)]
    trace: Option<String>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    window: Option<String>,
}

/// A scheduling domain of the cluster (`[[domain]]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainConfig {
    /// Its name (`slurm`, `kubernetes`).
    pub name: String,
    /// Its scheduler's policy spec.
    pub policy: String,
    /// Its workload, relative to the configuration file's folder as written.
    pub trace: Option<String>,
    /// The workload's format name, when given.
    pub format: Option<String>,
    /// Only the jobs submitted in `[from, to)` of the trace's time, moved so that `from`
    /// is time 0 (`window = "37d..39d"`): two traces' busy days made to overlap.
    pub window: Option<(sim_core::SimDuration, sim_core::SimDuration)>,
}

/// A `[[controller]]` table: a controller attached to every run on this cluster.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ControllerTable {
    spec: String,
}

/// One switch of the topology tree.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    /// Its name.
    pub name: String,
    /// The switch above it (`None` at the root).
    #[serde(default)]
    pub parent: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pool {
    name: String,
    count: u32,
    cores: u32,
    #[serde(default)]
    memory_mib: u64,
    #[serde(default)]
    sharing: Option<String>,
    #[serde(default)]
    gpus: Option<Gpus>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    taints: Vec<Taint>,
    #[serde(default)]
    topology: Option<Topology>,
    #[serde(default)]
    price_per_hour: Option<f64>,
    #[serde(default)]
    capacity: Option<String>,
    #[serde(default)]
    autoscale: Option<Autoscale>,
    #[serde(default)]
    domain: Option<String>,
}

/// A pool's `autoscale` table: it is a node group of at most `count` nodes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Autoscale {
    #[serde(default)]
    min: u32,
    #[serde(default)]
    initial: Option<u32>,
    #[serde(default)]
    ready: Option<String>,
    #[serde(default)]
    gpus_ready: Option<String>,
    #[serde(default)]
    priority: i32,
}

/// Default time from a node's create request to Ready when the pool says nothing.
pub const DEFAULT_READY: &str = "lognormal:90,0.25";
/// Default time from a GPU node's create request to allocatable GPUs.
pub const DEFAULT_GPUS_READY: &str = "lognormal:300,0.25";

/// Parses a provisioning delay: `S` (seconds), `uniform:LO,HI` or `lognormal:MEDIAN,SIGMA`.
pub fn parse_delay(text: &str) -> Result<sim_core::Delay, String> {
    let secs = |x: &str| -> Result<sim_core::SimDuration, String> {
        let v: f64 = x.trim().parse().map_err(|_| format!("seconds, found '{x}'"))?;
        if !(0.0..=1e9).contains(&v) {
            return Err(format!("seconds from 0 to 1e9, found '{x}'"));
        }
        Ok(sim_core::SimDuration((v * 1e6).round() as u64))
    };
    let expected = "S (seconds), uniform:LO,HI or lognormal:MEDIAN,SIGMA";
    match text.split_once(':') {
        None => secs(text).map(sim_core::Delay::Fixed).map_err(|e| format!("{expected}: {e}")),
        Some((kind, args)) => {
            let (a, b) = args.split_once(',').ok_or_else(|| format!("{expected}, found '{text}'"))?;
            match kind {
                "uniform" => {
                    let (lo, hi) = (secs(a)?, secs(b)?);
                    if hi < lo {
                        return Err(format!("uniform:LO,HI with LO <= HI, found '{text}'"));
                    }
                    Ok(sim_core::Delay::Uniform(lo, hi))
                }
                "lognormal" => {
                    let sigma: f64 = b.trim().parse().map_err(|_| format!("a σ from 0 to 10, found '{b}'"))?;
                    if !(0.0..=10.0).contains(&sigma) {
                        return Err(format!("a σ from 0 to 10, found '{b}'"));
                    }
                    Ok(sim_core::Delay::LogNormal(secs(a)?, (sigma * 1000.0).round() as u32))
                }
                _ => Err(format!("{expected}, found '{text}'")),
            }
        }
    }
}

/// How a pool's nodes are bought.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Capacity {
    /// Paid by the hour while present.
    #[default]
    OnDemand,
    /// Preemptible, cheaper (see the `spot` controller).
    Spot,
    /// Committed ahead (a reservation or savings plan), paid by the hour too.
    Reserved,
}

impl Capacity {
    /// Its name in the cluster configuration.
    pub fn name(self) -> &'static str {
        match self {
            Capacity::OnDemand => "on-demand",
            Capacity::Spot => "spot",
            Capacity::Reserved => "reserved",
        }
    }
}

/// What a pool's nodes cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoolPrice {
    /// Price of one node for an hour present (`price_per_hour`; 0 when not given).
    pub per_hour: f64,
    /// How it is bought (`capacity`, default on-demand).
    pub capacity: Capacity,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Gpus {
    count: u32,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    memory_mib: Option<u64>,
    #[serde(default)]
    profile: Option<String>,
}

/// Resolves a `gpus.profile` reference to the GPU model's profile.
pub type ProfileResolver<'r> = &'r dyn Fn(&str) -> Result<GpuProfile, String>;

fn no_profiles(reference: &str) -> Result<GpuProfile, String> {
    Err(format!("cannot resolve profile '{reference}' here (sim resolves profiles; load_with takes a resolver)"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Topology {
    zone: Option<String>,
    rack: Option<String>,
    switch: Option<String>,
}

/// A cluster read from TOML, with its switch tree.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// The cluster.
    pub cluster: Cluster,
    /// The switches, in file order.
    pub switches: Vec<Switch>,
    /// The specs of the `[[controller]]` tables (`spec = "maintenance[rack=r1,at=3600]"`),
    /// in file order: controllers attached to every run on this cluster, before those of
    /// the command line. Checked by the caller, which knows the controllers.
    pub controllers: Vec<String>,
    /// Each pool's price, in pool order.
    pub prices: Vec<PoolPrice>,
    /// The scheduling domains, in file order (empty: one scheduler).
    pub domains: Vec<DomainConfig>,
    /// Each pool's owning domain at the start, an index into `domains`, in pool order.
    pub pool_domains: Vec<u8>,
    /// The arrangement's spec, when the file gives one.
    pub arrangement: Option<String>,
}

/// Parses a cluster config (`file` names it in errors) that references no profile.
pub fn parse(file: &str, text: &str) -> Result<ClusterConfig, TraceError> {
    parse_with(file, text, &no_profiles)
}

/// Parses a cluster config, resolving `gpus.profile` references with `resolve`.
pub fn parse_with(file: &str, text: &str, resolve: ProfileResolver<'_>) -> Result<ClusterConfig, TraceError> {
    let f: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() as u64 + 1);
        TraceError::malformed(file, line, None, e.message().to_string())
    })?;
    let bad = |what: String| TraceError::malformed(file, None, None, what);
    let mut names: BTreeMap<&str, ()> = BTreeMap::new();
    for s in &f.switch {
        if names.insert(&s.name, ()).is_some() {
            return Err(bad(format!("switch '{}' is defined twice", s.name)));
        }
    }
    for s in &f.switch {
        if let Some(p) = &s.parent
            && !names.contains_key(p.as_str())
        {
            return Err(bad(format!("switch '{}': parent '{p}' is not a switch", s.name)));
        }
    }
    if f.pool.is_empty() {
        return Err(bad("expected at least one [[pool]]".into()));
    }
    let mut pools = Vec::with_capacity(f.pool.len());
    let mut prices = Vec::with_capacity(f.pool.len());
    let mut pool_domains = Vec::with_capacity(f.pool.len());
    let domains = domains(&f.domain).map_err(&bad)?;
    if f.arrangement.is_some() && domains.is_empty() {
        return Err(bad("arrangement: the file has no [[domain]] tables to arrange".into()));
    }
    for p in f.pool {
        let at = |what: &str| bad(format!("pool '{}': {what}", p.name));
        pool_domains.push(match &p.domain {
            None => 0,
            Some(d) => domains.iter().position(|x| &x.name == d).ok_or_else(|| {
                let known: Vec<&str> = domains.iter().map(|x| x.name.as_str()).collect();
                at(&format!("domain: expected one of the [[domain]] names ({}), found '{d}'", known.join(", ")))
            })? as u8,
        });
        if p.count == 0 || p.cores == 0 {
            return Err(at("count and cores must be at least 1"));
        }
        let per_hour = p.price_per_hour.unwrap_or(0.0);
        if !per_hour.is_finite() || per_hour < 0.0 {
            return Err(at(&format!("price_per_hour: expected a price of one node-hour, 0 or more, found {per_hour}")));
        }
        let capacity = match p.capacity.as_deref() {
            None | Some("on-demand") => Capacity::OnDemand,
            Some("spot") => Capacity::Spot,
            Some("reserved") => Capacity::Reserved,
            Some(o) => return Err(at(&format!("capacity: expected on-demand, spot or reserved, found '{o}'"))),
        };
        prices.push(PoolPrice { per_hour, capacity });
        let sharing = match p.sharing.as_deref() {
            None | Some("exclusive") => GpuSharing::Exclusive,
            Some("shared") => GpuSharing::Shared,
            Some("isolated") => GpuSharing::Isolated,
            Some(o) => return Err(at(&format!("sharing: expected exclusive, shared or isolated, found '{o}'"))),
        };
        let gpus = match &p.gpus {
            None => Vec::new(),
            Some(g) if g.count > 256 => return Err(at("gpus.count: expected at most 256")),
            Some(g) => {
                let mut spec = match &g.profile {
                    Some(r) => resolve(r)
                        .and_then(|prof| prof.gpu_spec().map_err(|e| e.to_string()))
                        .map_err(|e| at(&format!("gpus.profile '{r}': {e}")))?,
                    None => GpuSpec { model: String::new(), memory_mib: 0, power: None },
                };
                if let Some(m) = &g.model {
                    spec.model = m.clone();
                }
                if let Some(m) = g.memory_mib {
                    spec.memory_mib = m;
                }
                if g.count > 0 && (spec.memory_mib == 0 || spec.model.is_empty()) {
                    return Err(at("gpus: expected a model and memory_mib > 0, or a profile"));
                }
                vec![spec; g.count as usize]
            }
        };
        let group = match &p.autoscale {
            None => None,
            Some(a) => {
                let initial = a.initial.unwrap_or(a.min);
                if a.min > p.count || initial < a.min || initial > p.count {
                    return Err(at(&format!(
                        "autoscale: expected min <= initial <= count (the group's maximum), found min {}, initial {initial}, count {}",
                        a.min, p.count
                    )));
                }
                let delay = |key: &str, v: &Option<String>, default: &str| {
                    parse_delay(v.as_deref().unwrap_or(default))
                        .map_err(|e| at(&format!("autoscale.{key}: expected {e}")))
                };
                let ready = delay("ready", &a.ready, DEFAULT_READY)?;
                let gpus_ready = if p.gpus.as_ref().is_some_and(|g| g.count > 0) {
                    delay("gpus_ready", &a.gpus_ready, DEFAULT_GPUS_READY)?
                } else {
                    ready
                };
                Some(sim_core::NodeGroup {
                    min: a.min,
                    initial,
                    ready,
                    gpus_ready,
                    price_micros: (per_hour * 1e6).round() as u64,
                    spot: capacity == Capacity::Spot,
                    priority: a.priority,
                })
            }
        };
        let topology = p.topology.map_or_else(Default::default, |t| sim_core::cluster::TopologyPath {
            zone: t.zone,
            rack: t.rack,
            switch: t.switch,
        });
        if let Some(s) = &topology.switch
            && !f.switch.is_empty()
            && !names.contains_key(s.as_str())
        {
            return Err(at(&format!("topology.switch '{s}' is not a switch")));
        }
        pools.push(NodePool {
            name: p.name,
            count: p.count,
            spec: NodeSpec {
                cores: p.cores,
                memory_mib: p.memory_mib,
                gpus,
                labels: p.labels,
                taints: p.taints,
                topology,
            },
            sharing,
            group,
        });
    }
    let cluster = Cluster { pools };
    if cluster.total_units() > u32::MAX as u64 {
        return Err(bad("more than 4294967295 cores in all".into()));
    }
    Ok(ClusterConfig {
        cluster,
        switches: f.switch,
        controllers: f.controller.into_iter().map(|c| c.spec).collect(),
        prices,
        domains,
        pool_domains,
        arrangement: f.arrangement,
    })
}

/// The `[[domain]]` tables checked: names unique and not empty, at most
/// [`sim_core::domain::MAX_DOMAINS`].
fn domains(tables: &[DomainTable]) -> Result<Vec<DomainConfig>, String> {
    if tables.len() > sim_core::domain::MAX_DOMAINS {
        return Err(format!("{} [[domain]] tables: at most {}", tables.len(), sim_core::domain::MAX_DOMAINS));
    }
    let mut out: Vec<DomainConfig> = Vec::with_capacity(tables.len());
    for t in tables {
        if t.name.trim().is_empty() || t.name.contains([':', '/', ',']) {
            return Err(format!("domain name '{}': expected a name without ':', '/' or ','", t.name));
        }
        if out.iter().any(|d| d.name == t.name) {
            return Err(format!("domain '{}' is defined twice", t.name));
        }
        if t.policy.trim().is_empty() {
            return Err(format!("domain '{}': policy: expected a policy spec, e.g. slurm or kube", t.name));
        }
        let window = match &t.window {
            None => None,
            Some(w) => {
                let bad =
                    || format!("domain '{}': window: expected FROM..TO, lengths such as 37d..39d, found '{w}'", t.name);
                let (a, b) = w.split_once("..").ok_or_else(bad)?;
                let (a, b) = (crate::perturb::duration(a.trim()), crate::perturb::duration(b.trim()));
                match (a, b) {
                    (Some(a), Some(b)) if a < b => Some((a, b)),
                    _ => return Err(bad()),
                }
            }
        };
        out.push(DomainConfig {
            name: t.name.clone(),
            policy: t.policy.clone(),
            trace: t.trace.clone(),
            format: t.format.clone(),
            window,
        });
    }
    Ok(out)
}

/// Reads a cluster config file that references no profile.
pub fn load(path: &std::path::Path) -> Result<ClusterConfig, TraceError> {
    load_with(path, &no_profiles)
}

/// Reads a cluster config file, resolving `gpus.profile` references with `resolve`.
pub fn load_with(path: &std::path::Path, resolve: ProfileResolver<'_>) -> Result<ClusterConfig, TraceError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| TraceError::Io { file: name.clone(), source: e })?;
    parse_with(&name, &text, resolve)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_autoscale_table_makes_a_node_group() {
        let text = "[[pool]]\nname = \"g\"\ncount = 8\ncores = 4\ngpus = { count = 2, model = \"T4\", memory_mib = 15000 }\n\
                    price_per_hour = 1.5\ncapacity = \"spot\"\n\
                    autoscale = { min = 1, ready = \"uniform:60,120\", gpus_ready = \"300\", priority = 5 }\n";
        let c = parse("c.toml", text).unwrap();
        let g = c.cluster.pools[0].group.clone().unwrap();
        let s = sim_core::SimDuration::from_secs;
        assert_eq!((g.min, g.initial, g.price_micros, g.spot, g.priority), (1, 1, 1_500_000, true, 5));
        assert_eq!((g.ready, g.gpus_ready), (sim_core::Delay::Uniform(s(60), s(120)), sim_core::Delay::Fixed(s(300))));
        assert_eq!(c.cluster.initially_absent().map(|n| n.0).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(parse_delay("lognormal:90,0.25"), Ok(sim_core::Delay::LogNormal(s(90), 250)));
        for (bad, says) in [
            ("autoscale = { min = 9 }", "min <= initial <= count"),
            ("autoscale = { ready = \"soon\" }", "autoscale.ready: expected S (seconds)"),
            ("autoscale = { ready = \"uniform:9,1\" }", "LO <= HI"),
            ("autoscale = { maximum = 3 }", "unknown field"),
        ] {
            let e = parse("c.toml", &format!("[[pool]]\nname = \"g\"\ncount = 8\ncores = 4\n{bad}\n")).unwrap_err();
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    const EXAMPLE: &str = r#"
[[switch]]
name = "spine"
[[switch]]
name = "leaf1"
parent = "spine"

[[pool]]
name = "a100"
count = 2
cores = 64
memory_mib = 524288
sharing = "shared"
gpus = { count = 8, model = "A100", memory_mib = 81251 }
labels = { pool = "train" }
taints = [{ key = "nvidia.com/gpu", effect = "NoSchedule" }]
topology = { rack = "r1", switch = "leaf1" }

[[pool]]
name = "cpu"
count = 3
cores = 32
"#;

    #[test]
    fn reads_pools_gpus_labels_taints_topology() {
        let c = parse("c.toml", EXAMPLE).unwrap();
        assert_eq!(c.cluster.node_count(), 5);
        assert_eq!(c.cluster.total_units(), 2 * 64 + 3 * 32);
        let a = &c.cluster.pools[0];
        assert_eq!((a.sharing, a.spec.gpus.len(), a.spec.gpus[0].memory_mib), (GpuSharing::Shared, 8, 81251));
        assert_eq!(a.spec.labels["pool"], "train");
        assert_eq!(a.spec.taints[0].effect, sim_core::constraints::TaintEffect::NoSchedule);
        assert_eq!(a.spec.topology.switch.as_deref(), Some("leaf1"));
        assert_eq!(c.switches[1].parent.as_deref(), Some("spine"));
    }

    #[test]
    fn a_profile_gives_memory_and_power() {
        let text = "[[pool]]\nname = \"h\"\ncount = 2\ncores = 8\ngpus = { count = 4, profile = \"X\" }\n\
                    [[pool]]\nname = \"m\"\ncount = 1\ncores = 8\ngpus = { count = 1, profile = \"X\", memory_mib = 1000 }\n";
        let resolve = |r: &str| -> Result<GpuProfile, String> {
            match r {
                "X" => Ok(GpuProfile {
                    model: "H200".into(),
                    memory_mib: 143_771,
                    idle_power_w: Some(75.0),
                    max_power_w: Some(700.0),
                    ..Default::default()
                }),
                _ => Err("no such".into()),
            }
        };
        let c = parse_with("c.toml", text, &resolve).unwrap();
        let g = &c.cluster.pools[0].spec.gpus;
        assert_eq!((g.len(), g[0].model.as_str(), g[0].memory_mib), (4, "H200", 143_771));
        assert_eq!(g[0].power.as_ref().map(|p| (p.idle_mw(), p.max_mw())), Some((75_000, 700_000)));
        assert_eq!(c.cluster.pools[1].spec.gpus[0].memory_mib, 1000);
        let e = parse_with("c.toml", &text.replace("\"X\" }\n[", "\"Y\" }\n["), &resolve).unwrap_err().to_string();
        assert!(e.contains("pool 'h': gpus.profile 'Y': no such"), "{e}");
        assert!(parse("c.toml", text).unwrap_err().to_string().contains("cannot resolve profile 'X'"));
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let e = parse("c.toml", "[[pool]]\nname = \"x\"\ncount = 1\ncores = 4\nsize = 3\n").unwrap_err().to_string();
        assert!(e.starts_with("c.toml:5:") && e.contains("unknown field `size`"), "{e}");
        let e = parse("c.toml", "[[pool]]\nname = \"x\"\ncount = 0\ncores = 4\n").unwrap_err().to_string();
        assert!(e.contains("pool 'x': count and cores must be at least 1"), "{e}");
        let e = parse("c.toml", "[[pool]]\nname = \"x\"\ncount = 1\ncores = 4\nsharing = \"mig\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected exclusive, shared or isolated, found 'mig'"), "{e}");
        let e =
            parse("c.toml", "[[switch]]\nname = \"a\"\nparent = \"b\"\n[[pool]]\nname = \"x\"\ncount = 1\ncores = 4\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("parent 'b' is not a switch"), "{e}");
    }
}
