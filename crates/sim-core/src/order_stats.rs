//! Exact order statistics (median, p95, max) of more values than a run keeps in memory.
//!
//! Values are held in memory up to a budget; past it each full buffer is sorted and
//! written to a spill file, and the ranks asked for are read at the end by merging the
//! sorted runs. The answers are exactly those of sorting every value in memory, so a
//! streamed replay's `summary.json` is the one a replay held in memory writes, at any
//! size: no sketch, no error bound. Floats are kept by their [`f64_key`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Values held in memory before a sorted run is spilled: 2 Mi values, 16 MiB.
pub const IN_MEMORY: usize = 1 << 21;

/// Unsigned values whose ranks are wanted at the end.
#[derive(Debug)]
pub struct OrderStats {
    buf: Vec<u64>,
    /// Where sorted runs go (none: everything stays in memory).
    spill_dir: Option<PathBuf>,
    /// The sorted runs written.
    runs: Vec<PathBuf>,
    /// This instance's number in the process (its runs' names).
    instance: usize,
    /// How many values a buffer holds before it is spilled.
    limit: usize,
    count: u64,
    sum: u128,
    max: u64,
}

impl OrderStats {
    /// Everything in memory.
    pub fn in_memory() -> Self {
        Self::with(None, usize::MAX)
    }

    /// Spilling sorted runs of `limit` values into `dir` (files
    /// `.order-stats-PID-INSTANCE-N.tmp`, removed when read or dropped).
    pub fn spilling(dir: &Path, limit: usize) -> Self {
        Self::with(Some(dir.to_path_buf()), limit.max(1))
    }

    fn with(spill_dir: Option<PathBuf>, limit: usize) -> Self {
        static INSTANCES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let instance = INSTANCES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        OrderStats { buf: Vec::new(), spill_dir, runs: Vec::new(), instance, limit, count: 0, sum: 0, max: 0 }
    }

    /// Adds a value.
    pub fn push(&mut self, v: u64) -> std::io::Result<()> {
        self.buf.push(v);
        self.count += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
        if self.buf.len() >= self.limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Values added.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether none was added.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Their sum.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// The largest (0 when none).
    pub fn max(&self) -> u64 {
        self.max
    }

    fn spill(&mut self) -> std::io::Result<()> {
        let Some(dir) = &self.spill_dir else { return Ok(()) };
        self.buf.sort_unstable();
        let path = dir.join(format!(".order-stats-{}-{}-{}.tmp", std::process::id(), self.instance, self.runs.len()));
        let mut w = BufWriter::new(std::fs::File::create(&path)?);
        self.runs.push(path);
        for v in &self.buf {
            w.write_all(&v.to_le_bytes())?;
        }
        w.flush()?;
        self.buf.clear();
        Ok(())
    }

    /// The values at `ranks` (0-based, ascending order of the values; each below
    /// [`OrderStats::len`]), in the order asked.
    pub fn at_ranks(self, ranks: &[u64]) -> std::io::Result<Vec<u64>> {
        let mut out = vec![0u64; ranks.len()];
        let last = ranks.iter().copied().max();
        let mut sorted = self.sorted()?;
        for (rank, v) in (&mut sorted).enumerate() {
            let rank = rank as u64;
            for (o, _) in out.iter_mut().zip(ranks).filter(|(_, r)| **r == rank) {
                *o = v;
            }
            if Some(rank) >= last {
                break;
            }
        }
        sorted.error.take().map_or(Ok(out), Err)
    }

    /// Every value in ascending order: the runs spilled merged with the buffer. A read
    /// error ends the iteration and is left in [`Sorted::error`].
    pub fn sorted(mut self) -> std::io::Result<Sorted> {
        self.buf.sort_unstable();
        let mut readers = Vec::with_capacity(self.runs.len());
        for p in &self.runs {
            readers.push(BufReader::with_capacity(1 << 16, std::fs::File::open(p)?));
        }
        let mut s = Sorted {
            heap: BinaryHeap::new(),
            readers,
            buf: std::mem::take(&mut self.buf),
            at: 0,
            error: None,
            stats: self,
        };
        for i in 0..s.readers.len() {
            if let Some(v) = s.read(i) {
                s.heap.push(Reverse((v, i)));
            }
        }
        if let Some(&v) = s.buf.first() {
            s.heap.push(Reverse((v, usize::MAX)));
            s.at = 1;
        }
        Ok(s)
    }
}

/// [`OrderStats::sorted`]: a k-way merge by a heap of each run's head.
pub struct Sorted {
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    readers: Vec<BufReader<std::fs::File>>,
    buf: Vec<u64>,
    at: usize,
    /// The first read error, which ended the iteration.
    pub error: Option<std::io::Error>,
    /// Held so that its runs are removed once read.
    stats: OrderStats,
}

impl Sorted {
    fn read(&mut self, i: usize) -> Option<u64> {
        let mut b = [0u8; 8];
        match self.readers[i].read_exact(&mut b) {
            Ok(()) => Some(u64::from_le_bytes(b)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => None,
            Err(e) => {
                self.error.get_or_insert(e);
                None
            }
        }
    }
}

impl Iterator for Sorted {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.error.is_some() {
            return None;
        }
        let Reverse((v, i)) = self.heap.pop()?;
        let refill = if i == usize::MAX {
            let v = self.buf.get(self.at).copied();
            self.at += 1;
            v
        } else {
            self.read(i)
        };
        if let Some(w) = refill {
            self.heap.push(Reverse((w, i)));
        }
        let _ = &self.stats;
        Some(v)
    }
}

/// A float as a key whose unsigned order is [`f64::total_cmp`]'s (for [`OrderStats`] of
/// floats).
pub fn f64_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// The float of a [`f64_key`].
pub fn f64_of_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

impl Drop for OrderStats {
    fn drop(&mut self) {
        for p in &self.runs {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_runs_give_the_ranks_of_sorting_in_memory() {
        let dir = std::env::temp_dir().join(format!("order-stats-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A scrambled sequence with repeats: 10,007 values in runs of 1,000.
        let values: Vec<u64> = (0..10_007u64).map(|i| (i * 7919) % 3001).collect();
        let mut spilled = OrderStats::spilling(&dir, 1000);
        let mut mem = OrderStats::in_memory();
        for &v in &values {
            spilled.push(v).unwrap();
            mem.push(v).unwrap();
        }
        assert_eq!(spilled.sum(), values.iter().map(|&v| u128::from(v)).sum::<u128>());
        assert_eq!((spilled.max(), spilled.len()), (3000, 10_007));
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let ranks = [10_006, 0, 5002, 5003, 9506, 1];
        let want: Vec<u64> = ranks.iter().map(|&r| sorted[r as usize]).collect();
        assert_eq!(spilled.at_ranks(&ranks).unwrap(), want);
        assert_eq!(mem.at_ranks(&ranks).unwrap(), want);
        // The spill files are gone once read.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn float_keys_sort_as_total_cmp_and_come_back() {
        let xs = [f64::NEG_INFINITY, -1.5, -0.0, 0.0, 1e-300, 2.5, f64::INFINITY];
        let keys: Vec<u64> = xs.iter().map(|&x| f64_key(x)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert!(xs.iter().zip(&keys).all(|(&x, &k)| f64_of_key(k).to_bits() == x.to_bits()));
        let mut s = OrderStats::in_memory();
        for &k in keys.iter().rev() {
            s.push(k).unwrap();
        }
        assert_eq!(s.sorted().unwrap().collect::<Vec<_>>(), keys);
    }
}
