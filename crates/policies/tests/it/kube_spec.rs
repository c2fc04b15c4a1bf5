//! `kube`'s spec text: every option value read and written back, byte for byte.

use policies::kube::{GANG, MEMORY, ORDER, QUEUE, SCORE, TOPOLOGY};
use policies::placement::PLACEMENTS;

#[test]
fn default_spec_is_pinned() {
    assert_eq!(
        policies::build("kube").unwrap().spec(),
        "kube[score=least-allocated,memory=oblivious,order=priority,queue=skip,gang=atomic,topology=none]"
    );
    assert_eq!(
        policies::build("kube[gang=kueue,quota=50,timeout=30]").unwrap().spec(),
        "kube[score=least-allocated,memory=oblivious,order=priority,queue=skip,gang=kueue,topology=none,timeout=30,quota=50]"
    );
}

#[test]
fn every_combination_of_values_is_written_back() {
    assert_eq!(SCORE.values, PLACEMENTS);
    let mut n = 0;
    for s in SCORE.values {
        for m in MEMORY.values {
            for o in ORDER.values {
                for q in QUEUE.values {
                    for g in GANG.values {
                        for t in TOPOLOGY.values {
                            let full = format!("kube[score={s},memory={m},order={o},queue={q},gang={g},topology={t}]");
                            // order=sjf-aging writes its aging (default 1) after the numbers.
                            let aging = if *o == "sjf-aging" { ",aging=1" } else { "" };
                            let back = format!("{}{aging}]", &full[..full.len() - 1]);
                            assert_eq!(policies::build(&full).unwrap().spec(), back);
                            // Keys in another order, defaults left out: the same text.
                            let chosen = [(TOPOLOGY, t), (GANG, g), (QUEUE, q), (ORDER, o), (MEMORY, m), (SCORE, s)];
                            let mut given: Vec<String> = chosen
                                .iter()
                                .filter(|(info, v)| info.values[0] != **v)
                                .map(|(info, v)| format!("{}={v}", info.key))
                                .collect();
                            given.push("timeout=7".into());
                            let spec = format!("kube[{}]", given.join(","));
                            let with_numbers = format!("{},timeout=7{aging}]", &full[..full.len() - 1]);
                            assert_eq!(policies::build(&spec).unwrap().spec(), with_numbers);
                            n += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(n, PLACEMENTS.len() * 2 * 3 * 4 * 4 * 2);
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
