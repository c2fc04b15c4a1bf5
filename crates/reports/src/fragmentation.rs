//! GPU fragmentation over time (`fragmentation.csv`): the engine's samples of free GPU
//! capacity and of its fragment, the idle GPU capacity the workload's typical pods cannot
//! use, by the definition of Alibaba's FGD paper (Weng et al., "Beware of Fragmentation",
//! USENIX ATC 2023; [`sim_core::Fragmentation`]): per node, the expectation over the
//! typical pods of the idle capacity each cannot use there — all of it on a node that
//! cannot host the pod (its CPU exhausted, too few GPUs with enough left, another model),
//! else the GPUs too small for it. `fragmentation` = fragment / free (0 when nothing is
//! free), the paper's fragmentation ratio.

use sim_core::GpuSample;
use sim_core::time::{parse_secs_micros, secs_string};
use std::io::{Read, Write};

/// About how many samples a run takes over its submission span.
pub const SAMPLES: u64 = 500;

const HEADER: &str = "t,free_gpus,fragment_gpus,fragmentation";

/// The header of files written before the FGD definition (its third column counted the
/// capacity left on partly used GPUs): still read.
const OLD_HEADER: &str = "t,free_gpus,stranded_gpus,fragmentation";

/// The fragmentation of a sample.
pub fn ratio(s: &GpuSample) -> f64 {
    if s.free_milli == 0 { 0.0 } else { s.fragment_milli as f64 / s.free_milli as f64 }
}

/// Writes the samples: time (s), free and fragment GPUs (milli-GPU / 1000), the ratio.
pub fn write_csv(out: &mut dyn Write, samples: &[GpuSample]) -> std::io::Result<()> {
    writeln!(out, "{HEADER}")?;
    for s in samples {
        writeln!(
            out,
            "{},{},{},{:.6}",
            secs_string(s.t.0),
            secs_string(s.free_milli * 1000),
            secs_string(s.fragment_milli * 1000),
            ratio(s)
        )?;
    }
    Ok(())
}

/// Reads a `fragmentation.csv` back as (time s, fragmentation) points (`file` names it in
/// errors).
pub fn read_csv(mut input: impl Read, file: &str) -> Result<Vec<(f64, f64)>, String> {
    let mut text = String::new();
    input.read_to_string(&mut text).map_err(|e| format!("{file}: {e}"))?;
    let mut lines = text.lines();
    if !matches!(lines.next(), Some(HEADER | OLD_HEADER)) {
        return Err(format!("{file}:1: expected the header {HEADER}"));
    }
    lines
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split(',').collect();
            let bad = || format!("{file}:{}: expected {HEADER}, found '{l}'", i + 2);
            if f.len() != 4 {
                return Err(bad());
            }
            let t = parse_secs_micros(f[0]).map_err(|_| bad())? as f64 / 1e6;
            let r: f64 = f[3].parse().map_err(|_| bad())?;
            Ok((t, r))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::SimTime;

    #[test]
    fn writes_and_reads_back() {
        let s = [
            GpuSample { t: SimTime(0), free_milli: 8000, fragment_milli: 0 },
            GpuSample { t: SimTime(5_000_000), free_milli: 7250, fragment_milli: 250 },
            GpuSample { t: SimTime(10_000_000), free_milli: 0, fragment_milli: 0 },
        ];
        let mut out = Vec::new();
        write_csv(&mut out, &s).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert_eq!(text.lines().nth(2), Some("5,7.25,0.25,0.034483"));
        let back = read_csv(&out[..], "f.csv").unwrap();
        assert_eq!(back, [(0.0, 0.0), (5.0, 0.034483), (10.0, 0.0)]);
        assert!(read_csv("t,x\n".as_bytes(), "f.csv").unwrap_err().starts_with("f.csv:1:"));
        let old = "t,free_gpus,stranded_gpus,fragmentation\n5,7.25,0.25,0.034483\n";
        assert_eq!(read_csv(old.as_bytes(), "old.csv").unwrap(), [(5.0, 0.034483)]);
    }
}
