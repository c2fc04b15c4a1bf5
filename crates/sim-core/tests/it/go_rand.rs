//! `sim_core::rng::go` against outputs of Go 1.19.8's `math/rand`
//! (`data/go-rand/vectors.txt`, printed by `data/go-rand/vectors.go`).

use sim_core::rng::go::GoRand;

fn vectors() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/go-rand/vectors.txt");
    std::fs::read_to_string(path).expect("data/go-rand/vectors.txt")
}

/// The numbers right after `key` on `line` (up to the next word that is not one),
/// brackets dropped.
fn numbers<T: std::str::FromStr>(line: &str, key: &str) -> Vec<T> {
    let at = line.find(key).unwrap_or_else(|| panic!("{key} in {line}")) + key.len();
    line[at..]
        .split(['|', ';'])
        .next()
        .unwrap()
        .split(|c: char| c.is_whitespace() || c == '[' || c == ']')
        .filter(|w| !w.is_empty())
        .map_while(|w| w.parse().ok())
        .collect()
}

fn line_of<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("a line starting {start}"))
}

#[test]
fn raw_draws_match_go_for_every_seed() {
    let text = vectors();
    for seed in [0i64, 1, 42, 233, -1, 2_147_483_647, 2_147_483_648, 1 << 40] {
        let line = line_of(&text, &format!("seed={seed} Uint64x3="));
        let mut r = GoRand::new(seed);
        let got: Vec<u64> = (0..3).map(|_| r.uint64()).collect();
        assert_eq!(got, numbers::<u64>(line, "Uint64x3="), "seed {seed}");
        let mut r = GoRand::new(seed);
        let got: Vec<i64> = (0..3).map(|_| r.int63()).collect();
        assert_eq!(got, numbers::<i64>(line, "Int63x3="), "seed {seed}");
    }
}

#[test]
fn bounded_draws_permutations_and_shuffles_match_go() {
    let text = vectors();
    for seed in [42i64, 233] {
        let mut r = GoRand::new(seed);
        let got: Vec<usize> = (0..10).map(|_| r.intn(100)).collect();
        assert_eq!(got, numbers::<usize>(line_of(&text, &format!("seed={seed} Intn(100)x10=")), "Intn(100)x10="));
        let mut r = GoRand::new(seed);
        let got: Vec<f64> = (0..3).map(|_| r.float64()).collect();
        assert_eq!(got, numbers::<f64>(line_of(&text, &format!("seed={seed} Float64x3=")), "Float64x3="));
        let mut r = GoRand::new(seed);
        assert_eq!(r.perm(10), numbers::<usize>(line_of(&text, &format!("seed={seed} Perm(10)=")), "Perm(10)="));
        let mut r = GoRand::new(seed);
        let mut a: Vec<usize> = (0..10).collect();
        r.shuffle(a.len(), |i, j| a.swap(i, j));
        let want = numbers::<usize>(line_of(&text, &format!("seed={seed} Shuffle(")), "0..9)=");
        assert_eq!(a, want, "seed {seed}");
        let line = line_of(&text, &format!("seed={seed} Int()="));
        let mut r = GoRand::new(seed);
        assert_eq!(r.int(), numbers::<i64>(line, "Int()=")[0]);
        let got: Vec<usize> = (0..3).map(|_| r.intn(8152)).collect();
        assert_eq!(got, numbers::<usize>(line, "Intn(8152)x3="));
    }
}

#[test]
fn the_global_source_after_seed_draws_as_the_fgd_simulator_opens() {
    // rand.Seed(42); rand.Int(); rand.Shuffle(20, ...); rand.Intn(1000); rand.Perm(8)
    let text = vectors();
    let line = line_of(&text, "global: Seed(42)");
    let mut r = GoRand::new(42);
    assert_eq!(r.int(), numbers::<i64>(line, "Int()=")[0]);
    let mut b: Vec<usize> = (0..20).collect();
    r.shuffle(b.len(), |i, j| b.swap(i, j));
    assert_eq!(b, numbers::<usize>(line, "Shuffle(20)="));
    assert_eq!(r.intn(1000), numbers::<usize>(line, "Intn(1000)=")[0]);
    assert_eq!(r.perm(8), numbers::<usize>(line, "Perm(8)="));
    let mut r = GoRand::new(1);
    let got: Vec<usize> = (0..9).map(|_| r.intn(100)).collect();
    assert_eq!(got, numbers::<usize>(line_of(&text, "global: Seed(1)"), "Intn(100)x9="));
}

#[test]
fn a_long_shuffle_matches_go() {
    let text = vectors();
    let line = line_of(&text, "seed=7 Shuffle(1000)");
    let mut r = GoRand::new(7);
    let mut c: Vec<usize> = (0..1000).collect();
    r.shuffle(c.len(), |i, j| c.swap(i, j));
    assert_eq!(c[..10], numbers::<usize>(line, "first10=")[..]);
    assert_eq!(c[990..], numbers::<usize>(line, "last10=")[..]);
    assert_eq!(r.int63(), numbers::<i64>(line, "Int63=")[0]);
}

#[test]
fn gos_documented_examples() {
    // src/math/rand/example_test.go (Go 1.19): Seed(86), Intn(100) three times; a
    // source seeded 99, Float32 three times; regress_test.go's golden Perm(0), Perm(1),
    // Perm(5) after Seed(0).
    let mut r = GoRand::new(86);
    assert_eq!([r.intn(100), r.intn(100), r.intn(100)], [42, 76, 30]);
    let mut r = GoRand::new(99);
    assert_eq!([r.float32(), r.float32(), r.float32()], [0.2635776, 0.6358173, 0.6718283]);
    let mut r = GoRand::new(0);
    assert_eq!((r.perm(0), r.perm(1), r.perm(5)), (vec![], vec![0], vec![0, 4, 1, 3, 2]));
}
