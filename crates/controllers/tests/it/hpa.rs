//! The HPA algorithm against the test vectors of kubernetes `pkg/controller/podautoscaler`
//! (`horizontal_test.go`, `replica_calculator_test.go`, v1.32). Their harness gives each
//! pod two containers, each requesting half its request and reporting half its level
//! (integer halves: a level of 95 reads 94).

use controllers::hpa::{
    self, Behavior, Hpa, Limit, Pod, PodState, Policy, Rules, ScaleEvent, Select, average_value_replicas,
    per_pod_replicas, resource_replicas, value_replicas,
};
use sim_core::{SimDuration, SimTime};

const NOW: SimTime = SimTime(10_000_000_000);

fn ago(secs: u64) -> SimTime {
    SimTime(NOW.0 - secs * 1_000_000)
}

/// Pods reporting `levels` (milli-CPU) of `requests` (milli-CPU), all ready.
fn pods(levels: &[u64], requests: &[u64]) -> Vec<Pod> {
    requests
        .iter()
        .enumerate()
        .map(|(i, &r)| Pod { request: Some(r), usage: levels.get(i).map(|l| l / 2 * 2), state: PodState::Ready })
        .collect()
}

fn with_states(mut p: Vec<Pod>, states: &[PodState]) -> Vec<Pod> {
    p.iter_mut().zip(states).for_each(|(p, s)| p.state = *s);
    p
}

/// `reconcileAutoscaler` past the metrics, for an HPA without behavior and with no
/// recommendation recorded (`recommendations: []`).
fn settle(min: u32, max: u32, current: u32, desired: u32) -> (u32, Limit) {
    Hpa::with_history(min, max, None, Vec::new()).reconcile(NOW, current, desired)
}

use PodState::{Ignored, Ready as R, Unready as U};

#[test]
fn resource_utilization_vectors() {
    let one = [1000; 3];
    // TestScaleUp: 50 % against 30 % → ceil(1.667 × 3) = 5.
    assert_eq!(resource_replicas(3, &pods(&[300, 500, 700], &one), 30), Ok((5, 50)));
    assert_eq!(settle(2, 6, 3, 5).0, 5);
    // TestScaleUpUnreadyLessScale: the unready pod counts as 0 when scaling up → 4.
    let p = with_states(pods(&[300, 500, 700], &one), &[U, R, R]);
    assert_eq!(resource_replicas(3, &p, 30), Ok((4, 60)));
    // TestScaleUpUnreadyNoScale: rebalancing flips the direction → stays at 3.
    let p = with_states(pods(&[400, 500, 700], &one), &[R, U, U]);
    assert_eq!(resource_replicas(3, &p, 30), Ok((3, 40)));
    // TestScaleUpIgnoresFailedPods: 2 running of 4 → 4.
    let p = with_states(pods(&[500, 700], &[1000; 4]), &[R, R, Ignored, Ignored]);
    assert_eq!(resource_replicas(2, &p, 30), Ok((4, 60)));
    // TestScaleDown: 28 % against 50 % → ceil(0.56 × 5) = 3.
    let five = [1000; 5];
    assert_eq!(resource_replicas(5, &pods(&[100, 300, 500, 250, 250], &five), 50), Ok((3, 28)));
    assert_eq!(settle(2, 6, 5, 3), (3, Limit::DesiredWithinRange));
    // TestScaleDownStabilizeInitialSize: a new HPA records 5 and keeps it for 5 minutes.
    assert_eq!(Hpa::new(2, 6, None).reconcile(NOW, 5, 3).0, 5);
    // TestScaleDownIncludeUnreadyPods: unready pods left out when scaling down → 2.
    let p = with_states(pods(&[100, 300, 500, 250, 250], &five), &[R, R, R, U, U]);
    assert_eq!(resource_replicas(5, &p, 50), Ok((2, 30)));
    // TestTolerance: 102 % of 100 % → 3.
    assert_eq!(resource_replicas(3, &pods(&[1010, 1030, 1020], &[900, 1000, 1100]), 100), Ok((3, 102)));
    // TestMinReplicas: 3 % of 90 % → 1, raised to 2.
    let (n, u) = resource_replicas(3, &pods(&[10, 95, 10], &[900, 1000, 1100]), 90).unwrap();
    assert_eq!((n, u, settle(2, 5, 3, n)), (1, 3, (2, Limit::TooFewReplicas)));
    // TestMaxReplicas: 616 % of 90 % → 21, lowered to 5.
    let (n, _) = resource_replicas(3, &pods(&[8000, 9500, 1000], &[900, 1000, 1100]), 90).unwrap();
    assert_eq!((n, settle(2, 5, 3, n)), (21, (5, Limit::TooManyReplicas)));
    // TestMissingMetrics: two of four pods report; the missing ones count as using their
    // request when scaling down → 2494 / 4000 = 62 % → 3.
    assert_eq!(resource_replicas(4, &pods(&[400, 95], &[1000; 4]), 100).map(|x| x.0), Ok(3));
    // No metric at all, or no request: errors (TestEmptyMetrics, TestEmptyCPURequest).
    assert_eq!(resource_replicas(4, &pods(&[], &[1000; 4]), 100), Err(hpa::HpaError::NoMetrics));
    assert_eq!(resource_replicas(1, &[], 50), Err(hpa::HpaError::NoPods));
}

#[test]
fn per_pod_object_and_external_vectors() {
    let ready = |levels: &[u64]| -> Vec<Pod> {
        levels.iter().map(|&l| Pod { request: None, usage: Some(l), state: PodState::Ready }).collect()
    };
    // TestScaleUpCM: 20, 10, 30 qps against 15 → 4.
    assert_eq!(per_pod_replicas(3, &ready(&[20_000, 10_000, 30_000]), 15_000), Ok(4));
    // TestScaleUpCMUnreadyAndHotCpuNoLessScale: readiness does not matter for custom
    // metrics (only pending pods are unready) → 6.
    assert_eq!(per_pod_replicas(3, &ready(&[50_000, 10_000, 30_000]), 15_000), Ok(6));
    // TestScaleDownCM: 12 against 20, five pods → 3. TestToleranceCM: 20333 / 20000 → 3.
    assert_eq!(per_pod_replicas(5, &ready(&[12_000; 5]), 20_000), Ok(3));
    assert_eq!(per_pod_replicas(3, &ready(&[20_000, 20_001, 21_000]), 20_000), Ok(3));
    // PlainMetric MissingMetricsNoChangeEq: the missing pods at the target keep 5.
    let mut p = ready(&[20_000, 19_000, 21_000]);
    p.extend([Pod { request: None, usage: None, state: PodState::Ready }; 2]);
    assert_eq!(per_pod_replicas(5, &p, 20_000), Ok(5));
    // Object metric, Value target: TestScaleUpCMObject 20 / 15 × 3 → 4; from zero
    // ceil(20 / 15) = 2 and ceil(1.0) = 1 without tolerance; TestToleranceCMObject → 3.
    assert_eq!(value_replicas(3, 3, 20_000, 15_000), Ok(4));
    assert_eq!((value_replicas(0, 0, 20_000, 15_000), value_replicas(0, 0, 1000, 1000)), (Ok(2), Ok(1)));
    assert_eq!(value_replicas(3, 3, 20_050, 20_000), Ok(3));
    // External, Value: TestScaleUpCMExternal 8600 / 6666 × 3 → 4; TestScaleDownCMExternal
    // 8600 / 14400 × 5 → 3; TestToleranceCMExternal 8600 / 8666 → 4 stays.
    assert_eq!(value_replicas(3, 3, 8600, 6666), Ok(4));
    assert_eq!(value_replicas(5, 5, 8600, 14_400), Ok(3));
    assert_eq!(value_replicas(4, 4, 8600, 8666), Ok(4));
    // AverageValue: TestScaleUpPerPodCMExternal ceil(8600 / 2222) = 4; TestScaleDownPerPod
    // CMExternal ceil(8600 / 3000) = 3; TestTolerancePerPodCMExternal 8600 / 8800 → 4
    // stays; TestScaleUpPerPodCMObject ceil(40 / 10) = 4.
    assert_eq!(average_value_replicas(3, 8600, 2222), 4);
    assert_eq!(average_value_replicas(5, 8600, 3000), 3);
    assert_eq!(average_value_replicas(4, 8600, 2200), 4);
    assert_eq!(average_value_replicas(3, 40_000, 10_000), 4);
}

#[test]
fn normalization_without_behavior() {
    // TestConvertDesiredReplicasWithRules (production factor 2: 3 → at most 6).
    assert_eq!(hpa::convert_with_rules(5, 7, 3, 8), (7, Limit::DesiredWithinRange));
    assert_eq!(hpa::convert_with_rules(3, 1, 2, 8), (2, Limit::TooFewReplicas));
    assert_eq!(hpa::convert_with_rules(1, 0, 0, 10), (0, Limit::DesiredWithinRange));
    assert_eq!(hpa::convert_with_rules(20, 1000, 1, 10), (10, Limit::TooManyReplicas));
    assert_eq!(hpa::convert_with_rules(3, 1000, 1, 2000), (6, Limit::ScaleUpLimit));
    // TestNormalizeDesiredReplicas: (recommendations, desired) → (result, kept).
    let m = |s: u64| ago(60 * s);
    for (recs, desired, want, kept) in [
        (vec![], 5, 5, 1),
        (vec![(4, m(2)), (5, m(1))], 3, 5, 3),
        (vec![(1, m(2)), (2, m(1))], 3, 3, 3),
        (vec![(10, m(10)), (9, m(9))], 3, 3, 2),
        (vec![(10, m(10)), (4, m(1)), (5, m(2)), (9, m(9))], 3, 5, 4),
    ] {
        let mut h = Hpa::with_history(1, 100, None, recs);
        assert_eq!(h.normalize(NOW, 10, desired).0, want);
        assert_eq!(h.recommendations.len(), kept);
    }
    // TestStabilizeDownscale: 4 pods, raw 2, a recommendation of 4 a minute ago → 4.
    let mut h = Hpa::with_history(1, 5, None, vec![(10, m(10)), (4, m(1))]);
    assert_eq!(h.reconcile(NOW, 4, 2).0, 4);
}

/// `gen(pods, pods_period, percent, percent_period, window)` of the tests.
fn rules(pods: u32, pods_period: u64, pct: u32, pct_period: u64, window: u64) -> Rules {
    let mut policies = Vec::new();
    if pods > 0 {
        policies.push(Policy::Pods(pods, SimDuration::from_secs(pods_period)));
    }
    if pct > 0 {
        policies.push(Policy::Percent(pct, SimDuration::from_secs(pct_period)));
    }
    Rules { window: Some(SimDuration::from_secs(window)), select: Select::Max, policies }
}

/// `events(changes, 120)` of the tests: spread over the last 120 s.
fn events(changes: &[u32]) -> Vec<ScaleEvent> {
    let seg = 120 / changes.len() as u64;
    changes
        .iter()
        .enumerate()
        .map(|(i, &c)| ScaleEvent { change: c, at: ago(120 - seg * (i as u64 + 1) + seg / 2), outdated: false })
        .collect()
}

#[test]
fn scaling_rules_vectors() {
    // (current, desired, min, max, up rules, down rules, up events, down events) → result.
    let d = Behavior::default();
    let case = |current, desired, min, max, up: Option<Rules>, down: Option<Rules>, ue: &[u32], de: &[u32]| {
        let b = Behavior { up: up.unwrap_or(d.up.clone()), down: down.unwrap_or(d.down.clone()) };
        let mut h = Hpa::with_history(min, max, Some(b), Vec::new());
        h.up_events = if ue.is_empty() { Vec::new() } else { events(ue) };
        h.down_events = if de.is_empty() { Vec::new() } else { events(de) };
        h.normalize_with_behavior(NOW, current, desired)
    };
    use Limit::*;
    assert_eq!(case(5, 7, 3, 8, None, None, &[], &[]), (7, DesiredWithinRange));
    assert_eq!(case(3, 1, 2, 8, None, None, &[], &[]), (2, TooFewReplicas));
    assert_eq!(case(20, 1000, 1, 10, None, None, &[], &[]), (10, TooManyReplicas));
    assert_eq!(case(3, 1000, 1, 2000, Some(rules(0, 0, 1, 60, 0)), None, &[], &[]), (4, ScaleUpLimit));
    assert_eq!(case(10, 50, 1, 1000, None, None, &[], &[]), (20, ScaleUpLimit));
    assert_eq!(case(10, 500, 1, 1000, Some(rules(100, 60, 100, 60, 0)), None, &[], &[]), (110, ScaleUpLimit));
    assert_eq!(case(10, 500, 1, 1000, Some(rules(2, 60, 100, 60, 0)), None, &[], &[]), (20, ScaleUpLimit));
    assert_eq!(case(10, 50, 1, 1000, Some(rules(100, 60, 0, 0, 0)), None, &[], &[]), (50, DesiredWithinRange));
    assert_eq!(case(10, 50, 1, 1000, Some(rules(30, 60, 0, 0, 0)), None, &[], &[]), (40, ScaleUpLimit));
    assert_eq!(case(10, 50, 1, 1000, Some(rules(0, 0, 200, 60, 0)), None, &[], &[]), (30, ScaleUpLimit));
    assert_eq!(case(100, 2, 1, 1000, None, Some(rules(20, 60, 1, 60, 300)), &[], &[]), (80, ScaleDownLimit));
    assert_eq!(case(100, 2, 1, 1000, None, Some(rules(2, 60, 1, 60, 300)), &[], &[]), (98, ScaleDownLimit));
    assert_eq!(case(10, 0, 1, 1000, None, Some(rules(100, 60, 0, 0, 300)), &[], &[]), (1, TooFewReplicas));
    assert_eq!(case(10, 2, 5, 1000, None, Some(rules(0, 0, 100, 60, 300)), &[], &[]), (5, TooFewReplicas));
    assert_eq!(case(10, 2, 1, 1000, None, Some(rules(5, 60, 0, 0, 300)), &[], &[]), (5, ScaleDownLimit));
    // With past events: the changes in each policy's period count against it.
    let up = |r| Some(r);
    assert_eq!(case(100, 500, 1, 200, up(rules(300, 60, 0, 0, 0)), None, &[1, 5, 9], &[]), (200, TooManyReplicas));
    assert_eq!(case(100, 500, 1, 1000, up(rules(5, 120, 0, 0, 0)), None, &[1, 5, 9], &[]), (100, ScaleUpLimit));
    assert_eq!(case(100, 500, 1, 1000, up(rules(150, 120, 0, 0, 0)), None, &[1, 5, 9], &[]), (235, ScaleUpLimit));
    assert_eq!(case(100, 500, 1, 1000, up(rules(0, 0, 200, 120, 0)), None, &[1, 5, 9], &[]), (255, ScaleUpLimit));
    assert_eq!(case(6, 24, 1, 1000, up(rules(0, 0, 300, 300, 0)), None, &[4], &[2]), (16, ScaleUpLimit));
    let down = |r| Some(r);
    assert_eq!(case(10, 5, 1, 1000, None, None, &[], &[1, 5, 9]), (5, DesiredWithinRange));
    assert_eq!(case(100, 0, 1, 1000, None, down(rules(115, 120, 0, 0, 300)), &[], &[1, 5, 9]), (1, TooFewReplicas));
    assert_eq!(case(100, 2, 1, 1000, None, down(rules(5, 120, 0, 0, 300)), &[], &[1, 5, 9]), (100, ScaleDownLimit));
    assert_eq!(case(100, 0, 1, 1000, None, down(rules(0, 0, 50, 120, 300)), &[], &[2, 4, 6]), (56, ScaleDownLimit));
    assert_eq!(case(10, 1, 1, 1000, None, down(rules(0, 0, 50, 180, 0)), &[2], &[4]), (6, ScaleDownLimit));
    assert_eq!(case(100, 0, 1, 1000, None, down(rules(0, 0, 10, 120, 300)), &[], &[10, 10, 10]), (100, ScaleDownLimit));
    assert_eq!(
        case(10, 5, 1, 1000, None, down(rules(0, 0, 1000, 120, 300)), &[], &[10, 10, 10]),
        (5, DesiredWithinRange)
    );
    // TestUpscaleCap: 700 % per 60 s from 3 → 24; with max 20 → 20.
    assert_eq!(case(3, 60, 1, 100, up(rules(0, 0, 700, 60, 0)), None, &[], &[]), (24, ScaleUpLimit));
    assert_eq!(case(3, 60, 1, 20, up(rules(0, 0, 700, 60, 0)), None, &[], &[]), (20, TooManyReplicas));
    // TestCalculateScaleUp/DownLimit…: select Min of [2 pods, 50 %] per 60 s.
    let min_rules = Rules {
        window: None,
        select: Select::Min,
        policies: vec![Policy::Pods(2, SimDuration::from_secs(60)), Policy::Percent(50, SimDuration::from_secs(60))],
    };
    assert_eq!(hpa::scale_up_limit(NOW, 1, &[], &[], &min_rules), 2);
    assert_eq!(hpa::scale_down_limit(NOW, 5, &[], &[], &min_rules), 3);
}

#[test]
fn stabilization_with_behavior_vectors() {
    // TestNormalizeDesiredReplicasWithBehavior: (recommendations, current, desired, up
    // window, down window) → (result, recommendations kept).
    let m = |s: u64| ago(60 * s);
    type Case = (Vec<(u32, SimTime)>, u32, u32, u64, u64, u32, Vec<u32>);
    let cases: Vec<Case> = vec![
        (vec![], 100, 5, 0, 0, 5, vec![5]),
        (vec![(4, m(2)), (5, m(1))], 100, 3, 0, 180, 5, vec![4, 5, 3]),
        (vec![(4, m(2)), (5, m(1))], 1, 7, 300, 0, 4, vec![4, 5, 7]),
        (vec![(1, m(2)), (2, m(1))], 100, 3, 300, 0, 3, vec![1, 2, 3]),
        (vec![(4, m(2)), (5, m(1))], 1, 3, 0, 300, 3, vec![4, 5, 3]),
        (vec![(10, m(10)), (9, m(9))], 100, 3, 0, 0, 3, vec![10, 3]),
        (vec![(10, m(10)), (9, m(9))], 1, 100, 0, 0, 100, vec![10, 100]),
        (vec![(10, m(10)), (4, m(1)), (5, m(2)), (9, m(9))], 100, 3, 0, 180, 5, vec![10, 4, 5, 3]),
        (vec![(10, m(100)), (6, m(1)), (5, m(2)), (9, m(3))], 1, 100, 300, 0, 5, vec![100, 6, 5, 9]),
        (vec![(2, m(100)), (3, m(3))], 2, 1, 300, 300, 2, vec![1, 3]),
        (vec![(2, m(100)), (1, m(3))], 2, 3, 300, 300, 2, vec![3, 1]),
    ];
    for (recs, current, desired, up, down, want, kept) in cases {
        let b = Behavior {
            up: Rules { window: Some(SimDuration::from_secs(up)), select: Select::Max, policies: Vec::new() },
            down: Rules { window: Some(SimDuration::from_secs(down)), select: Select::Max, policies: Vec::new() },
        };
        let mut h = Hpa::with_history(0, 1000, Some(b), recs.clone());
        let n =
            h.stabilize_with_behavior(NOW, current, desired, SimDuration::from_secs(up), SimDuration::from_secs(down));
        assert_eq!(n, want, "{recs:?} {current}→{desired}");
        assert_eq!(h.recommendations.iter().map(|r| r.0).collect::<Vec<_>>(), kept, "{recs:?}");
    }
}

#[test]
fn scale_events_are_kept_per_period() {
    // TestStoreScaleEvents row 7: events (8, 29 s), (6, 59 s), (7, 61 s), (9, 61 s) with
    // policies of 60 s and 30 s: 14 changed in the last 60 s; a scale-up from 10 to 15
    // marks the two older than 60 s outdated and replaces the last of them.
    let ev = |c, s| ScaleEvent { change: c, at: ago(s), outdated: false };
    let mut h =
        Hpa::with_history(1, 100, Some(Behavior { up: rules(10, 60, 100, 30, 0), ..Behavior::default() }), vec![]);
    h.up_events = vec![ev(8, 29), ev(6, 59), ev(7, 61), ev(9, 61)];
    let up_rules = rules(10, 60, 100, 30, 0);
    // Pods: 10 − 14 + 10 = 6; percent: (10 − 8) × 2 = 4; the larger.
    assert_eq!(hpa::scale_up_limit(NOW, 10, &h.up_events, &[], &up_rules), 6);
    h.store_event(NOW, 10, 15);
    let kept: Vec<(u32, bool)> = h.up_events.iter().map(|e| (e.change, e.outdated)).collect();
    assert_eq!(kept, [(8, false), (6, false), (7, true), (5, false)]);
}
