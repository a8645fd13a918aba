//! Cost of the pipeline stages the throughput harness cannot separate:
//! longest-prefix match, the ECMP hash, and taking and returning a burst of
//! buffers. (`parse` and `qos` have their own benches.)
//!
//! `cargo bench -p railyard-benches --bench stages`

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use railyard_benches::{balanced_model, host_ip, model, roce_mix_remote};
use railyard_dataplane::balance::hash::ecmp_hash;
use railyard_dataplane::fib::{Fib, Lpm};
use railyard_dataplane::meta::Meta;
use railyard_dataplane::model::{NextHopModel, RouteModel, RouteSource};
use railyard_dataplane::packet::free_burst;
use railyard_dataplane::parse::parse;
use railyard_dataplane::{Burst, Pool, BURST_SIZE};

/// Destinations spread over the connected /24s of a four-port switch.
fn destinations() -> Vec<Ipv4Addr> {
    (0..256u32)
        .map(|i| Ipv4Addr::new(10, 0, (i % 4) as u8, (i / 4) as u8 + 2))
        .collect()
}

fn lpm(c: &mut Criterion) {
    let mut group = c.benchmark_group("fib");
    let dsts = destinations();
    group.throughput(Throughput::Elements(dsts.len() as u64));
    let (small, _) = Fib::build(&model(4));
    group.bench_function("lookup_v4/connected", |b| {
        b.iter(|| {
            for d in &dsts {
                black_box(small.lookup_v4(black_box(*d)));
            }
        })
    });
    // A thousand static /24s and /32s beside the connected routes.
    let mut m = model(4);
    for i in 0..1000u32 {
        m.routes.push(RouteModel {
            source: RouteSource::Static,
            prefix: IpAddr::V4(Ipv4Addr::from(0x0a80_0000 + (i << 8))),
            len: if i % 2 == 0 { 24 } else { 32 },
            next_hops: vec![NextHopModel::Gateway {
                addr: IpAddr::V4(host_ip(0)),
                port: None,
            }],
        });
    }
    let (large, _) = Fib::build(&m);
    group.bench_function("lookup_v4/1000_static", |b| {
        b.iter(|| {
            for d in &dsts {
                black_box(large.lookup_v4(black_box(*d)));
            }
        })
    });
    group.finish();

    // Removing a route rebuilds the IPv4 direct table from the prefix set;
    // this is the cost of one such change on the large FIB plus a default.
    // Building a fresh table is what a configuration change does.
    let mut prefixes: Vec<(u32, u8)> = large
        .routes()
        .iter()
        .filter_map(|r| match r.prefix {
            IpAddr::V4(a) => Some((u32::from(a), r.len)),
            IpAddr::V6(_) => None,
        })
        .collect();
    prefixes.push((0, 0));
    let fill = |prefixes: &[(u32, u8)]| {
        let mut table = Lpm::<u32>::new();
        for (i, (p, len)) in prefixes.iter().enumerate() {
            table.insert(*p, *len, i as u32);
        }
        table
    };
    let mut group = c.benchmark_group("fib_update");
    group.bench_function("insert_v4/1000_static", |b| {
        b.iter(|| black_box(fill(black_box(&prefixes))))
    });
    let mut table = fill(&prefixes);
    let probe = 0x0b00_0000;
    group.bench_function("remove_v4_rebuild/1000_static", |b| {
        b.iter(|| {
            table.insert(probe, 24, 7);
            black_box(table.remove(black_box(probe), 24));
        })
    });
    group.finish();
}

fn hash(c: &mut Criterion) {
    let frames = roce_mix_remote(0, 256);
    let metas: Vec<Meta> = frames
        .iter()
        .map(|f| {
            let mut m = Meta::default();
            parse(f, &mut m).expect("the mix parses");
            m
        })
        .collect();
    let lb = balanced_model(4, None).load_balance.hash;
    let mut group = c.benchmark_group("balance");
    group.throughput(Throughput::Elements(frames.len() as u64));
    group.bench_function("ecmp_hash/roce", |b| {
        b.iter(|| {
            for (f, m) in frames.iter().zip(&metas) {
                black_box(ecmp_hash(f, m, &lb));
            }
        })
    });
    group.finish();
}

fn buffers(c: &mut Criterion) {
    let pool = Pool::new(16 * 1024);
    let mut group = c.benchmark_group("pool");
    group.throughput(Throughput::Elements(BURST_SIZE as u64));
    group.bench_function("alloc_burst+free_burst/32", |b| {
        let mut burst = Burst::new();
        b.iter(|| {
            pool.alloc_burst(&mut burst, BURST_SIZE);
            free_burst(black_box(&mut burst));
        })
    });
    group.bench_function("alloc+drop/32", |b| {
        let mut burst = Burst::new();
        b.iter(|| {
            for _ in 0..BURST_SIZE {
                if let Some(p) = pool.alloc() {
                    burst.push(p);
                }
            }
            black_box(&mut burst).clear();
        })
    });
    group.finish();
}

criterion_group!(benches, lpm, hash, buffers);
criterion_main!(benches);
