//! `kube`'s spec text: every option value read and written back, byte for byte.

use policies::kube::{GANG, K8S, MEMORY, ORDER, QUEUE, SCORE, TOPOLOGY};
use policies::placement::PLACEMENTS;

#[test]
fn default_spec_is_pinned() {
    assert_eq!(
        policies::build("kube").unwrap().spec(),
        "kube[score=least-allocated,memory=oblivious,order=priority,queue=skip,gang=atomic,topology=none,k8s=current,\
         nodes_to_score=adaptive,preemption=on]"
    );
    assert_eq!(
        policies::build("kube[gang=kueue,quota=50,timeout=30]").unwrap().spec(),
        "kube[score=least-allocated,memory=oblivious,order=priority,queue=skip,gang=kueue,topology=none,k8s=current,\
         nodes_to_score=adaptive,preemption=on,timeout=30,quota=50]"
    );
}

#[test]
fn every_combination_of_values_is_written_back() {
    assert_eq!(SCORE.values, PLACEMENTS);
    // `nodes_to_score` takes adaptive, all or a percentage.
    let nodes_to_score = ["adaptive", "all", "50"];
    let mut n = 0;
    for s in SCORE.values {
        for m in MEMORY.values {
            for o in ORDER.values {
                for q in QUEUE.values {
                    for g in GANG.values {
                        for t in TOPOLOGY.values {
                            for k in K8S.values {
                                for p in nodes_to_score {
                                    let full = format!(
                                        "kube[score={s},memory={m},order={o},queue={q},gang={g},topology={t},k8s={k},\
                                         nodes_to_score={p}]"
                                    );
                                    // order=sjf-aging writes its aging (default 1) after the numbers;
                                    // preemption is written where it applies (queue=skip,
                                    // order=priority), on by default.
                                    let aging = if *o == "sjf-aging" { ",aging=1" } else { "" };
                                    let pre = if *q == "skip" && *o == "priority" { ",preemption=on" } else { "" };
                                    let back = format!("{}{pre}{aging}]", &full[..full.len() - 1]);
                                    assert_eq!(policies::build(&full).unwrap().spec(), back);
                                    // Keys in another order, defaults left out: the same text.
                                    let chosen = [
                                        ("nodes_to_score", "adaptive", p),
                                        (K8S.key, K8S.values[0], *k),
                                        (TOPOLOGY.key, TOPOLOGY.values[0], *t),
                                        (GANG.key, GANG.values[0], *g),
                                        (QUEUE.key, QUEUE.values[0], *q),
                                        (ORDER.key, ORDER.values[0], *o),
                                        (MEMORY.key, MEMORY.values[0], *m),
                                        (SCORE.key, SCORE.values[0], *s),
                                    ];
                                    let mut given: Vec<String> = chosen
                                        .iter()
                                        .filter(|(_, default, v)| default != v)
                                        .map(|(key, _, v)| format!("{key}={v}"))
                                        .collect();
                                    given.push("timeout=7".into());
                                    let spec = format!("kube[{}]", given.join(","));
                                    let with_numbers = format!("{}{pre},timeout=7{aging}]", &full[..full.len() - 1]);
                                    assert_eq!(policies::build(&spec).unwrap().spec(), with_numbers);
                                    // What it writes builds the same policy again.
                                    assert_eq!(policies::build(&back).unwrap().spec(), back);
                                    n += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert_eq!(n, PLACEMENTS.len() * 2 * 3 * 4 * 4 * 2 * 3 * 3);
}

#[test]
fn composed_labels_name_queue_gang_and_topology() {
    for q in QUEUE.values {
        // `skip` is kube's own; the others are the processor policies' names.
        let policy = if *q == "skip" { "kube".to_string() } else { q.to_string() };
        for g in GANG.values {
            for t in TOPOLOGY.values {
                let p = policies::compose(&policy, Some("bestfit,nodeaffinity=2"), Some(g), Some(t), 0).unwrap();
                assert_eq!(p.spec(), format!("{q}+placement[bestfit,nodeaffinity=2]+gang[{g}]+topology[{t}]"));
            }
        }
    }
    let p = policies::compose("kube[queue=easy,quota=80,timeout=20]", Some("fgd"), None, None, 0).unwrap();
    assert_eq!(p.spec(), "easy+placement[fgd]+gang[atomic]+topology[none]+[timeout=20,quota=80]");
    let p = policies::compose("conservative", None, Some("permit-wait"), None, 0).unwrap();
    assert_eq!(p.spec(), "conservative+placement[least-allocated]+gang[permit-wait]+topology[none]");
}

#[test]
fn gang_options_are_written_back_as_given() {
    let cases = [
        (
            "kube[gang=permit-wait,reject=0,backoff=30]",
            "gang=permit-wait,topology=none,k8s=current,nodes_to_score=adaptive,preemption=on,reject=0,backoff=30]",
        ),
        (
            "kube[requeue=creation,gang=kueue,kueue_api=v1beta1,block_admission=false,backoff_limit=3,backoff=10,quota=80]",
            "gang=kueue,topology=none,k8s=current,nodes_to_score=adaptive,preemption=on,quota=80,backoff=10,backoff_limit=3,kueue_api=v1beta1,block_admission=false,requeue=creation]",
        ),
        // `per-api` is the default and is not written.
        (
            "kube[gang=kueue,block_admission=per-api,timeout=0]",
            "gang=kueue,topology=none,k8s=current,nodes_to_score=adaptive,preemption=on,timeout=0]",
        ),
    ];
    let head = "kube[score=least-allocated,memory=oblivious,order=priority,queue=skip,";
    for (given, tail) in cases {
        let spec = policies::build(given).unwrap().spec();
        assert_eq!(spec, format!("{head}{tail}"), "{given}");
        assert_eq!(policies::build(&spec).unwrap().spec(), spec);
    }
    let p = policies::compose("easy", None, Some("kueue"), None, 0).unwrap();
    assert_eq!(p.spec(), "easy+placement[least-allocated]+gang[kueue]+topology[none]");
    let p = policies::compose("kube[queue=fcfs,kueue_api=v1beta1,gang=kueue]", Some("bestfit"), None, None, 0).unwrap();
    assert_eq!(p.spec(), "fcfs+placement[bestfit]+gang[kueue]+topology[none]+[kueue_api=v1beta1]");
}

#[test]
fn gang_options_belong_to_their_gang_mode() {
    for bad in [
        "kube[reject=10]",
        "kube[gang=kueue,reject=10]",
        "kube[gang=none,backoff=5]",
        "kube[gang=permit-wait,kueue_api=v1beta1]",
        "kube[gang=permit-wait,backoff_limit=1]",
        "kube[block_admission=true]",
        "kube[gang=atomic,requeue=creation]",
        "kube[gang=permit-wait,reject=101]",
        "kube[gang=kueue,kueue_api=v1]",
    ] {
        assert!(policies::build(bad).is_err(), "{bad}");
    }
}
