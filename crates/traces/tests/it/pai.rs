//! Alibaba PAI 2020 (cluster-trace-gpu-v2020): the committed hand-written task and job
//! tables, with and without the job table, headered copies, and errors.

use sim_core::{Job, JobKind, SimDuration, SimTime, TaskShape, TraceStatus};
use std::path::{Path, PathBuf};
use traces::import::{Skipped, read_all};
use traces::pai::{JOB_COLUMNS, PaiReader, TASK_COLUMNS};
use traces::{Format, ImportOptions, TraceError};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/pai").join(name)
}

fn tasks_file() -> PathBuf {
    data("pai_task_table.sample.csv")
}

fn jobs_file() -> PathBuf {
    data("pai_job_table.sample.csv")
}

fn with_jobs() -> ImportOptions {
    ImportOptions { pai_jobs: Some(jobs_file()), ..ImportOptions::default() }
}

fn input(text: &str, name: &str) -> traces::input::TraceInput {
    let bytes: &'static [u8] = Box::leak(text.as_bytes().to_vec().into_boxed_slice());
    traces::input::from_bytes(bytes, name).unwrap()
}

fn read(tasks: &str, jobs: Option<&str>) -> Result<(Vec<Job>, u64, Skipped), TraceError> {
    let jobs = jobs.map(|j| ("jobs.csv".to_string(), input(j, "jobs.csv")));
    read_all(&mut PaiReader::new(input(tasks, "tasks.csv"), "tasks.csv", jobs)?)
}

fn err(tasks: &str, jobs: Option<&str>) -> String {
    read(tasks, jobs).expect_err("expected an error").to_string()
}

fn by_id<'a>(jobs: &'a [Job], id: &str) -> &'a Job {
    jobs.iter().find(|j| j.trace_id == id).unwrap_or_else(|| panic!("no job {id}"))
}

fn counts(s: &Skipped) -> Vec<(&str, u64)> {
    s.0.iter().map(|(k, v)| (k.as_str(), *v)).collect()
}

fn secs(s: u64) -> SimTime {
    SimTime::from_secs(s)
}

fn dur(s: u64) -> Option<SimDuration> {
    Some(SimDuration::from_secs(s))
}

const J1: &str = "cc5ebc646150889d82afa36a";
const J2: &str = "e7825afd4dba4f8fa840c305";
const J9: &str = "5b856ab7f84c01e8f0aa27cf";
const J10: &str = "8d3a30c8edea0075f00d3f95";
const J12: &str = "b286b852275667e2d0c62b2e";
const J14: &str = "ba6035477d617b111782d6aa";

#[test]
fn with_the_job_table() {
    let i = traces::import(&tasks_file(), Some(Format::Pai), &with_jobs()).unwrap();
    assert_eq!(i.format, Format::Pai);
    assert_eq!((i.rows, i.jobs.len()), (16, 11));
    assert_eq!(i.rows, i.jobs.len() as u64 + i.skipped.total());
    assert_eq!(
        counts(&i.skipped),
        [
            ("job not in the job table", 1),
            ("never ran or still running (no start or end time)", 1),
            ("no instances (inst_num 0)", 1),
            ("still running or waiting", 2),
        ]
    );
    let jobs = &i.jobs;
    // The README's example row: 600 % CPU, 29.296875 GB, half a MISC GPU.
    let j = by_id(jobs, &format!("{J1}/tensorflow"));
    let want = Job {
        trace_id: format!("{J1}/tensorflow"),
        submit: secs(1_739_150),
        tasks: 1,
        task: TaskShape {
            cores: 6,
            cpu_milli: 6000,
            memory_mib: 30_000,
            gpus: 1,
            gpu_milli: 500,
            ..TaskShape::default()
        },
        runtime: dur(38),
        requested: None,
        user: 1,
        group: 0,
        queue: -1,
        partition: -1,
        priority: 0,
        kind: JobKind::DlTrain,
        trace_status: TraceStatus::Completed,
        gpu_models: vec![],
        constraints: None,
        min_tasks: 0,
        observed_start: Some(secs(1_739_162)),
        restart_policy: Default::default(),
        checkpoint: None,
        domain: 0,
    };
    assert_eq!(*j, want);

    // A job of three tasks: a CPU parameter server, four whole-GPU workers, a failed
    // evaluator on a quarter GPU; all submitted with the job.
    let ps = by_id(jobs, &format!("{J2}/ps"));
    assert_eq!((ps.tasks, ps.task.cores, ps.task.gpus, ps.task.memory_mib), (1, 4, 0, 20 * 1024));
    assert_eq!((ps.kind, ps.user, ps.submit), (JobKind::Batch, 2, secs(1_799_990)));
    assert!(ps.gpu_models.is_empty());
    let w = by_id(jobs, &format!("{J2}/worker"));
    assert_eq!((w.tasks, w.task.gpus, w.task.gpu_milli, w.task.gpu_milli()), (4, 1, 0, 1000));
    assert_eq!(w.gpu_models, vec!["V100".to_string()]);
    assert_eq!((w.runtime, w.observed_wait()), (dur(3580), Some(SimDuration::from_secs(20))));
    let e = by_id(jobs, &format!("{J2}/evaluator"));
    assert_eq!((e.trace_status, e.task.gpus, e.task.gpu_milli), (TraceStatus::Failed, 1, 250));

    // 800 % GPU: eight whole GPUs per instance.
    let j = jobs.iter().find(|j| j.trace_id.ends_with("/worker") && j.task.gpus == 8).unwrap();
    assert_eq!((j.tasks, j.task.cores, j.task.memory_mib, j.task.gpu_milli), (2, 32, 200 * 1024, 0));
    assert_eq!(j.gpu_models, vec!["V100M32".to_string()]);

    // Decimal times; half a core; 0.5 GB.
    let j = by_id(jobs, &format!("{J9}/xComputeWorker"));
    assert_eq!((j.tasks, j.task.cores, j.task.cpu_milli, j.task.memory_mib, j.task.gpus), (10, 1, 500, 512, 0));
    assert_eq!((j.submit, j.observed_start), (secs(2_699_999), Some(SimTime(2_700_000_500_000))));
    assert_eq!(j.runtime, Some(SimDuration(119_750_000)));
    assert_eq!(j.user, 4);

    // 150 % GPU is two whole GPUs.
    let j = by_id(jobs, &format!("{J10}/OpenmpiTracker"));
    assert_eq!((j.task.gpus, j.task.gpu_milli, j.task.cores), (2, 0, 12));
    assert_eq!(j.gpu_models, vec!["P100".to_string()]);

    // A job with no submission time: the task's start stands in; missing plan_cpu is one
    // core.
    let j = by_id(jobs, &format!("{J12}/tensorflow"));
    assert_eq!((j.submit, j.observed_start), (secs(3_000_000), Some(secs(3_000_000))));
    assert_eq!((j.task.cores, j.task.cpu_milli, j.task.memory_mib, j.task.gpu_milli), (1, 0, 8000, 50));

    // User of a job first seen on line 12 of the job table.
    assert_eq!(by_id(jobs, &format!("{J14}/worker")).user, 6);
    assert_eq!(by_id(jobs, &format!("{J14}/worker")).submit, secs(3_100_000));
}

#[test]
fn without_the_job_table() {
    let i = traces::import(&tasks_file(), None, &ImportOptions::default()).unwrap();
    assert_eq!(i.format, Format::Pai); // by its name
    assert_eq!((i.rows, i.jobs.len()), (16, 12));
    assert_eq!(
        counts(&i.skipped),
        [
            ("never ran or still running (no start or end time)", 1),
            ("no instances (inst_num 0)", 1),
            ("still running or waiting", 2),
        ]
    );
    for j in &i.jobs {
        assert_eq!((j.user, j.observed_start), (0, None));
    }
    let j = by_id(&i.jobs, &format!("{J1}/tensorflow"));
    assert_eq!((j.submit, j.runtime), (secs(1_739_162), dur(38)));
}

#[test]
fn headered_copies_read_the_same() {
    let tasks = std::fs::read_to_string(tasks_file()).unwrap();
    let jobs = std::fs::read_to_string(jobs_file()).unwrap();
    let plain = read(&tasks, Some(&jobs)).unwrap();
    let headered =
        read(&format!("{}\n{tasks}", TASK_COLUMNS.join(",")), Some(&format!("{}\n{jobs}", JOB_COLUMNS.join(","))))
            .unwrap();
    assert_eq!(plain.0, headered.0);
    assert_eq!((plain.1, &plain.2), (headered.1, &headered.2));
    // The header shipped with the trace matches.
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/pai2020/pai_task_table.header");
    if let Ok(h) = std::fs::read_to_string(shipped) {
        assert_eq!(h.trim(), TASK_COLUMNS.join(","));
    }
}

#[test]
fn bad_rows_are_errors_naming_file_line_and_column() {
    let ok = "j,worker,1.0,Terminated,10.0,20.0,600.0,4.0,100.0,T4";
    let two = |bad: &str| format!("{ok}\n{bad}\n");
    assert_eq!(read(&two(ok), None).unwrap().0.len(), 2);

    let e = err(&two(&ok.replace("Terminated", "Done")), None);
    assert_eq!(e, "tasks.csv:2: column 'status': expected Terminated, Failed, Running or Waiting, found 'Done'");
    let e = err(&two(&ok.replace("10.0,20.0", "ten,20.0")), None);
    assert!(e.starts_with("tasks.csv:2: column 'start_time': expected a non-negative number of seconds"), "{e}");
    let e = err(&two(&ok.replace("10.0,20.0", "30.0,20.0")), None);
    assert_eq!(e, "tasks.csv:2: column 'end_time': expected a time at or after start_time, found '20.0'");
    let e = err(&two(&ok.replace(",1.0,", ",1.5,")), None);
    assert_eq!(e, "tasks.csv:2: column 'inst_num': expected a whole number of instances, found '1.5'");
    let e = err(&two(&ok.replace("600.0", "-600")), None);
    assert!(e.starts_with("tasks.csv:2: column 'plan_cpu': expected a non-negative number"), "{e}");
    let e = err(&two(&ok.replace("100.0,T4", "1e30,T4")), None);
    assert!(e.starts_with("tasks.csv:2: column 'plan_gpu': expected"), "{e}");
    let e = err(&two(&ok.replace("j,worker", ",worker")), None);
    assert_eq!(e, "tasks.csv:2: column 'job_name': expected a job name, found ''");

    // The job table's errors name the job table.
    let e = err(ok, Some("j,i,u,Terminated,x,20\n"));
    assert!(e.starts_with("jobs.csv:1: column 'start_time': expected"), "{e}");
    let e = err(ok, Some("j,i,u,Terminated,5,20\nk,i,u,Terminated,5,20\nj,i,v,Failed,6,20\n"));
    assert!(e.starts_with("jobs.csv:3: column 'job_name': expected a job listed once"), "{e}");
}

#[test]
fn edge_values() {
    // NaN and empty resources, a tiny GPU share, a job table with a header, `\N` times.
    let tasks = "a,t,2,Terminated,0,0,,,0.01,MISC\n\
                 b,t,1,Failed,5,6,0,NaN,99.99,G1\n\
                 c,t,1,Terminated,\\N,6,100,1,,\n";
    let jobs = "job_name,inst_id,user,status,start_time,end_time\na,i,u,Terminated,0,0\nb,i,,Failed,4,6\n";
    let (js, rows, skipped) = read(tasks, Some(jobs)).unwrap();
    assert_eq!((rows, js.len(), skipped.total()), (3, 2, 1));
    let a = &js[0];
    assert_eq!((a.tasks, a.task.cores, a.task.cpu_milli(), a.task.memory_mib), (2, 1, 1000, 0));
    assert_eq!((a.task.gpus, a.task.gpu_milli, a.runtime), (1, 1, Some(SimDuration::ZERO)));
    assert!(a.gpu_models.is_empty());
    let b = &js[1];
    assert_eq!(
        (b.user, b.task.gpu_milli, b.task.shares_gpu(), b.gpu_models.as_slice()),
        (0, 999, true, &["G1".to_string()][..])
    );
    assert_eq!((b.submit, b.trace_status), (secs(4), TraceStatus::Failed));
    // Blank lines are no rows.
    assert_eq!(read("\n\n", None).unwrap().1, 0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    #[test]
    fn rows_never_panic(
        f in proptest::collection::vec("([0-9]{0,3}(\\.[0-9]{0,8})?|1e[0-9]{1,3}|-1|NaN|\\PC{0,3})", 8),
        st in "(Terminated|Failed|Running|Waiting|x)",
    ) {
        let row = format!("j,t,{},{st},{},{},{},{},{},{}", f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
        let _ = read(&row, None);
        let _ = read(&row, Some(&format!("j,i,{},x,{},{}\n", f[7], f[1], f[2])));
    }
}
