//! Slurm `sacct --parsable2 --allocations` dumps: the committed sample, the mapping of
//! every documented case, and the errors for bad input.

use sim_core::{Job, JobKind, SimDuration, SimTime, TaskShape, TraceStatus};
use std::path::PathBuf;
use traces::import::{JobReader, read_all};
use traces::sacct::SacctReader;
use traces::{Format, ImportOptions, TraceError};

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/sacct/sample.parsable2.txt")
}

fn secs(s: u64) -> SimTime {
    SimTime::from_secs(s)
}

fn dur(s: u64) -> Option<SimDuration> {
    Some(SimDuration::from_secs(s))
}

/// Reads `text` as a dump called `f.txt`.
fn read(text: &str) -> Result<(Vec<Job>, u64, traces::import::Skipped), TraceError> {
    let bytes: &'static [u8] = Box::leak(text.as_bytes().to_vec().into_boxed_slice());
    let input = traces::input::from_bytes(bytes, "f.txt")?;
    read_all(&mut SacctReader::new(input, "f.txt")?)
}

fn err(text: &str) -> String {
    read(text).expect_err("expected an error").to_string()
}

const HEADER: &str =
    "JobID|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|ReqTRES|AllocTRES|Partition|QOS|User|Account|State";

fn by_id<'a>(jobs: &'a [Job], id: &str) -> &'a Job {
    jobs.iter().find(|j| j.trace_id == id).unwrap_or_else(|| panic!("no job {id}"))
}

#[test]
fn sample_accounts_for_every_row() {
    let imported = traces::import(&sample(), Some(Format::Sacct), &ImportOptions::default()).unwrap();
    assert_eq!(imported.format, Format::Sacct);
    assert_eq!(imported.checksum.len(), 64);
    let jobs = &imported.jobs;
    let ids: Vec<&str> = jobs.iter().map(|j| j.trace_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "4001", "4002", "4003", "4004_1", "4004_2", "4010+0", "4010+1", "4011", "4014", "4016", "4017", "4019",
            "4021", "4023_7"
        ]
    );
    let skipped: Vec<(&str, u64)> = imported.skipped.0.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        skipped,
        [
            ("job step", 2),
            ("never started (cancelled before start)", 2),
            ("never started (no start time)", 1),
            ("never started (pending at the dump)", 1),
            ("still running at the dump", 3),
        ]
    );
    assert_eq!(imported.rows, 23);
    assert_eq!(imported.rows, jobs.len() as u64 + imported.skipped.total());
    // Detected by its header too.
    assert_eq!(traces::import(&sample(), None, &ImportOptions::default()).unwrap().jobs, imported.jobs);
}

#[test]
fn sample_fields() {
    let (jobs, _, _) =
        traces::import(&sample(), None, &ImportOptions::default()).map(|i| (i.jobs, i.rows, i.skipped)).unwrap();
    // Time zero is 2024-03-01T00:00:00, midnight of the first row's Submit.
    let j = by_id(&jobs, "4001");
    let want = Job {
        trace_id: "4001".into(),
        submit: secs(8 * 3600 + 2 * 60 + 11),
        tasks: 1,
        task: TaskShape { cores: 32, memory_mib: 120 * 1024, ..TaskShape::default() },
        runtime: dur(3600 + 45 * 60 + 27),
        requested: dur(4 * 3600),
        user: 1,
        group: 1,
        queue: 1,
        partition: 1,
        priority: 10452,
        kind: JobKind::Batch,
        trace_status: TraceStatus::Completed,
        gpu_models: vec![],
        constraints: None,
        min_tasks: 0,
        observed_start: Some(secs(8 * 3600 + 2 * 60 + 13)),
        restart_policy: Default::default(),
        checkpoint: None,
        domain: 0,
    };
    assert_eq!(*j, want);

    // TIMEOUT: runs to its limit (6 h, not the 6:00:36 it took), typed GPUs split over
    // two nodes.
    let j = by_id(&jobs, "4002");
    assert_eq!((j.tasks, j.task.cores, j.task.gpus, j.task.memory_mib), (2, 8, 4, 128 * 1024));
    assert_eq!((j.runtime, j.requested), (dur(6 * 3600), dur(6 * 3600)));
    assert_eq!((j.trace_status, j.kind), (TraceStatus::Completed, JobKind::DlTrain));
    assert_eq!(j.gpu_models, vec!["a100".to_string()]);
    assert_eq!((j.user, j.group, j.partition, j.queue), (2, 2, 2, 1));
    assert_eq!(j.observed_wait(), Some(SimDuration::from_secs(5 * 60 + 5)));

    // FAILED, 1 TiB over four nodes, a days-hours limit, a new QOS.
    let j = by_id(&jobs, "4003");
    assert_eq!((j.tasks, j.task.cores, j.task.gpus, j.task.memory_mib), (4, 16, 4, 256 * 1024));
    assert_eq!((j.trace_status, j.requested, j.queue), (TraceStatus::Failed, dur(86_400), 2));
    assert_eq!(j.gpu_models, vec!["h100".to_string()]);

    // Array elements keep their ids; OUT_OF_MEMORY fails.
    assert_eq!(by_id(&jobs, "4004_1").trace_status, TraceStatus::Completed);
    assert_eq!(by_id(&jobs, "4004_2").trace_status, TraceStatus::Failed);
    assert_eq!(by_id(&jobs, "4004_2").runtime, dur(14 * 60 + 30));

    // Heterogeneous components are separate jobs.
    let (a, b) = (by_id(&jobs, "4010+0"), by_id(&jobs, "4010+1"));
    assert_eq!((a.task.cores, a.task.gpus, a.kind), (2, 0, JobKind::Batch));
    assert_eq!((b.task.cores, b.task.gpus, b.kind), (8, 1, JobKind::DlTrain));
    assert_eq!(b.gpu_models, vec!["v100".to_string()]);
    assert_eq!(a.submit, b.submit);

    // Cancelled after it started; UNLIMITED is no limit; memory in M.
    let j = by_id(&jobs, "4011");
    assert_eq!((j.trace_status, j.requested, j.task.memory_mib), (TraceStatus::Cancelled, None, 2000));
    assert_eq!(j.runtime, dur(3600 + 29 * 60 + 59));

    assert_eq!(by_id(&jobs, "4014").trace_status, TraceStatus::Failed); // NODE_FAIL
    assert_eq!(by_id(&jobs, "4017").trace_status, TraceStatus::Cancelled); // PREEMPTED
    assert_eq!(by_id(&jobs, "4019").trace_status, TraceStatus::Failed); // BOOT_FAIL
    assert_eq!(by_id(&jobs, "4019").runtime, dur(0));

    // Untyped GPUs over three nodes; ends the next day.
    let j = by_id(&jobs, "4016");
    assert_eq!((j.tasks, j.task.cores, j.task.gpus, j.task.memory_mib), (3, 8, 2, 32 * 1024));
    assert!(j.gpu_models.is_empty());
    assert_eq!((j.runtime, j.requested), (dur(12 * 3600), dur(2 * 86_400)));

    // Second day; NCPUS 10 over 3 nodes rounds up; GPUs only in ReqTRES; minutes:seconds.
    let j = by_id(&jobs, "4021");
    assert_eq!(j.submit, secs(86_400 + 9 * 3600));
    assert_eq!((j.tasks, j.task.cores, j.task.gpus, j.task.memory_mib), (3, 4, 1, 10 * 1024));
    assert_eq!(j.gpu_models, vec!["t4".to_string()]);
    assert_eq!(j.requested, dur(45 * 60));

    // TIMEOUT without a known limit runs End - Start.
    let j = by_id(&jobs, "4023_7");
    assert_eq!((j.runtime, j.requested, j.trace_status), (dur(2 * 3600 + 30), None, TraceStatus::Completed));
    assert_eq!(j.user, 1); // alice again
}

#[test]
fn streaming_counts_as_it_goes() {
    let text = std::fs::read_to_string(sample()).unwrap();
    let bytes: &'static [u8] = Box::leak(text.into_bytes().into_boxed_slice());
    let mut r = SacctReader::new(traces::input::from_bytes(bytes, "s").unwrap(), "s").unwrap();
    assert_eq!(r.epoch_secs(), None);
    let first = r.next_job().unwrap().unwrap();
    assert_eq!((first.trace_id.as_str(), r.rows()), ("4001", 1));
    assert_eq!(r.epoch_secs(), Some(1_709_251_200)); // 2024-03-01T00:00:00
    let mut n = 1;
    while r.next_job().unwrap().is_some() {
        n += 1;
        assert_eq!(r.rows(), n + r.skipped().total());
    }
    assert_eq!((n, r.rows()), (14, 23));
}

#[test]
fn elapsed_when_end_unknown_and_optional_columns() {
    // Only the required columns, a trailing `|` (--parsable), End unknown.
    let text = "JobID|Submit|Start|End|Elapsed|NCPUS|NNodes|State|\n\
                7|2024-01-31T23:00:00|2024-02-01T01:00:00|Unknown|1-00:00:05|3|1|COMPLETED|\n";
    let (jobs, rows, skipped) = read(text).unwrap();
    assert_eq!((rows, skipped.total()), (1, 0));
    let j = &jobs[0];
    assert_eq!(j.submit, secs(23 * 3600));
    assert_eq!(j.observed_start, Some(secs(25 * 3600)));
    assert_eq!(j.runtime, dur(86_405));
    assert_eq!((j.user, j.group, j.queue, j.partition, j.priority, j.requested), (0, 0, -1, -1, 0, None));

    // Neither End nor Elapsed: counted.
    let text = "JobID|Submit|Start|End|NCPUS|NNodes|State\n\
                8|2024-01-31T23:00:00|2024-02-01T01:00:00|Unknown|3|1|FAILED\n";
    let (jobs, rows, skipped) = read(text).unwrap();
    assert_eq!((jobs.len(), rows, skipped.0.get("no end time").copied()), (0, 1, Some(1)));

    // A header alone: no jobs; blank lines are no rows.
    let (jobs, rows, _) = read(&format!("{HEADER}\n\n")).unwrap();
    assert_eq!((jobs.len(), rows), (0, 0));
}

#[test]
fn bad_input_names_file_line_and_column() {
    let row = |fields: &str| {
        format!(
            "{HEADER}\n1|2024-03-01T00:00:00|2024-03-01T00:00:00|2024-03-01T00:01:00||01:00:00|4|1|||p|q|u|a|COMPLETED\n{fields}\n"
        )
    };
    let ok =
        "2|2024-03-01T01:00:00|2024-03-01T01:00:00|2024-03-01T01:10:00||01:00:00|4|1|cpu=4|cpu=4|p|q|u|a|COMPLETED";
    assert_eq!(read(&row(ok)).unwrap().0.len(), 2);

    let e = err(&row(&ok.replace("2024-03-01T01:00:00|2024-03-01T01:00:00", "2024-03-01 1am|2024-03-01T01:00:00")));
    assert!(e.starts_with("f.txt:3: column 'Submit': expected a time YYYY-MM-DDTHH:MM:SS"), "{e}");
    assert!(e.ends_with("found '2024-03-01 1am'"), "{e}");

    let e = err(&row(&ok.replace("|4|1|", "|four|1|")));
    assert_eq!(e, "f.txt:3: column 'NCPUS': expected an integer 1..=4294967295, found 'four'");

    let e = err(&row(&ok.replace("01:00:00|4", "1h|4")));
    assert!(e.starts_with("f.txt:3: column 'Timelimit': expected a duration"), "{e}");

    let e = err(&row(&ok.replace("cpu=4|cpu=4", "cpu=4|cpu=4,mem=lots")));
    assert!(e.starts_with("f.txt:3: column 'AllocTRES': expected a TRES list"), "{e}");

    let e = err(&row(&ok.replace("COMPLETED", "DONE")));
    assert!(e.starts_with("f.txt:3: column 'State': expected a Slurm job state"), "{e}");

    let e = err(&row(&ok.replace("01:10:00|", "00:10:00|")));
    assert_eq!(e, "f.txt:3: column 'End': expected a time at or after Start, found '2024-03-01T00:10:00'");

    let e = err(&row(&ok.replace("2|2024-03-01T01:00:00", "|2024-03-01T01:00:00")));
    assert!(e.starts_with("f.txt:3: column 'JobID': expected a job id"), "{e}");

    // Before time zero (midnight of the first row's day).
    let e = err(&row(&ok.replace("2|2024-03-01T01:00:00", "2|2024-02-29T23:59:59")));
    assert!(e.starts_with("f.txt:3: column 'Submit': expected a time on or after 2024-03-01T00:00:00"), "{e}");

    // A header without a required column.
    let e = err("JobID|Submit|Start|End|NCPUS|State\n1|x|x|x|1|COMPLETED\n");
    assert!(e.starts_with("f.txt:1: header lacks column 'NNodes'"), "{e}");

    // Steps, pending and running rows are not parsed further.
    let skip = format!("{HEADER}\n5.batch|junk|junk|junk||||||||||||\n");
    assert_eq!(read(&skip).unwrap().2.total(), 1);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    #[test]
    fn helpers_never_panic(s in "\\PC{0,24}", t in "[0-9:.\\-TUNLIMITED ]{0,22}") {
        let _ = traces::import::civil_secs(&s);
        let _ = traces::import::civil_secs(&t);
        let _ = traces::sacct::parse_duration(&s);
        let _ = traces::sacct::parse_duration(&t);
        let _ = traces::sacct::parse_mem_mib(&s);
        let _ = traces::sacct::parse_mem_mib(&t);
        let _ = traces::sacct::parse_tres(&s);
        let _ = read(&format!("{HEADER}\n1|{t}|{t}|{t}|{t}|{t}|{t}|{t}|{s}|{s}|p|q|u|a|{s}\n"));
    }
}
