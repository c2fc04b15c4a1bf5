//! # Writing a policy
//!
//! A scheduling policy in schedlab is **one file** in `crates/policies/src/`, **one
//! entry** in [`crate::REGISTRY`], and a few tests with start times computed by hand.
//! This guide walks through all of it, using [`crate::sjf_aging`] (shortest job first
//! with aging, `sjf-aging`) as the worked example: read `crates/policies/src/sjf_aging.rs`
//! alongside. (This page is `crates/policies/src/guide.rs`; `cargo doc -p policies
//! --open` renders it as `policies::guide`.)
//!
//! 1. [The `Policy` trait](#1-the-policy-trait)
//! 2. [What a policy sees: `SchedView`](#2-what-a-policy-sees-schedview)
//! 3. [What a policy says: `Decision`](#3-what-a-policy-says-decision)
//! 4. [Options and specs](#4-options-and-specs)
//! 5. [The worked example, piece by piece](#5-the-worked-example-piece-by-piece)
//! 6. [Registering it](#6-registering-it)
//! 7. [Testing it](#7-testing-it)
//! 8. [Running and comparing it](#8-running-and-comparing-it)
//! 9. [Controllers](#controllers): the other kind of plug-in
//!
//! ## 1. The `Policy` trait
//!
//! The engine ([`sim_core::simulate`]) owns all state. At every scheduling point it
//! hands the policy a read-only [`SchedView`] and an empty `Vec<Decision>`; the policy
//! pushes decisions, and the engine checks and applies them. A policy implements
//! [`sim_core::policy::Policy`]:
//!
//! | method | default | what it is for |
//! |---|---|---|
//! | `spec(&self) -> String` | — | the **canonical** spec that rebuilds this exact policy, every option spelled out: it goes into `summary.json` and error messages, and `build(p.spec())` must give the same policy |
//! | `pass_mode(&self) -> PassMode` | `PerTime` | when passes run: `PerTime` applies every end, node change and arrival of an instant and then runs one pass (Batsim's behaviour); `PerEvent` runs a pass after every single event |
//! | `places_units(&self) -> bool` | `false` | say `true` if decisions name units (`Start { units: Some(..) }`) or you read [`SchedView::free_pool`]'s units: the engine then tracks which units are free, not just how many |
//! | `binds_nodes(&self) -> bool` | `false` | say `true` if you bind tasks to nodes and GPUs (`Bind`, `Hold`): the engine then keeps the per-node [`sim_core::Ledger`] |
//! | `schedule(&mut self, view, info, out)` | — | one pass: read `view` (and [`PassInfo`]: what was queued or released since the previous pass), push decisions into `out` |
//!
//! The engine only calls `schedule` when the queue is not empty. A policy must be
//! deterministic: same view, same decisions (draw randomness only from a named stream
//! seeded by the run's master seed, which the registry's build function receives; see
//! `sim_core::rng`). `Policy: Send`, so `sim compare` can run policies in parallel.
//!
//! Here is a complete, if silly, policy: last come, first served, strict. It compiles
//! and runs as it stands.
//!
//! ```
//! use sim_core::policy::{Decision, PassInfo, Policy, SchedView, StartReason};
//! use sim_core::{Cluster, Job, SimConfig, SimDuration, SimTime};
//!
//! struct Lifo;
//!
//! impl Policy for Lifo {
//!     fn spec(&self) -> String {
//!         "lifo".into() // no options: the name is the canonical spec
//!     }
//!     fn schedule(&mut self, view: &SchedView<'_>, _: &PassInfo, out: &mut Vec<Decision>) {
//!         let mut free = view.free_units();
//!         for &j in view.queue().iter().rev() {
//!             let need = view.job(j).units();
//!             if need > free {
//!                 break;
//!             }
//!             free -= need; // decisions apply in order: keep your own count
//!             out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
//!         }
//!     }
//! }
//!
//! // A fills the 4 processors until 10; B and C arrive meanwhile. LIFO starts C first.
//! let s = SimDuration::from_secs;
//! let jobs = [
//!     Job::rigid("A", SimTime::from_secs(0), 4, s(10), s(10)),
//!     Job::rigid("B", SimTime::from_secs(1), 4, s(10), s(10)),
//!     Job::rigid("C", SimTime::from_secs(2), 4, s(10), s(10)),
//! ];
//! let r = sim_core::simulate(&Cluster::processor_pool(4), &jobs, &mut Lifo, &SimConfig::default(), None).unwrap();
//! let starts: Vec<u64> = r.records.iter().map(|rec| rec.start.unwrap().0 / 1_000_000).collect();
//! assert_eq!(starts, [0, 20, 10]);
//! ```
//!
//! ## 2. What a policy sees: `SchedView`
//!
//! [`SchedView`] is a read-only window on the simulation at one instant. Times are
//! integers: [`sim_core::SimTime`] and [`sim_core::SimDuration`] are `u64`
//! microseconds (`.0`, `.as_micros()`), so a schedule never depends on float rounding;
//! do your arithmetic in integers too (`sjf-aging` works in `i128` nanoseconds).
//!
//! * **Time and capacity**: `now()`, `capacity()` (units of nodes that are up),
//!   `free_units()`, `free_pool()` (the free units themselves, listed only when the policy
//!   `places_units`), `cluster()`, `node_states()`, `walltime_kill()`.
//! * **The queue**: `queue()` — waiting jobs in queue order (arrival order; equal-time
//!   arrivals in input order; a requeued job returns to its place). `job(j)` gives a job's
//!   static description ([`sim_core::Job`]: `submit`, `tasks`, `task`, `units()`, `user`,
//!   `queue`, `priority`, `kind`, …) and `requested(j)` its requested time limit (the
//!   trace's request, else its run time).
//! * **Running jobs**: `running()` in start order ([`sim_core::policy::RunningJob`]: start,
//!   requested end, units, binding), `running_count()`, `running_job(j)`, and
//!   `requested_ends()`, the `(requested end, units)` release profile in end order that
//!   EASY reads its shadow time from.
//! * **GPU state**, for policies that bind: `ledger()` (per-node milli-CPU, memory,
//!   per-GPU milli-GPU and declared memory) and `held(j)` (a partial gang's tasks).
//! * `logging()`: whether a decision log is being written; build `Decision::Wait` only
//!   then.
//!
//! **Oracles.** Two methods reveal what a real scheduler cannot know:
//! [`SchedView::oracle_runtime`] (how long a job will really run) and
//! [`SchedView::gpu_peak_mib`] (its actual peak GPU memory). They are nowhere else: `job(j)`
//! is a [`sim_core::policy::JobView`], the job's request without its run time (its
//! `task().gpu_peak_mib` reads 0). **Only variants declared clairvoyant may call them**, and the declaration is an option value that says so in the spec:
//! `easy[backfill_estimate=actual]`, `sjf-aging[estimate=actual]` (an ideal predictor,
//! as CQSim offers). A policy whose spec does not say so must use `requested(j)` and
//! declared memory only; otherwise its results are not achievable and comparisons
//! against it are meaningless. The example reads its estimate through
//! [`crate::options::Estimate`], which keeps the oracle behind the option:
//!
//! ```text
//! Estimate::Requested => view.requested(j),
//! Estimate::Actual => view.oracle_runtime(j),
//! ```
//!
//! ## 3. What a policy says: `Decision`
//!
//! [`Decision`] has eight variants:
//!
//! | decision | effect |
//! |---|---|
//! | `Start { job, units, reason }` | start a waiting job now; `units: None` takes the lowest-numbered free units, `Some(set)` names them (node reservations; needs `places_units`) |
//! | `Bind { job, binding, reason }` | start a waiting job on named nodes and GPUs, a [`sim_core::Binding`] of one [`sim_core::TaskBinding`] per task (`Vec<TaskBinding>::into()`; a Kubernetes Bind; needs `binds_nodes`) |
//! | `Hold { job, binding, timeout }` | bind some tasks of a gang, which hold their resources until the whole gang is placed (pod-at-a-time); with a `timeout` an incomplete gang gives everything back |
//! | `Release { job }` | give back what a waiting job's partial gang holds (Kueue's eviction) |
//! | `Withdraw { job, why }` | end a waiting job for good without running it (Kueue's deactivation at `backoffLimitCount`): its held tasks are given back, it leaves the queue, its outcome is `unfinished` with `why` as the reason |
//! | `WakeAt { at }` | run a pass at `at` even if nothing else happens then (a policy's own timer; a time not in the future is ignored) |
//! | `Preempt { job }` | stop a running job and requeue it (it restarts from the beginning); the engine runs another pass at the same instant so the freed units are used at once |
//! | `Wait { job, reason }` | no effect: explains in the decision log (`sim run --log`) why a job waits ([`WaitReason`]) |
//!
//! The [`StartReason`] of a start goes to the decision log too (`HeadFits`,
//! `BackfillEndsBeforeShadow`, `Placed`, …). A new policy is not limited to those: give
//! your own words with `StartReason::Other { why }` and `WaitReason::Other { why }`.
//!
//! **How the engine checks them.** Decisions are applied one by one, in order, each
//! against the state the ones before it left: a `Start` of a job that is not waiting
//! (started twice, or unknown), with fewer free units than it needs, or on named units
//! of the wrong count or not all free; a `Bind` or `Hold` from a policy that does not
//! declare `binds_nodes`, onto a node that is not up or that lacks the resources, or naming
//! too many tasks; a `Release` or `Withdraw` of a job that is not waiting; a `Preempt` of a job that is
//! not running — each stops the run with [`sim_core::EngineError::InvalidDecision`],
//! which names the policy's spec, the time and what was wrong. A policy that keeps
//! preempting at one instant (more than
//! [`sim_core::engine::MAX_PASSES_PER_INSTANT`] passes) stops it with
//! `EngineError::Livelock`. These are bugs in the policy, never in the input: so a
//! policy keeps its own count of what it has used within a pass (`free -= need` in the
//! examples).
//!
//! **Timers that could repeat for ever.** A policy whose `WakeAt` timers retry something
//! (an eviction's back-off, a rejected gang's back-off) implements
//! [`sim_core::policy::Policy::retry_state`]: it pushes what of its own state can change
//! what its later passes decide. When nothing runs, nothing is left to arrive and only its
//! timers are pending, the engine stops a run as soon as a pass would see a state it saw
//! before, and reports a [`sim_core::Stall`]; the default says nothing and is never
//! stopped.
//!
//! ## 4. Options and specs
//!
//! Policies are chosen by a **spec**, `name` or `name[key=value,...]`, e.g.
//! `sjf-aging[aging=2,blocking=skip]`. [`PolicySpec`] parses it (a name of letters,
//! digits, `-` and `_`; options by key, each at most once; spaces around keys and values
//! are ignored). Each option is declared as an [`OptionInfo`]: its key, its allowed
//! values with the **default first**, and a one-line doc that `sim policies` prints:
//!
//! ```text
//! pub const BLOCKING: OptionInfo = OptionInfo {
//!     key: "blocking",
//!     values: &["strict", "skip"],
//!     doc: "strict: stop at the first job in priority order that does not fit ...",
//! };
//! ```
//!
//! Shared options live in [`crate::options`] ([`crate::options::PASS`],
//! `BACKFILL_ESTIMATE`, `RESERVATION`, `REPLAN`): reuse them rather than inventing
//! another spelling. Two kinds of values are not enumerated:
//! [`crate::options::NUMBER`] (`values: NUMBER`, any non-negative integer, e.g. kube's
//! `timeout`) and [`crate::options::DECIMAL`] (`values: &["1", DECIMAL]`, any non-negative
//! decimal with at most three decimals, default 1, read exactly in thousandths by
//! [`crate::options::parse_permille`]; `sjf-aging`'s `aging`).
//!
//! Inside the crate, `options::check(spec, Self::OPTIONS)` validates a spec against the
//! options a policy takes: an unknown key is [`PolicyError::UnknownOption`] (listing the
//! keys it takes), a value not allowed is [`PolicyError::BadValue`] (listing the values,
//! or saying a non-negative number was expected). All are usage errors: `sim` exits
//! with status 2 and the message. The chosen values are then read with `c.index(OPT)`
//! (position in `values`, 0 = default), `c.pass()`, `c.number(OPT)` or
//! `c.permille(OPT)`.
//!
//! `spec()` writes every option back, in declaration order, with `canonical(name, &[(OPT,
//! index), ...])` or, when some value is not enumerated,
//! `canonical_values(name, &[(key, value), ...])`. The canonical spec is what
//! `summary.json` records, so a run can always be reproduced from its outputs:
//!
//! ```
//! let p = policies::build("sjf-aging[blocking=skip, aging=0.50]").unwrap();
//! assert_eq!(p.spec(), "sjf-aging[pass=per-time,aging=0.5,estimate=requested,blocking=skip]");
//! assert_eq!(policies::build(&p.spec()).unwrap().spec(), p.spec()); // it rebuilds itself
//! let e = policies::build("sjf-aging[aging=-1]").err().unwrap().to_string();
//! assert!(e.contains("option 'aging' cannot be '-1'") && e.contains("a non-negative number"), "{e}");
//! let e = policies::build("sjf-aging[order=lifo]").err().unwrap().to_string();
//! assert!(e.contains("unknown option 'order'"), "{e}");
//! ```
//!
//! ## 5. The worked example, piece by piece
//!
//! `sjf-aging` orders the waiting jobs by priority = estimate − `aging` × wait (lower
//! first) and starts them in that order while they fit. Shortest-job-first minimises mean
//! wait but starves long jobs; aging bounds that (see [`crate::sjf_aging::SjfAging`] for
//! the argument, and Slurm's multifactor priority and Maui's queue-time weight for the
//! same idea in production).
//!
//! **The state** is just the parsed options, `aging` kept in thousandths so that
//! `aging=1.5` is the integer 1500:
//!
//! ```text
//! pub struct SjfAging {
//!     pass: PassMode,
//!     aging_permille: u64,
//!     estimate: Estimate,
//!     blocking: Blocking,
//! }
//! ```
//!
//! **Building it** validates the spec, then reads each option:
//!
//! ```text
//! pub const OPTIONS: &'static [OptionInfo] = &[PASS, AGING, ESTIMATE, BLOCKING];
//!
//! pub fn from_spec(spec: &PolicySpec) -> Result<Self, PolicyError> {
//!     let c = crate::options::check(spec, Self::OPTIONS)?;
//!     Ok(SjfAging {
//!         pass: c.pass(),
//!         aging_permille: c.permille(AGING),
//!         estimate: [Estimate::Requested, Estimate::Actual][c.index(ESTIMATE)],
//!         blocking: [Blocking::Strict, Blocking::Skip][c.index(BLOCKING)],
//!     })
//! }
//! ```
//!
//! **The priority** is exact integer arithmetic: microseconds × thousandths are
//! nanoseconds, and `i128` leaves room for any trace (`aging` is capped at 1,000,000):
//!
//! ```text
//! let estimate = self.estimate.of(view, j).as_micros();
//! let wait = view.now().saturating_since(view.job(j).submit()).as_micros();
//! i128::from(estimate) * 1000 - i128::from(self.aging_permille) * i128::from(wait)
//! ```
//!
//! **The pass** sorts the queue by priority (a *stable* sort, so ties keep queue order
//! and the schedule is deterministic), then starts jobs while they fit, counting the free
//! units down itself. The first job that does not fit is explained in the log; under
//! `strict` the pass stops there, under `skip` it goes on looking for jobs that fit:
//!
//! ```text
//! let mut order: Vec<(i128, JobId)> = view.queue().iter().map(|&j| (self.priority(view, j), j)).collect();
//! order.sort_by_key(|&(p, _)| p);
//! for (_, j) in order {
//!     let need = view.job(j).units();
//!     if need > free {
//!         if view.logging() && !explained {
//!             out.push(Decision::Wait { job: j, reason: WaitReason::DoesNotFit { free } });
//!             explained = true;
//!         }
//!         if self.blocking == Blocking::Strict || free == 0 {
//!             break;
//!         }
//!         continue;
//!     }
//!     free -= need;
//!     out.push(Decision::Start { job: j, units: None, reason: StartReason::HeadFits });
//! }
//! ```
//!
//! It never names units, binds nodes or preempts, so it keeps the default
//! `places_units`, `binds_nodes` and the `pass` option's `pass_mode`. A pass costs
//! O(q log q) for a queue of q jobs; when nothing is free and no log is written it
//! returns before sorting.
//!
//! **The spec** writes every option back:
//!
//! ```text
//! canonical_values("sjf-aging", &[
//!     (PASS.key, PASS.values[pass_index(self.pass)].to_string()),
//!     (AGING.key, permille_string(self.aging_permille)),
//!     (ESTIMATE.key, ESTIMATE.values[self.estimate as usize].to_string()),
//!     (BLOCKING.key, BLOCKING.values[self.blocking as usize].to_string()),
//! ])
//! ```
//!
//! ## 6. Registering it
//!
//! In `crates/policies/src/lib.rs`: `pub mod sjf_aging;`, `pub use sjf_aging::SjfAging;`,
//! a row in the crate's doc table, and one [`crate::PolicyEntry`] in [`crate::REGISTRY`]:
//!
//! ```text
//! PolicyEntry {
//!     name: "sjf-aging",
//!     summary: "shortest job first with aging: lowest (estimate - aging x wait) first, while it fits",
//!     options: SjfAging::OPTIONS,
//!     build: |s, _| Ok(Box::new(SjfAging::from_spec(s)?)),
//! },
//! ```
//!
//! The build function also receives the run's master seed (`_` here; `kube` uses it for
//! seeded tie-breaking). That is all the wiring: [`crate::build`] finds the entry by
//! name, `sim run --policy` and `sim compare --policies` take it, and `sim policies`
//! lists it with its options. Add a row to the policies table in `docs/policies.md` too.
//!
//! ## 7. Testing it
//!
//! Test a policy the way you would check it on paper: a **tiny scenario** of two to five
//! jobs on a small machine, the start times **computed by hand** in a comment, and an
//! exact assertion. Pick numbers that put the policy at its decision points: here, just
//! below, exactly at, and above the aging at which a long job overtakes a short one.
//! R holds all 10 processors until 1000; L (asks 100 s) waits from 100, S (asks 10 s)
//! from 400. At 1000, priority(L) = 100 − 900 a and priority(S) = 10 − 600 a, equal at
//! a = 0.3:
//!
//! ```
//! use sim_core::{Cluster, Job, SimConfig, SimDuration, SimTime};
//!
//! let s = SimDuration::from_secs;
//! let jobs = [
//!     Job::rigid("R", SimTime::from_secs(0), 10, s(1000), s(1000)),
//!     Job::rigid("L", SimTime::from_secs(100), 10, s(100), s(100)),
//!     Job::rigid("S", SimTime::from_secs(400), 10, s(10), s(10)),
//! ];
//! let starts = |spec: &str| -> Vec<u64> {
//!     let mut p = policies::build(spec).unwrap();
//!     let cfg = SimConfig::default();
//!     let r = sim_core::simulate(&Cluster::processor_pool(10), &jobs, p.as_mut(), &cfg, None).unwrap();
//!     r.records.iter().map(|rec| rec.start.unwrap().0 / 1_000_000).collect()
//! };
//! // Plain SJF: S (10) before L (100); S runs [1000, 1010), then L.
//! assert_eq!(starts("sjf-aging[aging=0]"), [0, 1010, 1000]);
//! // a = 0.299: L = -169.1 s, S = -169.4 s: S still first.
//! assert_eq!(starts("sjf-aging[aging=0.299]"), [0, 1010, 1000]);
//! // a = 0.3: both exactly -170 s; the tie keeps queue order, L first.
//! assert_eq!(starts("sjf-aging[aging=0.3]"), [0, 1000, 1100]);
//! // Default a = 1: L = -800 s, S = -590 s.
//! assert_eq!(starts("sjf-aging"), [0, 1000, 1100]);
//! ```
//!
//! Where tests go:
//!
//! * **Unit tests** in the policy's file (`#[cfg(test)] mod tests`): the spec round trip
//!   (`build(spec).spec()` rebuilds itself, defaults spelled out) and every kind of bad
//!   option (unknown key, bad value), checking the message names the option.
//! * **One pass on a hand-built view**, no run: `sim_core::fixture::ViewFixture` builds
//!   the state a pass sees (time, waiting jobs in order, running jobs on units or bound
//!   to nodes, node states) and `view()` hands it to your `schedule`; check the
//!   decisions it returns. `crates/policies/tests/it/fixture.rs` does it for EASY.
//! * **Scenarios** in `crates/policies/tests/it/<policy>.rs`, registered in
//!   `crates/policies/tests/it/main.rs`, whose helpers `job(id, submit, procs, run,
//!   requested)` and `starts(spec, procs, &jobs)` keep each one a few lines. See
//!   `tests/it/sjf_aging.rs` (strict versus skip, a stream of narrow jobs starving a wide
//!   one under `skip`, `estimate=actual`) and `tests/it/scenarios.rs` for FCFS, EASY and
//!   conservative.
//! * **Properties** with `proptest` on small random workloads: every job that fits
//!   completes, the machine is never over-committed, and the policy's own invariant (for
//!   `sjf-aging` under `strict`: no job starts while a waiting job with a lower
//!   `estimate + aging × submit` waits).
//!
//! Run `cargo test -p policies` (unit, integration and doc tests) and
//! `cargo clippy -p policies --all-targets -- -D warnings`.
//!
//! ## 8. Running and comparing it
//!
//! ```sh
//! sim policies                                    # is it listed, with its options?
//! sim run --policy 'sjf-aging[aging=2]' --log     # the embedded KTH-SP2 slice; decisions.jsonl explains every wait
//! sim run --trace data/HPC2N-2002-2.2-cln.first2000.swf.gz --policy 'sjf-aging[blocking=skip]' --out run-skip
//! sim compare --policies 'easy,sjf-aging,sjf-aging[aging=0],sjf-aging[estimate=actual]' --seeds 1..3 --out cmp
//! ```
//!
//! (Quote specs with brackets for the shell; commas inside `[...]` belong to the spec.
//! `cargo run --release --` stands for `sim` in a checkout.) `sim compare` writes
//! `comparison.csv` with each metric's mean, 95 % confidence interval and change against
//! the first policy, per-size-class tables (where SJF's gains on short jobs and its
//! cost on long ones show) and `report.html`.
//!
//! ## Controllers
//!
//! A policy decides where and when waiting jobs start. Everything else that changes a
//! cluster over time — nodes failing and being repaired, a rack drained for maintenance,
//! spot nodes reclaimed, an autoscaler adding nodes, priorities recomputed — is a
//! **controller** ([`sim_core::controller::Controller`]), the second kind of plug-in,
//! modelled on Kubernetes controllers and Slurm's background threads. Like a policy it is
//! one file, one registry line (`crates/controllers/src/lib.rs`, `REGISTRY`), a spec
//! `name[key=value,...]`, and tests with hand-computed times; `sim controllers` lists
//! them and `sim run --controller SPEC` (or a `[[controller]]` table in the cluster
//! configuration) attaches one.
//!
//! | method | default | what it is for |
//! |---|---|---|
//! | `spec(&self) -> String` | — | the canonical spec, as for a policy (it goes into `summary.json`'s `controllers`) |
//! | `interests(&self) -> Interests` | nothing | which engine events it wants to observe: arrivals, starts, ends, killed attempts, node changes |
//! | `start(&mut self, view, out)` | nothing | once before the first event: read the cluster, ask for timers |
//! | `on_timer(&mut self, view, out)` | nothing | at a time it asked for with `Action::WakeAt` |
//! | `on_event(&mut self, view, event, out)` | nothing | for each observed item it wants, in the order they happened |
//!
//! It sees the same read-only [`SchedView`] a policy sees and pushes
//! [`sim_core::controller::Action`]s: `WakeAt`, `SetNodeState` (fail = `Down`, drain =
//! `Draining`, repair or resume = `Up`, remove = `Absent`), `SetTaint`/`ClearTaint`,
//! `SetLabel`/`ClearLabel`, `Evict` (with a grace period), `Checkpoint`, `Submit`, and
//! for the Job controller `Resubmit`/`GiveUp`. The engine applies them one by one, checked,
//! at the place of the ordering contract the module documentation of
//! [`sim_core::controller`] gives (timers after the instant's job ends and before its
//! arrivals; observations delivered before and after each pass). Randomness comes from
//! the stream the registry's build function receives (`controller/<name>/<position>`).
//!
//! The worked example is `maintenance` (`crates/controllers/src/maintenance.rs`): at `at`
//! it drains the nodes of one rack, at `until` it resumes them. Its `start` finds the
//! rack's nodes and asks for two timers; its `on_timer` returns the node changes. The
//! same thing in a few lines, runnable as it stands:
//!
//! ```
//! use sim_core::cluster::{NodeId, NodeState};
//! use sim_core::controller::{Action, Controller};
//! use sim_core::policy::SchedView;
//! use sim_core::{Cluster, Hooks, Job, SimConfig, SimDuration, SimTime};
//!
//! /// Drains node 0 from `at` to `until`.
//! struct Window { at: u64, until: u64, open: bool }
//!
//! impl Controller for Window {
//!     fn spec(&self) -> String { format!("window[at={},until={}]", self.at, self.until) }
//!     fn start(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
//!         out.push(Action::WakeAt { at: SimTime::from_secs(self.at) });
//!         out.push(Action::WakeAt { at: SimTime::from_secs(self.until) });
//!     }
//!     fn on_timer(&mut self, _: &SchedView<'_>, out: &mut Vec<Action>) {
//!         let state = if self.open { NodeState::Up } else { NodeState::Draining };
//!         self.open = !self.open;
//!         out.push(Action::SetNodeState { node: NodeId(0), state });
//!     }
//! }
//!
//! // Two one-processor nodes. A runs on node 0 from 0 to 100; node 0 drains at 50, so B
//! // (submitted at 60) takes node 1 and C (at 70) waits for node 0 to resume at 300.
//! let s = SimDuration::from_secs;
//! let jobs = vec![
//!     Job::rigid("A", SimTime::from_secs(0), 1, s(100), s(100)),
//!     Job::rigid("B", SimTime::from_secs(60), 1, s(500), s(500)),
//!     Job::rigid("C", SimTime::from_secs(70), 1, s(10), s(10)),
//! ];
//! let mut policy = policies::build("fcfs").unwrap();
//! let (cluster, cfg) = (Cluster::processor_pool(2), SimConfig::default());
//! let hooks = Hooks { controllers: vec![Box::new(Window { at: 50, until: 300, open: false })], ..Hooks::default() };
//! let r = sim_core::simulate_with(&cluster, &jobs, policy.as_mut(), &cfg, hooks).unwrap();
//! let starts: Vec<u64> = r.records.iter().map(|r| r.start.unwrap().as_micros() / 1_000_000).collect();
//! assert_eq!(starts, [0, 60, 300]);
//! ```
//!
//! The maintenance controller's own tests (`crates/controllers/tests/it/maintenance.rs`)
//! pin the start times it causes on two racks under FCFS, EASY and conservative, in
//! `drain` and `down` mode, and `tests/it/controllers.rs` runs it from the command line
//! and from a cluster file.
//!
//! [`SchedView`]: sim_core::policy::SchedView
//! [`SchedView::free_pool`]: sim_core::policy::SchedView::free_pool
//! [`SchedView::oracle_runtime`]: sim_core::policy::SchedView::oracle_runtime
//! [`SchedView::gpu_peak_mib`]: sim_core::policy::SchedView::gpu_peak_mib
//! [`PassInfo`]: sim_core::policy::PassInfo
//! [`Decision`]: sim_core::policy::Decision
//! [`WaitReason`]: sim_core::policy::WaitReason
//! [`StartReason`]: sim_core::policy::StartReason
//! [`PolicySpec`]: crate::PolicySpec
//! [`OptionInfo`]: crate::OptionInfo
//! [`PolicyError::UnknownOption`]: crate::PolicyError::UnknownOption
//! [`PolicyError::BadValue`]: crate::PolicyError::BadValue
