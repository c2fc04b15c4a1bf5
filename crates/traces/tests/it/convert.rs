//! Exporters: native → SWF → native keeps every field SWF has; real SWF logs survive
//! SWF → SWF with what the simulator reads.

use sim_core::{Job, SimDuration, SimTime, TraceStatus};
use std::path::PathBuf;

fn swf_jobs(text: &str) -> Vec<Job> {
    let bytes: &'static [u8] = Box::leak(text.as_bytes().to_vec().into_boxed_slice());
    let mut r = traces::swf::SwfReader::new(traces::input::from_bytes(bytes, "t.swf").unwrap(), "t.swf");
    let mut jobs = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        jobs.push(rec.to_job());
    }
    jobs
}

fn to_swf(jobs: &[Job]) -> String {
    let mut out = Vec::new();
    traces::swf::write_all(&mut out, jobs, traces::swf::Machine { procs: Some(64), nodes: None }, &["test".into()])
        .unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn native_to_swf_to_native_keeps_every_field_swf_has() {
    // Each line uses only what SWF can say: one-core tasks, memory per processor, times,
    // the observed start (SWF's wait), status, user, group, queue and partition.
    let native = r#"{"id":"7","submit":0,"runtime":3600,"requested":7200,"tasks":16,"memory_mib":2048,"user":3,"group":2,"queue":1,"partition":4,"observed_start":120}
{"id":"8","submit":10.5,"runtime":60.25,"tasks":1,"status":"failed","user":1}
{"id":"9","submit":30,"runtime":null,"requested":600,"tasks":4,"status":"cancelled","observed_start":30}
{"id":"10","submit":40,"runtime":5,"tasks":2,"queue":0,"partition":0}
"#;
    let jobs = traces::native::parse("w.jsonl", native).unwrap();
    let swf = to_swf(&jobs);
    assert!(swf.contains("; MaxProcs: 64") && swf.contains("; MaxJobs: 4"), "{swf}");
    let back = swf_jobs(&swf);
    assert_eq!(back, jobs, "{swf}");
    let mut out = Vec::new();
    traces::native::write(&mut out, &back).unwrap();
    assert_eq!(traces::native::parse("again.jsonl", std::str::from_utf8(&out).unwrap()).unwrap(), jobs);
}

#[test]
fn swf_writer_numbers_non_numeric_ids_and_counts_processors() {
    let mut j = Job::rigid("train-a", SimTime::from_secs(5), 2, SimDuration::from_secs(9), SimDuration::from_secs(20));
    j.task.cores = 8;
    j.task.memory_mib = 4096;
    j.trace_status = TraceStatus::Failed;
    let swf = to_swf(&[j]);
    let line = swf.lines().last().unwrap();
    // 16 processors, 4096 MiB per 8-core task = 512 MiB = 524,288 KB per processor.
    assert_eq!(line, "1 5 -1 9 16 -1 -1 16 20 524288 0 0 0 -1 -1 -1 -1 -1");
}

#[test]
fn swf_numbers_mixed_ids_in_order_and_writes_huge_memory() {
    let mut a = Job::rigid("123", SimTime::from_secs(0), 1, SimDuration::from_secs(1), SimDuration::from_secs(1));
    let b = Job { trace_id: "123_4".into(), ..a.clone() };
    let c = Job { trace_id: "1".into(), ..a.clone() };
    a.task.memory_mib = u64::MAX;
    let swf = to_swf(&[a, b, c]);
    let numbers: Vec<&str> =
        swf.lines().filter(|l| !l.starts_with(';')).map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(numbers, ["1", "2", "3"]);
    assert!(swf.contains(" 9223372036854775807 "), "{swf}");
}

#[test]
fn native_times_keep_every_microsecond() {
    let text = "{\"id\":\"far\",\"submit\":9999999999.000001,\"runtime\":1}\n";
    let jobs = traces::native::parse("w.jsonl", text).unwrap();
    let mut out = Vec::new();
    traces::native::write(&mut out, &jobs).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "{\"id\":\"far\",\"runtime\":1,\"submit\":9999999999.000001}\n");
}

#[test]
fn swf_slice_survives_swf_to_swf() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/KTH-SP2-1996-2.1-cln.first3000.swf.gz");
    let imported = traces::import(&path, None, &traces::ImportOptions::default()).unwrap();
    assert_eq!((imported.rows, imported.jobs.len(), imported.units), (3000, 3000, Some(100)));
    assert!(imported.jobs.iter().filter(|j| j.observed_start.is_some()).count() > 2900);
    let again = swf_jobs(&to_swf(&imported.jobs));
    assert_eq!(again, imported.jobs);
}
