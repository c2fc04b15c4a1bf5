//! `sim sweep`: a grid run here, cell by cell as array tasks would, resumed, merged into
//! the same bytes as `sim compare`; the submit files; the errors.

use crate::{data, sim};
use std::path::Path;

const POLICIES: &str = "fcfs,easy,conservative,sjf-aging";

/// A sweep of the KTH and CTC slices × four policies × seeds 1..5 (resampled) in `dir`.
fn sweep_file(dir: &Path, seeds: &str) -> String {
    let text = format!(
        "out = \"out\"\npolicies = [\"fcfs\", \"easy\", \"conservative\", \"sjf-aging\"]\nseeds = \"{seeds}\"\n\
         perturb = \"resample\"\n\n[[trace]]\nname = \"kth\"\ntrace = \"{}\"\n\n[[trace]]\nname = \"ctc\"\ntrace = \"{}\"\n\n\
         [slurm]\nthrottle = 4\nmem = \"1G\"\n",
        data("KTH-SP2-1996-2.1-cln.first3000.swf.gz"),
        data("CTC-SP2-1996-3.1-cln.first2000.swf.gz")
    );
    let p = dir.join("sweep.toml");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn ok(o: std::process::Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every file of a comparison folder but the run folders (comparison.csv, report.html,
/// the tables and plots, runs.txt), by path.
fn report_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            let p = e.path();
            if p.is_dir() {
                if !p.join("summary.json").exists() {
                    stack.push(p);
                }
            } else {
                out.insert(p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn compare_into(dir: &Path, trace: &str) -> std::path::PathBuf {
    let out = dir.join(format!("cmp-{trace}"));
    let file =
        if trace == "kth" { "KTH-SP2-1996-2.1-cln.first3000.swf.gz" } else { "CTC-SP2-1996-3.1-cln.first2000.swf.gz" };
    let args = [
        "compare",
        "-q",
        "--trace",
        &data(file),
        "--policies",
        POLICIES,
        "--seeds",
        "1..5",
        "--perturb",
        "resample",
        "--out",
        out.to_str().unwrap(),
    ];
    ok(sim(&args));
    out
}

/// 2 traces × 4 policies × 5 seeds: half the cells run one by one as array tasks would
/// (by index, by id, by SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX), a merge names the
/// ones missing, `sim sweep local` runs only those, and each trace's report is the bytes
/// `sim compare` writes over the same cells.
#[test]
fn a_sweep_resumed_and_merged_is_sim_compare() {
    let d = tempfile::tempdir().unwrap();
    let file = sweep_file(d.path(), "1..5");
    let plan = ok(sim(&["sweep", "plan", &file]));
    assert!(plan.starts_with("40 cells (2 traces × 4 policies × 1 settings × 5 seeds), 0 done"), "{plan}");
    let ids: Vec<String> = plan.lines().skip(2).map(|l| l.split('\t').nth(1).unwrap().to_string()).collect();
    for i in 0..18 {
        ok(sim(&["sweep", "run", &file, "--index", &i.to_string(), "-q"]));
    }
    ok(sim(&["sweep", "run", &file, "--cell", &ids[18], "-q"]));
    let task = |var: &str, i: &str| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_sim"))
            .args(["sweep", "run", &file, "-q"])
            .env(var, i)
            .output()
            .unwrap();
        ok(o);
    };
    task("SLURM_ARRAY_TASK_ID", "19");
    task("JOB_COMPLETION_INDEX", "20");
    // A task killed while writing leaves a partial folder, which counts for nothing.
    std::fs::create_dir_all(d.path().join("out/ctc/.easy__seed4.partial-1")).unwrap();
    let merged = sim(&["sweep", "merge", &file]);
    assert_eq!(merged.status.code(), Some(1));
    let err = String::from_utf8_lossy(&merged.stderr);
    assert!(err.contains("19 cells missing") && err.contains(&ids[39]) && !err.contains(&ids[0]), "{err}");
    let local = ok(sim(&["sweep", "local", &file, "-j", "2"]));
    assert!(local.contains("19 cells run, 21 were done"), "{local}");
    for t in ["kth", "ctc"] {
        let want = report_files(&compare_into(d.path(), t));
        let got = report_files(&d.path().join("out").join(t));
        assert_eq!(want.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>());
        for (k, v) in &want {
            assert!(got[k] == *v, "{t}: {k} differs from sim compare's");
        }
    }
    // Nothing left: a second local run runs nothing.
    assert!(ok(sim(&["sweep", "local", &file])).contains("0 cells run, 40 were done"));
    // Another seed: the 40 cells keep their ids.
    let more = sweep_file(d.path(), "1..6");
    let plan = ok(sim(&["sweep", "plan", &more]));
    let again: Vec<&str> = plan.lines().skip(2).map(|l| l.split('\t').nth(1).unwrap()).collect();
    assert_eq!(again.len(), 48);
    assert!(ids.iter().all(|i| again.contains(&i.as_str())), "{plan}");
    assert!(plan.contains("48 cells") && plan.contains("40 done"), "{plan}");
}

/// The Slurm array and its submit script, the Kubernetes Indexed Job.
#[test]
fn the_submit_files_for_slurm_and_kubernetes() {
    let d = tempfile::tempdir().unwrap();
    let file = sweep_file(d.path(), "1..5");
    ok(sim(&["sweep", "slurm", &file, "--sim", "/opt/schedlab/sim"]));
    let array = std::fs::read_to_string(d.path().join("out/sweep.sbatch")).unwrap();
    for want in [
        "#SBATCH --array=0-39%4",
        "#SBATCH --mem=1G",
        "#SBATCH --cpus-per-task=1",
        "'/opt/schedlab/sim' sweep run",
        "--index \"$SLURM_ARRAY_TASK_ID\"",
    ] {
        assert!(array.contains(want), "{want}: {array}");
    }
    let submit = std::fs::read_to_string(d.path().join("out/submit.sh")).unwrap();
    assert!(submit.contains("--dependency=afterany:\"$array\"") && submit.contains("sweep merge"), "{submit}");
    ok(sim(&["sweep", "k8s", &file]));
    let job: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("out/job.json")).unwrap()).unwrap();
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert_eq!(job["spec"]["completions"], 40);
    let args = job["spec"]["template"]["spec"]["containers"][0]["args"].as_array().unwrap();
    assert!(args.iter().any(|a| a == "$(JOB_COMPLETION_INDEX)"), "{args:?}");
    crate::k8s_schema::validate_job(&job).unwrap();
}

#[test]
fn bad_sweep_files_are_refused_with_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let bad = |text: &str, want: &str| {
        let p = d.path().join("bad.toml");
        std::fs::write(&p, text).unwrap();
        let o = sim(&["sweep", "plan", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want) && err.contains("bad.toml"), "{err:?} should contain {want:?}");
    };
    bad("out = \"o\"\npolicies = [\"easy\"]\nwhat = 1\n[[trace]]\ntrace = \"x.swf\"\n", "unknown field `what`");
    bad("out = \"o\"\npolicies = [\"eazy\"]\n[[trace]]\ntrace = \"x.swf\"\n", "unknown policy 'eazy'");
    bad("out = \"o\"\npolicies = [\"easy\"]\nseeds = \"5..1\"\n[[trace]]\ntrace = \"x.swf\"\n", "reversed");
    bad("out = \"o\"\npolicies = [\"easy\"]\n", "expected at least one [[trace]]");
    let file = sweep_file(d.path(), "1..2");
    let o = sim(&["sweep", "run", &file, "--index", "99"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("index 99: the sweep has 16 cells"));
}
