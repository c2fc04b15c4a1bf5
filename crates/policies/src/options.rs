//! Options shared by the queue policies.

use crate::spec::{PolicyError, PolicySpec};
use sim_core::SimDuration;
use sim_core::job::JobId;
use sim_core::policy::{PassMode, SchedView};

/// One option a policy takes, for `sim policies` and error messages.
#[derive(Debug, Clone, Copy)]
pub struct OptionInfo {
    /// Key.
    pub key: &'static str,
    /// Allowed values; the first is the default.
    pub values: &'static [&'static str],
    /// What it does.
    pub doc: &'static str,
}

/// The values of an option that takes a non-negative integer.
pub const NUMBER: &[&str] = &["<integer>"];

/// The placeholder that makes an option take any non-negative decimal number: an option
/// declared `values: &["1", DECIMAL]` takes `0`, `0.5`, `2.125`, … and defaults to its first
/// value (`sim policies` prints `1|<non-negative number> (default 1)`). Values are read
/// exactly, never through a float, in thousandths ([`parse_permille`]): at most three
/// decimals, at most [`DECIMAL_MAX`].
pub const DECIMAL: &str = "<non-negative number>";

/// The largest value a [`DECIMAL`] option takes (so products with microsecond times stay
/// far inside `i128`).
pub const DECIMAL_MAX: u64 = 1_000_000;

/// What a bad [`DECIMAL`] value is told it should have been.
const DECIMAL_EXPECTED: &str = "a non-negative number, at most 1000000 with at most 3 decimals, e.g. 0, 0.5, 2";

impl OptionInfo {
    /// Whether it takes any non-negative decimal number ([`DECIMAL`] is among its values).
    pub fn takes_decimal(&self) -> bool {
        self.values.contains(&DECIMAL)
    }
}

/// Reads a non-negative decimal with at most three decimals, up to [`DECIMAL_MAX`], in
/// thousandths, exactly: `"1.5"` → 1500, `"2"` → 2000, `"0.005"` → 5. Signs, exponents,
/// `inf`/`nan` and a bare `.` are refused.
///
/// ```
/// use policies::options::parse_permille;
/// assert_eq!(parse_permille("1.5"), Some(1500));
/// assert_eq!(parse_permille("0"), Some(0));
/// assert_eq!(parse_permille("0.125"), Some(125));
/// assert_eq!(parse_permille("-1"), None);
/// assert_eq!(parse_permille("0.0001"), None);
/// assert_eq!(parse_permille("1e3"), None);
/// ```
pub fn parse_permille(text: &str) -> Option<u64> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || frac.len() > 3 || text.ends_with('.') {
        return None;
    }
    let whole: u64 = int.parse().ok().filter(|&w| w <= DECIMAL_MAX)?;
    let thousandths: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<3}").parse().ok()? };
    let v = whole * 1000 + thousandths;
    (v <= DECIMAL_MAX * 1000).then_some(v)
}

/// Writes thousandths as the shortest decimal that [`parse_permille`] reads back:
/// 1500 → `"1.5"`, 2000 → `"2"`, 5 → `"0.005"`.
///
/// ```
/// use policies::options::{parse_permille, permille_string};
/// assert_eq!(permille_string(1500), "1.5");
/// assert_eq!(permille_string(2000), "2");
/// assert_eq!(permille_string(5), "0.005");
/// assert_eq!(parse_permille(&permille_string(123_456)), Some(123_456));
/// ```
pub fn permille_string(p: u64) -> String {
    let (whole, frac) = (p / 1000, p % 1000);
    if frac == 0 { whole.to_string() } else { format!("{whole}.{}", format!("{frac:03}").trim_end_matches('0')) }
}

/// `pass=per-time|per-event`.
pub const PASS: OptionInfo = OptionInfo {
    key: "pass",
    values: &["per-time", "per-event"],
    doc: "per-time: at each distinct time apply all ends, then all arrivals, then one pass; \
          per-event: one pass after every single event (ends first, equal-time ends in start order)",
};

/// `backfill_estimate=requested|actual`.
pub const BACKFILL_ESTIMATE: OptionInfo = OptionInfo {
    key: "backfill_estimate",
    values: &["requested", "actual"],
    doc: "requested: jobs are planned with their requested time; actual: with their true run time \
          (an ideal predictor, as CQSim offers)",
};

/// `reservation=count|nodes`.
pub const RESERVATION: OptionInfo = OptionInfo {
    key: "reservation",
    values: &["count", "nodes"],
    doc: "count: processors are interchangeable; nodes: every placement and reservation holds \
          specific nodes, the lowest-indexed free for the whole interval (Slurm, Batsim's batsched)",
};

/// `replan=revisit|rebuild` (conservative only).
pub const REPLAN: OptionInfo = OptionInfo {
    key: "replan",
    values: &["revisit", "rebuild"],
    doc: "revisit: when resources are released, each waiting job in queue order is moved to its \
          earliest fit while later ones keep theirs (Batsim's batsched); rebuild: every pass \
          rebuilds all reservations from scratch in queue order (closer to Slurm's backfill cycle)",
};

/// How jobs' lengths are estimated when planning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Estimate {
    /// The requested time (user estimate).
    #[default]
    Requested,
    /// The true run time (clairvoyant).
    Actual,
}

impl Estimate {
    /// The estimate of job `j`.
    pub fn of(self, view: &SchedView<'_>, j: JobId) -> SimDuration {
        match self {
            Estimate::Requested => view.requested(j),
            Estimate::Actual => view.oracle_runtime(j),
        }
    }
}

/// Whether reservations count units or hold specific ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reservation {
    /// Units are interchangeable.
    #[default]
    Count,
    /// Specific units, lowest-indexed first.
    Nodes,
}

/// Checks a spec's keys against `allowed` and returns the chosen value index per key.
pub(crate) struct Chosen<'a> {
    spec: &'a PolicySpec,
}

impl<'a> Chosen<'a> {
    pub(crate) fn check(spec: &'a PolicySpec, allowed: &[OptionInfo]) -> Result<Self, PolicyError> {
        for (k, v) in &spec.options {
            let Some(info) = allowed.iter().find(|o| o.key == k) else {
                return Err(PolicyError::UnknownOption {
                    policy: spec.name.clone(),
                    key: k.clone(),
                    known: if allowed.is_empty() {
                        "(none)".into()
                    } else {
                        allowed.iter().map(|o| o.key).collect::<Vec<_>>().join(", ")
                    },
                });
            };
            if info.takes_decimal() {
                if parse_permille(v).is_none() {
                    return Err(PolicyError::BadValue {
                        policy: spec.name.clone(),
                        key: k.clone(),
                        value: v.clone(),
                        expected: DECIMAL_EXPECTED.into(),
                    });
                }
                continue;
            }
            let number = info.values == NUMBER && v.parse::<u64>().is_ok();
            if !number && !info.values.contains(&v.as_str()) {
                return Err(PolicyError::BadValue {
                    policy: spec.name.clone(),
                    key: k.clone(),
                    value: v.clone(),
                    expected: info.values.join(", "),
                });
            }
        }
        Ok(Chosen { spec })
    }

    /// The value of a numeric option ([`NUMBER`]), if given.
    pub(crate) fn number(&self, opt: OptionInfo) -> Option<u64> {
        self.spec.options.get(opt.key).and_then(|v| v.parse().ok())
    }

    /// The value of a [`DECIMAL`] option in thousandths: the one given, else its default
    /// (its first value).
    pub(crate) fn permille(&self, opt: OptionInfo) -> u64 {
        debug_assert!(opt.takes_decimal(), "option '{}' is not a decimal option", opt.key);
        let given = self.spec.options.get(opt.key).and_then(|v| parse_permille(v));
        given.or_else(|| parse_permille(opt.values[0])).expect("a decimal option's default is a decimal")
    }

    /// Index of the chosen value of `opt` in `opt.values` (0 = default).
    pub(crate) fn index(&self, opt: OptionInfo) -> usize {
        self.spec.options.get(opt.key).and_then(|v| opt.values.iter().position(|x| x == v)).unwrap_or(0)
    }

    pub(crate) fn pass(&self) -> PassMode {
        [PassMode::PerTime, PassMode::PerEvent][self.index(PASS)]
    }
    pub(crate) fn estimate(&self) -> Estimate {
        [Estimate::Requested, Estimate::Actual][self.index(BACKFILL_ESTIMATE)]
    }
    pub(crate) fn reservation(&self) -> Reservation {
        [Reservation::Count, Reservation::Nodes][self.index(RESERVATION)]
    }
}

/// Canonical text of a spec: every option of the policy, in declaration order.
pub(crate) fn canonical(name: &str, opts: &[(OptionInfo, usize)]) -> String {
    let pairs: Vec<(&str, String)> = opts.iter().map(|(o, i)| (o.key, o.values[*i].to_string())).collect();
    canonical_values(name, &pairs)
}

/// Canonical text of a spec from `(key, value)` pairs in declaration order, for policies
/// with options whose values are not enumerated ([`DECIMAL`], [`NUMBER`]): `name[k=v,...]`.
pub(crate) fn canonical_values(name: &str, opts: &[(&str, String)]) -> String {
    if opts.is_empty() {
        return name.to_string();
    }
    let body: Vec<String> = opts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{name}[{}]", body.join(","))
}

pub(crate) fn pass_index(p: PassMode) -> usize {
    match p {
        PassMode::PerTime => 0,
        PassMode::PerEvent => 1,
    }
}
