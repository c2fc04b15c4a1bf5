//! Plug-in specs: `name` or `name[key=value,key=value]`, as DSLab's resolver takes them,
//! for policies and controllers alike, with the options machinery both use: what each
//! option takes, checking a spec against it, exact decimal values, canonical text.

use std::collections::BTreeMap;

/// Errors building a plug-in from a spec. All are usage errors (exit status 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The spec is not `name[key=value,...]`.
    #[error("spec '{spec}': {what} (expected name or name[key=value,...])")]
    Malformed {
        /// The spec as given.
        spec: String,
        /// What is wrong.
        what: String,
    },
    /// No plug-in of this kind has this name.
    #[error("unknown {kind} '{name}' (expected one of: {known})")]
    UnknownName {
        /// `policy` or `controller`.
        kind: &'static str,
        /// The name.
        name: String,
        /// Every registered name.
        known: String,
    },
    /// The plug-in has no such option.
    #[error("{kind} '{plugin}': unknown option '{key}' (expected one of: {known})")]
    UnknownOption {
        /// `policy` or `controller`.
        kind: &'static str,
        /// The plug-in.
        plugin: String,
        /// The option.
        key: String,
        /// Its options.
        known: String,
    },
    /// The option's value is not one it takes.
    #[error("{kind} '{plugin}': option '{key}' cannot be '{value}' (expected one of: {expected})")]
    BadValue {
        /// `policy` or `controller`.
        kind: &'static str,
        /// The plug-in.
        plugin: String,
        /// The option.
        key: String,
        /// The value.
        value: String,
        /// Allowed values.
        expected: String,
    },
}

/// A parsed spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Plug-in name.
    pub name: String,
    /// Options, by key.
    pub options: BTreeMap<String, String>,
}

impl std::str::FromStr for Spec {
    type Err = SpecError;

    /// ```
    /// let s: sim_core::spec::Spec = "easy[pass=per-event, reservation=nodes]".parse().unwrap();
    /// assert_eq!(s.name, "easy");
    /// assert_eq!(s.options["reservation"], "nodes");
    /// let flag: sim_core::spec::Spec = "bridge[shared]".parse().unwrap();
    /// assert_eq!(flag.options["shared"], "true");
    /// ```
    fn from_str(spec: &str) -> Result<Self, SpecError> {
        let bad = |what: &str| SpecError::Malformed { spec: spec.to_string(), what: what.to_string() };
        let s = spec.trim();
        let (name, rest) = match s.find('[') {
            Some(i) => {
                let inner = s[i + 1..].strip_suffix(']').ok_or_else(|| bad("missing closing ']'"))?;
                (&s[..i], Some(inner))
            }
            None => (s, None),
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(bad("the name must be letters, digits, '-' or '_'"));
        }
        let mut options = BTreeMap::new();
        if let Some(inner) = rest {
            for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                // A bare key is a flag set to true (`bridge[shared]`).
                let (k, v) = part.split_once('=').unwrap_or((part, "true"));
                let (k, v) = (k.trim(), v.trim());
                if k.is_empty() || v.is_empty() {
                    return Err(bad(&format!("option '{part}' needs a key and a value")));
                }
                if options.insert(k.to_string(), v.to_string()).is_some() {
                    return Err(bad(&format!("option '{k}' given twice")));
                }
            }
        }
        Ok(Spec { name: name.to_string(), options })
    }
}

/// One option a plug-in takes, for `sim policies`, `sim controllers` and error messages.
#[derive(Debug, Clone, Copy)]
pub struct OptionInfo {
    /// Key.
    pub key: &'static str,
    /// Allowed values; the first is the default.
    pub values: &'static [&'static str],
    /// What it does.
    pub doc: &'static str,
}

/// The values of an option that takes a non-negative integer. An option may also list
/// `NUMBER[0]` after named values (`&["adaptive", "all", "<integer>"]`): it takes those names
/// or an integer.
pub const NUMBER: &[&str] = &["<integer>"];

/// The placeholder that makes an option take any non-negative decimal number: an option
/// declared `values: &["1", DECIMAL]` takes `0`, `0.5`, `2.125`, … and defaults to its first
/// value (listed as `1|<non-negative number> (default 1)`). Values are read exactly,
/// never through a float, in thousandths ([`parse_permille`]): at most three decimals, at
/// most [`DECIMAL_MAX`].
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
/// use sim_core::spec::parse_permille;
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
/// use sim_core::spec::{parse_permille, permille_string};
/// assert_eq!(permille_string(1500), "1.5");
/// assert_eq!(permille_string(2000), "2");
/// assert_eq!(permille_string(5), "0.005");
/// assert_eq!(parse_permille(&permille_string(123_456)), Some(123_456));
/// ```
pub fn permille_string(p: u64) -> String {
    let (whole, frac) = (p / 1000, p % 1000);
    if frac == 0 { whole.to_string() } else { format!("{whole}.{}", format!("{frac:03}").trim_end_matches('0')) }
}

/// A spec checked against the options its plug-in takes: each key known, each value
/// allowed; then the chosen values by option.
pub struct Chosen<'a> {
    spec: &'a Spec,
}

impl<'a> Chosen<'a> {
    /// Checks `spec`'s keys and values against `allowed` (`kind`: `policy` or
    /// `controller`, for the messages).
    pub fn check(spec: &'a Spec, allowed: &[OptionInfo], kind: &'static str) -> Result<Self, SpecError> {
        for (k, v) in &spec.options {
            let Some(info) = allowed.iter().find(|o| o.key == k) else {
                return Err(SpecError::UnknownOption {
                    kind,
                    plugin: spec.name.clone(),
                    key: k.clone(),
                    known: if allowed.is_empty() {
                        "(none)".into()
                    } else {
                        allowed.iter().map(|o| o.key).collect::<Vec<_>>().join(", ")
                    },
                });
            };
            let bad = |expected: String| SpecError::BadValue {
                kind,
                plugin: spec.name.clone(),
                key: k.clone(),
                value: v.clone(),
                expected,
            };
            if info.takes_decimal() {
                if parse_permille(v).is_none() {
                    return Err(bad(DECIMAL_EXPECTED.into()));
                }
                continue;
            }
            // An option may take an integer besides named values (`adaptive|all|<integer>`).
            let number = info.values.contains(&NUMBER[0]) && v.parse::<u64>().is_ok();
            if !number && !info.values.contains(&v.as_str()) {
                return Err(bad(info.values.join(", ")));
            }
        }
        Ok(Chosen { spec })
    }

    /// The value of a numeric option ([`NUMBER`]), if given.
    pub fn number(&self, opt: OptionInfo) -> Option<u64> {
        self.spec.options.get(opt.key).and_then(|v| v.parse().ok())
    }

    /// The value of a [`DECIMAL`] option in thousandths: the one given, else its default
    /// (its first value).
    pub fn permille(&self, opt: OptionInfo) -> u64 {
        debug_assert!(opt.takes_decimal(), "option '{}' is not a decimal option", opt.key);
        let given = self.spec.options.get(opt.key).and_then(|v| parse_permille(v));
        given.or_else(|| parse_permille(opt.values[0])).expect("a decimal option's default is a decimal")
    }

    /// Index of the chosen value of `opt` in `opt.values` (0 = default).
    pub fn index(&self, opt: OptionInfo) -> usize {
        self.spec.options.get(opt.key).and_then(|v| opt.values.iter().position(|x| x == v)).unwrap_or(0)
    }
}

/// Canonical text of a spec: every option of the plug-in, in declaration order.
pub fn canonical(name: &str, opts: &[(OptionInfo, usize)]) -> String {
    let pairs: Vec<(&str, String)> = opts.iter().map(|(o, i)| (o.key, o.values[*i].to_string())).collect();
    canonical_values(name, &pairs)
}

/// Canonical text of a spec from `(key, value)` pairs in declaration order, for plug-ins
/// with options whose values are not enumerated ([`DECIMAL`], [`NUMBER`]): `name[k=v,...]`.
pub fn canonical_values(name: &str, opts: &[(&str, String)]) -> String {
    if opts.is_empty() {
        return name.to_string();
    }
    let body: Vec<String> = opts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{name}[{}]", body.join(","))
}
