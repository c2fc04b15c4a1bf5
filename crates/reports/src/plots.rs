//! Deterministic charts for the reports, as SVG or PNG bytes (960×540).
//!
//! Plain data in, bytes out: nothing here depends on other schedlab types.
//!
//! * [`lines`] — one line per series with a legend: utilization over time, queue length over
//!   time (`step = true` draws each value until the next point, as a piecewise-constant
//!   series should be).
//! * [`cdf`] — empirical CDFs, one per named sample set: the wait-time CDF per policy.
//! * [`bars`] — grouped bars, categories on x and one bar per series in each: mean bounded
//!   slowdown per size class per policy.
//! * [`gantt`] / [`gantt_placed`] — one rectangle per job from start to end over the units it
//!   held, coloured by a category index: what ran where and when.
//!
//! ## Guarantees
//! * Same input ⇒ identical bytes, for SVG and PNG. The SVG backend writes no timestamps and
//!   no ids, only the drawn elements with integer pixel coordinates; PNGs carry no time chunk.
//!   All text is laid out with the bundled DejaVu Sans (`assets/DejaVuSans.ttf`, Bitstream
//!   Vera licence in `assets/DejaVuSans-LICENSE.txt`), registered once as `sans-serif`, so no
//!   system font is looked up (plotters is built without `ttf`).
//! * NaN and ±inf values are dropped. An input with nothing left to draw gives a valid chart
//!   with its title and the words "no data", never a panic.
//! * Size: each line or CDF is thinned deterministically to at most
//!   [`MAX_POINTS_PER_SERIES`] vertices (min/max per bucket for lines; for CDFs the jumps at
//!   evenly spaced levels of F, so the curve is off by at most 0.1 %); a Gantt chart draws at most [`MAX_GANTT_BARS`] jobs (the earliest-starting;
//!   the title then says so).
//!
//! ## Logarithmic x
//! With [`Chart::log_x`], x values below 1 are drawn at 1: the axis starts at 1. For waits in
//! seconds (0 up to days) this means "waited under a second" sits at the left edge, and a CDF
//! there shows the fraction of jobs that waited at most 1 s. Ticks are at powers of ten
//! (1-2-5 steps when the data span less than a decade).

use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;
use std::sync::OnceLock;

/// Chart width in pixels.
pub const WIDTH: u32 = 960;
/// Chart height in pixels.
pub const HEIGHT: u32 = 540;
/// Most vertices drawn for one line or CDF.
pub const MAX_POINTS_PER_SERIES: usize = 2_000;
/// Most jobs drawn in one Gantt chart.
pub const MAX_GANTT_BARS: usize = 2_000;

/// The bundled font (DejaVu Sans 2.37, from Debian's `fonts-dejavu-core`).
static FONT_TTF: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FONT: &str = "sans-serif";
const TITLE_SIZE: u32 = 22;
const LABEL_SIZE: u32 = 13;
const DESC_SIZE: u32 = 15;
const LEGEND_SIZE: u32 = 14;

/// Tableau 10: a small palette, picked by index modulo its length.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0xBA, 0xB0, 0xAC),
];
const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);

/// One named line: `points` as (x, y), x ascending (unsorted input is sorted, stably).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// The points, x ascending.
    pub points: Vec<(f64, f64)>,
}

/// Output encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// An SVG document (UTF-8); text uses `font-family="sans-serif"`.
    Svg,
    /// A PNG image, 8-bit RGB.
    Png,
}

/// Title and axes of a chart.
#[derive(Debug, Clone, Copy)]
pub struct Chart<'a> {
    /// Caption at the top.
    pub title: &'a str,
    /// Description under the x axis.
    pub x_label: &'a str,
    /// Description beside the y axis.
    pub y_label: &'a str,
    /// Logarithmic x axis; x below 1 is drawn at 1 (see the module docs).
    pub log_x: bool,
}

/// One job in a Gantt chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    /// Start time.
    pub start: f64,
    /// End time (≥ `start`).
    pub end: f64,
    /// Resource units held (the rectangle's height).
    pub units: u64,
    /// Colour key (palette index modulo 10).
    pub category: usize,
}

/// Why a chart could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The bundled font did not parse (a corrupt build).
    #[error("the bundled font could not be registered")]
    Font,
    /// The drawing backend failed.
    #[error("drawing failed: {0}")]
    Draw(String),
    /// PNG encoding failed.
    #[error("PNG encoding failed: {0}")]
    Encode(String),
    /// Inputs that do not fit together (lengths that differ).
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

/// Lines (utilization over time, queue length over time): one line per series, with a legend.
///
/// `step` draws each y until the next x (a piecewise-constant series). Non-finite points are
/// dropped; series left empty are left out of the legend.
pub fn lines(chart: &Chart, series: &[Series], step: bool, format: Format) -> Result<Vec<u8>, PlotError> {
    // A step line doubles its vertices, so thin it to half first.
    let budget = if step { MAX_POINTS_PER_SERIES / 2 } else { MAX_POINTS_PER_SERIES };
    let mut drawn = Vec::new();
    for s in series {
        let mut pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| (x_coord(x, chart.log_x), y))
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut pts = downsample(&pts, budget);
        if step {
            pts = step_expand(&pts);
        }
        drawn.push((s.name.as_str(), pts));
    }
    render(&LinesPaint { chart, series: drawn, legend: SeriesLabelPosition::UpperRight }, format)
}

/// Empirical CDFs (wait-time CDF per policy): one step curve per named sample set, y from 0
/// to 1. With `log_x`, samples below 1 are drawn at 1 (see the module docs). Non-finite
/// samples are dropped; each curve is extended at y = 1 to the largest x of all sets.
pub fn cdf(chart: &Chart, samples: &[(String, Vec<f64>)], format: Format) -> Result<Vec<u8>, PlotError> {
    let mut curves: Vec<(&str, Vec<(f64, f64)>)> = Vec::new();
    let mut x_max = f64::NEG_INFINITY;
    for (name, values) in samples {
        let mut xs: Vec<f64> = values.iter().filter(|v| v.is_finite()).map(|&v| x_coord(v, chart.log_x)).collect();
        if xs.is_empty() {
            continue;
        }
        xs.sort_by(f64::total_cmp);
        x_max = x_max.max(xs[xs.len() - 1]);
        curves.push((name.as_str(), cdf_steps(&xs)));
    }
    for (_, pts) in &mut curves {
        let last_x = pts.last().map_or(x_max, |p| p.0);
        if last_x < x_max {
            pts.push((x_max, 1.0));
        }
    }
    let paint = LinesPaint { chart, series: curves, legend: SeriesLabelPosition::LowerRight };
    render(&paint, format)
}

/// Grouped bars (mean bounded slowdown per size class per policy): `categories` on x, and in
/// each category one bar per series, `series[j].1[i]` being series j's value in category i.
/// Each series must have one value per category; a non-finite value draws no bar.
/// [`Chart::log_x`] is ignored (as by the Gantt charts).
pub fn bars(
    chart: &Chart,
    categories: &[String],
    series: &[(String, Vec<f64>)],
    format: Format,
) -> Result<Vec<u8>, PlotError> {
    for (name, values) in series {
        if values.len() != categories.len() {
            return Err(PlotError::InvalidInput(format!(
                "series {name:?} has {} values for {} categories",
                values.len(),
                categories.len()
            )));
        }
    }
    render(&BarsPaint { chart, categories, series }, format)
}

/// A Gantt chart with lanes packed by [`pack_lanes`] (unit positions unknown): each job is a
/// rectangle from `start` to `end` over `units` stacked units. `total_units` (the machine
/// size) is drawn as a black line; a contiguous packing can need lanes above it when free
/// units were fragmented, and those bars are drawn there rather than overlapping.
/// [`Chart::log_x`] is ignored: the x axis is linear time.
pub fn gantt(chart: &Chart, bars: &[Bar], total_units: u64, format: Format) -> Result<Vec<u8>, PlotError> {
    let kept = gantt_subset(bars);
    let subset: Vec<Bar> = kept.iter().map(|&i| bars[i]).collect();
    let lanes = pack_lanes(&subset);
    let placed = subset.iter().zip(&lanes).filter_map(|(b, l)| l.map(|lo| (*b, lo))).collect();
    render(&GanttPaint { chart, placed, total_units, dropped: bars_dropped(bars, kept.len()) }, format)
}

/// A Gantt chart with known unit positions: job `i` covers units `first_units[i]` ..
/// `first_units[i] + bars[i].units`. Otherwise as [`gantt`].
pub fn gantt_placed(
    chart: &Chart,
    bars: &[Bar],
    first_units: &[u64],
    total_units: u64,
    format: Format,
) -> Result<Vec<u8>, PlotError> {
    if bars.len() != first_units.len() {
        return Err(PlotError::InvalidInput(format!("{} bars but {} first units", bars.len(), first_units.len())));
    }
    let kept = gantt_subset(bars);
    let placed = kept.iter().map(|&i| (bars[i], first_units[i])).collect();
    render(&GanttPaint { chart, placed, total_units, dropped: bars_dropped(bars, kept.len()) }, format)
}

/// Stacks jobs whose unit positions are unknown into lanes: returns, for each bar, the first
/// unit of a contiguous block of `units` units that no bar overlapping it in time uses
/// (intervals are half-open, `[start, end)`), or `None` for a bar that cannot be drawn
/// (a non-finite time, `end < start`, or zero units).
///
/// Greedy first-fit, deterministic: bars are taken by start time (ties by input order) and
/// each gets the lowest block free over its whole interval among the bars already placed.
/// Blocks are not bounded by the machine size: where free units are fragmented the block
/// can lie above it.
pub fn pack_lanes(bars: &[Bar]) -> Vec<Option<u64>> {
    let mut out = vec![None; bars.len()];
    let mut order: Vec<usize> = (0..bars.len()).filter(|&i| drawable(&bars[i])).collect();
    order.sort_by(|&a, &b| bars[a].start.total_cmp(&bars[b].start).then(a.cmp(&b)));
    // Placed bars still running at the current start: (lo, hi, end), sorted by lo.
    let mut active: Vec<(u64, u64, f64)> = Vec::new();
    for i in order {
        let bar = bars[i];
        active.retain(|&(_, _, end)| end > bar.start);
        let mut cand = 0u64;
        for &(lo, hi, _) in &active {
            if lo >= cand && lo - cand >= bar.units {
                break;
            }
            cand = cand.max(hi);
        }
        let hi = cand.saturating_add(bar.units);
        let at = active.partition_point(|&(lo, _, _)| lo <= cand);
        active.insert(at, (cand, hi, bar.end));
        out[i] = Some(cand);
    }
    out
}

// ---------------------------------------------------------------------------------------
// Data preparation

fn drawable(b: &Bar) -> bool {
    b.start.is_finite() && b.end.is_finite() && b.end >= b.start && b.units > 0
}

/// Indices of the bars drawn: the drawable ones, capped to the earliest-starting
/// [`MAX_GANTT_BARS`] (ties by input order), in input order.
fn gantt_subset(bars: &[Bar]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..bars.len()).filter(|&i| drawable(&bars[i])).collect();
    if idx.len() > MAX_GANTT_BARS {
        idx.sort_by(|&a, &b| bars[a].start.total_cmp(&bars[b].start).then(a.cmp(&b)));
        idx.truncate(MAX_GANTT_BARS);
        idx.sort_unstable();
    }
    idx
}

/// How many drawable bars the cap left out (0 when none).
fn bars_dropped(bars: &[Bar], kept: usize) -> usize {
    bars.iter().filter(|b| drawable(b)).count() - kept
}

/// The x drawn for a data x: `log10(max(x, 1))` on a log axis.
fn x_coord(x: f64, log_x: bool) -> f64 {
    if log_x { x.max(1.0).log10() } else { x }
}

/// Thins a line to at most `max` points: keeps the first and last points and, in each of
/// `(max - 2) / 2` equal runs of the rest, the lowest and the highest point (peaks survive).
fn downsample(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || points.len() < 3 {
        return points.to_vec();
    }
    let inner = &points[1..points.len() - 1];
    let buckets = (max.saturating_sub(2) / 2).max(1);
    let mut out = Vec::with_capacity(2 * buckets + 2);
    out.push(points[0]);
    for b in 0..buckets {
        let chunk = &inner[b * inner.len() / buckets..(b + 1) * inner.len() / buckets];
        if chunk.is_empty() {
            continue;
        }
        let (mut lo, mut hi) = (0, 0);
        for (k, p) in chunk.iter().enumerate() {
            if p.1 < chunk[lo].1 {
                lo = k;
            }
            if p.1 > chunk[hi].1 {
                hi = k;
            }
        }
        out.push(chunk[lo.min(hi)]);
        if lo != hi {
            out.push(chunk[lo.max(hi)]);
        }
    }
    out.push(points[points.len() - 1]);
    out
}

/// A piecewise-constant line: each y is held until the next x.
fn step_expand(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (k, &p) in points.iter().enumerate() {
        if k > 0 {
            out.push((p.0, points[k - 1].1));
        }
        out.push(p);
    }
    out
}

/// The step curve of the empirical CDF of sorted `xs`, at most [`MAX_POINTS_PER_SERIES`] − 1
/// vertices (room for the final extension): (x, F(x)) at each distinct x, joined by vertical
/// rises; when there are too many, those at evenly spaced levels of F.
fn cdf_steps(xs: &[f64]) -> Vec<(f64, f64)> {
    let n = xs.len() as f64;
    let mut jumps: Vec<(f64, f64)> = Vec::new();
    for (i, &x) in xs.iter().enumerate() {
        if i + 1 == xs.len() || xs[i + 1] != x {
            jumps.push((x, (i + 1) as f64 / n));
        }
    }
    // Too many jumps: keep the first, the last, and the first to reach each level k / keep,
    // so the drawn curve is never more than 1 / keep below the true one.
    let keep = MAX_POINTS_PER_SERIES / 2 - 10;
    if jumps.len() > keep {
        let last = jumps.len() - 1;
        let level = |f: f64| (f * keep as f64).floor();
        let mut kept: Vec<(f64, f64)> = Vec::with_capacity(keep + 3);
        for (k, &(x, f)) in jumps.iter().enumerate() {
            if k == 0 || k == last || kept.last().is_some_and(|&(_, g)| level(f) > level(g)) {
                kept.push((x, f));
            }
        }
        jumps = kept;
    }
    let mut out = Vec::with_capacity(2 * jumps.len() + 2);
    let mut prev = 0.0;
    for (x, f) in jumps {
        out.push((x, prev));
        out.push((x, f));
        prev = f;
    }
    out
}

/// `[lo, hi]` widened to a drawable range: a zero width gets ±0.5 (±1 around a large value).
fn widen(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo {
        return (lo, hi);
    }
    let d = (lo.abs() * 0.05).max(0.5);
    (lo - d, hi + d)
}

/// Adds 5 % headroom above `hi` (and below `lo` when it is negative).
fn pad(lo: f64, hi: f64) -> (f64, f64) {
    let d = (hi - lo) * 0.05;
    if !d.is_finite() {
        return (lo, hi);
    }
    (if lo < 0.0 { lo - d } else { lo }, hi + d)
}

/// About `target` round (1-2-5 × 10ᵏ) values within `[lo, hi]`.
fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let raw = (hi - lo) / target as f64;
    if !(raw.is_finite() && raw > 0.0) {
        return vec![lo, hi];
    }
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|&s| s >= raw).unwrap_or(10.0 * mag);
    let first = (lo / step).ceil();
    let ticks: Vec<f64> = (0..=2 * target)
        .map(|k| (first + k as f64) * step)
        .take_while(|&v| v <= hi + step * 1e-9)
        .map(|v| v.min(hi))
        .collect();
    if ticks.iter().all(|v| v.is_finite()) && !ticks.is_empty() { ticks } else { vec![lo, hi] }
}

/// Ticks for a log10 axis spanning `[lo, hi]` (in log10 units): powers of ten, or 1-2-5
/// steps within a decade or so.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) {
        return vec![lo, hi];
    }
    let (d0, d1) = (lo.floor() as i64, hi.ceil() as i64);
    let eps = 1e-9;
    let decades: Vec<f64> = (d0..=d1).map(|d| d as f64).filter(|&v| v >= lo - eps && v <= hi + eps).collect();
    if decades.len() >= 3 {
        let every = decades.len().div_ceil(10);
        return decades.into_iter().step_by(every).collect();
    }
    let mut ticks = Vec::new();
    for d in d0..=d1 {
        for m in [1.0f64, 2.0, 5.0] {
            let v = d as f64 + m.log10();
            if v >= lo - eps && v <= hi + eps {
                ticks.push(v.clamp(lo, hi));
            }
        }
    }
    if ticks.len() >= 2 { ticks } else { nice_ticks(lo, hi, 6) }
}

/// A compact, deterministic axis label: up to three decimals, exponent form for very large
/// or very small magnitudes.
fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    let s = if a != 0.0 && !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.2e}");
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.')),
            _ => s,
        }
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if s == "-0" { "0".to_string() } else { s }
}

// ---------------------------------------------------------------------------------------
// Rendering

/// Something that draws itself on any plotters backend.
trait Paint {
    /// `format` only picks how lines are stroked (see [`LinesPaint`]).
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, format: Format) -> Result<(), PlotError>;
}

fn draw_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// Registers the bundled font as `sans-serif`, once per process.
fn ensure_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| plotters::style::register_font(FONT, FontStyle::Normal, FONT_TTF).is_ok());
    if ok { Ok(()) } else { Err(PlotError::Font) }
}

fn render(p: &impl Paint, format: Format) -> Result<Vec<u8>, PlotError> {
    ensure_font()?;
    match format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
                root.fill(&WHITE).map_err(draw_err)?;
                p.paint(&root, format)?;
                root.present().map_err(draw_err)?;
            }
            Ok(svg.into_bytes())
        }
        Format::Png => {
            let mut rgb = vec![0u8; WIDTH as usize * HEIGHT as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
                root.fill(&WHITE).map_err(draw_err)?;
                p.paint(&root, format)?;
                root.present().map_err(draw_err)?;
            }
            encode_png(&rgb)
        }
    }
}

fn encode_png(rgb: &[u8]) -> Result<Vec<u8>, PlotError> {
    use image::ImageEncoder;
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    let mut out = Vec::new();
    PngEncoder::new_with_quality(&mut out, CompressionType::Default, FilterType::Adaptive)
        .write_image(rgb, WIDTH, HEIGHT, image::ColorType::Rgb8)
        .map_err(|e| PlotError::Encode(e.to_string()))?;
    Ok(out)
}

/// The title and a centred "no data".
fn paint_no_data<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> Result<(), PlotError> {
    let area = root.titled(title, (FONT, TITLE_SIZE)).map_err(draw_err)?;
    let (w, h) = area.dim_in_pixel();
    let style = (FONT, 20).into_font().color(&RGBColor(0x66, 0x66, 0x66)).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new("no data", (w as i32 / 2, h as i32 / 2), style)).map_err(draw_err)?;
    Ok(())
}

/// A linear f64 axis with ticks chosen here (plotters' own `WithKeyPoints` does not pass on
/// the f64 label formatter, so `configure_mesh` would not be available).
#[derive(Clone)]
struct XAxis {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for XAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() { Vec::new() } else { self.ticks.clone() }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

impl ValueFormatter<f64> for XAxis {
    fn format(value: &f64) -> String {
        fmt_num(*value)
    }
}

/// Builds the axes shared by all charts: x with explicit ticks, y plain.
fn build<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    chart: &Chart,
    x: (f64, f64),
    x_ticks: Vec<f64>,
    y: (f64, f64),
) -> Result<ChartContext<'a, DB, Cartesian2d<XAxis, RangedCoordf64>>, PlotError> {
    ChartBuilder::on(root)
        .caption(chart.title, (FONT, TITLE_SIZE))
        .margin(14)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(XAxis { inner: (x.0..x.1).into(), ticks: x_ticks }, y.0..y.1)
        .map_err(draw_err)
}

fn draw_legend<'a, DB: DrawingBackend + 'a>(
    ctx: &mut ChartContext<'a, DB, Cartesian2d<XAxis, RangedCoordf64>>,
    pos: SeriesLabelPosition,
) -> Result<(), PlotError> {
    ctx.configure_series_labels()
        .position(pos)
        .margin(12)
        .label_font((FONT, LEGEND_SIZE))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(0x88, 0x88, 0x88))
        .draw()
        .map_err(draw_err)
}

/// Line charts and CDFs: already prepared vertices per named series. SVG gets one polyline
/// per series; PNG one 2-pixel segment per pair of vertices; a lone point is a dot.
struct LinesPaint<'a> {
    chart: &'a Chart<'a>,
    series: Vec<(&'a str, Vec<(f64, f64)>)>,
    legend: SeriesLabelPosition,
}

impl Paint for LinesPaint<'_> {
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, format: Format) -> Result<(), PlotError> {
        let all = self.series.iter().flat_map(|(_, p)| p.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, f64::NEG_INFINITY);
        for &(x, y) in all {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if self.series.is_empty() {
            return paint_no_data(root, self.chart.title);
        }
        let (x0, x1) = widen(x0, x1);
        let (y0, y1) = widen(y0, y1);
        let (y0, y1) = pad(y0, y1);
        let log_x = self.chart.log_x;
        let ticks = if log_x { log_ticks(x0, x1) } else { nice_ticks(x0, x1, 10) };
        let mut ctx = build(root, self.chart, (x0, x1), ticks, (y0, y1))?;
        let x_fmt = |v: &f64| fmt_num(if log_x { 10f64.powf(*v) } else { *v });
        let y_fmt = |v: &f64| fmt_num(*v);
        ctx.configure_mesh()
            .x_desc(self.chart.x_label)
            .y_desc(self.chart.y_label)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_labels(8)
            .max_light_lines(0)
            .bold_line_style(GRID)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, DESC_SIZE))
            .draw()
            .map_err(draw_err)?;
        for (k, (name, pts)) in self.series.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let style = color.stroke_width(2);
            let drawn = if pts.len() == 1 {
                ctx.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            } else if format == Format::Svg {
                ctx.draw_series(LineSeries::new(pts.iter().copied(), style))
            } else {
                // plotters' bitmap backend fills a wide polyline as one polygon, which breaks
                // into spikes on dense zig-zags: stroke each segment on its own instead.
                ctx.draw_series(pts.windows(2).map(|w| PathElement::new(vec![w[0], w[1]], style)))
            };
            drawn
                .map_err(draw_err)?
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        draw_legend(&mut ctx, self.legend.clone())
    }
}

struct BarsPaint<'a> {
    chart: &'a Chart<'a>,
    categories: &'a [String],
    series: &'a [(String, Vec<f64>)],
}

impl Paint for BarsPaint<'_> {
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _format: Format) -> Result<(), PlotError> {
        let finite = || self.series.iter().flat_map(|(_, v)| v.iter().copied()).filter(|v| v.is_finite());
        if self.categories.is_empty() || finite().next().is_none() {
            return paint_no_data(root, self.chart.title);
        }
        let y0 = finite().fold(0.0f64, f64::min);
        let y1 = finite().fold(0.0f64, f64::max);
        let (y0, y1) = widen(y0, y1);
        let (y0, y1) = pad(y0, y1);
        let n = self.categories.len();
        let centres: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
        let mut ctx = build(root, self.chart, (0.0, n as f64), centres, (y0, y1))?;
        let cats = self.categories;
        let x_fmt = |v: &f64| {
            let i = v.floor();
            if i >= 0.0 && (i as usize) < cats.len() { cats[i as usize].clone() } else { String::new() }
        };
        let y_fmt = |v: &f64| fmt_num(*v);
        ctx.configure_mesh()
            .disable_x_mesh()
            .x_desc(self.chart.x_label)
            .y_desc(self.chart.y_label)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_labels(8)
            .max_light_lines(0)
            .bold_line_style(GRID)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, DESC_SIZE))
            .draw()
            .map_err(draw_err)?;
        let width = 0.8 / self.series.len() as f64;
        for (j, (name, values)) in self.series.iter().enumerate() {
            if !values.iter().any(|v| v.is_finite()) {
                continue;
            }
            let color = PALETTE[j % PALETTE.len()];
            let rects = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(move |(i, &v)| {
                let left = i as f64 + 0.1 + j as f64 * width;
                Rectangle::new([(left, 0.0), (left + width, v)], color.filled())
            });
            ctx.draw_series(rects)
                .map_err(draw_err)?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        }
        draw_legend(&mut ctx, SeriesLabelPosition::UpperRight)
    }
}

struct GanttPaint<'a> {
    chart: &'a Chart<'a>,
    /// Drawable bars with their first unit.
    placed: Vec<(Bar, u64)>,
    total_units: u64,
    /// Drawable bars left out by the cap.
    dropped: usize,
}

impl Paint for GanttPaint<'_> {
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _format: Format) -> Result<(), PlotError> {
        if self.placed.is_empty() {
            return paint_no_data(root, self.chart.title);
        }
        let title;
        let mut chart = *self.chart;
        if self.dropped > 0 {
            let shown = self.placed.len();
            title = format!("{} (first {shown} of {} jobs)", chart.title, shown + self.dropped);
            chart.title = &title;
        }
        let x0 = self.placed.iter().map(|(b, _)| b.start).fold(f64::INFINITY, f64::min);
        let x1 = self.placed.iter().map(|(b, _)| b.end).fold(f64::NEG_INFINITY, f64::max);
        let top = self.placed.iter().map(|(b, lo)| lo.saturating_add(b.units)).max().unwrap_or(0);
        let (x0, x1) = widen(x0, x1);
        let y1 = top.max(self.total_units).max(1) as f64;
        let mut ctx = build(root, &chart, (x0, x1), nice_ticks(x0, x1, 10), (0.0, y1))?;
        let x_fmt = |v: &f64| fmt_num(*v);
        let y_fmt = |v: &f64| fmt_num(*v);
        ctx.configure_mesh()
            .x_desc(chart.x_label)
            .y_desc(chart.y_label)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_labels(8)
            .max_light_lines(0)
            .bold_line_style(GRID)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, DESC_SIZE))
            .draw()
            .map_err(draw_err)?;
        ctx.draw_series(self.placed.iter().map(|&(b, lo)| {
            let color = PALETTE[b.category % PALETTE.len()];
            Rectangle::new([(b.start, lo as f64), (b.end, lo.saturating_add(b.units) as f64)], color.filled())
        }))
        .map_err(draw_err)?;
        if self.total_units > 0 {
            let cap = self.total_units as f64;
            ctx.draw_series(std::iter::once(PathElement::new(vec![(x0, cap), (x1, cap)], BLACK.stroke_width(1))))
                .map_err(draw_err)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fmt_num_is_compact() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(-0.0), "0");
        assert_eq!(fmt_num(1000.0000000002), "1000");
        assert_eq!(fmt_num(0.30000000000000004), "0.3");
        assert_eq!(fmt_num(2.5e7), "2.5e7");
        assert_eq!(fmt_num(1e6), "1e6");
        assert_eq!(fmt_num(f64::NAN), "");
    }

    #[test]
    fn downsample_keeps_ends_and_peaks() {
        let pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, if i == 5_000 { 99.0 } else { 1.0 })).collect();
        let d = downsample(&pts, MAX_POINTS_PER_SERIES);
        assert!(d.len() <= MAX_POINTS_PER_SERIES);
        assert_eq!(d[0], pts[0]);
        assert_eq!(d[d.len() - 1], pts[pts.len() - 1]);
        assert!(d.contains(&(5_000.0, 99.0)));
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn cdf_steps_end_at_one_and_stay_small() {
        let xs: Vec<f64> = (0..100_000).map(|i| i as f64).collect();
        let s = cdf_steps(&xs);
        assert!(s.len() <= MAX_POINTS_PER_SERIES);
        assert_eq!(s[s.len() - 1], (99_999.0, 1.0));
        assert!(s.windows(2).all(|w| w[0].1 <= w[1].1 && w[0].0 <= w[1].0));
        // A big jump at the start survives thinning.
        let mut xs = vec![0.0; 5_000];
        xs.extend((1..=10_000).map(f64::from));
        let s = cdf_steps(&xs);
        assert!(s.len() < MAX_POINTS_PER_SERIES);
        assert_eq!(s[..2], [(0.0, 0.0), (0.0, 1.0 / 3.0)]);
        assert!(s.windows(2).all(|w| w[1].1 - w[0].1 <= 1.0 / 3.0 + 1e-12));
        assert_eq!(cdf_steps(&[0.0, 0.0, 3.0]), vec![(0.0, 0.0), (0.0, 2.0 / 3.0), (3.0, 2.0 / 3.0), (3.0, 1.0)]);
    }

    #[test]
    fn ticks_are_round_and_in_range() {
        assert_eq!(nice_ticks(0.0, 10.0, 10), (0..=10).map(f64::from).collect::<Vec<_>>());
        assert_eq!(log_ticks(0.0, 4.0), vec![0.0, 1.0, 2.0, 3.0, 4.0]);
        let t = log_ticks(0.0, 0.9);
        assert_eq!(t.len(), 3); // 1, 2, 5
        assert!(t.iter().all(|v| (0.0..=0.9).contains(v)));
    }
}
