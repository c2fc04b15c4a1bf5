//! Deterministic charts for the reports, as SVG or PNG bytes (960×540).
//!
//! Plain data in, bytes out: nothing here depends on other schedlab types.
//!
//! * [`lines`] — one line per series with a legend (in a strip right of the plotting area,
//!   [`LEGEND_WIDTH`] wide, so it never covers the data): utilization over time, queue length over
//!   time (`step = true` draws each value until the next point, as a piecewise-constant
//!   series should be).
//! * [`cdf`] — empirical CDFs, one per named sample set: the wait-time CDF per policy.
//! * [`bars`] — grouped bars, categories on x and one bar per series in each: mean bounded
//!   slowdown per size class per policy.
//! * [`gantt`] / [`gantt_placed`] — what ran where and when: each job drawn from start to end
//!   over the units it held (one rectangle per range of units), coloured by a category index;
//!   [`gantt_layout`] gives the rectangles. Jobs whose units are unknown are laid out by
//!   first fit over the free units, so a schedule that never over-allocates is never drawn
//!   above the machine's size.
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
//!   evenly spaced levels of F, so the curve is off by at most 0.1 %); a Gantt chart draws at
//!   most [`MAX_GANTT_BARS`] jobs (the earliest-starting; the title then says so), and one
//!   job's ranges less than a pixel apart are drawn as one rectangle.
//! * Tick labels: every axis labels its ticks with the fewest digits (at least three
//!   decimals' worth, as `fmt_num`) that write each tick to within a thousandth of the
//!   step between ticks, so consecutive ticks never print the same label
//!   (`0.0022, 0.0024, …`, not `0.002, 0.002, …`).
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
    /// Resource units held (the height laid out when the units themselves are unknown).
    pub units: u64,
    /// Colour key (palette index modulo 10).
    pub category: usize,
}

/// One rectangle of a Gantt chart: job `job` (an index into the bars given) on units
/// `lo..hi` from `start` to `end`, in colour `category`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GanttRect {
    /// Index of its job in the bars.
    pub job: usize,
    /// Start time.
    pub start: f64,
    /// End time.
    pub end: f64,
    /// First unit covered.
    pub lo: u64,
    /// One past the last unit covered.
    pub hi: u64,
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
    render(&LinesPaint { chart, series: drawn }, format)
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
    let paint = LinesPaint { chart, series: curves };
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

/// A Gantt chart of jobs whose units are unknown, laid out by [`gantt_layout`]: each job
/// from `start` to `end` over the lowest units free at its start. `total_units` (the machine
/// size) is drawn as a black line; only an input holding more units at once than that
/// (an over-allocating schedule) is drawn above it. [`Chart::log_x`] is ignored: the x axis
/// is linear time.
pub fn gantt(chart: &Chart, bars: &[Bar], total_units: u64, format: Format) -> Result<Vec<u8>, PlotError> {
    render_gantt(chart, bars, &[], total_units, format)
}

/// A Gantt chart with the units each job held where known: `allocated[i]` is job `i`'s
/// `(first, len)` unit ranges, each drawn as one rectangle; an empty entry means unknown,
/// laid out as by [`gantt`] around the known jobs (see [`gantt_layout`]). `allocated` must
/// have one entry per bar.
pub fn gantt_placed(
    chart: &Chart,
    bars: &[Bar],
    allocated: &[Vec<(u64, u64)>],
    total_units: u64,
    format: Format,
) -> Result<Vec<u8>, PlotError> {
    if bars.len() != allocated.len() {
        return Err(PlotError::InvalidInput(format!("{} bars but {} unit sets", bars.len(), allocated.len())));
    }
    render_gantt(chart, bars, allocated, total_units, format)
}

fn render_gantt(
    chart: &Chart,
    bars: &[Bar],
    allocated: &[Vec<(u64, u64)>],
    total_units: u64,
    format: Format,
) -> Result<Vec<u8>, PlotError> {
    let known = |i: usize| allocated.get(i).map_or(&[][..], Vec::as_slice);
    let kept = gantt_subset(bars, known);
    let dropped = (0..bars.len()).filter(|&i| drawable(&bars[i], known(i))).count() - kept.len();
    let subset: Vec<Bar> = kept.iter().map(|&i| bars[i]).collect();
    let subset_units: Vec<Vec<(u64, u64)>> = kept.iter().map(|&i| known(i).to_vec()).collect();
    let rects = gantt_layout(&subset, &subset_units);
    render(&GanttPaint { chart, rects, shown: kept.len(), total_units, dropped }, format)
}

/// The rectangles of a Gantt chart, ordered by job then first unit (deterministic: same
/// input, same rectangles). Intervals are half-open, `[start, end)`.
///
/// * A job with known units (`allocated[i]` non-empty, `(first, len)` ranges) gets one
///   rectangle per range, at those units, whatever its `units`.
/// * The others (an empty or missing entry), taken by start time (an instant job first
///   among equal starts, then input order), each take the `units` lowest units free at
///   their start: free of the jobs laid out so far still running then, and of the known
///   jobs running at any time during theirs. That can be several ranges (first fit,
///   not contiguous), one rectangle each. So when no known units are given and the bars
///   never hold more than N units at once, no rectangle reaches above unit N; an input that
///   does (a corrupt schedule) is drawn above, never a panic.
/// * A bar with a non-finite time, `end < start`, or no units to draw gets no rectangle.
pub fn gantt_layout(bars: &[Bar], allocated: &[Vec<(u64, u64)>]) -> Vec<GanttRect> {
    let known = |i: usize| allocated.get(i).map_or(&[][..], Vec::as_slice);
    let at = |job: usize, lo: u64, hi: u64| {
        let b = &bars[job];
        GanttRect { job, start: b.start, end: b.end, lo, hi, category: b.category }
    };
    let mut out = Vec::new();
    // Known jobs as (start, end, lo, hi) per range.
    let mut placed: Vec<(f64, f64, u64, u64)> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    for (i, b) in bars.iter().enumerate().filter(|&(i, b)| drawable(b, known(i))) {
        if known(i).is_empty() {
            order.push(i);
        }
        for &(first, len) in known(i).iter().filter(|r| r.1 > 0) {
            placed.push((b.start, b.end, first, first.saturating_add(len)));
            out.push(at(i, first, first.saturating_add(len)));
        }
    }
    let lasts = |i: usize| bars[i].end > bars[i].start;
    order.sort_by(|&a, &b| bars[a].start.total_cmp(&bars[b].start).then(lasts(a).cmp(&lasts(b))).then(a.cmp(&b)));
    // Laid-out ranges still running: (lo, hi, end).
    let mut active: Vec<(u64, u64, f64)> = Vec::new();
    for i in order {
        let b = &bars[i];
        active.retain(|a| a.2 > b.start);
        let during = |p: &&(f64, f64, u64, u64)| (p.0 < b.end || p.0 <= b.start) && b.start < p.1;
        let mut busy: Vec<(u64, u64)> = active.iter().map(|a| (a.0, a.1)).collect();
        busy.extend(placed.iter().filter(during).map(|p| (p.2, p.3)));
        busy.sort_unstable();
        for (lo, hi) in lowest_free(&busy, b.units) {
            active.push((lo, hi, b.end));
            out.push(at(i, lo, hi));
        }
    }
    out.sort_by(|a, b| a.job.cmp(&b.job).then(a.lo.cmp(&b.lo)));
    out
}

/// The `need` lowest units outside `busy` (ranges `(lo, hi)` sorted by `lo`, possibly
/// overlapping), as `(lo, hi)` ranges; past the last busy unit there is always room (up to
/// `u64::MAX`, where a range is cut short).
fn lowest_free(busy: &[(u64, u64)], mut need: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut cur = 0u64;
    for &(lo, hi) in busy {
        if need == 0 {
            break;
        }
        if lo > cur {
            let take = (lo - cur).min(need);
            out.push((cur, cur + take));
            need -= take;
        }
        cur = cur.max(hi);
    }
    if need > 0 && cur < u64::MAX {
        out.push((cur, cur.saturating_add(need)));
    }
    out
}

// ---------------------------------------------------------------------------------------
// Data preparation

/// Whether a bar can be drawn: finite times, `end ≥ start`, and units to draw (`known`
/// ranges, or else a non-zero `units`).
fn drawable(b: &Bar, known: &[(u64, u64)]) -> bool {
    let units = if known.is_empty() { b.units > 0 } else { known.iter().any(|r| r.1 > 0) };
    b.start.is_finite() && b.end.is_finite() && b.end >= b.start && units
}

/// Indices of the bars drawn: the drawable ones, capped to the earliest-starting
/// [`MAX_GANTT_BARS`] (ties by input order), in input order.
fn gantt_subset<'a>(bars: &[Bar], known: impl Fn(usize) -> &'a [(u64, u64)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..bars.len()).filter(|&i| drawable(&bars[i], known(i))).collect();
    if idx.len() > MAX_GANTT_BARS {
        idx.sort_by(|&a, &b| bars[a].start.total_cmp(&bars[b].start).then(a.cmp(&b)));
        idx.truncate(MAX_GANTT_BARS);
        idx.sort_unstable();
    }
    idx
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
/// or very small magnitudes ([`fmt_prec`] at precision 3).
fn fmt_num(v: f64) -> String {
    fmt_prec(v, MIN_LABEL_PRECISION)
}

/// Fewest digits a tick label is written with (as [`fmt_num`]), and the most.
const MIN_LABEL_PRECISION: usize = 3;
const MAX_LABEL_PRECISION: usize = 17;

/// `v` with at most `p` decimals, or in exponent form (|v| ≥ 10⁶ or below 10⁻³) with at most
/// `p` significant digits; trailing zeros dropped.
fn fmt_prec(v: f64, p: usize) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    let s = if a != 0.0 && !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.*e}", p.saturating_sub(1));
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.')),
            _ => s,
        }
    } else {
        let s = format!("{v:.p$}");
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
    };
    if s == "-0" { "0".to_string() } else { s }
}

/// The precision ([`fmt_prec`]) for labelling the ticks `values` of one axis, in order: the
/// smallest, from 3, at which every label reads back within a thousandth of the smallest
/// step between consecutive ticks. Consecutive ticks then never share a label.
fn label_precision(values: &[f64]) -> usize {
    let step = values.windows(2).map(|w| (w[1] - w[0]).abs()).filter(|d| *d > 0.0).fold(f64::INFINITY, f64::min);
    if !step.is_finite() {
        return MIN_LABEL_PRECISION;
    }
    let close = |v: f64, p: usize| fmt_prec(v, p).parse::<f64>().is_ok_and(|r| (r - v).abs() <= step * 1e-3);
    (MIN_LABEL_PRECISION..=MAX_LABEL_PRECISION)
        .find(|&p| values.iter().all(|&v| !v.is_finite() || close(v, p)))
        .unwrap_or(MAX_LABEL_PRECISION)
}

/// The label formatter of an axis with ticks `ticks` (in axis coordinates), each shown as
/// `shown(tick)` (`10^tick` on a log axis), at the precision [`label_precision`] picks.
fn tick_labels(ticks: &[f64], shown: fn(f64) -> f64) -> impl Fn(&f64) -> String + use<> {
    let p = label_precision(&ticks.iter().map(|&t| shown(t)).collect::<Vec<_>>());
    move |v: &f64| fmt_prec(shown(*v), p)
}

fn linear(v: f64) -> f64 {
    v
}

fn exp10(v: f64) -> f64 {
    10f64.powf(v)
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
/// the f64 label formatter, so `configure_mesh` would not be available), on x and on y.
#[derive(Clone)]
struct TickAxis {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for TickAxis {
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

impl ValueFormatter<f64> for TickAxis {
    fn format(value: &f64) -> String {
        fmt_num(*value)
    }
}

type Ctx<'a, DB> = ChartContext<'a, DB, Cartesian2d<TickAxis, TickAxis>>;

/// Builds the axes shared by all charts, each with explicit ticks.
fn build<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    chart: &Chart,
    (x, x_ticks): ((f64, f64), Vec<f64>),
    (y, y_ticks): ((f64, f64), Vec<f64>),
) -> Result<Ctx<'a, DB>, PlotError> {
    ChartBuilder::on(root)
        .caption(chart.title, (FONT, TITLE_SIZE))
        .margin(14)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(
            TickAxis { inner: (x.0..x.1).into(), ticks: x_ticks },
            TickAxis { inner: (y.0..y.1).into(), ticks: y_ticks },
        )
        .map_err(draw_err)
}

/// The grid, tick labels (`x_fmt`, `y_fmt`) and axis descriptions; no vertical grid lines
/// without `x_grid`.
fn draw_mesh<DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    chart: &Chart,
    x_fmt: &dyn Fn(&f64) -> String,
    y_fmt: &dyn Fn(&f64) -> String,
    x_grid: bool,
) -> Result<(), PlotError> {
    let mut mesh = ctx.configure_mesh();
    if !x_grid {
        mesh.disable_x_mesh();
    }
    mesh.x_desc(chart.x_label)
        .y_desc(chart.y_label)
        .x_label_formatter(x_fmt)
        .y_label_formatter(y_fmt)
        .max_light_lines(0)
        .bold_line_style(GRID)
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, DESC_SIZE))
        .draw()
        .map_err(draw_err)
}

/// Ticks for a y axis from `lo` to `hi`.
fn y_ticks(lo: f64, hi: f64) -> Vec<f64> {
    nice_ticks(lo, hi, 8)
}

/// Width of the strip right of the plotting area that holds the legend, pixels: legends
/// never cover the data.
pub const LEGEND_WIDTH: u32 = 230;
/// Most legend entries drawn; the rest are counted in a last line.
const LEGEND_MAX: usize = 18;

/// How a legend entry's swatch is drawn.
#[derive(Clone, Copy)]
enum Swatch {
    Line,
    Box,
}

/// The plotting area and the legend strip right of it.
fn split_legend<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    root.split_horizontally(WIDTH as i32 - LEGEND_WIDTH as i32)
}

/// The legend in its strip: one line per entry, colour `PALETTE[k]`, names shortened to fit
/// (the report's tables give them whole).
fn draw_side_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: &[&str],
    swatch: Swatch,
) -> Result<(), PlotError> {
    let style = TextStyle::from((FONT, LEGEND_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let max_chars = ((LEGEND_WIDTH - 50) / 8) as usize;
    for (k, name) in names.iter().enumerate().take(LEGEND_MAX) {
        let y = 60 + k as i32 * 24;
        let color = PALETTE[k % PALETTE.len()];
        match swatch {
            Swatch::Line => area.draw(&PathElement::new(vec![(8, y), (32, y)], color.stroke_width(3))),
            Swatch::Box => area.draw(&Rectangle::new([(12, y - 6), (28, y + 6)], color.filled())),
        }
        .map_err(draw_err)?;
        let shown: String = if name.chars().count() > max_chars {
            name.chars().take(max_chars.saturating_sub(1)).chain(['…']).collect()
        } else {
            name.to_string()
        };
        area.draw(&Text::new(shown, (40, y), style.clone())).map_err(draw_err)?;
    }
    if names.len() > LEGEND_MAX {
        let y = 60 + LEGEND_MAX as i32 * 24;
        let more = format!("+{} more", names.len() - LEGEND_MAX);
        area.draw(&Text::new(more, (40, y), style)).map_err(draw_err)?;
    }
    Ok(())
}

/// Line charts and CDFs: already prepared vertices per named series. SVG gets one polyline
/// per series; PNG one 2-pixel segment per pair of vertices; a lone point is a dot.
struct LinesPaint<'a> {
    chart: &'a Chart<'a>,
    series: Vec<(&'a str, Vec<(f64, f64)>)>,
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
        let (x_ticks, shown): (_, fn(f64) -> f64) =
            if self.chart.log_x { (log_ticks(x0, x1), exp10) } else { (nice_ticks(x0, x1, 10), linear) };
        let x_fmt = tick_labels(&x_ticks, shown);
        let yt = y_ticks(y0, y1);
        let y_fmt = tick_labels(&yt, linear);
        let (plot, legend) = split_legend(root);
        let mut ctx = build(&plot, self.chart, ((x0, x1), x_ticks), ((y0, y1), yt))?;
        draw_mesh(&mut ctx, self.chart, &x_fmt, &y_fmt, true)?;
        for (k, (_, pts)) in self.series.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            // A dense series (more points than half the plot's pixels) drawn thin, so that
            // day-by-day swings over years stay lines rather than one filled band.
            let style = color.stroke_width(if pts.len() > 400 { 1 } else { 2 });
            let drawn = if pts.len() == 1 {
                ctx.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            } else if format == Format::Svg {
                ctx.draw_series(LineSeries::new(pts.iter().copied(), style))
            } else {
                // plotters' bitmap backend fills a wide polyline as one polygon, which breaks
                // into spikes on dense zig-zags: stroke each segment on its own instead.
                ctx.draw_series(pts.windows(2).map(|w| PathElement::new(vec![w[0], w[1]], style)))
            };
            drawn.map_err(draw_err)?;
        }
        let names: Vec<&str> = self.series.iter().map(|(n, _)| *n).collect();
        draw_side_legend(&legend, &names, Swatch::Line)
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
        let yt = y_ticks(y0, y1);
        let y_fmt = tick_labels(&yt, linear);
        let (plot, legend) = split_legend(root);
        let mut ctx = build(&plot, self.chart, ((0.0, n as f64), centres), ((y0, y1), yt))?;
        let cats = self.categories;
        let x_fmt = |v: &f64| {
            let i = v.floor();
            if i >= 0.0 && (i as usize) < cats.len() { cats[i as usize].clone() } else { String::new() }
        };
        draw_mesh(&mut ctx, self.chart, &x_fmt, &y_fmt, false)?;
        let width = 0.8 / self.series.len() as f64;
        for (j, (_, values)) in self.series.iter().enumerate() {
            if !values.iter().any(|v| v.is_finite()) {
                continue;
            }
            let color = PALETTE[j % PALETTE.len()];
            let rects = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(move |(i, &v)| {
                let left = i as f64 + 0.1 + j as f64 * width;
                Rectangle::new([(left, 0.0), (left + width, v)], color.filled())
            });
            ctx.draw_series(rects).map_err(draw_err)?;
        }
        let names: Vec<&str> = self.series.iter().map(|(n, _)| n.as_str()).collect();
        draw_side_legend(&legend, &names, Swatch::Box)
    }
}

struct GanttPaint<'a> {
    chart: &'a Chart<'a>,
    /// The rectangles, by job then first unit ([`gantt_layout`]).
    rects: Vec<GanttRect>,
    /// Jobs drawn.
    shown: usize,
    total_units: u64,
    /// Drawable bars left out by the cap.
    dropped: usize,
}

impl Paint for GanttPaint<'_> {
    fn paint<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, _format: Format) -> Result<(), PlotError> {
        if self.rects.is_empty() {
            return paint_no_data(root, self.chart.title);
        }
        let title;
        let mut chart = *self.chart;
        if self.dropped > 0 {
            title = format!("{} (first {} of {} jobs)", chart.title, self.shown, self.shown + self.dropped);
            chart.title = &title;
        }
        let x0 = self.rects.iter().map(|r| r.start).fold(f64::INFINITY, f64::min);
        let x1 = self.rects.iter().map(|r| r.end).fold(f64::NEG_INFINITY, f64::max);
        let top = self.rects.iter().map(|r| r.hi).max().unwrap_or(0);
        let (x0, x1) = widen(x0, x1);
        // 5 % headroom: the machine's size line stays clear of the frame.
        let (_, y1) = pad(0.0, top.max(self.total_units).max(1) as f64);
        let (xt, yt) = (nice_ticks(x0, x1, 10), y_ticks(0.0, y1));
        let (x_fmt, y_fmt) = (tick_labels(&xt, linear), tick_labels(&yt, linear));
        let mut ctx = build(root, &chart, ((x0, x1), xt), ((0.0, y1), yt))?;
        draw_mesh(&mut ctx, &chart, &x_fmt, &y_fmt, true)?;
        let units_per_pixel = y1 / ctx.plotting_area().dim_in_pixel().1.max(1) as f64;
        ctx.draw_series(join_close(&self.rects, units_per_pixel).into_iter().map(|r| {
            let color = PALETTE[r.category % PALETTE.len()];
            Rectangle::new([(r.start, r.lo as f64), (r.end, r.hi as f64)], color.filled())
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

/// `rects` (by job then first unit) with each job's ranges less than `min_gap` units apart
/// joined: the same picture when `min_gap` is a pixel, in fewer elements for a job spread
/// over many small ranges.
fn join_close(rects: &[GanttRect], min_gap: f64) -> Vec<GanttRect> {
    let mut out: Vec<GanttRect> = Vec::with_capacity(rects.len());
    for r in rects {
        if let Some(last) = out.last_mut()
            && last.job == r.job
            && r.lo >= last.hi
            && ((r.lo - last.hi) as f64) < min_gap
        {
            last.hi = last.hi.max(r.hi);
            continue;
        }
        out.push(*r);
    }
    out
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

    /// Ticks over a narrow range print distinct labels (`0.0022, 0.0024, …`, where three
    /// decimals gave `0.002, 0.002, 0.003`); wide ranges keep the compact labels.
    #[test]
    fn tick_labels_tell_ticks_apart() {
        let labels = |ticks: &[f64], shown: fn(f64) -> f64| -> Vec<String> {
            let f = tick_labels(ticks, shown);
            ticks.iter().map(&f).collect()
        };
        let narrow = nice_ticks(0.0021, 0.0034, 8);
        assert_eq!(labels(&narrow, linear), ["0.0022", "0.0024", "0.0026", "0.0028", "0.003", "0.0032", "0.0034"]);
        assert_eq!(labels(&nice_ticks(0.0, 0.0036, 8), linear)[..4], ["0", "5e-4", "0.001", "0.0015"]);
        assert_eq!(labels(&[0.0, 0.0025, 0.005, 0.0075], linear), ["0", "0.0025", "0.005", "0.0075"]);
        assert_eq!(labels(&nice_ticks(0.0, 1.0, 10), linear)[..3], ["0", "0.1", "0.2"]);
        assert_eq!(labels(&nice_ticks(0.0, 2e6, 8), linear)[..3], ["0", "500000", "1e6"]);
        assert_eq!(labels(&[1e6, 1e6 + 0.5, 1e6 + 1.0], linear), ["1e6", "1.0000005e6", "1.000001e6"]);
        assert_eq!(labels(&[0.0, 1.0, 2.0], exp10), ["1", "10", "100"]);
        assert_eq!(labels(&[7.0], linear), ["7"]);
        for (lo, hi) in [(0.0021, 0.0034), (1e-9, 1.3e-9), (12_345.0, 12_345.2), (-5e-5, 5e-5), (1e300, 1.0001e300)] {
            let l = labels(&nice_ticks(lo, hi, 8), linear);
            assert!(l.windows(2).all(|w| w[0] != w[1]), "{lo}..{hi}: {l:?}");
        }
        assert_eq!(fmt_prec(0.00214, 4), "0.0021");
        assert_eq!(fmt_prec(1234.5, 0), "1234");
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
    fn join_close_merges_sub_pixel_gaps_of_one_job() {
        let r = |job, lo, hi| GanttRect { job, start: 0.0, end: 1.0, lo, hi, category: 0 };
        let rects = [r(0, 0, 2), r(0, 3, 4), r(0, 9, 10), r(1, 10, 12), r(1, 13, 14)];
        assert_eq!(join_close(&rects, 2.0), [r(0, 0, 4), r(0, 9, 10), r(1, 10, 14)]);
        assert_eq!(join_close(&rects, 0.5), rects);
    }

    #[test]
    fn lowest_free_takes_gaps_first() {
        assert_eq!(lowest_free(&[], 3), [(0, 3)]);
        assert_eq!(lowest_free(&[(1, 2), (4, 6), (5, 7)], 4), [(0, 1), (2, 4), (7, 8)]);
        assert_eq!(lowest_free(&[(0, 5)], 0), []);
        assert_eq!(lowest_free(&[(0, u64::MAX)], 2), []);
        assert_eq!(lowest_free(&[(0, u64::MAX - 1)], 2), [(u64::MAX - 1, u64::MAX)]);
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
