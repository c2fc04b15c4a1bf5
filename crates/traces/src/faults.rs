//! Node fault logs: when each node of a real fleet failed and was repaired, replayed onto
//! a simulated cluster as node events, or fitted as a `failures` controller.
//!
//! Two formats are read:
//!
//! * **InfiniteHBD** (`stepfun-ai/InfiniteHBD-Trace`, SIGCOMM'25): a JSON array of
//!   `{node_id, event_time (days from the first event), event_type (fault_start |
//!   fault_end), fault_type {Level, Class, Desc}}`, sorted by time.
//! * **CSV** with the header `time,node,event,cause`: `time` in seconds, `node` any name,
//!   `event` `fault_start` (or `down`) and `fault_end` (or `up`), `cause` free text.
//!
//! **Mapping onto the cluster**: the log's nodes are numbered in the order they first
//! appear, and the k-th goes onto the cluster's node k modulo its node count (the log of a
//! 400-server fleet onto a 400-node cluster: one to one; onto a smaller one, several log
//! nodes share a cluster node, which is down while any of them is). A node is down from a
//! fault's start until every fault open on it has ended; a fault still open at the log's
//! end keeps its node down.
//!
//! ```
//! let csv = "time,node,event,cause\n10,a,fault_start,GPU\n20,b,down,NIC\n30,a,fault_end,GPU\n";
//! let log = traces::faults::read_str(csv, "f.csv").unwrap();
//! assert_eq!(log.nodes, ["a", "b"]);
//! let ev = log.node_events(2);
//! assert_eq!(ev.len(), 3);
//! assert_eq!((ev[2].0.as_micros(), ev[2].1.0), (30_000_000, 0));
//! ```

use crate::error::TraceError;
use sim_core::cluster::{NodeId, NodeState};
use sim_core::time::SimTime;
use std::collections::BTreeMap;

/// One line of a fault log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultEvent {
    /// When.
    pub time: SimTime,
    /// The log's node, as an index into [`FaultLog::nodes`].
    pub node: u32,
    /// A fault starts (else it ends).
    pub start: bool,
    /// Its cause (InfiniteHBD: the fault's `Class`).
    pub cause: String,
}

/// A fault log, in time order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultLog {
    /// The events.
    pub events: Vec<FaultEvent>,
    /// The log's node names, in the order they first appear.
    pub nodes: Vec<String>,
}

/// Reads a fault log file (InfiniteHBD JSON when its first character is `[`, else CSV).
pub fn read(path: &std::path::Path) -> Result<FaultLog, TraceError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io { file: name.clone(), source })?;
    read_str(&text, &name)
}

/// Reads a fault log from its text; `name` names it in errors.
pub fn read_str(text: &str, name: &str) -> Result<FaultLog, TraceError> {
    let mut log = if text.trim_start().starts_with('[') { read_json(text, name)? } else { read_csv(text, name)? };
    // Stable: a start and an end at one time keep the log's order.
    log.events.sort_by_key(|e| e.time);
    Ok(log)
}

impl FaultLog {
    fn node_index(&mut self, names: &mut BTreeMap<String, u32>, node: &str) -> u32 {
        if let Some(&i) = names.get(node) {
            return i;
        }
        let i = self.nodes.len() as u32;
        names.insert(node.to_string(), i);
        self.nodes.push(node.to_string());
        i
    }

    /// The node events of this log on a cluster of `nodes` nodes (see the module
    /// documentation for the mapping): down when a fault opens on a node with none open,
    /// up when its last open fault ends. An end without a start is ignored.
    pub fn node_events(&self, nodes: u32) -> Vec<(SimTime, NodeId, NodeState)> {
        let nodes = nodes.max(1);
        let mut open = vec![0u32; nodes as usize];
        // Faults open per log node, so that an unmatched end closes nothing.
        let mut own = vec![0u32; self.nodes.len()];
        let mut out = Vec::new();
        for e in &self.events {
            let n = (e.node % nodes) as usize;
            if e.start {
                own[e.node as usize] += 1;
                open[n] += 1;
                if open[n] == 1 {
                    out.push((e.time, NodeId(n as u32), NodeState::Down));
                }
            } else if own[e.node as usize] > 0 {
                own[e.node as usize] -= 1;
                open[n] -= 1;
                if open[n] == 0 {
                    out.push((e.time, NodeId(n as u32), NodeState::Up));
                }
            }
        }
        out
    }

    /// The log's times between one node's successive faults (from start to start) and its
    /// repair times, in hours, in log order: the samples of an empirical `failures`
    /// (`tbf_file`, `repair_file`). Only nodes with two faults or more give times between
    /// faults, so these lean short: a node's first fault is not counted from the log's start.
    pub fn samples(&self) -> (Vec<f64>, Vec<f64>) {
        let mut last: Vec<Option<SimTime>> = vec![None; self.nodes.len()];
        let mut tbf = Vec::new();
        for e in self.events.iter().filter(|e| e.start) {
            if let Some(t) = last[e.node as usize].replace(e.time) {
                tbf.push((e.time.0 - t.0) as f64 / 3600e6);
            }
        }
        (tbf, self.repair_hours(|_| true))
    }

    /// The durations, in hours and log order, of the faults of the events `keep` keeps that
    /// ended in the log (a node's faults end in the order they began).
    fn repair_hours(&self, keep: impl Fn(&FaultEvent) -> bool) -> Vec<f64> {
        let mut opened: Vec<Vec<SimTime>> = vec![Vec::new(); self.nodes.len()];
        let mut repairs = Vec::new();
        for e in self.events.iter().filter(|e| keep(e)) {
            let open = &mut opened[e.node as usize];
            if e.start {
                open.push(e.time);
            } else if !open.is_empty() {
                repairs.push((e.time.0 - open.remove(0).0) as f64 / 3600e6);
            }
        }
        repairs
    }

    /// What the log says of its fleet of `fleet` nodes (at least the nodes it names).
    pub fn fit(&self, fleet: u32) -> FaultFit {
        self.fit_where(fleet, None, "")
    }

    /// One fit per cause, in the order of the causes' names: each cause's rate over the
    /// whole log's span and fleet, and its own repair times. Causes with fewer than
    /// [`MIN_CAUSE_FAULTS`] faults, too few for a rate, are fitted together as `other`
    /// (last).
    pub fn fit_by_cause(&self, fleet: u32) -> Vec<FaultFit> {
        let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
        for e in self.events.iter().filter(|e| e.start) {
            *counts.entry(e.cause.as_str()).or_default() += 1;
        }
        let (common, rare): (Vec<_>, Vec<_>) = counts.into_iter().partition(|&(_, n)| n >= MIN_CAUSE_FAULTS);
        let mut fits: Vec<FaultFit> = common.iter().map(|&(c, _)| self.fit_where(fleet, Some(&[c]), c)).collect();
        if !rare.is_empty() {
            let rare: Vec<&str> = rare.iter().map(|&(c, _)| c).collect();
            fits.push(self.fit_where(fleet, Some(&rare), "other"));
        }
        fits
    }

    /// The fit of the faults of `causes` (all of them for `None`), named `name`.
    fn fit_where(&self, fleet: u32, only: Option<&[&str]>, name: &str) -> FaultFit {
        let cause = only.map(|_| name);
        let fleet = fleet.max(self.nodes.len() as u32).max(1);
        let span_us = match (self.events.first(), self.events.last()) {
            (Some(a), Some(b)) => b.time.0 - a.time.0,
            _ => 0,
        };
        let days = span_us as f64 / 86_400e6;
        let kept = |e: &FaultEvent| only.is_none_or(|c| c.contains(&e.cause.as_str()));
        let mut causes: BTreeMap<String, u64> = BTreeMap::new();
        for e in self.events.iter().filter(|e| e.start && kept(e)) {
            *causes.entry(e.cause.clone()).or_default() += 1;
        }
        let faults: u64 = causes.values().sum();
        let mut repairs = self.repair_hours(kept);
        repairs.sort_by(f64::total_cmp);
        let median = match repairs.len() {
            0 => 0.0,
            n if n % 2 == 1 => repairs[n / 2],
            n => (repairs[n / 2 - 1] + repairs[n / 2]) / 2.0,
        };
        let mean = if repairs.is_empty() { 0.0 } else { repairs.iter().sum::<f64>() / repairs.len() as f64 };
        let rate = if days > 0.0 { faults as f64 / (f64::from(fleet) * days) } else { 0.0 };
        FaultFit {
            fleet,
            days,
            faults,
            per_node_day: rate,
            mtbf_hours: if rate > 0.0 { 24.0 / rate } else { 0.0 },
            repairs: repairs.len() as u64,
            repair_median_hours: median,
            repair_mean_hours: mean,
            // The lognormal whose median and mean are the sample's: mean = median·e^(σ²/2).
            repair_sigma: if median > 0.0 && mean > median { (2.0 * (mean / median).ln()).sqrt() } else { 0.0 },
            causes,
            cause: cause.map(String::from),
        }
    }
}

/// Faults a cause needs to be fitted alone by [`FaultLog::fit_by_cause`].
pub const MIN_CAUSE_FAULTS: u64 = 5;

/// A fault log's rates, fitted (see [`FaultLog::fit`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FaultFit {
    /// Nodes of the fleet.
    pub fleet: u32,
    /// From the first event to the last, days.
    pub days: f64,
    /// Faults (starts).
    pub faults: u64,
    /// Faults per node-day.
    pub per_node_day: f64,
    /// A node's mean time between failures, hours.
    pub mtbf_hours: f64,
    /// Faults that ended in the log.
    pub repairs: u64,
    /// Their durations' median and mean, hours.
    pub repair_median_hours: f64,
    /// See above.
    pub repair_mean_hours: f64,
    /// σ of the lognormal with that median and mean.
    pub repair_sigma: f64,
    /// Faults per cause.
    pub causes: BTreeMap<String, u64>,
    /// The one cause fitted ([`FaultLog::fit_by_cause`]); `None`: every cause.
    pub cause: Option<String>,
}

impl FaultFit {
    /// The `failures` controller spec of this fit (exponential times between failures).
    pub fn spec(&self) -> String {
        let d = |x: f64| {
            let s = format!("{:.3}", x.clamp(0.0, 1_000_000.0));
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        // A cause's name as a spec value: letters, digits, `-`, `_` and `.`.
        let cause = self.cause.as_ref().map_or(String::new(), |c| {
            let name: String =
                c.chars().map(|ch| if ch.is_ascii_alphanumeric() || "-_.".contains(ch) { ch } else { '_' }).collect();
            format!("cause={},", if name.is_empty() { "unknown".into() } else { name })
        });
        format!(
            "failures[{cause}mtbf={},repair={},repair_sigma={}]",
            d(self.mtbf_hours.max(0.001)),
            d(self.repair_median_hours),
            d(self.repair_sigma)
        )
    }

    /// The fit as a cluster-configuration snippet: comments with the figures, and the
    /// `[[controller]]` table that attaches it.
    pub fn toml(&self, source: &str) -> String {
        format!("{}[[controller]]\nspec = \"{}\"\n", self.comments(source), self.spec())
    }

    /// The fit's figures as TOML comments: faults, fleet and span, rate, repairs, causes.
    pub fn comments(&self, source: &str) -> String {
        let mut s = format!(
            "# Fitted by `sim trace fit-failures` from {source}: {} faults on a fleet of {} nodes over {:.1} days.\n\
             # {:.3e} faults per node-day (a node's MTBF {:.0} h); repairs: {} ended, median {:.1} h, mean {:.1} h\n\
             # (a lognormal of sigma {:.2}).\n# Faults by cause:\n",
            self.faults,
            self.fleet,
            self.days,
            self.per_node_day,
            self.mtbf_hours,
            self.repairs,
            self.repair_median_hours,
            self.repair_mean_hours,
            self.repair_sigma
        );
        for (cause, n) in &self.causes {
            s.push_str(&format!("#   {cause}: {n} ({:.1} %)\n", 100.0 * *n as f64 / self.faults.max(1) as f64));
        }
        s
    }

    /// The fits of [`FaultLog::fit_by_cause`] as one snippet: the whole log's figures
    /// (`all`) in comments, then one `[[controller]]` per cause with its rate and repairs.
    pub fn toml_by_cause(all: &FaultFit, by_cause: &[FaultFit], source: &str) -> String {
        let mut s = all.comments(source);
        s.push_str("# One failure process per cause, each with its own rate and repair times:\n");
        for f in by_cause {
            s.push_str(&format!(
                "# {}: {} faults, MTBF {:.0} h, repairs median {:.1} h, mean {:.1} h\n[[controller]]\nspec = \"{}\"\n",
                match f.cause.as_deref() {
                    Some("other") => format!("other ({})", f.causes.keys().cloned().collect::<Vec<_>>().join(", ")),
                    c => c.unwrap_or("all").to_string(),
                },
                f.faults,
                f.mtbf_hours,
                f.repair_median_hours,
                f.repair_mean_hours,
                f.spec()
            ));
        }
        s
    }
}

fn read_json(text: &str, name: &str) -> Result<FaultLog, TraceError> {
    let items: Vec<serde_json::Value> = serde_json::from_str(text).map_err(|e| {
        TraceError::malformed(name, Some(e.line() as u64), None, format!("not a JSON array of fault events: {e}"))
    })?;
    let mut log = FaultLog::default();
    let mut names = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let field = |f: &str| format!("[{i}].{f}");
        let bad = |f: &str, expected: &str, found: String| TraceError::BadValue {
            at: crate::error::Location { file: name.into(), line: None, field: Some(field(f)) },
            expected: expected.into(),
            found,
        };
        let node = item.get("node_id").and_then(|v| v.as_str()).ok_or_else(|| {
            bad("node_id", "a node identifier string", item.get("node_id").map_or("nothing".into(), |v| v.to_string()))
        })?;
        let days = item.get("event_time").and_then(|v| v.as_f64()).filter(|d| d.is_finite() && *d >= 0.0);
        let days = days.ok_or_else(|| {
            bad(
                "event_time",
                "days, a non-negative number",
                item.get("event_time").map_or("nothing".into(), |v| v.to_string()),
            )
        })?;
        let start = match item.get("event_type").and_then(|v| v.as_str()) {
            Some("fault_start") => true,
            Some("fault_end") => false,
            other => return Err(bad("event_type", "fault_start or fault_end", other.unwrap_or("nothing").into())),
        };
        let cause = item
            .get("fault_type")
            .and_then(|t| t.get("Class"))
            .and_then(|c| c.as_str())
            .unwrap_or("unknown")
            .to_string();
        let node = log.node_index(&mut names, node);
        let time = SimTime((days * 86_400e6).round().min(u64::MAX as f64) as u64);
        log.events.push(FaultEvent { time, node, start, cause });
    }
    Ok(log)
}

fn read_csv(text: &str, name: &str) -> Result<FaultLog, TraceError> {
    let mut lines = text.lines().enumerate();
    let header = lines.next().map(|(_, l)| l.trim()).unwrap_or("");
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |c: &str| cols.iter().position(|x| *x == c);
    let (Some(ti), Some(ni), Some(ei)) = (col("time"), col("node"), col("event")) else {
        return Err(TraceError::malformed(
            name,
            Some(1),
            None,
            format!("expected a header time,node,event,cause (or InfiniteHBD JSON), found '{header}'"),
        ));
    };
    let ci = col("cause");
    let mut log = FaultLog::default();
    let mut names = BTreeMap::new();
    for (i, line) in lines {
        let line_no = i as u64 + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let get = |k: usize, what: &str| {
            f.get(k).copied().ok_or_else(|| TraceError::bad(name, line_no, what, "a value", "nothing"))
        };
        let t = get(ti, "time")?;
        let secs = sim_core::time::parse_secs_micros(t)
            .map_err(|e| TraceError::bad(name, line_no, "time", format!("seconds ({e})"), t))?;
        let node = get(ni, "node")?;
        if node.is_empty() {
            return Err(TraceError::bad(name, line_no, "node", "a node name", node));
        }
        let ev = get(ei, "event")?;
        let start = match ev {
            "fault_start" | "down" => true,
            "fault_end" | "up" => false,
            other => return Err(TraceError::bad(name, line_no, "event", "fault_start, down, fault_end or up", other)),
        };
        let cause = ci.and_then(|k| f.get(k)).map_or("unknown", |c| if c.is_empty() { "unknown" } else { c });
        let node = log.node_index(&mut names, node);
        log.events.push(FaultEvent { time: SimTime(secs), node, start, cause: cause.to_string() });
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_name_their_field() {
        let e = read_str("time,node,event\n5,a,broken\n", "f.csv").unwrap_err().to_string();
        assert!(e.contains("f.csv:2: event") && e.contains("broken"), "{e}");
        let e = read_str("time,node,event\nx,a,down\n", "f.csv").unwrap_err().to_string();
        assert!(e.contains("f.csv:2: time"), "{e}");
        let e = read_str("when,where\n", "f.csv").unwrap_err().to_string();
        assert!(e.contains("f.csv:1") && e.contains("time,node,event"), "{e}");
        let e = read_str(r#"[{"node_id":"a","event_time":-1,"event_type":"fault_start"}]"#, "t.json").unwrap_err();
        assert!(e.to_string().contains("t.json: [0].event_time"), "{e}");
        let e = read_str(r#"[{"node_id":"a","event_time":1,"event_type":"x"}]"#, "t.json").unwrap_err();
        assert!(e.to_string().contains("[0].event_type"), "{e}");
        assert!(read_str("[1,", "t.json").is_err());
    }

    /// Two log nodes on one cluster node: down at the first start, up at the last end;
    /// an unmatched end changes nothing.
    #[test]
    fn overlapping_faults_keep_a_node_down() {
        let csv = "time,node,event,cause\n1,a,down,GPU\n2,b,down,NIC\n3,a,up,GPU\n4,c,up,x\n5,b,up,NIC\n";
        let log = read_str(csv, "f.csv").unwrap();
        let ev: Vec<(u64, u32, NodeState)> =
            log.node_events(2).iter().map(|e| (e.0.as_micros() / 1_000_000, e.1.0, e.2)).collect();
        // a → node 0, b → node 1, c → node 0.
        assert_eq!(
            ev,
            [(1, 0, NodeState::Down), (2, 1, NodeState::Down), (3, 0, NodeState::Up), (5, 1, NodeState::Up)]
        );
        let ev1: Vec<(u64, NodeState)> =
            log.node_events(1).iter().map(|e| (e.0.as_micros() / 1_000_000, e.2)).collect();
        assert_eq!(ev1, [(1, NodeState::Down), (5, NodeState::Up)]);
    }

    /// 4 faults on a fleet of 10 over 2 days: 0.2 per node-day, MTBF 120 h; repairs of
    /// 1, 2 and 9 h (one left open): median 2 h, mean 4 h, σ = √(2 ln 2).
    #[test]
    fn fit_reads_rate_repairs_and_causes() {
        let h = |x: u64| x * 3600;
        let csv = format!(
            "time,node,event,cause\n0,a,down,GPU\n{},a,up,GPU\n{},b,down,GPU\n{},b,up,GPU\n{},c,down,NIC\n{},c,up,NIC\n{},d,down,NIC\n",
            h(1),
            h(10),
            h(12),
            h(20),
            h(29),
            h(48)
        );
        let f = read_str(&csv, "f.csv").unwrap().fit(10);
        assert_eq!((f.faults, f.repairs, f.fleet), (4, 3, 10));
        assert!((f.days - 2.0).abs() < 1e-12 && (f.per_node_day - 0.2).abs() < 1e-12);
        assert!((f.mtbf_hours - 120.0).abs() < 1e-9);
        assert!((f.repair_median_hours - 2.0).abs() < 1e-12 && (f.repair_mean_hours - 4.0).abs() < 1e-12);
        assert!((f.repair_sigma - (2.0 * 2f64.ln()).sqrt()).abs() < 1e-12);
        assert_eq!(f.causes.get("NIC"), Some(&2));
        assert_eq!(f.spec(), "failures[mtbf=120,repair=2,repair_sigma=1.177]");
        assert!(f.toml("f.csv").contains("[[controller]]\nspec = \"failures[mtbf=120,"));
    }

    /// Node a fails at 0 and 10 h (repairs 1 h and 2 h); node b once (3 h): one time
    /// between faults (10 h), three repairs.
    #[test]
    fn samples_are_the_logs_own_times() {
        let csv = "time,node,event,cause\n0,a,down,GPU\n3600,a,up,GPU\n3600,b,down,NIC\n14400,b,up,NIC\n\
                   36000,a,down,GPU\n43200,a,up,GPU\n";
        let (tbf, repairs) = read_str(csv, "f.csv").unwrap().samples();
        assert_eq!(tbf, [10.0]);
        assert_eq!(repairs, [1.0, 3.0, 2.0]);
    }

    /// By cause, over the whole log's 2 days and fleet of 10: GPU's 5 faults (repairs
    /// of 1 h each) are 0.25 per node-day, MTBF 96 h; NIC (2) and "Power Supply" (1), too
    /// few alone, are fitted together as `other`: 3 faults, 0.15 per node-day, MTBF 160 h,
    /// repairs of 2 h and 39.67 h (median = mean 20.83 h);
    /// the rates add up to the log's.
    #[test]
    fn fit_by_cause_gives_each_common_cause_its_rate_and_repairs() {
        let mut csv = String::from("time,node,event,cause\n");
        for i in 0..5u64 {
            csv += &format!("{},g{i},down,GPU\n{},g{i},up,GPU\n", i * 3600, (i + 1) * 3600);
        }
        csv +=
            "7200,n,down,NIC\n14400,n,up,NIC\n20000,n,down,NIC\n30000,p,down,Power Supply\n172800,p,up,Power Supply\n";
        let log = read_str(&csv, "f.csv").unwrap();
        let fits = log.fit_by_cause(10);
        let names: Vec<&str> = fits.iter().map(|f| f.cause.as_deref().unwrap()).collect();
        assert_eq!(names, ["GPU", "other"]);
        assert!((fits[0].mtbf_hours - 96.0).abs() < 1e-9 && (fits[0].repair_median_hours - 1.0).abs() < 1e-12);
        assert!((fits[1].mtbf_hours - 160.0).abs() < 1e-9, "{:?}", fits[1]);
        let total: f64 = fits.iter().map(|f| f.per_node_day).sum();
        assert!((total - log.fit(10).per_node_day).abs() < 1e-12);
        assert_eq!(fits[1].spec(), "failures[cause=other,mtbf=160,repair=20.833,repair_sigma=0]");
        let toml = FaultFit::toml_by_cause(&log.fit(10), &fits, "f.csv");
        assert!(toml.contains("# other (NIC, Power Supply): 3 faults"), "{toml}");
        assert_eq!(toml.matches("[[controller]]").count(), 2);
    }
}
