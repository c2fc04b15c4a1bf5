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
    /// The names behind the dense ids it gave (none by default).
    fn names(&self) -> Names {
        Names::default()
    }
}

/// The names behind a workload's dense ids, where its format has names (sacct's `QOS`
/// and `Partition`): id `i` is entry `i - 1`. Empty when the format gives numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// Queue names (Slurm QOS), by queue id.
    pub queues: Vec<String>,
    /// Partition names, by partition id.
    pub partitions: Vec<String>,
    /// User names, by user id.
    pub users: Vec<String>,
    /// Account names (Slurm's `Account`, a job's group), by group id.
    pub accounts: Vec<String>,
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

    /// The id of `name` as a queue or partition number: -1 (unknown, as in SWF and the
    /// native format) for an empty one.
    pub fn id_i32(&mut self, name: &str) -> i32 {
        if name.is_empty() {
            return -1;
        }
        i32::try_from(self.id(name)).unwrap_or(i32::MAX)
    }

    /// The names in id order (id 1 first).
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<(u32, &String)> = self.0.iter().map(|(n, &i)| (i, n)).collect();
        v.sort_unstable();
        v.into_iter().map(|(_, n)| n.clone()).collect()
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

/// Whether a field says "no value": empty, or `Unknown`, `None`, `NaN`, `null`, `\N`
/// (Slurm's and the data tools' spellings), in any case.
pub fn missing(text: &str) -> bool {
    text.is_empty() || ["unknown", "none", "nan", "null", "\\N"].iter().any(|m| text.eq_ignore_ascii_case(m))
}

/// A Slurm job state as sacct and the Slurm-derived logs (Helios) print it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlurmState {
    /// `COMPLETED`.
    Completed,
    /// `FAILED`, `NODE_FAIL`, `OUT_OF_MEMORY`, `BOOT_FAIL`, `DEADLINE`.
    Failed,
    /// `TIMEOUT`: killed at its time limit.
    Timeout,
    /// `CANCELLED` (by a user or an administrator).
    Cancelled,
    /// `PREEMPTED`: ended by the scheduler for a higher-priority job.
    Preempted,
    /// `PENDING`: not started at the dump.
    Pending,
    /// `SUSPENDED`.
    Suspended,
    /// `RUNNING`, `REQUEUED`, `RESIZING`, `COMPLETING` and the other transient states.
    Active,
    /// `REVOKED`: a federated sibling that ran on another cluster.
    Revoked,
}

/// The state a Slurm `State` field names: its first word (`CANCELLED by 1234`), any case,
/// a trailing `+` (more states follow) dropped; `None` for no Slurm state.
pub fn slurm_state(text: &str) -> Option<SlurmState> {
    let word = text.split_whitespace().next().unwrap_or("").trim_end_matches('+');
    Some(match word.to_ascii_uppercase().as_str() {
        "COMPLETED" => SlurmState::Completed,
        "FAILED" | "NODE_FAIL" | "OUT_OF_MEMORY" | "BOOT_FAIL" | "DEADLINE" => SlurmState::Failed,
        "TIMEOUT" => SlurmState::Timeout,
        "CANCELLED" => SlurmState::Cancelled,
        "PREEMPTED" => SlurmState::Preempted,
        "PENDING" => SlurmState::Pending,
        "SUSPENDED" => SlurmState::Suspended,
        "RUNNING" | "REQUEUED" | "RESIZING" | "COMPLETING" | "CONFIGURING" | "STOPPED" | "SIGNALING" | "STAGE_OUT"
        | "REQUEUE_FED" | "REQUEUE_HOLD" | "SPECIAL_EXIT" | "RESV_DEL_HOLD" | "UPDATE_DB" | "POWER_UP_NODE" => {
            SlurmState::Active
        }
        "REVOKED" => SlurmState::Revoked,
        _ => return None,
    })
}

/// A CSV table read row by row, its columns looked up by header name.
pub struct CsvRows {
    file: String,
    rd: csv::Reader<Box<dyn BufRead>>,
    index: BTreeMap<String, usize>,
    rec: csv::StringRecord,
    line: u64,
    /// Fields a row may hold (the header's), `None` for a headerless table.
    width: Option<usize>,
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
        let width = Some(names.len());
        Self::check(file, names, required).map(|index| CsvRows {
            file: file.into(),
            rd,
            index,
            rec: csv::StringRecord::new(),
            line: 1,
            width,
        })
    }

    /// Opens a table without a header row, whose columns are `columns` in order (the
    /// Alibaba PAI tables ship their header in a separate file). A first row equal to
    /// `columns` is taken as a header and skipped.
    pub fn with_columns(input: TraceInput, file: &str, columns: &[&str]) -> Result<Self, TraceError> {
        let rd = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(input.reader);
        let names = columns.iter().map(|c| c.to_string()).collect();
        let index = Self::check(file, names, columns)?;
        Ok(CsvRows { file: file.into(), rd, index, rec: csv::StringRecord::new(), line: 0, width: None })
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
            // A blank line; a row of empty fields (`,,,`) goes on, to be refused or skipped
            // by its reader.
            if self.rec.len() <= 1 && self.rec.iter().all(|f| f.trim().is_empty()) {
                continue;
            }
            // More fields than the header names shift every later column (a `|` inside a
            // sacct JobName, say): refused rather than read wrongly. Trailing empty fields
            // (sacct --parsable's final `|`) are harmless.
            if let Some(w) = self.width
                && self.rec.len() > w
                && self.rec.iter().skip(w).any(|f| !f.trim().is_empty())
            {
                return Err(TraceError::malformed(
                    &self.file,
                    Some(self.line),
                    None,
                    format!("{} fields, but the header names {w} (a value holding the separator?)", self.rec.len()),
                ));
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

    /// Column `col` as a whole number in `min..=max`.
    pub fn count_in(&self, col: &str, min: u32, max: u32) -> Result<u32, TraceError> {
        match self.text(col).parse::<u32>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(self.bad(col, format!("an integer {min}..={max}"))),
        }
    }

    /// Column `col` as a civil time (`YYYY-MM-DD HH:MM:SS`), in seconds since `epoch`
    /// (seconds from 1970 of the format's time zero); `Ok(None)` when it is before it.
    pub fn civil_since(&self, col: &str, epoch: i64) -> Result<Option<u64>, TraceError> {
        let secs = civil_secs(self.text(col)).ok_or_else(|| self.bad(col, "a date and time YYYY-MM-DD HH:MM:SS"))?;
        Ok(u64::try_from(secs - epoch).ok())
    }

    /// Column `col` parsed as `T`, or an error saying `expected`.
    pub fn parse<T: std::str::FromStr>(&self, col: &str, expected: &str) -> Result<T, TraceError> {
        self.text(col).parse().map_err(|_| self.bad(col, expected))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_and_times() {
        assert_eq!(civil_secs("1970-01-01 00:00:00"), Some(0));
        assert_eq!(civil_secs("2000-03-01 00:00:01"), Some(951_868_801));
        assert_eq!(civil_secs("2017-09-01 00:00:00"), Some(1_504_224_000));
        assert_eq!(civil_secs("2020-04-01 00:00:00"), Some(1_585_699_200));
        assert_eq!(civil_secs("2020-02-29 23:59:59"), Some(1_583_020_799));
        assert_eq!(civil_secs("2017-01-01T00:00:00"), Some(1_483_228_800));
        for bad in [
            "2019-02-29 00:00:00",
            "2017-04-31 00:00:00",
            "2017-13-01 00:00:00",
            "2017-00-10 00:00:00",
            "2017-01-01 24:00:00",
            "2017-01-01 00:60:00",
            "2017-1-01 00:00:00 ",
            "2017-01-01 00:00:0x",
            "+017-01-01 00:00:00",
            "",
            "2017-01-01 00:00:00.5",
        ] {
            assert_eq!(civil_secs(bad), None, "{bad}");
        }
    }

    #[test]
    fn dense_ids_in_first_seen_order() {
        let mut d = DenseIds::default();
        assert_eq!([d.id("b"), d.id("a"), d.id("b"), d.id(""), d.id("c")], [1, 2, 1, 0, 3]);
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn civil_days_and_strings() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(civil_secs("2024-03-01T10:15:00"), Some(1_709_288_100));
        assert_eq!(civil_secs("Unknown"), None);
        assert_eq!(civil_day_string(days_from_civil(2024, 2, 29)), "2024-02-29T00:00:00");
        assert_eq!(civil_day_string(-1), "1969-12-31T00:00:00");
    }

    #[test]
    fn slurm_states_and_missing_values() {
        assert_eq!(slurm_state("CANCELLED by 1234"), Some(SlurmState::Cancelled));
        assert_eq!(slurm_state("completed"), Some(SlurmState::Completed));
        assert_eq!(slurm_state("RUNNING+"), Some(SlurmState::Active));
        assert_eq!(slurm_state("NODE_FAIL"), Some(SlurmState::Failed));
        assert_eq!(slurm_state("DONE"), None);
        assert!(missing("") && missing("Unknown") && missing("NaN") && missing("\\N") && !missing("0"));
    }
}
