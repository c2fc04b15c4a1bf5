//! `sim compare --vary KEY=V1,V2,...`: one run per value (per combination, when several
//! keys vary), each compared as a policy of its own (`kube checkpoint_interval=600`), as
//! a parameter sweep over a scheduler's or a job's setting is read in Batsim or
//! SimGrid studies. The keys are the run settings whose effect is a curve:
//! the checkpoint interval (the U-shaped curve of lost work, Young 1974, Daly 2006), its
//! write and restore costs; and any option of an attached controller, as
//! `CONTROLLER.OPTION` (`inference-service.target=8,11,14`,
//! `cluster-autoscaler.scale_down_unneeded_time=60,600`: the cost against the SLO).

use crate::RunError;
use crate::run::RunOptions;
use std::collections::BTreeMap;

/// The settings a comparison can vary, with what their values are.
pub const KEYS: &[(&str, &str)] = &[
    ("checkpoint_interval", "the --checkpoint interval: seconds, or auto (Young's optimum)"),
    ("checkpoint_cost", "the --checkpoint cost: seconds to write one"),
    ("checkpoint_restore", "the --checkpoint restore: seconds to read one back"),
];

/// One combination of values, by key.
pub type Variant = BTreeMap<String, String>;

/// The combinations of `--vary` flags (`KEY=V1,V2,...` each): every value of the first
/// key with every value of the next, in the order given; one empty combination without
/// flags.
pub fn parse(flags: &[String]) -> Result<Vec<Variant>, RunError> {
    let bad = |f: &str, what: String| RunError::BadInput(format!("--vary '{f}': {what}"));
    let mut out = vec![Variant::new()];
    for f in flags {
        let (key, values) = f.split_once('=').ok_or_else(|| bad(f, "expected KEY=V1,V2,...".into()))?;
        let key = key.trim();
        if let Some((name, option)) = key.split_once('.') {
            check_controller_option(name, option).map_err(|what| bad(f, what))?;
        } else if !KEYS.iter().any(|(k, _)| *k == key) {
            let known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            return Err(bad(
                f,
                format!("unknown key '{key}', expected one of {} or CONTROLLER.OPTION", known.join(", ")),
            ));
        }
        if out[0].contains_key(key) {
            return Err(bad(f, format!("{key} is varied twice")));
        }
        let values: Vec<&str> = values.split(',').map(str::trim).filter(|v| !v.is_empty()).collect();
        if values.is_empty() {
            return Err(bad(f, "expected at least one value".into()));
        }
        for (i, v) in values.iter().enumerate() {
            check_value(key, v).map_err(|what| bad(f, what))?;
            if values[..i].contains(v) {
                return Err(bad(f, format!("value '{v}' is given twice")));
            }
        }
        out = out
            .into_iter()
            .flat_map(|base| {
                values.iter().map(move |v| {
                    let mut c = base.clone();
                    c.insert(key.to_string(), v.to_string());
                    c
                })
            })
            .collect();
    }
    Ok(out)
}

/// Whether `name` is a controller that takes `option`.
fn check_controller_option(name: &str, option: &str) -> Result<(), String> {
    let entry = controllers::REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = controllers::REGISTRY.iter().map(|e| e.name).collect();
        format!("unknown controller '{name}', expected one of {}", known.join(", "))
    })?;
    if entry.options.iter().any(|o| o.key == option) {
        Ok(())
    } else {
        let known: Vec<&str> = entry.options.iter().map(|o| o.key).collect();
        Err(format!("{name} has no option '{option}', expected one of {}", known.join(", ")))
    }
}

/// `spec` with the options `v` gives its controller (`NAME.OPTION` keys); `None` when it
/// gives none.
pub fn controller_spec(spec: &str, v: &Variant) -> Result<Option<String>, RunError> {
    let mut parsed: sim_core::spec::Spec =
        spec.parse().map_err(|e| RunError::BadInput(format!("--controller '{spec}': {e}")))?;
    let mut changed = false;
    for (key, value) in v {
        if let Some((name, option)) = key.split_once('.')
            && name == parsed.name
        {
            parsed.options.insert(option.to_string(), value.clone());
            changed = true;
        }
    }
    let body: Vec<String> = parsed.options.iter().map(|(k, x)| format!("{k}={x}")).collect();
    Ok(changed.then(|| format!("{}[{}]", parsed.name, body.join(","))))
}

/// Whether `v` is a value `key` takes.
fn check_value(key: &str, v: &str) -> Result<(), String> {
    if key.contains('.') {
        // A controller's option: checked when the controller is built.
        return Ok(());
    }
    if key == "checkpoint_interval" && v == "auto" {
        return Ok(());
    }
    match sim_core::time::parse_secs_micros(v) {
        Ok(0) if key == "checkpoint_interval" => Err("interval: expected more than 0 seconds, or auto".into()),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("'{v}': {e}, expected seconds")),
    }
}

/// `base` with the settings of `v` applied and recorded (`RunOptions::variant`).
pub fn apply(base: &RunOptions, v: &Variant) -> Result<RunOptions, RunError> {
    let mut o = base.clone();
    for (key, value) in v.iter().filter(|(k, _)| !k.contains('.')) {
        let field = key.strip_prefix("checkpoint_").expect("every key is a checkpoint setting");
        let Some(text) = &o.checkpoint else {
            return Err(RunError::BadInput(format!(
                "--vary {key}: needs --checkpoint (e.g. --checkpoint interval=3600,cost=60,restore=120)"
            )));
        };
        let mut parts: Vec<String> = text
            .split(',')
            .filter(|p| !p.is_empty() && p.split('=').next().map(str::trim) != Some(field))
            .map(String::from)
            .collect();
        parts.push(format!("{field}={value}"));
        o.checkpoint = Some(parts.join(","));
    }
    o.variant = v.clone();
    Ok(o)
}

/// What a variant adds to a run folder's name (`__checkpoint_interval_600`; empty for none).
pub fn folder_part(v: &Variant) -> String {
    use crate::compare::safe_name;
    v.iter().map(|(k, x)| format!("__{}_{}", safe_name(k), safe_name(x))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_in_flag_order() {
        let v = parse(&["checkpoint_interval=600,auto".into(), "checkpoint_cost=30,60".into()]).unwrap();
        let shown: Vec<String> = v.iter().map(folder_part).collect();
        assert_eq!(
            shown,
            [
                "__checkpoint_cost_30__checkpoint_interval_600",
                "__checkpoint_cost_60__checkpoint_interval_600",
                "__checkpoint_cost_30__checkpoint_interval_auto",
                "__checkpoint_cost_60__checkpoint_interval_auto",
            ]
        );
        assert_eq!(parse(&[]).unwrap(), vec![Variant::new()]);
        for bad in
            ["speed=1", "checkpoint_interval=0", "checkpoint_interval=x", "checkpoint_interval=", "checkpoint_cost=5,5"]
        {
            assert!(parse(&[bad.into()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn controller_options_are_varied_by_name() {
        let v = parse(&["inference-service.target=8,12".into()]).unwrap();
        assert_eq!(v.len(), 2);
        let spec = controller_spec("inference-service[name=chat,target=5]", &v[1]).unwrap();
        assert_eq!(spec.as_deref(), Some("inference-service[name=chat,target=12]"));
        assert_eq!(controller_spec("cluster-autoscaler", &v[1]).unwrap(), None);
        for bad in ["inference-service.nope=1", "nope.target=1"] {
            let e = parse(&[bad.into()]).unwrap_err().to_string();
            assert!(e.contains("expected one of"), "{bad}: {e}");
        }
        // The checkpoint is left alone.
        let o = apply(&RunOptions::default(), &v[0]).unwrap();
        assert_eq!((o.checkpoint, o.variant.len()), (None, 1));
    }

    #[test]
    fn a_variant_replaces_its_checkpoint_field() {
        let base = RunOptions { checkpoint: Some("interval=600,cost=60,restore=120".into()), ..RunOptions::default() };
        let v = &parse(&["checkpoint_interval=auto".into()]).unwrap()[0];
        let o = apply(&base, v).unwrap();
        assert_eq!(o.checkpoint.as_deref(), Some("cost=60,restore=120,interval=auto"));
        assert_eq!(o.variant.get("checkpoint_interval").map(String::as_str), Some("auto"));
        assert!(apply(&RunOptions::default(), v).is_err());
    }
}
