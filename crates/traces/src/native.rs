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
//! | `tolerations` | `{key, exists, value, effect, toleration_seconds}`; effect `NoSchedule`, `PreferNoSchedule`, `NoExecute` or absent (all); `toleration_seconds` (also `tolerationSeconds`): how long a NoExecute taint is tolerated, absent = for ever | none |
//! | `checkpoint` | the job's own periodic checkpoints, in place of the run's `--checkpoint`: `{"interval": SECONDS or "auto", "cost": SECONDS, "restore": SECONDS}` (`auto`: Young's interval for the run's failure rate; cost and restore default to 0), or `"none"` | the run's |
//! | `domain` | its scheduling domain on a cluster with `[[domain]]` tables (`slurm`, `kubernetes`; docs/hybrid.md) | the first domain |
//! | `restart_policy` | `Never` (the Job controller re-creates a failed pod) or `OnFailure` (the kubelet restarts it in place, on its GPUs, after CrashLoopBackOff) | `Never` |
//! | `labels` | the pod's own labels `{key: value}` | none |
//! | `pod_affinity` | `{selector: [requirements], topology_key, weight, anti}`: weight 0 = required, 1–100 preferred; `anti: true` for anti-affinity; keys `node`, `rack`, `zone`, `switch` or a node label | none |
//! | `spread` | `{max_skew, topology_key, when_unsatisfiable: DoNotSchedule\|ScheduleAnyway, selector, min_domains, node_affinity_policy: Honor\|Ignore, node_taints_policy: Honor\|Ignore}`; `max_skew` ≥ 1, `min_domains` ≥ 1 (default 1, DoNotSchedule only), policies default Honor and Ignore | none |

use crate::error::TraceError;
use serde::ser::Error as _;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use sim_core::constraints::{
    PodAffinityTerm, PodConstraints, Requirement, SelectorTerm, SpreadConstraint, Toleration, WhenUnsatisfiable,
};
use sim_core::job::{Job, JobKind, RestartPolicy, TaskShape, TraceStatus};
use sim_core::time::{parse_secs_micros, secs_string};
use sim_core::{SimDuration, SimTime};
use std::collections::BTreeMap;
use std::io::Write;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line<'a> {
    id: String,
    #[serde(default)]
    domain: Option<String>,
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
    restart_policy: Option<String>,
    #[serde(default)]
    checkpoint: Option<serde_json::Value>,
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
    parse_in_domains(file, text, &[])
}

/// Reads a native workload for a cluster with these scheduling domains: a job's `domain`
/// is the index of its name among them (none: a `domain` field is an error).
pub fn parse_in_domains(file: &str, text: &str, domains: &[String]) -> Result<Vec<Job>, TraceError> {
    let mut jobs = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if !l.is_empty() {
            jobs.push(job(file, i as u64 + 1, l, domains)?);
        }
    }
    Ok(jobs)
}

/// A native workload read a job at a time (a streamed replay's input): the jobs
/// [`parse_in_domains`] gives, in file order.
pub struct NativeReader {
    input: crate::input::TraceInput,
    name: String,
    line: u64,
    buf: Vec<u8>,
    domains: Vec<String>,
}

impl NativeReader {
    /// Reads from an opened input; `name` is the file name used in errors.
    pub fn new(input: crate::input::TraceInput, name: &str, domains: &[String]) -> Self {
        NativeReader { input, name: name.to_string(), line: 0, buf: Vec::with_capacity(512), domains: domains.to_vec() }
    }

    /// Checksum of the raw bytes read so far.
    pub fn checksum(&self) -> String {
        self.input.checksum.hex()
    }

    /// The next job, `Ok(None)` at the end.
    pub fn next_job(&mut self) -> Result<Option<Job>, TraceError> {
        loop {
            if !crate::input::next_line(&mut self.input, &mut self.buf, &self.name, &mut self.line)? {
                return Ok(None);
            }
            let text = std::str::from_utf8(&self.buf)
                .map_err(|_| TraceError::malformed(&self.name, Some(self.line), None, "not UTF-8 text"))?;
            let l = text.trim();
            if !l.is_empty() {
                return job(&self.name, self.line, l, &self.domains).map(Some);
            }
        }
    }
}

/// Line `n` (`l`, not empty) as a job; errors name the line and the field.
fn job(file: &str, n: u64, l: &str, domains: &[String]) -> Result<Job, TraceError> {
    let j: Line<'_> = serde_json::from_str(l)
        .map_err(|e| TraceError::malformed(file, Some(n), None, format!("not a job object: {e}")))?;
    let domain = match &j.domain {
        None => 0,
        Some(d) => match domains.iter().position(|x| x == d) {
            Some(i) => i as u8,
            None if domains.is_empty() => {
                let want = "no domain: the cluster configuration has no [[domain]] tables";
                return Err(TraceError::bad(file, n, "field 'domain'", want, d));
            }
            None => {
                let want = format!("one of the cluster's domains ({})", domains.join(", "));
                return Err(TraceError::bad(file, n, "field 'domain'", want, d));
            }
        },
    };
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
    check(&j, &bad)?;
    let kind = match j.kind.as_deref() {
        None => JobKind::Batch,
        Some(o) => o.parse().map_err(|_| bad("kind", "batch, dl_train, inference or interactive", o.to_string()))?,
    };
    let trace_status = match j.status.as_deref() {
        None | Some("completed") => TraceStatus::Completed,
        Some("failed") => TraceStatus::Failed,
        Some("cancelled") => TraceStatus::Cancelled,
        Some(o) => return Err(bad("status", "completed, failed or cancelled", o.to_string())),
    };
    let restart_policy = match j.restart_policy.as_deref() {
        None | Some("Never") => RestartPolicy::Never,
        Some("OnFailure") => RestartPolicy::OnFailure,
        Some(o) => return Err(bad("restart_policy", "Never or OnFailure", o.to_string())),
    };
    let checkpoint = j.checkpoint.as_ref().map(|c| checkpoint(c, &bad)).transpose()?;
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
    Ok(Job {
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
        domain,
        min_tasks: j.min_tasks,
        observed_start,
        restart_policy,
        checkpoint,
    })
}

/// A line's `checkpoint`: `"none"`, or `{interval, cost, restore}` (seconds; `interval`
/// may be `"auto"`, cost and restore default to 0).
fn checkpoint(
    v: &serde_json::Value,
    bad: &dyn Fn(&str, &str, String) -> TraceError,
) -> Result<sim_core::checkpoint::JobCheckpoint, TraceError> {
    use sim_core::checkpoint::JobCheckpoint;
    let expected = "\"none\" or {\"interval\": seconds or \"auto\", \"cost\": seconds, \"restore\": seconds}";
    if v.as_str() == Some("none") {
        return Ok(JobCheckpoint::Never);
    }
    let o = v.as_object().ok_or_else(|| bad("checkpoint", expected, v.to_string()))?;
    if let Some(k) = o.keys().find(|k| !["interval", "cost", "restore"].contains(&k.as_str())) {
        return Err(bad("checkpoint", expected, format!("key '{k}'")));
    }
    let secs = |key: &str, x: &serde_json::Value| {
        let text = x.to_string();
        parse_secs_micros(&text)
            .map(SimDuration)
            .map_err(|e| bad(&format!("checkpoint.{key}"), &format!("seconds ({e})"), text))
    };
    let interval = match o.get("interval") {
        Some(x) if x.as_str() == Some("auto") => None,
        Some(x) => Some(secs("interval", x)?)
            .filter(|d| d.0 > 0)
            .map(Some)
            .ok_or_else(|| bad("checkpoint.interval", "seconds above 0, or \"auto\"", x.to_string()))?,
        None => return Err(bad("checkpoint.interval", "seconds, or \"auto\"", "nothing".into())),
    };
    let zero = serde_json::Value::from(0);
    let cost = secs("cost", o.get("cost").unwrap_or(&zero))?;
    let restore = secs("restore", o.get("restore").unwrap_or(&zero))?;
    Ok(JobCheckpoint::Every { interval, cost, restore })
}

/// The rules of a line that its types do not hold: GPU shares and utilization at most
/// 1000 ‰, an elastic gang no larger than the job, preferred-term weights 1..=100,
/// inter-pod term weights 0..=100, spreads' `max_skew` and `min_domains` (Kubernetes'
/// API validation).
fn check(j: &Line<'_>, bad: &dyn Fn(&str, &str, String) -> TraceError) -> Result<(), TraceError> {
    if j.gpu_milli > 1000 || (j.gpus > 1 && j.gpu_milli != 0 && j.gpu_milli != 1000) {
        return Err(bad("gpu_milli", "1..=1000, and 1000 for more than one GPU", j.gpu_milli.to_string()));
    }
    if j.gpu_util_permille > 1000 {
        return Err(bad("gpu_util_permille", "0..=1000", j.gpu_util_permille.to_string()));
    }
    if j.min_tasks > j.tasks {
        return Err(bad("min_tasks", &format!("at most tasks ({})", j.tasks), j.min_tasks.to_string()));
    }
    if let Some((w, _)) = j.preferred.iter().find(|(w, _)| !(1..=100).contains(w)) {
        return Err(bad("preferred", "weights 1..=100", w.to_string()));
    }
    if let Some(t) = j.pod_affinity.iter().find(|t| t.weight > 100 || t.topology_key.is_empty()) {
        return Err(bad("pod_affinity", "weights 0..=100 and a topology_key", format!("{t:?}")));
    }
    for s in &j.spread {
        if s.max_skew == 0 || s.topology_key.is_empty() {
            return Err(bad("spread", "max_skew at least 1 and a topology_key", format!("{s:?}")));
        }
        // Kubernetes' validation: minDomains > 0, and only with DoNotSchedule.
        if s.min_domains == 0 || (s.min_domains != 1 && s.when_unsatisfiable != WhenUnsatisfiable::DoNotSchedule) {
            return Err(bad("spread", "min_domains at least 1, and only with DoNotSchedule", format!("{s:?}")));
        }
    }
    Ok(())
}

/// Writes `jobs` in the native format, one line each, fields at their defaults left out.
pub fn write(out: &mut dyn Write, jobs: &[Job]) -> std::io::Result<()> {
    for j in jobs {
        write_job(out, j)?;
    }
    Ok(())
}

/// One job as a native line. The fields are in alphabetical order, nested objects' keys
/// too (see [`sorted`]): the order the writer had when it went through a
/// `serde_json::Map`, kept so that files written before and after compare equal.
#[derive(Serialize)]
struct LineOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint: Option<CheckpointOut>,
    #[serde(skip_serializing_if = "is_one")]
    cores: u32,
    #[serde(skip_serializing_if = "is_default")]
    cpu_milli: u32,
    #[serde(skip_serializing_if = "is_default")]
    gpu_memory_mib: u64,
    #[serde(skip_serializing_if = "is_default")]
    gpu_milli: u32,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    gpu_models: &'a [String],
    #[serde(skip_serializing_if = "is_default")]
    gpu_peak_mib: u64,
    #[serde(skip_serializing_if = "is_default")]
    gpu_util_permille: u16,
    #[serde(skip_serializing_if = "is_default")]
    gpus: u32,
    #[serde(skip_serializing_if = "is_default")]
    group: u32,
    id: &'a str,
    #[serde(skip_serializing_if = "is_default")]
    kind: JobKind,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    labels: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "is_default")]
    memory_mib: u64,
    #[serde(skip_serializing_if = "is_default")]
    min_tasks: u32,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    node_selector: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    observed_start: Option<Secs>,
    #[serde(skip_serializing_if = "is_minus_one")]
    partition: i32,
    #[serde(skip_serializing_if = "<[_]>::is_empty", serialize_with = "sorted")]
    pod_affinity: &'a [PodAffinityTerm],
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "sorted")]
    preferred: Vec<(u32, &'a [Requirement])>,
    #[serde(skip_serializing_if = "is_default")]
    priority: i64,
    #[serde(skip_serializing_if = "is_minus_one")]
    queue: i32,
    /// Left out when it equals the run time (the reader's default).
    #[serde(skip_serializing_if = "Option::is_none")]
    requested: Option<Secs>,
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "sorted")]
    required: Vec<&'a [Requirement]>,
    #[serde(skip_serializing_if = "is_default")]
    restart_policy: RestartPolicy,
    /// Always written: `null` when unknown.
    runtime: Option<Secs>,
    #[serde(skip_serializing_if = "<[_]>::is_empty", serialize_with = "sorted")]
    spread: &'a [SpreadConstraint],
    #[serde(skip_serializing_if = "is_default")]
    status: TraceStatus,
    submit: Secs,
    #[serde(skip_serializing_if = "is_one")]
    tasks: u32,
    #[serde(skip_serializing_if = "<[_]>::is_empty", serialize_with = "sorted")]
    tolerations: &'a [Toleration],
    #[serde(skip_serializing_if = "is_default")]
    user: u32,
}

/// A job's own checkpoints as written: `"none"` or `{cost, interval, restore}`.
#[derive(Serialize)]
#[serde(untagged)]
enum CheckpointOut {
    Never(&'static str),
    Every { cost: Secs, interval: IntervalOut, restore: Secs },
}

/// A checkpoint interval as written: seconds or `"auto"`.
#[derive(Serialize)]
#[serde(untagged)]
enum IntervalOut {
    Auto(&'static str),
    Every(Secs),
}

impl CheckpointOut {
    fn of(c: sim_core::checkpoint::JobCheckpoint) -> Self {
        use sim_core::checkpoint::JobCheckpoint;
        match c {
            JobCheckpoint::Never => CheckpointOut::Never("none"),
            JobCheckpoint::Every { interval, cost, restore } => CheckpointOut::Every {
                cost: Secs(cost.0),
                interval: interval.map_or(IntervalOut::Auto("auto"), |d| IntervalOut::Every(Secs(d.0))),
                restore: Secs(restore.0),
            },
        }
    }
}

/// Microseconds written as their exact decimal seconds (never through an f64, which
/// would lose microseconds past 2^53 µs): a raw JSON number.
struct Secs(u64);

impl Serialize for Secs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw = RawValue::from_string(secs_string(self.0)).map_err(S::Error::custom)?;
        raw.serialize(s)
    }
}

/// Written through a `serde_json::Value`, whose objects keep their keys sorted: the
/// constraint types declare theirs in another order, and files written before had them
/// sorted.
fn sorted<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(v).map_err(S::Error::custom)?.serialize(s)
}

/// At its default (0, `batch`, `completed`): left out, the reader's default.
fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
fn is_one(v: &u32) -> bool {
    *v == 1
}
fn is_minus_one(v: &i32) -> bool {
    *v == -1
}

impl<'a> LineOut<'a> {
    fn of(j: &'a Job) -> Self {
        static NONE: PodConstraints = PodConstraints {
            node_selector: BTreeMap::new(),
            required: Vec::new(),
            preferred: Vec::new(),
            tolerations: Vec::new(),
            labels: BTreeMap::new(),
            pod_affinity: Vec::new(),
            spread: Vec::new(),
        };
        let c = j.constraints.as_deref().unwrap_or(&NONE);
        let t = &j.task;
        LineOut {
            checkpoint: j.checkpoint.map(CheckpointOut::of),
            cores: t.cores,
            cpu_milli: t.cpu_milli,
            gpu_memory_mib: t.gpu_memory_mib,
            gpu_milli: t.gpu_milli,
            gpu_models: &j.gpu_models,
            gpu_peak_mib: t.gpu_peak_mib,
            gpu_util_permille: t.gpu_util_permille,
            gpus: t.gpus,
            group: j.group,
            id: &j.trace_id,
            kind: j.kind,
            labels: &c.labels,
            memory_mib: t.memory_mib,
            min_tasks: j.min_tasks,
            node_selector: &c.node_selector,
            observed_start: j.observed_start.map(|s| Secs(s.0)),
            partition: j.partition,
            pod_affinity: &c.pod_affinity,
            preferred: c.preferred.iter().map(|(w, t)| (*w, &t.requirements[..])).collect(),
            priority: j.priority,
            queue: j.queue,
            required: c.required.iter().map(|t| &t.requirements[..]).collect(),
            requested: j.requested.filter(|_| j.requested != j.runtime).map(|r| Secs(r.0)),
            restart_policy: j.restart_policy,
            runtime: j.runtime.map(|r| Secs(r.0)),
            spread: &c.spread,
            status: j.trace_status,
            submit: Secs(j.submit.0),
            tasks: j.tasks,
            tolerations: &c.tolerations,
            user: j.user,
        }
    }
}

/// Writes one job as a native line (fields at their defaults left out).
pub fn write_job(out: &mut dyn Write, j: &Job) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &LineOut::of(j)).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::constraints::NodeInclusionPolicy::{Honor, Ignore};

    const TEXT: &str = r#"{"id":"train-1","submit":0.5,"runtime":3600,"requested":7200,"tasks":4,"cores":8,"memory_mib":65536,"gpus":8,"gpu_memory_mib":60000,"gpu_peak_mib":70000,"gpu_models":["A100"],"kind":"dl_train","priority":5,"node_selector":{"pool":"train"},"required":[[{"key":"rack","operator":"In","values":["r1","r2"]}]],"preferred":[[20,[{"key":"zone","operator":"Exists"}]]],"tolerations":[{"key":"nvidia.com/gpu","exists":true,"effect":"NoSchedule"}]}
{"id":"infer-1","submit":10,"runtime":60,"gpus":1,"gpu_milli":250,"cpu_milli":500}
"#;

    /// A job's own checkpoints: read, and written back the same.
    #[test]
    fn checkpoints_read_and_write_back() {
        use sim_core::checkpoint::JobCheckpoint;
        let text = "{\"checkpoint\":{\"cost\":60,\"interval\":600.5,\"restore\":120},\"id\":\"a\",\"runtime\":10,\"submit\":0}\n\
                    {\"checkpoint\":{\"cost\":0,\"interval\":\"auto\",\"restore\":0},\"id\":\"b\",\"runtime\":10,\"submit\":0}\n\
                    {\"checkpoint\":\"none\",\"id\":\"c\",\"runtime\":10,\"submit\":0}\n";
        let jobs = parse("w.jsonl", text).unwrap();
        let s = SimDuration::from_secs;
        assert_eq!(
            jobs[0].checkpoint,
            Some(JobCheckpoint::Every { interval: Some(SimDuration(600_500_000)), cost: s(60), restore: s(120) })
        );
        assert_eq!(jobs[1].checkpoint, Some(JobCheckpoint::Every { interval: None, cost: s(0), restore: s(0) }));
        assert_eq!(jobs[2].checkpoint, Some(JobCheckpoint::Never));
        let mut out = Vec::new();
        write(&mut out, &jobs).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), text);
        for bad in
            [r#""always""#, r#"{"interval":0}"#, r#"{"cost":5}"#, r#"{"interval":5,"every":1}"#, r#"{"interval":-1}"#]
        {
            let line = format!("{{\"id\":\"a\",\"submit\":0,\"checkpoint\":{bad}}}");
            let e = parse("w.jsonl", &line).unwrap_err().to_string();
            assert!(e.contains("w.jsonl:1: field 'checkpoint"), "{bad}: {e}");
        }
    }

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

    /// Lines as the writer wrote them before it was a serde derive (every field, nested
    /// keys sorted, exact times, `null` run times): it must write them again byte for
    /// byte, as files written before are diffed against new ones.
    const WRITTEN: &str = r#"{"cores":8,"gpu_memory_mib":60000,"gpu_models":["A100","V100"],"gpu_peak_mib":70000,"gpu_util_permille":730,"gpus":8,"group":4,"id":"train-1","kind":"dl_train","labels":{"a":"2","b":"1"},"memory_mib":65536,"min_tasks":2,"node_selector":{"a":"b","zpool":"train"},"observed_start":12.000001,"partition":0,"pod_affinity":[{"anti":false,"selector":[{"key":"app","operator":"In","values":["x"]}],"topology_key":"rack","weight":30}],"preferred":[[20,[{"key":"zone","operator":"Exists","values":[]}]],[100,[{"key":"z","operator":"NotIn","values":["q"]}]]],"priority":-5,"queue":2,"requested":7200,"required":[[{"key":"rack","operator":"In","values":["r1","r2"]},{"key":"x","operator":"Exists","values":[]}],[{"key":"y","operator":"Gt","values":["3"]}]],"runtime":3600,"spread":[{"max_skew":2,"selector":[{"key":"app","operator":"In","values":["x"]}],"topology_key":"zone","when_unsatisfiable":"ScheduleAnyway"},{"max_skew":1,"selector":[],"topology_key":"node","when_unsatisfiable":"DoNotSchedule"}],"status":"failed","submit":0.5,"tasks":4,"tolerations":[{"effect":"NoSchedule","exists":true,"key":"nvidia.com/gpu","value":""},{"effect":null,"exists":false,"key":"k","value":"v"},{"effect":null,"exists":true,"key":null,"value":""}],"user":3}
{"cpu_milli":500,"gpu_milli":250,"gpus":1,"id":"infer-1","kind":"inference","runtime":60,"status":"cancelled","submit":10}
{"id":"i\"qé\\x","kind":"interactive","runtime":0.000001,"submit":9007199254.740993}
{"id":"nul","requested":50,"runtime":null,"submit":11,"tasks":0}
{"id":"nul2","runtime":null,"submit":12}
{"id":"big","runtime":18446744073709.551615,"submit":18446744073709.551615}
"#;

    #[test]
    fn writes_lines_byte_for_byte_as_before() {
        let jobs = parse("w.jsonl", WRITTEN).unwrap();
        let mut out = Vec::new();
        write(&mut out, &jobs).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), WRITTEN);
    }

    #[test]
    fn spread_fields_default_as_kubernetes_and_round_trip() {
        let line = |spread: &str| format!("{{\"id\":\"a\",\"submit\":0,\"spread\":[{spread}]}}\n");
        let jobs = parse("w.jsonl", &line(r#"{"max_skew":1,"topology_key":"zone","selector":[]}"#)).unwrap();
        let s = &jobs[0].constraints.as_ref().unwrap().spread[0];
        assert_eq!((s.min_domains, s.node_affinity_policy, s.node_taints_policy), (1, Honor, Ignore));
        let all = r#"{"max_skew":2,"min_domains":3,"node_affinity_policy":"Ignore","node_taints_policy":"Honor","selector":[],"topology_key":"zone","when_unsatisfiable":"DoNotSchedule"}"#;
        let jobs = parse("w.jsonl", &line(all)).unwrap();
        let s = &jobs[0].constraints.as_ref().unwrap().spread[0];
        assert_eq!((s.max_skew, s.min_domains, s.node_affinity_policy, s.node_taints_policy), (2, 3, Ignore, Honor));
        let mut out = Vec::new();
        write(&mut out, &jobs).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{{\"id\":\"a\",\"runtime\":null,\"spread\":[{all}],\"submit\":0}}\n")
        );
        for (bad, field) in [
            (r#"{"max_skew":0,"topology_key":"zone","selector":[]}"#, "max_skew at least 1"),
            (r#"{"max_skew":1,"topology_key":"zone","selector":[],"min_domains":0}"#, "min_domains at least 1"),
            (
                r#"{"max_skew":1,"topology_key":"zone","selector":[],"min_domains":2,"when_unsatisfiable":"ScheduleAnyway"}"#,
                "only with DoNotSchedule",
            ),
        ] {
            let e = parse("w.jsonl", &line(bad)).unwrap_err().to_string();
            assert!(e.starts_with("w.jsonl:1: field 'spread': expected") && e.contains(field), "{e}");
        }
        let e = parse("w.jsonl", &line(r#"{"max_skew":1,"topology_key":"zone","selector":[],"minDomains":2}"#))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `minDomains`"), "{e}");
    }

    #[test]
    fn reads_toleration_seconds_and_the_restart_policy() {
        // Kubernetes' spelling `tolerationSeconds` and the native `toleration_seconds` both
        // read; the writer uses the native one (keys sorted) and leaves `Never` out.
        let text = r#"{"id":"a","submit":0,"restart_policy":"OnFailure","tolerations":[{"key":"k","exists":true,"effect":"NoExecute","tolerationSeconds":60}]}
{"id":"b","submit":0,"restart_policy":"Never","tolerations":[{"key":"k","exists":true,"effect":"NoExecute","toleration_seconds":0}]}
"#;
        let jobs = parse("w.jsonl", text).unwrap();
        assert_eq!((jobs[0].restart_policy, jobs[1].restart_policy), (RestartPolicy::OnFailure, RestartPolicy::Never));
        let secs = |j: &Job| j.constraints.as_ref().unwrap().tolerations[0].toleration_seconds;
        assert_eq!((secs(&jobs[0]), secs(&jobs[1])), (Some(60), Some(0)));
        let mut out = Vec::new();
        write(&mut out, &jobs).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"id\":\"a\",\"restart_policy\":\"OnFailure\",\"runtime\":null,\"submit\":0,\"tolerations\":[{\"effect\":\"NoExecute\",\"exists\":true,\"key\":\"k\",\"toleration_seconds\":60,\"value\":\"\"}]}\n\
             {\"id\":\"b\",\"runtime\":null,\"submit\":0,\"tolerations\":[{\"effect\":\"NoExecute\",\"exists\":true,\"key\":\"k\",\"toleration_seconds\":0,\"value\":\"\"}]}\n"
        );
        let e = parse("w.jsonl", "{\"id\":\"a\",\"submit\":0,\"restart_policy\":\"Always\"}\n").unwrap_err();
        assert!(e.to_string().starts_with("w.jsonl:1: field 'restart_policy': expected Never or OnFailure"), "{e}");
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
        let e = parse("w.jsonl", "{\"id\":\"a\",\"submit\":0,\"kind\":\"training\"}\n").unwrap_err().to_string();
        assert!(e.starts_with("w.jsonl:1: field 'kind': expected batch, dl_train"), "{e}");
    }
}
