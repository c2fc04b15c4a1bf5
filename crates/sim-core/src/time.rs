//! Simulated time: integer microseconds, never floats.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, Sub};

/// Microseconds in one second.
pub const MICROS_PER_SEC: u64 = 1_000_000;

/// A point in simulated time, in microseconds since the start of the trace's clock.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimTime(pub u64);

/// A length of simulated time, in microseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// Time zero.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable time (about 584,000 years).
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// From whole seconds.
    pub const fn from_secs(s: u64) -> SimTime {
        SimTime(s * MICROS_PER_SEC)
    }
    /// Microseconds since time zero.
    pub const fn as_micros(self) -> u64 {
        self.0
    }
    /// `self + d`, or `None` on overflow.
    pub fn checked_add(self, d: SimDuration) -> Option<SimTime> {
        self.0.checked_add(d.0).map(SimTime)
    }
    /// `self + d`, saturating at [`SimTime::MAX`].
    pub fn saturating_add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
    /// `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
    /// The next representable instant (one microsecond later).
    pub fn next_tick(self) -> SimTime {
        SimTime(self.0.saturating_add(1))
    }
}

impl SimDuration {
    /// Zero length.
    pub const ZERO: SimDuration = SimDuration(0);
    /// From whole seconds.
    pub const fn from_secs(s: u64) -> SimDuration {
        SimDuration(s * MICROS_PER_SEC)
    }
    /// Microseconds.
    pub const fn as_micros(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for metrics only (never for simulation decisions).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / MICROS_PER_SEC as f64
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        self.saturating_add(d)
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, earlier: SimTime) -> SimDuration {
        self.saturating_since(earlier)
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, o: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(o.0))
    }
}

/// A time or duration in seconds for machine-readable outputs (the decision log): a JSON
/// number, an integer when whole, else the shortest decimal that reads back as the same
/// double (exact to the microsecond below about 10^9 s).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Secs(pub u64);

impl Serialize for Secs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 % MICROS_PER_SEC == 0 {
            s.serialize_u64(self.0 / MICROS_PER_SEC)
        } else {
            s.serialize_f64(self.0 as f64 / MICROS_PER_SEC as f64)
        }
    }
}

/// Writes microseconds as seconds exactly: an integer when integral, else up to six
/// decimals with trailing zeros removed (`12`, `12.5`, `4.709164`).
pub fn write_secs(out: &mut impl fmt::Write, micros: u64) -> fmt::Result {
    let whole = micros / MICROS_PER_SEC;
    let frac = micros % MICROS_PER_SEC;
    out.write_str(itoa::Buffer::new().format(whole))?;
    if frac != 0 {
        let mut digits = [b'0'; 6];
        let mut f = frac;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (f % 10) as u8;
            f /= 10;
        }
        let len = 6 - digits.iter().rev().take_while(|&&d| d == b'0').count();
        out.write_char('.')?;
        out.write_str(std::str::from_utf8(&digits[..len]).expect("ASCII digits"))?;
    }
    Ok(())
}

/// [`write_secs`] into a new string.
pub fn secs_string(micros: u64) -> String {
    let mut s = String::new();
    let _ = write_secs(&mut s, micros);
    s
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_secs(f, self.0)?;
        f.write_str("s")
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_secs(f, self.0)?;
        f.write_str("s")
    }
}

/// Why a decimal seconds string could not be turned into microseconds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecsParseError {
    /// Not a decimal number.
    #[error("expected a number of seconds")]
    NotANumber,
    /// Negative where a time was expected.
    #[error("expected a non-negative number of seconds")]
    Negative,
    /// Too large for 64-bit microseconds.
    #[error("number of seconds too large")]
    TooLarge,
}

/// Parses a decimal number of seconds (`12`, `12.5`, `4.709164021244639`, `1e3`,
/// `-0`) into microseconds exactly, rounding half up at the sixth decimal.
///
/// ```
/// use sim_core::time::parse_secs_micros;
/// assert_eq!(parse_secs_micros("4.7091645"), Ok(4_709_165));
/// assert_eq!(parse_secs_micros("16000"), Ok(16_000_000_000));
/// assert_eq!(parse_secs_micros("1.5e2"), Ok(150_000_000));
/// ```
pub fn parse_secs_micros(text: &str) -> Result<u64, SecsParseError> {
    let s = text.trim();
    // Fast path: plain whole seconds, the common case in traces.
    if !s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit()) {
        let v = s.bytes().fold(0u64, |v, b| v * 10 + (b - b'0') as u64);
        return Ok(v * MICROS_PER_SEC);
    }
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => {
            let e: i32 = s[i + 1..].parse().map_err(|_| SecsParseError::NotANumber)?;
            (&s[..i], e)
        }
        None => (s, 0),
    };
    let (int_part, frac_part) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(SecsParseError::NotANumber);
    }
    if !int_part.bytes().all(|b| b.is_ascii_digit()) || !frac_part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SecsParseError::NotANumber);
    }
    // All digits, and the position of the decimal point after scaling to microseconds.
    let digits: Vec<u8> = int_part.bytes().chain(frac_part.bytes()).map(|b| b - b'0').collect();
    let point = int_part.len() as i64 + 6 + exp as i64; // digits before the µs point
    let mut value: u128 = 0;
    let mut round_up = false;
    for (i, &d) in digits.iter().enumerate() {
        let i = i as i64;
        if i < point {
            value = value * 10 + d as u128;
            if value > u64::MAX as u128 {
                return Err(SecsParseError::TooLarge);
            }
        } else if i == point {
            round_up = d >= 5;
            break;
        }
    }
    let kept = digits.len() as i64;
    if point > kept && value != 0 {
        // A nonzero value overflows within 20 more digits; zero stays zero however large
        // the exponent (so `0e2147483647` costs nothing).
        if point - kept > 20 {
            return Err(SecsParseError::TooLarge);
        }
        for _ in 0..(point - kept) {
            value *= 10;
            if value > u64::MAX as u128 {
                return Err(SecsParseError::TooLarge);
            }
        }
    }
    if round_up {
        value += 1;
    }
    if value > u64::MAX as u128 {
        return Err(SecsParseError::TooLarge);
    }
    if neg && value != 0 {
        return Err(SecsParseError::Negative);
    }
    Ok(value as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exactly() {
        assert_eq!(parse_secs_micros("0"), Ok(0));
        assert_eq!(parse_secs_micros("0.0"), Ok(0));
        assert_eq!(parse_secs_micros("-0"), Ok(0));
        assert_eq!(parse_secs_micros("4.709164021244639"), Ok(4_709_164));
        assert_eq!(parse_secs_micros("10759.738951016447"), Ok(10_759_738_951));
        assert_eq!(parse_secs_micros("0.0000005"), Ok(1));
        assert_eq!(parse_secs_micros("0.0000004999"), Ok(0));
        assert_eq!(parse_secs_micros(".5"), Ok(500_000));
        assert_eq!(parse_secs_micros("7."), Ok(7_000_000));
        assert_eq!(parse_secs_micros("2.5E-1"), Ok(250_000));
        assert_eq!(parse_secs_micros("1e-7"), Ok(0));
        assert_eq!(parse_secs_micros("5e-7"), Ok(1));
        assert_eq!(parse_secs_micros("-1"), Err(SecsParseError::Negative));
        assert_eq!(parse_secs_micros("abc"), Err(SecsParseError::NotANumber));
        assert_eq!(parse_secs_micros(""), Err(SecsParseError::NotANumber));
        assert_eq!(parse_secs_micros("1e30"), Err(SecsParseError::TooLarge));
        assert_eq!(parse_secs_micros("1.2.3"), Err(SecsParseError::NotANumber));
        assert_eq!(parse_secs_micros("0e2147483647"), Ok(0));
        assert_eq!(parse_secs_micros("1e2147483647"), Err(SecsParseError::TooLarge));
        assert_eq!(parse_secs_micros("1e13"), Ok(10_000_000_000_000_000_000));
    }

    #[test]
    fn writes_exactly() {
        assert_eq!(secs_string(0), "0");
        assert_eq!(secs_string(12_000_000), "12");
        assert_eq!(secs_string(12_500_000), "12.5");
        assert_eq!(secs_string(4_709_164), "4.709164");
        assert_eq!(secs_string(1), "0.000001");
    }
}
