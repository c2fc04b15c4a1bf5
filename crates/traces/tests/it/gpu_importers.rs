//! The GPU-trace importers: Microsoft Philly (Sia's `philly.csv`), SenseTime Helios
//! `cluster_log.csv` and Sia / Pollux workloads, on the committed files and, where
//! `../shared` holds it, the whole Philly file.

use sim_core::{JobKind, SimDuration, SimTime, TraceStatus};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use traces::import::{Skipped, read_all};
use traces::{Format, ImportOptions, TraceError};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data").join(name)
}

fn shared(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces").join(name)
}

fn secs(s: u64) -> Option<SimDuration> {
    Some(SimDuration::from_secs(s))
}

fn bytes_input(text: &str) -> traces::input::TraceInput {
    traces::input::from_bytes(Box::leak(text.as_bytes().to_vec().into_boxed_slice()), "t.csv").unwrap()
}

type Read3 = Result<(Vec<sim_core::Job>, u64, Skipped), TraceError>;

fn philly(text: &str) -> Read3 {
    read_all(&mut traces::philly::PhillyReader::new(bytes_input(text), "t.csv")?)
}

fn helios(text: &str) -> Read3 {
    read_all(&mut traces::helios::HeliosReader::new(bytes_input(text), "t.csv")?)
}

fn runtimes(pairs: &[(&str, u64)]) -> BTreeMap<String, SimDuration> {
    pairs.iter().map(|&(a, s)| (a.to_string(), SimDuration::from_secs(s))).collect()
}

fn sia(text: &str, rt: &BTreeMap<String, SimDuration>) -> Result<(Vec<sim_core::Job>, u64), TraceError> {
    let (jobs, rows, _) = read_all(&mut traces::sia::SiaReader::new(bytes_input(text), "t.csv", rt)?)?;
    Ok((jobs, rows))
}

#[test]
fn philly_slice_exact_values() {
    let path = data("philly/philly.first2000.csv.gz");
    let i = traces::import(&path, Some(Format::Philly), &ImportOptions::default()).unwrap();
    assert_eq!((i.rows, i.jobs.len(), i.skipped.total()), (2000, 2000, 0));
    // Detected by its header too.
    assert_eq!(traces::detect_file_format(&path), Format::Philly);
    let j = &i.jobs[0];
    // 2017-10-09 07:01:55 is 38 days, 7 h 1 min 55 s after the 2017-09-01 epoch.
    assert_eq!((j.trace_id.as_str(), j.submit), ("2", SimTime::from_secs(3_308_515)));
    assert_eq!((j.tasks, j.task.gpus, j.task.cores, j.task.memory_mib), (1, 1, 1, 0));
    assert_eq!((j.runtime, j.requested), (secs(66), secs(66)));
    assert_eq!((j.queue, j.user, j.kind, j.trace_status), (1, 0, JobKind::DlTrain, TraceStatus::Completed));
    assert_eq!(j.observed_start, None);
    // Not sorted by time: the third row is ten days earlier.
    assert_eq!(
        (i.jobs[2].submit, i.jobs[2].runtime, i.jobs[2].queue),
        (SimTime::from_secs(2_447_912), secs(860_662), 3)
    );
    // The first 8-, 4- and 2-GPU jobs (lines 55, 96, 385): one task each.
    let at = |line: &str| i.jobs.iter().find(|j| j.trace_id == line).unwrap();
    let (j8, j4, j2) = (at("55"), at("96"), at("385"));
    assert_eq!(
        (j8.tasks, j8.task.gpus, j8.submit, j8.runtime, j8.queue),
        (1, 8, SimTime::from_secs(3_114_699), secs(193_256), 4)
    );
    assert_eq!((j4.tasks, j4.task.gpus, j4.runtime, j4.queue), (1, 4, secs(197_281), 5));
    assert_eq!((j2.tasks, j2.task.gpus, j2.runtime, j2.queue), (1, 2, secs(13), 1));
    // 11 VCs, dense in first-seen order; 2319 GPUs in all.
    assert_eq!(i.jobs.iter().map(|j| j.queue).max(), Some(11));
    assert_eq!(i.jobs.iter().map(|j| (j.tasks * j.task.gpus) as u64).sum::<u64>(), 2319);
    // The reader directly agrees with `import`.
    let mut r = traces::philly::PhillyReader::new(traces::input::open(&path, "p").unwrap(), "p").unwrap();
    let (jobs, rows, skipped) = read_all(&mut r).unwrap();
    assert_eq!((jobs, rows, skipped.total()), (i.jobs, 2000, 0));
}

#[test]
fn philly_slice_gpu_time_is_duration_times_gpus() {
    // `gpu_time` is derived data the reader does not read: check it against the jobs.
    let path = data("philly/philly.first2000.csv.gz");
    let i = traces::import(&path, Some(Format::Philly), &ImportOptions::default()).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()).read_to_string(&mut text).unwrap();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let col = rd.headers().unwrap().iter().position(|h| h == "gpu_time").unwrap();
    let mut n = 0;
    for (rec, j) in rd.records().zip(&i.jobs) {
        let gpu_time = sim_core::time::parse_secs_micros(&rec.unwrap()[col]).unwrap();
        assert_eq!(gpu_time, j.runtime.unwrap().0 * (j.tasks * j.task.gpus) as u64, "line {}", j.trace_id);
        n += 1;
    }
    assert_eq!(n, 2000);
}

#[test]
fn philly_whole_shared_file() {
    let path = shared("philly/philly.csv.gz");
    if !path.exists() {
        println!("note: {} is absent; the whole-file Philly test does nothing", path.display());
        return;
    }
    let i = traces::import(&path, Some(Format::Philly), &ImportOptions::default()).unwrap();
    assert_eq!(i.rows, 82_247);
    assert_eq!(i.rows, i.jobs.len() as u64 + i.skipped.total());
    assert_eq!(i.skipped.total(), 0, "{:?}", i.skipped);
    // Every GPU the trace records is asked for: 12 → 3 × 4, 24 → 3 × 8, 128 → 16 × 8.
    assert_eq!(i.jobs.iter().map(|j| (j.tasks * j.task.gpus) as u64).sum::<u64>(), 107_235);
    assert!(i.jobs.iter().all(|j| j.task.gpus <= 8 && (j.tasks == 1 || j.task.gpus >= 4)));
    assert_eq!(i.jobs.iter().filter(|j| j.tasks == 3 && j.task.gpus == 4).count(), 7);
    assert_eq!(i.jobs.iter().map(|j| j.queue).max(), Some(15));
    // 2017-09-04 10:30:41 .. 2017-12-22 08:02:11.
    assert_eq!(i.jobs.iter().map(|j| j.submit).min(), Some(SimTime::from_secs(3 * 86_400 + 37_841)));
    assert_eq!(i.jobs.iter().map(|j| j.submit).max(), Some(SimTime::from_secs(112 * 86_400 + 28_931)));
}

#[test]
fn philly_gangs_skips_and_errors() {
    let head = "timestamp,duration,num_gpus,gpu_time,cluster\n";
    let (jobs, rows, skipped) = philly(&format!(
        "{head}2017-09-01 00:00:00,1.5,16,24.0,a\n2017-09-01 00:00:01,2,12,24,b\n2017-09-02 00:00:00,3,9,27,a\n\n"
    ))
    .unwrap();
    assert_eq!(rows, 3);
    assert_eq!(skipped.0.get("odd GPU count above 8"), Some(&1));
    assert_eq!((jobs[0].tasks, jobs[0].task.gpus, jobs[0].runtime), (2, 8, Some(SimDuration(1_500_000))));
    assert_eq!((jobs[1].tasks, jobs[1].task.gpus, jobs[1].submit, jobs[1].queue), (3, 4, SimTime::from_secs(1), 2));
    for (row, want) in [
        ("2017-08-31 23:59:59,1,1,1,a", "t.csv:2: column 'timestamp': expected a time on or after 2017-09-01 00:00:00"),
        ("2017-09-31 00:00:00,1,1,1,a", "t.csv:2: column 'timestamp': expected a date and time YYYY-MM-DD HH:MM:SS"),
        ("2017-09-30 00:00:00,-1,1,1,a", "t.csv:2: column 'duration': expected a run time in seconds"),
        ("2017-09-30 00:00:00,1,0,1,a", "t.csv:2: column 'num_gpus': expected an integer 1..="),
        ("2017-09-30 00:00:00,1,1.0,1,a", "t.csv:2: column 'num_gpus': expected an integer 1..="),
    ] {
        let e = philly(&format!("{head}{row}\n")).unwrap_err().to_string();
        assert!(e.starts_with(want), "{e}");
    }
    let e = philly("timestamp,duration,gpus\n").err().unwrap().to_string();
    assert!(e.contains("header lacks column 'num_gpus'"), "{e}");
}

#[test]
fn helios_sample_exact_values() {
    let path = data("helios/cluster_log.sample.csv");
    assert_eq!(traces::detect_file_format(&path), Format::Helios);
    let i = traces::import(&path, None, &ImportOptions::default()).unwrap();
    assert_eq!(i.format, Format::Helios);
    assert_eq!(i.rows, 16);
    let want: BTreeMap<String, u64> =
        [("never started".to_string(), 2), ("submitted before 2020-04-01".to_string(), 1)].into();
    assert_eq!(i.skipped.0, want);
    assert_eq!(i.jobs.len(), 13);
    let ids: Vec<&str> = i.jobs.iter().map(|j| j.trace_id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "12904", "12911", "402177", "1425511", "1425512", "1425513", "1425520", "2013377", "2013390", "2013391",
            "2871004", "3544120", "3544121"
        ]
    );
    let at = |id: &str| i.jobs.iter().find(|j| j.trace_id == id).unwrap();
    // One node, 8 GPUs, 32 CPUs; users and VCs dense in first-seen order (the skipped
    // first row saw no ids given).
    let j = at("12904");
    assert_eq!((j.submit, j.observed_start), (SimTime::from_secs(313), Some(SimTime::from_secs(314))));
    assert_eq!((j.tasks, j.task.gpus, j.task.cores), (1, 8, 32));
    assert_eq!((j.runtime, j.requested), (secs(32_850), secs(32_850)));
    assert_eq!((j.user, j.queue, j.kind, j.trace_status), (1, 1, JobKind::DlTrain, TraceStatus::Completed));
    // CPU-only: a batch job.
    let j = at("12911");
    assert_eq!((j.tasks, j.task.gpus, j.task.cores, j.kind, j.user, j.queue), (1, 0, 8, JobKind::Batch, 2, 2));
    // Two nodes, 16 GPUs, 64 CPUs: 2 tasks of 8 GPUs and 32 cores; it waited 1778 s.
    let j = at("402177");
    assert_eq!((j.tasks, j.task.gpus, j.task.cores), (2, 8, 32));
    assert_eq!((j.submit, j.runtime), (SimTime::from_secs(3_751_351), secs(57_600)));
    assert_eq!(j.observed_wait(), secs(1778));
    assert_eq!((j.user, j.queue), (3, 3));
    // The README's three example rows.
    let j = at("1425511");
    assert_eq!(
        (j.submit, j.runtime, j.task.gpus, j.user, j.queue),
        (SimTime::from_secs(6_028_861), secs(36_848), 1, 4, 4)
    );
    assert_eq!(at("1425512").trace_status, TraceStatus::Failed);
    assert_eq!((at("1425513").trace_status, at("1425513").runtime), (TraceStatus::Cancelled, secs(675_233)));
    // A zero-length job stays a job (the engine rejects it as zero_runtime).
    assert_eq!((at("1425520").runtime, at("1425520").kind), (secs(0), JobKind::Batch));
    // NODE_FAIL and TIMEOUT count as failed; 4 nodes × 8 GPUs × 32 cores.
    let j = at("2013377");
    assert_eq!((j.tasks, j.task.gpus, j.task.cores, j.trace_status), (4, 8, 32, TraceStatus::Failed));
    assert_eq!(at("2013390").trace_status, TraceStatus::Failed);
    // 3 GPUs and 9 CPUs on 2 nodes: rounded up to 2 GPUs and 5 cores per task.
    let j = at("2013391");
    assert_eq!((j.tasks, j.task.gpus, j.task.cores), (2, 2, 5));
    // A 4-node CPU job and a 64-GPU job on 8 nodes.
    let j = at("2871004");
    assert_eq!((j.tasks, j.task.gpus, j.task.cores, j.kind), (4, 0, 16, JobKind::Batch));
    let j = at("3544120");
    assert_eq!((j.tasks, j.task.gpus, j.task.cores, j.submit), (8, 8, 32, SimTime::from_secs(15_551_400)));
    assert_eq!(j.observed_wait(), secs(4800));
    // 6 users and 5 VCs seen among the jobs.
    assert_eq!(i.jobs.iter().map(|j| j.user).max(), Some(6));
    assert_eq!(i.jobs.iter().map(|j| j.queue).max(), Some(5));
}

#[test]
fn helios_columns_by_name_states_and_errors() {
    // Extra (`jobname`) and reordered columns; `duration` empty → end − start.
    let text = "jobname,state,job_id,user,vc,gpu_num,cpu_num,node_num,submit_time,start_time,end_time,duration\n\
                train,COMPLETED,7,u1,vc1,2,4,1,2020-04-02 00:00:00,2020-04-02 00:01:00,2020-04-02 01:01:00,\n\
                x,CANCELLED by 0,8,u2,vc1,0,1,1,2020-04-02 00:00:00,None,,\n\
                x,SUSPENDED,9,u2,vc1,0,1,1,2020-04-02 00:00:00,2020-04-02 00:00:00,,1\n\
                x,RUNNING,10,u2,vc1,0,1,1,2020-04-02 00:00:00,2020-04-02 00:00:00,,\n";
    let (jobs, rows, skipped) = helios(text).unwrap();
    assert_eq!((rows, jobs.len(), skipped.total()), (4, 1, 3));
    assert_eq!(
        (jobs[0].trace_id.as_str(), jobs[0].runtime, jobs[0].submit),
        ("7", secs(3600), SimTime::from_secs(86_400))
    );
    assert_eq!(
        skipped.0.keys().map(String::as_str).collect::<Vec<_>>(),
        ["never started", "still running", "suspended"]
    );
    let head = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n";
    for (row, want) in [
        (
            "1,u,v,1,1,1,DONE,2020-04-02 00:00:00,2020-04-02 00:00:00,2020-04-02 00:00:01,1,0",
            "t.csv:2: column 'state': expected a Slurm job state",
        ),
        (
            "1,u,v,1,1,0,COMPLETED,2020-04-02 00:00:00,2020-04-02 00:00:00,2020-04-02 00:00:01,1,0",
            "t.csv:2: column 'node_num': expected an integer 1..=",
        ),
        (
            "1,u,v,x,1,1,COMPLETED,2020-04-02 00:00:00,2020-04-02 00:00:00,2020-04-02 00:00:01,1,0",
            "t.csv:2: column 'gpu_num'",
        ),
        (
            "1,u,v,1,1,1,COMPLETED,1585785600,2020-04-02 00:00:00,2020-04-02 00:00:01,1,0",
            "t.csv:2: column 'submit_time': expected a date and time",
        ),
        (
            "1,u,v,1,1,1,COMPLETED,2020-04-02 00:00:00,2020-04-01 23:59:59,2020-04-02 00:00:01,1,0",
            "t.csv:2: column 'start_time': expected a time on or after submit_time",
        ),
        (
            "1,u,v,1,1,1,COMPLETED,2020-04-02 00:00:00,2020-04-02 00:00:00,2020-04-02 00:00:01,1e30,0",
            "t.csv:2: column 'duration'",
        ),
        (
            "1,u,v,1,1,1,COMPLETED,2020-04-02 00:00:00,2020-04-02 00:00:09,2020-04-02 00:00:01,,0",
            "t.csv:2: column 'end_time': expected a time on or after start_time",
        ),
    ] {
        let e = helios(&format!("{head}{row}\n")).unwrap_err().to_string();
        assert!(e.starts_with(want), "{e}");
    }
    let e = helios("job_id,user,vc,gpu_num,cpu_num,state,submit_time,start_time,duration\n").err().unwrap().to_string();
    assert!(e.contains("header lacks column 'node_num'"), "{e}");
}

#[test]
fn sia_committed_workloads() {
    let rt =
        runtimes(&[("cifar10", 3600), ("bert", 7200), ("deepspeech2", 5400), ("imagenet", 36_000), ("yolov3", 14_400)]);
    let opts = ImportOptions { app_runtimes: rt.clone(), ..ImportOptions::default() };
    for (file, first, last, max_replicas) in [
        ("sia/saturn-workload-1.csv", ("cifar10-0", 401, 12), ("bert-159", 28_098, 8), 16),
        ("sia/philly-workload-1.csv", ("cifar10-0", 107, 6), ("cifar10-159", 27_695, 8), 16),
    ] {
        let path = data(file);
        assert_eq!(traces::detect_file_format(&path), Format::Sia, "{file}");
        let i = traces::import(&path, None, &opts).unwrap();
        assert_eq!((i.format, i.rows, i.jobs.len(), i.skipped.total()), (Format::Sia, 160, 160, 0), "{file}");
        for (j, (name, t, n)) in [(&i.jobs[0], first), (&i.jobs[159], last)] {
            assert_eq!((j.trace_id.as_str(), j.submit, j.tasks), (name, SimTime::from_secs(t), n), "{file}");
            assert_eq!((j.task.gpus, j.task.cores, j.kind), (1, 1, JobKind::DlTrain));
        }
        assert_eq!(i.jobs.iter().map(|j| j.tasks).max(), Some(max_replicas));
        assert!(i.jobs.iter().all(|j| j.runtime == j.requested && j.runtime.is_some()));
        assert_eq!(i.jobs.iter().filter(|j| j.runtime == secs(3600)).count(), 134, "{file}: cifar10 jobs");
        assert_eq!(i.jobs[0].queue, 1);
    }
    // Saturn: applications dense in first-seen order; deepspeech2 jobs run 5400 s.
    let i = traces::import(&data("sia/saturn-workload-1.csv"), None, &opts).unwrap();
    assert_eq!(i.jobs.iter().map(|j| j.queue).max(), Some(5));
    assert_eq!(i.jobs.iter().filter(|j| j.runtime == secs(5400)).count(), 10);
}

#[test]
fn sia_needs_run_times() {
    let path = data("sia/philly-workload-1.csv");
    let e = traces::import(&path, Some(Format::Sia), &ImportOptions::default()).unwrap_err().to_string();
    assert!(e.contains("carries no run times") && e.contains("--app-runtime APP=SECONDS"), "{e}");
    let opts = ImportOptions { app_runtimes: runtimes(&[("cifar10", 60)]), ..ImportOptions::default() };
    let e = traces::import(&path, None, &opts).unwrap_err().to_string();
    assert!(e.contains(":3: column 'application'") && e.contains("--app-runtime deepspeech2=SECONDS"), "{e}");
    assert!(e.contains("given for: cifar10") && e.ends_with("found 'deepspeech2'"), "{e}");
    let rt = runtimes(&[("a", 10)]);
    let head = "name,time,application,num_replicas,batch_size\n";
    let (jobs, rows) = sia(&format!("{head}j0,0.25,a,3,64\n"), &rt).unwrap();
    assert_eq!((rows, jobs[0].submit, jobs[0].tasks, jobs[0].runtime), (1, SimTime(250_000), 3, secs(10)));
    for (row, want) in [
        ("j0,-1,a,1,1", "t.csv:2: column 'time'"),
        ("j0,1,a,0,1", "t.csv:2: column 'num_replicas'"),
        (",1,a,1,1", "t.csv:2: column 'name'"),
        (
            "j0,1,,1,1",
            "t.csv:2: column 'application': expected an application with a run time (give it with --app-runtime APP=SECONDS",
        ),
    ] {
        let e = sia(&format!("{head}{row}\n"), &rt).unwrap_err().to_string();
        assert!(e.starts_with(want), "{e}");
    }
}

#[test]
fn no_input_panics() {
    // Odd bytes, truncated rows and huge numbers are errors or skips, never panics.
    let rt = runtimes(&[("a", 1)]);
    for text in [
        "timestamp,duration,num_gpus,gpu_time,cluster\n\u{e9}\u{e9}\u{e9},1,1,1,a\n",
        "timestamp,duration,num_gpus,gpu_time,cluster\n2017-09-01 00:00:00\n",
        "timestamp,duration,num_gpus,gpu_time,cluster\n9999-12-31 23:59:59,18446744073709.551615,4294967295,1,a\n",
        "timestamp,duration,num_gpus,gpu_time,cluster\n0000-01-01 00:00:00,1,1,1,a\n",
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,duration\n1,u,v,4294967295,4294967295,1,COMPLETED,9999-12-31 23:59:59,9999-12-31 23:59:59,1\n",
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,duration\n1\n",
        "name,time,application,num_replicas\nj,1e400,a,1\n",
        "name,time,application,num_replicas\n\"unterminated,1,a,1\n",
        "",
    ] {
        let _ = philly(text);
        let _ = helios(text);
        let _ = sia(text, &rt);
    }
    let (jobs, _, _) = helios(
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,duration\n\
         1,u,v,8,8,1,COMPLETED,9999-12-31 23:59:59,9999-12-31 23:59:59,1\n",
    )
    .unwrap();
    assert_eq!(jobs[0].submit.0 / 1_000_000, 253_402_300_799 - 1_585_699_200);
}
