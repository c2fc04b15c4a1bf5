//! `nvidia-smi --query-gpu=… --format=csv[,nounits]` logs.
//!
//! The header names the columns (`memory.total [MiB]`, `power.draw [W]`, or without the
//! unit); a value is a number, followed by its unit unless `nounits` was given
//! (`81559 MiB`, `69.47 W`, `35 %`). Values in brackets (`[N/A]`, `[Not Supported]`,
//! `[Unknown Error]`) and `N/A` are missing. A repeated header line (several logs
//! concatenated) is skipped.
//!
//! nvidia-smi writes its messages into the same stream (`Unable to determine the device
//! handle for GPU0000:3B:00.0: Unknown Error` when a GPU fails mid-log), and a log
//! copied while nvidia-smi was still writing ends in a line cut short: lines without a
//! comma and an unterminated last line are skipped and counted in the import's notes,
//! instead of refusing the file.

use super::Reading;
use crate::CalibrateError;

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Col {
    Timestamp,
    Name,
    Index,
    Uuid,
    BusId,
    MemTotal,
    MemUsed,
    Util,
    MemUtil,
    Power,
    PowerLimit,
    EnforcedLimit,
    DefaultLimit,
    MaxSm,
    MaxMem,
    Other,
}

fn column(key: &str) -> Col {
    match key {
        "timestamp" => Col::Timestamp,
        "name" | "gpu_name" => Col::Name,
        "index" => Col::Index,
        "uuid" | "gpu_uuid" => Col::Uuid,
        "pci.bus_id" | "gpu_bus_id" => Col::BusId,
        "memory.total" => Col::MemTotal,
        "memory.used" => Col::MemUsed,
        "utilization.gpu" => Col::Util,
        "utilization.memory" => Col::MemUtil,
        "power.draw" | "power.draw.average" | "power.draw.instant" => Col::Power,
        "power.limit" => Col::PowerLimit,
        "enforced.power.limit" => Col::EnforcedLimit,
        "power.default_limit" => Col::DefaultLimit,
        "clocks.max.sm" | "clocks.max.sm_clock" => Col::MaxSm,
        "clocks.max.memory" | "clocks.max.mem" | "clocks.max.memory_clock" => Col::MaxMem,
        _ => Col::Other,
    }
}

/// The header's name of a column without its unit, lower case: `memory.total [MiB]` →
/// `memory.total`.
fn key_of(header: &str) -> String {
    header.split('[').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// Whether a line is one of nvidia-smi's messages rather than CSV: it has no comma.
fn is_message(l: &str) -> bool {
    !l.trim().is_empty() && !l.contains(',')
}

/// Reads the log's readings; lines skipped are counted in `notes`.
pub fn parse(text: &str, name: &str, notes: &mut Vec<String>) -> Result<Vec<Reading>, CalibrateError> {
    let mut all: Vec<(usize, &str)> =
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end_matches('\r'))).collect();
    if !text.ends_with('\n')
        && let Some(&(line, last)) = all.last()
        && !last.trim().is_empty()
        && all.len() > 1
    {
        notes.push(format!(
            "skipped the unterminated last line {line} (the log was cut while nvidia-smi wrote it): '{}'",
            clip(last.trim())
        ));
        all.pop();
    }
    let mut messages: Vec<(usize, &str)> = Vec::new();
    let mut lines = all.into_iter().filter(|(line, l)| {
        if is_message(l) {
            messages.push((*line, l));
            false
        } else {
            true
        }
    });
    let Some((hline, header)) = lines.by_ref().find(|(_, l)| !l.trim().is_empty()) else {
        return Ok(Vec::new());
    };
    let headers: Vec<&str> = header.split(',').map(str::trim).collect();
    let cols: Vec<Col> = headers.iter().map(|h| column(&key_of(h))).collect();
    for (need, what) in [(Col::Name, "name"), (Col::MemTotal, "memory.total")] {
        if !cols.contains(&need) {
            return Err(CalibrateError::invalid(
                name,
                hline,
                format!(
                    "expected an nvidia-smi --query-gpu CSV header (--format=csv, without noheader) naming at least \
                     the columns 'name' and 'memory.total'; there is no '{what}' column in '{}'",
                    clip(header)
                ),
            ));
        }
    }
    let mut out = Vec::new();
    for (line, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = l.split(',').map(str::trim).collect();
        if fields == headers {
            continue;
        }
        if fields.len() != headers.len() {
            return Err(CalibrateError::invalid(
                name,
                line,
                format!("expected {} comma-separated fields as the header has, found {}", headers.len(), fields.len()),
            ));
        }
        let mut r = Reading { line, ..Default::default() };
        let (mut limit, mut enforced, mut default) = (None, None, None);
        for ((&col, &h), &v) in cols.iter().zip(&headers).zip(&fields) {
            let bad = |expected: &str| {
                CalibrateError::invalid(name, line, format!("column '{h}': expected {expected}, found '{}'", clip(v)))
            };
            if col == Col::Other || missing(v) {
                continue;
            }
            match col {
                Col::Timestamp => {
                    r.t_s = Some(
                        timestamp(v).ok_or_else(|| bad("a time as nvidia-smi writes it, 'YYYY/MM/DD HH:MM:SS.mmm'"))?,
                    )
                }
                Col::Name => r.model = v.to_string(),
                Col::Index => r.index = Some(v.parse().map_err(|_| bad("a GPU index (0, 1, …)"))?),
                Col::Uuid => r.uuid = Some(v.to_string()),
                Col::BusId => r.pci_bus_id = Some(v.to_string()),
                Col::MemTotal => {
                    r.memory_total_mib = Some(mib(v).ok_or_else(|| bad("MiB, e.g. '81559 MiB' or '81559'"))?)
                }
                Col::MemUsed => r.memory_used_mib = Some(mib(v).ok_or_else(|| bad("MiB, e.g. '1024 MiB' or '1024'"))?),
                Col::Util => r.util_pct = Some(percent(v).ok_or_else(|| bad("a percentage 0–100, e.g. '35 %'"))?),
                Col::MemUtil => {
                    r.mem_util_pct = Some(percent(v).ok_or_else(|| bad("a percentage 0–100, e.g. '12 %'"))?)
                }
                Col::Power => r.power_w = Some(unit_value(v, &["W"]).ok_or_else(|| bad("watts, e.g. '69.47 W'"))?),
                Col::PowerLimit => limit = Some(unit_value(v, &["W"]).ok_or_else(|| bad("watts, e.g. '400.00 W'"))?),
                Col::EnforcedLimit => {
                    enforced = Some(unit_value(v, &["W"]).ok_or_else(|| bad("watts, e.g. '400.00 W'"))?)
                }
                Col::DefaultLimit => {
                    default = Some(unit_value(v, &["W"]).ok_or_else(|| bad("watts, e.g. '400.00 W'"))?)
                }
                Col::MaxSm => r.max_sm_clock_mhz = Some(mhz(v).ok_or_else(|| bad("MHz, e.g. '1410 MHz'"))?),
                Col::MaxMem => r.max_mem_clock_mhz = Some(mhz(v).ok_or_else(|| bad("MHz, e.g. '1593 MHz'"))?),
                Col::Other => {}
            }
        }
        if r.model.is_empty() {
            return Err(CalibrateError::invalid(
                name,
                line,
                "column 'name': expected the GPU's model name, found none",
            ));
        }
        r.power_limit_w = limit.or(enforced).or(default);
        r.gpu = match (&r.uuid, r.index, &r.pci_bus_id) {
            (Some(u), _, _) => u.clone(),
            (None, Some(i), _) => format!("index {i}"),
            (None, None, Some(b)) => b.clone(),
            _ => r.model.clone(),
        };
        out.push(r);
    }
    if let Some(&(first, l)) = messages.first() {
        notes.push(format!(
            "skipped {} lines that are not CSV (nvidia-smi's messages), the first at line {first}: '{}'",
            messages.len(),
            clip(l.trim())
        ));
    }
    Ok(out)
}

/// At most 60 characters of a field, for messages.
pub(crate) fn clip(s: &str) -> String {
    let mut c: String = s.chars().take(60).collect();
    if c.len() < s.len() {
        c.push('…');
    }
    c
}

fn missing(v: &str) -> bool {
    v.is_empty() || (v.starts_with('[') && v.ends_with(']')) || v.eq_ignore_ascii_case("N/A")
}

/// A finite, non-negative number, with one of `units` after it or none.
fn unit_value(v: &str, units: &[&str]) -> Option<f64> {
    let mut parts = v.split_whitespace();
    let num = parts.next()?;
    let (num, glued) = match num.find(|c: char| c.is_ascii_alphabetic() || c == '%') {
        Some(i) => (&num[..i], Some(&num[i..])),
        None => (num, None),
    };
    let unit = glued.or_else(|| parts.next());
    if parts.next().is_some() || unit.is_some_and(|u| !units.iter().any(|x| x.eq_ignore_ascii_case(u))) {
        return None;
    }
    let x: f64 = num.parse().ok()?;
    (x.is_finite() && x >= 0.0).then_some(x)
}

fn mib(v: &str) -> Option<u64> {
    if let Some(g) = v.strip_suffix("GiB") {
        return unit_value(g, &[]).map(|x| (x * 1024.0).round() as u64);
    }
    // Old nvidia-smi versions wrote MiB as "MB".
    unit_value(v, &["MiB", "MB"]).filter(|x| *x < 1e15).map(|x| x.round() as u64)
}

fn percent(v: &str) -> Option<f64> {
    unit_value(v, &["%"]).filter(|x| *x <= 100.0)
}

fn mhz(v: &str) -> Option<u32> {
    unit_value(v, &["MHz"]).filter(|x| *x < 1e9).map(|x| x.round() as u32)
}

/// Seconds since 1970 of `YYYY/MM/DD HH:MM:SS[.fff]` (also `-` between date parts, `T`
/// before the time).
pub(crate) fn timestamp(v: &str) -> Option<f64> {
    let v = v.trim();
    let (date, time) = v.split_once([' ', 'T'])?;
    let d: Vec<&str> = date.split(['/', '-']).collect();
    let [y, mo, da] = d[..] else { return None };
    let (y, mo, da): (i64, u32, u32) = (y.parse().ok()?, mo.parse().ok()?, da.parse().ok()?);
    let t: Vec<&str> = time.trim().split(':').collect();
    let [h, mi, s] = t[..] else { return None };
    let (h, mi): (u32, u32) = (h.parse().ok()?, mi.parse().ok()?);
    let s: f64 = s.parse().ok()?;
    if !(1..=12).contains(&mo) || !(1..=31).contains(&da) || h > 23 || mi > 59 || !(0.0..61.0).contains(&s) {
        return None;
    }
    if !(1900..=9999).contains(&y) {
        return None;
    }
    Some(days_from_civil(y, mo, da) as f64 * 86_400.0 + (h * 3600 + mi * 60) as f64 + s)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_times() {
        assert_eq!(mib("81559 MiB"), Some(81559));
        assert_eq!(mib("81559"), Some(81559));
        assert_eq!(mib("16 MB"), Some(16));
        assert_eq!(mib("80 W"), None);
        assert_eq!(unit_value("69.47 W", &["W"]), Some(69.47));
        assert_eq!(percent("35 %"), Some(35.0));
        assert_eq!(percent("135 %"), None);
        assert_eq!(timestamp("1970/01/02 00:00:01.500"), Some(86_401.5));
        assert_eq!(timestamp("2024/05/01 12:00:00.000"), Some(1_714_564_800.0));
        assert_eq!(timestamp("2024-05-01T12:00:00"), Some(1_714_564_800.0));
        assert_eq!(timestamp("yesterday"), None);
        assert!(missing("[N/A]") && missing("[Not Supported]") && missing("N/A"));
    }
}
