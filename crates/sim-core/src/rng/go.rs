//! Go's `math/rand` as of Go 1.19 and 1.20, draw for draw, for replaying simulators
//! written in Go (the FGD paper's `kubernetes-scheduler-simulator` seeds the global
//! source with its tune seed and draws from it in a fixed order).
//!
//! Written from Go's public source (`src/math/rand/rng.go`, `rand.go` and
//! `gen_cooked.go` of Go 1.19, BSD-style licence), not copied:
//!
//! * The source is an additive lagged Fibonacci generator over 64-bit words,
//!   `s[k] = s[k-607] + s[k-273]` (mod 2^64), 607 words of state, read through a `tap`
//!   and a `feed` index that both step down by one per draw (tap first).
//! * `Seed` reduces the seed modulo 2^31 - 1 (a negative remainder plus 2^31 - 1, zero
//!   replaced by 89482311), runs the Park–Miller generator `x = 48271 x mod (2^31 - 1)`
//!   twenty times, then fills each word from three further values (shifted by 40, 20
//!   and 0 bits) XOR a fixed "cooked" word.
//! * The cooked words are the state of the same generator seeded with 1 (shifts of 20
//!   and 10 bits, no XOR) after 7.8e12 draws (`gen_cooked.go`). Go ships them as a
//!   table; here they are computed once, at the first use, by jumping ahead: the draws
//!   follow the linear recurrence whose characteristic polynomial is
//!   `x^607 - x^334 - 1` over the integers mod 2^64, so the state after `n` draws is
//!   the initial state combined with the coefficients of `x^n` modulo that polynomial
//!   (square and multiply: 43 squarings).
//! * The bounded draws are Go's: `Intn` and `Perm` use `Int31n` (a rejection test, then
//!   `%`), `Shuffle` uses Lemire's multiply-and-shift (`int31n`), `Float64` redraws an
//!   exact 1.0.
//!
//! Test vectors (`data/go-rand/vectors.txt`) were produced by Go 1.19.8 itself.

use std::sync::OnceLock;

/// Words of state.
const LEN: usize = 607;
/// The lag of the second term.
const TAP: usize = 273;
/// 2^31 - 1.
const INT32_MAX: i64 = (1 << 31) - 1;
/// Draws `gen_cooked.go` runs before printing its state.
const COOKED_DRAWS: u64 = 7_800_000_000_000;

/// Go's `rand.New(rand.NewSource(seed))` (and its global source after `rand.Seed`).
#[derive(Clone)]
pub struct GoRand {
    vec: [u64; LEN],
    tap: usize,
    feed: usize,
}

impl std::fmt::Debug for GoRand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoRand").field("tap", &self.tap).field("feed", &self.feed).finish_non_exhaustive()
    }
}

/// One step of the Park–Miller generator, with Schrage's method (no overflow in 32 bits).
fn park_miller(x: i32) -> i32 {
    const A: i32 = 48_271;
    const Q: i32 = 44_488; // (2^31 - 1) / A
    const R: i32 = 3_399; // (2^31 - 1) % A
    let (hi, lo) = (x / Q, x % Q);
    let y = A * lo - R * hi;
    if y < 0 { y + INT32_MAX as i32 } else { y }
}

/// The seed as Go reduces it: modulo 2^31 - 1, made positive, zero replaced.
fn reduce(seed: i64) -> i32 {
    let mut s = seed % INT32_MAX;
    if s < 0 {
        s += INT32_MAX;
    }
    if s == 0 {
        s = 89_482_311;
    }
    s as i32
}

/// The state words seeded from `seed`, three Park–Miller values per word shifted by
/// `shifts`, after twenty values thrown away.
fn fill(seed: i64, shifts: (u32, u32)) -> [u64; LEN] {
    let mut x = reduce(seed);
    for _ in 0..20 {
        x = park_miller(x);
    }
    let mut v = [0u64; LEN];
    for w in &mut v {
        x = park_miller(x);
        let mut u = (x as i64) << shifts.0;
        x = park_miller(x);
        u ^= (x as i64) << shifts.1;
        x = park_miller(x);
        u ^= x as i64;
        *w = u as u64;
    }
    v
}

/// `a * b` modulo `x^607 - x^334 - 1`, coefficients mod 2^64.
fn mul_mod(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut p = vec![0u64; 2 * LEN - 1];
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            p[i + j] = p[i + j].wrapping_add(x.wrapping_mul(y));
        }
    }
    reduce_poly(&mut p);
    p.truncate(LEN);
    p
}

/// Reduces `p` in place with `x^607 = x^334 + 1`, from the top down.
fn reduce_poly(p: &mut [u64]) {
    for d in (LEN..p.len()).rev() {
        let c = std::mem::take(&mut p[d]);
        if c != 0 {
            p[d - LEN + (LEN - TAP)] = p[d - LEN + (LEN - TAP)].wrapping_add(c);
            p[d - LEN] = p[d - LEN].wrapping_add(c);
        }
    }
}

/// Multiplies `pow` (a polynomial of degree under 607) by `x` modulo the characteristic
/// polynomial.
fn times_x(pow: &mut Vec<u64>) {
    pow.insert(0, 0);
    reduce_poly(pow);
    pow.truncate(LEN);
}

/// The state words after `n` draws (`n >= 606`) from the state `start` as [`GoRand::seed`]
/// leaves it (tap 0, feed 334), by jumping ahead rather than stepping.
///
/// Number the generator's values `s[k]`: draw `k` (from 1) writes `s[k]` into word
/// `(334 - k) mod 607`, so the word `p` holds at the start the `s[t]` with
/// `t = (334 - p) mod 607` taken in `-606..=0`, and after `n` draws the `s[k]` with `k` in
/// `n-606..=n` and the same residue. `s[k]` is the initial values weighted by the
/// coefficients of `x^(k+606)` modulo the characteristic polynomial.
fn jump(start: &[u64; LEN], n: u64) -> [u64; LEN] {
    let slot = |t: i64| ((334 - t).rem_euclid(LEN as i64)) as usize;
    // initial[i] = s[i - 606].
    let initial: Vec<u64> = (0..LEN as i64).map(|i| start[slot(i - 606)]).collect();
    // x^n by square and multiply.
    let mut pow = vec![0u64; LEN];
    pow[0] = 1;
    for bit in (0..64 - n.leading_zeros()).rev() {
        pow = mul_mod(&pow, &pow);
        if n >> bit & 1 == 1 {
            times_x(&mut pow);
        }
    }
    let mut out = [0u64; LEN];
    // pow is x^(k+606) for k = n-606, then each step multiplies by x.
    for j in 0..LEN as u64 {
        let k = (n - 606 + j) as i64;
        out[slot(k)] = pow.iter().zip(&initial).fold(0u64, |a, (&c, &v)| a.wrapping_add(c.wrapping_mul(v)));
        times_x(&mut pow);
    }
    out
}

/// The cooked words: `gen_cooked.go`'s state, computed by jumping ahead.
fn cooked() -> &'static [u64; LEN] {
    static COOKED: OnceLock<[u64; LEN]> = OnceLock::new();
    COOKED.get_or_init(|| jump(&fill(1, (20, 10)), COOKED_DRAWS))
}

impl GoRand {
    /// `rand.New(rand.NewSource(seed))`.
    pub fn new(seed: i64) -> Self {
        let mut r = GoRand { vec: [0; LEN], tap: 0, feed: LEN - TAP };
        r.seed(seed);
        r
    }

    /// `Seed(seed)`: the state as `NewSource(seed)` makes it.
    pub fn seed(&mut self, seed: i64) {
        self.tap = 0;
        self.feed = LEN - TAP;
        let words = fill(seed, (40, 20));
        for ((w, &u), &c) in self.vec.iter_mut().zip(&words).zip(cooked()) {
            *w = u ^ c;
        }
    }

    /// `Uint64()`: one step of the generator.
    pub fn uint64(&mut self) -> u64 {
        self.tap = if self.tap == 0 { LEN - 1 } else { self.tap - 1 };
        self.feed = if self.feed == 0 { LEN - 1 } else { self.feed - 1 };
        let x = self.vec[self.feed].wrapping_add(self.vec[self.tap]);
        self.vec[self.feed] = x;
        x
    }

    /// `Int63()`: the low 63 bits of a step.
    pub fn int63(&mut self) -> i64 {
        (self.uint64() & (u64::MAX >> 1)) as i64
    }

    /// `Uint32()`: the top 32 of the 63 bits.
    pub fn uint32(&mut self) -> u32 {
        (self.int63() >> 31) as u32
    }

    /// `Int31()`: the top 31 of the 63 bits.
    pub fn int31(&mut self) -> i32 {
        (self.int63() >> 32) as i32
    }

    /// `Int()` on a 64-bit machine: `Int63()`.
    pub fn int(&mut self) -> i64 {
        self.int63()
    }

    /// `Int63n(n)`: a power of two masks; otherwise draws above the largest multiple of
    /// `n` are redrawn, then `%`. Panics when `n <= 0`, as Go does.
    pub fn int63n(&mut self, n: i64) -> i64 {
        assert!(n > 0, "invalid argument to Int63n");
        if n & (n - 1) == 0 {
            return self.int63() & (n - 1);
        }
        let max = ((1u64 << 63) - 1 - (1u64 << 63) % n as u64) as i64;
        let mut v = self.int63();
        while v > max {
            v = self.int63();
        }
        v % n
    }

    /// `Int31n(n)`: as [`GoRand::int63n`] on 31 bits.
    pub fn int31n(&mut self, n: i32) -> i32 {
        assert!(n > 0, "invalid argument to Int31n");
        if n & (n - 1) == 0 {
            return self.int31() & (n - 1);
        }
        let max = ((1u32 << 31) - 1 - (1u32 << 31) % n as u32) as i32;
        let mut v = self.int31();
        while v > max {
            v = self.int31();
        }
        v % n
    }

    /// The unexported `int31n(n)`: Lemire's multiply and shift with its rejection of the
    /// low products below `2^32 mod n` (what `Shuffle` draws with).
    fn int31n_lemire(&mut self, n: i32) -> i32 {
        let n = n as u32;
        let mut prod = u64::from(self.uint32()) * u64::from(n);
        if (prod as u32) < n {
            let thresh = n.wrapping_neg() % n;
            while (prod as u32) < thresh {
                prod = u64::from(self.uint32()) * u64::from(n);
            }
        }
        (prod >> 32) as i32
    }

    /// `Intn(n)`: `Int31n` when `n` fits in 31 bits, else `Int63n`. Panics when `n == 0`.
    pub fn intn(&mut self, n: usize) -> usize {
        assert!(n > 0, "invalid argument to Intn");
        if n <= i32::MAX as usize { self.int31n(n as i32) as usize } else { self.int63n(n as i64) as usize }
    }

    /// `Float64()`: `Int63() / 2^63`, redrawn when it rounds to 1.
    pub fn float64(&mut self) -> f64 {
        loop {
            let f = self.int63() as f64 / (1u64 << 63) as f64;
            if f != 1.0 {
                return f;
            }
        }
    }

    /// `Float32()`: `Float64()` as `f32`, redrawn when it rounds to 1.
    pub fn float32(&mut self) -> f32 {
        loop {
            let f = self.float64() as f32;
            if f != 1.0 {
                return f;
            }
        }
    }

    /// `Perm(n)`: from `i = 0` up, `j = Intn(i + 1)`, `m[i] = m[j]`, `m[j] = i`.
    pub fn perm(&mut self, n: usize) -> Vec<usize> {
        let mut m = vec![0; n];
        for i in 0..n {
            let j = self.intn(i + 1);
            m[i] = m[j];
            m[j] = i;
        }
        m
    }

    /// `Shuffle(n, swap)`: from `i = n - 1` down to 1, `swap(i, j)` with `j` in `0..=i`
    /// (`Int63n` above 2^31 - 2, Lemire's `int31n` below).
    pub fn shuffle(&mut self, n: usize, mut swap: impl FnMut(usize, usize)) {
        if n == 0 {
            return;
        }
        let mut i = n - 1;
        while i > (1 << 31) - 2 {
            let j = self.int63n(i as i64 + 1) as usize;
            swap(i, j);
            i -= 1;
        }
        while i > 0 {
            let j = self.int31n_lemire(i as i32 + 1) as usize;
            swap(i, j);
            i -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cooked_words_are_gos() {
        // The first and last three of Go 1.19's `rngCooked` table (signed in Go).
        let c = cooked();
        let signed: Vec<i64> = [0, 1, 2, 604, 605, 606].iter().map(|&i| c[i] as i64).collect();
        assert_eq!(
            signed,
            [
                -4_181_792_142_133_755_926,
                -4_576_982_950_128_230_565,
                1_395_769_623_340_756_751,
                8_382_142_935_188_824_023,
                9_103_922_860_780_351_547,
                4_152_330_101_494_654_406
            ]
        );
    }

    #[test]
    fn the_jump_ahead_agrees_with_stepping() {
        // The same computation for a thousand draws, against the generator itself.
        let start = fill(1, (20, 10));
        let mut r = GoRand { vec: start, tap: 0, feed: LEN - TAP };
        for _ in 0..1000 {
            r.uint64();
        }
        assert_eq!(r.vec, jump(&start, 1000));
    }

    #[test]
    fn seeds_reduce_as_in_go() {
        assert_eq!(reduce(0), 89_482_311);
        assert_eq!(reduce(INT32_MAX), 89_482_311);
        assert_eq!(reduce(-1), (INT32_MAX - 1) as i32);
        assert_eq!(reduce(INT32_MAX + 1), 1);
    }
}
