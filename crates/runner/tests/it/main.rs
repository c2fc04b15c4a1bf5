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
