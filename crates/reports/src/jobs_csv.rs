//! Per-job CSV tables.

use sim_core::time::write_secs;
use sim_core::{Job, JobRecord, Outcome, SimDuration};
use std::io::{self, Write};

/// `jobs.csv` header.
pub const HEADER: &str = "job_id,submit,start,end,wait,run,requested,procs,outcome,reason,gpu_energy_j";

/// Writes `jobs.csv`: `job_id,submit,start,end,wait,run,requested,procs,outcome,reason,
/// gpu_energy_j`, one row per input job in input order. Times are seconds written exactly;
/// start, end, wait and run are empty where the job has none (rejected; unfinished).
/// `reason` names why a job was rejected (`no_processors`, `missing_runtime`,
/// `zero_runtime`, `larger_than_machine`, `no_matching_gpu_model`, `no_fitting_node`,
/// `no_matching_node`, `larger_than_cluster`: [`sim_core::RejectReason`]) or, in words, why an
/// `unfinished` one did not end (still running or waiting at the horizon, an incomplete
/// gang, or its policy's explanation of why it never started). `gpu_energy_j` is the GPU energy of all its
/// attempts in joules (exact to the millijoule; see [`sim_core::GpuEnergy`]), empty when
/// it used no GPU with a power curve.
pub fn write_jobs(out: &mut (impl Write + ?Sized), jobs: &[Job], records: &[JobRecord]) -> io::Result<()> {
    writeln!(out, "{HEADER}")?;
    let mut line = String::with_capacity(128);
    for (job, rec) in jobs.iter().zip(records) {
        write_job(out, &mut line, job, rec)?;
    }
    Ok(())
}

/// Writes one job's row of [`write_jobs`] (after its header, [`HEADER`]); `line` is a
/// buffer kept between rows.
pub fn write_job(out: &mut (impl Write + ?Sized), line: &mut String, job: &Job, rec: &JobRecord) -> io::Result<()> {
    line.clear();
    push_field(line, &job.trace_id);
    line.push(',');
    let _ = write_secs(line, job.submit.0);
    line.push(',');
    if let Some(s) = rec.start {
        let _ = write_secs(line, s.0);
    }
    line.push(',');
    if let Some(e) = rec.end {
        let _ = write_secs(line, e.0);
    }
    line.push(',');
    if let Some(s) = rec.start {
        let _ = write_secs(line, (s - job.submit).0);
    }
    line.push(',');
    if let (Some(s), Some(e)) = (rec.start, rec.end) {
        let _ = write_secs(line, (e - s).0);
    }
    line.push(',');
    if let Some(q) = job.requested.or(job.runtime) {
        let _ = write_secs(line, q.0);
    }
    line.push(',');
    line.push_str(itoa::Buffer::new().format(job.units()));
    line.push(',');
    line.push_str(rec.outcome.name());
    line.push(',');
    if let Outcome::Rejected(r) = rec.outcome {
        line.push_str(r.as_str());
    } else if let Some(why) = &rec.unfinished_reason {
        push_field(line, why);
    }
    line.push(',');
    if rec.gpu_energy_mj > 0 {
        push_joules(line, rec.gpu_energy_mj);
    }
    line.push('\n');
    out.write_all(line.as_bytes())
}

/// Batsim's `out_jobs.csv` header.
pub const BATSIM_HEADER: &str = "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata";

/// Writes Batsim's `out_jobs.csv` columns (oar-team/batsim docs/output-jobs.rst), so
/// evalys can load the run. Rejected jobs have `final_state=REJECTED` and times of -1;
/// unfinished ones `UNFINISHED`.
pub fn write_batsim_jobs(out: &mut (impl Write + ?Sized), jobs: &[Job], records: &[JobRecord]) -> io::Result<()> {
    writeln!(out, "{BATSIM_HEADER}")?;
    for (job, rec) in jobs.iter().zip(records) {
        write_batsim_job(out, job, rec)?;
    }
    Ok(())
}

/// Writes one job's row of [`write_batsim_jobs`] (after its header, [`BATSIM_HEADER`]).
pub fn write_batsim_job(out: &mut (impl Write + ?Sized), job: &Job, rec: &JobRecord) -> io::Result<()> {
    let s = |d: u64| sim_core::time::secs_string(d);
    let requested = job.requested.or(job.runtime).unwrap_or(SimDuration::ZERO);
    let (success, state) = match rec.outcome {
        Outcome::Completed => (1, "COMPLETED_SUCCESSFULLY"),
        Outcome::Failed => (0, "COMPLETED_FAILED"),
        Outcome::Killed => (0, "COMPLETED_WALLTIME_REACHED"),
        // Batsim's state for a job killed by the scheduler (`kill_jobs`).
        Outcome::OomKilled | Outcome::Preempted => (0, "COMPLETED_KILLED"),
        Outcome::Rejected(_) => (0, "REJECTED"),
        Outcome::Unfinished => (0, "UNFINISHED"),
    };
    let mut id = String::new();
    push_field(&mut id, &job.trace_id);
    let (start, exec, finish, wait, turn, stretch) = match (rec.start, rec.end) {
        (Some(st), Some(en)) => {
            let exec = (en - st).0;
            let turn = (en - job.submit).0;
            let stretch = if exec > 0 { format!("{}", turn as f64 / exec as f64) } else { String::new() };
            (s(st.0), s(exec), s(en.0), s((st - job.submit).0), s(turn), stretch)
        }
        (Some(st), None) => {
            (s(st.0), String::new(), String::new(), s((st - job.submit).0), String::new(), String::new())
        }
        _ => ("-1".into(), "-1".into(), "-1".into(), "-1".into(), "-1".into(), "-1".into()),
    };
    // Batsim writes -1 when its energy plugin is off.
    let mut energy = String::new();
    if rec.gpu_energy_mj > 0 {
        push_joules(&mut energy, rec.gpu_energy_mj);
    } else {
        energy.push_str("-1");
    }
    writeln!(
        out,
        "{id},w0,,{},{},{},{success},{state},{start},{exec},{finish},{wait},{turn},{stretch},{},{energy},",
        s(job.submit.0),
        job.units(),
        s(requested.0),
        rec.units.to_interval_string(),
    )
}

/// Appends millijoules as joules, exactly (`1234.567`).
fn push_joules(line: &mut String, mj: u64) {
    line.push_str(itoa::Buffer::new().format(mj / 1000));
    let frac = mj % 1000;
    if frac > 0 {
        let digits = format!("{frac:03}");
        line.push('.');
        line.push_str(digits.trim_end_matches('0'));
    }
}

/// Appends a CSV field, quoted when it needs to be.
fn push_field(line: &mut String, v: &str) {
    if v.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&v.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(v);
    }
}
