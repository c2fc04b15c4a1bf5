//! # hw-calibrate: hardware and job profiles for schedlab
//!
//! Calibrates the cluster model from live NVML measurements of real GPUs and from the
//! logs operators already keep, and writes the profiles that cluster configurations and
//! job classes reference (types in [`sim_core::hardware`]):
//!
//! * [`probe`] — `sim calibrate probe`: every GPU's model, UUID, memory, compute
//!   capability, maximum clocks, power limit, NVLink peers, MIG mode and PCIe link, as a
//!   [`HardwareProfile`] with one [`GpuProfile`] per model.
//! * [`sample`] — `sim calibrate sample`: runs a workload and samples its GPU memory,
//!   utilization and power into a [`job::MeasuredJob`], written as a [`JobProfile`].
//! * [`import`] — `sim calibrate import`: the same profiles from `nvidia-smi
//!   --query-gpu` CSV logs and dcgm-exporter scrapes, with a power curve fitted by
//!   [`fit`].
//! * [`shipped`] — profiles of common data-centre GPUs from public specifications.
//! * [`models`] — matching a trace's GPU model names to a cluster's (any case, families
//!   such as `a100`, the shipped profiles' aliases).
//!
//! NVML sits behind two small traits, [`probe::GpuProbe`] and [`sample::GpuSampler`]:
//! [`nvml`] implements them on the NVML queries of [`nvml::backend::NvmlBackend`], which
//! the driver answers ([`nvml::live`]) or a file of recorded answers does
//! ([`nvml::recorded`]: a MIG GPU, a board without a power sensor, a GPU that answers
//! `NoPermission`, a container that cannot see its processes); recorded readings
//! ([`probe::RecordedProbe`], [`sample::RecordedSamples`]) implement the traits directly.
//! Without an NVIDIA driver (NVML is loaded at run time), the NVML side fails with
//! [`CalibrateError::NoDriver`]; everything else works.
//!
//! A value NVML cannot give is missing, never 0: hardware profiles leave it out and say
//! why in `sources`, and [`resolve_gpu`] fills it from the shipped profile of the model
//! where there is one; job profiles keep it unknown ([`job`]).

pub mod error;
pub mod fit;
pub mod import;
pub mod job;
pub mod models;
pub mod nvml;
pub mod probe;
pub mod sample;

pub use error::CalibrateError;
pub use sim_core::hardware::{DeviceRecord, GpuProfile, HardwareProfile, JobProfile};

use serde::de::DeserializeOwned;
use std::path::Path;
use std::sync::OnceLock;

/// The shipped profiles, as TOML.
pub const SHIPPED_TOML: &str = include_str!("../profiles/public-specs.toml");

/// Profiles of common data-centre GPUs from public specifications (T4, P100, V100 16 and
/// 32 GB, A10, A100 40 and 80 GB, H100, H200), with the source of every value in
/// `sources`. Parsed once.
pub fn shipped() -> &'static HardwareProfile {
    static SHIPPED: OnceLock<HardwareProfile> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        parse_toml(SHIPPED_TOML, "profiles/public-specs.toml").expect("the shipped profiles parse (tested)")
    })
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

fn parse_toml<T: DeserializeOwned>(text: &str, name: &str) -> Result<T, CalibrateError> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(0, |s| line_of(text, s.start));
        CalibrateError::invalid(name, line, e.message().trim().replace('\n', " "))
    })
}

fn read_text(path: &Path) -> Result<String, CalibrateError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CalibrateError::Read { path: path.display().to_string(), message: e.to_string() })?;
    String::from_utf8(bytes).map_err(|e| {
        let line = e.as_bytes()[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        CalibrateError::invalid(&path.display().to_string(), line, "expected UTF-8 text")
    })
}

/// Reads TOML, or JSON when the name ends in `.json`.
pub(crate) fn read_structured<T: DeserializeOwned>(path: &Path) -> Result<T, CalibrateError> {
    let text = read_text(path)?;
    let name = path.display().to_string();
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        serde_json::from_str(&text).map_err(|e| CalibrateError::invalid(&name, e.line(), e.to_string()))
    } else {
        parse_toml(&text, &name)
    }
}

/// Reads a hardware profile (TOML). Errors name the file and line.
pub fn load_profile(path: &Path) -> Result<HardwareProfile, CalibrateError> {
    let p: HardwareProfile = parse_toml(&read_text(path)?, &path.display().to_string())?;
    check_profile(&p, &path.display().to_string())?;
    Ok(p)
}

/// Reads a job profile (TOML). Errors name the file and line.
pub fn load_job_profile(path: &Path) -> Result<JobProfile, CalibrateError> {
    parse_toml(&read_text(path)?, &path.display().to_string())
}

/// Every entry has a model and memory, and a power curve that can be built.
fn check_profile(p: &HardwareProfile, name: &str) -> Result<(), CalibrateError> {
    for g in &p.gpu {
        if g.model.trim().is_empty() {
            return Err(CalibrateError::invalid(name, 0, "a [[gpu]] entry has an empty model: expected a model name"));
        }
        if g.memory_mib == 0 {
            return Err(CalibrateError::invalid(
                name,
                0,
                format!("gpu '{}': memory_mib: expected MiB > 0, found 0", g.model),
            ));
        }
        g.power().map_err(|e| CalibrateError::invalid(name, 0, format!("gpu '{}': power_curve: {e}", g.model)))?;
    }
    Ok(())
}

/// The names of a profile's entries, for messages.
fn models(p: &HardwareProfile) -> String {
    p.gpu.iter().map(|g| format!("'{}'", g.model)).collect::<Vec<_>>().join(", ")
}

/// The GPU profile a cluster configuration references.
///
/// `reference` is either a profile file, relative to `base_dir` (`mine.toml`, or
/// `mine.toml#MODEL` to pick an entry by model or alias; without `#MODEL` the file must
/// hold exactly one entry), or the model name or an alias of a shipped profile (any
/// case). A reference that names an existing file is read as a file; one ending in
/// `.toml` or holding `#` must be one. The error lists what was tried.
pub fn resolve_gpu(reference: &str, base_dir: &Path) -> Result<GpuProfile, CalibrateError> {
    let reference_t = reference.trim();
    let (file_part, pick) = match reference_t.split_once('#') {
        Some((f, m)) => (f.trim(), Some(m.trim())),
        None => (reference_t, None),
    };
    let path = base_dir.join(file_part);
    let mut tried = Vec::new();
    if !file_part.is_empty() && path.is_file() {
        let p = load_profile(&path)?;
        let shown = path.display().to_string();
        return match pick {
            Some(m) => p.find(m).cloned().map(with_shipped_power).ok_or_else(|| CalibrateError::NotFound {
                reference: reference.to_string(),
                tried: vec![format!("{shown} holds no model or alias '{m}' (models: {})", models(&p))],
            }),
            None if p.gpu.len() == 1 => Ok(with_shipped_power(p.gpu[0].clone())),
            None => Err(CalibrateError::NotFound {
                reference: reference.to_string(),
                tried: vec![format!(
                    "{shown} holds {} entries, expected one: pick one with '{file_part}#MODEL' (models: {})",
                    p.gpu.len(),
                    models(&p)
                )],
            }),
        };
    }
    tried.push(format!("no file {}", path.display()));
    let looks_like_file = pick.is_some() || file_part.to_ascii_lowercase().ends_with(".toml");
    if !looks_like_file {
        if let Some(g) = shipped().find(reference_t) {
            return Ok(g.clone());
        }
        tried.push(format!("no shipped model or alias (shipped models, any case: {})", models(shipped())));
    }
    Err(CalibrateError::NotFound { reference: reference.to_string(), tried })
}

/// `g` with the power figures it lacks (idle, maximum, limit) taken from the shipped
/// profile whose model or alias matches its model, each such value's `sources` entry
/// saying so; unchanged when it lacks none or no shipped profile matches. A measured
/// profile leaves out what NVML could not measure (a board without a power sensor has no
/// idle power), and the energy model then uses the shipped figure instead of none.
pub fn with_shipped_power(mut g: GpuProfile) -> GpuProfile {
    let Some(s) = shipped().find(&g.model).or_else(|| g.aliases.iter().find_map(|a| shipped().find(a))) else {
        return g;
    };
    let fields: [(&str, &mut Option<f64>, Option<f64>); 3] = [
        ("idle_power_w", &mut g.idle_power_w, s.idle_power_w),
        ("max_power_w", &mut g.max_power_w, s.max_power_w),
        ("power_limit_w", &mut g.power_limit_w, s.power_limit_w),
    ];
    let mut filled = Vec::new();
    for (name, mine, theirs) in fields {
        if mine.is_none() && theirs.is_some() {
            *mine = theirs;
            filled.push(name);
        }
    }
    for name in filled {
        let why = g.sources.get(name).map(|w| format!(" (this profile: {w})")).unwrap_or_default();
        g.sources.insert(name.to_string(), format!("shipped profile '{}', not in this profile{why}", s.model));
    }
    g
}

/// Gives every GPU of `cluster` without a power curve the curve of the shipped profile
/// whose model or alias matches the GPU's model (any case), if there is one. Memory is
/// left as the cluster says.
pub fn attach_power(cluster: &mut sim_core::Cluster) {
    for pool in &mut cluster.pools {
        for g in &mut pool.spec.gpus {
            if g.power.is_none()
                && let Some(p) = shipped().find(&g.model)
                && let Ok(Some(curve)) = p.power()
            {
                g.power = Some(curve);
            }
        }
    }
}

/// A profile as TOML, with a comment line on top.
pub fn to_toml<T: serde::Serialize>(value: &T, comment: &str) -> String {
    let body = toml::to_string(value).expect("profiles serialize to TOML");
    let mut out = String::new();
    for l in comment.lines() {
        out.push_str("# ");
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(&body);
    out
}
