//! schedlab's native workload format: JSON Lines, one job per line, able to say
//! everything the engine models. Times are seconds (integers or decimals, read exactly to
//! the microsecond). Only `id` and `submit` are required; absent fields take the
//! defaults below, and unknown fields are errors.
//!
//! | field | meaning | default |
//! |---|---|---|
//! | `id` | job id (string) | required |
//! | `submit` | submission time, s | required |
//! | `runtime` | how long it really runs, s; `null` = unknown (rejected) | `null` |
//! | `requested` | requested time limit, s | `runtime` |
//! | `tasks` | gang size: identical tasks started together | 1 |
//! | `min_tasks` | elastic gang: it may start with this many tasks placed (Volcano `minAvailable`), running `tasks / started` times as long | `tasks` |
//! | `cores` | cores per task | 1 |
//! | `cpu_milli` | milli-CPU per task (Kubernetes `500m`) | `cores` × 1000 |
//! | `memory_mib` | host memory per task | 0 |
//! | `gpus` | GPUs per task | 0 |
//! | `gpu_milli` | share of each GPU, 1–1000 | 1000 |
//! | `gpu_memory_mib` | declared GPU memory per GPU | 0 |
//! | `gpu_peak_mib` | actual peak GPU memory per GPU | 0 (never runs out) |
//! | `gpu_util_permille` | how busy it keeps its GPUs, 0–1000 ‰ (energy model; e.g. a job profile's mean utilization) | 0 = the run's `--gpu-util` |
//! | `gpu_models` | allowed GPU models | any |
//! | `user`, `group`, `queue`, `partition`, `priority` | accounting and priority | 0, 0, -1, -1, 0 |
//! | `kind` | `batch`, `dl_train`, `inference`, `interactive` | `batch` |
//! | `status` | how it ended in the real system: `completed`, `failed`, `cancelled` | `completed` |
//! | `observed_start` | when it really started in the system the trace came from, s (for observed waits) | unknown |
//! | `node_selector` | `{label: value}` all required | none |
//! | `required` | node affinity terms (ORed), each a list of `{key, operator, values}` (ANDed); operators `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt` | none |
//! | `preferred` | `[[weight, term], ...]`, weight 1–100 | none |
//! | `tolerations` | `{key, exists, value, effect}`; effect `NoSchedule`, `PreferNoSchedule`, `NoExecute` or absent (all) | none |
//! | `labels` | the pod's own labels `{key: value}` | none |
//! | `pod_affinity` | `{selector: [requirements], topology_key, weight, anti}`: weight 0 = required, 1–100 preferred; `anti: true` for anti-affinity; keys `node`, `rack`, `zone`, `switch` or a node label | none |
//! | `spread` | `{max_skew, topology_key, when_unsatisfiable: DoNotSchedule\|ScheduleAnyway, selector}` | none |

use crate::error::TraceError;
use serde::Deserialize;
use serde_json::value::RawValue;
use sim_core::constraints::{PodConstraints, SelectorTerm, Toleration};
use sim_core::job::{Job, JobKind, TaskShape, TraceStatus};
use sim_core::time::{parse_secs_micros, secs_string};
use sim_core::{SimDuration, SimTime};
use std::collections::BTreeMap;
use std::io::Write;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    id: String,
    #[serde(borrow)]
    submit: &'a RawValue,
    #[serde(borrow, default)]
    runtime: Option<&'a RawValue>,
    #[serde(borrow, default)]
    requested: Option<&'a RawValue>,
    #[serde(default = "one")]
    tasks: u32,
    #[serde(default = "one")]
    cores: u32,
    #[serde(default)]
    cpu_milli: u32,
    #[serde(default)]
    memory_mib: u64,
    #[serde(default)]
    min_tasks: u32,
    #[serde(borrow, default)]
    observed_start: Option<&'a RawValue>,
    #[serde(default)]
    gpus: u32,
    #[serde(default)]
    gpu_milli: u32,
    #[serde(default)]
    gpu_memory_mib: u64,
    #[serde(default)]
    gpu_peak_mib: u64,
    #[serde(default)]
    gpu_util_permille: u16,
    #[serde(default)]
    gpu_models: Vec<String>,
    #[serde(default)]
    user: u32,
    #[serde(default)]
    group: u32,
    #[serde(default = "minus_one")]
    queue: i32,
    #[serde(default = "minus_one")]
    partition: i32,
    #[serde(default)]
    priority: i64,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    node_selector: BTreeMap<String, String>,
    #[serde(default)]
    required: Vec<Vec<sim_core::constraints::Requirement>>,
    #[serde(default)]
    preferred: Vec<(u32, Vec<sim_core::constraints::Requirement>)>,
    #[serde(default)]
    tolerations: Vec<Toleration>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    pod_affinity: Vec<sim_core::constraints::PodAffinityTerm>,
    #[serde(default)]
    spread: Vec<sim_core::constraints::SpreadConstraint>,
}

fn one() -> u32 {
    1
}
fn minus_one() -> i32 {
    -1
}

fn secs(file: &str, line: u64, field: &str, raw: &RawValue) -> Result<u64, TraceError> {
    let t = raw.get().trim();
    parse_secs_micros(t)
        .map_err(|e| TraceError::bad(file, line, format!("field '{field}'"), format!("seconds ({e})"), t))
}

/// Reads a native workload (`file` names it in errors).
pub fn parse(file: &str, text: &str) -> Result<Vec<Job>, TraceError> {
    let mut jobs = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i as u64 + 1;
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        let j: Line<'_> = serde_json::from_str(l)
            .map_err(|e| TraceError::malformed(file, Some(n), None, format!("not a job object: {e}")))?;
        let submit = secs(file, n, "submit", j.submit)?;
        // serde reads `null` as `None`.
        let runtime = j.runtime.map(|r| secs(file, n, "runtime", r)).transpose()?.map(SimDuration);
        let requested = j.requested.map(|r| secs(file, n, "requested", r)).transpose()?.map(SimDuration).or(runtime);
        let observed_start = j.observed_start.map(|r| secs(file, n, "observed_start", r)).transpose()?.map(SimTime);
        if observed_start.is_some_and(|s| s.0 < submit) {
            return Err(TraceError::bad(
                file,
                n,
                "field 'observed_start'",
                "a time at or after 'submit'",
                j.observed_start.map_or("", |r| r.get()),
            ));
        }
        let bad = |field: &str, expected: &str, found: String| {
            TraceError::bad(file, n, format!("field '{field}'"), expected, &found)
        };
        if j.gpu_milli > 1000 || (j.gpus > 1 && j.gpu_milli != 0 && j.gpu_milli != 1000) {
            return Err(bad("gpu_milli", "1..=1000, and 1000 for more than one GPU", j.gpu_milli.to_string()));
        }
        if j.gpu_util_permille > 1000 {
            return Err(bad("gpu_util_permille", "0..=1000", j.gpu_util_permille.to_string()));
        }
        let kind = match j.kind.as_deref() {
            None | Some("batch") => JobKind::Batch,
            Some("dl_train") => JobKind::DlTrain,
            Some("inference") => JobKind::Inference,
            Some("interactive") => JobKind::Interactive,
            Some(o) => return Err(bad("kind", "batch, dl_train, inference or interactive", o.to_string())),
        };
        let trace_status = match j.status.as_deref() {
            None | Some("completed") => TraceStatus::Completed,
            Some("failed") => TraceStatus::Failed,
            Some("cancelled") => TraceStatus::Cancelled,
            Some(o) => return Err(bad("status", "completed, failed or cancelled", o.to_string())),
        };
        if j.min_tasks > j.tasks {
            return Err(bad("min_tasks", &format!("at most tasks ({})", j.tasks), j.min_tasks.to_string()));
        }
        if let Some((w, _)) = j.preferred.iter().find(|(w, _)| !(1..=100).contains(w)) {
            return Err(bad("preferred", "weights 1..=100", w.to_string()));
        }
        let constraints = PodConstraints {
            node_selector: j.node_selector,
            required: j.required.into_iter().map(|requirements| SelectorTerm { requirements }).collect(),
            preferred: j.preferred.into_iter().map(|(w, requirements)| (w, SelectorTerm { requirements })).collect(),
            tolerations: j.tolerations,
            labels: j.labels,
            pod_affinity: j.pod_affinity,
            spread: j.spread,
        };
        let constraints = (constraints != PodConstraints::default()).then(|| Box::new(constraints));
        jobs.push(Job {
            trace_id: j.id,
            submit: SimTime(submit),
            tasks: j.tasks,
            task: TaskShape {
                cores: j.cores,
                memory_mib: j.memory_mib,
                gpus: j.gpus,
                gpu_memory_mib: j.gpu_memory_mib,
                cpu_milli: j.cpu_milli,
                gpu_milli: j.gpu_milli,
                gpu_peak_mib: j.gpu_peak_mib,
                gpu_util_permille: j.gpu_util_permille,
            },
            runtime,
            requested,
            user: j.user,
            group: j.group,
            queue: j.queue,
            partition: j.partition,
            priority: j.priority,
            kind,
            trace_status,
            gpu_models: j.gpu_models,
            constraints,
            min_tasks: j.min_tasks,
            observed_start,
        });
    }
    Ok(jobs)
}

/// Writes `jobs` in the native format, one line each, fields at their defaults left out.
pub fn write(out: &mut dyn Write, jobs: &[Job]) -> std::io::Result<()> {
    for j in jobs {
        write_job(out, j)?;
    }
    Ok(())
}

/// Writes one job as a native line (fields at their defaults left out).
pub fn write_job(out: &mut dyn Write, j: &Job) -> std::io::Result<()> {
    {
        // Times are written as their exact decimal text (never through an f64, which
        // would lose microseconds past 2^53 µs): raw JSON numbers beside the other fields.
        let mut times: BTreeMap<&str, Box<RawValue>> = BTreeMap::new();
        let num = |us: u64| RawValue::from_string(secs_string(us)).expect("a decimal number is JSON");
        let mut m = serde_json::Map::new();
        m.insert("id".into(), j.trace_id.clone().into());
        times.insert("submit", num(j.submit.0));
        times.insert(
            "runtime",
            j.runtime.map_or_else(|| RawValue::from_string("null".into()).expect("JSON null"), |r| num(r.0)),
        );
        if j.requested != j.runtime
            && let Some(r) = j.requested
        {
            times.insert("requested", num(r.0));
        }
        if let Some(s) = j.observed_start {
            times.insert("observed_start", num(s.0));
        }
        let t = &j.task;
        let mut put = |k: &str, v: u64, default: u64| {
            if v != default {
                m.insert(k.into(), v.into());
            }
        };
        put("tasks", j.tasks as u64, 1);
        put("min_tasks", j.min_tasks as u64, 0);
        put("cores", t.cores as u64, 1);
        put("cpu_milli", t.cpu_milli as u64, 0);
        put("memory_mib", t.memory_mib, 0);
        put("gpus", t.gpus as u64, 0);
        put("gpu_milli", t.gpu_milli as u64, 0);
        put("gpu_memory_mib", t.gpu_memory_mib, 0);
        put("gpu_peak_mib", t.gpu_peak_mib, 0);
        put("gpu_util_permille", t.gpu_util_permille as u64, 0);
        put("user", j.user as u64, 0);
        put("group", j.group as u64, 0);
        if !j.gpu_models.is_empty() {
            m.insert("gpu_models".into(), j.gpu_models.clone().into());
        }
        for (k, v) in [("queue", j.queue as i64), ("partition", j.partition as i64)] {
            if v != -1 {
                m.insert(k.into(), v.into());
            }
        }
        if j.priority != 0 {
            m.insert("priority".into(), j.priority.into());
        }
        let kind = match j.kind {
            JobKind::Batch => None,
            JobKind::DlTrain => Some("dl_train"),
            JobKind::Inference => Some("inference"),
            JobKind::Interactive => Some("interactive"),
        };
        if let Some(k) = kind {
            m.insert("kind".into(), k.into());
        }
        let status = match j.trace_status {
            TraceStatus::Completed => None,
            TraceStatus::Failed => Some("failed"),
            TraceStatus::Cancelled => Some("cancelled"),
        };
        if let Some(s) = status {
            m.insert("status".into(), s.into());
        }
        if let Some(c) = &j.constraints {
            let v = serde_json::to_value(c).map_err(std::io::Error::other)?;
            if !c.node_selector.is_empty() {
                m.insert("node_selector".into(), v["node_selector"].clone());
            }
            if !c.required.is_empty() {
                let terms: Vec<_> = c.required.iter().map(|t| t.requirements.clone()).collect();
                m.insert("required".into(), serde_json::to_value(terms).map_err(std::io::Error::other)?);
            }
            if !c.preferred.is_empty() {
                let terms: Vec<_> = c.preferred.iter().map(|(w, t)| (*w, t.requirements.clone())).collect();
                m.insert("preferred".into(), serde_json::to_value(terms).map_err(std::io::Error::other)?);
            }
            for k in ["tolerations", "labels", "pod_affinity", "spread"] {
                let empty =
                    v[k].as_array().is_some_and(|a| a.is_empty()) || v[k].as_object().is_some_and(|o| o.is_empty());
                if !empty {
                    m.insert(k.into(), v[k].clone());
                }
            }
        }
        // One object with every key in order, as serde_json's map would write it.
        let mut all: BTreeMap<&str, Box<RawValue>> = times;
        for (k, v) in &m {
            all.insert(k.as_str(), serde_json::value::to_raw_value(v).map_err(std::io::Error::other)?);
        }
        serde_json::to_writer(&mut *out, &all).map_err(std::io::Error::other)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"{"id":"train-1","submit":0.5,"runtime":3600,"requested":7200,"tasks":4,"cores":8,"memory_mib":65536,"gpus":8,"gpu_memory_mib":60000,"gpu_peak_mib":70000,"gpu_models":["A100"],"kind":"dl_train","priority":5,"node_selector":{"pool":"train"},"required":[[{"key":"rack","operator":"In","values":["r1","r2"]}]],"preferred":[[20,[{"key":"zone","operator":"Exists"}]]],"tolerations":[{"key":"nvidia.com/gpu","exists":true,"effect":"NoSchedule"}]}
{"id":"infer-1","submit":10,"runtime":60,"gpus":1,"gpu_milli":250,"cpu_milli":500}
"#;

    #[test]
    fn reads_every_field_and_writes_it_back() {
        let jobs = parse("w.jsonl", TEXT).unwrap();
        assert_eq!(jobs.len(), 2);
        let j = &jobs[0];
        assert_eq!((j.submit, j.requested), (SimTime(500_000), Some(SimDuration::from_secs(7200))));
        assert_eq!((j.tasks, j.task.gpus, j.task.gpu_peak_mib, j.kind), (4, 8, 70_000, JobKind::DlTrain));
        let c = j.constraints.as_ref().unwrap();
        assert_eq!((c.required.len(), c.preferred[0].0, c.tolerations.len()), (1, 20, 1));
        assert_eq!(jobs[1].task.gpu_milli(), 250);
        let mut out = Vec::new();
        write(&mut out, &jobs).unwrap();
        let again = parse("again", std::str::from_utf8(&out).unwrap()).unwrap();
        assert_eq!(again, jobs, "{}", String::from_utf8_lossy(&out));
    }

    #[test]
    fn errors_name_line_and_field() {
        let e =
            parse("w.jsonl", "{\"id\":\"a\",\"submit\":0}\n{\"id\":\"b\",\"submit\":-3}\n").unwrap_err().to_string();
        assert!(e.starts_with("w.jsonl:2: field 'submit': expected seconds"), "{e}");
        let e = parse("w.jsonl", "{\"id\":\"a\",\"submit\":0,\"gpus\":2,\"gpu_milli\":500}\n").unwrap_err().to_string();
        assert!(e.starts_with("w.jsonl:1: field 'gpu_milli'"), "{e}");
        let e = parse("w.jsonl", "{\"id\":\"a\",\"submit\":0,\"gang\":2}\n").unwrap_err().to_string();
        assert!(e.starts_with("w.jsonl:1: not a job object: unknown field `gang`"), "{e}");
    }
}
