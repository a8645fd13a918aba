//! Running a fabric in virtual time: poll every switch, move every host
//! NIC's frames on and off its cable, jump the clock to the next event
//! (a frame's arrival, a departure, a NIC's pacing slot or timer), stop
//! when the job is done and the fabric has drained, or at the time limit.

use std::collections::HashMap;
use std::time::Instant;

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::meta::Meta;
use railyard_dataplane::packet::{free_burst, MAX_FRAME};
use railyard_dataplane::parse::parse;
use railyard_dataplane::port::Port;
use railyard_dataplane::wire::bth;
use railyard_dataplane::Burst;
use railyard_roce::report::summarise;
use railyard_roce::wire::{is_write, Opcode};

use super::build::Fabric;
use super::report::{self, Delivery, SimReport};
use super::SimOptions;

/// Steps taken at one instant without progress before the loop nudges the
/// clock on: a guard against a model that keeps asking for `now`.
const SAME_INSTANT_LIMIT: u32 = 10_000;
/// Virtual time after the job ends in which the fabric may drain (the last
/// ACKs and CNPs, pause expiries).
const DRAIN_NS: Nanos = 1_000_000;

/// Reads a RoCEv2 data frame's source address and the bytes after its
/// BTH (payload with extension headers and ICRC), for the per-flow delivery
/// record, with the switch's own parser; `None` for anything else.
fn roce_data(frame: &[u8], meta: &mut Meta) -> Option<([u8; 4], u32)> {
    parse(frame, meta).ok()?;
    if !is_write(Opcode::from(meta.roce?.opcode)) {
        return None;
    }
    let l3 = usize::from(meta.l3_offset);
    let src: [u8; 4] = frame.get(l3 + 12..l3 + 16)?.try_into().ok()?;
    let after_bth = usize::from(meta.payload_offset) + bth::HEADER_LEN;
    Some((src, frame.len().checked_sub(after_bth)? as u32))
}

/// Runs the fabric; `progress` hears (virtual time, frames moved) about
/// once a second of wall time.
pub(super) fn run(
    mut f: Fabric,
    opts: &SimOptions,
    progress: &mut dyn FnMut(Nanos, u64),
) -> SimReport {
    let wall = Instant::now();
    let mut last_report = Instant::now();
    let mut now: Nanos = 0;
    let mut buf = vec![0u8; MAX_FRAME.max(9216)];
    let mut burst = Burst::new();
    let mut delivery = Delivery::new(opts.bin_ns);
    let mut meta = Meta::default();
    let ip_rank: HashMap<[u8; 4], usize> = f
        .plan
        .ranks()
        .iter()
        .enumerate()
        .map(|(i, r)| (r.ip.octets(), i))
        .collect();
    for h in &mut f.hosts {
        h.start(0);
    }
    let mut moved: u64 = 0;
    let mut same_instant = 0u32;
    let mut done_at: Option<Nanos> = None;
    let mut timed_out = false;
    loop {
        let mut work = 0usize;
        for s in &mut f.switches {
            work += s.poll(now);
        }
        for (h, ports) in f.hosts.iter_mut().zip(&mut f.nic_ports) {
            for (n, p) in ports.iter_mut().enumerate() {
                while p.end.rx_burst(&f.pool, &mut burst, now) > 0 {
                    for pkt in burst.drain(..) {
                        let data = pkt.data();
                        if let Some((src, bytes)) = roce_data(data, &mut meta) {
                            if let Some(&s) = ip_rank.get(&src) {
                                delivery.record(s, p.rank, now, bytes);
                            }
                        }
                        h.receive(n, now, data);
                        work += 1;
                    }
                }
                while let Some(len) = h.transmit(n, now, &mut buf) {
                    let Some(pkt) = f.pool.alloc_from(&buf[..len]) else {
                        // The pool is dry: the frame is lost like a NIC
                        // ring overflow; go-back-N will resend it.
                        delivery.pool_dry += 1;
                        break;
                    };
                    burst.push(pkt);
                    p.end.tx_burst(&mut burst, now);
                    // A full cable keeps the frame for a retry.
                    free_burst(&mut burst);
                    work += 1;
                }
            }
        }
        moved += work as u64;
        if last_report.elapsed().as_secs() >= 1 {
            last_report = Instant::now();
            progress(now, moved);
        }
        if done_at.is_none() && f.hosts.iter().all(|h| h.done()) {
            done_at = Some(now);
        }
        if work > 0 {
            same_instant += 1;
            if same_instant < SAME_INSTANT_LIMIT {
                continue;
            }
        }
        same_instant = 0;
        let next = f
            .switches
            .iter()
            .flat_map(|s| [s.next_rx_time(), s.next_departure()])
            .chain(f.hosts.iter().map(|h| h.next_wakeup()))
            .chain(f.nic_ports.iter().flatten().map(|p| p.end.next_rx_time()))
            .flatten()
            .min();
        let quiet = f.switches.iter().all(|s| s.idle());
        if let Some(d) = done_at {
            if (quiet && next.is_none()) || now >= d + DRAIN_NS {
                break;
            }
        }
        if now >= opts.time_limit_ns {
            timed_out = done_at.is_none();
            break;
        }
        now = match next {
            Some(t) if t > now => t.min(opts.time_limit_ns),
            // Due now but nothing moved, or nothing due at all with frames
            // queued (a pause holding them): step on.
            _ => now + 1_000,
        };
    }
    for s in &mut f.switches {
        // In-memory backends have nothing to flush.
        let _ = s.finish();
    }
    let outcomes: Vec<_> = f.hosts.iter().map(|h| h.outcome()).collect();
    let result = summarise(&f.plan, &outcomes);
    report::build(
        &f,
        result,
        &outcomes,
        delivery,
        report::RunInfo {
            end_ns: now,
            timed_out,
            wall_ms: wall.elapsed().as_millis() as u64,
            ring_full: f.links.iter().map(|l| l.ring_full()).sum(),
        },
    )
}
