//! A seeded synthetic workload generator: jobs drawn from a [`Model`] (arrival process,
//! job classes, users), streamed in submit order in constant memory.
//!
//! # The model in TOML
//!
//! ```toml
//! name = "hpc"
//! procs = 128                 # optional: machine size (SWF MaxProcs), caps tasks × cores
//! gpus_per_node = 8           # optional: caps GPUs per task
//! queues = { values = [1, 2], weights = [0.7, 0.3] }   # optional (else queue -1)
//!
//! [arrivals]
//! process = "modulated"       # "poisson" | "modulated" | "bursts"
//! rate_per_hour = 12.0        # mean jobs per hour, all of them (≥ 1e-6)
//! start = 0.0                 # seconds: no job before (≤ 1e12)
//! hour_factors = [24 numbers] # modulated: hour-of-day factors (normalised to mean 1)
//! day_factors = [7 numbers]   # modulated: day-of-week factors (day 0 = the day of second 0)
//! # bursts: bursts_per_hour, burst_jobs (mean, ≥ 1), burst_size = "geometric" | "poisson",
//! # burst_spread (seconds); the rest of rate_per_hour is a Poisson background.
//!
//! [users]
//! count = 100                 # users 1..=count
//! zipf = 1.1                  # activity skew: user k submits ∝ k^-zipf
//!
//! [[classes]]
//! name = "mpi_batch"
//! kind = "batch"              # batch | dl_train | inference | interactive
//! weight = 0.8
//! tasks = { values = [1, 2, 4, 8], weights = [4, 2, 2, 1] }   # gang size
//! cores = { values = [1], weights = [1] }                     # per task (default 1)
//! gpus = { ... }              # per task (default 0)
//! gpu_memory_mib = { ... }    # per GPU (default 0 = not stated)
//! memory_mib = { ... }        # host memory per task (default 0 = not stated)
//! runtime = { dist = "lognormal", mu = 7.0, sigma = 1.8, min = 1.0, max = 172800.0 }
//! overestimate = { dist = "uniform", low = 1.0, high = 3.0 }  # requested = runtime × factor
//! max_requested = 216000.0    # optional: no request above (s), unless the run is longer
//!
//! [[classes]]
//! name = "fitted"
//! weight = 0.2
//! tasks = { values = [1], weights = [1] }
//! runtime = { dist = "empirical", quantiles = [0.0, 60.0, 3600.0, 86400.0] }
//! max_requested = 216000.0
//! # Instead of `overestimate` (not with it): the requested time (s) by run time (s), one
//! # table per bin of run times, bounds increasing; a run time above the last bound
//! # draws from the last bin.
//! [[classes.requested_by_runtime]]
//! runtime_upto = 60.0         # run times in [0, 60]
//! quantiles = [60.0, 600.0, 3600.0]
//! [[classes.requested_by_runtime]]
//! runtime_upto = 86400.0      # run times in (60, 86400], and above
//! quantiles = [3600.0, 36000.0, 216000.0]
//! ```
//!
//! Continuous laws (`dist`): `constant {value}`, `uniform {low, high}`, `exponential
//! {mean}`, `lognormal {mu, sigma}`, `weibull {scale, shape}`, `empirical {quantiles}`
//! (equally spaced probabilities, linear interpolation), each with optional `min`/`max`
//! clamps. Discrete laws: `{ values = [...], weights = [...] }`.
//!
//! # Drawing
//!
//! Each quantity has its own ChaCha stream of the seed: `gen-arrivals`, `gen-bursts`,
//! `gen-burst-size`, `gen-burst-spread`, `gen-class`, `gen-user` and `gen-queue` for the
//! model's laws; `gen-tasks`, `gen-cores`, `gen-gpus`, `gen-gpu-memory` and `gen-memory`
//! for the classes' discrete laws, shared by all classes; and one `gen-runtime/<i>` and
//! one `gen-overestimate/<i>` (the request: `overestimate` or `requested_by_runtime`)
//! per class, `<i>` being the class's index in `[[classes]]` from 0 (names may repeat,
//! so they are not used: reordering classes changes which streams they draw from). Discrete quantities take exactly one 64-bit draw per job from
//! their stream (even when the job's class leaves the quantity at its default), by
//! inverse CDF; continuous laws may take any number of draws (a constant none, a
//! lognormal a varying number), which is why each class has its own run-time and
//! over-estimation streams. So changing one law never shifts the draws of another: with
//! the same seed, the arrival times and the class of each job depend only on the arrival
//! process and the class weights, and as long as those stay, editing class B's laws
//! leaves class A's jobs as they were.
//!
//! Time is drawn in `f64` seconds and turned into integer microseconds by rounding to the
//! nearest microsecond (halves away from zero); negative run times become 0. Requested
//! time = run time (µs) × factor (factor < 1 taken as 1), rounded the same way; or, with
//! `requested_by_runtime`, one draw from the table of the bin holding the run time in
//! seconds (the first bin whose `runtime_upto` is at least it, else the last), rounded
//! the same way and raised to the run time when below it, taking one 64-bit draw per
//! job from the class's `gen-overestimate/<i>` stream (a class has one law of the
//! request or the other). Then `max_requested` (rounded the same way) lowers it, but
//! never below the run time: a job running longer than the cap requests its run time,
//! so that no generated job outruns its request (a walltime kill would cut it short).
//! The cap takes no draw: adding it changes only the requests it lowers. Per job,
//! `procs` caps cores per task at `procs` and then tasks at `procs / cores` (at least
//! 1); `gpus_per_node` caps GPUs per task.
//!
//! Determinism: same model and seed, same jobs. Discrete, uniform and empirical draws
//! and the time arithmetic use only IEEE-754 basic operations, identical everywhere. The
//! exponential gaps, lognormal, Weibull, Poisson, geometric and Zipf draws come from
//! `rand_distr` 0.6.0 (pinned), which calls the platform's `exp`/`ln`/`powf`: those may
//! differ in the last bit between platforms' math libraries (identical on one platform).
//!
//! [`crate::fit`] fits a model to a real trace.

mod model;

pub use model::{
    Arrivals, BurstSize, Class, Continuous, Discrete, Invalid, Law, LogNormalFit, MAX_BURST, MAX_START,
    MIN_RATE_PER_HOUR, Model, Process, RuntimeBin, Users,
};

use rand_distr::{Distribution, Exp1, Geometric, LogNormal, Poisson, Weibull, Zipf};
use sim_core::job::JobKind;
use sim_core::rng::{RngStreams, SimRng, uniform_f64};
use sim_core::{Job, SimDuration, SimTime, TaskShape};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Seconds → microseconds, to the nearest (halves away from zero); negative or NaN → 0;
/// saturating at `u64::MAX`.
pub fn secs_to_micros(secs: f64) -> u64 {
    if secs > 0.0 { (secs * 1e6).round() as u64 } else { 0 }
}

/// Times past this (about 292,000 years) end the stream.
const TIME_LIMIT: f64 = (u64::MAX / 2) as f64 / 1e6;

/// Seconds in a week.
const WEEK: f64 = 7.0 * 86_400.0;

/// An endless stream of jobs drawn from a [`Model`], in submit order, with trace ids
/// `"1"`, `"2"`, … Memory stays constant (a burst in progress is buffered).
pub struct Generator {
    arrivals: ArrivalState,
    classes: Vec<ClassDraw>,
    class_pick: Table<usize>,
    users: Zipf<f64>,
    queues: Option<Table<i32>>,
    procs: Option<u32>,
    gpus_per_node: Option<u32>,
    s: Streams,
    count: u64,
}

struct Streams {
    class: SimRng,
    tasks: SimRng,
    cores: SimRng,
    gpus: SimRng,
    gpu_memory: SimRng,
    memory: SimRng,
    user: SimRng,
    queue: SimRng,
}

/// A discrete law ready to draw: values and cumulative weights.
struct Table<T> {
    values: Vec<T>,
    cum: Vec<f64>,
}

impl<T: Copy> Table<T> {
    fn new(values: Vec<T>, weights: &[f64]) -> Self {
        let mut acc = 0.0;
        let cum = weights
            .iter()
            .map(|w| {
                acc += w;
                acc
            })
            .collect();
        Table { values, cum }
    }
    fn of(d: &Discrete<T>) -> Self {
        Table::new(d.values.clone(), &d.weights)
    }
    /// One draw: the first value whose cumulative weight exceeds `u × total`.
    fn pick(&self, rng: &mut SimRng) -> T {
        let u = uniform_f64(rng) * self.cum[self.cum.len() - 1];
        let i = self.cum.partition_point(|&c| c <= u).min(self.values.len() - 1);
        self.values[i]
    }
}

/// One draw from `rng` whatever happens, mapped through `t` when the class has the law.
fn pick_or<T: Copy>(t: &Option<Table<T>>, rng: &mut SimRng, default: T) -> T {
    match t {
        Some(t) => t.pick(rng),
        None => {
            uniform_f64(rng);
            default
        }
    }
}

struct ClassDraw {
    kind: JobKind,
    tasks: Table<u32>,
    cores: Option<Table<u32>>,
    gpus: Option<Table<u32>>,
    gpu_memory: Option<Table<u64>>,
    memory: Option<Table<u64>>,
    runtime: ContinuousDraw,
    overestimate: Option<ContinuousDraw>,
    /// `requested_by_runtime`: the bins' bounds (s) and tables, drawn from
    /// `overestimate_rng` (a class has one law of the request or the other).
    requested_by_runtime: Option<(Vec<f64>, Vec<Vec<f64>>)>,
    /// `max_requested` in µs.
    max_requested: Option<u64>,
    /// This class's own streams (`gen-runtime/<i>`, `gen-overestimate/<i>`).
    runtime_rng: SimRng,
    overestimate_rng: SimRng,
    /// Peak GPU memory and utilization, with their own streams (`gen-gpu-peak/<i>`,
    /// `gen-gpu-util/<i>`), drawn only when the class has them.
    gpu_peak: Option<(ContinuousDraw, SimRng)>,
    gpu_util: Option<(ContinuousDraw, SimRng)>,
}

enum LawDraw {
    Constant(f64),
    Uniform(f64, f64),
    Exponential(f64),
    LogNormal(LogNormal<f64>),
    Weibull(Weibull<f64>),
    Empirical(Vec<f64>),
}

struct ContinuousDraw {
    law: LawDraw,
    min: f64,
    max: f64,
}

impl ContinuousDraw {
    fn new(c: &Continuous) -> Self {
        let law = match &c.law {
            Law::Constant { value } => LawDraw::Constant(*value),
            Law::Uniform { low, high } => LawDraw::Uniform(*low, *high),
            Law::Exponential { mean } => LawDraw::Exponential(*mean),
            Law::LogNormal { mu, sigma } => LawDraw::LogNormal(LogNormal::new(*mu, *sigma).expect("checked lognormal")),
            Law::Weibull { scale, shape } => LawDraw::Weibull(Weibull::new(*scale, *shape).expect("checked weibull")),
            Law::Empirical { quantiles } => LawDraw::Empirical(quantiles.clone()),
        };
        ContinuousDraw { law, min: c.min.unwrap_or(f64::NEG_INFINITY), max: c.max.unwrap_or(f64::INFINITY) }
    }

    fn sample(&self, rng: &mut SimRng) -> f64 {
        let x = match &self.law {
            LawDraw::Constant(v) => *v,
            LawDraw::Uniform(lo, hi) => lo + (hi - lo) * uniform_f64(rng),
            LawDraw::Exponential(mean) => mean * <Exp1 as Distribution<f64>>::sample(&Exp1, rng),
            LawDraw::LogNormal(d) => d.sample(rng),
            LawDraw::Weibull(d) => d.sample(rng),
            LawDraw::Empirical(q) => empirical(q, uniform_f64(rng)),
        };
        x.max(self.min).min(self.max)
    }
}

impl ClassDraw {
    /// The requested time (µs) of a job running `runtime` µs: never below it.
    fn requested(&mut self, runtime: u64) -> u64 {
        let drawn = match (&self.requested_by_runtime, &self.overestimate) {
            (Some((bounds, tables)), _) => {
                let secs = runtime as f64 / 1e6;
                let bin = bounds.partition_point(|&b| b < secs).min(tables.len() - 1);
                secs_to_micros(empirical(&tables[bin], uniform_f64(&mut self.overestimate_rng))).max(runtime)
            }
            (None, o) => {
                let factor = o.as_ref().map_or(1.0, |o| o.sample(&mut self.overestimate_rng).max(1.0));
                secs_to_micros(runtime as f64 * factor / 1e6).max(runtime)
            }
        };
        match self.max_requested {
            Some(cap) => drawn.min(cap).max(runtime),
            None => drawn,
        }
    }
}

/// The inverse CDF of a quantile table at `u` in `[0, 1)`: linear between neighbours.
pub fn empirical(q: &[f64], u: f64) -> f64 {
    if q.len() == 1 {
        return q[0];
    }
    let x = u * (q.len() - 1) as f64;
    let i = (x as usize).min(q.len() - 2);
    q[i] + (x - i as f64) * (q[i + 1] - q[i])
}

/// The arrival process' state: the time cursor in seconds.
enum ArrivalState {
    Poisson {
        rng: SimRng,
        now: f64,
        gap: f64,
    },
    /// Rate per second of each hour of the week (168), integrated exactly; `week` is the
    /// integrated rate of a whole week (> 0).
    Modulated {
        rng: SimRng,
        now: f64,
        rates: Box<[f64; 168]>,
        week: f64,
    },
    Bursts(Box<Bursts>),
}

struct Bursts {
    /// The Poisson background (none when bursts carry the whole rate): its stream, its
    /// next arrival and its mean gap, in seconds.
    background: Option<(SimRng, f64, f64)>,
    starts: SimRng,
    next_burst: f64,
    burst_gap: f64,
    size_rng: SimRng,
    size: BurstDraw,
    spread_rng: SimRng,
    spread: f64,
    /// Submit times (µs) of the jobs of bursts already started.
    pending: BinaryHeap<Reverse<u64>>,
}

enum BurstDraw {
    One,
    Geometric(Geometric),
    Poisson(Poisson<f64>),
}

fn exp1(rng: &mut SimRng) -> f64 {
    <Exp1 as Distribution<f64>>::sample(&Exp1, rng)
}

impl ArrivalState {
    fn new(a: &Arrivals, streams: &RngStreams) -> Self {
        let rng = streams.stream("gen-arrivals");
        match a.process {
            Process::Poisson => ArrivalState::Poisson { rng, now: a.start, gap: 3600.0 / a.rate_per_hour },
            Process::Modulated => {
                // Mean 1: each factor's share of the (finite, positive) sum, times n. The
                // shares are at most 1, so neither a huge nor a tiny sum overflows.
                let norm = |f: &Option<Vec<f64>>, n: usize| -> Vec<f64> {
                    let f = f.clone().unwrap_or_else(|| vec![1.0; n]);
                    let sum = f.iter().sum::<f64>();
                    f.iter().map(|x| x / sum * n as f64).collect()
                };
                let (h, d) = (norm(&a.hour_factors, 24), norm(&a.day_factors, 7));
                let mut rates = Box::new([0.0; 168]);
                for (i, r) in rates.iter_mut().enumerate() {
                    *r = a.rate_per_hour / 3600.0 * h[i % 24] * d[i / 24];
                }
                let week = rates.iter().sum::<f64>() * 3600.0;
                // Positive (a valid model's factors have a positive sum); +∞ for a rate
                // near f64::MAX, which skips no week.
                debug_assert!(week > 0.0, "a valid model has a positive weekly rate: {week}");
                ArrivalState::Modulated { rng, now: a.start, rates, week }
            }
            Process::Bursts => {
                let per_hour = a.bursts_per_hour.unwrap_or(0.0);
                let jobs = a.burst_jobs.unwrap_or(1.0);
                let rest = a.rate_per_hour - per_hour * jobs;
                let mut rng = rng;
                let background = (rest > a.rate_per_hour * 1e-9).then(|| {
                    let gap = 3600.0 / rest;
                    let first = a.start + gap * exp1(&mut rng);
                    (rng, first, gap)
                });
                let size = if jobs <= 1.0 {
                    BurstDraw::One
                } else {
                    match a.burst_size.unwrap_or_default() {
                        BurstSize::Geometric => BurstDraw::Geometric(Geometric::new(1.0 / jobs).expect("p in (0, 1)")),
                        BurstSize::Poisson => BurstDraw::Poisson(Poisson::new(jobs - 1.0).expect("lambda > 0")),
                    }
                };
                let mut starts = streams.stream("gen-bursts");
                let burst_gap = 3600.0 / per_hour;
                let next_burst = a.start + burst_gap * exp1(&mut starts);
                ArrivalState::Bursts(Box::new(Bursts {
                    background,
                    starts,
                    next_burst,
                    burst_gap,
                    size_rng: streams.stream("gen-burst-size"),
                    size,
                    spread_rng: streams.stream("gen-burst-spread"),
                    spread: a.burst_spread.unwrap_or(0.0),
                    pending: BinaryHeap::new(),
                }))
            }
        }
    }

    /// The next submit time in µs (`None` past [`TIME_LIMIT`]).
    fn next(&mut self) -> Option<u64> {
        let secs = match self {
            ArrivalState::Poisson { rng, now, gap } => {
                *now += *gap * exp1(rng);
                *now
            }
            ArrivalState::Modulated { rng, now, rates, week } => {
                // Exact inversion of the integrated rate: spend an Exp(1) amount of
                // "intensity", whole weeks at once (each holds `week` of it, whatever
                // hour it starts at), then hour slot by hour slot (at most about 170).
                let mut e = exp1(rng);
                let weeks = (e / *week).floor();
                if weeks >= 1.0 {
                    *now += weeks * WEEK;
                    e = (e - weeks * *week).max(0.0);
                }
                loop {
                    if *now > TIME_LIMIT {
                        return None;
                    }
                    let slot = (*now / 3600.0).floor();
                    let end = (slot + 1.0) * 3600.0;
                    let r = rates[(slot as u64 % 168) as usize];
                    let room = (end - *now) * r;
                    if e < room {
                        *now += e / r;
                        break *now;
                    }
                    e -= room;
                    *now = end;
                }
            }
            ArrivalState::Bursts(b) => return b.next(),
        };
        (secs <= TIME_LIMIT).then(|| secs_to_micros(secs))
    }
}

impl Bursts {
    fn next(&mut self) -> Option<u64> {
        loop {
            let bg = self.background.as_ref().map_or(u64::MAX, |b| secs_to_micros(b.1));
            let queued = self.pending.peek().map_or(u64::MAX, |r| r.0);
            let due = bg.min(queued);
            if self.next_burst <= TIME_LIMIT && secs_to_micros(self.next_burst) <= due {
                // Open the burst: its jobs all come at or after its start, so none can
                // precede what is already due.
                let extra = match &self.size {
                    BurstDraw::One => 0,
                    BurstDraw::Geometric(g) => g.sample(&mut self.size_rng),
                    BurstDraw::Poisson(p) => p.sample(&mut self.size_rng) as u64,
                };
                for _ in 0..extra.saturating_add(1).min(MAX_BURST) {
                    let t = self.next_burst + self.spread * uniform_f64(&mut self.spread_rng);
                    self.pending.push(Reverse(secs_to_micros(t)));
                }
                self.next_burst += self.burst_gap * exp1(&mut self.starts);
                continue;
            }
            if due == u64::MAX {
                return None;
            }
            if queued == due {
                self.pending.pop();
            } else if let Some(b) = &mut self.background {
                b.1 += b.2 * exp1(&mut b.0);
                if b.1 > TIME_LIMIT {
                    self.background = None;
                }
            }
            return Some(due);
        }
    }
}

impl Generator {
    /// A generator of `model`'s jobs with `seed`. Panics when the model breaks a rule
    /// ([`Model::validate`]); models from [`Model::from_toml`] and [`crate::fit::fit`]
    /// never do.
    pub fn new(model: &Model, seed: u64) -> Generator {
        if let Err(e) = model.validate() {
            panic!("invalid workload model: {e}");
        }
        let streams = RngStreams::new(seed);
        let classes = model
            .classes
            .iter()
            .enumerate()
            .map(|(i, c)| ClassDraw {
                kind: c.kind,
                tasks: Table::of(&c.tasks),
                cores: c.cores.as_ref().map(Table::of),
                gpus: c.gpus.as_ref().map(Table::of),
                gpu_memory: c.gpu_memory_mib.as_ref().map(Table::of),
                memory: c.memory_mib.as_ref().map(Table::of),
                runtime: ContinuousDraw::new(&c.runtime),
                overestimate: c.overestimate.as_ref().map(ContinuousDraw::new),
                requested_by_runtime: c.requested_by_runtime.as_ref().map(|bins| {
                    (bins.iter().map(|b| b.runtime_upto).collect(), bins.iter().map(|b| b.quantiles.clone()).collect())
                }),
                max_requested: c.max_requested.map(secs_to_micros),
                runtime_rng: streams.stream(&format!("gen-runtime/{i}")),
                overestimate_rng: streams.stream(&format!("gen-overestimate/{i}")),
                gpu_peak: c
                    .gpu_peak_mib
                    .as_ref()
                    .map(|d| (ContinuousDraw::new(d), streams.stream(&format!("gen-gpu-peak/{i}")))),
                gpu_util: c
                    .gpu_util_pct
                    .as_ref()
                    .map(|d| (ContinuousDraw::new(d), streams.stream(&format!("gen-gpu-util/{i}")))),
            })
            .collect();
        let weights: Vec<f64> = model.classes.iter().map(|c| c.weight).collect();
        let arrivals = ArrivalState::new(&model.arrivals, &streams);
        Generator {
            arrivals,
            classes,
            class_pick: Table::new((0..model.classes.len()).collect(), &weights),
            users: Zipf::new(model.users.count as f64, model.users.zipf).expect("checked users"),
            queues: model.queues.as_ref().map(Table::of),
            procs: model.procs.map(|p| p.min(u32::MAX as u64) as u32),
            gpus_per_node: model.gpus_per_node,
            s: Streams {
                class: streams.stream("gen-class"),
                tasks: streams.stream("gen-tasks"),
                cores: streams.stream("gen-cores"),
                gpus: streams.stream("gen-gpus"),
                gpu_memory: streams.stream("gen-gpu-memory"),
                memory: streams.stream("gen-memory"),
                user: streams.stream("gen-user"),
                queue: streams.stream("gen-queue"),
            },
            count: 0,
        }
    }
}

impl Iterator for Generator {
    type Item = Job;

    fn next(&mut self) -> Option<Job> {
        let submit = self.arrivals.next()?;
        self.count += 1;
        let s = &mut self.s;
        let c = &mut self.classes[self.class_pick.pick(&mut s.class)];
        let mut tasks = c.tasks.pick(&mut s.tasks);
        let mut cores = pick_or(&c.cores, &mut s.cores, 1);
        let mut gpus = pick_or(&c.gpus, &mut s.gpus, 0);
        let gpu_memory = pick_or(&c.gpu_memory, &mut s.gpu_memory, 0);
        let memory = pick_or(&c.memory, &mut s.memory, 0);
        if let Some(cap) = self.gpus_per_node {
            gpus = gpus.min(cap);
        }
        if let Some(p) = self.procs {
            cores = cores.min(p);
            tasks = tasks.min(p / cores).max(1);
        }
        let runtime = secs_to_micros(c.runtime.sample(&mut c.runtime_rng));
        let requested = c.requested(runtime);
        let user = self.users.sample(&mut s.user) as u32;
        let queue = match &self.queues {
            Some(q) => q.pick(&mut s.queue),
            None => -1,
        };
        let mut job = Job::rigid(
            itoa::Buffer::new().format(self.count),
            SimTime(submit),
            tasks,
            SimDuration(runtime),
            SimDuration(requested),
        );
        job.task = TaskShape {
            cores,
            memory_mib: memory,
            gpus,
            gpu_memory_mib: if gpus > 0 { gpu_memory } else { 0 },
            ..TaskShape::default()
        };
        if gpus > 0 {
            if let Some((d, rng)) = &mut c.gpu_peak {
                job.task.gpu_peak_mib = d.sample(rng).max(0.0).round() as u64;
            }
            if let Some((d, rng)) = &mut c.gpu_util {
                job.task.gpu_util_permille = (d.sample(rng).clamp(0.0, 100.0) * 10.0).round() as u16;
            }
        }
        job.user = user;
        job.queue = queue;
        job.kind = c.kind;
        Some(job)
    }
}
