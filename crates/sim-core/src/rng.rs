//! Seeded random streams: one master seed split into named streams.
//!
//! Each stream is a ChaCha8 generator (`rand_chacha::ChaCha8Rng`, a named algorithm whose
//! output does not change with crate upgrades) seeded from the master seed and the
//! stream's name through a fixed hash (FNV-1a 64), so adding a draw in one component never
//! shifts another component's sequence.

pub mod go;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// The generator every stream uses.
pub type SimRng = ChaCha8Rng;

/// FNV-1a 64-bit hash of a stream name (stable by definition, unlike std's hasher).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The streams of one run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RngStreams {
    master: u64,
}

impl RngStreams {
    /// Streams for master seed `seed`.
    pub fn new(seed: u64) -> Self {
        RngStreams { master: seed }
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.master
    }

    /// The generator of stream `name` (e.g. `"placement-ties"`).
    ///
    /// ```
    /// use rand_chacha::rand_core::Rng;
    /// let s = sim_core::rng::RngStreams::new(42);
    /// let a = s.stream("arrivals").next_u64();
    /// assert_eq!(a, s.stream("arrivals").next_u64());
    /// assert_ne!(a, s.stream("runtimes").next_u64());
    /// ```
    pub fn stream(&self, name: &str) -> SimRng {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&self.master.to_le_bytes());
        seed[8..16].copy_from_slice(&fnv1a64(name.as_bytes()).to_le_bytes());
        seed[16..24].copy_from_slice(b"schedlab");
        ChaCha8Rng::from_seed(seed)
    }
}

/// A uniform index in `0..n` (`n > 0`), by Lemire's multiply-shift on 64 bits: the same
/// draw for the same stream state on every platform.
pub fn uniform_index(rng: &mut SimRng, n: usize) -> usize {
    use rand_chacha::rand_core::Rng;
    debug_assert!(n > 0);
    ((rng.next_u64() as u128 * n as u128) >> 64) as usize
}

/// Shuffles `v` in place (Fisher–Yates from the back, one [`uniform_index`] draw per
/// position).
pub fn shuffle<T>(rng: &mut SimRng, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = uniform_index(rng, i + 1);
        v.swap(i, j);
    }
}

/// A uniform float in `[0, 1)` from the top 53 bits of one draw.
pub fn uniform_f64(rng: &mut SimRng) -> f64 {
    use rand_chacha::rand_core::Rng;
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}
