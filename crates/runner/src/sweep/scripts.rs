//! The submit scripts of a sweep for the engines users already have: a Slurm job array
//! with a merge job after it (`sim sweep slurm`), a Kubernetes Indexed Job
//! (`sim sweep k8s`).

use super::Sweep;
use std::path::Path;

/// Quotes `s` for a POSIX shell.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The Slurm job array (`sweep.sbatch`): one task per cell, `--array=0-(N-1)` with the
/// `[slurm]` throttle, each task `sim sweep run` on its `SLURM_ARRAY_TASK_ID`.
pub fn slurm_array(s: &Sweep, sim: &Path, file: &Path) -> String {
    let n = s.cells().len();
    let t = &s.slurm;
    let throttle = if t.throttle > 0 { format!("%{}", t.throttle) } else { String::new() };
    let logs = s.out.join("logs");
    let mut out = String::from("#!/bin/bash\n");
    out.push_str(&format!("# schedlab sweep {}: {n} cells, one per array task.\n", file.display()));
    out.push_str("#SBATCH --job-name=schedlab-sweep\n");
    out.push_str(&format!("#SBATCH --array=0-{}{throttle}\n", n.saturating_sub(1)));
    if let Some(p) = &t.partition {
        out.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    out.push_str(&format!("#SBATCH --cpus-per-task={}\n", t.cpus_per_task.max(1)));
    out.push_str(&format!("#SBATCH --mem={}\n", t.mem));
    out.push_str(&format!("#SBATCH --time={}\n", t.time));
    out.push_str(&format!("#SBATCH --output={}\n", logs.join("cell-%a.out").display()));
    out.push_str("# A task whose cell is done (a resubmission) finds its folder and exits at once.\n");
    out.push_str(&format!(
        "exec {} sweep run {} --index \"$SLURM_ARRAY_TASK_ID\" --quiet\n",
        sh(&sim.display().to_string()),
        sh(&file.display().to_string())
    ));
    out
}

/// The script that submits the array and, after it (`afterany`: whatever became of its
/// tasks), the merge job (`submit.sh`).
pub fn slurm_submit(s: &Sweep, sim: &Path, file: &Path, array: &Path) -> String {
    let t = &s.slurm;
    let partition = t.partition.as_ref().map_or(String::new(), |p| format!(" --partition={p}"));
    let log = s.out.join("logs").join("merge.out");
    format!(
        "#!/bin/bash\n\
         # Submits the sweep's job array, then its merge once every task has ended.\n\
         set -euo pipefail\n\
         mkdir -p {logs}\n\
         array=$(sbatch --parsable {array})\n\
         array=${{array%%;*}}\n\
         merge=$(sbatch --parsable --job-name=schedlab-sweep-merge --dependency=afterany:\"$array\"{partition} \\\n\
         \x20   --cpus-per-task=1 --mem={mem} --time={time} --output={log} \\\n\
         \x20   --wrap={wrap})\n\
         echo \"array $array, merge $merge\"\n",
        logs = sh(&s.out.join("logs").display().to_string()),
        array = sh(&array.display().to_string()),
        mem = t.mem,
        time = t.time,
        log = sh(&log.display().to_string()),
        wrap = sh(&format!("{} sweep merge {}", sh(&sim.display().to_string()), sh(&file.display().to_string()))),
    )
}

/// The Kubernetes Indexed Job: one pod per cell (`completions`), `parallelism` at once,
/// each index retried `backoffLimitPerIndex` times; the sweep file, its traces and its
/// output on a PersistentVolumeClaim mounted at `[kubernetes] mount`. Kubernetes sets
/// `JOB_COMPLETION_INDEX` in every pod of an Indexed Job; the container's arguments pass
/// it on. JSON, which `kubectl apply -f` reads as it reads YAML.
pub fn kubernetes_job(s: &Sweep, file_in_volume: &str) -> serde_json::Value {
    let k = &s.kubernetes;
    let n = s.cells().len();
    serde_json::json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": k.name, "labels": { "app.kubernetes.io/name": "schedlab-sweep" } },
        "spec": {
            "completionMode": "Indexed",
            "completions": n,
            "parallelism": k.parallelism.max(1).min(n.max(1) as u32),
            "backoffLimitPerIndex": k.backoff_limit_per_index,
            "maxFailedIndexes": n,
            "template": {
                "metadata": { "labels": { "app.kubernetes.io/name": "schedlab-sweep" } },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "cell",
                        "image": k.image,
                        "command": ["sim"],
                        "args": ["sweep", "run", file_in_volume, "--index", "$(JOB_COMPLETION_INDEX)", "--quiet"],
                        "resources": {
                            "requests": { "cpu": k.cpu, "memory": k.memory },
                            "limits": { "memory": k.memory }
                        },
                        "volumeMounts": [{ "name": "sweep", "mountPath": k.mount }]
                    }],
                    "volumes": [{ "name": "sweep", "persistentVolumeClaim": { "claimName": k.claim } }]
                }
            }
        }
    })
}
