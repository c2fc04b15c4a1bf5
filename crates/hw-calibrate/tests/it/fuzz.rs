//! Arbitrary input never panics the importers or the profile readers.

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = hw_calibrate::import::import_bytes(&bytes, "fuzz");
    }

    #[test]
    fn csv_like_text_never_panics(
        header in prop::sample::subsequence(
            vec!["timestamp", "name", "index", "uuid", "memory.total [MiB]", "memory.used [MiB]",
                 "utilization.gpu [%]", "power.draw [W]", "power.limit [W]", "clocks.max.sm [MHz]"], 0..10),
        rows in proptest::collection::vec(proptest::collection::vec("[ -~]{0,12}", 0..11), 0..6),
    ) {
        let mut text = header.join(", ");
        for r in rows {
            text.push('\n');
            text.push_str(&r.join(", "));
        }
        let _ = hw_calibrate::import::import_bytes(text.as_bytes(), "fuzz.csv");
    }

    #[test]
    fn prometheus_like_text_never_panics(
        lines in proptest::collection::vec(
            (prop::sample::select(vec!["DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_UTIL",
                                       "DCGM_FI_DEV_POWER_USAGE", "# HELP", "DCGM_FI_DEV_FB_TOTAL"]),
             "[ -~]{0,40}"),
            0..12),
    ) {
        let text: String = lines.iter().map(|(m, rest)| format!("{m}{rest}\n")).collect();
        let _ = hw_calibrate::import::import_bytes(text.as_bytes(), "fuzz.prom");
    }
}

proptest! {
    #[test]
    fn dcgm_samples_of_valid_shape_import(
        used in 0u64..200_000, free in 0u64..200_000, util in 0u32..=100, power in 0.0f64..1000.0,
    ) {
        let l = |m: &str, v: String| format!("{m}{{gpu=\"0\",UUID=\"GPU-a\",modelName=\"M\"}} {v}\n");
        let text = l("DCGM_FI_DEV_FB_USED", used.to_string()) + &l("DCGM_FI_DEV_FB_FREE", free.to_string())
            + &l("DCGM_FI_DEV_GPU_UTIL", util.to_string()) + &l("DCGM_FI_DEV_POWER_USAGE", format!("{power}"));
        let i = hw_calibrate::import::import_bytes(text.as_bytes(), "p").unwrap();
        prop_assert_eq!(i.hardware.gpu[0].memory_mib, used + free);
        prop_assert_eq!(i.job.peak_memory_mib, used);
    }
}
