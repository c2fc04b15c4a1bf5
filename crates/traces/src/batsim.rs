//! Batsim JSON workloads (`oar-team/batsim` docs/input-workload.rst).
//!
//! `{"nb_res": N, "jobs": [{"id", "subtime", "walltime", "res", "profile"}],
//! "profiles": {name: {"type": "delay", "delay": seconds}}}`. Each of the `nb_res`
//! machines is one unit. Times are float seconds; they are read from the JSON text and
//! rounded to microseconds exactly (never through `f64`).

use crate::error::TraceError;
use serde::Deserialize;
use serde_json::value::RawValue;
use sim_core::time::parse_secs_micros;
use sim_core::{Job, JobKind, SimDuration, SimTime, TaskShape, TraceStatus};
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Doc<'a> {
    #[serde(borrow)]
    nb_res: Option<&'a RawValue>,
    #[serde(borrow)]
    jobs: Vec<BJob<'a>>,
    #[serde(borrow, default)]
    profiles: BTreeMap<String, BProfile<'a>>,
}

#[derive(Deserialize)]
struct BJob<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    subtime: &'a RawValue,
    #[serde(borrow)]
    walltime: Option<&'a RawValue>,
    #[serde(borrow)]
    res: &'a RawValue,
    profile: String,
}

#[derive(Deserialize)]
struct BProfile<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow)]
    delay: Option<&'a RawValue>,
}

/// A Batsim workload read into jobs.
#[derive(Debug, Clone)]
pub struct BatsimWorkload {
    /// Machines.
    pub nb_res: u64,
    /// Jobs, in file order.
    pub jobs: Vec<Job>,
}

/// Parses a Batsim workload from its text. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<BatsimWorkload, TraceError> {
    let doc: Doc<'_> = serde_json::from_str(text).map_err(|e| {
        TraceError::malformed(file, Some(e.line() as u64), None, format!("not a Batsim JSON workload: {e}"))
    })?;
    let line_of = |raw: &RawValue| -> u64 {
        let off = (raw.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize).min(text.len());
        1 + text.as_bytes()[..off].iter().filter(|&&b| b == b'\n').count() as u64
    };
    let nb_raw = doc.nb_res.ok_or_else(|| TraceError::malformed(file, None, Some("nb_res".into()), "missing"))?;
    let nb_res: u64 = nb_raw
        .get()
        .parse()
        .map_err(|_| TraceError::bad(file, line_of(nb_raw), "nb_res", "a whole number of machines", nb_raw.get()))?;
    let mut delays: BTreeMap<&str, Result<u64, (u64, String)>> = BTreeMap::new();
    for (name, p) in &doc.profiles {
        let d = match (&*p.kind, p.delay) {
            ("delay", Some(raw)) => parse_secs_micros(raw.get()).map_err(|_| (line_of(raw), raw.get().to_string())),
            _ => Err((0, p.kind.clone())),
        };
        delays.insert(name.as_str(), d);
    }
    let mut jobs = Vec::with_capacity(doc.jobs.len());
    for (i, j) in doc.jobs.iter().enumerate() {
        let line = line_of(j.id);
        let fld = |k: &str| format!("jobs[{i}].{k}");
        let id = match serde_json::from_str::<String>(j.id.get()) {
            Ok(s) => s,
            Err(_) => {
                if j.id.get().parse::<i64>().is_err() {
                    return Err(TraceError::bad(file, line, fld("id"), "a string or an integer", j.id.get()));
                }
                j.id.get().to_string()
            }
        };
        let submit = parse_secs_micros(j.subtime.get())
            .map_err(|_| TraceError::bad(file, line_of(j.subtime), fld("subtime"), "seconds >= 0", j.subtime.get()))?;
        let res: i64 = j.res.get().parse().ok().filter(|&r: &i64| r >= 0).ok_or_else(|| {
            TraceError::bad(file, line_of(j.res), fld("res"), "a number of machines >= 0", j.res.get())
        })?;
        let walltime = match j.walltime {
            None => None,
            Some(raw) if raw.get() == "-1" || raw.get() == "-1.0" || raw.get() == "null" => None,
            Some(raw) => Some(parse_secs_micros(raw.get()).map_err(|_| {
                TraceError::bad(file, line_of(raw), fld("walltime"), "seconds >= 0, or -1 for none", raw.get())
            })?),
        };
        let runtime = match delays.get(j.profile.as_str()) {
            None => {
                return Err(TraceError::malformed(
                    file,
                    Some(line),
                    Some(fld("profile")),
                    format!("no profile named '{}'", j.profile),
                ));
            }
            Some(Err((0, kind))) => {
                return Err(TraceError::malformed(
                    file,
                    Some(line),
                    Some(fld("profile")),
                    format!(
                        "profile '{}' has type '{kind}'; only 'delay' profiles with a delay are supported",
                        j.profile
                    ),
                ));
            }
            Some(Err((l, found))) => {
                return Err(TraceError::bad(file, *l, format!("profiles.{}.delay", j.profile), "seconds >= 0", found));
            }
            Some(Ok(d)) => *d,
        };
        let runtime = Some(SimDuration(runtime));
        jobs.push(Job {
            trace_id: id,
            submit: SimTime(submit),
            tasks: res.min(u32::MAX as i64) as u32,
            task: TaskShape { cores: 1, ..TaskShape::default() },
            runtime,
            requested: walltime.filter(|&w| w > 0).map(SimDuration).or(runtime),
            user: 0,
            group: 0,
            queue: -1,
            partition: -1,
            priority: 0,
            kind: JobKind::Batch,
            trace_status: TraceStatus::Completed,
            gpu_models: Vec::new(),
            constraints: None,
            min_tasks: 0,
            observed_start: None,
            restart_policy: Default::default(),
            checkpoint: None,
            domain: 0,
        });
    }
    Ok(BatsimWorkload { nb_res, jobs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exact_times() {
        let w = parse(
            "w.json",
            r#"{"nb_res": 4, "jobs": [
                {"id": 7, "subtime": 4.709164021244639, "walltime": 100, "res": 2, "profile": "p"},
                {"id": "w0!1", "subtime": 0.5, "res": 1, "profile": "p"}],
              "profiles": {"p": {"type": "delay", "delay": 88.51}}}"#,
        )
        .unwrap();
        assert_eq!(w.nb_res, 4);
        assert_eq!(w.jobs[0].submit, SimTime(4_709_164));
        assert_eq!(w.jobs[0].runtime, Some(SimDuration(88_510_000)));
        assert_eq!(w.jobs[0].requested, Some(SimDuration::from_secs(100)));
        assert_eq!(w.jobs[1].trace_id, "w0!1");
        assert_eq!(w.jobs[1].requested, Some(SimDuration(88_510_000)));
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = parse("w.json", "{\"nb_res\": 4,\n\"jobs\": [\n{\"id\": 1, \"subtime\": 0, \"res\": -2, \"profile\": \"p\"}],\n\"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 1}}}")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "w.json:3: jobs[0].res: expected a number of machines >= 0, found '-2'");
        let e = parse("w.json", "{\"nb_res\": 4, \"jobs\": [").unwrap_err().to_string();
        assert!(e.starts_with("w.json:1: not a Batsim JSON workload"), "{e}");
    }
}
