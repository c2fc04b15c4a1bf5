//! Policy specs: `name` or `name[key=value,key=value]`, as DSLab's resolver takes them.

use std::collections::BTreeMap;

/// Errors building a policy from a spec. All are usage errors (exit status 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The spec is not `name[key=value,...]`.
    #[error("policy spec '{spec}': {what} (expected name or name[key=value,...])")]
    Malformed {
        /// The spec as given.
        spec: String,
        /// What is wrong.
        what: String,
    },
    /// No policy has this name.
    #[error("unknown policy '{name}' (expected one of: {known})")]
    UnknownPolicy {
        /// The name.
        name: String,
        /// Every registered name.
        known: String,
    },
    /// The policy has no such option.
    #[error("policy '{policy}': unknown option '{key}' (expected one of: {known})")]
    UnknownOption {
        /// The policy.
        policy: String,
        /// The option.
        key: String,
        /// Its options.
        known: String,
    },
    /// The option's value is not one it takes.
    #[error("policy '{policy}': option '{key}' cannot be '{value}' (expected one of: {expected})")]
    BadValue {
        /// The policy.
        policy: String,
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
pub struct PolicySpec {
    /// Policy name.
    pub name: String,
    /// Options, by key.
    pub options: BTreeMap<String, String>,
}

impl std::str::FromStr for PolicySpec {
    type Err = PolicyError;

    /// ```
    /// let s: policies::PolicySpec = "easy[pass=per-event, reservation=nodes]".parse().unwrap();
    /// assert_eq!(s.name, "easy");
    /// assert_eq!(s.options["reservation"], "nodes");
    /// ```
    fn from_str(spec: &str) -> Result<Self, PolicyError> {
        let bad = |what: &str| PolicyError::Malformed { spec: spec.to_string(), what: what.to_string() };
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
                let (k, v) = part.split_once('=').ok_or_else(|| bad(&format!("option '{part}' has no '='")))?;
                let (k, v) = (k.trim(), v.trim());
                if k.is_empty() || v.is_empty() {
                    return Err(bad(&format!("option '{part}' needs a key and a value")));
                }
                if options.insert(k.to_string(), v.to_string()).is_some() {
                    return Err(bad(&format!("option '{k}' given twice")));
                }
            }
        }
        Ok(PolicySpec { name: name.to_string(), options })
    }
}
