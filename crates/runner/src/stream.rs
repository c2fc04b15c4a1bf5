//! Streamed replays: `sim run` on an SWF file reads each job as simulated time reaches
//! its submission and writes each record as the job leaves the system
//! ([`sim_core::simulate_stream`]), so a replay's memory follows the jobs in the system,
//! not the trace: `jobs.csv` and `frame.csv` are written row by row in input order, and
//! `summary.json` is summed as they go ([`reports::summary::SummaryBuilder`]; the waits'
//! median and p95 exact, spilled to disk past a budget).
//!
//! The files are byte for byte those of a replay that holds the whole trace
//! ([`crate::run::run`]). A replay streams when nothing in it needs the whole workload
//! at once ([`streams`]): an SWF file on its own machine, sorted by submit time (as the
//! Standard Workload Format asks), without controllers, faults, perturbations,
//! checkpoints or `sacct.txt`. Otherwise, and when a streamed read finds a job submitted
//! before the one before it, the trace is read whole as before.

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
    let Some(path) = &i.trace else { return false };
    let swf = match i.format {
        Some(f) => f == traces::Format::Swf,
        None => traces::detect_file_format(path) == traces::Format::Swf,
    };
    let plain_input = i.domain_traces.is_empty()
        && i.nodes.is_none()
        && i.cluster.is_none()
        && i.sharing.is_none()
        && !i.synthetic_gpu_memory
        && i.pai_jobs.is_none()
        && i.app_runtimes.is_empty()
        && i.perturb.is_none()
        && i.slurm_conf.is_none()
        && i.slurm_qos.is_none()
        && i.slurm_assoc.is_none();
    let plain_run = o.controllers.is_empty()
        && o.faults.is_none()
        && o.checkpoint.is_none()
        && o.restarts.is_none()
        && !o.sacct
        && o.slurm_conf.is_none()
        && o.arrangement.is_none()
        && o.variant.is_empty()
        && !o.compare_arrangements;
    swf && plain_input && plain_run
}

/// An SWF file read a job at a time.
struct SwfSource {
    reader: traces::swf::SwfReader,
    /// The first job, read to complete the header.
    first: Option<Job>,
    done: bool,
    last_submit: sim_core::SimTime,
    /// Set when a job is submitted before the one before it.
    unsorted: bool,
}

impl JobSource for SwfSource {
    fn next_job(&mut self) -> Result<Option<Job>, String> {
        let job = match self.first.take() {
            Some(j) => Some(j),
            None if self.done => None,
            None => self.reader.next_record().map_err(|e| e.to_string())?.map(|r| r.to_job()),
        };
        self.done = job.is_none();
        if let Some(j) = &job {
            if j.submit < self.last_submit {
                self.unsorted = true;
                return Err(format!("job {} is submitted before the job before it", j.trace_id));
            }
            self.last_submit = j.submit;
        }
        Ok(job)
    }

    /// The file's length in jobs is not known until it is read: one while any may be left.
    fn remaining(&self) -> usize {
        usize::from(!self.done)
    }
}

/// Where a streamed replay's records go: `jobs.csv` and `frame.csv` row by row, the
/// summary's sums, the offered load.
struct Outputs<'a> {
    jobs: &'a mut dyn Write,
    layout: JobsFormat,
    line: String,
    frame: reports::frame::FrameWriter<&'a mut dyn Write>,
    summary: reports::summary::SummaryBuilder,
    load: traces::stats::OfferedLoad,
    gpu_jobs: bool,
}

impl RecordSink for Outputs<'_> {
    fn record(&mut self, _: JobId, job: &Job, rec: JobRecord) -> Result<(), String> {
        let io = |e: std::io::Error| e.to_string();
        match self.layout {
            JobsFormat::Default => reports::jobs_csv::write_job(self.jobs, &mut self.line, job, &rec).map_err(io)?,
            JobsFormat::Batsim => reports::jobs_csv::write_batsim_job(self.jobs, job, &rec).map_err(io)?,
        }
        self.frame.row(&reports::frame::JobRow::of(job, &rec)).map_err(io)?;
        self.summary.add(job, &rec).map_err(io)?;
        self.load.add(job);
        self.gpu_jobs |= job.task.gpus > 0;
        Ok(())
    }
}

/// What a streamed replay produced, or why it gave way to a replay of the whole trace.
pub enum Streamed {
    /// Done: the run folder is written.
    Done {
        /// The replay.
        replayed: Replayed,
        /// The low-load warning, if the workload leaves the cluster idle.
        warning: Option<String>,
    },
    /// The file is not sorted by submit time, or has no job: replay it whole
    /// ([`crate::input::load`] says what is wrong with it, if anything).
    ReadWhole,
}

/// Replays the SWF file of `i` under `o` streamed ([`streams`] must hold). `progress` is
/// told how many jobs were submitted now and then; `size` of the header's
/// `MaxRecords`, when it gives one, before the run.
pub fn run(
    i: &Input,
    o: &RunOptions,
    size: &mut dyn FnMut(Option<u64>),
    progress: Option<&mut dyn FnMut(u64)>,
) -> Result<Streamed, RunError> {
    let path = i.trace.as_deref().expect("streams() holds");
    let name = path.display().to_string();
    let bad = |e: traces::TraceError| RunError::BadInput(e.to_string());
    crate::input::refuse_empty(path)?;
    let mut reader = traces::swf::SwfReader::new(traces::input::open(path, &name).map_err(bad)?, &name);
    let Some(first) = reader.next_record().map_err(bad)?.map(|r| r.to_job()) else {
        return Ok(Streamed::ReadWhole);
    };
    size(reader.header().max_records);
    let header = reader.header().clone();
    let (units, size_source, mut cluster) = traces::swf_machine(&name, &header, i.procs).map_err(bad)?;
    hw_calibrate::attach_power(&mut cluster);
    let workload = traces::Workload {
        format: traces::Format::Swf,
        jobs: Vec::new(),
        units,
        size_source,
        cluster,
        checksum: String::new(),
        header: header.lines,
        skipped: Default::default(),
        names: Default::default(),
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
    let mut source =
        SwfSource { reader, first: Some(first), done: false, last_submit: sim_core::SimTime::ZERO, unsorted: false };
    let replayed = replay(o, &mut l, &mut source, progress);
    if source.unsorted {
        return Ok(Streamed::ReadWhole);
    }
    let (replayed, (core, gpu, gpu_jobs)) = replayed?;
    let warning = crate::run::low_load_text(core, gpu, gpu_jobs).map(|w| format!("warning: {}: {w}", l.name));
    Ok(Streamed::Done { replayed, warning })
}

/// The replay itself: the engine over `source`, the files written as it goes. Returns
/// the replay and the offered load (core, GPU, whether any job asks for GPUs).
#[allow(clippy::type_complexity)]
fn replay(
    o: &RunOptions,
    l: &mut Loaded,
    source: &mut SwfSource,
    mut progress: Option<&mut dyn FnMut(u64)>,
) -> Result<(Replayed, (Option<f64>, Option<f64>, bool)), RunError> {
    let mut policy = crate::run::policy(o, Some(&l.workload), false)?;
    let controllers = crate::run::controllers(o, &l.controllers)?;
    let controller_specs: Vec<String> = controllers.iter().map(|c| c.spec()).collect();
    let cfg = crate::run::sim_config(o, l)?;
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
    let (result, summary, load) = {
        let frame = reports::frame::FrameWriter::new(frame_file.writer() as &mut dyn Write)
            .map_err(|e| io_err("frame.csv", e))?;
        let waits = reports::order_stats::OrderStats::spilling(&o.out, reports::order_stats::IN_MEMORY);
        let mut out = Outputs {
            jobs: jobs_file.writer(),
            layout: o.jobs_format,
            line: String::with_capacity(128),
            frame,
            summary: reports::summary::SummaryBuilder::new(waits),
            load: Default::default(),
            gpu_jobs: false,
        };
        let mut sink = log_file.as_mut().map(|f| crate::run::JsonLines { out: f.writer() });
        let hooks = sim_core::Hooks {
            log: sink.as_mut().map(|s| s as &mut dyn sim_core::log::LogSink),
            progress: progress.as_mut().map(|p| &mut **p as &mut dyn FnMut(u64)),
            controllers,
            fragmentation: None,
        };
        let result = sim_core::simulate_stream(&l.workload.cluster, source, &mut out, policy.as_mut(), &cfg, hooks)
            .map_err(|e| {
                if e.is_bad_input() { RunError::BadInput(e.to_string()) } else { RunError::Other(e.to_string()) }
            })?;
        out.frame.finish().map_err(|e| io_err("frame.csv", e))?;
        (result, out.summary, (out.load, out.gpu_jobs))
    };
    l.workload.checksum = source.reader.checksum();
    let meta = crate::run::run_meta(o, l, policy.spec(), controller_specs, None, &cfg);
    let mut summary = summary.finish(meta).map_err(|e| io_err("summary.json", e))?;
    crate::run::add_run_figures(&mut summary, &result);
    let finish = |f: AtomicFile, what: &str| f.finish().map_err(|e| io_err(what, e));
    let mut files: Vec<(&str, Finished)> = vec![("jobs.csv", finish(jobs_file, "jobs.csv")?)];
    files.push(("frame.csv", finish(frame_file, "frame.csv")?));
    let written =
        crate::output::write_finished(&o.out.join("summary.json"), |out| crate::run::write_summary(out, &summary))
            .map_err(|e| io_err("summary.json", e))?;
    files.push(("summary.json", written));
    if let Some(f) = log_file {
        files.push(("decisions.jsonl", finish(f, "decisions.jsonl")?));
    }
    let written = crate::run::rename_all(o, files)?;
    let (core, gpu) = load.0.of(l.workload.units, l.workload.cluster.total_gpus());
    Ok((Replayed { summary, written }, (core, gpu, load.1)))
}
