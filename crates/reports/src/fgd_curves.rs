//! The FGD paper's curves against arrived workload, bucketed per integer percent as its
//! scripts do (`experiments/analysis/merge_*_discrete.py`):
//!
//! * each sample's arrived share `round(arrived / GPUs / 10)` (pandas' `round`, halves to
//!   even) is its bucket; its allocation `round(used / GPUs / 10, 2)`;
//! * bucket `b` (0..=130) averages its samples; an empty bucket averages those of
//!   `b−1..=b+1`; with none there either the cell stays empty;
//! * fragmentation: `round(100 × mean(frag milli) / 1000 / GPUs, 2)` (% of capacity);
//!   fragmentation ratio: mean of the samples' `100 × frag / idle` (% of idle GPU, each
//!   rounded to 2 decimals as the simulator logs it).

/// One sample: the cluster after one pod.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CurveSample {
    /// Arrived milli-GPU.
    pub arrived_milli: u64,
    /// Allocated milli-GPU.
    pub used_milli: u64,
    /// Fragmented milli-GPU.
    pub frag_milli: f64,
    /// Idle milli-GPU.
    pub idle_milli: u64,
}

/// Highest bucket (percent of capacity arrived).
pub const MAX_BUCKET: usize = 130;

/// The three curves of one run, one value per bucket 0..=130 (`None`: no data).
#[derive(Clone, Debug, PartialEq)]
pub struct Curves {
    /// GPU allocation ratio, %.
    pub allocation: Vec<Option<f64>>,
    /// Fragmented GPU, % of capacity.
    pub fragmentation: Vec<Option<f64>>,
    /// Fragmented share of idle GPU, %.
    pub fragmentation_ratio: Vec<Option<f64>>,
}

/// Rounds as Python's `round(x, 2)` does (correctly rounded decimal of the binary value).
pub fn round2(x: f64) -> f64 {
    format!("{x:.2}").parse().unwrap_or(x)
}

/// The sum of `v` as NumPy's `add.reduce` computes it for float64 (pandas' `mean`
/// without bottleneck): blocks of up to 128 summed in eight interleaved partial sums,
/// longer runs split in two (at a multiple of eight) and summed recursively
/// (`numpy/core/src/umath/loops_utils.h.src`, `pairwise_sum`).
pub fn pairwise_sum(v: &[f64]) -> f64 {
    let n = v.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in v {
            res += x;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&v[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for j in 0..8 {
                r[j] += v[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &v[i..] {
            res += x;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&v[..n2]) + pairwise_sum(&v[n2..])
    }
}

/// Rounds as NumPy's `round(x, 2)` does for a float64 (what Python's `round` calls on
/// pandas' mean): `rint(x * 100) / 100`, halves to even after the scaling.
pub fn round2_numpy(x: f64) -> f64 {
    (x * 100.0).round_ties_even() / 100.0
}

/// How a bucket's mean is summed and rounded.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arithmetic {
    /// Summed in order, rounded to the nearest two-decimal value ([`round2`]).
    Plain,
    /// As the paper's pandas scripts compute it: NumPy's pairwise sum
    /// ([`pairwise_sum`]) and NumPy's rounding of the mean ([`round2_numpy`]); with
    /// `sim fgd --rng go` the published CSVs are reproduced to the last digit.
    NumPy,
}

/// Buckets a run's samples, with [`Arithmetic::Plain`].
pub fn curves(samples: &[CurveSample], total_gpus: u64) -> Curves {
    curves_with(samples, total_gpus, Arithmetic::Plain)
}

/// Buckets a run's samples, its means computed with `arithmetic`.
pub fn curves_with(samples: &[CurveSample], total_gpus: u64, arithmetic: Arithmetic) -> Curves {
    let g = total_gpus.max(1) as f64;
    // Buckets 0..=131: 131 only serves as the neighbour of an empty 130.
    let n = MAX_BUCKET + 2;
    let mut alloc: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut frag: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut ratio: Vec<Vec<f64>> = vec![Vec::new(); n];
    for s in samples {
        let b = (s.arrived_milli as f64 / g / 10.0).round_ties_even();
        if !(0.0..n as f64).contains(&b) {
            continue;
        }
        let b = b as usize;
        alloc[b].push(round2(s.used_milli as f64 / g / 10.0));
        frag[b].push(round2(s.frag_milli));
        if s.idle_milli > 0 {
            ratio[b].push(round2(100.0 * s.frag_milli / s.idle_milli as f64));
        }
    }
    let pick = |series: &[Vec<f64>], b: usize| -> Option<Vec<f64>> {
        if !series[b].is_empty() {
            return Some(series[b].clone());
        }
        let v: Vec<f64> = series[b.saturating_sub(1)..=b + 1].concat();
        (!v.is_empty()).then_some(v)
    };
    let numpy = arithmetic == Arithmetic::NumPy;
    let mean = |v: &[f64]| {
        let sum = if numpy { pairwise_sum(v) } else { v.iter().sum::<f64>() };
        sum / v.len() as f64
    };
    let round = |x: f64| if numpy { round2_numpy(x) } else { round2(x) };
    let mut out = Curves { allocation: Vec::new(), fragmentation: Vec::new(), fragmentation_ratio: Vec::new() };
    for b in 0..=MAX_BUCKET {
        out.allocation.push(pick(&alloc, b).map(|v| round(mean(&v))));
        out.fragmentation.push(pick(&frag, b).map(|v| round(100.0 * mean(&v) / 1000.0 / g)));
        out.fragmentation_ratio.push(pick(&ratio, b).map(|v| round(mean(&v))));
    }
    out
}

/// The CSV header: `workload,policy,seed,0,1,...,130`.
pub fn header() -> String {
    let mut h = String::from("workload,policy,seed");
    for b in 0..=MAX_BUCKET {
        h.push(',');
        h.push_str(&b.to_string());
    }
    h
}

/// One CSV row.
pub fn row(workload: &str, policy: &str, seed: u64, values: &[Option<f64>]) -> String {
    let mut r = format!("{workload},{policy},{seed}");
    for v in values {
        r.push(',');
        if let Some(v) = v {
            let s = format!("{v}");
            r.push_str(&s);
            if !s.contains('.') && !s.contains("inf") && !s.contains("NaN") {
                r.push_str(".0");
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(arrived: u64, used: u64) -> CurveSample {
        CurveSample { arrived_milli: arrived, used_milli: used, frag_milli: 0.0, idle_milli: 1 }
    }

    #[test]
    fn buckets_and_neighbours() {
        // 10 GPUs: 1 % of capacity = 100 milli-GPU.
        let c = curves(&[s(40, 40), s(140, 140), s(260, 200), s(250, 250)], 10);
        assert_eq!(c.allocation[0], Some(0.4));
        assert_eq!(c.allocation[1], Some(1.4));
        // 2.6 rounds to 3 and 2.5 to 2 (halves to even).
        assert_eq!(c.allocation[3], Some(2.0));
        assert_eq!(c.allocation[2], Some(2.5));
        // Bucket 4 is empty: its neighbour 3 stands in; 5 has none within one.
        assert_eq!(c.allocation[4], Some(2.0));
        assert_eq!(c.allocation[5], None);
        assert_eq!(row("w", "p", 1, &c.allocation[..2]), "w,p,1,0.4,1.4");
    }
}
