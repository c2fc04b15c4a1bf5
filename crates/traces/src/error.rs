//! Trace reading errors: each names the file, and where it applies the line and field.

use std::fmt;

/// Where in a file something went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// File name as given by the user.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// The field, e.g. `field 5 (allocated processors)` or `jobs[3].res`.
    pub field: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(fl) = &self.field {
            write!(f, ": {fl}")?;
        }
        Ok(())
    }
}

/// A trace that cannot be read. Every variant is fatal to the run (bad input: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file cannot be opened or read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// File.
        file: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The gzip stream is truncated or corrupt.
    #[error("{at}: truncated or corrupt gzip data ({detail})")]
    Gzip {
        /// Where reading stopped.
        at: Location,
        /// Decoder's message.
        detail: String,
    },
    /// A value is not what the format expects.
    #[error("{at}: expected {expected}, found '{found}'")]
    BadValue {
        /// Where.
        at: Location,
        /// What was expected.
        expected: String,
        /// What was there.
        found: String,
    },
    /// A line or document has the wrong shape.
    #[error("{at}: {what}")]
    Malformed {
        /// Where.
        at: Location,
        /// What is wrong.
        what: String,
    },
}

impl TraceError {
    pub(crate) fn bad(
        file: &str,
        line: u64,
        field: impl Into<String>,
        expected: impl Into<String>,
        found: &str,
    ) -> Self {
        let mut found = found.to_string();
        if found.len() > 40 {
            let cut = (0..=40).rev().find(|&i| found.is_char_boundary(i)).unwrap_or(0);
            found.truncate(cut);
            found.push('…');
        }
        TraceError::BadValue {
            at: Location { file: file.into(), line: Some(line), field: Some(field.into()) },
            expected: expected.into(),
            found,
        }
    }

    pub(crate) fn malformed(file: &str, line: Option<u64>, field: Option<String>, what: impl Into<String>) -> Self {
        TraceError::Malformed { at: Location { file: file.into(), line, field }, what: what.into() }
    }
}
