//! The run pipeline as a library: load, replay, outputs, comparison, report.

use runner::input::{Input, load};
use runner::run::{RunOptions, run};

fn quiet() -> impl FnMut(String) {
    |_| {}
}

/// The embedded default under EASY: every job accounted for, the run folder's files
/// written, the same bytes twice.
#[test]
fn the_embedded_default_replays_into_a_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load(&Input::default(), 0, &mut quiet()).unwrap();
    assert_eq!(loaded.workload.jobs.len(), 3000);
    assert_eq!(loaded.name, runner::input::DEFAULT_TRACE_NAME);
    let o = RunOptions { out: dir.path().join("a"), policy: Some("easy".into()), log: true, ..RunOptions::default() };
    let done = run(&o, &loaded, None).unwrap();
    assert_eq!(done.summary.jobs_total, 3000);
    assert_eq!(done.written, ["jobs.csv", "frame.csv", "summary.json", "decisions.jsonl"]);
    let again = RunOptions { out: dir.path().join("b"), ..o.clone() };
    run(&again, &loaded, None).unwrap();
    for f in ["jobs.csv", "summary.json", "decisions.jsonl"] {
        let read = |d: &str| std::fs::read(dir.path().join(d).join(f)).unwrap();
        assert_eq!(read("a"), read("b"), "{f}");
    }
}

/// Notes a user should see come back instead of being printed: the default policy of a
/// GPU workload and why.
#[test]
fn gpu_workloads_get_a_gpu_aware_default_with_a_note() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let input = Input {
        trace: Some(root.join("data/openb/openb_pod_list_default.first400.csv")),
        nodes: Some(root.join("data/openb/openb_node_list_gpu_node.every20th.csv")),
        ..Input::default()
    };
    let loaded = load(&input, 0, &mut quiet()).unwrap();
    let notes = runner::run::notes(&RunOptions::default(), &loaded).unwrap();
    assert!(notes[0].starts_with("policy: kube (Kubernetes' scheduler"), "{notes:?}");
}

/// A comparison of two policies: one folder per run, results in plan order, the report
/// and the list of runs.
#[test]
fn a_comparison_writes_every_run_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = load(&Input::default(), 0, &mut quiet()).unwrap();
    let plan = vec![runner::compare::Cell::new("fcfs", 1), runner::compare::Cell::new("easy", 1)];
    let base = RunOptions::default();
    runner::compare::check_specs(&["fcfs".into(), "easy".into()], &base).unwrap();
    assert!(runner::compare::check_specs(&["easy".into(), "easy[pass=per-time]".into()], &base).is_err());
    let runs = runner::compare::compare(&plan, &base, &|_| &loaded, dir.path(), 2, &|| {}).unwrap();
    assert_eq!(runs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["fcfs__seed1", "easy__seed1"]);
    let list = std::fs::read_to_string(dir.path().join(runner::compare::RUNS_LIST)).unwrap();
    assert_eq!(list, "fcfs__seed1\neasy__seed1\n");
    assert!(dir.path().join("report.html").is_file());
}

/// Sweep files with arbitrary values: an error naming the file, or a sweep; never a panic.
#[test]
fn sweep_files_never_panic() {
    use proptest::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(128));
    let strategy = (
        "[ -~]{0,12}",
        prop::collection::vec("[ -~]{0,12}", 0..3),
        proptest::option::of("[ -~]{0,8}"),
        prop::collection::vec("[ -~]{0,12}", 0..3),
        proptest::option::of("[ -~]{0,8}"),
    );
    runner
        .run(&strategy, |(out, policies, seeds, traces, horizon)| {
            let mut text = format!("out = {out:?}\npolicies = {policies:?}\n");
            if let Some(s) = &seeds {
                text.push_str(&format!("seeds = {s:?}\n"));
            }
            if let Some(h) = &horizon {
                text.push_str(&format!("[run]\nhorizon = {h:?}\n"));
            }
            for t in &traces {
                text.push_str(&format!("[[trace]]\ntrace = {t:?}\n"));
            }
            std::fs::write(&path, &text).unwrap();
            match runner::sweep::Sweep::load(&path) {
                Ok(s) => prop_assert!(!s.traces.is_empty() && !s.seeds.is_empty()),
                Err(e) => prop_assert!(e.to_string().contains("s.toml"), "{e}"),
            }
            Ok(())
        })
        .unwrap();
}

/// Replays `trace` under `o` twice, streamed ([`runner::stream`]) and read whole; returns
/// whether it streamed and the files of both run folders.
#[allow(clippy::type_complexity)]
fn both_ways(trace: &std::path::Path, o: &RunOptions) -> (bool, Vec<(String, Vec<u8>, Vec<u8>)>) {
    both_ways_of(&Input { trace: Some(trace.to_path_buf()), ..Input::default() }, o)
}

/// [`both_ways`] of any input.
#[allow(clippy::type_complexity)]
fn both_ways_of(input: &Input, o: &RunOptions) -> (bool, Vec<(String, Vec<u8>, Vec<u8>)>) {
    let input = input.clone();
    assert!(runner::stream::streams(&input, o));
    let streamed_out = o.out.join("streamed");
    let whole_out = o.out.join("whole");
    let so = RunOptions { out: streamed_out.clone(), ..o.clone() };
    let streamed = runner::stream::run(&input, &so, &mut |_| {}, &mut |_| {}, None).unwrap();
    let did = matches!(streamed, runner::stream::Streamed::Done { .. });
    let loaded = load(&input, o.seed, &mut quiet()).unwrap();
    let done = run(&RunOptions { out: whole_out.clone(), ..o.clone() }, &loaded, None).unwrap();
    let files = done
        .written
        .iter()
        .map(|f| {
            let read = |d: &std::path::Path| std::fs::read(d.join(f)).unwrap_or_default();
            (f.clone(), read(&streamed_out), read(&whole_out))
        })
        .collect();
    (did, files)
}

/// A streamed replay writes the files of a replay that reads the whole trace, byte for
/// byte: the logs committed under data/, several policies, the decision log, Batsim's
/// layout, time limits enforced, a horizon that leaves jobs running, waiting and not yet
/// submitted.
#[test]
fn streamed_replays_write_the_files_of_whole_replays() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let dir = tempfile::tempdir().unwrap();
    let traces = [
        "CEA-Curie-2011-2.1-cln.first2000.swf.gz",
        "CTC-SP2-1996-3.1-cln.first2000.swf.gz",
        "HPC2N-2002-2.2-cln.first2000.swf.gz",
        "LANL-CM5-1994-4.1-cln.first2000.swf.gz",
        "SDSC-BLUE-2000-4.2-cln.first2000.swf.gz",
    ];
    let policies = ["easy", "conservative", "fcfs", "sjf-aging", "kube"];
    let mut cases = 0;
    for (i, (t, policy)) in traces.iter().flat_map(|t| [t; 2]).zip(policies.iter().copied().cycle()).enumerate() {
        let out = dir.path().join(format!("{i}"));
        let o = RunOptions { out, policy: Some(policy.into()), log: true, ..RunOptions::default() };
        let variants = [
            o.clone(),
            RunOptions { out: o.out.join("batsim"), jobs_format: runner::run::JobsFormat::Batsim, ..o.clone() },
            RunOptions { out: o.out.join("kill"), walltime_kill: true, log: false, ..o.clone() },
            // Some 300 hours in: jobs running, waiting and not yet read at the horizon.
            RunOptions {
                out: o.out.join("horizon"),
                horizon: Some(sim_core::SimTime::from_secs(1_080_000)),
                ..o.clone()
            },
        ];
        for v in variants {
            let (streamed, files) = both_ways(&root.join(t), &v);
            assert!(streamed, "{t} {policy}: not streamed");
            assert!(files.len() >= 3, "{t}: {:?}", files.iter().map(|f| &f.0).collect::<Vec<_>>());
            for (name, a, b) in files {
                assert!(a == b, "{t} under {policy} ({:?}): {name} differs", v.out);
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 40);
}

/// A file not sorted by submit time is not streamed: it gives way to a replay of the
/// whole trace, which sorts the arrivals.
#[test]
fn an_unsorted_file_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("unsorted.swf");
    let line = |id: u32, submit: u32| format!("{id} {submit} -1 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n");
    let text = format!("; MaxProcs: 4\n{}{}{}", line(1, 0), line(2, 50), line(3, 10));
    std::fs::write(&trace, text).unwrap();
    let o = RunOptions { out: dir.path().join("out"), ..RunOptions::default() };
    let (streamed, files) = both_ways(&trace, &o);
    assert!(!streamed);
    let jobs = &files.iter().find(|f| f.0 == "jobs.csv").unwrap().2;
    // Job 3 arrives before job 2 and takes the machine first, when job 1 ends.
    let text = String::from_utf8_lossy(jobs);
    assert!(text.contains("\n3,10,100,200,90,100,200,4,completed,,\n"), "{text}");
    assert!(text.contains("\n2,50,200,300,150,100,200,4,completed,,\n"), "{text}");
}

/// A native trace on a cluster configuration streams too (read ahead once for the
/// default policy, the notes and the GPU samples): a generated GPU workload under the
/// default policy (kube's, with FGD fragmentation sampled and GPU energy), Kubernetes'
/// scheduler with FGD placement, and EASY.
#[test]
fn streamed_gpu_replays_write_the_files_of_whole_replays() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root.join("examples/models/gpu.toml")).unwrap();
    let model = traces::generator::Model::from_toml(&text, "gpu.toml").unwrap();
    let trace = dir.path().join("gpu.jsonl");
    let mut out = Vec::new();
    for job in traces::generator::Generator::new(&model, 7).take(1500) {
        traces::native::write_job(&mut out, &job).unwrap();
    }
    std::fs::write(&trace, out).unwrap();
    let input = Input { trace: Some(trace), cluster: Some(root.join("examples/gpu-cluster.toml")), ..Input::default() };
    for (k, policy) in [None, Some("kube[score=fgd]"), Some("easy")].into_iter().enumerate() {
        let o = RunOptions {
            out: dir.path().join(format!("{k}")),
            policy: policy.map(Into::into),
            ..RunOptions::default()
        };
        assert!(runner::stream::streams(&input, &o));
        let (streamed, files) = both_ways_of(&input, &o);
        assert!(streamed, "{policy:?}: not streamed");
        let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
        // Policies that place GPUs sample their fragmentation; EASY counts processors.
        assert_eq!(names.contains(&"fragmentation.csv"), policy != Some("easy"), "{policy:?}: {names:?}");
        for (name, a, b) in files {
            assert!(a == b, "{policy:?}: {name} differs");
        }
    }
}

/// A comparison whose replays stream writes the folders and report of one that reads
/// the trace ahead.
#[test]
fn a_streamed_comparison_writes_what_a_loaded_one_writes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let dir = tempfile::tempdir().unwrap();
    let input = Input { trace: Some(root.join("HPC2N-2002-2.2-cln.first2000.swf.gz")), ..Input::default() };
    let plan = vec![runner::compare::Cell::new("easy", 1), runner::compare::Cell::new("conservative", 1)];
    let base = RunOptions::default();
    assert!(runner::compare::streams_all(&plan, &base, &input));
    let (a, b) = (dir.path().join("streamed"), dir.path().join("loaded"));
    let mut notes = Vec::new();
    runner::compare::compare_streamed(&plan, &base, &input, &a, 2, &mut |n| notes.push(n), &|| {}).unwrap();
    let loaded = load(&input, 1, &mut quiet()).unwrap();
    runner::compare::compare(&plan, &base, &|_| &loaded, &b, 2, &|| {}).unwrap();
    for f in ["runs.txt", "comparison.csv", "report.html", "easy__seed1/jobs.csv", "conservative__seed1/summary.json"] {
        let read = |d: &std::path::Path| std::fs::read(d.join(f)).unwrap();
        assert!(read(&a) == read(&b), "{f} differs");
    }
}

/// Operators' traces on a cluster configuration stream when sorted by submit time (read
/// ahead once, as native traces are), with the notes a whole read gives; the others are
/// read whole. Either way the files are those of a whole read.
#[test]
fn operators_traces_stream_when_sorted() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let cluster = Some(root.join("examples/gpu-cluster.toml"));
    let cases = [
        ("data/sacct/sample.parsable2.txt", None, vec![]),
        ("data/philly/philly.first2000.csv.gz", None, vec![]),
        ("data/helios/cluster_log.sample.csv", None, vec![]),
        ("data/pai/pai_task_table.sample.csv", Some(root.join("data/pai/pai_job_table.sample.csv")), vec![]),
        ("data/sia/philly-workload-1.csv", None, vec!["cifar10=3600".to_string(), "imagenet=7200".to_string()]),
    ];
    let mut streamed = Vec::new();
    for (k, (trace, pai_jobs, app_runtimes)) in cases.into_iter().enumerate() {
        let input = Input {
            trace: Some(root.join(trace)),
            cluster: cluster.clone(),
            pai_jobs,
            app_runtimes,
            ..Input::default()
        };
        let o = RunOptions { out: dir.path().join(format!("{k}")), ..RunOptions::default() };
        assert!(runner::stream::streams(&input, &o), "{trace}");
        let Ok(loaded) = load(&input, 0, &mut quiet()) else { continue };
        let mut notes = Vec::new();
        let s = runner::stream::run(
            &input,
            &RunOptions { out: o.out.join("s"), ..o.clone() },
            &mut |n| notes.push(n),
            &mut |_| {},
            None,
        )
        .unwrap();
        let done = run(&RunOptions { out: o.out.join("w"), ..o.clone() }, &loaded, None).unwrap();
        if matches!(s, runner::stream::Streamed::Done { .. }) {
            streamed.push(trace);
            let mut whole_notes = Vec::new();
            load(&input, 0, &mut |n| whole_notes.push(n)).unwrap();
            whole_notes.extend(runner::run::notes(&o, &loaded).unwrap());
            assert_eq!(notes, whole_notes, "{trace}");
        }
        for f in done.written {
            let read = |d: &str| std::fs::read(o.out.join(d).join(&f)).unwrap_or_default();
            assert!(
                read("s") == read("w") || !matches!(s, runner::stream::Streamed::Done { .. }),
                "{trace}: {f} differs"
            );
        }
    }
    assert!(streamed.len() >= 2, "streamed: {streamed:?}");
    eprintln!("streamed: {streamed:?}");
}
