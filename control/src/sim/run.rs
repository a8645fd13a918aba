//! Running a fabric in virtual time: the scheduler hands out the next node
//! with work due (a frame's arrival, a departure, a NIC's pacing slot or
//! timer); a switch is polled, a host's NICs take their frames off their
//! cables and put what they may send on them. The run stops when the job
//! is done and the fabric has drained, or at the time limit.

use std::collections::HashMap;
use std::time::Instant;

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::meta::Meta;
use railyard_dataplane::model::PortId;
use railyard_dataplane::packet::{free_burst, MAX_FRAME};
use railyard_dataplane::parse::parse;
use railyard_dataplane::port::Port;
use railyard_dataplane::wire::bth;
use railyard_dataplane::Burst;
use railyard_roce::report::summarise_workloads;
use railyard_roce::wire::{is_write, Opcode};

use super::build::Fabric;
use super::engine::NodeId;
use super::occupancy::DepthTime;
use super::report::{self, Delivery, QueueSeries, SimReport};
use super::scenario::LinkFailure;
use super::{Progress, SimOptions};

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

/// The queues `--sample-queue` names, resolved: (switch, port, queue).
fn resolve_samples(f: &Fabric, names: &[String]) -> Result<Vec<(usize, PortId, usize)>, String> {
    names
        .iter()
        .map(|name| {
            let bad = || {
                format!(
                    "--sample-queue {name:?}: expected SWITCH:INTERFACE:QUEUE, like leaf1:Ethernet1/33:3"
                )
            };
            let mut parts = name.rsplitn(3, ':');
            let (Some(q), Some(port), Some(sw)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(bad());
            };
            let q: usize = q.parse().ok().filter(|q| *q < 8).ok_or_else(bad)?;
            let s = f
                .switch_names
                .iter()
                .position(|n| n == sw)
                .ok_or_else(|| format!("--sample-queue {name:?}: no switch {sw:?}"))?;
            let p = f
                .port_names
                .get(s)
                .and_then(|ports| ports.iter().position(|n| n == port))
                .ok_or_else(|| format!("--sample-queue {name:?}: {sw} has no interface {port:?}"))?;
            Ok((s, p as PortId, q))
        })
        .collect()
}

/// Runs the fabric; `progress` hears where it is about once a second of
/// wall time.
///
/// # Errors
///
/// A `--sample-queue` that names no queue of the fabric.
pub(super) fn run(
    mut f: Fabric,
    opts: &SimOptions,
    failures: &[LinkFailure],
    progress: &mut dyn FnMut(Progress),
) -> Result<SimReport, String> {
    let wall = Instant::now();
    let samples = resolve_samples(&f, &opts.sample_queues)?;
    let mut series: Vec<QueueSeries> = opts
        .sample_queues
        .iter()
        .map(|name| QueueSeries {
            name: name.clone(),
            t_us: Vec::new(),
            bytes: Vec::new(),
        })
        .collect();
    let sample_ns = opts.sample_ns.max(1);
    let mut next_sample: Nanos = 0;
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
    let switches = f.switches.len();
    // Link changes in time order: (time, link, up).
    let mut link_events: Vec<(Nanos, usize, bool)> = failures
        .iter()
        .flat_map(|x| {
            std::iter::once((x.down_ns, x.link, false)).chain(x.up_ns.map(|t| (t, x.link, true)))
        })
        .collect();
    link_events.sort_unstable();
    for &(t, link, _) in &link_events {
        for (node, _) in f.link_ends[link] {
            f.sched.wake(node, t);
        }
    }
    let mut link_events = link_events.into_iter().peekable();
    let mut depth_time = opts
        .queue_stats
        .then(|| DepthTime::new(f.port_names.iter().map(Vec::len)));
    for (h, host) in f.hosts.iter_mut().enumerate() {
        host.start(0);
        f.sched.wake((switches + h) as NodeId, 0);
    }
    let mut moved: u64 = 0;
    let mut done_hosts = vec![false; f.hosts.len()];
    let mut done_count = 0;
    let mut done_at: Option<Nanos> = None;
    let mut limit = opts
        .until_ns
        .map_or(opts.time_limit_ns, |u| u.min(opts.time_limit_ns));
    while let Some((t, node)) = f.sched.next(limit) {
        // Depths as they stood at each sample time up to this event.
        while !samples.is_empty() && next_sample <= t {
            for ((s, p, q), out) in samples.iter().zip(&mut series) {
                let depth = f.switches[*s].queues(*p).map_or(0, |qs| qs.depth_bytes(*q));
                out.t_us.push(next_sample as f64 / 1e3);
                out.bytes.push(depth);
            }
            next_sample += sample_ns;
        }
        now = t;
        while let Some(&(at, link, up)) = link_events.peek() {
            if at > t {
                break;
            }
            link_events.next();
            f.links[link].set_up(up);
            for (end, port) in f.link_ends[link] {
                if let Some(s) = f.switches.get_mut(end as usize) {
                    // A port going down flushes its queues.
                    if let Some(d) = depth_time.as_mut() {
                        d.advance(end as usize, s, at);
                    }
                    s.links_changed();
                }
                if up {
                    // Frames the cable held while down are due now.
                    f.sched.arrive(end, port, at);
                }
            }
        }
        let n = node as usize;
        let next = if n < switches {
            let s = &mut f.switches[n];
            if let Some(d) = depth_time.as_mut() {
                d.advance(n, s, now);
            }
            f.sched.due_ports(node, now, |p| s.hint_rx(p));
            moved += s.poll(now) as u64;
            s.next_departure()
        } else {
            let h = n - switches;
            let host = &mut f.hosts[h];
            let mut due_nics = 0u64;
            f.sched
                .due_ports(node, now, |p| due_nics |= 1u64 << (p & 63));
            for (i, p) in f.nic_ports[h].iter_mut().enumerate() {
                // Only NICs whose cable announced frames due (a host with
                // more than 64 NICs shares bits, which only costs a look).
                while due_nics & (1 << (i & 63)) != 0
                    && p.end.rx_burst(&f.pool, &mut burst, now) > 0
                {
                    for pkt in burst.drain(..) {
                        let data = pkt.data();
                        if let Some((src, bytes)) = roce_data(data, &mut meta) {
                            if let Some(&s) = ip_rank.get(&src) {
                                delivery.record(s, p.rank, now, bytes);
                            }
                        }
                        host.receive(i, now, data);
                        moved += 1;
                    }
                }
                let mut sent = false;
                while let Some(len) = host.transmit(i, now, &mut buf) {
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
                    sent = true;
                    moved += 1;
                }
                if sent {
                    f.sched.arrive(
                        p.switch,
                        p.switch_port,
                        now.saturating_add(p.end.delay_ns()),
                    );
                }
            }
            if !done_hosts[h] && host.done() {
                done_hosts[h] = true;
                done_count += 1;
                if done_count == done_hosts.len() {
                    done_at = Some(now);
                    // The fabric may drain: the last ACKs and CNPs, pause
                    // expiries.
                    limit = limit.min(now.saturating_add(DRAIN_NS));
                }
            }
            host.next_wakeup()
        };
        f.sched.collect_arrivals();
        if let Some(t) = next {
            // A node due again at once (a model rounding to the same
            // nanosecond) steps on by one, so an instant always ends.
            f.sched.wake(node, t.max(now + 1));
        }
        // Checked every 4096 events: a clock read per event would show.
        if f.sched.events.is_multiple_of(4096) && last_report.elapsed().as_secs() >= 1 {
            last_report = Instant::now();
            progress(Progress {
                virtual_ns: now,
                target_ns: opts.until_ns,
                wall_s: wall.elapsed().as_secs_f64(),
                moved,
            });
        }
    }
    // What was still due when the run stopped: the time limit ends a job
    // that had not finished.
    let until_ns = opts.until_ns.filter(|_| done_at.is_none());
    let timed_out = done_at.is_none() && until_ns.is_none();
    if done_at.is_none() {
        now = now.max(limit.min(f.sched.peek_time().unwrap_or(now)));
    }
    for s in &mut f.switches {
        // In-memory backends have nothing to flush.
        let _ = s.finish();
    }
    let occupancy = depth_time.map_or_else(Vec::new, |d| {
        d.finish(&f.switches, &f.switch_names, &f.port_names, now)
    });
    let outcomes: Vec<_> = f.hosts.iter().map(|h| h.outcome()).collect();
    let results = summarise_workloads(&f.plan, &outcomes);
    Ok(report::build(
        &f,
        results,
        &outcomes,
        delivery,
        report::RunInfo {
            end_ns: now,
            timed_out,
            until_ns,
            wall_s: wall.elapsed().as_secs_f64(),
            ring_full: f.links.iter().map(|l| l.ring_full()).sum(),
            events: f.sched.events,
            queue_stats: occupancy,
        },
        series,
        opts.keep_switch_stats,
    ))
}
