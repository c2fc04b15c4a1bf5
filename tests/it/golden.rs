//! Golden results of fixed replays. A change here means results changed: find out why,
//! and when the change is intended, refresh the committed files in the same commit:
//!
//! ```text
//! SCHEDLAB_UPDATE_GOLDEN=1 cargo test --test it golden
//! ```
//!
//! * `data/golden/<scenario>.summary.json`: the whole `summary.json` of a replay (an SWF
//!   slice under EASY, conservative and SJF with aging; the openb slice under kube with
//!   FGD placement, with GPU energy), byte for byte;
//! * `data/golden/<scenario>.jobs.sha256`: the SHA-256 of its `jobs.csv`, so that a change
//!   of one job that leaves every mean alone still fails.

use crate::{root, sha256};
use std::path::PathBuf;
use std::process::Command;

/// (scenario, `sim run` arguments). Paths are relative to the repository root, so the
/// summaries name the same trace on every machine.
const SCENARIOS: &[(&str, &[&str])] = &[
    ("embedded-fcfs", &["--policy", "fcfs"]),
    ("embedded-easy", &["--policy", "easy"]),
    ("embedded-conservative", &["--policy", "conservative"]),
    ("hpc2n-easy", &["--trace", "data/HPC2N-2002-2.2-cln.first2000.swf.gz", "--policy", "easy"]),
    ("hpc2n-conservative", &["--trace", "data/HPC2N-2002-2.2-cln.first2000.swf.gz", "--policy", "conservative"]),
    ("hpc2n-sjf-aging", &["--trace", "data/HPC2N-2002-2.2-cln.first2000.swf.gz", "--policy", "sjf-aging"]),
    (
        "openb-fgd",
        &[
            "--trace",
            "data/openb/openb_pod_list_default.first400.csv",
            "--nodes",
            "data/openb/openb_node_list_gpu_node.every20th.csv",
            "--policy",
            "kube",
            "--placement",
            "fgd",
        ],
    ),
];

fn golden_dir() -> PathBuf {
    root().join("data").join("golden")
}

/// Runs a scenario from the repository root; returns (summary.json, jobs.csv hash).
fn replay(args: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut all = vec!["run", "--quiet", "--seed", "0", "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = Command::new(env!("CARGO_BIN_EXE_sim")).current_dir(root()).args(&all).output().unwrap();
    assert!(o.status.success(), "sim {}: {}", all.join(" "), String::from_utf8_lossy(&o.stderr));
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let jobs = std::fs::read(out.join("jobs.csv")).unwrap();
    (summary, format!("{}\n", sha256(&jobs)))
}

/// The first differing line of two texts, for the failure message.
fn first_difference(want: &str, got: &str) -> String {
    let (mut w, mut g) = (want.lines(), got.lines());
    for n in 1.. {
        match (w.next(), g.next()) {
            (None, None) => break,
            (a, b) if a == b => continue,
            (a, b) => return format!("line {n}: committed {:?}, now {:?}", a.unwrap_or(""), b.unwrap_or("")),
        }
    }
    "no line differs (line endings?)".into()
}

#[test]
fn fixed_replays_match_their_golden_results() {
    let update = std::env::var_os("SCHEDLAB_UPDATE_GOLDEN").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    for (name, args) in SCENARIOS {
        let (summary, jobs_hash) = replay(args);
        for (file, got) in [(format!("{name}.summary.json"), summary), (format!("{name}.jobs.sha256"), jobs_hash)] {
            let path = golden_dir().join(&file);
            if update {
                std::fs::create_dir_all(golden_dir()).unwrap();
                std::fs::write(&path, &got).unwrap();
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(want) if want == got => {}
                Ok(want) => failures.push(format!("{file}: {}", first_difference(&want, &got))),
                Err(e) => failures.push(format!("{file}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "results changed against data/golden/ (if intended, run `SCHEDLAB_UPDATE_GOLDEN=1 cargo test --test it golden` \
         and commit the files):\n  {}",
        failures.join("\n  ")
    );
}

#[test]
fn the_golden_files_are_all_in_use() {
    // A scenario removed from the list must take its files with it.
    let names: Vec<String> =
        SCENARIOS.iter().flat_map(|(n, _)| [format!("{n}.summary.json"), format!("{n}.jobs.sha256")]).collect();
    for e in std::fs::read_dir(golden_dir()).unwrap() {
        let f = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(f == "README.md" || names.contains(&f), "data/golden/{f} belongs to no scenario");
    }
}
