//! Running a fabric in virtual time, window by window (see the engine):
//! each worker thread runs its nodes' work due in the window (a frame's
//! arrival, a departure, a NIC's pacing slot or timer) — a switch is
//! polled, a host's NICs take their frames off their cables and put what
//! they may send on them — and worker 0's conductor decides the next
//! window from what every worker reports. The run stops when the job is
//! done and the fabric has drained, or at the time limit.

use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::model::PortId;
use railyard_dataplane::packet::{free_burst, MAX_FRAME};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::Port;
use railyard_dataplane::{Burst, PacketHint, Pool};
use railyard_roce::host::Host;
use railyard_roce::report::{summarise_training, summarise_workloads};
use rustc_hash::FxHashMap;

use super::build::{Fabric, NicPort};
use super::engine::{Agenda, Arrivals, NodeId, Partition};
use super::occupancy::DepthTime;
use super::report::{self, Delivery, QueueSeries, SimReport};
use super::scenario::LinkFailure;
use super::{Progress, SimOptions};

/// Virtual time after the job ends in which the fabric may drain (the last
/// ACKs and CNPs, pause expiries).
const DRAIN_NS: Nanos = 1_000_000;

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

/// What a worker tells the conductor between windows.
#[derive(Debug, Clone, Copy, Default)]
struct Status {
    /// When its next work is due.
    next: Option<Nanos>,
    /// Its hosts that are done, and when the last of them got done.
    done: usize,
    done_last: Nanos,
    /// Frames moved, and the time of its latest run.
    moved: u64,
    last: Nanos,
}

/// What the conductor decides for the next window.
#[derive(Debug, Clone, Default)]
struct Decision {
    stop: bool,
    /// Run every event in `[start, end)`.
    start: Nanos,
    end: Nanos,
    /// Queue sample times that fall before `start`: the depths now are the
    /// depths then.
    samples: Vec<Nanos>,
    /// Links that changed at `start`: (node, port, up) of each end.
    changes: Vec<(NodeId, u16, bool)>,
}

/// The window plan and the workers' status, handed over at barriers.
struct Shared {
    status: Vec<Status>,
    decision: Decision,
}

/// The nodes one thread runs, and what it collects while running them.
struct Worker<'a> {
    /// Which worker this is.
    index: usize,
    first_switch: usize,
    switches: &'a mut [Switch],
    first_host: usize,
    hosts: &'a mut [Host],
    nic_ports: &'a mut [Vec<NicPort>],
    /// Total switches: host `h` is node `switch_count + h`.
    switch_count: usize,
    agenda: Agenda,
    inboxes: &'a [Arrivals],
    partition: Partition,
    /// Per node, the worker that owns it (the partition's answer, looked
    /// up once rather than on every send).
    owner: &'a [usize],
    pool: &'a Pool,
    ip_rank: &'a FxHashMap<[u8; 4], usize>,
    delivery: Delivery,
    /// The sampled queues this worker's switches hold: (series, switch,
    /// port, queue).
    samples: Vec<(usize, usize, PortId, usize)>,
    series: Vec<(usize, Vec<f64>, Vec<u64>)>,
    /// Its switches' queue depths over time (`--queue-stats`).
    depth_time: Option<DepthTime>,
    buf: Vec<u8>,
    burst: Burst,
    nodes: Vec<NodeId>,
    done: Vec<bool>,
    status: Status,
}

impl Worker<'_> {
    /// Runs every event of its nodes in `[.., end)`.
    fn run_window(&mut self, end: Nanos) {
        let mut nodes = std::mem::take(&mut self.nodes);
        self.agenda.take_window(end, &mut nodes);
        if let Some(&first) = nodes.first() {
            self.agenda.prefetch_due(first, end);
        }
        for (k, &node) in nodes.iter().enumerate() {
            // The next node's frames load while this one runs.
            if let Some(&next) = nodes.get(k + 1) {
                self.agenda.prefetch_due(next, end);
            }
            while let Some(t) = self.agenda.next_run(node, end) {
                let next = self.run_node(node, t);
                self.agenda.ran(node, t, next);
                self.status.last = self.status.last.max(t);
            }
        }
        self.nodes = nodes;
    }

    /// Runs `node` at `now`; returns when it asks to run next.
    fn run_node(&mut self, node: NodeId, now: Nanos) -> Option<Nanos> {
        let n = node as usize;
        if n < self.switch_count {
            let s = &mut self.switches[n - self.first_switch];
            if let Some(d) = self.depth_time.as_mut() {
                d.advance(n, s, now);
            }
            self.agenda.due_ports(node, now, |p| s.hint_rx(p));
            self.status.moved += s.poll(now) as u64;
            return s.next_departure();
        }
        let h = n - self.switch_count - self.first_host;
        let host = &mut self.hosts[h];
        let mut due_nics = 0u64;
        self.agenda
            .due_ports(node, now, |p| due_nics |= 1u64 << (p & 63));
        for (i, p) in self.nic_ports[h].iter_mut().enumerate() {
            // Only NICs whose cable announced frames due (a host with
            // more than 64 NICs shares bits, which only costs a look).
            while due_nics & (1 << (i & 63)) != 0
                && p.end.rx_burst(self.pool, &mut self.burst, now) > 0
            {
                for pkt in self.burst.drain(..) {
                    // The NIC's parse gives the per-flow delivery record
                    // a WRITE's source and size.
                    if let Some((src, bytes)) = host.receive_noting(i, now, pkt.data()) {
                        if let Some(&s) = self.ip_rank.get(&src.octets()) {
                            self.delivery.record(s, p.rank, now, bytes);
                        }
                    }
                    self.status.moved += 1;
                }
            }
            let mut first = None;
            loop {
                // The NIC writes its frame straight into a pool buffer: a
                // data-free frame's payload is whatever the buffer held
                // (nobody reads it), so a frame costs its headers, not a
                // 9 KB copy that would push the fabric's state out of
                // the cache.
                let Some(mut pkt) = self.pool.alloc() else {
                    if host.transmit(i, now, &mut self.buf).is_some() {
                        // The pool is dry: the frame is lost like a NIC
                        // ring overflow; go-back-N will resend it.
                        self.delivery.pool_dry += 1;
                    }
                    break;
                };
                let Some(len) = host.transmit(i, now, pkt.tailroom_mut()) else {
                    break;
                };
                pkt.set_len(len);
                first = first.or(Some(pkt.hint()));
                self.burst.push(pkt);
                p.end.tx_burst(&mut self.burst, now);
                // A full cable keeps the frame for a retry.
                free_burst(&mut self.burst);
                self.status.moved += 1;
            }
            if let Some(first) = first {
                self.inboxes[self.owner[p.switch as usize]].push((
                    p.switch,
                    p.switch_port,
                    now.saturating_add(p.end.delay_ns()),
                    first,
                ));
            }
        }
        if !self.done[h] && host.done() {
            self.done[h] = true;
            self.status.done += 1;
            self.status.done_last = self.status.done_last.max(now);
        }
        host.next_wakeup()
    }

    /// Takes in what arrived and says where it stands.
    fn report(&mut self) -> Status {
        self.agenda.collect_arrivals();
        self.status.next = self.agenda.next_time();
        self.status
    }

    /// Carries out the conductor's decision before the window runs: the
    /// samples due, the links that changed at its start.
    fn prepare(&mut self, d: &Decision) {
        for &t in &d.samples {
            for &(k, s, p, q) in &self.samples {
                let depth = self.switches[s - self.first_switch]
                    .queues(p)
                    .map_or(0, |qs| qs.depth_bytes(q));
                let out = &mut self.series[k];
                out.1.push(t as f64 / 1e3);
                out.2.push(depth);
            }
        }
        for &(node, port, up) in &d.changes {
            if self.partition.worker_of(node) != self.index {
                continue;
            }
            let n = node as usize;
            if n < self.switch_count {
                let s = &mut self.switches[n - self.first_switch];
                // A port going down flushes its queues.
                if let Some(dt) = self.depth_time.as_mut() {
                    dt.advance(n, s, d.start);
                }
                s.links_changed();
            }
            if up {
                // Frames the cable held while down are due now.
                self.agenda
                    .arrive(node, port, d.start, PacketHint::default());
            }
            self.agenda.wake(node, d.start);
        }
    }
}

/// Decides each window from every worker's status (worker 0 carries it).
type Conductor<'a> = dyn FnMut(&[Status]) -> Decision + 'a;

/// Runs one worker's side of the rounds until the conductor stops; worker
/// 0 carries the conductor, which decides each window from every
/// worker's status.
fn rounds(
    w: &mut Worker<'_>,
    shared: &Mutex<Shared>,
    barrier: &Barrier,
    mut conductor: Option<&mut Conductor<'_>>,
) {
    // The others would wait at the next barrier for ever.
    let _abort = AbortOnPanic;
    loop {
        let status = w.report();
        lock(shared).status[w.index] = status;
        barrier.wait();
        if let Some(c) = conductor.as_mut() {
            let mut g = lock(shared);
            let d = c(&g.status);
            g.decision = d;
        }
        barrier.wait();
        let d = lock(shared).decision.clone();
        if d.stop {
            return;
        }
        w.prepare(&d);
        w.run_window(d.end);
        // Every worker's announcements are in before any takes them in.
        barrier.wait();
    }
}

/// Ends the process if a worker panics: the other workers would wait at
/// the barrier for ever, and a bug should crash a run, not hang it.
struct AbortOnPanic;

impl Drop for AbortOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("railyard sim: a simulation thread panicked (above); stopping");
            std::process::abort();
        }
    }
}

/// The shared state, even if another worker panicked holding it (its
/// panic is the error that matters, and is raised when the threads join).
fn lock(m: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
    let sample_ns = opts.sample_ns.max(1);
    let ranks = f.plan.ranks().len();
    let ip_rank: FxHashMap<[u8; 4], usize> = f
        .plan
        .ranks()
        .iter()
        .enumerate()
        .map(|(i, r)| (r.ip.octets(), i))
        .collect();
    let switch_count = f.switches.len();
    let host_count = f.hosts.len();
    let nodes = switch_count + host_count;
    let partition = f.partition;
    let owner: Vec<usize> = (0..nodes)
        .map(|n| partition.worker_of(n as NodeId))
        .collect();
    // Link changes in time order: (time, link, up).
    let mut link_events: Vec<(Nanos, usize, bool)> = failures
        .iter()
        .flat_map(|x| {
            std::iter::once((x.down_ns, x.link, false)).chain(x.up_ns.map(|t| (t, x.link, true)))
        })
        .collect();
    link_events.sort_unstable();
    for h in &mut f.hosts {
        h.start(0);
    }

    // Each worker its share of the nodes.
    let mut workers = Vec::with_capacity(partition.workers());
    {
        let mut switches: &mut [Switch] = &mut f.switches;
        let mut hosts: &mut [Host] = &mut f.hosts;
        let mut nic_ports: &mut [Vec<NicPort>] = &mut f.nic_ports;
        for k in 0..partition.workers() {
            let sr = partition.switch_range(k);
            let hr = partition.host_range(k);
            let (my_switches, rest) = std::mem::take(&mut switches).split_at_mut(sr.len());
            switches = rest;
            let (my_hosts, rest) = std::mem::take(&mut hosts).split_at_mut(hr.len());
            hosts = rest;
            let (my_nics, rest) = std::mem::take(&mut nic_ports).split_at_mut(hr.len());
            nic_ports = rest;
            let mut agenda = Agenda::new(nodes, Arc::clone(&f.inboxes[k]));
            for h in hr.clone() {
                agenda.wake((switch_count + h) as NodeId, 0);
            }
            // Every link change wakes its ends, so a window starts there.
            for &(t, link, _) in &link_events {
                for (node, _) in f.link_ends[link] {
                    if partition.worker_of(node) == k {
                        agenda.wake(node, t);
                    }
                }
            }
            let mine: Vec<(usize, usize, PortId, usize)> = samples
                .iter()
                .enumerate()
                .filter(|(_, (s, _, _))| sr.contains(s))
                .map(|(i, &(s, p, q))| (i, s, p, q))
                .collect();
            workers.push(Worker {
                index: k,
                first_switch: sr.start,
                switches: my_switches,
                first_host: hr.start,
                hosts: my_hosts,
                nic_ports: my_nics,
                switch_count,
                agenda,
                inboxes: &f.inboxes,
                partition,
                owner: &owner,
                pool: &f.pool,
                ip_rank: &ip_rank,
                delivery: Delivery::new(opts.bin_ns, ranks),
                series: mine.iter().map(|m| (m.0, Vec::new(), Vec::new())).collect(),
                depth_time: opts
                    .queue_stats
                    .then(|| DepthTime::new(f.port_names.iter().map(Vec::len))),
                samples: mine
                    .iter()
                    .enumerate()
                    .map(|(j, &(_, s, p, q))| (j, s, p, q))
                    .collect(),
                buf: vec![0u8; MAX_FRAME.max(9216)],
                burst: Burst::new(),
                nodes: Vec::new(),
                done: vec![false; hr.len()],
                status: Status::default(),
            });
        }
    }

    // The conductor: where the next window starts and ends, what happens
    // at its start, and when the run stops.
    let lookahead = f.lookahead_ns.max(1);
    let links = &f.links;
    let link_ends = &f.link_ends;
    let mut link_events = link_events.into_iter().peekable();
    let mut limit = opts
        .until_ns
        .map_or(opts.time_limit_ns, |u| u.min(opts.time_limit_ns));
    let mut done_at: Option<Nanos> = None;
    let mut next_sample: Nanos = 0;
    let mut last_report = Instant::now();
    let mut stopped_at: Option<Nanos> = None;
    let mut conduct = |status: &[Status]| -> Decision {
        let done: usize = status.iter().map(|s| s.done).sum();
        if done == host_count && done_at.is_none() {
            let at = status.iter().map(|s| s.done_last).max().unwrap_or(0);
            done_at = Some(at);
            // The fabric may drain: the last ACKs and CNPs, pause expiries.
            limit = limit.min(at.saturating_add(DRAIN_NS));
        }
        let start = status.iter().filter_map(|s| s.next).min();
        let Some(start) = start.filter(|&t| t <= limit) else {
            stopped_at = start;
            return Decision {
                stop: true,
                ..Decision::default()
            };
        };
        let mut d = Decision {
            start,
            end: start.saturating_add(lookahead).min(limit.saturating_add(1)),
            ..Decision::default()
        };
        // Depths as they stood at each sample time up to this window.
        if !samples.is_empty() {
            while next_sample <= start {
                d.samples.push(next_sample);
                next_sample += sample_ns;
            }
            d.end = d.end.min(next_sample);
        }
        while let Some(&(at, link, up)) = link_events.peek() {
            if at > start {
                d.end = d.end.min(at);
                break;
            }
            link_events.next();
            links[link].set_up(up);
            d.changes
                .extend(link_ends[link].iter().map(|&(node, port)| (node, port, up)));
        }
        if last_report.elapsed().as_secs() >= 1 {
            last_report = Instant::now();
            progress(Progress {
                virtual_ns: start,
                target_ns: opts.until_ns,
                wall_s: wall.elapsed().as_secs_f64(),
                moved: status.iter().map(|s| s.moved).sum(),
            });
        }
        d
    };

    let shared = Mutex::new(Shared {
        status: vec![Status::default(); workers.len()],
        decision: Decision::default(),
    });
    let barrier = Barrier::new(workers.len());
    std::thread::scope(|scope| {
        let mut it = workers.iter_mut().enumerate();
        let first = it.next();
        for (k, w) in it {
            let (shared, barrier) = (&shared, &barrier);
            std::thread::Builder::new()
                .name(format!("sim-worker-{k}"))
                .spawn_scoped(scope, move || rounds(w, shared, barrier, None))
                .map_err(|e| format!("cannot start a simulation thread: {e}"))?;
        }
        if let Some((_, w)) = first {
            rounds(w, &shared, &barrier, Some(&mut conduct));
        }
        Ok::<(), String>(())
    })?;

    let mut delivery = Delivery::new(opts.bin_ns, ranks);
    let mut series: Vec<QueueSeries> = opts
        .sample_queues
        .iter()
        .map(|name| QueueSeries {
            name: name.clone(),
            t_us: Vec::new(),
            bytes: Vec::new(),
        })
        .collect();
    let mut events = 0;
    let mut last: Nanos = 0;
    let mut depth_time: Option<DepthTime> = None;
    for w in workers {
        delivery.merge(w.delivery);
        if let Some(d) = w.depth_time {
            match depth_time.as_mut() {
                Some(all) => all.merge(d),
                None => depth_time = Some(d),
            }
        }
        for (k, t_us, bytes) in w.series {
            series[k].t_us = t_us;
            series[k].bytes = bytes;
        }
        events += w.agenda.events;
        last = last.max(w.status.last);
    }
    // What was still due when the run stopped: the time limit ends a job
    // that had not finished.
    let mut now = last;
    let until_ns = opts.until_ns.filter(|_| done_at.is_none());
    let timed_out = done_at.is_none() && until_ns.is_none();
    if done_at.is_none() {
        now = now.max(limit.min(stopped_at.unwrap_or(now)));
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
    let training = summarise_training(&f.plan, &outcomes, &results);
    let mut report = report::build(
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
            events,
            queue_stats: occupancy,
        },
        series,
        opts.keep_switch_stats,
    );
    report.training = training;
    if let Some(c) = f.captures.take() {
        report.captures = c.finish()?;
    }
    Ok(report)
}
