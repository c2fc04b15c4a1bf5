use policies::placement::frag::{FragMeter, PodType, TypicalPods};
fn main() {
    let text = std::fs::read_to_string("../shared/traces/openb/openb_pod_list_default.csv").unwrap();
    let mut types = Vec::new();
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let gpus: u32 = f[3].parse().unwrap();
        types.push(PodType { cpu_milli: f[1].parse().unwrap(), gpu_milli: if gpus == 0 { 0 } else { f[4].parse().unwrap() }, gpus, models: f[5].to_string() });
    }
    let tp = TypicalPods::from_pods(&types, 95.0);
    for (t, p) in &tp.types { println!("{:?} {:.4}", t, p); }
    let mut m = FragMeter::new(tp);
    println!("empty G2: {}", m.node_frag("G2", 96000, &[1000; 8]));
    println!("one 500: {}", m.node_frag("G2", 90000, &[500, 1000, 1000, 1000, 1000, 1000, 1000, 1000]));
    use sim_core::ledger::Ledger;
    use sim_core::*;
    let spec = NodeSpec { cores: 96, memory_mib: 393216, gpus: vec![GpuSpec { model: "G2".into(), memory_mib: 20000 }; 8], labels: Default::default(), topology: Default::default() };
    let c = Cluster { pools: vec![NodePool { name: "a".into(), count: 2, spec, sharing: GpuSharing::Shared }] };
    let mut l = Ledger::new(&c);
    let first = TaskShape { cores: 6, cpu_milli: 6000, gpus: 1, gpu_milli: 500, ..Default::default() };
    l.take(&first, &[], &TaskBinding { node: NodeId(0), gpus: vec![0] }, true).unwrap();
    let pod = TaskShape { cores: 8, cpu_milli: 8000, gpus: 1, gpu_milli: 470, ..Default::default() };
    let req = policies::placement::PodReq { task: pod, models: &[], type_id: None };
    use policies::placement::scores::ScorePlugin;
    for n in 0..2 {
        let s = policies::placement::scores::Fgd.score(&l.nodes()[n], &req, &mut m);
        println!("node {n}: {:?}", s);
    }
    let whole = TaskShape { cores: 11, cpu_milli: 11300, gpus: 1, gpu_milli: 1000, ..Default::default() };
    let req = policies::placement::PodReq { task: whole, models: &[], type_id: None };
    for n in 0..2 {
        let s = policies::placement::scores::Fgd.score(&l.nodes()[n], &req, &mut m);
        println!("whole node {n}: {:?}", s);
    }
}
#[allow(dead_code)]
fn unused() {}
