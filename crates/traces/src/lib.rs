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
pub mod faults;
pub mod fit;
pub mod generator;
pub mod gpumem;
pub mod helios;
pub mod import;
pub mod input;
pub mod native;
pub mod openb;
pub mod pai;
pub mod perturb;
pub mod philly;
pub mod sacct;
pub mod sia;
pub mod stats;
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
    /// Slurm `sacct --parsable2 --allocations` output.
    Sacct,
    /// Microsoft Philly jobs as Sia's `philly.csv` gives them.
    Philly,
    /// SenseTime Helios `cluster_log.csv`.
    Helios,
    /// Sia / Pollux workload CSV (`name,time,application,num_replicas,batch_size`).
    Sia,
    /// Alibaba PAI 2020 task table (with its job table).
    Pai,
}

/// Every format, in the order the CLI lists them.
pub const FORMATS: [Format; 9] = [
    Format::Swf,
    Format::Batsim,
    Format::Openb,
    Format::Native,
    Format::Sacct,
    Format::Philly,
    Format::Helios,
    Format::Sia,
    Format::Pai,
];

impl Format {
    /// Name as the CLI takes it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Swf => "swf",
            Format::Batsim => "batsim",
            Format::Openb => "openb",
            Format::Native => "native",
            Format::Sacct => "sacct",
            Format::Philly => "philly",
            Format::Helios => "helios",
            Format::Sia => "sia",
            Format::Pai => "pai",
        }
    }

    /// The format named `name` (as [`Format::name`] spells it); else what was expected:
    /// "format: expected one of swf, batsim, ..., found 'x'".
    pub fn named(name: &str) -> Result<Format, String> {
        FORMATS.iter().copied().find(|f| f.name() == name).ok_or_else(|| {
            let known: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
            format!("format: expected one of {}, found '{name}'", known.join(", "))
        })
    }

    /// Whether a replay of it needs a cluster given with it (`--cluster`, or a node list
    /// for openb): the format does not describe the machine.
    pub fn needs_cluster(self) -> bool {
        !matches!(self, Format::Swf | Format::Batsim)
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
    /// Rows of the trace that became no job, by reason (importers of operators' formats).
    pub skipped: import::Skipped,
    /// The names behind its queue and partition ids, where the format has names.
    pub names: import::Names,
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
    let base = lower.rsplit(['/', '\\']).next().unwrap_or(lower);
    if base.starts_with("pai_task_table") {
        return Format::Pai;
    }
    let start = first_bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(first_bytes.len());
    let rest = &first_bytes[start..];
    let rest = rest.strip_prefix("\u{feff}".as_bytes()).unwrap_or(rest);
    let first_line = &rest[..rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())];
    let has = |needle: &[u8]| first_line.windows(needle.len()).any(|w| w == needle);
    if rest.starts_with(b"{") {
        Format::Batsim
    } else if rest.starts_with(b"name,cpu_milli") {
        Format::Openb
    } else if first_line.contains(&b'|') && has(b"JobID") {
        Format::Sacct
    } else if rest.starts_with(b"timestamp,duration,num_gpus") {
        Format::Philly
    } else if has(b"job_id") && has(b"submit_time") && has(b"gpu_num") {
        Format::Helios
    } else if rest.starts_with(b"name,time,application,num_replicas") {
        Format::Sia
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
        .and_then(|mut t| std::io::BufRead::fill_buf(&mut t.reader).ok().map(|b| b[..b.len().min(512)].to_vec()))
        .unwrap_or_default();
    detect_format(&name, &head)
}

/// Whether the file at `path` holds nothing but white space (after gunzip): "no jobs
/// (empty file)", rather than whatever the format detected from nothing would say.
pub fn is_blank_file(path: &Path) -> Result<bool, TraceError> {
    use std::io::BufRead;
    let name = path.display().to_string();
    let mut t = input::open(path, &name)?;
    let mut line = 1;
    loop {
        let buf = t.reader.fill_buf().map_err(|e| input::read_error(&name, line, t.gzip, e))?;
        if buf.is_empty() {
            return Ok(true);
        }
        if buf.iter().any(|b| !b.is_ascii_whitespace()) {
            return Ok(false);
        }
        line += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        let n = buf.len();
        t.reader.consume(n);
    }
}

/// How [`open`] reads a trace: everything that is not in the file.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Its format; detected from the name, else the first bytes, when `None`.
    pub format: Option<Format>,
    /// Machine size in processors, overriding an SWF or Batsim file's.
    pub procs: Option<u64>,
    /// The cluster to replay on: it replaces the machine the trace describes, and the
    /// formats that describe none (native, openb without a node list, the operators')
    /// need it.
    pub cluster: Option<Cluster>,
    /// The node list of an openb pod list, when no cluster is given.
    pub nodes: Option<std::path::PathBuf>,
    /// How an openb node list's GPUs are shared.
    pub sharing: sim_core::GpuSharing,
    /// What the importers need beyond the file (a PAI job table, Sia run times).
    pub import: ImportOptions,
    /// The cluster's scheduling domains: a native job's `domain` names one of them.
    pub domains: Vec<String>,
}

/// Reads a trace of any format into a workload on its cluster: the one entry point for
/// replays. SWF and Batsim give their own machine (`procs` overrides its size), an openb
/// pod list its node list; `cluster` replaces either and is required by the other
/// formats (a missing one is an error saying so).
pub fn open(path: &Path, opts: &LoadOptions) -> Result<Workload, TraceError> {
    let name = path.display().to_string();
    let format = opts.format.unwrap_or_else(|| detect_file_format(path));
    let needs = |what: String| TraceError::malformed(&name, None, None, what);
    let mut w = match (format, &opts.cluster) {
        (Format::Native, Some(c)) => load_native_in(path, c.clone(), &opts.domains)?,
        (Format::Openb, Some(c)) => load_openb_on(path, c.clone())?,
        (Format::Openb, None) => match &opts.nodes {
            Some(nodes) => load_openb(path, nodes, opts.sharing)?,
            None => {
                return Err(needs(
                    "an openb pod list needs its nodes: --nodes NODES.csv or --cluster CLUSTER.toml".into(),
                ));
            }
        },
        (Format::Swf | Format::Batsim, _) => load(path, Some(format), opts.procs)?,
        (f, Some(c)) => imported_on(import(path, Some(f), &opts.import)?, &name, c.clone())?,
        (Format::Native, None) => {
            return Err(needs("a native workload needs its cluster: --cluster CLUSTER.toml".into()));
        }
        (f, None) => {
            return Err(needs(format!(
                "a {} trace does not describe the machine: give it --cluster CLUSTER.toml",
                f.name()
            )));
        }
    };
    if let (Some(c), Format::Swf | Format::Batsim) = (&opts.cluster, format) {
        w.units = c.total_units();
        w.cluster = c.clone();
    }
    Ok(w)
}

/// As [`open`], for a trace held in memory (the embedded default): SWF or Batsim.
pub fn open_bytes(bytes: &'static [u8], name: &str, opts: &LoadOptions) -> Result<Workload, TraceError> {
    let mut w = load_bytes(bytes, name, opts.format, opts.procs)?;
    if let Some(c) = &opts.cluster {
        w.units = c.total_units();
        w.cluster = c.clone();
    }
    Ok(w)
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
    load_native_in(path, cluster, &[])
}

/// As [`load_native`], on a cluster with these scheduling domains (a job's `domain`).
pub fn load_native_in(path: &Path, cluster: Cluster, domains: &[String]) -> Result<Workload, TraceError> {
    let (bytes, name, checksum) = read_file(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        TraceError::malformed(&name, Some(line), None, "not UTF-8 text")
    })?;
    let jobs = native::parse_in_domains(&name, text, domains)?;
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
    Ok(Workload {
        format,
        jobs,
        units,
        size_source: SizeSource::NodeList,
        cluster,
        checksum,
        header: Vec::new(),
        skipped: import::Skipped::default(),
        names: import::Names::default(),
    })
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
        Format::Native | Format::Sacct | Format::Philly | Format::Helios | Format::Sia | Format::Pai => {
            Err(TraceError::malformed(
                name,
                None,
                None,
                format!("a {} workload needs its cluster (sim run --cluster CLUSTER.toml)", format.name()),
            ))
        }
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
            let (units, size_source, cluster) = swf_machine(name, &h, procs)?;
            Ok(Workload {
                format,
                jobs,
                units,
                size_source,
                cluster,
                checksum: r.checksum(),
                header: h.lines,
                skipped: import::Skipped::default(),
                names: import::Names::default(),
            })
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
                skipped: import::Skipped::default(),
                names: import::Names::default(),
            })
        }
    }
}

/// The machine an SWF file describes (its header's `MaxProcs`, else `MaxNodes`;
/// `procs` overrides both): its size, where that came from, and its processors.
pub fn swf_machine(
    name: &str,
    h: &swf::SwfHeader,
    procs: Option<u64>,
) -> Result<(u64, SizeSource, Cluster), TraceError> {
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
    Ok((units, size_source, machine(name, units, Cluster::processor_pool)?))
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

/// What some importers need beyond the file itself.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The Alibaba PAI job table (`pai_job_table.csv`) that goes with a task table: it
    /// gives each job's submission time and user.
    pub pai_jobs: Option<std::path::PathBuf>,
    /// Run time of each application of a Sia / Pollux workload, which gives none
    /// (`cifar10` → 1 h): those simulators derive it from a goodput model.
    pub app_runtimes: std::collections::BTreeMap<String, sim_core::SimDuration>,
}

/// The jobs of a trace file of any format, with every data row accounted for.
#[derive(Debug, Clone)]
pub struct Imported {
    /// Its format.
    pub format: Format,
    /// The jobs in file order.
    pub jobs: Vec<Job>,
    /// Data rows (SWF job lines, CSV rows, JSON jobs) read.
    pub rows: u64,
    /// Rows that became no job, by reason.
    pub skipped: import::Skipped,
    /// SHA-256 of the file's bytes, hex.
    pub checksum: String,
    /// The machine size the file states (SWF `MaxProcs`/`MaxNodes`, Batsim `nb_res`).
    pub units: Option<u64>,
    /// The nodes the file states (SWF `MaxNodes`, Batsim `nb_res`: one machine each).
    pub nodes: Option<u64>,
    /// The names behind its queue and partition ids, where the format has names.
    pub names: import::Names,
}

/// Reads the jobs of a trace of any format (`None` detects it) without a cluster: for
/// `sim trace stats`, `sim trace convert`, `sim trace fit`, and replays given `--cluster`.
pub fn import(path: &Path, format: Option<Format>, opts: &ImportOptions) -> Result<Imported, TraceError> {
    let mut jobs = Vec::new();
    let mut i = import_each(path, format, opts, &mut |j| {
        jobs.push(j);
        Ok(())
    })?;
    i.jobs = jobs;
    Ok(i)
}

/// [`import`] a job at a time: each job goes to `each` in file order, and the result
/// holds no job. SWF, native JSON Lines and the operators' formats are read a row at a
/// time; Batsim's JSON and openb's CSV are parsed whole first.
pub fn import_each(
    path: &Path,
    format: Option<Format>,
    opts: &ImportOptions,
    each: &mut dyn FnMut(Job) -> Result<(), TraceError>,
) -> Result<Imported, TraceError> {
    let name = path.display().to_string();
    let format = format.unwrap_or_else(|| detect_file_format(path));
    let open = || input::open(path, &name);
    let imported = |rows, skipped, checksum, units, nodes, names| Imported {
        format,
        jobs: Vec::new(),
        rows,
        skipped,
        checksum,
        units,
        nodes,
        names,
    };
    let mut rows = 0u64;
    let mut count = |j: Job| {
        rows += 1;
        each(j)
    };
    match format {
        Format::Swf => {
            let mut r = swf::SwfReader::new(open()?, &name);
            while let Some(rec) = r.next_record()? {
                count(rec.to_job())?;
            }
            let h = r.header();
            let nodes = h.max_nodes.filter(|&n| n > 0);
            let units = h.max_procs.filter(|&p| p > 0).or(nodes);
            Ok(imported(rows, import::Skipped::default(), r.checksum(), units, nodes, Default::default()))
        }
        Format::Batsim => {
            let (bytes, name, checksum) = read_file(path)?;
            let text =
                std::str::from_utf8(&bytes).map_err(|_| TraceError::malformed(&name, None, None, "not UTF-8 text"))?;
            let w = batsim::parse(&name, text)?;
            w.jobs.into_iter().try_for_each(&mut count)?;
            Ok(imported(rows, import::Skipped::default(), checksum, Some(w.nb_res), Some(w.nb_res), Default::default()))
        }
        Format::Openb => {
            let (bytes, name, checksum) = read_file(path)?;
            openb::parse_pods(&name, &bytes)?.iter().map(openb::OpenbPod::to_job).try_for_each(&mut count)?;
            Ok(imported(rows, import::Skipped::default(), checksum, None, None, Default::default()))
        }
        Format::Native => {
            let mut r = native::NativeReader::new(open()?, &name, &[]);
            while let Some(j) = r.next_job()? {
                count(j)?;
            }
            Ok(imported(rows, import::Skipped::default(), r.checksum(), None, None, Default::default()))
        }
        Format::Sacct | Format::Philly | Format::Helios | Format::Sia | Format::Pai => {
            let (mut reader, sum) = row_reader(path, format, opts)?;
            while let Some(j) = reader.next_job()? {
                each(j)?;
            }
            let (rows, skipped, names) = (reader.rows(), reader.skipped().clone(), reader.names());
            Ok(imported(rows, skipped, sum.hex(), None, None, names))
        }
    }
}

/// A reader of the rows of an operator's trace (`sacct`, Philly, Helios, Sia, PAI), one job
/// at a time, and the checksum of the bytes it reads.
pub fn row_reader(
    path: &Path,
    format: Format,
    opts: &ImportOptions,
) -> Result<(Box<dyn import::JobReader>, input::Checksum), TraceError> {
    let name = path.display().to_string();
    let i = input::open(path, &name)?;
    let sum = i.checksum.clone();
    let reader: Box<dyn import::JobReader> = match format {
        Format::Sacct => Box::new(sacct::SacctReader::new(i, &name)?),
        Format::Philly => Box::new(philly::PhillyReader::new(i, &name)?),
        Format::Helios => Box::new(helios::HeliosReader::new(i, &name)?),
        Format::Sia => Box::new(sia::SiaReader::new(i, &name, &opts.app_runtimes)?),
        Format::Pai => {
            let jobs = match &opts.pai_jobs {
                Some(p) => {
                    let jname = p.display().to_string();
                    Some((jname.clone(), input::open(p, &jname)?))
                }
                None => None,
            };
            Box::new(pai::PaiReader::new(i, &name, jobs)?)
        }
        other => {
            return Err(TraceError::malformed(&name, None, None, format!("{} is not read by rows", other.name())));
        }
    };
    Ok((reader, sum))
}

/// An imported workload replayed on `cluster`.
pub fn imported_on(i: Imported, name: &str, cluster: Cluster) -> Result<Workload, TraceError> {
    let mut w = on_cluster(i.format, name, i.jobs, cluster, i.checksum)?;
    w.skipped = i.skipped;
    w.names = i.names;
    Ok(w)
}
