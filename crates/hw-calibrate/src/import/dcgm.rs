//! dcgm-exporter scrapes: Prometheus text exposition of `DCGM_FI_*` fields.
//!
//! ```text
//! # HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
//! # TYPE DCGM_FI_DEV_FB_USED gauge
//! DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-…",device="nvidia0",modelName="NVIDIA A100-SXM4-80GB",Hostname="node-1"} 1234
//! ```
//!
//! A GPU is its `UUID` label (else `gpu`, else `device`); its model is `modelName`.
//! Series of a MIG instance (a non-empty `GPU_I_ID` label) are skipped. Metrics read:
//! `FB_USED`, `FB_FREE`, `FB_RESERVED`, `FB_TOTAL` (MiB), `GPU_UTIL`, `MEM_COPY_UTIL` (%),
//! `POWER_USAGE`, `POWER_MGMT_LIMIT`, `ENFORCED_POWER_LIMIT` (W), `MAX_SM_CLOCK`,
//! `MAX_MEM_CLOCK` (MHz), all `DCGM_FI_DEV_*`; other samples are ignored.
//!
//! `TOTAL_ENERGY_CONSUMPTION` (mJ) is read too: with timestamps, power per reading is
//! its change over the interval (see [`super::build`]).
//!
//! Several scrapes may follow each other. A GPU's reading ends when one of its metrics
//! comes again for the same pod, or when the sample timestamp (milliseconds, optional)
//! changes. On GPUs shared by time-slicing, dcgm-exporter's Kubernetes mapping repeats
//! every device metric once per pod using the GPU (labels `pod`, `namespace`,
//! `container`): the values are the device's, so the copies of one scrape are merged
//! into one reading of the GPU (the first value kept) and counted in the notes.

use super::Reading;
use super::smi::clip;
use crate::CalibrateError;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Field {
    FbUsed,
    FbFree,
    FbReserved,
    FbTotal,
    Util,
    MemUtil,
    Power,
    PowerLimit,
    EnforcedLimit,
    MaxSm,
    MaxMem,
    Energy,
}

fn field(metric: &str) -> Option<Field> {
    Some(match metric.strip_prefix("DCGM_FI_DEV_")? {
        "FB_USED" => Field::FbUsed,
        "FB_FREE" => Field::FbFree,
        "FB_RESERVED" => Field::FbReserved,
        "FB_TOTAL" => Field::FbTotal,
        "GPU_UTIL" => Field::Util,
        "MEM_COPY_UTIL" => Field::MemUtil,
        "POWER_USAGE" => Field::Power,
        "POWER_MGMT_LIMIT" => Field::PowerLimit,
        "ENFORCED_POWER_LIMIT" => Field::EnforcedLimit,
        "MAX_SM_CLOCK" => Field::MaxSm,
        "MAX_MEM_CLOCK" => Field::MaxMem,
        "TOTAL_ENERGY_CONSUMPTION" => Field::Energy,
        _ => return None,
    })
}

/// One GPU's reading being assembled.
struct Open {
    line: usize,
    model: String,
    uuid: Option<String>,
    index: Option<u32>,
    bus: Option<String>,
    ts_ms: Option<i64>,
    values: BTreeMap<Field, f64>,
    /// The (metric, pod) pairs seen: a pair coming again starts the next reading.
    seen: BTreeSet<(Field, String)>,
}

impl Open {
    fn close(self, gpu: String) -> Reading {
        let v = |f: Field| self.values.get(&f).copied();
        let memory_total_mib = v(Field::FbTotal)
            .or_else(|| Some(v(Field::FbUsed)? + v(Field::FbFree)? + v(Field::FbReserved).unwrap_or(0.0)));
        Reading {
            line: self.line,
            gpu,
            model: self.model,
            uuid: self.uuid,
            index: self.index,
            pci_bus_id: self.bus,
            t_s: self.ts_ms.map(|ms| ms as f64 / 1000.0),
            memory_total_mib: memory_total_mib.map(|m| m.round() as u64),
            memory_used_mib: v(Field::FbUsed).map(|m| m.round() as u64),
            util_pct: v(Field::Util),
            mem_util_pct: v(Field::MemUtil),
            power_w: v(Field::Power),
            energy_mj: v(Field::Energy),
            power_limit_w: v(Field::PowerLimit).or(v(Field::EnforcedLimit)),
            max_sm_clock_mhz: v(Field::MaxSm).map(|m| m.round() as u32),
            max_mem_clock_mhz: v(Field::MaxMem).map(|m| m.round() as u32),
        }
    }
}

/// A parsed sample line.
struct Sample<'a> {
    metric: &'a str,
    labels: Vec<(&'a str, String)>,
    value: f64,
    ts_ms: Option<i64>,
}

const SHAPE: &str = "a Prometheus sample 'METRIC{label=\"value\",…} VALUE [TIMESTAMP_MS]'";

fn sample(l: &str) -> Result<Sample<'_>, String> {
    let end = l.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).unwrap_or(l.len());
    let metric = &l[..end];
    if metric.is_empty() || metric.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!("expected {SHAPE}, found '{}'", clip(l)));
    }
    let mut rest = &l[end..];
    let mut labels = Vec::new();
    if let Some(r) = rest.strip_prefix('{') {
        rest = r;
        loop {
            rest = rest.trim_start_matches([' ', ',']);
            if let Some(r) = rest.strip_prefix('}') {
                rest = r;
                break;
            }
            let eq = rest.find('=').ok_or_else(|| format!("{metric}: expected label=\"value\" in the braces"))?;
            let key = rest[..eq].trim();
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("{metric}: expected a label name before '=', found '{}'", clip(key)));
            }
            rest = rest[eq + 1..].trim_start();
            let Some(r) = rest.strip_prefix('"') else {
                return Err(format!("{metric}: label {key}: expected a quoted value"));
            };
            let mut value = String::new();
            let mut chars = r.char_indices();
            let close = loop {
                match chars.next() {
                    None => return Err(format!("{metric}: label {key}: the quoted value does not end")),
                    Some((i, '"')) => break i,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, 'n')) => value.push('\n'),
                        Some((_, c)) => value.push(c),
                        None => return Err(format!("{metric}: label {key}: the quoted value does not end")),
                    },
                    Some((_, c)) => value.push(c),
                }
            };
            labels.push((key, value));
            rest = &r[close + 1..];
        }
    }
    let mut parts = rest.split_whitespace();
    let value = parts.next().ok_or_else(|| format!("{metric}: expected a value after the labels"))?;
    let value: f64 = match value {
        "+Inf" | "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        v => v.parse().map_err(|_| format!("{metric}: expected a number as the value, found '{}'", clip(v)))?,
    };
    let ts_ms = match parts.next() {
        Some(t) => Some(
            t.parse().map_err(|_| format!("{metric}: expected a timestamp in milliseconds, found '{}'", clip(t)))?,
        ),
        None => None,
    };
    if let Some(extra) = parts.next() {
        return Err(format!("{metric}: expected nothing after the timestamp, found '{}'", clip(extra)));
    }
    Ok(Sample { metric, labels, value, ts_ms })
}

/// Reads the scrape's readings.
pub fn parse(text: &str, name: &str, notes: &mut Vec<String>) -> Result<Vec<Reading>, CalibrateError> {
    let mut open: BTreeMap<String, Open> = BTreeMap::new();
    let mut out = Vec::new();
    let (mut mig, mut dcgm_lines, mut merged) = (0usize, 0usize, 0usize);
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let s = sample(l).map_err(|m| CalibrateError::invalid(name, line, m))?;
        if s.metric.starts_with("DCGM_") {
            dcgm_lines += 1;
        }
        let Some(f) = field(s.metric) else { continue };
        let label = |k: &str| s.labels.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty());
        if label("GPU_I_ID").is_some() {
            mig += 1;
            continue;
        }
        let bad = |m: String| CalibrateError::invalid(name, line, format!("{}: {m}", s.metric));
        let Some(gpu) = label("UUID").or(label("gpu")).or(label("device")) else {
            return Err(bad("expected a UUID, gpu or device label naming the GPU".into()));
        };
        let Some(model) = label("modelName") else {
            return Err(bad("expected a modelName label (dcgm-exporter's GPU model name)".into()));
        };
        if !s.value.is_finite() {
            continue;
        }
        if s.value < 0.0 {
            return Err(bad(format!("expected a value of at least 0, found {}", s.value)));
        }
        if matches!(f, Field::Util | Field::MemUtil) && s.value > 100.0 {
            return Err(bad(format!("expected a percentage 0–100, found {}", s.value)));
        }
        let gpu = gpu.to_string();
        let pod = ["namespace", "pod", "container"].map(|k| label(k).unwrap_or("")).join("/");
        let restart = open
            .get(&gpu)
            .is_some_and(|o| o.seen.contains(&(f, pod.clone())) || o.ts_ms != s.ts_ms || o.model != model);
        if restart && let Some(o) = open.remove(&gpu) {
            out.push(o.close(gpu.clone()));
        }
        let o = open.entry(gpu).or_insert_with(|| Open {
            line,
            model: model.to_string(),
            uuid: label("UUID").map(str::to_string),
            index: label("gpu").and_then(|g| g.parse().ok()),
            bus: label("pci_bus_id").map(str::to_string),
            ts_ms: s.ts_ms,
            values: BTreeMap::new(),
            seen: BTreeSet::new(),
        });
        o.seen.insert((f, pod));
        match o.values.entry(f) {
            std::collections::btree_map::Entry::Occupied(_) => merged += 1,
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(s.value);
            }
        }
    }
    if dcgm_lines == 0 {
        return Err(CalibrateError::invalid(name, 0, "expected dcgm-exporter samples (DCGM_FI_* metrics), found none"));
    }
    for (gpu, o) in open {
        out.push(o.close(gpu));
    }
    out.sort_by_key(|r| r.line);
    if mig > 0 {
        notes.push(format!("skipped {mig} samples of MIG instances (GPU_I_ID label)"));
    }
    if merged > 0 {
        notes.push(format!(
            "merged {merged} samples repeated per pod (a GPU shared by time-slicing: dcgm-exporter gives every pod \
             on it the device's values) into one reading per GPU"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_lines() {
        let s = sample(r#"DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-1",modelName="A \"x\""} 12 1700000000000"#).unwrap();
        assert_eq!((s.metric, s.value, s.ts_ms), ("DCGM_FI_DEV_FB_USED", 12.0, Some(1_700_000_000_000)));
        assert_eq!(s.labels[2], ("modelName", "A \"x\"".to_string()));
        assert_eq!(sample("up 1").unwrap().labels.len(), 0);
        assert!(sample(r#"X{a="b} 1"#).is_err());
        assert!(sample("X{a=b} 1").is_err());
        assert!(sample("X{} one").is_err());
    }
}
