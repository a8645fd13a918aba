//! How long a large configuration takes to load: parse and validate, compile
//! into the switch model, and build the FIB, for a million static routes and
//! for 65 025 interfaces (every `Ethernet1/1` to `Ethernet255/255`), the
//! sizes at which any step that compares every item with every other one
//! shows at once.
//!
//!   config_load [routes N] [interfaces N] [both ROUTES INTERFACES]
//!
//! With no arguments, runs all three scenarios at full size. Each prints one
//! line per phase in milliseconds; nothing is asserted about the times.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use railyard_config::ParseOptions;
use railyard_control::compile::compile;
use railyard_dataplane::fib::Fib;

/// Every Ethernet port name there is: modules and ports 1–255.
const MAX_INTERFACES: usize = 255 * 255;

/// `interface` sections for `n` routed ports, each with its own /24.
fn interfaces(out: &mut String, n: usize) {
    for i in 0..n.min(MAX_INTERFACES) {
        let (m, p) = (i / 255 + 1, i % 255 + 1);
        let _ = write!(
            out,
            "interface Ethernet{m}/{p}\n  description port {i}\n  no switchport\n  mtu 9216\n  \
             ip address 10.{m}.{p}.1/24\n  no shutdown\n"
        );
    }
}

/// `n` static routes to distinct /24s from 20.0.0.0 up, through next hops
/// on the first `ports` interfaces; every eighth prefix is a two-way ECMP
/// group (two lines for one prefix).
fn routes(out: &mut String, n: usize, ports: usize) {
    let hop = |k: usize| {
        let k = k % ports.clamp(1, MAX_INTERFACES);
        format!("10.{}.{}.2", k / 255 + 1, k % 255 + 1)
    };
    let mut lines = 0;
    let mut i = 0usize;
    while lines < n {
        let (a, b, c) = (20 + (i >> 16), (i >> 8) & 255, i & 255);
        let _ = writeln!(out, "ip route {a}.{b}.{c}.0/24 {}", hop(i));
        lines += 1;
        if i.is_multiple_of(8) && lines < n {
            let _ = writeln!(out, "ip route {a}.{b}.{c}.0/24 {}", hop(i + 1));
            lines += 1;
        }
        i += 1;
    }
}

fn ms(d: Duration) -> String {
    format!("{:>9.1} ms", d.as_secs_f64() * 1e3)
}

/// Loads `text` the way `railyard check` and `railyard run` do and prints
/// each phase's time.
fn load(label: &str, text: &str) {
    let megabytes = text.len() as f64 / 1e6;
    println!("{label} ({megabytes:.1} MB of configuration)");
    let t = Instant::now();
    let report = railyard_config::check_str(text, "bench.conf", &ParseOptions::default());
    let parse = t.elapsed();
    let parsed = match report.into_result() {
        Ok(p) => p,
        Err(errors) => {
            for e in errors.iter().take(5) {
                eprintln!("{e}");
            }
            std::process::exit(1);
        }
    };
    let t = Instant::now();
    let compiled = match compile(&parsed.config) {
        Ok(c) => c,
        Err(errors) => {
            for e in errors.iter().take(5) {
                eprintln!("{e}");
            }
            std::process::exit(1);
        }
    };
    let comp = t.elapsed();
    let t = Instant::now();
    let (fib, fib_warnings) = Fib::build(&compiled.model);
    let build = t.elapsed();
    let (installed, warnings) = (fib.routes().len(), parsed.warnings.len());
    let t = Instant::now();
    drop((fib, parsed, compiled));
    let free = t.elapsed();
    println!("  parse+validate {}  ({warnings} warnings)", ms(parse));
    println!("  compile        {}", ms(comp));
    println!(
        "  fib build      {}  ({installed} routes installed, {} unresolved)",
        ms(build),
        fib_warnings.len()
    );
    println!("  free           {}", ms(free));
    println!("  total          {}", ms(parse + comp + build));
}

fn scenario(name: &str, route_count: usize, interface_count: usize) {
    let mut text = String::from("hostname bench\n");
    interfaces(&mut text, interface_count);
    routes(&mut text, route_count, interface_count);
    load(
        &format!("{name}: {route_count} route lines, {interface_count} interfaces"),
        &text,
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let num = |i: usize, default: usize| {
        args.get(i)
            .and_then(|s| s.replace('_', "").parse().ok())
            .unwrap_or(default)
    };
    match args.first().map(String::as_str) {
        Some("routes") => scenario("routes", num(1, 1_000_000), 2),
        Some("interfaces") => scenario("interfaces", 0, num(1, MAX_INTERFACES)),
        Some("both") => scenario("both", num(1, 1_000_000), num(2, MAX_INTERFACES)),
        Some(other) => {
            eprintln!("unknown scenario `{other}`; usage: config_load [routes N] [interfaces N] [both ROUTES INTERFACES]");
            std::process::exit(2);
        }
        None => {
            scenario("routes", 1_000_000, 2);
            scenario("interfaces", 0, MAX_INTERFACES);
            scenario("both", 1_000_000, MAX_INTERFACES);
        }
    }
}
