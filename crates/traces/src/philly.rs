//! Microsoft Philly jobs (Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU
//! Clusters for DNN Training Workloads", USENIX ATC 2019; trace `msr-fiddle/philly-traces`,
//! CC BY 4.0) as the Sia simulator (SOSP 2023, `siasosp23/artifacts`,
//! `sia-simulator/traces/philly.csv`) derives them: one CSV row per job,
//!
//! `timestamp,duration,num_gpus,gpu_time,cluster`
//!
//! e.g. `2017-10-09 07:01:55,66.0,1,66.0,11cb48`: submission time (a civil date and time
//! without time zone), run time in seconds, GPUs, GPU-seconds (= duration × num_gpus) and
//! the virtual cluster (a hash). The file has 82,247 rows submitted from 2017-09-04 to
//! 2017-12-22 and is **not** sorted by time.
//!
//! Mapping (columns found by header name; `gpu_time` is derived data and not read):
//! * `submit` = `timestamp` − 2017-09-01 00:00:00, a fixed epoch (a streaming reader
//!   cannot find the earliest row first); a row before it is an error. Times are taken as
//!   naive civil times: differences ignore any daylight-saving shift.
//! * gang: Philly servers hold 2, 4 or 8 GPUs (the trace's `cluster_machine_list`), so a
//!   job of up to 8 GPUs is one task with all of them; a larger one is split into
//!   servers of the widest size that divides its count exactly: 16 → 2 × 8, 12 → 3 × 4,
//!   24 → 3 × 8, so every GPU the trace records is asked for, no more. An odd count above
//!   8 fits no whole servers: the row is skipped as `"odd GPU count above 8"` (none in
//!   Sia's file). `num_gpus` 0 is an error.
//! * each task asks 1 core and no memory: Philly records neither.
//! * `runtime` = `requested` = `duration` (Philly gives no time limits);
//!   `trace_status` completed (the derived file carries no status); kind `DlTrain`.
//! * `queue` = the VC as a dense id (1, 2, … in first-seen order); user and group 0
//!   (the derived file has no users); `trace_id` = the row's line number (the header is
//!   line 1).
//!

use crate::error::TraceError;
use crate::import::{CsvRows, DenseIds, JobReader, Skipped, days_from_civil};
use crate::input::TraceInput;
use sim_core::job::{Job, JobKind, TaskShape, TraceStatus};
use sim_core::time::parse_secs_micros;
use sim_core::{SimDuration, SimTime};

/// The Philly importer's epoch, 2017-09-01 00:00:00, as [`civil_secs`](crate::import::civil_secs) counts it.
pub const EPOCH_SECS: i64 = days_from_civil(2017, 9, 1) * 86_400;

/// GPUs on the largest Philly server.
pub const SERVER_GPUS: u32 = 8;

/// Most GPUs one job may ask for (a sanity bound; Philly's largest job has 128).
pub const MAX_GPUS: u32 = 1 << 20;

/// The gang of a job of `gpus` GPUs (≥ 1): (tasks, GPUs per task), or `None` for an odd
/// count above [`SERVER_GPUS`].
pub fn gang(gpus: u32) -> Option<(u32, u32)> {
    if gpus <= SERVER_GPUS {
        return Some((1, gpus));
    }
    [8, 4, 2].into_iter().find(|s| gpus % s == 0).map(|s| (gpus / s, s))
}

/// Streams the jobs of a Philly CSV.
pub struct PhillyReader {
    rows: CsvRows,
    read: u64,
    skipped: Skipped,
    vcs: DenseIds,
}

impl PhillyReader {
    /// Opens a Philly CSV; its header must name `timestamp`, `duration`, `num_gpus` and
    /// `cluster`.
    pub fn new(input: TraceInput, file: &str) -> Result<Self, TraceError> {
        let rows = CsvRows::with_header(input, file, b',', &["timestamp", "duration", "num_gpus", "cluster"])?;
        Ok(PhillyReader { rows, read: 0, skipped: Skipped::default(), vcs: DenseIds::default() })
    }
}

impl JobReader for PhillyReader {
    fn next_job(&mut self) -> Result<Option<Job>, TraceError> {
        loop {
            if !self.rows.advance()? {
                return Ok(None);
            }
            self.read += 1;
            let r = &self.rows;
            let since = r.civil_since("timestamp", EPOCH_SECS)?.ok_or_else(|| {
                r.bad("timestamp", "a time on or after 2017-09-01 00:00:00 (the Philly importer's epoch)")
            })?;
            let runtime = parse_secs_micros(r.text("duration"))
                .map_err(|_| r.bad("duration", "a run time in seconds (a non-negative number)"))?;
            let gpus = r.count_in("num_gpus", 1, MAX_GPUS)?;
            let Some((tasks, per_task)) = gang(gpus) else {
                self.skipped.add("odd GPU count above 8");
                continue;
            };
            let line = r.line();
            let queue = self.vcs.id_i32(self.rows.text("cluster"));
            let runtime = Some(SimDuration(runtime));
            return Ok(Some(Job {
                trace_id: line.to_string(),
                submit: SimTime::from_secs(since),
                tasks,
                task: TaskShape { cores: 1, gpus: per_task, ..TaskShape::default() },
                runtime,
                requested: runtime,
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
            }));
        }
    }

    fn rows(&self) -> u64 {
        self.read
    }

    fn skipped(&self) -> &Skipped {
        &self.skipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gangs_of_servers() {
        assert_eq!(gang(1), Some((1, 1)));
        assert_eq!(gang(8), Some((1, 8)));
        assert_eq!(gang(12), Some((3, 4)));
        assert_eq!(gang(24), Some((3, 8)));
        assert_eq!(gang(128), Some((16, 8)));
        assert_eq!(gang(18), Some((9, 2)));
        assert_eq!(gang(9), None);
    }
}
