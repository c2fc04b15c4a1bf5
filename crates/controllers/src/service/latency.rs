//! Request latency of one inference replica as a multi-server queue: `c` request slots
//! (concurrent sequences, or a batch), each serving a request in `s` seconds on average,
//! fed by Poisson arrivals at `λ` requests per second.
//!
//! * **M/M/c** (exponential service): the probability that a request waits is Erlang's C
//!   formula; a waiting request waits an exponential time of rate `cμ − λ`; the response
//!   time is that wait plus an exponential service of rate `μ = 1/s` (Kleinrock, *Queueing
//!   Systems* vol. 1, §3.5; Gross and Harris, *Fundamentals of Queueing Theory*, §2.3). Its
//!   p50 and p99 are found by bisection on the exact distribution.
//! * **M/D/c** (fixed service, as batched inference with a steady batch time): the
//!   service is exactly `s`; the wait is approximated as M/M/c's with half the mean (the
//!   leading term of Cosmetatos' approximation, "Some approximate equilibrium results for
//!   the multi-server queue (M/G/r)", Operational Research Quarterly 27, 1976), keeping
//!   Erlang's C as the probability of waiting.
//!
//! At `λ ≥ cμ` the queue grows without bound: no latency (`None`), every request of the
//! interval counted as late.

/// Which service-time distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Exponential service times.
    MMc,
    /// Deterministic service times (batched inference).
    MDc,
}

/// Latency percentiles and load of one replica.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Latency {
    /// Median response time, seconds.
    pub p50: f64,
    /// 99th percentile, seconds.
    pub p99: f64,
    /// Share of the slots busy (`λ / cμ`).
    pub utilization: f64,
    /// Probability that a request waits for a slot (Erlang's C).
    pub wait_probability: f64,
}

/// Erlang's C: the probability that an arrival waits, for `c` servers offered `a = λ/μ`
/// erlangs (`a < c`), by the stable Erlang B recursion.
pub fn erlang_c(c: u32, a: f64) -> f64 {
    let mut b = 1.0;
    for k in 1..=c {
        b = a * b / (f64::from(k) + a * b);
    }
    let rho = a / f64::from(c);
    b / (1.0 - rho * (1.0 - b))
}

/// The response-time percentiles of a replica with `slots` slots of `service` seconds
/// mean at `lambda` requests per second; `None` when it is overloaded.
pub fn latency(model: Model, slots: u32, service: f64, lambda: f64) -> Option<Latency> {
    let c = slots.max(1);
    let mu = 1.0 / service;
    let capacity = f64::from(c) * mu;
    if lambda >= capacity || !lambda.is_finite() || service <= 0.0 {
        return None;
    }
    let utilization = lambda / capacity;
    let wait_probability = if lambda <= 0.0 { 0.0 } else { erlang_c(c, lambda / mu) };
    // The rate of a waiting request's exponential wait.
    let theta = capacity - lambda;
    let quantile = |q: f64| match model {
        Model::MMc => {
            let survival = |t: f64| {
                let wait_and_serve = if (theta - mu).abs() < 1e-12 * mu {
                    (1.0 + mu * t) * (-mu * t).exp()
                } else {
                    (theta * (-mu * t).exp() - mu * (-theta * t).exp()) / (theta - mu)
                };
                (1.0 - wait_probability) * (-mu * t).exp() + wait_probability * wait_and_serve
            };
            bisect(|t| survival(t) <= 1.0 - q, service)
        }
        Model::MDc => {
            if q <= 1.0 - wait_probability {
                service
            } else {
                service + (wait_probability / (1.0 - q)).ln() / (2.0 * theta)
            }
        }
    };
    Some(Latency { p50: quantile(0.5), p99: quantile(0.99), utilization, wait_probability })
}

/// The least `t` with `done(t)` (`done` monotone), to a relative 1e-9.
fn bisect(done: impl Fn(f64) -> bool, scale: f64) -> f64 {
    let mut hi = scale.max(1e-9);
    while !done(hi) {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if done(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo <= 1e-9 * hi {
            break;
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn erlang_c_matches_the_closed_forms() {
        // One server: C = ρ. Two servers offered one erlang: C = 1/3.
        assert!(close(erlang_c(1, 0.7), 0.7));
        assert!(close(erlang_c(2, 1.0), 1.0 / 3.0));
        // The textbook sum, for c = 10, a = 8.
        let (c, a) = (10u32, 8.0f64);
        let term = |k: u32| a.powi(k as i32) / (1..=k).map(f64::from).product::<f64>();
        let last = term(c) * f64::from(c) / (f64::from(c) - a);
        let direct = last / ((0..c).map(term).sum::<f64>() + last);
        assert!(close(erlang_c(c, a), direct), "{} {direct}", erlang_c(c, a));
    }

    #[test]
    fn mm1_response_time_is_exponential() {
        // M/M/1, λ = 0.5, μ = 1: the response time is exponential of rate μ − λ = 0.5.
        let l = latency(Model::MMc, 1, 1.0, 0.5).unwrap();
        assert!(close(l.p50, 2f64.ln() / 0.5) && close(l.p99, 100f64.ln() / 0.5), "{l:?}");
        assert!(close(l.utilization, 0.5));
        // Idle: the service alone; overloaded: none.
        let idle = latency(Model::MMc, 4, 0.2, 0.0).unwrap();
        assert!(close(idle.p50, 0.2 * 2f64.ln()), "{idle:?}");
        assert!(latency(Model::MMc, 4, 0.2, 20.0).is_none());
    }

    #[test]
    fn md_c_waits_half_as_long_and_serves_in_fixed_time() {
        let (c, s, lambda) = (8, 0.5, 10.0);
        let d = latency(Model::MDc, c, s, lambda).unwrap();
        let m = latency(Model::MMc, c, s, lambda).unwrap();
        // More than half the requests do not wait: the median is the service time.
        assert!(d.wait_probability < 0.5 && close(d.p50, s), "{d:?}");
        let theta = f64::from(c) / s - lambda;
        assert!(close(d.p99, s + (d.wait_probability / 0.01).ln() / (2.0 * theta)));
        assert!(d.p99 < m.p99, "{d:?} {m:?}");
        // Latency grows with load.
        let busier = latency(Model::MDc, c, s, 15.5).unwrap();
        assert!(busier.p99 > d.p99);
    }
}
