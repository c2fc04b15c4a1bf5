//! `sim gen`'s work without the disk: 1,000,000 jobs drawn from
//! `examples/models/hpc.toml` and from `examples/models/gpu.toml`, written as SWF and as
//! native JSON Lines into a byte counter. Streaming: memory stays constant whatever the
//! job count (`/usr/bin/time -v sim gen --jobs 10000000 ...` measures the peak RSS; see
//! docs/benchmarks.md).
//!
//! `cargo bench -p benches --bench generate`

use criterion::{Criterion, criterion_group, criterion_main};
use std::io::Write;
use std::time::Duration;
use traces::generator::{Generator, Model};

/// Counts the bytes written to it.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn model(name: &str) -> Model {
    let path = format!("{}/../examples/models/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the example model");
    Model::from_toml(&text, &path).expect("a valid model")
}

fn bench(c: &mut Criterion) {
    const JOBS: usize = 1_000_000;
    let mut g = c.benchmark_group("gen_1m_jobs");
    g.sample_size(10).measurement_time(Duration::from_secs(20)).warm_up_time(Duration::from_secs(1));
    for name in ["hpc.toml", "gpu.toml"] {
        let m = model(name);
        g.bench_function(format!("{name}/swf"), |b| {
            b.iter(|| {
                let mut out = std::io::BufWriter::new(Count(0));
                for (i, j) in Generator::new(&m, 1).take(JOBS).enumerate() {
                    traces::swf::write_job(&mut out, i as u64 + 1, &j).expect("counted");
                }
                out.into_inner().map(|c| c.0).unwrap_or(0)
            })
        });
        g.bench_function(format!("{name}/native"), |b| {
            b.iter(|| {
                let mut out = std::io::BufWriter::new(Count(0));
                for j in Generator::new(&m, 1).take(JOBS) {
                    traces::native::write_job(&mut out, &j).expect("counted");
                }
                out.into_inner().map(|c| c.0).unwrap_or(0)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
