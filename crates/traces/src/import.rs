//! What the importers of operators' formats share: the skipped-row ledger, the
//! streaming reader trait, and a CSV table reader that names file, line and column.
//!
//! Every importer accounts for every data row it reads: it either becomes a job or is
//! counted under a reason in [`Skipped`]. So `rows == jobs + skipped.total()`.

use crate::error::TraceError;
use crate::input::TraceInput;
use serde::Serialize;
use sim_core::Job;
use std::collections::BTreeMap;
use std::io::BufRead;

/// Rows an importer left out, counted by reason (a short phrase, e.g. `"still running"`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Skipped(pub BTreeMap<String, u64>);

impl Skipped {
    /// Counts one row left out for `reason`.
    pub fn add(&mut self, reason: &str) {
        if let Some(n) = self.0.get_mut(reason) {
            *n += 1;
        } else {
            self.0.insert(reason.to_string(), 1);
        }
    }

    /// Rows left out in all.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }
}

/// An importer that yields jobs one at a time (constant memory for the rows).
pub trait JobReader {
    /// The next job, `None` at the end.
    fn next_job(&mut self) -> Result<Option<Job>, TraceError>;
    /// Data rows read so far (header lines, comments and blank lines not counted).
    fn rows(&self) -> u64;
    /// Rows left out so far, by reason.
    fn skipped(&self) -> &Skipped;
}

/// Reads every job of `r`; returns them, the rows read and the rows skipped.
pub fn read_all(r: &mut dyn JobReader) -> Result<(Vec<Job>, u64, Skipped), TraceError> {
    let mut jobs = Vec::new();
    while let Some(j) = r.next_job()? {
        jobs.push(j);
    }
    Ok((jobs, r.rows(), r.skipped().clone()))
}

/// Days from 1970-01-01 to the civil date `y-m-d` (proleptic Gregorian; negative before
/// 1970). `m` is 1..=12 and `d` 1..=31 (not checked here).
pub const fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12; // March = 0
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Seconds from 1970-01-01 00:00:00 to a civil date and time written
/// `YYYY-MM-DD HH:MM:SS` or `YYYY-MM-DDTHH:MM:SS` (Slurm's form; no time zone, no leap
/// seconds), or `None` when `text` is not one (wrong shape, month 13, 31 April,
/// 29 February of a common year, hour 24, …).
pub fn civil_secs(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 19
        || b[4] != b'-'
        || b[7] != b'-'
        || (b[10] != b' ' && b[10] != b'T')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        b[from..to].iter().try_fold(0i64, |v, &c| c.is_ascii_digit().then(|| v * 10 + (c - b'0') as i64))
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, s) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s)
}

/// Dense numeric ids for text ids (users, VCs, applications): 1, 2, … in first-seen
/// order, 0 for an empty one. Lookups only: hash order never reaches output.
#[derive(Debug, Default)]
pub struct DenseIds(BTreeMap<String, u32>);

impl DenseIds {
    /// The id of `name`, given a new one if unseen.
    pub fn id(&mut self, name: &str) -> u32 {
        if name.is_empty() {
            return 0;
        }
        if let Some(&i) = self.0.get(name) {
            return i;
        }
        let i = u32::try_from(self.0.len() + 1).unwrap_or(u32::MAX);
        self.0.insert(name.to_string(), i);
        i
    }

    /// The id of `name` as a queue or partition number.
    pub fn id_i32(&mut self, name: &str) -> i32 {
        i32::try_from(self.id(name)).unwrap_or(i32::MAX)
    }

    /// Names seen so far.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none has been seen.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `YYYY-MM-DDT00:00:00` of a day number since 1970-01-01 (Hinnant's `civil_from_days`),
/// for messages that name a time zero.
pub fn civil_day_string(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T00:00:00")
}

/// A CSV table read row by row, its columns looked up by header name.
pub struct CsvRows {
    file: String,
    rd: csv::Reader<Box<dyn BufRead>>,
    index: BTreeMap<String, usize>,
    rec: csv::StringRecord,
    line: u64,
}

impl CsvRows {
    /// Opens a table whose first line is a header holding at least `required`.
    /// `delimiter` is `b','` or `b'|'` (sacct `--parsable2`).
    pub fn with_header(input: TraceInput, file: &str, delimiter: u8, required: &[&str]) -> Result<Self, TraceError> {
        let mut rd = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .delimiter(delimiter)
            .quoting(delimiter == b',')
            .from_reader(input.reader);
        let header = rd
            .headers()
            .map_err(|e| TraceError::malformed(file, Some(1), None, format!("unreadable header: {e}")))?
            .clone();
        let names: Vec<String> = header.iter().map(|h| h.trim().trim_start_matches('\u{feff}').to_string()).collect();
        Self::check(file, names, required).map(|index| CsvRows {
            file: file.into(),
            rd,
            index,
            rec: csv::StringRecord::new(),
            line: 1,
        })
    }

    /// Opens a table without a header row, whose columns are `columns` in order (the
    /// Alibaba PAI tables ship their header in a separate file). A first row equal to
    /// `columns` is taken as a header and skipped.
    pub fn with_columns(input: TraceInput, file: &str, columns: &[&str]) -> Result<Self, TraceError> {
        let rd = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(input.reader);
        let names = columns.iter().map(|c| c.to_string()).collect();
        let index = Self::check(file, names, columns)?;
        Ok(CsvRows { file: file.into(), rd, index, rec: csv::StringRecord::new(), line: 0 })
    }

    fn check(file: &str, names: Vec<String>, required: &[&str]) -> Result<BTreeMap<String, usize>, TraceError> {
        let index: BTreeMap<String, usize> = names.into_iter().enumerate().map(|(i, h)| (h, i)).collect();
        if let Some(r) = required.iter().find(|r| !index.contains_key(**r)) {
            return Err(TraceError::malformed(
                file,
                Some(1),
                None,
                format!("header lacks column '{r}' (expected at least {})", required.join(",")),
            ));
        }
        Ok(index)
    }

    /// Moves to the next non-blank row; `false` at the end. A header row repeated as the
    /// first row of a headerless table is passed over.
    pub fn advance(&mut self) -> Result<bool, TraceError> {
        loop {
            let more = self.rd.read_record(&mut self.rec).map_err(|e| {
                let line = e.position().map(|p| p.line());
                TraceError::malformed(&self.file, line, None, format!("not CSV: {e}"))
            })?;
            if !more {
                return Ok(false);
            }
            self.line = self.rec.position().map_or(self.line + 1, |p| p.line());
            if self.rec.iter().all(|f| f.trim().is_empty()) {
                continue;
            }
            if !self.rd.has_headers()
                && self.line == 1
                && self.index.iter().all(|(name, &i)| self.rec.get(i).map(str::trim) == Some(name.as_str()))
            {
                continue;
            }
            return Ok(true);
        }
    }

    /// The current row's 1-based line.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The file's name as errors give it.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Whether the table has column `col`.
    pub fn has(&self, col: &str) -> bool {
        self.index.contains_key(col)
    }

    /// The current row's value in column `col`, trimmed ("" when absent).
    pub fn text(&self, col: &str) -> &str {
        self.index.get(col).and_then(|&i| self.rec.get(i)).map(str::trim).unwrap_or("")
    }

    /// The error for column `col` of the current row.
    pub fn bad(&self, col: &str, expected: impl Into<String>) -> TraceError {
        TraceError::bad(&self.file, self.line, format!("column '{col}'"), expected, self.text(col))
    }

    /// Column `col` parsed as `T`, or an error saying `expected`.
    pub fn parse<T: std::str::FromStr>(&self, col: &str, expected: &str) -> Result<T, TraceError> {
        self.text(col).parse().map_err(|_| self.bad(col, expected))
    }
}
