//! schedlab against the independent reference implementation (`tools/refsim/refsim.py`,
//! written from docs/scheduling-semantics.md alone): its schedules of the committed slices
//! are in data/expected/ (refreshed by `tools/refsim/crosscheck.sh --write-expected`), and
//! every one must match `sim run` job for job.

use crate::{data, root, sim};
use std::io::Read;

struct Case {
    file: String,
    trace: String,
    policy: String,
    flags: Vec<String>,
}

fn cases() -> Vec<Case> {
    let manifest =
        std::fs::read_to_string(root().join("data/expected/MANIFEST.tsv")).expect("data/expected/MANIFEST.tsv");
    manifest
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Case {
                file: f[0].into(),
                trace: f[1].into(),
                policy: f[2].into(),
                flags: f.get(3).map(|s| s.split_whitespace().map(String::from).collect()).unwrap_or_default(),
            }
        })
        .collect()
}

fn first_nine_columns(text: &str) -> Vec<String> {
    text.lines().map(|l| l.split(',').take(9).collect::<Vec<_>>().join(",")).collect()
}

fn check(c: &Case) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let trace = data(&c.trace);
    let mut args = vec!["run", "--quiet", "--trace", &trace, "--policy", &c.policy, "--out", out.to_str().unwrap()];
    args.extend(c.flags.iter().map(String::as_str));
    let o = sim(&args);
    if !o.status.success() {
        return Err(format!("{}: sim failed: {}", c.file, String::from_utf8_lossy(&o.stderr)));
    }
    let got = first_nine_columns(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
    let mut want = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(root().join("data/expected").join(&c.file)).unwrap())
        .read_to_string(&mut want)
        .unwrap();
    let want = first_nine_columns(&want);
    if got.len() != want.len() {
        return Err(format!("{}: {} rows, reference has {}", c.file, got.len(), want.len()));
    }
    let diffs: Vec<String> =
        got.iter().zip(&want).filter(|(a, b)| a != b).take(3).map(|(a, b)| format!("sim {a} / ref {b}")).collect();
    if diffs.is_empty() {
        Ok(())
    } else {
        let n = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        Err(format!("{} ({} {:?}): {n} rows differ, e.g. {}", c.file, c.policy, c.flags, diffs.join("; ")))
    }
}

#[test]
fn schedules_match_the_reference_implementation() {
    let cases = cases();
    assert!(cases.len() >= 80, "only {} reference cases", cases.len());
    let (a, b) = cases.split_at(cases.len() / 2);
    let errors: Vec<String> = std::thread::scope(|s| {
        let h = s.spawn(|| a.iter().filter_map(|c| check(c).err()).collect::<Vec<_>>());
        let mut e: Vec<String> = b.iter().filter_map(|c| check(c).err()).collect();
        e.extend(h.join().unwrap());
        e
    });
    assert!(errors.is_empty(), "{} of {} cases differ:\n{}", errors.len(), cases.len(), errors.join("\n"));
}
