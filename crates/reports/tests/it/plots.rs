//! `reports::plots`: well-formed, deterministic SVG and PNG; no panics on empty or
//! non-finite input; tick labels that tell ticks apart. (The Gantt layout: `gantt.rs`.)

use reports::plots::{self, Bar, Chart, Format, HEIGHT, MAX_GANTT_BARS, Series, WIDTH};

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

fn chart(title: &str) -> Chart<'_> {
    Chart { title, x_label: "time (s)", y_label: "value", log_x: false }
}

fn svg_text(bytes: &[u8]) -> &str {
    let s = std::str::from_utf8(bytes).expect("SVG is UTF-8");
    assert!(s.starts_with("<svg"), "starts with: {:?}", &s[..s.len().min(40)]);
    assert!(s.trim_end().ends_with("</svg>"));
    s
}

/// The PNG magic, and the IHDR chunk says 960×540, 8-bit RGB; the image decodes at that size.
fn check_png(bytes: &[u8]) {
    assert!(bytes.starts_with(PNG_MAGIC));
    assert_eq!(&bytes[12..16], b"IHDR");
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), WIDTH);
    assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), HEIGHT);
    assert_eq!((bytes[24], bytes[25]), (8, 2), "8-bit RGB");
    let img = image::load_from_memory_with_format(bytes, image::ImageFormat::Png).expect("decodes");
    assert_eq!((img.width(), img.height()), (WIDTH, HEIGHT));
}

fn utilization() -> Vec<Series> {
    let a = (0..5_000).map(|i| (i as f64 * 60.0, ((i * 37) % 101) as f64 / 100.0)).collect();
    let b = (0..300).map(|i| (i as f64 * 1_000.0, ((i * 13) % 17) as f64 / 17.0)).collect();
    vec![Series { name: "fcfs".into(), points: a }, Series { name: "easy-backfill".into(), points: b }]
}

fn waits() -> Vec<(String, Vec<f64>)> {
    let a = (0..10_000).map(|i| ((i * 7919) % 86_400) as f64 * (i % 3) as f64).collect();
    let b = (0..50).map(|i| (i * i) as f64).collect();
    vec![("fcfs".to_string(), a), ("sjf".to_string(), b)]
}

fn slowdowns() -> (Vec<String>, Vec<(String, Vec<f64>)>) {
    let cats = ["1 unit", "2-8", "9-64", "65+"].map(String::from).to_vec();
    let series = vec![
        ("fcfs".to_string(), vec![1.0, 3.5, 12.0, 40.0]),
        ("conservative".to_string(), vec![1.2, 2.0, f64::NAN, 22.0]),
    ];
    (cats, series)
}

fn jobs(n: usize) -> Vec<Bar> {
    (0..n)
        .map(|i| {
            let start = (i * 17 % 1_000) as f64;
            Bar { start, end: start + 50.0 + (i % 7) as f64 * 30.0, units: 1 + (i as u64 * 5) % 16, category: i % 4 }
        })
        .collect()
}

/// Every chart kind, in one format.
fn all(format: Format) -> Vec<Vec<u8>> {
    let (cats, bars) = slowdowns();
    let log = Chart { log_x: true, ..chart("Wait CDF") };
    vec![
        plots::lines(&chart("Utilization"), &utilization(), false, format).unwrap(),
        plots::lines(&chart("Queue length"), &utilization(), true, format).unwrap(),
        plots::cdf(&log, &waits(), format).unwrap(),
        plots::cdf(&chart("Wait CDF linear"), &waits(), format).unwrap(),
        plots::bars(&chart("Bounded slowdown"), &cats, &bars, format).unwrap(),
        plots::gantt(&chart("Gantt"), &jobs(300), 64, format).unwrap(),
    ]
}

#[test]
fn svg_is_well_formed_and_names_title_and_series() {
    let out = all(Format::Svg);
    let titles = ["Utilization", "Queue length", "Wait CDF", "Wait CDF linear", "Bounded slowdown", "Gantt"];
    for (bytes, title) in out.iter().zip(titles) {
        let s = svg_text(bytes);
        assert!(s.contains(title), "{title} missing");
        assert!(s.contains("time (s)") && s.contains("value"), "axis labels in {title}");
        assert!(bytes.len() < 400_000, "{title}: {} bytes", bytes.len());
    }
    for (i, names) in [(0, ["fcfs", "easy-backfill"]), (2, ["fcfs", "sjf"]), (4, ["fcfs", "conservative"])] {
        let s = svg_text(&out[i]);
        for name in names {
            assert!(s.contains(name), "series {name} missing in chart {i}");
        }
    }
    // The bar chart names its categories.
    assert!(svg_text(&out[4]).contains("9-64"));
    // Log axis: decade labels.
    assert!(svg_text(&out[2]).contains("10000"));
}

#[test]
fn same_input_gives_identical_bytes() {
    assert_eq!(all(Format::Svg), all(Format::Svg));
    assert_eq!(all(Format::Png), all(Format::Png));
}

#[test]
fn png_has_magic_and_size() {
    for bytes in all(Format::Png) {
        check_png(&bytes);
    }
}

#[test]
fn lines_are_thinned() {
    let long =
        vec![Series { name: "long".into(), points: (0..100_000).map(|i| (i as f64, (i % 97) as f64)).collect() }];
    let svg = plots::lines(&chart("thin"), &long, false, Format::Svg).unwrap();
    let s = svg_text(&svg);
    let polyline = s.split("<polyline").nth(1).expect("a polyline");
    let points = polyline.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
    let n = points.split_whitespace().count();
    assert!(n <= plots::MAX_POINTS_PER_SERIES, "{n} vertices");
}

#[test]
fn gantt_caps_and_says_so() {
    let many = jobs(MAX_GANTT_BARS + 10);
    let svg = plots::gantt(&chart("big"), &many, 64, Format::Svg).unwrap();
    let s = svg_text(&svg);
    assert!(s.contains(&format!("first {MAX_GANTT_BARS} of {} jobs", MAX_GANTT_BARS + 10)));
}

#[test]
fn empty_and_non_finite_inputs_say_no_data() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let bad_series = vec![Series { name: "bad".into(), points: vec![(nan, 1.0), (1.0, inf), (-inf, 0.0)] }];
    let bad_samples = vec![("bad".to_string(), vec![nan, inf, -inf])];
    let bad_bars =
        vec![Bar { start: nan, end: 1.0, units: 1, category: 0 }, Bar { start: 5.0, end: 1.0, units: 2, category: 1 }];
    for format in [Format::Svg, Format::Png] {
        let outs = vec![
            plots::lines(&chart("empty"), &[], false, format).unwrap(),
            plots::lines(&chart("empty"), &bad_series, true, format).unwrap(),
            plots::cdf(&chart("empty"), &[], format).unwrap(),
            plots::cdf(&Chart { log_x: true, ..chart("empty") }, &bad_samples, format).unwrap(),
            plots::bars(&chart("empty"), &[], &[], format).unwrap(),
            plots::bars(&chart("empty"), &["a".to_string()], &[("s".to_string(), vec![nan])], format).unwrap(),
            plots::gantt(&chart("empty"), &[], 8, format).unwrap(),
            plots::gantt(&chart("empty"), &bad_bars, 0, format).unwrap(),
        ];
        for bytes in outs {
            match format {
                Format::Svg => assert!(svg_text(&bytes).contains("no data")),
                Format::Png => check_png(&bytes),
            }
        }
    }
}

#[test]
fn degenerate_inputs_draw() {
    let nan = f64::NAN;
    let one = vec![Series { name: "one".into(), points: vec![(5.0, 2.0), (nan, 3.0)] }];
    let flat = vec![Series { name: "flat".into(), points: vec![(0.0, 0.0), (1.0, 0.0)] }];
    let zeros = vec![("zeros".to_string(), vec![0.0; 100])];
    let negative = vec![("neg".to_string(), vec![-1.0, 2.0])];
    let huge = vec![Series { name: "huge".into(), points: vec![(-1e300, -1e300), (1e300, 1e300)] }];
    let log = Chart { log_x: true, ..chart("log") };
    for format in [Format::Svg, Format::Png] {
        plots::lines(&chart("one"), &one, false, format).unwrap();
        plots::lines(&log, &flat, true, format).unwrap();
        plots::lines(&chart("huge"), &huge, false, format).unwrap();
        plots::cdf(&log, &zeros, format).unwrap();
        plots::cdf(&chart("zeros"), &zeros, format).unwrap();
        plots::bars(&chart("neg"), &["a".into(), "b".into()], &negative, format).unwrap();
        let instant = [Bar { start: 3.0, end: 3.0, units: 4, category: 99 }];
        plots::gantt(&chart("instant"), &instant, 4, format).unwrap();
    }
}

#[test]
fn mismatched_lengths_are_errors() {
    let err = plots::bars(&chart("x"), &["a".into()], &[("s".into(), vec![1.0, 2.0])], Format::Svg);
    assert!(matches!(err, Err(plots::PlotError::InvalidInput(_))));
    let err = plots::gantt_placed(&chart("x"), &jobs(3), &[vec![(0, 1)], vec![(1, 1)]], 8, Format::Svg);
    assert!(matches!(err, Err(plots::PlotError::InvalidInput(_))));
    let placed = jobs(3).iter().zip([0, 16, 32]).map(|(b, lo)| vec![(lo, b.units)]).collect::<Vec<_>>();
    let placed = plots::gantt_placed(&chart("placed"), &jobs(3), &placed, 48, Format::Svg).unwrap();
    svg_text(&placed);
}

/// The numeric tick labels of one axis of an SVG chart: left of the plot area (y, top to
/// bottom) or below it (x, left to right).
fn tick_labels(svg: &str, y_axis: bool) -> Vec<String> {
    let attr = |text: &str, name: &str| -> f64 {
        text.split(&format!(" {name}=\""))
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|s| s.parse().ok())
            .unwrap()
    };
    let mut out = Vec::new();
    for text in svg.split("<text").skip(1) {
        let label = text.split('>').nth(1).and_then(|s| s.split('<').next()).unwrap_or("").trim();
        let on_axis = if y_axis { attr(text, "x") < 84.0 } else { attr(text, "y") > 470.0 };
        if on_axis && label.parse::<f64>().is_ok() {
            out.push(label.to_string());
        }
    }
    out
}

/// A narrow range (GPU use from 0.0021 to 0.0034; times just past 10⁶ s) gets tick labels
/// precise enough to tell every tick apart, in every chart kind with a numeric axis.
#[test]
fn narrow_ranges_get_distinct_tick_labels() {
    let narrow = vec![Series { name: "gpu".into(), points: vec![(0.0, 0.0021), (50.0, 0.0034), (100.0, 0.0027)] }];
    let cats = vec!["a".to_string(), "b".to_string()];
    let bars = vec![("s".to_string(), vec![0.0021, 0.0034])];
    let late = vec![Series { name: "late".into(), points: vec![(1e6, 1e6), (1e6 + 3.0, 1e6 + 2.0)] }];
    let late_jobs = [Bar { start: 1e6, end: 1e6 + 3.0, units: 2, category: 0 }];
    let samples = vec![("w".to_string(), vec![0.0021, 0.0034, 0.003])];
    let svgs = [
        (plots::lines(&chart("gpu"), &narrow, true, Format::Svg).unwrap(), true),
        (plots::lines(&chart("gpu"), &narrow, false, Format::Svg).unwrap(), true),
        (plots::bars(&chart("bars"), &cats, &bars, Format::Svg).unwrap(), true),
        (plots::lines(&chart("late"), &late, false, Format::Svg).unwrap(), true),
        (plots::lines(&chart("late"), &late, false, Format::Svg).unwrap(), false),
        (plots::gantt(&chart("late"), &late_jobs, 2, Format::Svg).unwrap(), false),
        (plots::cdf(&chart("cdf"), &samples, Format::Svg).unwrap(), false),
    ];
    for (svg, y_axis) in &svgs {
        let labels = tick_labels(svg_text(svg), *y_axis);
        assert!(labels.len() >= 3, "{labels:?}");
        for w in labels.windows(2) {
            assert_ne!(w[0], w[1], "repeated tick label in {labels:?}");
        }
    }
    let gpu = tick_labels(svg_text(&svgs[0].0), true);
    assert!(gpu.contains(&"0.0025".to_string()), "{gpu:?}");
}
