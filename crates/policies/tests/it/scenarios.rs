//! Tiny scenarios with start times computed by hand.

use crate::{job, run, starts};
use sim_core::Outcome;

/// pyss's `easy_bf_input.0` / `cons_bf_input.0` pair (100 processors).
fn pyss_pair() -> Vec<sim_core::Job> {
    vec![job("1", 0, 70, 100, 100), job("2", 1, 80, 100, 100), job("3", 2, 90, 100, 100), job("4", 50, 20, 250, 250)]
}

#[test]
fn fcfs_blocks_behind_the_head() {
    // 4 waits behind 2 and 3 although it would fit at 50.
    assert_eq!(starts("fcfs", 100, &pyss_pair()), [Some(0), Some(100), Some(200), Some(300)]);
}

#[test]
fn easy_backfills_into_extra_processors() {
    // Shadow for 2 is 100 with 20 extra; 4 (20 procs, ends 300) uses the extra at 50.
    // Finishes 100/200/400/300 as pyss expects.
    assert_eq!(starts("easy", 100, &pyss_pair()), [Some(0), Some(100), Some(300), Some(50)]);
}

#[test]
fn conservative_protects_every_reservation() {
    // 3 is reserved at 200, so 4 may not take 20 processors past 200: it starts at 300.
    // Finishes 100/200/300/550 as pyss expects.
    assert_eq!(starts("conservative", 100, &pyss_pair()), [Some(0), Some(100), Some(200), Some(300)]);
}

/// Two 5-processor jobs end together at 10; B asked for 20 s.
fn equal_time_ends() -> Vec<sim_core::Job> {
    vec![job("A", 0, 5, 10, 10), job("B", 0, 5, 10, 20), job("H", 1, 8, 100, 100), job("S", 2, 5, 5, 5)]
}

#[test]
fn easy_per_time_applies_all_ends_before_the_pass() {
    // At 10 both ends are applied, then one pass: H starts; S waits for H (110).
    assert_eq!(starts("easy", 10, &equal_time_ends()), [Some(0), Some(0), Some(10), Some(110)]);
    assert_eq!(starts("easy[pass=per-time]", 10, &equal_time_ends()), [Some(0), Some(0), Some(10), Some(110)]);
}

#[test]
fn easy_per_event_passes_between_equal_time_ends() {
    // After A's end (A started first), 5 are free and H's shadow is B's requested end 20:
    // S (ends 15) is backfilled at 10. After B's end H still lacks 3 until S ends at 15.
    assert_eq!(starts("easy[pass=per-event]", 10, &equal_time_ends()), [Some(0), Some(0), Some(15), Some(10)]);
}

#[test]
fn fcfs_per_event_and_per_time_agree_when_nothing_can_pass() {
    let want = [Some(0), Some(0), Some(10), Some(110)];
    assert_eq!(starts("fcfs[pass=per-event]", 10, &equal_time_ends()), want);
    assert_eq!(starts("fcfs", 10, &equal_time_ends()), want);
}

#[test]
fn equal_time_arrivals_keep_input_order() {
    // Both arrive at 5 with 6 processors free: the first in the file goes first.
    let jobs = vec![job("R", 0, 4, 10, 10), job("X", 5, 6, 10, 10), job("Y", 5, 6, 10, 10)];
    for p in ["fcfs", "easy", "conservative", "easy[pass=per-event]", "conservative[pass=per-event]"] {
        assert_eq!(starts(p, 10, &jobs), [Some(0), Some(5), Some(15)], "{p}");
    }
}

#[test]
fn arrivals_see_resources_freed_at_the_same_instant() {
    // R ends at 10 and X arrives at 10: ends come first, so X starts at 10.
    let jobs = vec![job("R", 0, 10, 10, 10), job("X", 10, 10, 5, 5)];
    for p in ["fcfs", "easy", "conservative", "fcfs[pass=per-event]", "conservative[pass=per-event]"] {
        assert_eq!(starts(p, 10, &jobs), [Some(0), Some(10)], "{p}");
    }
}

fn clairvoyance() -> Vec<sim_core::Job> {
    vec![job("A", 0, 6, 100, 100), job("H", 1, 10, 10, 10), job("C", 2, 4, 50, 200)]
}

#[test]
fn easy_backfill_estimate_requested_vs_actual() {
    // C asks for 200 s (would end 202, after the shadow 100, with no extra processors).
    assert_eq!(starts("easy", 10, &clairvoyance()), [Some(0), Some(100), Some(110)]);
    // Its true 50 s end at 52, before the shadow: backfilled.
    assert_eq!(starts("easy[backfill_estimate=actual]", 10, &clairvoyance()), [Some(0), Some(100), Some(2)]);
}

#[test]
fn conservative_backfill_estimate_actual() {
    // With true lengths C fits in [2, 52) before A's end at 100.
    assert_eq!(starts("conservative", 10, &clairvoyance()), [Some(0), Some(100), Some(110)]);
    assert_eq!(starts("conservative[backfill_estimate=actual]", 10, &clairvoyance()), [Some(0), Some(100), Some(2)]);
}

/// Unit 0 frees early; the head's node reservation holds it.
fn node_reservation() -> Vec<sim_core::Job> {
    vec![
        job("X", 0, 1, 5, 5),     // unit 0, ends 5
        job("A", 0, 2, 100, 100), // units 1-2
        job("B", 0, 1, 50, 50),   // unit 3
        job("H", 1, 3, 10, 10),   // head: 3 units free only at 100
        job("C", 6, 1, 100, 100), // long 1-unit job
    ]
}

#[test]
fn easy_count_uses_any_extra_processor() {
    // At 6: shadow 100, extra 4 - 3 = 1: C (ends 106) takes the free processor.
    assert_eq!(starts("easy", 4, &node_reservation()), [Some(0), Some(0), Some(0), Some(100), Some(6)]);
}

#[test]
fn easy_nodes_keeps_the_heads_units() {
    // H holds units {0,1,2} from 100; C over [6,106) would overlap unit 0, the only free
    // one. At 50 unit 3 frees and is not H's: C starts there.
    assert_eq!(
        starts("easy[reservation=nodes]", 4, &node_reservation()),
        [Some(0), Some(0), Some(0), Some(100), Some(50)]
    );
}

#[test]
fn nodes_mode_places_on_lowest_indexed_units() {
    let recs = run("easy[reservation=nodes]", 4, &node_reservation(), false);
    let units: Vec<String> = recs.iter().map(|r| r.units.to_interval_string()).collect();
    assert_eq!(units, ["0", "1-2", "3", "0-2", "3"]);
    let recs = run("conservative[reservation=nodes]", 4, &node_reservation(), false);
    assert_eq!(recs[3].start.map(|s| s.0 / 1_000_000), Some(100));
}

/// The revisit/rebuild difference: R1 ends early at 10.
fn replan() -> Vec<sim_core::Job> {
    vec![job("R1", 0, 5, 10, 100), job("R2", 0, 5, 50, 50), job("J1", 1, 10, 100, 100), job("J2", 2, 5, 50, 50)]
}

#[test]
fn conservative_revisit_keeps_later_reservations_while_revisiting() {
    // Before 10: J1 at 100, J2 at 50. At 10 J1 is revisited first but J2 still holds
    // [50,100): J1 stays at 100; then J2 moves to 10 and starts. At 50 R2 ends: J1 fits
    // only once J2 ends, at 60.
    assert_eq!(starts("conservative", 10, &replan()), [Some(0), Some(0), Some(60), Some(10)]);
}

#[test]
fn conservative_rebuild_replans_from_scratch() {
    // At 10 all reservations are dropped: J1 gets 50 (R2's end), J2 after J1, at 150.
    assert_eq!(starts("conservative[replan=rebuild]", 10, &replan()), [Some(0), Some(0), Some(50), Some(150)]);
}

#[test]
fn walltime_kill_ends_jobs_at_their_request() {
    let jobs = vec![job("A", 0, 10, 100, 50), job("B", 1, 10, 10, 10)];
    let recs = run("easy", 10, &jobs, true);
    assert_eq!(recs[0].outcome, Outcome::Killed);
    assert_eq!(recs[0].end.map(|e| e.0 / 1_000_000), Some(50));
    assert_eq!(recs[1].start.map(|s| s.0 / 1_000_000), Some(50));
    let recs = run("easy", 10, &jobs, false);
    assert_eq!(recs[0].outcome, Outcome::Completed);
    assert_eq!(recs[1].start.map(|s| s.0 / 1_000_000), Some(100));
}

#[test]
fn overrunning_jobs_do_not_break_reservations() {
    // A asked for 50 s but runs 100. B's reservation at 50 goes stale; C arrives at 60.
    // Conservative replans: B waits for A (100), C follows B (110). EASY agrees.
    let jobs = vec![job("A", 0, 10, 100, 50), job("B", 1, 10, 10, 10), job("C", 60, 5, 5, 5)];
    for p in [
        "conservative",
        "conservative[replan=rebuild]",
        "easy",
        "conservative[reservation=nodes]",
        "easy[reservation=nodes]",
    ] {
        assert_eq!(starts(p, 10, &jobs), [Some(0), Some(100), Some(110)], "{p}");
    }
}

#[test]
fn impossible_jobs_are_rejected_and_do_not_block() {
    use sim_core::RejectReason::*;
    let mut jobs =
        vec![job("big", 0, 11, 10, 10), job("zero", 0, 0, 10, 10), job("norun", 0, 2, 0, 10), job("ok", 1, 10, 5, 5)];
    jobs.push(sim_core::Job { runtime: None, ..job("missing", 2, 2, 1, 1) });
    let recs = run("fcfs", 10, &jobs, false);
    let outcomes: Vec<Outcome> = recs.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Rejected(LargerThanMachine),
            Outcome::Rejected(NoProcessors),
            Outcome::Rejected(ZeroRuntime),
            Outcome::Completed,
            Outcome::Rejected(MissingRuntime)
        ]
    );
    assert_eq!(recs[3].start.map(|s| s.0), Some(1_000_000));
    assert!(recs[0].start.is_none() && recs[0].end.is_none());
}
