//! The Horizontal Pod Autoscaler's algorithm: how many replicas a workload should have
//! for its metrics, and how fast it may get there.
//!
//! Source: `kubernetes/kubernetes` `pkg/controller/podautoscaler/replica_calculator.go`
//! (`GetResourceReplicas`, `calcPlainMetricReplicas`, `getUsageRatioReplicaCount`,
//! `GetExternalPerPodMetricReplicas`, `groupPods`) and `horizontal.go`
//! (`reconcileAutoscaler`, `normalizeDesiredReplicas`, `stabilizeRecommendation`,
//! `normalizeDesiredReplicasWithBehaviors`, `stabilizeRecommendationWithBehaviors`,
//! `convertDesiredReplicasWithBehaviorRate`, `calculateScaleUpLimitWithScalingRules`,
//! `calculateScaleDownLimitWithBehaviors`, `storeScaleEvent`), v1.32 (one tolerance, 0.1),
//! and `pkg/apis/autoscaling/v2/defaults.go` for the default `behavior`.
//!
//! * **Replicas for a metric.** `desired = ceil(current × usage / target)`, nothing when the
//!   ratio is within the tolerance (|1 − ratio| ≤ 0.1). For resource utilisation, usage is
//!   the pods' summed usage over their summed requests (an integer percentage). Pods
//!   without a metric count, when scaling down, as using their whole request (at least the
//!   target), when scaling up as using nothing; unready pods count as using nothing when
//!   scaling up, and are left out when scaling down; if that flips the direction or falls
//!   within the tolerance, nothing changes.
//! * **Normalization** without `behavior`: the highest recommendation of the last 5 min
//!   (`--horizontal-pod-autoscaler-downscale-stabilization`) is kept, then clamped to
//!   `[min, max]` and to a scale-up of at most `max(2 × current, 4)`.
//! * **With `behavior`** (defaults: up without a window, at most +4 pods or +100 % per
//!   15 s, whichever is more; down with a 300 s window, at most −100 % per 15 s): the
//!   recommendation is stabilized (up: the lowest of the up window, down: the highest of
//!   the down window) and limited by the policies over the replicas added or removed in
//!   each policy's period.
//!
//! The `inference-service` controller applies it to its replicas; the functions are exact
//! and pinned by the test vectors of `horizontal_test.go` and `replica_calculator_test.go`.

use sim_core::time::{SimDuration, SimTime};

/// The controller's tolerance (`--horizontal-pod-autoscaler-tolerance`).
pub const TOLERANCE: f64 = 0.1;
/// The downscale stabilization window without `behavior`.
pub const DOWNSCALE_WINDOW: SimDuration = SimDuration::from_secs(300);
/// Scale-up limit without `behavior`: `max(factor × current, minimum)`.
pub const SCALE_UP_LIMIT_FACTOR: f64 = 2.0;
pub const SCALE_UP_LIMIT_MINIMUM: f64 = 4.0;

/// One pod, as the replica calculator sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pod {
    /// What it requests of the resource, in thousandths (`None`: a container requests none).
    pub request: Option<u64>,
    /// Its metric, in thousandths (`None`: missing).
    pub usage: Option<u64>,
    /// Where it stands.
    pub state: PodState,
}

/// A pod's state for `groupPods`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodState {
    /// Running and ready.
    Ready,
    /// Pending, or (for CPU) not yet ready or still initializing.
    Unready,
    /// Failed or being deleted: not counted at all.
    Ignored,
}

/// Why no recommendation could be made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HpaError {
    /// No metric for any counted pod.
    NoMetrics,
    /// A counted pod's container requests none of the resource.
    MissingRequest,
    /// No pods.
    NoPods,
}

fn within(ratio: f64) -> bool {
    (1.0 - ratio).abs() <= TOLERANCE
}

/// `GetResourceReplicas`: replicas for a utilisation target (`target_percent` of the
/// requests); with the utilisation (percent) it measured.
pub fn resource_replicas(current: u32, pods: &[Pod], target_percent: u32) -> Result<(u32, u32), HpaError> {
    if pods.is_empty() {
        return Err(HpaError::NoPods);
    }
    let counted: Vec<&Pod> = pods.iter().filter(|p| p.state != PodState::Ignored).collect();
    let ready = counted.iter().filter(|p| p.state == PodState::Ready && p.usage.is_some()).count();
    let has_unready = counted.iter().any(|p| p.state == PodState::Unready);
    let has_missing = counted.iter().any(|p| p.state == PodState::Ready && p.usage.is_none());
    // Pods with a metric, ready ones only.
    let mut metrics: Vec<(u64, u64)> = Vec::new();
    for p in counted.iter().filter(|p| p.state == PodState::Ready) {
        let request = p.request.ok_or(HpaError::MissingRequest)?;
        if let Some(u) = p.usage {
            metrics.push((u, request));
        }
    }
    if metrics.is_empty() {
        return Err(HpaError::NoMetrics);
    }
    let ratio_of = |m: &[(u64, u64)]| -> Result<(f64, u32), HpaError> {
        let (used, requested) = m.iter().fold((0u64, 0u64), |a, x| (a.0 + x.0, a.1 + x.1));
        if requested == 0 {
            return Err(HpaError::MissingRequest);
        }
        let utilization = (used * 100 / requested) as u32;
        Ok((f64::from(utilization) / f64::from(target_percent), utilization))
    };
    let (ratio, utilization) = ratio_of(&metrics)?;
    let scale_up_with_unready = has_unready && ratio > 1.0;
    if !scale_up_with_unready && !has_missing {
        if within(ratio) {
            return Ok((current, utilization));
        }
        return Ok(((ratio * ready as f64).ceil() as u32, utilization));
    }
    for p in counted.iter().filter(|p| p.state == PodState::Ready && p.usage.is_none()) {
        let request = p.request.ok_or(HpaError::MissingRequest)?;
        // Scaling down: as if using its whole request (at least the target); up: nothing.
        // (At exactly the target, neither: they are left out.)
        if ratio < 1.0 {
            metrics.push((request * u64::from(target_percent.max(100)) / 100, request));
        } else if ratio > 1.0 {
            metrics.push((0, request));
        }
    }
    if scale_up_with_unready {
        for p in counted.iter().filter(|p| p.state == PodState::Unready) {
            metrics.push((0, p.request.ok_or(HpaError::MissingRequest)?));
        }
    }
    let (new_ratio, _) = ratio_of(&metrics)?;
    if within(new_ratio) || (ratio < 1.0 && new_ratio > 1.0) || (ratio > 1.0 && new_ratio < 1.0) {
        return Ok((current, utilization));
    }
    let n = (new_ratio * metrics.len() as f64).ceil() as u32;
    if (new_ratio < 1.0 && n > current) || (new_ratio > 1.0 && n < current) {
        return Ok((current, utilization));
    }
    Ok((n, utilization))
}

/// `calcPlainMetricReplicas`: replicas for a per-pod average target (a Pods metric, or a
/// resource's average value), both in thousandths.
pub fn per_pod_replicas(current: u32, pods: &[Pod], target: u64) -> Result<u32, HpaError> {
    if pods.is_empty() {
        return Err(HpaError::NoPods);
    }
    // Only pending pods are unready for a plain metric.
    let counted: Vec<&Pod> = pods.iter().filter(|p| p.state != PodState::Ignored).collect();
    let mut metrics: Vec<u64> = counted.iter().filter(|p| p.state == PodState::Ready).filter_map(|p| p.usage).collect();
    let ready = metrics.len();
    if metrics.is_empty() {
        return Err(HpaError::NoMetrics);
    }
    let ratio_of = |m: &[u64]| (m.iter().sum::<u64>() / m.len() as u64) as f64 / target as f64;
    let ratio = ratio_of(&metrics);
    let has_unready = counted.iter().any(|p| p.state == PodState::Unready);
    let missing = counted.iter().filter(|p| p.state == PodState::Ready && p.usage.is_none()).count();
    let scale_up_with_unready = has_unready && ratio > 1.0;
    if !scale_up_with_unready && missing == 0 {
        return Ok(if within(ratio) { current } else { (ratio * ready as f64).ceil() as u32 });
    }
    if ratio != 1.0 {
        metrics.extend(std::iter::repeat_n(if ratio < 1.0 { target } else { 0 }, missing));
    }
    if scale_up_with_unready {
        metrics.extend(std::iter::repeat_n(0, counted.iter().filter(|p| p.state == PodState::Unready).count()));
    }
    let new_ratio = ratio_of(&metrics);
    if within(new_ratio) || (ratio < 1.0 && new_ratio > 1.0) || (ratio > 1.0 && new_ratio < 1.0) {
        return Ok(current);
    }
    let n = (new_ratio * metrics.len() as f64).ceil() as u32;
    Ok(if (new_ratio < 1.0 && n > current) || (new_ratio > 1.0 && n < current) { current } else { n })
}

/// `getUsageRatioReplicaCount`: replicas for an object or external metric's value
/// against a `Value` target (`ready`: the ready pods; from zero: `ceil(ratio)`).
pub fn value_replicas(current: u32, ready: u32, usage: u64, target: u64) -> Result<u32, HpaError> {
    let ratio = usage as f64 / target as f64;
    if current == 0 {
        return Ok(ratio.ceil() as u32);
    }
    if ready == 0 {
        return Err(HpaError::NoPods);
    }
    Ok(if within(ratio) { current } else { (ratio * f64::from(ready)).ceil() as u32 })
}

/// `GetExternalPerPodMetricReplicas` (and the object metric's `AverageValue`): replicas
/// for a total against a per-pod target: `ceil(usage / target)` unless within the
/// tolerance of the current replicas (`status.replicas`).
pub fn average_value_replicas(status_replicas: u32, usage: u64, target: u64) -> u32 {
    let ratio = usage as f64 / (target as f64 * f64::from(status_replicas));
    if within(ratio) { status_replicas } else { (usage as f64 / target as f64).ceil() as u32 }
}

/// A scaling policy: at most `value` pods, or `value` percent, per `period`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Pods per period.
    Pods(u32, SimDuration),
    /// Percent per period.
    Percent(u32, SimDuration),
}

impl Policy {
    fn period(&self) -> SimDuration {
        match *self {
            Policy::Pods(_, p) | Policy::Percent(_, p) => p,
        }
    }
}

/// Which policy wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Select {
    /// The one allowing the largest change (the default).
    Max,
    /// The smallest.
    Min,
    /// No scaling in this direction.
    Disabled,
}

/// One direction's rules (`HPAScalingRules`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Stabilization window (`None`: the controller's downscale window, for scale-down).
    pub window: Option<SimDuration>,
    /// How the policies combine.
    pub select: Select,
    /// The policies.
    pub policies: Vec<Policy>,
}

/// `behavior`: scale-up and scale-down rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Behavior {
    /// Scale-up.
    pub up: Rules,
    /// Scale-down.
    pub down: Rules,
}

impl Default for Behavior {
    /// `defaults.go`: up without a window, the larger of +4 pods and +100 % per 15 s; down
    /// with the controller's window (300 s), −100 % per 15 s.
    fn default() -> Self {
        let s15 = SimDuration::from_secs(15);
        Behavior {
            up: Rules {
                window: Some(SimDuration::ZERO),
                select: Select::Max,
                policies: vec![Policy::Pods(4, s15), Policy::Percent(100, s15)],
            },
            down: Rules { window: None, select: Select::Max, policies: vec![Policy::Percent(100, s15)] },
        }
    }
}

/// Why the replicas are what they are (the `AbleToScale` and `ScalingLimited` reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Within range.
    DesiredWithinRange,
    /// Raised to `minReplicas`.
    TooFewReplicas,
    /// Lowered to `maxReplicas`.
    TooManyReplicas,
    /// Limited by the scale-up rate.
    ScaleUpLimit,
    /// Limited by the scale-down rate.
    ScaleDownLimit,
}

/// One scale change and when (`timestampedScaleEvent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleEvent {
    /// Replicas added or removed.
    pub change: u32,
    /// When.
    pub at: SimTime,
    /// Older than the longest period of its direction.
    pub outdated: bool,
}

/// One HPA's state between reconciles: its bounds, behavior, recommendations and scale
/// events.
#[derive(Clone, Debug, PartialEq)]
pub struct Hpa {
    /// `minReplicas`.
    pub min: u32,
    /// `maxReplicas`.
    pub max: u32,
    /// `behavior` (`None`: the controller's normalization without it).
    pub behavior: Option<Behavior>,
    /// Past recommendations (replicas, when), as the controller keeps them.
    pub recommendations: Vec<(u32, SimTime)>,
    /// Scale-up and scale-down events.
    pub up_events: Vec<ScaleEvent>,
    pub down_events: Vec<ScaleEvent>,
    /// Whether its first reconcile recorded the replicas it found as a recommendation
    /// (`recordInitialRecommendation`: a new HPA does not scale down for 5 minutes).
    pub started: bool,
    /// The controller's downscale stabilization window
    /// (`--horizontal-pod-autoscaler-downscale-stabilization`, [`DOWNSCALE_WINDOW`]): the
    /// no-behavior path's window, and a `behavior`'s scale-down window when it gives none.
    pub downscale_window: SimDuration,
}

impl Hpa {
    /// A new HPA with no history.
    pub fn new(min: u32, max: u32, behavior: Option<Behavior>) -> Self {
        Hpa {
            min,
            max,
            behavior,
            recommendations: Vec::new(),
            up_events: Vec::new(),
            down_events: Vec::new(),
            started: false,
            downscale_window: DOWNSCALE_WINDOW,
        }
    }

    /// One whose controller already holds `recommendations` (an empty list: none, and no
    /// initial one recorded).
    pub fn with_history(min: u32, max: u32, behavior: Option<Behavior>, recommendations: Vec<(u32, SimTime)>) -> Self {
        Hpa { recommendations, started: true, ..Hpa::new(min, max, behavior) }
    }

    /// `reconcileAutoscaler` past the metrics: the replicas to set, from `current` and the
    /// metrics' `desired` (the largest over the metrics); records the scale event.
    pub fn reconcile(&mut self, now: SimTime, current: u32, desired: u32) -> (u32, Limit) {
        if !self.started {
            self.started = true;
            self.recommendations.push((current, now));
        }
        let (n, why) = if current > self.max {
            (self.max, Limit::TooManyReplicas)
        } else if current < self.min {
            (self.min, Limit::TooFewReplicas)
        } else if self.behavior.is_some() {
            self.normalize_with_behavior(now, current, desired)
        } else {
            self.normalize(now, current, desired)
        };
        if n != current {
            self.store_event(now, current, n);
        }
        (n, why)
    }

    /// `normalizeDesiredReplicas`: stabilized over the downscale window, then clamped.
    pub fn normalize(&mut self, now: SimTime, current: u32, desired: u32) -> (u32, Limit) {
        let stabilized = self.stabilize(now, desired);
        convert_with_rules(current, stabilized, self.min, self.max)
    }

    /// `stabilizeRecommendation`: the highest recommendation of the window (this one
    /// recorded in place of the last that fell out of it).
    fn stabilize(&mut self, now: SimTime, desired: u32) -> u32 {
        let cutoff = SimTime(now.0.saturating_sub(self.downscale_window.0));
        let mut most = desired;
        let mut old = None;
        for (i, &(r, at)) in self.recommendations.iter().enumerate() {
            if at < cutoff {
                old = Some(i);
            } else {
                most = most.max(r);
            }
        }
        match old {
            Some(i) => self.recommendations[i] = (desired, now),
            None => self.recommendations.push((desired, now)),
        }
        most
    }

    /// `normalizeDesiredReplicasWithBehaviors`.
    pub fn normalize_with_behavior(&mut self, now: SimTime, current: u32, desired: u32) -> (u32, Limit) {
        let b = self.behavior.clone().unwrap_or_default();
        let up_window = b.up.window.unwrap_or(SimDuration::ZERO);
        let down_window = b.down.window.unwrap_or(self.downscale_window);
        let stabilized = self.stabilize_with_behavior(now, current, desired, up_window, down_window);
        self.rate_limited(now, current, stabilized, &b)
    }

    /// `stabilizeRecommendationWithBehaviors`: no higher than the lowest recommendation of
    /// the up window, no lower than the highest of the down window.
    pub fn stabilize_with_behavior(
        &mut self,
        now: SimTime,
        current: u32,
        desired: u32,
        up_window: SimDuration,
        down_window: SimDuration,
    ) -> u32 {
        let up_cutoff = SimTime(now.0.saturating_sub(up_window.0));
        let down_cutoff = SimTime(now.0.saturating_sub(down_window.0));
        let (mut up, mut down) = (desired, desired);
        let mut old = None;
        for (i, &(r, at)) in self.recommendations.iter().enumerate() {
            if at > up_cutoff {
                up = up.min(r);
            }
            if at > down_cutoff {
                down = down.max(r);
            }
            if at < up_cutoff && at < down_cutoff {
                old = Some(i);
            }
        }
        let result = current.max(up).min(down);
        match old {
            Some(i) => self.recommendations[i] = (desired, now),
            None => self.recommendations.push((desired, now)),
        }
        result
    }

    /// `convertDesiredReplicasWithBehaviorRate`.
    fn rate_limited(&self, now: SimTime, current: u32, desired: u32, b: &Behavior) -> (u32, Limit) {
        if desired > current {
            let limit = scale_up_limit(now, current, &self.up_events, &self.down_events, &b.up).max(current);
            let (allowed, why) =
                if limit < self.max { (limit, Limit::ScaleUpLimit) } else { (self.max, Limit::TooManyReplicas) };
            if desired > allowed {
                return (allowed, why);
            }
        } else if desired < current {
            let limit = scale_down_limit(now, current, &self.up_events, &self.down_events, &b.down).min(current);
            let (allowed, why) =
                if self.min < limit { (limit, Limit::ScaleDownLimit) } else { (self.min, Limit::TooFewReplicas) };
            if desired < allowed {
                return (allowed, why);
            }
        }
        (desired, Limit::DesiredWithinRange)
    }

    /// `storeScaleEvent`: the change replaces the last outdated event of its direction, or
    /// is appended.
    pub fn store_event(&mut self, now: SimTime, from: u32, to: u32) {
        let Some(b) = &self.behavior else { return };
        let (rules, events) = if to > from { (&b.up, &mut self.up_events) } else { (&b.down, &mut self.down_events) };
        let longest = rules.policies.iter().map(Policy::period).max().unwrap_or(SimDuration::ZERO);
        let cutoff = SimTime(now.0.saturating_sub(longest.0));
        let mut last_outdated = None;
        for (i, e) in events.iter_mut().enumerate() {
            if e.at < cutoff {
                e.outdated = true;
            }
            if e.outdated {
                last_outdated = Some(i);
            }
        }
        let e = ScaleEvent { change: from.abs_diff(to), at: now, outdated: false };
        match last_outdated {
            Some(i) => events[i] = e,
            None => events.push(e),
        }
    }
}

/// `convertDesiredReplicasWithRules`: clamped to `[min, max]` and to a scale-up of at most
/// `max(2 × current, 4)`.
pub fn convert_with_rules(current: u32, desired: u32, min: u32, max: u32) -> (u32, Limit) {
    let limit = (SCALE_UP_LIMIT_FACTOR * f64::from(current)).max(SCALE_UP_LIMIT_MINIMUM) as u32;
    let (allowed, why) = if max > limit { (limit, Limit::ScaleUpLimit) } else { (max, Limit::TooManyReplicas) };
    if desired < min {
        (min, Limit::TooFewReplicas)
    } else if desired > allowed {
        (allowed, why)
    } else {
        (desired, Limit::DesiredWithinRange)
    }
}

/// Replicas changed within `period` before `now` (`getReplicasChangePerPeriod`).
fn changed(now: SimTime, period: SimDuration, events: &[ScaleEvent]) -> i64 {
    let cutoff = SimTime(now.0.saturating_sub(period.0));
    events.iter().filter(|e| e.at > cutoff).map(|e| i64::from(e.change)).sum()
}

/// `calculateScaleUpLimitWithScalingRules`.
pub fn scale_up_limit(now: SimTime, current: u32, up: &[ScaleEvent], down: &[ScaleEvent], rules: &Rules) -> u32 {
    limit(now, current, up, down, rules, true)
}

/// `calculateScaleDownLimitWithBehaviors`.
pub fn scale_down_limit(now: SimTime, current: u32, up: &[ScaleEvent], down: &[ScaleEvent], rules: &Rules) -> u32 {
    limit(now, current, up, down, rules, false)
}

/// The replicas the policies allow in one direction: each policy's from the replicas at
/// the start of its period (the current ones less those added, plus those removed, in
/// it); `Max` takes the one allowing the largest change, `Min` the smallest. Scale-down
/// percentages truncate, scale-up ones round up; below zero allows any scale-down.
fn limit(now: SimTime, current: u32, up: &[ScaleEvent], down: &[ScaleEvent], rules: &Rules, scale_up: bool) -> u32 {
    if rules.select == Select::Disabled {
        return current;
    }
    // The larger limit is the larger change up, the smaller one down.
    let widest = (rules.select == Select::Min) != scale_up;
    let mut result: Option<i64> = None;
    for p in &rules.policies {
        let start = i64::from(current) - changed(now, p.period(), up) + changed(now, p.period(), down);
        let proposed = match (*p, scale_up) {
            (Policy::Pods(v, _), true) => start + i64::from(v),
            (Policy::Pods(v, _), false) => start - i64::from(v),
            (Policy::Percent(v, _), true) => (start as f64 * (1.0 + f64::from(v) / 100.0)).ceil() as i64,
            (Policy::Percent(v, _), false) => (start as f64 * (1.0 - f64::from(v) / 100.0)) as i64,
        };
        result = Some(result.map_or(proposed, |r| if widest { r.max(proposed) } else { r.min(proposed) }));
    }
    // No policy: Max allows no change (its start is the bound furthest from a change), Min
    // any.
    let none = match (rules.select == Select::Min, scale_up) {
        (true, true) => i64::from(u32::MAX),
        (true, false) => 0,
        (false, _) => i64::from(current),
    };
    result.unwrap_or(none).clamp(0, i64::from(u32::MAX)) as u32
}
