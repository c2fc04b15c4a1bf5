//! Exact order statistics (median, p95, max) of more values than a run keeps in memory.
//!
//! Values are held in memory up to a budget; past it each full buffer is sorted and
//! written to a spill file, and the ranks asked for are read at the end by merging the
//! sorted runs. The answers are exactly those of sorting every value in memory, so a
//! streamed replay's `summary.json` is the one a replay held in memory writes, at any
//! size: no sketch, no error bound.

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

    /// Spilling sorted runs of `limit` values into `dir` (files `.order-stats-N.tmp`,
    /// removed when read or dropped).
    pub fn spilling(dir: &Path, limit: usize) -> Self {
        Self::with(Some(dir.to_path_buf()), limit.max(1))
    }

    fn with(spill_dir: Option<PathBuf>, limit: usize) -> Self {
        OrderStats { buf: Vec::new(), spill_dir, runs: Vec::new(), limit, count: 0, sum: 0, max: 0 }
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
        let path = dir.join(format!(".order-stats-{}.tmp", self.runs.len()));
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
    pub fn at_ranks(mut self, ranks: &[u64]) -> std::io::Result<Vec<u64>> {
        self.buf.sort_unstable();
        let mut out = vec![0u64; ranks.len()];
        if self.runs.is_empty() {
            for (o, &r) in out.iter_mut().zip(ranks) {
                *o = self.buf[r as usize];
            }
            return Ok(out);
        }
        let mut wanted: Vec<(u64, usize)> = ranks.iter().enumerate().map(|(i, &r)| (r, i)).collect();
        wanted.sort_unstable();
        // A k-way merge of the spilled runs and the buffer, by a heap of each run's head.
        let mut readers = Vec::with_capacity(self.runs.len());
        for p in &self.runs {
            readers.push(BufReader::with_capacity(1 << 16, std::fs::File::open(p)?));
        }
        let next = |r: &mut BufReader<std::fs::File>| -> std::io::Result<Option<u64>> {
            let mut b = [0u8; 8];
            match r.read_exact(&mut b) {
                Ok(()) => Ok(Some(u64::from_le_bytes(b))),
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
                Err(e) => Err(e),
            }
        };
        let mut heap = std::collections::BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(v) = next(r)? {
                heap.push(std::cmp::Reverse((v, i)));
            }
        }
        let mem = readers.len();
        let mut at_mem = 0usize;
        if let Some(&v) = self.buf.first() {
            heap.push(std::cmp::Reverse((v, mem)));
            at_mem = 1;
        }
        let (mut rank, mut w) = (0u64, 0usize);
        while let Some(std::cmp::Reverse((v, i))) = heap.pop() {
            while w < wanted.len() && wanted[w].0 == rank {
                out[wanted[w].1] = v;
                w += 1;
            }
            if w == wanted.len() {
                break;
            }
            rank += 1;
            let refill = if i == mem {
                let v = self.buf.get(at_mem).copied();
                at_mem += 1;
                v
            } else {
                next(&mut readers[i])?
            };
            if let Some(v) = refill {
                heap.push(std::cmp::Reverse((v, i)));
            }
        }
        Ok(out)
    }
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
}
