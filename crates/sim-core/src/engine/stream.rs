//! Streamed runs: jobs read as simulated time reaches their submission, records written
//! as the jobs leave the system, so that a run's memory follows the jobs in the system
//! rather than the trace ([`super::simulate_stream`]).
//!
//! A streamed input must be in submission order (ties in input order): the run then sees
//! the arrivals a run of the whole input sees, in the same order, and job ids are input
//! positions. The per-job tables hold a window of ids, from the oldest job not written
//! to the newest read; a job's record is written once it has its outcome and every job
//! before it in the window has been written, and its state is then dropped. Once the
//! window holds more than [`WINDOW`] jobs, the oldest still in the system (a long run)
//! is kept aside and the window moves on: it is written when it is done, out of id
//! order, and the sink puts the records back in order. Memory then follows the jobs in
//! the system, not the longest run.

use super::{Engine, EngineError, Phase};
use crate::job::{Job, JobId};
use crate::outcome::{JobRecord, Outcome};
use crate::time::SimTime;

/// Where a streamed run reads its jobs.
pub trait JobSource {
    /// The next job in submission order; `None` at the end. An error (naming the file,
    /// line and field) stops the run.
    fn next_job(&mut self) -> Result<Option<Job>, String>;
    /// How many jobs are left to read: exact where the source knows it, else at least 1
    /// while any is left. Controllers read it ([`crate::policy::SchedView::jobs_left`]).
    fn remaining(&self) -> usize;
}

/// Where a streamed run writes its records.
pub trait RecordSink {
    /// Job `id`'s record, with the job as read: each job once, mostly in id order, a job
    /// kept aside (see the module documentation) when it is done.
    fn record(&mut self, id: JobId, job: &Job, record: JobRecord) -> Result<(), String>;
}

/// A streamed run's input and output.
pub(super) struct Stream<'a> {
    pub(super) source: &'a mut dyn JobSource,
    pub(super) sink: &'a mut dyn RecordSink,
    /// The next job to arrive, read ahead.
    pub(super) next: Option<Job>,
    /// Jobs read so far (arrived, or `next`).
    pub(super) read: u64,
    /// The latest submission read.
    pub(super) last_submit: SimTime,
    /// How many jobs the window holds before the oldest still in the system is kept aside.
    pub(super) window: usize,
}

impl<'a> Engine<'a> {
    /// The submission time of the next job to arrive.
    #[inline]
    pub(super) fn next_arrival_time(&self) -> Option<SimTime> {
        self.next_at
    }

    /// Jobs not read yet (a streamed run's; a run of a whole input has read them all).
    #[inline]
    pub(super) fn unread(&self) -> usize {
        self.stream.as_ref().map_or(0, |s| usize::from(s.next.is_some()) + s.source.remaining())
    }

    /// Reads the next job of a streamed run ahead; refuses one submitted before the
    /// previous job.
    pub(super) fn read_ahead(&mut self) -> Result<(), EngineError> {
        let Some(s) = self.stream.as_mut() else { return Ok(()) };
        s.next = s.source.next_job().map_err(EngineError::Source)?;
        if let Some(next) = &s.next {
            if next.submit < s.last_submit {
                // The job read before it is the newest the tables hold.
                let before = self.jobs.get(self.jobs.len().wrapping_sub(1)).map_or("", |j| j.trace_id.as_str());
                return Err(EngineError::Unsorted(format!(
                    "job {} is submitted at {}, before job {before} read before it ({}): a streamed input must be \
                     sorted by submit time",
                    next.trace_id, next.submit, s.last_submit
                )));
            }
            s.last_submit = next.submit;
        }
        s.read += u64::from(s.next.is_some());
        self.next_at = s.next.as_ref().map(|j| j.submit);
        Ok(())
    }

    /// The next job to arrive: taken from the input's order, or a streamed run's next
    /// job added to the tables (and the one after it read ahead).
    pub(super) fn take_arrival(&mut self) -> Result<(JobId, u64), EngineError> {
        if let Some(s) = self.stream.as_mut() {
            let job = s.next.take().expect("an arrival is due");
            let read = s.read;
            let j = self.add_job(job);
            self.read_ahead()?;
            return Ok((j, read));
        }
        let j = self.arrival_order[self.next_arrival];
        self.next_arrival += 1;
        self.next_at = self.arrival_order.get(self.next_arrival).map(|j| self.jobs[j.idx()].submit);
        Ok((j, self.next_arrival as u64))
    }

    /// Adds a job (submitted by a controller, or read by a streamed run) to the tables;
    /// returns its id, the next.
    pub(super) fn add_job(&mut self, job: Job) -> JobId {
        let j = self.jobs.push(job);
        self.state.push(super::JobState::new());
        self.running.push(None);
        self.rank.push(j.0);
        if self.binds {
            self.bound.push(super::gangs::BoundState::default());
            self.holds.push(crate::binding::Binding::new());
        }
        self.energy.add_job();
        j
    }

    /// Job `i`'s record as it stands now; `unfinished_reason` for one without an outcome.
    #[inline]
    pub(super) fn record_of(&mut self, i: usize, unfinished_reason: Option<Box<str>>) -> JobRecord {
        let now = self.now;
        let st = &mut self.state[i];
        let outcome = st.outcome.unwrap_or(Outcome::Unfinished);
        let units = std::mem::take(&mut st.units);
        let (start, first_start, end, attempts) = (st.start, st.first_start, st.end, st.attempts);
        let b = self.bound.get(i);
        JobRecord {
            start,
            first_start,
            end,
            outcome,
            attempts,
            units,
            oom_kills: b.map_or(0, |b| b.oom_kills),
            restarts: b.map_or(0, |b| b.restarts),
            wasted_gpu_milli_us: b.map_or(0, |b| b.wasted),
            gpu_milli_held: b.map_or(0, |b| b.gpu_milli_held),
            gpu_energy_mj: self.energy.job_mj(i),
            gang_held_gpu_milli_us: b.map_or(0, |b| b.hold.held_at(now)),
            gang_wait_us: b.and_then(|b| b.hold.wait),
            stuck_holding: self.holds.get(i).is_some_and(|h| !h.is_empty()),
            unfinished_reason,
            lost: self.lost.get(&JobId(i as u32)).copied().unwrap_or_default(),
        }
    }

    /// Counts job `j`'s outcome; a streamed run writes its record at the end of the
    /// instant.
    pub(super) fn ended_now(&mut self, j: JobId) {
        self.ended += 1;
        if self.stream.is_some() {
            self.done.push(j);
        }
    }

    /// A streamed run writes the records of the oldest jobs that are done, in id order,
    /// and drops them. Once its window of ids holds more than [`WINDOW`] jobs, the oldest
    /// still in the system is kept aside and the window moves on; a job kept aside is
    /// written as soon as it is done, out of order (the sink puts it back in order).
    pub(super) fn retire(&mut self) -> Result<(), EngineError> {
        if self.stream.is_none() {
            return Ok(());
        }
        let mut done = std::mem::take(&mut self.done);
        for &j in &done {
            if j.idx() < self.state.first()
                && let Some(why) = self.done_reason(j)
            {
                let record = self.record_of(j.idx(), why);
                self.write_record(j, record)?;
            }
        }
        done.clear();
        self.done = done;
        while self.state.window() > 0 {
            let i = self.state.first();
            let j = JobId(i as u32);
            if let Some(why) = self.done_reason(j) {
                let record = self.record_of(i, why);
                self.write_record(j, record)?;
                self.move_window(false);
            } else if self.state[i].written {
                self.move_window(false);
            } else if self.stream.as_ref().is_some_and(|s| self.state.window() > s.window) {
                self.move_window(true);
            } else {
                break;
            }
        }
        Ok(())
    }

    /// For a job done and not written yet: `Some` of its unfinished reason (`None` but for
    /// a withdrawn job).
    fn done_reason(&self, j: JobId) -> Option<Option<Box<str>>> {
        let st = self.state.get(j.idx())?;
        if st.written || st.phase != Phase::Done || self.killed.contains_key(&j) {
            return None;
        }
        let why = match (st.outcome, self.withdrawn.get(&j)) {
            (Some(_), _) => None,
            // Withdrawn: unfinished for good, for the policy's reason.
            (None, Some(why)) => Some(why.clone()),
            (None, None) => return None,
        };
        // Its held GPU time stops growing once it holds nothing: the record is the one
        // the end of the run would write.
        debug_assert!(self.bound.get(j.idx()).is_none_or(|b| b.hold.held_at(self.now) == b.hold.held_at(SimTime::MAX)));
        Some(why)
    }

    /// Writes job `j`'s record and forgets what the run no longer needs of it.
    pub(super) fn write_record(&mut self, j: JobId, record: JobRecord) -> Result<(), EngineError> {
        let s = self.stream.as_mut().expect("a streamed run");
        s.sink.record(j, &self.jobs[j.idx()], record).map_err(EngineError::Sink)?;
        self.state[j.idx()].written = true;
        self.lost.remove(&j);
        self.saved.remove(&j);
        self.restarts_counted.remove(&j);
        // A job kept aside is dropped now; one in the window when the window passes it.
        if j.idx() < self.state.first() {
            self.on_tables(TableOp::DropEarly(j.idx()));
        }
        Ok(())
    }

    /// Moves the window of every per-job table on by one id, keeping its first job aside
    /// (`keep`: it is still in the system) or dropping it (written).
    fn move_window(&mut self, keep: bool) {
        self.on_tables(if keep { TableOp::KeepFirst } else { TableOp::DropFirst });
    }

    /// Applies `op` to every per-job table the run keeps (the binding tables where the
    /// policy binds nodes; the energy meter knows whether it keeps jobs').
    fn on_tables(&mut self, op: TableOp) {
        macro_rules! on_all {
            ($m:ident $(, $i:expr)?) => {{
                self.jobs.$m($($i)?);
                self.state.$m($($i)?);
                self.running.$m($($i)?);
                self.rank.$m($($i)?);
                if self.binds {
                    self.bound.$m($($i)?);
                    self.holds.$m($($i)?);
                }
                self.energy.$m($($i)?);
            }};
        }
        match op {
            TableOp::DropFirst => on_all!(drop_first),
            TableOp::KeepFirst => on_all!(keep_first),
            TableOp::DropEarly(i) => on_all!(drop_early, i),
        }
    }
}

/// What [`Engine::on_tables`] does to every per-job table.
#[derive(Clone, Copy)]
enum TableOp {
    /// The window's first job is written: dropped.
    DropFirst,
    /// The window's first job is still in the system: kept aside.
    KeepFirst,
    /// A job kept aside is written: dropped.
    DropEarly(usize),
}

/// How many jobs a streamed run's window of ids holds before the jobs still in the system
/// at its start are kept aside: jobs in the window are reached by index, those kept
/// aside through a map.
pub const WINDOW: usize = 1 << 14;
