//! # traces: reading and writing workloads
//!
//! Streaming readers that report file, line and field on every error:
//! * [`swf`] — the Parallel Workloads Archive's Standard Workload Format, plain or gzip;
//! * [`batsim`] — Batsim JSON workloads with `delay` profiles;
//! * [`openb`] — Alibaba's openb GPU-sharing node and pod lists (CSV).
//!
//! [`gpumem`] generates GPU memory demand for traces that carry none; [`cluster_toml`]
//! reads cluster configurations.
//!
//! [`load`] reads either into a [`Workload`]: the jobs in file order, the machine size,
//! and a checksum of the file.

pub mod batsim;
pub mod cluster_toml;
pub mod error;
pub mod gpumem;
pub mod input;
pub mod native;
pub mod openb;
pub mod swf;
pub mod synthetic;

pub use error::{Location, TraceError};

use sim_core::{Cluster, Job};
use std::io::Read;
use std::path::Path;

/// Trace formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Standard Workload Format.
    Swf,
    /// Batsim JSON.
    Batsim,
    /// Alibaba openb pod list (CSV), with a node list.
    Openb,
    /// schedlab's native JSON Lines workload, with a cluster config.
    Native,
}

impl Format {
    /// Name as the CLI takes it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Swf => "swf",
            Format::Batsim => "batsim",
            Format::Openb => "openb",
            Format::Native => "native",
        }
    }
}

/// Where the machine size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeSource {
    /// `--procs`.
    Override,
    /// SWF `MaxProcs`.
    MaxProcs,
    /// SWF `MaxNodes`.
    MaxNodes,
    /// Batsim `nb_res`.
    NbRes,
    /// A node list (cores over its nodes).
    NodeList,
}

/// A workload read from a trace.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Its format.
    pub format: Format,
    /// Jobs in file order.
    pub jobs: Vec<Job>,
    /// Machine size in units (processors or machines).
    pub units: u64,
    /// Where that came from.
    pub size_source: SizeSource,
    /// The cluster the jobs run on.
    pub cluster: Cluster,
    /// SHA-256 of the file's bytes, hex.
    pub checksum: String,
    /// SWF header lines (verbatim), empty for Batsim.
    pub header: Vec<String>,
}

/// Detects the format from the file name, else from the first non-blank byte.
pub fn detect_format(name: &str, first_bytes: &[u8]) -> Format {
    let lower = name.to_ascii_lowercase();
    let lower = lower.strip_suffix(".gz").unwrap_or(&lower);
    if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
        return Format::Native;
    }
    if lower.ends_with(".json") {
        return Format::Batsim;
    }
    if lower.ends_with(".swf") {
        return Format::Swf;
    }
    let start = first_bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(first_bytes.len());
    let rest = &first_bytes[start..];
    if rest.starts_with(b"{") {
        Format::Batsim
    } else if rest.starts_with(b"name,cpu_milli") {
        Format::Openb
    } else {
        Format::Swf
    }
}

/// The format of the trace file at `path`: by its name, else by its first bytes after
/// decompression (a `.csv.gz` openb pod list is openb). An unreadable file is taken by
/// its name alone; reading it later reports the error.
pub fn detect_file_format(path: &Path) -> Format {
    let name = path.display().to_string();
    let head = input::open(path, &name)
        .ok()
        .and_then(|mut t| std::io::BufRead::fill_buf(&mut t.reader).ok().map(|b| b[..b.len().min(64)].to_vec()))
        .unwrap_or_default();
    detect_format(&name, &head)
}

/// Reads an openb pod list and its node list: the pods as jobs (submitted at creation,
/// running until deletion) on the nodes' cluster, every pool sharing its GPUs as
/// `sharing`.
pub fn load_openb(pods: &Path, nodes: &Path, sharing: sim_core::GpuSharing) -> Result<Workload, TraceError> {
    let (nb, nname, _) = read_file(nodes)?;
    let node_list = openb::parse_nodes(&nname, &nb)?;
    if node_list.is_empty() {
        return Err(TraceError::malformed(&nname, None, None, "the node list has no nodes"));
    }
    load_openb_on(pods, openb::cluster(&node_list, sharing, openb::UNKNOWN_GPU_MEMORY_MIB))
}

/// Reads an openb pod list to replay on `cluster` (e.g. one read by [`cluster_toml`]).
pub fn load_openb_on(pods: &Path, cluster: Cluster) -> Result<Workload, TraceError> {
    let (pb, pname, checksum) = read_file(pods)?;
    let jobs: Vec<Job> = openb::parse_pods(&pname, &pb)?.iter().map(openb::OpenbPod::to_job).collect();
    on_cluster(Format::Openb, &pname, jobs, cluster, checksum)
}

/// Reads a native JSON Lines workload to replay on `cluster`.
pub fn load_native(path: &Path, cluster: Cluster) -> Result<Workload, TraceError> {
    let (bytes, name, checksum) = read_file(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        TraceError::malformed(&name, Some(line), None, "not UTF-8 text")
    })?;
    let jobs = native::parse(&name, text)?;
    on_cluster(Format::Native, &name, jobs, cluster, checksum)
}

/// A workload of `jobs` on a cluster given with them (node list or cluster config).
fn on_cluster(
    format: Format,
    name: &str,
    jobs: Vec<Job>,
    cluster: Cluster,
    checksum: String,
) -> Result<Workload, TraceError> {
    let units = cluster.total_units();
    if units == 0 || units > u32::MAX as u64 {
        return Err(TraceError::malformed(name, None, None, "the cluster has no CPU cores (or too many)"));
    }
    Ok(Workload { format, jobs, units, size_source: SizeSource::NodeList, cluster, checksum, header: Vec::new() })
}

/// A whole file (plain or gzip, detected by its bytes), its name as errors give it, and
/// the SHA-256 of its bytes.
pub fn read_file(path: &Path) -> Result<(Vec<u8>, String, String), TraceError> {
    let name = path.display().to_string();
    let mut input = input::open(path, &name)?;
    let mut bytes = Vec::new();
    let gzip = input.gzip;
    input.reader.read_to_end(&mut bytes).map_err(|e| input::read_error(&name, 1, gzip, e))?;
    Ok((bytes, name, input.checksum.hex()))
}

/// Reads a trace file. `format: None` detects it; `procs` overrides the machine size.
pub fn load(path: &Path, format: Option<Format>, procs: Option<u64>) -> Result<Workload, TraceError> {
    let name = path.display().to_string();
    let input = input::open(path, &name)?;
    load_input(input, &name, format, procs)
}

/// Reads a trace held in memory (the embedded default).
pub fn load_bytes(
    bytes: &'static [u8],
    name: &str,
    format: Option<Format>,
    procs: Option<u64>,
) -> Result<Workload, TraceError> {
    load_input(input::from_bytes(bytes, name)?, name, format, procs)
}

fn load_input(
    mut input: input::TraceInput,
    name: &str,
    format: Option<Format>,
    procs: Option<u64>,
) -> Result<Workload, TraceError> {
    use std::io::BufRead;
    let format = match format {
        Some(f) => f,
        None => {
            let head = input.reader.fill_buf().map_err(|e| input::read_error(name, 1, input.gzip, e))?;
            detect_format(name, head)
        }
    };
    match format {
        Format::Openb => Err(TraceError::malformed(
            name,
            None,
            None,
            "an openb pod list needs its node list (sim run --nodes openb_node_list_gpu_node.csv)",
        )),
        Format::Native => Err(TraceError::malformed(
            name,
            None,
            None,
            "a native workload needs its cluster (sim run --cluster CLUSTER.toml)",
        )),
        Format::Swf => {
            let mut r = swf::SwfReader::new(input, name);
            let mut jobs = Vec::new();
            while let Some(rec) = r.next_record()? {
                if jobs.is_empty() {
                    // The header is complete: MaxRecords sizes the job list (capped, in
                    // case it lies).
                    jobs.reserve(r.header().max_records.unwrap_or(1024).min(1 << 24) as usize);
                }
                jobs.push(rec.to_job());
            }
            let h = r.header().clone();
            let (units, size_source) = match (procs, h.max_procs.filter(|&p| p > 0), h.max_nodes.filter(|&n| n > 0)) {
                (Some(p), _, _) => (p, SizeSource::Override),
                (None, Some(p), _) => (p, SizeSource::MaxProcs),
                (None, None, Some(n)) => (n, SizeSource::MaxNodes),
                _ => {
                    return Err(TraceError::malformed(
                        name,
                        None,
                        Some("header".into()),
                        "no '; MaxProcs:' or '; MaxNodes:' line gives the machine size; pass --procs N",
                    ));
                }
            };
            let cluster = machine(name, units, Cluster::processor_pool)?;
            Ok(Workload { format, jobs, units, size_source, cluster, checksum: r.checksum(), header: h.lines })
        }
        Format::Batsim => {
            let mut text = String::new();
            let gzip = input.gzip;
            input.reader.read_to_string(&mut text).map_err(|e| input::read_error(name, 1, gzip, e))?;
            let w = batsim::parse(name, &text)?;
            let (units, size_source) = match procs {
                Some(p) => (p, SizeSource::Override),
                None => (w.nb_res, SizeSource::NbRes),
            };
            let cluster = machine(name, units, Cluster::machines)?;
            Ok(Workload {
                format,
                jobs: w.jobs,
                units,
                size_source,
                cluster,
                checksum: input.checksum.hex(),
                header: Vec::new(),
            })
        }
    }
}

fn machine(name: &str, units: u64, make: fn(u32) -> Cluster) -> Result<Cluster, TraceError> {
    if units == 0 || units > u32::MAX as u64 {
        return Err(TraceError::malformed(
            name,
            None,
            Some("machine size".into()),
            format!("{units} units: expected 1 to {}", u32::MAX),
        ));
    }
    Ok(make(units as u32))
}
