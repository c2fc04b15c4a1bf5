//! Alibaba's `openb` GPU-sharing trace (cluster-trace-gpu-v2023, the FGD paper's data):
//! a node list and pod lists, CSV.
//!
//! * Nodes: `sn,cpu_milli,memory_mib,gpu,model`.
//! * Pods: `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
//!   creation_time,deletion_time,scheduled_time`; the `multigpu*` files have only the
//!   first five columns. `gpu_milli` is the share of each GPU (0–1000), `gpu_spec` the
//!   allowed GPU models separated by `|`, times are seconds from the trace start.
//!
//! Columns are found by their header names, so both layouts read the same way. Every
//! error names the file, the line and the column.

use crate::error::TraceError;
use sim_core::job::{Job, JobKind, TaskShape, TraceStatus};
use sim_core::{Cluster, GpuSharing, GpuSpec, NodePool, NodeSpec, SimDuration, SimTime};
use std::collections::BTreeMap;

/// Device memory (MiB, as NVML reports it) of the GPU models in Alibaba's traces, from
/// the FGD simulator's `MapGpuTypeMemoryMiB`. G1/G2/G3 are undisclosed models; the
/// simulator's placeholders are kept.
pub const GPU_MEMORY_MIB: &[(&str, u64)] = &[
    ("P4", 7611),
    ("2080Ti", 11019),
    ("1080Ti", 11178),
    ("M40", 11448),
    ("T4", 15109),
    ("V100M16", 16160),
    ("P100", 16280),
    ("A10", 22731),
    ("3090", 24268),
    ("V100M32", 32510),
    ("A100", 81251),
    ("G1", 10000),
    ("G2", 20000),
    ("G3", 30000),
];

/// The largest time in seconds the simulator's microsecond clock holds.
pub const MAX_SECS: u64 = u64::MAX / 1_000_000;

/// Memory assumed for a GPU model not in [`GPU_MEMORY_MIB`] (16 GiB).
pub const UNKNOWN_GPU_MEMORY_MIB: u64 = 16_384;

/// Memory of a GPU model, when known.
pub fn gpu_memory_mib(model: &str) -> Option<u64> {
    GPU_MEMORY_MIB.iter().find(|(m, _)| *m == model).map(|&(_, v)| v)
}

/// One node line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenbNode {
    /// Serial name.
    pub name: String,
    /// Milli-CPU.
    pub cpu_milli: u64,
    /// Memory, MiB.
    pub memory_mib: u64,
    /// GPUs.
    pub gpus: u32,
    /// GPU model ("" for CPU nodes).
    pub model: String,
}

/// One pod line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenbPod {
    /// Name.
    pub name: String,
    /// Milli-CPU requested.
    pub cpu_milli: u64,
    /// Memory requested, MiB.
    pub memory_mib: u64,
    /// GPUs.
    pub num_gpu: u32,
    /// Milli-GPU of each GPU.
    pub gpu_milli: u32,
    /// Allowed GPU models (empty = any).
    pub gpu_spec: Vec<String>,
    /// QoS class (`LS`, `BE`, `Burstable`, `Guaranteed`; "" when absent).
    pub qos: String,
    /// Phase in the real cluster (`Running`, `Succeeded`, `Failed`, `Pending`).
    pub phase: String,
    /// Creation time, seconds.
    pub creation: Option<u64>,
    /// Deletion time, seconds.
    pub deletion: Option<u64>,
    /// Scheduled time, seconds.
    pub scheduled: Option<u64>,
}

struct Columns {
    file: String,
    index: BTreeMap<String, usize>,
}

impl Columns {
    fn new(file: &str, header: &csv::StringRecord, required: &[&str]) -> Result<Self, TraceError> {
        let index: BTreeMap<String, usize> =
            header.iter().enumerate().map(|(i, h)| (h.trim().trim_start_matches('\u{feff}').to_string(), i)).collect();
        for r in required {
            if !index.contains_key(*r) {
                return Err(TraceError::malformed(
                    file,
                    Some(1),
                    None,
                    format!("header lacks column '{r}' (expected {})", required.join(",")),
                ));
            }
        }
        Ok(Columns { file: file.to_string(), index })
    }

    fn text<'r>(&self, rec: &'r csv::StringRecord, col: &str) -> &'r str {
        self.index.get(col).and_then(|&i| rec.get(i)).map(str::trim).unwrap_or("")
    }

    /// The error for column `col` of a record: what was expected, and what it holds.
    fn bad(&self, rec: &csv::StringRecord, line: u64, col: &str, expected: impl Into<String>) -> TraceError {
        TraceError::bad(&self.file, line, format!("column '{col}'"), expected, self.text(rec, col))
    }

    fn uint(&self, rec: &csv::StringRecord, line: u64, col: &str, max: u64) -> Result<u64, TraceError> {
        match self.text(rec, col).parse::<u64>() {
            Ok(v) if v <= max => Ok(v),
            _ => Err(self.bad(rec, line, col, format!("an integer 0..={max}"))),
        }
    }

    fn opt_time(&self, rec: &csv::StringRecord, line: u64, col: &str) -> Result<Option<u64>, TraceError> {
        let t = self.text(rec, col);
        if t.is_empty() {
            return Ok(None);
        }
        match t.parse::<u64>() {
            Ok(v) if v <= MAX_SECS => Ok(Some(v)),
            _ => Err(self.bad(rec, line, col, format!("seconds (an integer 0..={MAX_SECS}) or empty"))),
        }
    }
}

fn records(file: &str, bytes: &[u8]) -> Result<(csv::StringRecord, Vec<(u64, csv::StringRecord)>), TraceError> {
    let mut rd = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(bytes);
    let header = rd
        .headers()
        .map_err(|e| TraceError::malformed(file, Some(1), None, format!("unreadable header: {e}")))?
        .clone();
    let mut out = Vec::new();
    for r in rd.records() {
        let rec = r.map_err(|e| {
            let line = e.position().map(|p| p.line());
            TraceError::malformed(file, line, None, format!("not CSV: {e}"))
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        if rec.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        out.push((line, rec));
    }
    Ok((header, out))
}

/// Reads a node list.
pub fn parse_nodes(file: &str, bytes: &[u8]) -> Result<Vec<OpenbNode>, TraceError> {
    let (header, recs) = records(file, bytes)?;
    let cols = Columns::new(file, &header, &["sn", "cpu_milli", "memory_mib", "gpu", "model"])?;
    let mut nodes = Vec::with_capacity(recs.len());
    for (line, rec) in recs {
        let name = cols.text(&rec, "sn").to_string();
        let cpu_milli = cols.uint(&rec, line, "cpu_milli", u32::MAX as u64 * 1000)?;
        if cpu_milli % 1000 != 0 {
            return Err(cols.bad(&rec, line, "cpu_milli", "whole cores (a multiple of 1000)"));
        }
        let memory_mib = cols.uint(&rec, line, "memory_mib", u64::MAX >> 1)?;
        let gpus = cols.uint(&rec, line, "gpu", 255)? as u32;
        let model = cols.text(&rec, "model").to_string();
        if gpus > 0 && model.is_empty() {
            return Err(TraceError::bad(file, line, "column 'model'", "a GPU model for a node with GPUs", ""));
        }
        nodes.push(OpenbNode { name, cpu_milli, memory_mib, gpus, model });
    }
    Ok(nodes)
}

/// Reads a pod list (11 or 5 columns).
pub fn parse_pods(file: &str, bytes: &[u8]) -> Result<Vec<OpenbPod>, TraceError> {
    let (header, recs) = records(file, bytes)?;
    let cols = Columns::new(file, &header, &["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"])?;
    let mut pods = Vec::with_capacity(recs.len());
    for (line, rec) in recs {
        let num_gpu = cols.uint(&rec, line, "num_gpu", 255)? as u32;
        let gpu_milli = cols.uint(&rec, line, "gpu_milli", 1000)? as u32;
        if num_gpu > 1 && gpu_milli != 1000 {
            return Err(cols.bad(
                &rec,
                line,
                "gpu_milli",
                "1000 for a pod with more than one GPU (only single-GPU pods share)",
            ));
        }
        if num_gpu > 0 && gpu_milli == 0 {
            return Err(TraceError::bad(file, line, "column 'gpu_milli'", "1..=1000 for a pod with GPUs", "0"));
        }
        let pod = OpenbPod {
            name: cols.text(&rec, "name").to_string(),
            cpu_milli: cols.uint(&rec, line, "cpu_milli", u32::MAX as u64)?,
            memory_mib: cols.uint(&rec, line, "memory_mib", u64::MAX >> 1)?,
            num_gpu,
            gpu_milli: if num_gpu == 0 { 0 } else { gpu_milli },
            gpu_spec: cols.text(&rec, "gpu_spec").split('|').filter(|m| !m.is_empty()).map(str::to_string).collect(),
            qos: cols.text(&rec, "qos").to_string(),
            phase: cols.text(&rec, "pod_phase").to_string(),
            creation: cols.opt_time(&rec, line, "creation_time")?,
            deletion: cols.opt_time(&rec, line, "deletion_time")?,
            scheduled: cols.opt_time(&rec, line, "scheduled_time")?,
        };
        pods.push(pod);
    }
    Ok(pods)
}

/// The cluster of a node list: one pool per run of identical consecutive nodes, GPU
/// memory from [`GPU_MEMORY_MIB`] (`default_gpu_mib` for unknown models), every pool
/// sharing its GPUs as `sharing`.
pub fn cluster(nodes: &[OpenbNode], sharing: GpuSharing, default_gpu_mib: u64) -> Cluster {
    let mut pools: Vec<NodePool> = Vec::new();
    for n in nodes {
        let spec = NodeSpec {
            cores: (n.cpu_milli / 1000) as u32,
            memory_mib: n.memory_mib,
            gpus: (0..n.gpus)
                .map(|_| GpuSpec {
                    model: n.model.clone(),
                    memory_mib: gpu_memory_mib(&n.model).unwrap_or(default_gpu_mib),
                    power: None,
                })
                .collect(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            topology: Default::default(),
        };
        match pools.last_mut() {
            Some(p) if p.spec == spec => p.count += 1,
            _ => pools.push(NodePool { name: n.name.clone(), count: 1, spec, sharing, group: None }),
        }
    }
    Cluster { pools }
}

impl OpenbPod {
    /// Its shape: milli-CPU (cores rounded up, at least one, for unit counts), memory,
    /// GPUs and milli-GPU.
    pub fn task(&self) -> TaskShape {
        TaskShape {
            cores: (self.cpu_milli.div_ceil(1000)).clamp(1, u32::MAX as u64) as u32,
            memory_mib: self.memory_mib,
            gpus: self.num_gpu,
            gpu_memory_mib: 0,
            cpu_milli: self.cpu_milli.max(1) as u32,
            gpu_milli: self.gpu_milli,
            gpu_peak_mib: 0,
            gpu_util_permille: 0,
        }
    }

    /// The pod as a job for a time-based replay: submitted at its creation, running
    /// until its deletion (`None` run time when either is missing, and the engine
    /// rejects it as `missing_runtime`); its `scheduled_time` is the observed start. QoS `LS` (latency-sensitive) is an inference
    /// service with priority 1; the others are batch-like training with priority 0.
    pub fn to_job(&self) -> Job {
        let runtime = match (self.creation, self.deletion) {
            (Some(c), Some(d)) if d >= c => Some(SimDuration::from_secs(d - c)),
            _ => None,
        };
        let ls = self.qos == "LS";
        Job {
            trace_id: self.name.clone(),
            submit: SimTime::from_secs(self.creation.unwrap_or(0)),
            tasks: 1,
            task: self.task(),
            runtime,
            requested: runtime,
            user: 0,
            group: 0,
            queue: -1,
            partition: -1,
            priority: i64::from(ls),
            kind: if ls { JobKind::Inference } else { JobKind::DlTrain },
            trace_status: if self.phase == "Failed" { TraceStatus::Failed } else { TraceStatus::Completed },
            gpu_models: self.gpu_spec.clone(),
            constraints: None,
            min_tasks: 0,
            observed_start: self.scheduled.map(SimTime::from_secs),
            restart_policy: Default::default(),
            checkpoint: None,
            domain: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_layouts() {
        let full = b"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
p0,12000,16384,1,460,T4|P100,LS,Running,10,70,10\n";
        let p = parse_pods("f.csv", full).unwrap();
        assert_eq!(p[0].gpu_spec, vec!["T4".to_string(), "P100".to_string()]);
        assert_eq!(p[0].to_job().runtime, Some(SimDuration::from_secs(60)));
        let short = b"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,6000,12288,2,1000\n";
        let p = parse_pods("g.csv", short).unwrap();
        assert_eq!((p[0].num_gpu, p[0].creation), (2, None));
    }

    #[test]
    fn errors_name_line_and_column() {
        let bad = b"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,6000,12288,2,500\n";
        let e = parse_pods("g.csv", bad).unwrap_err().to_string();
        assert!(e.starts_with("g.csv:2: column 'gpu_milli'"), "{e}");
        let huge = b"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
p0,1000,10,0,0,,LS,Running,0,18446744073709551615,0\n";
        let e = parse_pods("h.csv", huge).unwrap_err().to_string();
        assert!(e.starts_with("h.csv:2: column 'deletion_time': expected seconds (an integer 0..="), "{e}");
        let bad = b"sn,cpu_milli,memory_mib,gpu,model\nn0,64000,x,2,P100\n";
        let e = parse_nodes("n.csv", bad).unwrap_err().to_string();
        assert!(e.starts_with("n.csv:2: column 'memory_mib'"), "{e}");
    }
}
