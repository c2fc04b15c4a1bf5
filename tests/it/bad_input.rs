use crate::{data, sim};
use std::io::Write;

/// Runs `sim run` on `trace` into a fresh folder; returns (status, stderr, out-folder
/// contents).
fn run_bad(trace: &std::path::Path, extra: &[&str]) -> (i32, String, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args = vec!["run", "--quiet", "--trace", trace.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = sim(&args);
    let files = std::fs::read_dir(&out)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned())).collect())
        .unwrap_or_default();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned(), files)
}

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.path().join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

const GOOD: &str = "; MaxProcs: 10\n1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n";

fn expect_error(name: &str, content: &[u8], want: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, name, content);
    let (code, err, files) = run_bad(&p, &[]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(want), "{err:?} should contain {want:?}");
    assert!(err.contains(name), "{err:?} should name the file");
    assert!(files.is_empty(), "no output files: {files:?}");
}

#[test]
fn a_line_with_17_fields() {
    let text = format!("{GOOD}2 5 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1\n");
    expect_error("t17.swf", text.as_bytes(), "t17.swf:3: expected 18 whitespace-separated fields, found 17");
}

#[test]
fn a_negative_processor_count() {
    let text = format!("{GOOD}2 5 0 10 -3 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n");
    expect_error(
        "neg.swf",
        text.as_bytes(),
        "neg.swf:3: field 5 (allocated processors): expected an integer >= 0, or -1 for unknown, found '-3'",
    );
    let text = format!("{GOOD}2 5 0 10 3 -1 -1 -7 20 -1 1 1 1 -1 -1 -1 -1 -1\n");
    expect_error("neg8.swf", text.as_bytes(), "neg8.swf:3: field 8 (requested processors)");
}

#[test]
fn a_non_numeric_field() {
    let text = format!("{GOOD}2 5 0 ten 3 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n");
    expect_error("nan.swf", text.as_bytes(), "nan.swf:3: field 4 (run time): expected a number, found 'ten'");
}

#[test]
fn a_truncated_gzip_file() {
    let full = std::fs::read(data("KTH-SP2-1996-2.1-cln.first3000.swf.gz")).unwrap();
    expect_error("cut.swf.gz", &full[..full.len() / 2], "cut.swf.gz:");
    expect_error("cut2.swf.gz", &full[..full.len() / 2], "truncated or corrupt gzip data");
}

#[test]
fn not_utf8_and_binary_garbage() {
    expect_error("bin.swf", b"; MaxProcs: 4\n\xff\xfe 1 2\n", "bin.swf:2:");
}

#[test]
fn missing_machine_size() {
    expect_error("nosize.swf", b"1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n", "pass --procs N");
}

#[test]
fn batsim_errors_name_line_and_field() {
    let text = b"{\"nb_res\": 4,\n \"jobs\": [\n  {\"id\": 1, \"subtime\": \"soon\", \"res\": 1, \"profile\": \"p\"}],\n \"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 5}}}\n";
    expect_error("w.json", text, "w.json:3: jobs[0].subtime: expected seconds >= 0, found '\"soon\"'");
    expect_error("trunc.json", b"{\"nb_res\": 4, \"jobs\": [{\"id\": 1,", "trunc.json:1: not a Batsim JSON workload");
}

#[test]
fn unknown_policy_or_option() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "ok.swf", GOOD.as_bytes());
    let (code, err, files) = run_bad(&p, &["--policy", "sjf"]);
    assert_eq!(
        (code, err.trim()),
        (
            2,
            "error: --policy: unknown policy 'sjf' (expected one of: fcfs, easy, conservative, kube, sjf-aging, slurm)"
        )
    );
    assert!(files.is_empty());
    let (code, err, _) = run_bad(&p, &["--policy", "easy[depth=2]"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown option 'depth'"), "{err}");
    let (code, err, _) = run_bad(&p, &["--policy", "easy[pass=sometimes]"]);
    assert_eq!(code, 2);
    assert!(err.contains("option 'pass' cannot be 'sometimes' (expected one of: per-time, per-event)"), "{err}");
    let (code, _, _) = run_bad(&p, &["--policy", "easy[pass"]);
    assert_eq!(code, 2);
}

#[test]
fn missing_file_and_bad_flags() {
    let (code, err, _) = run_bad(std::path::Path::new("/nonexistent/x.swf"), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/x.swf: cannot read"), "{err}");
    let o = sim(&["run", "--procs", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    let o = sim(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn existing_outputs_survive_a_failed_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("jobs.csv"), "previous").unwrap();
    let bad = write(&dir, "bad.swf", b"; MaxProcs: 4\n1 2 3\n");
    let o = sim(&["run", "--quiet", "--trace", bad.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(out.join("jobs.csv")).unwrap(), "previous");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
}
