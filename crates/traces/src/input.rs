//! Opening trace files: plain or gzip (detected by magic bytes), hashed as read.

use crate::error::{Location, TraceError};
use flate2::read::MultiGzDecoder;
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex};

/// SHA-256 of everything read through it, shared with the opener.
#[derive(Clone, Default)]
pub struct Checksum(Arc<Mutex<Sha256>>);

impl Checksum {
    /// Hex digest of the bytes read so far.
    pub fn hex(&self) -> String {
        let d = self.0.lock().expect("checksum lock").clone().finalize();
        d.iter().map(|b| format!("{b:02x}")).collect()
    }
}

struct Hashing<R> {
    inner: R,
    sum: Checksum,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sum.0.lock().expect("checksum lock").update(&buf[..n]);
        Ok(n)
    }
}

/// A trace file opened for line reading.
pub struct TraceInput {
    /// Decompressed bytes.
    pub reader: Box<dyn BufRead>,
    /// Whether it was gzip.
    pub gzip: bool,
    /// Checksum of the raw (compressed) bytes read so far.
    pub checksum: Checksum,
}

/// Opens `path` (`name` is how errors call it), plain or gzip.
pub fn open(path: &std::path::Path, name: &str) -> Result<TraceInput, TraceError> {
    let f = std::fs::File::open(path).map_err(|e| TraceError::Io { file: name.into(), source: e })?;
    from_reader(Box::new(f), name)
}

/// As [`open`], from bytes in memory (the embedded default trace).
pub fn from_bytes(bytes: &'static [u8], name: &str) -> Result<TraceInput, TraceError> {
    from_reader(Box::new(bytes), name)
}

/// Decompresses on a second thread, handing over large chunks in order, so reading
/// and parsing overlap. The bytes and their order are those of the stream.
struct Pipelined {
    rx: Receiver<std::io::Result<Vec<u8>>>,
    cur: Vec<u8>,
    pos: usize,
    done: bool,
}

impl Pipelined {
    fn spawn(mut src: impl Read + Send + 'static) -> Self {
        let (tx, rx) = sync_channel::<std::io::Result<Vec<u8>>>(4);
        std::thread::spawn(move || {
            loop {
                let mut chunk = vec![0u8; 1 << 18];
                let mut filled = 0;
                let res = loop {
                    match src.read(&mut chunk[filled..]) {
                        Ok(0) => break Ok(()),
                        Ok(n) => {
                            filled += n;
                            if filled == chunk.len() {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                let end = filled < chunk.len() || res.is_err();
                chunk.truncate(filled);
                if filled > 0 && tx.send(Ok(chunk)).is_err() {
                    return;
                }
                if let Err(e) = res {
                    let _ = tx.send(Err(e));
                    return;
                }
                if end {
                    return;
                }
            }
        });
        Pipelined { rx, cur: Vec::new(), pos: 0, done: false }
    }
}

impl Read for Pipelined {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.cur.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(v)) => {
                    self.cur = v;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.cur.len() - self.pos);
        buf[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn from_reader(r: Box<dyn Read + Send>, name: &str) -> Result<TraceInput, TraceError> {
    let checksum = Checksum::default();
    let mut raw = BufReader::with_capacity(1 << 16, Hashing { inner: r, sum: checksum.clone() });
    let head = raw.fill_buf().map_err(|e| TraceError::Io { file: name.into(), source: e })?;
    let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
    let reader: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::with_capacity(1 << 16, Pipelined::spawn(MultiGzDecoder::new(raw))))
    } else {
        Box::new(raw)
    };
    Ok(TraceInput { reader, gzip, checksum })
}

/// Reads the next line of `input` into `buf` (cleared first) and counts it in `line`;
/// `false` at the end of the file.
pub(crate) fn next_line(
    input: &mut TraceInput,
    buf: &mut Vec<u8>,
    name: &str,
    line: &mut u64,
) -> Result<bool, TraceError> {
    buf.clear();
    *line += 1;
    let n = input.reader.read_until(b'\n', buf).map_err(|e| read_error(name, *line, input.gzip, e))?;
    Ok(n > 0)
}

/// Turns a read error at `line` into a trace error (gzip errors are named as such).
pub(crate) fn read_error(name: &str, line: u64, gzip: bool, e: std::io::Error) -> TraceError {
    if gzip || e.kind() == std::io::ErrorKind::UnexpectedEof || e.kind() == std::io::ErrorKind::InvalidInput {
        TraceError::Gzip { at: Location { file: name.into(), line: Some(line), field: None }, detail: e.to_string() }
    } else if e.kind() == std::io::ErrorKind::InvalidData {
        TraceError::malformed(name, Some(line), None, "not valid UTF-8 text")
    } else {
        TraceError::Io { file: name.into(), source: e }
    }
}
