//! One pass of a policy on a hand-built view (`sim_core::fixture::ViewFixture`), no run.

use crate::job;
use sim_core::fixture::ViewFixture;
use sim_core::policy::{Decision, PassInfo, StartReason};
use sim_core::{Cluster, JobId, SimTime};

/// At 10 on 4 processors, A (3, requested until 100) runs and 1 processor is free; B (2)
/// heads the queue and is reserved at 100 (the shadow time); C (1, requested 50) ends by
/// then and takes the free processor now; D (1) finds none left.
#[test]
fn easy_backfills_around_the_heads_reservation() {
    let jobs = [job("A", 0, 3, 100, 100), job("B", 5, 2, 10, 10), job("C", 6, 1, 10, 50), job("D", 7, 1, 10, 200)];
    let cluster = Cluster::processor_pool(4);
    let f = ViewFixture::new(&cluster, &jobs).at(SimTime::from_secs(10)).running(0, SimTime::ZERO).waiting(&[1, 2, 3]);
    let mut p = policies::build("easy").unwrap();
    let mut out = Vec::new();
    p.schedule(&f.view(), &PassInfo::default(), &mut out);
    let started: Vec<(JobId, StartReason)> = out
        .into_iter()
        .filter_map(|d| match d {
            Decision::Start { job, reason, .. } => Some((job, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(started, [(JobId(2), StartReason::BackfillEndsBeforeShadow { shadow: SimTime::from_secs(100) })]);
}
