//! `inference-service`: a Deployment of identical inference replicas fed by a request-rate
//! series, its latency and SLO measured every interval, its replica count set by a
//! horizontal autoscaler (the HPA, or KEDA in front of it) or fixed.
//!
//! * **Replicas** are pods (jobs of kind `inference`, one task each with the service's
//!   cores, memory and GPUs) that the controller submits and deletes, named
//!   `<name>-<k>`. A new replica serves only after it is scheduled and then `startup`
//!   seconds (image pull and model load) have passed. A replica still there when the
//!   rate series ends completes then; one deleted by a scale-down ends `completed` when
//!   it was running, `unfinished` when it was still pending. Scale-down deletes, as a
//!   ReplicaSet does, pending replicas first, then those still starting, then the newest.
//!   A replica that ends otherwise before the load does (its restarts ran out) is
//!   replaced.
//! * **Load and latency** ([`rate`], [`latency`]): every `interval` (10 s) the rate is
//!   spread evenly over the serving replicas, each an M/M/c (or M/D/c) queue of `slots`
//!   request slots of `service_ms` each. The interval violates the SLO when the p99
//!   exceeds `slo_ms`, a replica is overloaded, or nothing serves a non-zero rate.
//! * **Autoscalers.** `hpa`: every 15 s the HPA's algorithm ([`crate::hpa`]) on the
//!   requests per second of each replica (a Pods metric, `target` per replica; a replica
//!   still starting reports no metric), without `behavior` (the 5 minute downscale
//!   stabilization, scale-up of at most max(2×, 4)). `keda`: a ScaledObject with the
//!   service's request rate as an external metric (`AverageValue` `target`), polled every
//!   30 s, activating from zero replicas above `activation` and back to zero after
//!   `cooldown` (300 s) without activity; between 1 and `max` its HPA scales as above on
//!   `ceil(rate / target)`. `none`: `replicas` fixed.
//!
//! Reported in `summary.json` (`controllers`): requests, SLO-violation minutes, the share
//! of requests in violating intervals (`late_share`), the p50 and p99 latency of the
//! requests served (the intervals' percentiles weighted by their requests; intervals
//! with nothing serving or a replica overloaded count only as late), unserved minutes,
//! replica-hours and GPU-hours, the most replicas, scale-ups and -downs.
//!
//! Sources: Kubernetes `pkg/controller/podautoscaler` (v1.32), the ReplicaSet controller's
//! `getPodsToDelete` ranking (`pkg/controller/replicaset/replica_set.go`), KEDA's
//! ScaledObject specification (keda.sh, v2: `pollingInterval` 30, `cooldownPeriod` 300,
//! `minReplicaCount` 0, `activationThreshold`).

pub mod latency;
pub mod rate;
pub mod vpa;

use crate::hpa::{self, Hpa, Pod, PodState};
use latency::Model;
use rate::{RateSeries, Shape};
use sim_core::controller::{Action, Controller, Interests, Observed};
use sim_core::job::{Job, JobId, JobKind, TaskShape};
use sim_core::policy::SchedView;
use sim_core::rng::SimRng;
use sim_core::spec::{Chosen, DECIMAL, OptionInfo, Spec, SpecError, canonical_values, permille_string};
use sim_core::time::{SimDuration, SimTime};

/// A decimal option with its default.
macro_rules! opt {
    ($key:expr, $default:expr, $doc:expr) => {
        OptionInfo { key: $key, values: &[$default, DECIMAL], doc: $doc }
    };
}
const NAME: OptionInfo =
    OptionInfo { key: "name", values: &["svc"], doc: "the service's name (its replicas are <name>-<k>)" };
const CORES: OptionInfo = opt!("cores", "4", "cores a replica requests");
const MEMORY: OptionInfo = opt!("memory", "16384", "MiB a replica requests");
const GPUS: OptionInfo = opt!("gpus", "1", "GPUs a replica requests");
const GPU_MILLI: OptionInfo = opt!("gpu_milli", "1000", "thousandths of each GPU a replica takes (shared GPUs)");
const GPU_MEMORY: OptionInfo =
    opt!("gpu_memory", "0", "GPU memory a replica declares, MiB (0: none; the VPA's starting request)");
const GPU_PEAK: OptionInfo = opt!("gpu_peak", "0", "GPU memory a replica actually uses at its peak, MiB");
const VPA: OptionInfo = OptionInfo {
    key: "vpa",
    values: &["none", "off", "initial", "recreate"],
    doc: "a VerticalPodAutoscaler on the declared GPU memory: off (recommend only), initial (new replicas), recreate (also evict replicas outside the bounds)",
};
const SLOTS: OptionInfo = opt!("slots", "8", "requests a replica serves at once (concurrent sequences, batch size)");
const SERVICE_MS: OptionInfo = opt!("service_ms", "500", "milliseconds a request takes on a slot (mean)");
const LATENCY: OptionInfo =
    OptionInfo { key: "latency", values: &["mmc", "mdc"], doc: "mmc: exponential service; mdc: fixed (batched)" };
const SLO_MS: OptionInfo = opt!("slo_ms", "2000", "the p99 latency objective, milliseconds");
const STARTUP: OptionInfo =
    opt!("startup", "120", "seconds from a replica's start to serving (image pull, model load)");
const RPS: OptionInfo = OptionInfo {
    key: "rps",
    values: &["generated"],
    doc: "a CSV file of time,rps points, or generated from the shape",
};
const MEAN: OptionInfo = opt!("mean", "100", "generated: mean requests per second on a weekday");
const AMPLITUDE: OptionInfo = opt!("amplitude", "0.5", "generated: relative swing of the daily cycle");
const PEAK_HOUR: OptionInfo = opt!("peak_hour", "14", "generated: hour of the daily peak");
const WEEKEND: OptionInfo = opt!("weekend", "0.6", "generated: weekend factor");
const BURST_EVERY: OptionInfo = opt!("burst_every", "0", "generated: mean hours between bursts (0: none)");
const BURST_MINUTES: OptionInfo = opt!("burst_minutes", "15", "generated: minutes a burst lasts");
const BURST_FACTOR: OptionInfo = opt!("burst_factor", "3", "generated: rate factor in a burst");
const DAYS: OptionInfo = opt!("days", "1", "generated: days of load");
const INTERVAL: OptionInfo = opt!("interval", "10", "seconds between latency evaluations (and generated points)");
const AUTOSCALER: OptionInfo =
    OptionInfo { key: "autoscaler", values: &["hpa", "keda", "none"], doc: "what sets the replica count" };
const METRIC: OptionInfo = OptionInfo {
    key: "metric",
    values: &["rps", "utilization", "queue"],
    doc: "the HPA's metric per replica: requests per second, busy share of its slots (percent; the GPU utilisation of a serving replica), or requests waiting",
};
const BEHAVIOR: OptionInfo = OptionInfo {
    key: "behavior",
    values: &["none", "default"],
    doc: "the HPA's behavior: none (the legacy normalization) or Kubernetes' default policies",
};
const DOWN_WINDOW: OptionInfo = opt!("down_window", "300", "the HPA's downscale stabilization window, seconds");
const REPLICAS: OptionInfo = opt!("replicas", "1", "replicas at the start (none: the fixed count)");
const MIN: OptionInfo = opt!("min", "1", "minReplicas (KEDA: minReplicaCount, 0 scales to zero)");
const MAX: OptionInfo = opt!("max", "10", "maxReplicas");
const TARGET: OptionInfo = opt!(
    "target",
    "0",
    "the autoscaler's target per replica in the metric's unit (0: 70 % of a replica's capacity in requests per second, 70 % utilization, 1 request waiting)"
);
const ACTIVATION: OptionInfo = opt!("activation", "0", "KEDA: the rate above which the service is active");
const COOLDOWN: OptionInfo = opt!("cooldown", "300", "KEDA: seconds without activity before scaling to zero");

/// The HPA's sync period; KEDA's polling interval.
const HPA_SYNC: SimDuration = SimDuration::from_secs(15);
/// The VPA recommender's and updater's loops (`--recommender-interval`,
/// `--updater-interval`).
const VPA_LOOP: SimDuration = SimDuration::from_secs(60);
/// The VPA updater's `--min-replicas` and `--eviction-tolerance`.
const VPA_MIN_REPLICAS: usize = 2;
const VPA_EVICTION_TOLERANCE: f64 = 0.5;
const KEDA_POLL: SimDuration = SimDuration::from_secs(30);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Tick {
    Measure,
    Hpa,
    Keda,
    Vpa,
    /// The load ends: every replica left is deleted.
    End,
}

/// An inference service (see the module documentation).
pub struct InferenceService {
    name: String,
    task: TaskShape,
    slots: u32,
    /// A request's service time and the p99 objective, microseconds.
    service_us: u64,
    model: Model,
    slo_us: u64,
    startup: SimDuration,
    rps_file: Option<String>,
    shape: Shape,
    days_milli: u64,
    interval: SimDuration,
    autoscaler: usize,
    metric: usize,
    initial: u32,
    min: u32,
    max: u32,
    target_milli: u64,
    activation_milli: u64,
    cooldown: SimDuration,
    vpa: usize,
    recommender: vpa::Recommender,
    rng: SimRng,
    series: RateSeries,
    /// When the load ends (the replicas complete then).
    end: SimTime,
    hpa: Hpa,
    /// Replicas asked for, by name, in creation order, with their job once submitted and
    /// the GPU memory each declares.
    replicas: Vec<(String, Option<JobId>, u64)>,
    created: u32,
    last_active: SimTime,
    timers: std::collections::BTreeSet<(SimTime, Tick)>,
    stats: Stats,
}

/// What the service measured.
#[derive(Default)]
struct Stats {
    requests: f64,
    late_requests: f64,
    violation_s: f64,
    unserved_s: f64,
    replica_s: f64,
    most: u32,
    ups: u32,
    downs: u32,
    /// Replicas that ended before the load did, replaced.
    replaced: u32,
    /// Out-of-memory kills of replicas, and per hour.
    ooms: u32,
    oom_hours: Vec<f64>,
    /// GPU-hours used by running replicas, per hour.
    gpu_hours: Vec<f64>,
    /// Replicas the VPA evicted.
    vpa_evictions: u32,
    /// (p50, p99, requests) per interval whose requests were served (no replica
    /// overloaded, one at least serving).
    samples: Vec<(f64, f64, f64)>,
}

impl InferenceService {
    /// The options it takes.
    pub const OPTIONS: &'static [OptionInfo] = &[
        NAME,
        CORES,
        MEMORY,
        GPUS,
        GPU_MILLI,
        GPU_MEMORY,
        GPU_PEAK,
        VPA,
        SLOTS,
        SERVICE_MS,
        LATENCY,
        SLO_MS,
        STARTUP,
        RPS,
        MEAN,
        AMPLITUDE,
        PEAK_HOUR,
        WEEKEND,
        BURST_EVERY,
        BURST_MINUTES,
        BURST_FACTOR,
        DAYS,
        INTERVAL,
        AUTOSCALER,
        METRIC,
        BEHAVIOR,
        DOWN_WINDOW,
        REPLICAS,
        MIN,
        MAX,
        TARGET,
        ACTIVATION,
        COOLDOWN,
    ];

    /// Builds it from a spec; `rng` is its own stream (the bursts). A CSV series is read
    /// here.
    pub fn from_spec(spec: &Spec, rng: SimRng) -> Result<Self, SpecError> {
        let mut keys_only = spec.clone();
        keys_only.options.retain(|k, _| k != NAME.key && k != RPS.key);
        let c = Chosen::check(&keys_only, Self::OPTIONS, "controller")?;
        let bad = |key: &str, value: String, expected: String| SpecError::BadValue {
            kind: "controller",
            plugin: spec.name.clone(),
            key: key.into(),
            value,
            expected,
        };
        let m = |o: OptionInfo| c.permille(o);
        let whole = |o: OptionInfo| (c.permille(o) / 1000) as u32;
        let name = spec.options.get(NAME.key).cloned().unwrap_or_else(|| NAME.values[0].to_string());
        let rps_file = spec.options.get(RPS.key).filter(|v| v.as_str() != "generated").cloned();
        let series = match &rps_file {
            Some(path) => Some(RateSeries::read_csv(path).map_err(|e| bad("rps", path.clone(), e))?),
            None => None,
        };
        // Milliseconds in thousandths: microseconds.
        let (slots, service_us) = (whole(SLOTS).max(1), m(SERVICE_MS));
        if service_us == 0 {
            return Err(bad("service_ms", "0".into(), "milliseconds above 0".into()));
        }
        let interval = SimDuration(m(INTERVAL) * 1000).max(SimDuration::from_secs(1));
        let (min, max) = (whole(MIN), whole(MAX).max(1));
        if min > max {
            return Err(bad("min", min.to_string(), format!("at most max ({max})")));
        }
        // A replica's capacity in thousandths of a request per second; the default target
        // is 70 % of it.
        let capacity_milli = u64::from(slots) * 1_000_000_000 / service_us;
        let metric = c.index(METRIC);
        let target_milli = match (m(TARGET), metric) {
            (0, 0) => capacity_milli * 7 / 10,
            (0, 1) => 70_000,
            (0, _) => 1000,
            (t, _) => t,
        };
        let shape = Shape {
            mean: m(MEAN) as f64 / 1000.0,
            amplitude: m(AMPLITUDE) as f64 / 1000.0,
            peak_hour: m(PEAK_HOUR) as f64 / 1000.0,
            weekend: m(WEEKEND) as f64 / 1000.0,
            burst_every: m(BURST_EVERY) as f64 / 1000.0,
            burst_minutes: m(BURST_MINUTES) as f64 / 1000.0,
            burst_factor: m(BURST_FACTOR) as f64 / 1000.0,
        };
        let autoscaler = c.index(AUTOSCALER);
        let hpa_min = if autoscaler == 1 { min.max(1) } else { min };
        Ok(InferenceService {
            name,
            task: TaskShape {
                cores: whole(CORES),
                memory_mib: m(MEMORY) / 1000,
                gpus: whole(GPUS),
                gpu_milli: (m(GPU_MILLI) / 1000).clamp(1, 1000) as u32,
                gpu_memory_mib: m(GPU_MEMORY) / 1000,
                gpu_peak_mib: m(GPU_PEAK) / 1000,
                ..TaskShape::default()
            },
            slots,
            service_us,
            model: if c.index(LATENCY) == 1 { Model::MDc } else { Model::MMc },
            slo_us: m(SLO_MS),
            startup: SimDuration(m(STARTUP) * 1000),
            rps_file,
            shape,
            days_milli: m(DAYS),
            interval,
            autoscaler,
            metric,
            initial: whole(REPLICAS),
            min,
            max,
            target_milli: target_milli.max(1),
            activation_milli: m(ACTIVATION),
            cooldown: SimDuration(m(COOLDOWN) * 1000),
            vpa: c.index(VPA),
            recommender: vpa::Recommender::default(),
            rng,
            series: series.unwrap_or_else(|| RateSeries::from_points(Vec::new())),
            end: SimTime::ZERO,
            hpa: Hpa {
                downscale_window: SimDuration(m(DOWN_WINDOW) * 1000),
                ..Hpa::new(hpa_min, max, (c.index(BEHAVIOR) == 1).then(hpa::Behavior::default))
            },
            replicas: Vec::new(),
            created: 0,
            last_active: SimTime::ZERO,
            timers: std::collections::BTreeSet::new(),
            stats: Stats::default(),
        })
    }

    fn at(&mut self, _view: &SchedView<'_>, when: SimTime, what: Tick, out: &mut Vec<Action>) {
        if when < self.end {
            self.timers.insert((when, what));
            out.push(Action::WakeAt { at: when });
        }
    }

    /// Replicas serving now: running, started at least `startup` ago.
    fn serving(&self, view: &SchedView<'_>) -> u32 {
        let now = view.now();
        self.replicas
            .iter()
            .filter_map(|r| r.1)
            .filter(|&j| view.running_job(j).is_some_and(|r| r.start + self.startup <= now))
            .count() as u32
    }

    /// One interval's load and latency.
    fn measure(&mut self, view: &SchedView<'_>) {
        let now = view.now();
        let lambda = self.series.at(now);
        let secs = self.interval.0 as f64 / 1e6;
        let running = self.replicas.iter().filter_map(|r| r.1).filter(|&j| view.running_job(j).is_some()).count();
        self.stats.replica_s += running as f64 * secs;
        let gpus = f64::from(self.task.gpus) * f64::from(self.task.gpu_milli) / 1000.0;
        add_hourly(&mut self.stats.gpu_hours, now, running as f64 * gpus * secs / 3600.0);
        if lambda <= 0.0 {
            return;
        }
        let requests = lambda * secs;
        self.stats.requests += requests;
        let serving = self.serving(view);
        let l = (serving > 0)
            .then(|| {
                latency::latency(self.model, self.slots, self.service_us as f64 / 1e6, lambda / f64::from(serving))
            })
            .flatten();
        let violated = match l {
            Some(l) => {
                self.stats.samples.push((l.p50, l.p99, requests));
                l.p99 * 1e6 > self.slo_us as f64
            }
            None => {
                if serving == 0 {
                    self.stats.unserved_s += secs;
                }
                true
            }
        };
        if violated {
            self.stats.violation_s += secs;
            self.stats.late_requests += requests;
        }
    }

    /// The HPA's sync: replicas for the requests per second of each replica.
    fn hpa_sync(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let current = self.replicas.len() as u32;
        if current == 0 {
            return;
        }
        let desired = if self.autoscaler == 1 {
            // KEDA's external metric: the service's rate, AverageValue per replica.
            let rate = (self.series.at(view.now()) * 1000.0) as u64;
            hpa::average_value_replicas(current, rate, self.target_milli)
        } else {
            let serving = self.serving(view).max(1);
            let per = self.metric_of(self.series.at(view.now()) / f64::from(serving));
            let now = view.now();
            let pods: Vec<Pod> = self
                .replicas
                .iter()
                .map(|r| match r.1.and_then(|j| view.running_job(j)) {
                    // Serving: its share of the rate; starting: no metric yet.
                    Some(run) if run.start + self.startup <= now => {
                        Pod { request: None, usage: Some(per), state: PodState::Ready }
                    }
                    Some(_) => Pod { request: None, usage: None, state: PodState::Ready },
                    None => Pod { request: None, usage: None, state: PodState::Unready },
                })
                .collect();
            match hpa::per_pod_replicas(current, &pods, self.target_milli) {
                Ok(d) => d,
                Err(_) => return,
            }
        };
        let (n, why) = self.hpa.reconcile(view.now(), current, desired);
        let metric = if self.autoscaler == 1 { "the rate" } else { METRIC.values[self.metric] };
        self.scale_to(view, n, &format!("HPA: {desired} wanted for the {metric} per replica, {why:?}"), out);
    }

    /// A serving replica's metric at `lambda` requests per second, in thousandths:
    /// requests per second; the busy share of its slots, percent; or the mean number of
    /// requests waiting (M/M/c: `C · ρ / (1 − ρ)`; an overloaded replica reports a queue
    /// of a thousand).
    fn metric_of(&self, lambda: f64) -> u64 {
        let capacity = f64::from(self.slots) * 1e6 / self.service_us as f64;
        let rho = lambda / capacity;
        let x = match self.metric {
            0 => lambda,
            1 => rho * 100.0,
            _ if rho >= 1.0 => 1000.0,
            _ => latency::erlang_c(self.slots, lambda * self.service_us as f64 / 1e6) * rho / (1.0 - rho),
        };
        (x * 1000.0).round() as u64
    }

    /// KEDA's poll: activation from zero and back to zero after the cooldown.
    fn keda_poll(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let now = view.now();
        let active = (self.series.at(now) * 1000.0) as u64 > self.activation_milli;
        if active {
            self.last_active = now;
            if self.replicas.is_empty() {
                self.scale_to(view, self.min.max(1), "KEDA: active, scaled from zero", out);
            }
        } else if !self.replicas.is_empty() && self.min == 0 && now >= self.last_active + self.cooldown {
            self.scale_to(view, 0, "KEDA: inactive for the cooldown period, scaled to zero", out);
        }
    }

    /// Sets the replica count to `n`: new replicas submitted, or replicas deleted.
    fn scale_to(&mut self, view: &SchedView<'_>, n: u32, why: &str, out: &mut Vec<Action>) {
        let now = view.now();
        let current = self.replicas.len() as u32;
        if n == current {
            return;
        }
        if n > current {
            self.stats.ups += 1;
            for _ in current..n {
                self.create(now, out);
            }
        } else {
            self.stats.downs += 1;
            // The ReplicaSet's deletion order: pending, then starting, then the newest.
            let rank = |r: &(String, Option<JobId>, u64), k: usize| {
                let run = r.1.and_then(|j| view.running_job(j));
                let class = match run {
                    None => 0,
                    Some(run) if run.start + self.startup > now => 1,
                    Some(_) => 2,
                };
                (class, std::cmp::Reverse(k))
            };
            let mut order: Vec<usize> = (0..self.replicas.len()).collect();
            order.sort_by_key(|&k| rank(&self.replicas[k], k));
            let gone: Vec<usize> = order.into_iter().take((current - n) as usize).collect();
            for &k in &gone {
                if let Some(job) = self.replicas[k].1 {
                    out.push(Action::Stop { job, reason: format!("{} scaled down", self.name) });
                }
            }
            self.drop_replicas(&gone);
        }
        self.stats.most = self.stats.most.max(n);
        out.push(Action::Note {
            what: "scale".into(),
            reason: format!("service {}: {current} → {n} replicas ({why})", self.name),
        });
    }

    /// Submits a new replica, to run until the load ends; under the VPA (`initial`,
    /// `recreate`) it declares the recommended GPU memory, as the VPA's admission
    /// controller sets a new pod's requests.
    fn create(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let name = format!("{}-{}", self.name, self.created);
        self.created += 1;
        let left = SimDuration(self.end.0.saturating_sub(now.0).max(1));
        let mut job = Job::rigid(name.clone(), now, 1, left, left);
        job.task = self.task;
        if self.vpa >= 2
            && let Some(b) = self.recommender.bounds()
        {
            job.task.gpu_memory_mib = b.target.ceil() as u64;
        }
        job.kind = JobKind::Inference;
        self.replicas.push((name, None, job.task.gpu_memory_mib));
        out.push(Action::Submit { job: Box::new(job) });
    }

    /// The VPA's loop: a usage sample of each running replica (its GPU memory: its peak,
    /// capped by what it declares), then, under `recreate`, the eviction of replicas whose
    /// declared memory is outside the bounds (the furthest first; at most half the
    /// replicas, none when fewer than two), each replaced with the target.
    fn vpa_loop(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let now = view.now();
        let peak = self.task.gpu_peak_mib as f64;
        for r in &self.replicas {
            if r.1.is_some_and(|j| view.running_job(j).is_some()) {
                let used = if r.2 > 0 { peak.min(r.2 as f64) } else { peak };
                self.recommender.add(now, used);
            }
        }
        let Some(b) = self.recommender.bounds() else { return };
        if self.vpa != 3 || self.replicas.len() < VPA_MIN_REPLICAS {
            return;
        }
        let mut outside: Vec<(u64, usize)> = self
            .replicas
            .iter()
            .enumerate()
            .filter(|(_, r)| r.1.is_some_and(|j| view.running_job(j).is_some() || view.queue().contains(&j)))
            .filter(|(_, r)| (r.2 as f64) < b.lower || (r.2 as f64) > b.upper)
            .map(|(k, r)| (((r.2 as f64 - b.target).abs() * 1000.0) as u64, k))
            .collect();
        outside.sort_by_key(|x| std::cmp::Reverse(x.0));
        let most = ((self.replicas.len() as f64 * VPA_EVICTION_TOLERANCE) as usize).max(1);
        let gone: Vec<usize> = outside.iter().take(most).map(|x| x.1).collect();
        for &k in &gone {
            let job = self.replicas[k].1.expect("submitted");
            out.push(Action::Stop {
                job,
                reason: format!("{}: evicted by the VPA to apply its recommendation", self.name),
            });
        }
        self.drop_replicas(&gone);
        for _ in &gone {
            self.stats.vpa_evictions += 1;
            self.create(now, out);
        }
        if !gone.is_empty() {
            out.push(Action::Note {
                what: "vpa".into(),
                reason: format!(
                    "service {}: {} replica(s) outside [{:.0}, {:.0}] MiB recreated with {:.0} MiB",
                    self.name,
                    gone.len(),
                    b.lower,
                    b.upper,
                    b.target.ceil()
                ),
            });
        }
    }

    /// Forgets the replicas at positions `gone` (deleted: their jobs stopped).
    fn drop_replicas(&mut self, gone: &[usize]) {
        let mut k = 0;
        self.replicas.retain(|_| {
            k += 1;
            !gone.contains(&(k - 1))
        });
    }

    /// The request-weighted `q` quantile of the intervals' `pick` latency.
    fn weighted(&self, q: f64, pick: impl Fn(&(f64, f64, f64)) -> f64) -> f64 {
        let mut v: Vec<(f64, f64)> = self.stats.samples.iter().map(|s| (pick(s), s.2)).collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total: f64 = v.iter().map(|x| x.1).sum();
        let mut acc = 0.0;
        for (x, w) in v {
            acc += w;
            if acc >= q * total {
                return x;
            }
        }
        0.0
    }
}

impl Controller for InferenceService {
    fn spec(&self) -> String {
        let mut o: Vec<(&str, String)> = vec![("name", self.name.clone())];
        let p = |x: u64| permille_string(x);
        o.push(("cores", self.task.cores.to_string()));
        o.push(("memory", self.task.memory_mib.to_string()));
        o.push(("gpus", self.task.gpus.to_string()));
        o.push(("gpu_milli", self.task.gpu_milli.to_string()));
        o.push(("gpu_memory", self.task.gpu_memory_mib.to_string()));
        o.push(("gpu_peak", self.task.gpu_peak_mib.to_string()));
        o.push(("vpa", VPA.values[self.vpa].into()));
        o.push(("slots", self.slots.to_string()));
        o.push(("service_ms", p(self.service_us)));
        o.push(("latency", if self.model == Model::MDc { "mdc" } else { "mmc" }.into()));
        o.push(("slo_ms", p(self.slo_us)));
        o.push(("startup", p(self.startup.0 / 1000)));
        match &self.rps_file {
            Some(f) => o.push(("rps", f.clone())),
            None => {
                let s = &self.shape;
                let f = |x: f64| p((x * 1000.0).round() as u64);
                o.extend([
                    ("mean", f(s.mean)),
                    ("amplitude", f(s.amplitude)),
                    ("peak_hour", f(s.peak_hour)),
                    ("weekend", f(s.weekend)),
                    ("burst_every", f(s.burst_every)),
                    ("burst_minutes", f(s.burst_minutes)),
                    ("burst_factor", f(s.burst_factor)),
                    ("days", p(self.days_milli)),
                ]);
            }
        }
        o.push(("interval", p(self.interval.0 / 1000)));
        o.push(("autoscaler", AUTOSCALER.values[self.autoscaler].into()));
        if self.autoscaler == 0 {
            o.push(("metric", METRIC.values[self.metric].into()));
            o.push(("behavior", if self.hpa.behavior.is_some() { "default" } else { "none" }.into()));
            o.push(("down_window", p(self.hpa.downscale_window.0 / 1000)));
        }
        o.push(("replicas", self.initial.to_string()));
        o.push(("min", self.min.to_string()));
        o.push(("max", self.max.to_string()));
        o.push(("target", p(self.target_milli)));
        if self.autoscaler == 1 {
            o.push(("activation", p(self.activation_milli)));
            o.push(("cooldown", p(self.cooldown.0 / 1000)));
        }
        canonical_values("inference-service", &o)
    }

    fn interests(&self) -> Interests {
        Interests { arrivals: true, ends: true, kills: true, ..Interests::default() }
    }

    fn start(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        if self.rps_file.is_none() {
            let until = SimTime(self.days_milli.saturating_mul(86_400_000));
            self.series = RateSeries::generate(&self.shape, self.interval, until, &mut self.rng);
        }
        self.end = self.series.last_time() + self.interval;
        let now = view.now();
        let first =
            if self.autoscaler == 2 { self.initial.max(self.min) } else { self.initial.clamp(self.min, self.max) };
        self.scale_to(view, first, "initial replicas", out);
        self.stats.ups = 0;
        self.at(view, now, Tick::Measure, out);
        self.timers.insert((self.end, Tick::End));
        out.push(Action::WakeAt { at: self.end });
        if self.vpa > 0 {
            self.at(view, now + VPA_LOOP, Tick::Vpa, out);
        }
        match self.autoscaler {
            0 => self.at(view, now + HPA_SYNC, Tick::Hpa, out),
            1 => {
                self.at(view, now + HPA_SYNC, Tick::Hpa, out);
                self.at(view, now, Tick::Keda, out);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, view: &SchedView<'_>, out: &mut Vec<Action>) {
        let Some((now, what)) = self.timers.pop_first() else { return };
        match what {
            Tick::Measure => {
                self.measure(view);
                self.at(view, now + self.interval, Tick::Measure, out);
            }
            Tick::Hpa => {
                self.hpa_sync(view, out);
                self.at(view, now + HPA_SYNC, Tick::Hpa, out);
            }
            Tick::Keda => {
                self.keda_poll(view, out);
                self.at(view, now + KEDA_POLL, Tick::Keda, out);
            }
            Tick::Vpa => {
                self.vpa_loop(view, out);
                self.at(view, now + VPA_LOOP, Tick::Vpa, out);
            }
            // Replicas that started late or were requeued would run on: deleted (those that
            // end now have ended already, and are left alone).
            Tick::End => {
                for r in std::mem::take(&mut self.replicas) {
                    if let Some(job) = r.1 {
                        out.push(Action::Stop { job, reason: format!("{}: the load ended", self.name) });
                    }
                }
            }
        }
    }

    fn on_event(&mut self, view: &SchedView<'_>, event: &Observed, out: &mut Vec<Action>) {
        match *event {
            Observed::Arrived { job } => {
                let id = view.job(job).trace_id();
                if let Some(r) = self.replicas.iter_mut().find(|r| r.1.is_none() && r.0 == id) {
                    r.1 = Some(job);
                }
            }
            // A replica that ended before the load did (it failed for good: its restarts
            // ran out) is replaced, as the ReplicaSet keeps its count.
            Observed::Ended { job } => {
                if let Some(k) = self.replicas.iter().position(|r| r.1 == Some(job)) {
                    self.replicas.remove(k);
                    if view.now() < self.end {
                        self.stats.replaced += 1;
                        self.create(view.now(), out);
                    }
                }
            }
            // An out-of-memory kill of a replica: counted, and a sample for the VPA.
            Observed::AttemptKilled { job, .. } => {
                if let Some(r) = self.replicas.iter().find(|r| r.1 == Some(job)) {
                    self.stats.ooms += 1;
                    add_hourly(&mut self.stats.oom_hours, view.now(), 1.0);
                    if self.vpa > 0 {
                        self.recommender.add_oom(view.now(), r.2 as f64);
                    }
                }
            }
            _ => {}
        }
    }

    fn report(&self) -> sim_core::controller::Report {
        let s = &self.stats;
        let mut figures: Vec<(String, f64)> = vec![
            ("requests".into(), s.requests.round()),
            ("slo_violation_minutes".into(), s.violation_s / 60.0),
            ("late_share".into(), if s.requests > 0.0 { s.late_requests / s.requests } else { 0.0 }),
            ("p50_s".into(), self.weighted(0.5, |x| x.0)),
            ("p99_s".into(), self.weighted(0.99, |x| x.1)),
            ("unserved_minutes".into(), s.unserved_s / 60.0),
            ("replica_hours".into(), s.replica_s / 3600.0),
            ("gpu_hours".into(), s.gpu_hours.iter().sum()),
            ("most_replicas".into(), f64::from(s.most)),
            ("scale_ups".into(), f64::from(s.ups)),
            ("scale_downs".into(), f64::from(s.downs)),
            ("replaced".into(), f64::from(s.replaced)),
            ("oom_kills".into(), f64::from(s.ooms)),
        ];
        if self.vpa > 0 {
            figures.push(("vpa_evictions".into(), f64::from(s.vpa_evictions)));
            if let Some(b) = self.recommender.bounds() {
                figures.push(("vpa_target_mib".into(), b.target.ceil()));
            }
        }
        let hourly = |v: &[f64]| v.iter().enumerate().map(|(h, &x)| (h as f64 * 3600.0, x)).collect::<Vec<_>>();
        let series = vec![
            ("oom_kills_per_hour".to_string(), hourly(&padded(&s.oom_hours, s.gpu_hours.len()))),
            ("gpus_per_hour".to_string(), hourly(&s.gpu_hours)),
        ];
        sim_core::controller::Report { figures, series }
    }
}

/// Adds `x` to the hour of `t` in `v`.
fn add_hourly(v: &mut Vec<f64>, t: SimTime, x: f64) {
    let h = (t.0 / 3_600_000_000) as usize;
    if v.len() <= h {
        v.resize(h + 1, 0.0);
    }
    v[h] += x;
}

/// `v` with zeros up to `len` hours.
fn padded(v: &[f64], len: usize) -> Vec<f64> {
    let mut p = v.to_vec();
    if p.len() < len {
        p.resize(len, 0.0);
    }
    p
}
