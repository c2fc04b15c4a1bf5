//! Arbitrary input never panics the controllers' readers: request-rate CSV files and
//! controller specs with arbitrary option values.

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rate_csv_never_panics(
        header in prop::sample::subsequence(vec!["time", "rps", "x"], 0..3),
        rows in prop::collection::vec(prop::collection::vec("[ -~]{0,10}", 0..4), 0..6),
    ) {
        let mut text = header.join(",");
        for r in rows {
            text.push('\n');
            text.push_str(&r.join(","));
        }
        let _ = controllers::service::rate::RateSeries::parse_csv("fuzz.csv", &text);
    }

    /// Every registered controller's options with arbitrary values: built or refused.
    #[test]
    fn controller_specs_never_panic(which in 0usize..16, option in 0usize..32, value in "[!-+--Z^-~]{0,12}") {
        let entry = &controllers::REGISTRY[which % controllers::REGISTRY.len()];
        if let Some(o) = entry.options.get(option % entry.options.len().max(1)) {
            let spec = format!("{}[{}={value}]", entry.name, o.key);
            let _ = controllers::build(&spec, 0, 0);
        }
    }

    /// The latency model at any load: percentiles in order, or none when overloaded.
    #[test]
    fn latency_is_ordered_or_overloaded(slots in 1u32..64, service_ms in 1u32..5000, lambda in 0.0f64..500.0) {
        use controllers::service::latency::{Model, latency};
        for m in [Model::MMc, Model::MDc] {
            if let Some(l) = latency(m, slots, f64::from(service_ms) / 1000.0, lambda) {
                prop_assert!(l.p50 > 0.0 && l.p50 <= l.p99 && l.p99.is_finite(), "{l:?}");
            } else {
                prop_assert!(lambda >= f64::from(slots) * 1000.0 / f64::from(service_ms));
            }
        }
    }
}
