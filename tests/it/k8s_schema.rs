//! Checks a Kubernetes Job manifest against the batch/v1 Job schema
//! (`data/k8s/job-batch-v1.subset.json`, a strict subset of the upstream JSON Schema) with
//! Python's `jsonschema` package. Without it the check is skipped, unless
//! `SCHEDLAB_REQUIRE_JSONSCHEMA` is set (CI installs Debian's python3-jsonschema).

use std::process::Command;

fn schema_path() -> std::path::PathBuf {
    crate::root().join("data/k8s/job-batch-v1.subset.json")
}

const CHECK: &str = "import json, sys, jsonschema\n\
    jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))\n";

/// `Ok` when the schema accepts `job` (or no validator is here and none is required).
pub fn validate_job(job: &serde_json::Value) -> Result<(), String> {
    let has = Command::new("python3").args(["-c", "import jsonschema"]).output().is_ok_and(|o| o.status.success());
    if !has {
        if std::env::var_os("SCHEDLAB_REQUIRE_JSONSCHEMA").is_some() {
            return Err("python3 with the jsonschema package is required (SCHEDLAB_REQUIRE_JSONSCHEMA)".into());
        }
        eprintln!("skipped: no python3 jsonschema package to check the Job manifest with");
        return Ok(());
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.json");
    std::fs::write(&file, job.to_string()).unwrap();
    let o = Command::new("python3")
        .args(["-c", CHECK, file.to_str().unwrap(), schema_path().to_str().unwrap()])
        .output()
        .map_err(|e| e.to_string())?;
    if o.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&o.stderr).into_owned()) }
}

/// The check can fail: a misspelt field, a count given as text.
#[test]
fn the_schema_refuses_what_kubernetes_would() {
    let good = serde_json::json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": { "name": "j" },
        "spec": { "completionMode": "Indexed", "completions": 2,
                  "template": { "spec": { "restartPolicy": "Never", "containers": [{ "name": "c", "image": "i" }] } } }
    });
    validate_job(&good).unwrap();
    let has = Command::new("python3").args(["-c", "import jsonschema"]).output().is_ok_and(|o| o.status.success());
    if !has {
        return;
    }
    let mut typo = good.clone();
    typo["spec"]["completionsMode"] = "Indexed".into();
    assert!(validate_job(&typo).unwrap_err().contains("completionsMode"));
    let mut text = good.clone();
    text["spec"]["completions"] = "two".into();
    assert!(validate_job(&text).is_err());
    let mut nameless = good;
    nameless["spec"]["template"]["spec"]["containers"][0].as_object_mut().unwrap().remove("name");
    assert!(validate_job(&nameless).is_err());
}
