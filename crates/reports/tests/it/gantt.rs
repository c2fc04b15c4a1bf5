//! `reports::plots::gantt_layout`: the rectangles a Gantt chart draws. Jobs are drawn at
//! the units they held when those are known; otherwise each takes the lowest units free at
//! its start (possibly several ranges), so a schedule that never over-allocates is never
//! drawn above the machine.

use proptest::prelude::*;
use reports::plots::{self, Bar, Chart, Format, GanttRect};

fn bar(start: f64, end: f64, units: u64) -> Bar {
    Bar { start, end, units, category: 0 }
}

/// Each bar's rectangles as `(lo, hi)` unit ranges, in order.
fn ranges_of(rects: &[GanttRect], n: usize) -> Vec<Vec<(u64, u64)>> {
    let mut out = vec![Vec::new(); n];
    for r in rects {
        out[r.job].push((r.lo, r.hi));
    }
    out
}

/// The largest number of units the bars hold at one time (half-open `[start, end)`).
fn peak_demand(bars: &[Bar]) -> u64 {
    bars.iter()
        .map(|b| bars.iter().filter(|o| o.start <= b.start && b.start < o.end).map(|o| o.units).sum())
        .max()
        .unwrap_or(0)
}

/// Strict FCFS of Batsim's `medium_late` workload (801 jobs, 32 machines) on its 32 units:
/// each job starts, in submission order and no earlier than the one before, as soon as
/// enough units are free; it runs its profile's delay, cut at its walltime. A valid
/// schedule (never more than 32 units at once) whose free units fragment.
fn medium_late_fcfs() -> (Vec<Bar>, u64) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/batsim-medium_late.json");
    let w: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cap = w["nb_res"].as_u64().unwrap();
    let mut jobs: Vec<(f64, f64, u64, u32)> = w["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let delay = w["profiles"][j["profile"].as_str().unwrap()]["delay"].as_f64().unwrap();
            let run = delay.min(j["walltime"].as_f64().unwrap());
            (j["subtime"].as_f64().unwrap(), run, j["res"].as_u64().unwrap(), j["id"].as_u64().unwrap() as u32)
        })
        .collect();
    jobs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut bars: Vec<Bar> = Vec::new();
    let mut earliest = 0.0f64;
    for (submit, run, units, id) in jobs {
        let mut t = submit.max(earliest);
        loop {
            let used: u64 = bars.iter().filter(|b| b.start <= t && t < b.end).map(|b| b.units).sum();
            if used + units <= cap {
                break;
            }
            t = bars.iter().map(|b| b.end).filter(|&e| e > t).fold(f64::INFINITY, f64::min);
        }
        earliest = t;
        bars.push(Bar { start: t, end: t + run, units, category: id as usize });
    }
    (bars, cap)
}

#[test]
fn medium_late_schedule_is_never_drawn_above_the_machine() {
    let (bars, cap) = medium_late_fcfs();
    assert_eq!((bars.len(), cap), (801, 32));
    assert!(peak_demand(&bars) <= cap, "the schedule itself is valid");
    let rects = plots::gantt_layout(&bars, &[]);
    let top = rects.iter().map(|r| r.hi).max().unwrap();
    assert!(top <= cap, "a rectangle reaches unit {top} on a {cap}-unit machine");
    // Every job is drawn, with all its units.
    for (i, r) in ranges_of(&rects, bars.len()).iter().enumerate() {
        assert_eq!(r.iter().map(|(lo, hi)| hi - lo).sum::<u64>(), bars[i].units, "job {i}");
    }
}

/// A small case where packing each job into one contiguous block needs a lane above the
/// machine: at t = 5, units 1 and 3 are free but not adjacent.
#[test]
fn fragmented_free_units_are_used_without_exceeding_capacity() {
    let bars = [bar(0.0, 10.0, 1), bar(0.0, 5.0, 1), bar(0.0, 10.0, 1), bar(0.0, 5.0, 1), bar(5.0, 10.0, 2)];
    let rects = plots::gantt_layout(&bars, &[]);
    let r = ranges_of(&rects, bars.len());
    assert_eq!(r, vec![vec![(0, 1)], vec![(1, 2)], vec![(2, 3)], vec![(3, 4)], vec![(1, 2), (3, 4)]]);
    assert!(rects.iter().all(|r| r.hi <= 4));
    let gantt_rect = rects.iter().find(|r| r.job == 4).unwrap();
    assert_eq!((gantt_rect.start, gantt_rect.end, gantt_rect.category), (5.0, 10.0, 0));
}

#[test]
fn known_units_are_drawn_at_those_units() {
    // Job 0 held units 0-3 and 8 and 10-11; job 1 unknown; job 2 units 4-7.
    let bars = [bar(0.0, 10.0, 7), bar(2.0, 6.0, 2), bar(1.0, 4.0, 4)];
    let allocated = vec![vec![(0, 4), (8, 1), (10, 2)], vec![], vec![(4, 4)]];
    let rects = plots::gantt_layout(&bars, &allocated);
    let r = ranges_of(&rects, bars.len());
    assert_eq!(r[0], vec![(0, 4), (8, 9), (10, 12)], "one rectangle per range");
    assert_eq!(r[2], vec![(4, 8)]);
    // The unknown job takes the lowest units no placed job holds during its run.
    assert_eq!(r[1], vec![(9, 10), (12, 13)]);
    assert!(rects.iter().all(|g| g.start == bars[g.job].start && g.end == bars[g.job].end));
}

#[test]
fn over_allocated_input_is_drawn_above_the_line_without_panicking() {
    // Two 3-unit jobs at once on a 4-unit machine, one asking for every unit there is, and
    // one placed at the top of the unit numbers.
    let bars = [bar(0.0, 10.0, 3), bar(0.0, 10.0, 3), bar(1.0, 2.0, u64::MAX), bar(0.0, 1.0, 5)];
    let allocated = vec![vec![], vec![], vec![], vec![(u64::MAX - 1, 5)]];
    let rects = plots::gantt_layout(&bars, &allocated);
    let r = ranges_of(&rects, bars.len());
    assert_eq!(r[..2], [vec![(0, 3)], vec![(3, 6)]]);
    assert_eq!(r[2], vec![(6, u64::MAX)]);
    assert_eq!(r[3], vec![(u64::MAX - 1, u64::MAX)]);
    for format in [Format::Svg, Format::Png] {
        let chart = Chart { title: "over", x_label: "time (s)", y_label: "units", log_x: false };
        plots::gantt(&chart, &bars, 4, format).unwrap();
        plots::gantt_placed(&chart, &bars, &allocated, 4, format).unwrap();
    }
}

proptest! {
    /// Never two rectangles on one unit at one time; each job gets exactly its units; the
    /// lowest free units (nothing is drawn above the peak demand); same input, same layout.
    #[test]
    fn layout_never_overlaps_nor_exceeds_peak_demand(
        raw in prop::collection::vec((0u32..500, 1u32..200, 1u64..16), 0..150),
    ) {
        let bars: Vec<Bar> = raw
            .iter()
            .enumerate()
            .map(|(i, &(s, d, u))| Bar { start: s as f64, end: (s + d) as f64, units: u, category: i })
            .collect();
        let rects = plots::gantt_layout(&bars, &[]);
        prop_assert_eq!(&rects, &plots::gantt_layout(&bars, &[]), "deterministic");
        let peak = peak_demand(&bars);
        for (i, r) in ranges_of(&rects, bars.len()).iter().enumerate() {
            prop_assert_eq!(r.iter().map(|(lo, hi)| hi - lo).sum::<u64>(), bars[i].units);
        }
        for (k, a) in rects.iter().enumerate() {
            prop_assert!(a.hi <= peak, "job {} drawn up to {} above the peak demand {}", a.job, a.hi, peak);
            for b in &rects[k + 1..] {
                let in_time = a.start < b.end && b.start < a.end;
                prop_assert!(!in_time || a.hi <= b.lo || b.hi <= a.lo, "jobs {} and {} overlap", a.job, b.job);
            }
        }
    }
}
