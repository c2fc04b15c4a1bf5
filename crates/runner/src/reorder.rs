//! A streamed replay's reorder buffer: its records come as the jobs end and its files are
//! written in input order. An item waits here until every job before it is written; past
//! a budget the items waiting are written to disk in sorted runs (`.reorder-N.tmp` in the
//! run folder) and read back, merged, as their turn comes. Memory stays within the
//! budget however long a job before them runs.

use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Bytes of items held in memory before they are spilled: 16 MiB.
pub const IN_MEMORY: usize = 16 << 20;

/// One job's output: its rows (already formatted) and the figures summed in input order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Item {
    /// Its row of `jobs.csv`.
    pub jobs_row: Vec<u8>,
    /// Its row of `frame.csv`.
    pub frame_row: Vec<u8>,
    /// Its bounded slowdown ([`reports::summary::InOrder`]).
    pub bounded_slowdown: Option<f64>,
    /// Its work, core-s and GPU-s ([`traces::stats::OfferedLoad::add_work`]).
    pub work: Option<(f64, f64)>,
}

impl Item {
    fn bytes(&self) -> usize {
        self.jobs_row.len() + self.frame_row.len() + 64
    }

    fn write(&self, id: u32, w: &mut impl Write) -> std::io::Result<()> {
        w.write_all(&id.to_le_bytes())?;
        for row in [&self.jobs_row, &self.frame_row] {
            w.write_all(&(row.len() as u32).to_le_bytes())?;
            w.write_all(row)?;
        }
        let flags = u8::from(self.bounded_slowdown.is_some()) | (u8::from(self.work.is_some()) << 1);
        w.write_all(&[flags])?;
        let (b, (c, g)) = (self.bounded_slowdown.unwrap_or(0.0), self.work.unwrap_or((0.0, 0.0)));
        for x in [b, c, g] {
            w.write_all(&x.to_bits().to_le_bytes())?;
        }
        Ok(())
    }

    fn read(r: &mut impl Read) -> std::io::Result<Option<(u32, Item)>> {
        let mut id = [0u8; 4];
        match r.read_exact(&mut id) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let mut row = || -> std::io::Result<Vec<u8>> {
            let mut n = [0u8; 4];
            r.read_exact(&mut n)?;
            let mut v = vec![0u8; u32::from_le_bytes(n) as usize];
            r.read_exact(&mut v)?;
            Ok(v)
        };
        let (jobs_row, frame_row) = (row()?, row()?);
        let mut flags = [0u8; 1];
        r.read_exact(&mut flags)?;
        let mut x = [0f64; 3];
        for v in &mut x {
            let mut b = [0u8; 8];
            r.read_exact(&mut b)?;
            *v = f64::from_bits(u64::from_le_bytes(b));
        }
        let item = Item {
            jobs_row,
            frame_row,
            bounded_slowdown: (flags[0] & 1 != 0).then_some(x[0]),
            work: (flags[0] & 2 != 0).then_some((x[1], x[2])),
        };
        Ok(Some((u32::from_le_bytes(id), item)))
    }
}

/// A sorted run on disk and its next item.
struct Run {
    path: PathBuf,
    reader: BufReader<std::fs::File>,
    head: Option<(u32, Item)>,
}

/// Items by job id, handed out in id order from 0, each once.
pub struct Reorder {
    next: u32,
    mem: BTreeMap<u32, Item>,
    mem_bytes: usize,
    budget: usize,
    dir: PathBuf,
    runs: Vec<Run>,
    spilled: usize,
}

impl Reorder {
    /// Spilling into `dir` past `budget` bytes.
    pub fn new(dir: &Path, budget: usize) -> Self {
        Reorder {
            next: 0,
            mem: BTreeMap::new(),
            mem_bytes: 0,
            budget,
            dir: dir.to_path_buf(),
            runs: Vec::new(),
            spilled: 0,
        }
    }

    /// Whether `id`'s turn has come (its output may be written at once, then
    /// [`Reorder::advance`]).
    pub fn is_next(&self, id: u32) -> bool {
        id == self.next
    }

    /// Job `id`'s item; every item whose turn has come goes to `out`, in id order.
    pub fn push(
        &mut self,
        id: u32,
        item: Item,
        out: &mut dyn FnMut(Item) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if id != self.next {
            self.mem_bytes += item.bytes();
            self.mem.insert(id, item);
            if self.mem_bytes > self.budget {
                self.spill()?;
            }
            return Ok(());
        }
        out(item)?;
        self.advance(out)
    }

    /// The job whose turn it was is written: the items after it whose turn comes go to
    /// `out`.
    pub fn advance(&mut self, out: &mut dyn FnMut(Item) -> std::io::Result<()>) -> std::io::Result<()> {
        self.next += 1;
        if self.mem.is_empty() && self.runs.is_empty() {
            return Ok(());
        }
        loop {
            if let Some(item) = self.mem.remove(&self.next) {
                self.mem_bytes -= item.bytes();
                out(item)?;
            } else if let Some(k) = self.runs.iter().position(|r| r.head.as_ref().is_some_and(|h| h.0 == self.next)) {
                let run = &mut self.runs[k];
                let (_, item) = run.head.take().expect("its head");
                run.head = Item::read(&mut run.reader)?;
                if run.head.is_none() {
                    let done = self.runs.swap_remove(k);
                    let _ = std::fs::remove_file(&done.path);
                }
                out(item)?;
            } else {
                return Ok(());
            }
            self.next += 1;
        }
    }

    /// Whether every item pushed has been handed out.
    pub fn is_empty(&self) -> bool {
        self.mem.is_empty() && self.runs.is_empty()
    }

    fn spill(&mut self) -> std::io::Result<()> {
        let path = self.dir.join(format!(".reorder-{}.tmp", self.spilled));
        self.spilled += 1;
        let mut w = BufWriter::new(std::fs::File::create(&path)?);
        for (id, item) in std::mem::take(&mut self.mem) {
            item.write(id, &mut w)?;
        }
        w.flush()?;
        drop(w);
        self.mem_bytes = 0;
        let mut reader = BufReader::with_capacity(1 << 16, std::fs::File::open(&path)?);
        let head = Item::read(&mut reader)?;
        self.runs.push(Run { path, reader, head });
        Ok(())
    }
}

impl Drop for Reorder {
    fn drop(&mut self) {
        for r in &self.runs {
            let _ = std::fs::remove_file(&r.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_come_out_in_id_order_from_memory_and_spilled_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        // Ids 0..2000 in a scrambled order; a budget of a few items spills many runs.
        let ids: Vec<u32> = (0..2000u32).map(|i| (i * 7919) % 2000).collect();
        let item = |id: u32| Item {
            jobs_row: format!("{id},row\n").into_bytes(),
            frame_row: vec![b'x'; (id % 7) as usize],
            bounded_slowdown: (id % 3 == 0).then_some(id as f64 / 7.0),
            work: (id % 2 == 0).then_some((id as f64, 0.5)),
        };
        let mut r = Reorder::new(dir, 2000);
        let mut got = Vec::new();
        for &id in &ids {
            r.push(id, item(id), &mut |it| {
                got.push(it);
                Ok(())
            })
            .unwrap();
        }
        assert!(r.is_empty());
        assert_eq!(got, (0..2000).map(item).collect::<Vec<_>>());
        assert!(r.spilled > 10, "{} runs", r.spilled);
        drop(r);
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0);
    }
}
