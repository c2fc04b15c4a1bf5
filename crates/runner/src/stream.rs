//! Streamed replays: `sim run` on an SWF file reads each job as simulated time reaches
//! its submission and writes each record as the job leaves the system
//! ([`sim_core::simulate_stream`]), so a replay's memory follows the jobs in the system,
//! not the trace: `jobs.csv` and `frame.csv` are written row by row in input order, and
//! `summary.json` is summed as they go ([`reports::summary::SummaryBuilder`]; the waits'
//! median and p95 exact, spilled to disk past a budget).
//!
//! The files are byte for byte those of a replay that holds the whole trace
//! ([`crate::run::run`]). A replay streams when nothing in it needs the whole workload
//! at once ([`streams`]): an SWF file on its own machine, or a native or operator's trace
//! on a cluster configuration (read ahead once for what needs the whole workload), sorted
//! by submit time (as the Standard Workload Format asks), without controllers, faults,
//! perturbations, checkpoints or `sacct.txt`. Otherwise, and when a streamed read finds a
//! job submitted before the one before it, the trace is read whole as before.

use crate::RunError;
use crate::input::{Input, Loaded};
use crate::output::{AtomicFile, Finished};
use crate::run::{JobsFormat, Replayed, RunOptions};
use sim_core::{Job, JobId, JobRecord, JobSource, RecordSink};
use std::io::Write;

/// Whether a replay of `i` under `o` can stream: an SWF file on its own machine, no
/// option that reads or changes the whole workload, the run's controllers or its
/// per-job placements.
pub fn streams(i: &Input, o: &RunOptions) -> bool {
    streams_input(i) && streams_run(o)
}

/// The input's part of [`streams`]: SWF on its own machine; native or an operator's format
/// on a cluster configuration (without controllers, prices or domains: [`run`] reads it
/// and gives way otherwise); nothing that reads or changes the whole workload.
pub fn streams_input(i: &Input) -> bool {
    use traces::Format;
    let Some(path) = &i.trace else { return false };
    let format = i.format.unwrap_or_else(|| traces::detect_file_format(path));
    let format_ok = match format {
        Format::Swf => i.cluster.is_none(),
        Format::Native | Format::Sacct | Format::Philly | Format::Helios | Format::Sia | Format::Pai => {
            i.cluster.is_some() && i.procs.is_none()
        }
        Format::Batsim | Format::Openb => false,
    };
    format_ok
        && i.domain_traces.is_empty()
        && i.nodes.is_none()
        && i.sharing.is_none()
        && !i.synthetic_gpu_memory
        && (i.pai_jobs.is_none() || format == Format::Pai)
        && (i.app_runtimes.is_empty() || format == Format::Sia)
        && i.perturb.is_none()
        && i.slurm_conf.is_none()
        && i.slurm_qos.is_none()
        && i.slurm_assoc.is_none()
}

/// The run's part of [`streams`]: no controllers, faults, checkpoints or restarts, no
/// `sacct.txt` (it reads every job's placements).
pub fn streams_run(o: &RunOptions) -> bool {
    !crate::sacct::wanted(o.sacct, o.policy.as_deref().unwrap_or_default().trim())
        && o.controllers.is_empty()
        && o.faults.is_none()
        && o.checkpoint.is_none()
        && o.restarts.is_none()
        && o.slurm_conf.is_none()
        && o.arrangement.is_none()
        && o.variant.is_empty()
        && !o.compare_arrangements
}

/// A trace's jobs one at a time.
enum Reader {
    Swf(traces::swf::SwfReader),
    Native(traces::native::NativeReader),
    /// An operator's trace (`sacct`, Philly, Helios, Sia, PAI) and its checksum.
    Rows(Box<dyn traces::import::JobReader>, traces::input::Checksum),
}

impl Reader {
    /// A reader of the trace at `path` in `format` (not SWF, whose header is read first).
    fn open(i: &Input, path: &std::path::Path, format: traces::Format) -> Result<Reader, RunError> {
        let name = path.display().to_string();
        let bad = |e: traces::TraceError| RunError::BadInput(e.to_string());
        Ok(match format {
            traces::Format::Native => Reader::Native(traces::native::NativeReader::new(
                traces::input::open(path, &name).map_err(bad)?,
                &name,
                &[],
            )),
            f => {
                let opts = crate::input::import_options(&i.pai_jobs, &i.app_runtimes)?;
                let (r, sum) = traces::row_reader(path, f, &opts).map_err(bad)?;
                Reader::Rows(r, sum)
            }
        })
    }

    fn next(&mut self) -> Result<Option<Job>, traces::TraceError> {
        match self {
            Reader::Swf(r) => Ok(r.next_record()?.map(|r| r.to_job())),
            Reader::Native(r) => r.next_job(),
            Reader::Rows(r, _) => r.next_job(),
        }
    }

    fn checksum(&self) -> String {
        match self {
            Reader::Swf(r) => r.checksum(),
            Reader::Native(r) => r.checksum(),
            Reader::Rows(_, sum) => sum.hex(),
        }
    }
}

/// A trace read a job at a time, its GPU model names mapped onto the cluster's.
struct TraceSource {
    reader: Reader,
    /// The first job, read to complete an SWF header.
    first: Option<Job>,
    models: hw_calibrate::models::ModelMapper,
    done: bool,
}

impl TraceSource {
    fn new(reader: Reader, first: Option<Job>, cluster: &sim_core::Cluster) -> Self {
        let models = hw_calibrate::models::ModelMapper::new(cluster);
        TraceSource { reader, first, models, done: false }
    }
}

impl JobSource for TraceSource {
    fn next_job(&mut self) -> Result<Option<Job>, String> {
        let job = match self.first.take() {
            Some(j) => Some(j),
            None if self.done => None,
            None => self.reader.next().map_err(|e| e.to_string())?,
        };
        self.done = job.is_none();
        let Some(mut j) = job else { return Ok(None) };
        self.models.map(&mut j);
        Ok(Some(j))
    }

    /// The trace's length in jobs is not known until it is read: one while any may be
    /// left.
    fn remaining(&self) -> usize {
        usize::from(!self.done)
    }
}

/// Where a streamed replay's records go, as the jobs end: each job's rows of `jobs.csv`
/// and `frame.csv` formatted and held in the reorder buffer until every job before it is
/// written; the summary's and the offered load's sums that do not depend on order added
/// at once, the floating-point ones when the job's turn comes.
struct Outputs<'a> {
    jobs: &'a mut dyn Write,
    frame: &'a mut dyn Write,
    layout: JobsFormat,
    line: String,
    rows: reports::frame::FrameRows,
    reorder: crate::reorder::Reorder,
    summary: reports::summary::SummaryBuilder,
    load: traces::stats::OfferedLoad,
    jobs_seen: usize,
    gpu_jobs: usize,
}

impl Outputs<'_> {
    fn add(&mut self, id: JobId, job: &Job, rec: &JobRecord) -> std::io::Result<()> {
        self.jobs_seen += 1;
        self.gpu_jobs += usize::from(job.task.gpus > 0);
        // Its turn: written at once (the usual case), then those waiting behind it.
        if self.reorder.is_next(id.0) {
            match self.layout {
                JobsFormat::Default => reports::jobs_csv::write_job(self.jobs, &mut self.line, job, rec)?,
                JobsFormat::Batsim => reports::jobs_csv::write_batsim_job(self.jobs, job, rec)?,
            }
            self.rows.row_to(&reports::frame::JobRow::of(job, rec), self.frame)?;
            self.summary.add(job, rec)?;
            self.load.add(job);
            let (jobs, frame, summary, load) = (&mut *self.jobs, &mut *self.frame, &mut self.summary, &mut self.load);
            return self.reorder.advance(&mut |it| write_item(it, jobs, frame, summary, load));
        }
        let mut jobs_row = Vec::with_capacity(128);
        match self.layout {
            JobsFormat::Default => reports::jobs_csv::write_job(&mut jobs_row, &mut self.line, job, rec)?,
            JobsFormat::Batsim => reports::jobs_csv::write_batsim_job(&mut jobs_row, job, rec)?,
        }
        let frame_row = self.rows.row(&reports::frame::JobRow::of(job, rec))?;
        let in_order = self.summary.add_unordered(job, rec)?;
        let work = self.load.add_span(job);
        let item = crate::reorder::Item { jobs_row, frame_row, bounded_slowdown: in_order.bounded_slowdown, work };
        let (jobs, frame, summary, load) = (&mut *self.jobs, &mut *self.frame, &mut self.summary, &mut self.load);
        self.reorder.push(id.0, item, &mut |it| write_item(it, jobs, frame, summary, load))
    }
}

/// Writes a job's rows whose turn has come and adds its in-order figures.
fn write_item(
    it: crate::reorder::Item,
    jobs: &mut dyn Write,
    frame: &mut dyn Write,
    summary: &mut reports::summary::SummaryBuilder,
    load: &mut traces::stats::OfferedLoad,
) -> std::io::Result<()> {
    jobs.write_all(&it.jobs_row)?;
    frame.write_all(&it.frame_row)?;
    summary.add_in_order(reports::summary::InOrder { bounded_slowdown: it.bounded_slowdown });
    load.add_work(it.work);
    Ok(())
}

impl RecordSink for Outputs<'_> {
    fn record(&mut self, id: JobId, job: &Job, rec: JobRecord) -> Result<(), String> {
        self.add(id, job, &rec).map_err(|e| e.to_string())
    }
}

/// What a streamed replay produced, or why it gave way to a replay of the whole trace.
pub enum Streamed {
    /// Done: the run folder is written.
    Done {
        /// The replay.
        replayed: Box<Replayed>,
        /// What a user should read that could only be known once the trace was read (an
        /// SWF file's offered load), as [`crate::run::notes`] words it.
        notes: Vec<String>,
    },
    /// The trace is not sorted by submit time, has no job, or its cluster configuration
    /// has controllers, prices or domains: replay it whole ([`crate::input::load`] says
    /// what is wrong with it, if anything).
    ReadWhole,
}

/// What is known of a trace before its replay.
#[derive(Default)]
struct Known {
    /// Its jobs, when read ahead (a native trace's pre-pass).
    facts: Option<crate::run::Facts>,
    /// The first and last submission, µs.
    span: Option<(u64, u64)>,
    /// Its pods by type (the fragmentation's typical pods).
    pods: crate::fragmentation::PodCounts,
    /// Its offered load.
    load: traces::stats::OfferedLoad,
    /// An operator's trace's rows left out, by reason, and the names behind its ids.
    skipped: traces::import::Skipped,
    names: traces::import::Names,
}

/// Replays the trace of `i` under `o` streamed ([`streams`] must hold). `notes` gets
/// what a user should read before the run (as [`crate::input::load`] and
/// [`crate::run::notes`] word it); `size` the number of jobs when known before the run;
/// `progress` how many jobs were submitted, now and then.
pub fn run(
    i: &Input,
    o: &RunOptions,
    notes: &mut dyn FnMut(String),
    size: &mut dyn FnMut(Option<u64>),
    progress: Option<&mut dyn FnMut(u64)>,
) -> Result<Streamed, RunError> {
    let path = i.trace.as_deref().expect("streams() holds");
    let name = path.display().to_string();
    let bad = |e: traces::TraceError| RunError::BadInput(e.to_string());
    crate::input::refuse_empty(path)?;
    let open = || traces::input::open(path, &name).map_err(bad);
    let format = i.format.unwrap_or_else(|| traces::detect_file_format(path));
    let empty = |format, units, size_source, cluster, header| traces::Workload {
        format,
        jobs: Vec::new(),
        units,
        size_source,
        cluster,
        checksum: String::new(),
        header,
        skipped: Default::default(),
        names: Default::default(),
    };
    let (workload, mut source, known) = if format == traces::Format::Swf {
        let mut reader = traces::swf::SwfReader::new(open()?, &name);
        let Some(first) = reader.next_record().map_err(bad)?.map(|r| r.to_job()) else {
            return Ok(Streamed::ReadWhole);
        };
        size(reader.header().max_records);
        let header = reader.header().clone();
        let (units, size_source, mut cluster) = traces::swf_machine(&name, &header, i.procs).map_err(bad)?;
        hw_calibrate::attach_power(&mut cluster);
        let source = TraceSource::new(Reader::Swf(reader), Some(first), &cluster);
        (empty(format, units, size_source, cluster, header.lines), source, Known::default())
    } else {
        let config = crate::input::load_cluster(i.cluster.as_deref().expect("streams() holds"))?;
        let priced = config.prices.iter().any(|p| p.per_hour > 0.0);
        let units = config.cluster.total_units();
        if !config.controllers.is_empty()
            || !config.domains.is_empty()
            || priced
            || units == 0
            || units > u32::MAX as u64
        {
            return Ok(Streamed::ReadWhole);
        }
        let mut cluster = config.cluster;
        hw_calibrate::attach_power(&mut cluster);
        let Some(mut known) = read_ahead(Reader::open(i, path, format)?, format, &cluster, &name, notes)? else {
            return Ok(Streamed::ReadWhole);
        };
        size(known.facts.map(|f| f.jobs as u64));
        let source = TraceSource::new(Reader::open(i, path, format)?, None, &cluster);
        let mut w = empty(format, units, traces::SizeSource::NodeList, cluster, Vec::new());
        (w.skipped, w.names) = (std::mem::take(&mut known.skipped), std::mem::take(&mut known.names));
        (w, source, known)
    };
    let mut l = Loaded {
        workload,
        name,
        controllers: Vec::new(),
        perturb: None,
        prices: Vec::new(),
        slurm_restarts: None,
        domains: Vec::new(),
        node_domains: Vec::new(),
        arrangement: None,
    };
    if let Some(f) = &known.facts {
        let w = &l.workload;
        let load = known.load.of(w.units, w.cluster.total_gpus());
        crate::run::notes_of(o, &l, f, load)?.into_iter().for_each(&mut *notes);
    }
    // Not sorted by submit time after all: read whole.
    let Some((replayed, seen)) = replay(o, &mut l, &mut source, &known, progress)? else {
        return Ok(Streamed::ReadWhole);
    };
    let after = match known.facts {
        Some(_) => Vec::new(),
        None => {
            let w = &l.workload;
            let load = seen.load.of(w.units, w.cluster.total_gpus());
            crate::run::notes_of(o, &l, &seen.facts, load)?
        }
    };
    Ok(Streamed::Done { replayed: Box::new(replayed), notes: after })
}

/// A native trace's pre-pass: what the default policy, the notes and the GPU samples
/// need of the whole workload, in memory that does not grow with it. `None` when it has
/// no job or is not sorted by submit time.
fn read_ahead(
    mut r: Reader,
    format: traces::Format,
    cluster: &sim_core::Cluster,
    name: &str,
    notes: &mut dyn FnMut(String),
) -> Result<Option<Known>, RunError> {
    let mut models = hw_calibrate::models::ModelMapper::new(cluster);
    let (mut jobs, mut gpu_jobs) = (0usize, 0usize);
    let mut span: Option<(u64, u64)> = None;
    let mut pods = crate::fragmentation::PodCounts::default();
    let mut load = traces::stats::OfferedLoad::default();
    while let Some(mut j) = r.next().map_err(|e| RunError::BadInput(e.to_string()))? {
        if span.is_some_and(|(_, last)| j.submit.0 < last) {
            return Ok(None);
        }
        span = Some((span.map_or(j.submit.0, |s| s.0), j.submit.0));
        models.map(&mut j);
        jobs += 1;
        gpu_jobs += usize::from(j.task.gpus > 0);
        pods.add(&j);
        load.add(&j);
    }
    if jobs == 0 {
        return Ok(None);
    }
    // What `crate::input::load` says, in its order: an operator's trace's rows, then the
    // GPU models the cluster lacks.
    let (skipped, names) = match &r {
        Reader::Rows(rows, _) => {
            let skipped = rows.skipped();
            notes(crate::input::accounting(name, jobs as u64 + skipped.total(), jobs, skipped));
            (rows.skipped().clone(), rows.names())
        }
        _ => Default::default(),
    };
    if let Some(w) = models.unmatched.warning(jobs, cluster) {
        notes(format!("warning: {name}: {w}"));
    }
    let facts = Some(crate::run::Facts { format, jobs, gpu_jobs });
    Ok(Some(Known { facts, span, pods, load, skipped, names }))
}

/// What a replay saw of its jobs: the facts and offered load of an SWF file's notes.
struct Seen {
    facts: crate::run::Facts,
    load: traces::stats::OfferedLoad,
}

/// The replay itself: the engine over `source`, the files written as it goes; `None`
/// (nothing written) when the trace turns out not to be sorted by submit time.
fn replay(
    o: &RunOptions,
    l: &mut Loaded,
    source: &mut TraceSource,
    known: &Known,
    mut progress: Option<&mut dyn FnMut(u64)>,
) -> Result<Option<(Replayed, Seen)>, RunError> {
    let mut policy = crate::run::policy_for(o, Some(&l.workload), known.facts.as_ref(), false)?;
    let controllers = crate::run::controllers(o, &l.controllers)?;
    let controller_specs: Vec<String> = controllers.iter().map(|c| c.spec()).collect();
    let mut cfg = crate::run::sim_config(o, l)?;
    if let Some((first, last)) = known.span {
        cfg.gpu_sample_every = crate::run::sample_every(&l.workload.cluster, first, last);
    }
    let fragmentation: Option<Box<dyn sim_core::Fragmentation>> =
        cfg.gpu_sample_every.map(|_| Box::new(known.pods.fgd()) as _);
    std::fs::create_dir_all(&o.out)
        .map_err(|e| RunError::Other(format!("{}: cannot create folder: {e}", o.out.display())))?;
    let io_err = |what: &str, e: std::io::Error| RunError::Other(format!("{}: {e}", o.out.join(what).display()));
    let create = |what: &str| AtomicFile::create(&o.out.join(what)).map_err(|e| io_err(what, e));
    let (mut jobs_file, mut frame_file) = (create("jobs.csv")?, create("frame.csv")?);
    let mut log_file = if o.log { Some(create("decisions.jsonl")?) } else { None };
    let header = match o.jobs_format {
        JobsFormat::Default => reports::jobs_csv::HEADER,
        JobsFormat::Batsim => reports::jobs_csv::BATSIM_HEADER,
    };
    writeln!(jobs_file.writer(), "{header}").map_err(|e| io_err("jobs.csv", e))?;
    let (result, summary, seen) = {
        let (rows, header) = reports::frame::FrameRows::new().map_err(|e| io_err("frame.csv", e))?;
        frame_file.writer().write_all(&header).map_err(|e| io_err("frame.csv", e))?;
        let waits = sim_core::order_stats::OrderStats::spilling(&o.out, sim_core::order_stats::IN_MEMORY);
        let mut out = Outputs {
            jobs: jobs_file.writer(),
            frame: frame_file.writer(),
            layout: o.jobs_format,
            line: String::with_capacity(128),
            rows,
            reorder: crate::reorder::Reorder::new(&o.out, crate::reorder::IN_MEMORY),
            summary: reports::summary::SummaryBuilder::new(waits),
            load: Default::default(),
            jobs_seen: 0,
            gpu_jobs: 0,
        };
        let mut sink = log_file.as_mut().map(|f| crate::run::JsonLines { out: f.writer() });
        let hooks = sim_core::Hooks {
            log: sink.as_mut().map(|s| s as &mut dyn sim_core::log::LogSink),
            progress: progress.as_mut().map(|p| &mut **p as &mut dyn FnMut(u64)),
            controllers,
            fragmentation,
        };
        let result =
            match sim_core::simulate_stream(&l.workload.cluster, source, &mut out, policy.as_mut(), &cfg, hooks) {
                Ok(r) => r,
                Err(sim_core::EngineError::Unsorted(_)) => return Ok(None),
                Err(e) if e.is_bad_input() => return Err(RunError::BadInput(e.to_string())),
                Err(e) => return Err(RunError::Other(e.to_string())),
            };
        // Every job has its record, each written in turn.
        debug_assert!(out.reorder.is_empty());
        let facts = crate::run::Facts { format: l.workload.format, jobs: out.jobs_seen, gpu_jobs: out.gpu_jobs };
        (result, out.summary, Seen { facts, load: out.load })
    };
    l.workload.checksum = source.reader.checksum();
    let meta = crate::run::run_meta(o, l, policy.spec(), controller_specs, None, &cfg);
    let mut summary = summary.finish(meta).map_err(|e| io_err("summary.json", e))?;
    crate::run::add_run_figures(&mut summary, &result);
    let finish = |f: AtomicFile, what: &str| f.finish().map_err(|e| io_err(what, e));
    let mut files: Vec<(&str, Finished)> = vec![("jobs.csv", finish(jobs_file, "jobs.csv")?)];
    files.push(("frame.csv", finish(frame_file, "frame.csv")?));
    if !result.gpu_samples.is_empty() {
        let f = crate::output::write_finished(&o.out.join("fragmentation.csv"), |out| {
            reports::fragmentation::write_csv(out, &result.gpu_samples)
        })
        .map_err(|e| io_err("fragmentation.csv", e))?;
        files.push(("fragmentation.csv", f));
    }
    let written =
        crate::output::write_finished(&o.out.join("summary.json"), |out| crate::run::write_summary(out, &summary))
            .map_err(|e| io_err("summary.json", e))?;
    files.push(("summary.json", written));
    if let Some(f) = log_file {
        files.push(("decisions.jsonl", finish(f, "decisions.jsonl")?));
    }
    let written = crate::run::rename_all(o, files)?;
    Ok(Some((Replayed { summary, written }, seen)))
}
