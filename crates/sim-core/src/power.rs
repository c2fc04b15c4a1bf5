//! GPU board power as a function of utilization: the energy model's input.
//!
//! NVML reports board power (`nvmlDeviceGetPowerUsage`, milliwatts) and utilization
//! (`nvmlDeviceGetUtilizationRates`, percent of the sample period a kernel ran). The
//! usual first-order model, and the one GPU simulators use when nothing better is
//! measured, is linear between the idle draw and the board power limit (TDP); a measured
//! profile may give more points, and the curve is then piecewise linear through them.
//! Values are integers (permille of utilization, milliwatts) so a curve is `Eq` and the
//! engine's energy sums stay exact.

use serde::{Deserialize, Serialize};

/// Board power against utilization: sorted `(utilization permille, milliwatts)` points,
/// the first at 0 ‰ (idle), the last at 1000 ‰ (full load).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerCurve {
    points: Vec<(u16, u64)>,
}

/// Why a power curve cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PowerCurveError {
    /// Fewer than two points, or the first is not at 0 ‰ or the last not at 1000 ‰.
    #[error("a power curve needs points from 0 % to 100 % utilization (got {0})")]
    Span(String),
    /// Utilizations not strictly increasing.
    #[error("power curve utilizations must increase strictly (got {0})")]
    Order(String),
}

impl PowerCurve {
    /// Linear from `idle_mw` at 0 % to `max_mw` at 100 % utilization.
    ///
    /// ```
    /// let c = sim_core::PowerCurve::linear(60_000, 400_000);
    /// assert_eq!(c.at_permille(0), 60_000);
    /// assert_eq!(c.at_permille(500), 230_000);
    /// assert_eq!(c.at_permille(1000), 400_000);
    /// ```
    pub fn linear(idle_mw: u64, max_mw: u64) -> Self {
        PowerCurve { points: vec![(0, idle_mw), (1000, max_mw)] }
    }

    /// Piecewise linear through `points` (`(utilization permille, milliwatts)`), which
    /// must run from 0 ‰ to 1000 ‰ with strictly increasing utilization.
    ///
    /// ```
    /// let c = sim_core::PowerCurve::from_points(vec![(0, 50_000), (300, 200_000), (1000, 300_000)]).unwrap();
    /// assert_eq!(c.at_permille(150), 125_000);
    /// assert_eq!(c.at_permille(650), 250_000);
    /// assert!(sim_core::PowerCurve::from_points(vec![(0, 1), (900, 2)]).is_err());
    /// ```
    pub fn from_points(points: Vec<(u16, u64)>) -> Result<Self, PowerCurveError> {
        let shown = || format!("{points:?}");
        if points.len() < 2 || points[0].0 != 0 || points[points.len() - 1].0 != 1000 {
            return Err(PowerCurveError::Span(shown()));
        }
        if points.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(PowerCurveError::Order(shown()));
        }
        Ok(PowerCurve { points })
    }

    /// The points, `(utilization permille, milliwatts)`.
    pub fn points(&self) -> &[(u16, u64)] {
        &self.points
    }

    /// Idle draw (0 % utilization), milliwatts.
    pub fn idle_mw(&self) -> u64 {
        self.points[0].1
    }

    /// Full-load draw (100 % utilization), milliwatts.
    pub fn max_mw(&self) -> u64 {
        self.points[self.points.len() - 1].1
    }

    /// Power at a utilization (permille, clamped to 1000), milliwatts, interpolated
    /// linearly between the two points around it (rounded down).
    pub fn at_permille(&self, util: u32) -> u64 {
        let u = util.min(1000) as u64;
        let i = self.points.partition_point(|p| (p.0 as u64) <= u);
        if i >= self.points.len() {
            return self.max_mw();
        }
        let (u0, p0) = (self.points[i - 1].0 as u64, self.points[i - 1].1 as i128);
        let (u1, p1) = (self.points[i].0 as u64, self.points[i].1 as i128);
        (p0 + (p1 - p0) * (u - u0) as i128 / (u1 - u0) as i128) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_and_clamps() {
        let c = PowerCurve::from_points(vec![(0, 100), (500, 300), (1000, 200)]).unwrap();
        assert_eq!(c.at_permille(0), 100);
        assert_eq!(c.at_permille(250), 200);
        assert_eq!(c.at_permille(500), 300);
        assert_eq!(c.at_permille(750), 250);
        assert_eq!(c.at_permille(1000), 200);
        assert_eq!(c.at_permille(5000), 200);
        assert_eq!(c.idle_mw(), 100);
        assert_eq!(c.max_mw(), 200);
        assert!(PowerCurve::from_points(vec![(0, 1), (500, 2), (500, 3), (1000, 4)]).is_err());
        assert!(PowerCurve::from_points(vec![(10, 1), (1000, 4)]).is_err());
    }
}
