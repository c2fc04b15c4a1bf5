//! Golden hashes of jobs.csv for the embedded slice (fixed trace, seed 0). A change here
//! means results changed: check why before updating the hash.

use crate::{read, run_into, sha256};

const GOLDEN: &[(&str, &str)] = &[
    ("fcfs", "9427d0a05eb84efd4cf936d4c466bbb15e586010f26fea08fe4ae01c80ea2cf4"),
    ("easy", "ea7461269c722078b5595e7b8700b29bc9dbf238eb9a8ad37d4dc21f72f078c1"),
    ("conservative", "47324c42bc3a6d0dd3b8762e0e9661657b63a7c3c38cd7157adfc1dce29e31ae"),
];

#[test]
fn embedded_slice_results_are_unchanged() {
    let mut got = Vec::new();
    for (policy, want) in GOLDEN {
        let (out, dir) = run_into(&["--policy", policy, "--seed", "0"]);
        assert!(out.status.success());
        let h = sha256(read(&dir, "jobs.csv").as_bytes());
        got.push(format!("(\"{policy}\", \"{h}\")"));
        if h != *want {
            panic!("jobs.csv for {policy} changed: {h} (was {want}); all now: {}", got.join(", "));
        }
    }
}
