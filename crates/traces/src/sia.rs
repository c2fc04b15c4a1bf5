//! Workloads of the Pollux (Qiao et al., OSDI 2021, `petuum/adaptdl` branch
//! `osdi21-artifact`, `simulator/workloads/`, Apache-2.0) and Sia (Jayaram Subramanya et
//! al., SOSP 2023, `siasosp23/artifacts`, `sia-simulator/workloads/{philly,saturn}/`)
//! simulators: jobs sampled from the Microsoft Philly or SenseTime Helios Saturn job-size
//! and arrival distributions, one CSV row per job,
//!
//! `name,time,application,num_replicas,batch_size`
//!
//! e.g. `cifar10-0,401.0,cifar10,12,4096`: job name, submission time in seconds from the
//! workload's start, the application (`cifar10`, `imagenet`, `bert`, `yolov3`,
//! `deepspeech2`, `ncf`), its initial number of replicas and batch size.
//!
//! The format carries **no run times**: those simulators derive each job's progress from a
//! goodput model (measured step times and statistical efficiency per application). So the
//! reader takes one run time per application (`--app-runtime APP=SECONDS`); opening it
//! with none is an error, and so is a row whose application has none.
//!
//! Mapping (columns found by header name; `name`, `time`, `application` and
//! `num_replicas` are required, `batch_size` is not read):
//! * one job per row: `trace_id` = `name`, `submit` = `time` (decimal seconds, exact to
//!   the microsecond);
//! * gang: `num_replicas` (≥ 1) tasks of 1 GPU and 1 core each (Pollux and Sia replicas
//!   are single-GPU data-parallel workers); no elasticity (the replica count is fixed);
//! * `runtime` = `requested` = the application's run time; kind `DlTrain`;
//! * `queue` = the application as a dense id (1, 2, … in first-seen order); user 0.

use crate::error::TraceError;
use crate::import::{CsvRows, DenseIds, JobReader, Skipped};
use crate::input::TraceInput;
use sim_core::job::{Job, JobKind, TaskShape, TraceStatus};
use sim_core::time::parse_secs_micros;
use sim_core::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// Most replicas one job may ask for (a sanity bound; the workloads have at most 16).
pub const MAX_REPLICAS: u32 = 1 << 20;

/// Streams the jobs of a Sia / Pollux workload CSV.
pub struct SiaReader {
    rows: CsvRows,
    read: u64,
    skipped: Skipped,
    runtimes: BTreeMap<String, SimDuration>,
    apps: DenseIds,
}

impl SiaReader {
    /// Opens a workload whose applications run as long as `runtimes` says (application →
    /// run time). `runtimes` must not be empty: the format gives none.
    pub fn new(input: TraceInput, file: &str, runtimes: &BTreeMap<String, SimDuration>) -> Result<Self, TraceError> {
        if runtimes.is_empty() {
            return Err(TraceError::malformed(
                file,
                None,
                None,
                "a Sia / Pollux workload carries no run times (those simulators derive them from a goodput \
                 model): give each application's run time with --app-runtime APP=SECONDS, e.g. \
                 --app-runtime cifar10=3600 (applications: cifar10, imagenet, bert, yolov3, deepspeech2, ncf)",
            ));
        }
        let rows = CsvRows::with_header(input, file, b',', &["name", "time", "application", "num_replicas"])?;
        Ok(SiaReader {
            rows,
            read: 0,
            skipped: Skipped::default(),
            runtimes: runtimes.clone(),
            apps: DenseIds::default(),
        })
    }
}

impl JobReader for SiaReader {
    fn next_job(&mut self) -> Result<Option<Job>, TraceError> {
        if !self.rows.advance()? {
            return Ok(None);
        }
        self.read += 1;
        let r = &self.rows;
        let name = r.text("name");
        if name.is_empty() {
            return Err(r.bad("name", "a job name"));
        }
        let submit = parse_secs_micros(r.text("time"))
            .map_err(|_| r.bad("time", "a time in seconds (a non-negative number)"))?;
        let app = r.text("application");
        let Some(&runtime) = self.runtimes.get(app) else {
            let given: Vec<&str> = self.runtimes.keys().map(String::as_str).collect();
            return Err(r.bad(
                "application",
                format!(
                    "an application with a run time (give it with --app-runtime {}=SECONDS; given for: {})",
                    if app.is_empty() { "APP" } else { app },
                    given.join(", ")
                ),
            ));
        };
        let tasks = r.count_in("num_replicas", 1, MAX_REPLICAS)?;
        let trace_id = name.to_string();
        let queue = self.apps.id_i32(self.rows.text("application"));
        Ok(Some(Job {
            trace_id,
            submit: SimTime(submit),
            tasks,
            task: TaskShape { cores: 1, gpus: 1, ..TaskShape::default() },
            runtime: Some(runtime),
            requested: Some(runtime),
            user: 0,
            group: 0,
            queue,
            partition: -1,
            priority: 0,
            kind: JobKind::DlTrain,
            trace_status: TraceStatus::Completed,
            gpu_models: Vec::new(),
            constraints: None,
            min_tasks: 0,
            observed_start: None,
            restart_policy: Default::default(),
            checkpoint: None,
            domain: 0,
        }))
    }

    fn rows(&self) -> u64 {
        self.read
    }

    fn skipped(&self) -> &Skipped {
        &self.skipped
    }
}
