//! The Prometheus text exposition (format 0.0.4) of a counter snapshot.
//!
//! A pure function of what the management socket's `stats` request
//! returns (plus the LLDP agent's snapshot and the kernel route follower's
//! counters), so what a scrape shows is exactly what `railyard show` shows.
//! Every family is written once, with its `# HELP` and `# TYPE` lines and
//! all its samples together, and always, even with no samples, so the set
//! of names a switch exports does not depend on its configuration.

use std::fmt::Write as _;

use railyard_dataplane::stats::{InterfaceStats, QueueStats, SwitchStats};
use railyard_lldp::snapshot::{LldpCounters, LldpSnapshot};

use crate::mgmt::CounterSnapshot;
use crate::routing::kernel_fib::KernelFibView;

/// What one scrape renders.
#[derive(Debug, Clone, Copy)]
pub struct Scrape<'a> {
    /// The switch's counters, as the `stats` request returns them.
    pub stats: &'a SwitchStats,
    /// The LLDP agent's latest snapshot, when it has published one.
    pub lldp: Option<&'a LldpSnapshot>,
    /// The kernel route follower's counters, when the switch follows the
    /// kernel's routing table.
    pub kernel_routes: Option<&'a KernelFibView>,
    /// What the management socket did, when the switch serves one.
    pub control_socket: Option<&'a CounterSnapshot>,
}

/// A metric family's type, as the `# TYPE` line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only ever goes up (name ends in `_total`).
    Counter,
    /// A value now: depths, peaks, states.
    Gauge,
    /// Cumulative `_bucket{le=…}` samples and a `_count`.
    Histogram,
    /// Samples with a `quantile` label.
    Summary,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
            Kind::Summary => "summary",
        }
    }
}

/// The upper bounds, in seconds, of the poll-gap buckets the workers count
/// (see [`railyard_dataplane::stats::PollGapStats::buckets`]); the last
/// bucket, longer gaps, is `+Inf`.
pub const POLL_GAP_BOUNDS_S: [f64; 6] = [1e-5, 1e-4, 1e-3, 5e-3, 2e-2, 1e-1];

type Labels = Vec<(&'static str, String)>;

/// The text being built: one family after another.
struct Out {
    text: String,
}

impl Out {
    /// Writes a family's header; its samples must follow before the next.
    fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.text, "# TYPE {name} {}", kind.word());
    }

    fn sample(&mut self, name: &str, labels: &[(&str, String)], value: impl std::fmt::Display) {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{k}=\"{}\"", escape_label(v));
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {value}");
    }

    /// A whole family of integer samples.
    fn ints(
        &mut self,
        name: &str,
        kind: Kind,
        help: &str,
        samples: impl IntoIterator<Item = (Labels, u64)>,
    ) {
        self.family(name, kind, help);
        for (labels, v) in samples {
            self.sample(name, &labels, v);
        }
    }

    /// A whole family of nanosecond values written in seconds.
    fn seconds(
        &mut self,
        name: &str,
        kind: Kind,
        help: &str,
        samples: impl IntoIterator<Item = (Labels, u64)>,
    ) {
        self.family(name, kind, help);
        for (labels, ns) in samples {
            self.sample(name, &labels, Seconds(ns));
        }
    }
}

/// Nanoseconds written as seconds, exactly (no float rounding).
struct Seconds(u64);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (s, ns) = (self.0 / 1_000_000_000, self.0 % 1_000_000_000);
        if ns == 0 {
            write!(f, "{s}")
        } else {
            let frac = format!("{ns:09}");
            write!(f, "{s}.{}", frac.trim_end_matches('0'))
        }
    }
}

/// Escapes a label value: backslash, double quote and newline.
pub fn escape_label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// Escapes a `# HELP` text: backslash and newline.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Interface counters: (name, help, field).
type IfField = (&'static str, &'static str, fn(&InterfaceStats) -> u64);

const INTERFACE_COUNTERS: &[IfField] = &[
    (
        "railyard_interface_rx_packets_total",
        "Frames received on the interface.",
        |i| i.rx_packets,
    ),
    (
        "railyard_interface_rx_bytes_total",
        "Bytes received on the interface.",
        |i| i.rx_bytes,
    ),
    (
        "railyard_interface_tx_packets_total",
        "Frames transmitted on the interface.",
        |i| i.tx_packets,
    ),
    (
        "railyard_interface_tx_bytes_total",
        "Bytes transmitted on the interface.",
        |i| i.tx_bytes,
    ),
    (
        "railyard_interface_rx_malformed_total",
        "Frames received that failed to parse.",
        |i| i.rx_malformed,
    ),
    (
        "railyard_interface_punted_total",
        "Frames handed to the switch's own protocol handlers.",
        |i| i.punted,
    ),
    (
        "railyard_interface_mirrored_total",
        "Punted frames sent up the port's kernel mirror.",
        |i| i.mirrored,
    ),
    (
        "railyard_interface_flood_copies_total",
        "Copies made of frames received here to flood them in their VLAN.",
        |i| i.flood_copies,
    ),
    (
        "railyard_interface_to_kernel_dropped_total",
        "Mirrored frames the kernel mirror could not take.",
        |i| i.to_kernel_dropped,
    ),
    (
        "railyard_interface_from_kernel_total",
        "Frames the kernel sent through the port's mirror that left the port.",
        |i| i.from_kernel,
    ),
    (
        "railyard_interface_from_kernel_dropped_total",
        "Frames the kernel sent through the port's mirror that the port could not take.",
        |i| i.from_kernel_dropped,
    ),
    (
        "railyard_interface_backend_rx_dropped_total",
        "Frames the backend could not deliver before the pipeline saw them (ring overflow, oversize, pool empty).",
        |i| i.backend_rx_dropped,
    ),
    (
        "railyard_interface_backend_tx_errors_total",
        "Frames the backend failed to send.",
        |i| i.backend_tx_errors,
    ),
];

/// Queue counters and gauges: (name, kind, help, field).
type QueueField = (&'static str, Kind, &'static str, fn(&QueueStats) -> u64);

const QUEUE_FIELDS: &[QueueField] = &[
    (
        "railyard_queue_offered_packets_total",
        Kind::Counter,
        "Packets that arrived at the egress queue (sent, dropped or queued).",
        |q| q.offered_packets,
    ),
    (
        "railyard_queue_offered_bytes_total",
        Kind::Counter,
        "Bytes that arrived at the egress queue.",
        |q| q.offered_bytes,
    ),
    (
        "railyard_queue_tx_packets_total",
        Kind::Counter,
        "Packets transmitted from the egress queue.",
        |q| q.tx_packets,
    ),
    (
        "railyard_queue_tx_bytes_total",
        Kind::Counter,
        "Bytes transmitted from the egress queue.",
        |q| q.tx_bytes,
    ),
    (
        "railyard_queue_ecn_marked_total",
        Kind::Counter,
        "Packets marked CE by WRED/ECN.",
        |q| q.ecn_marked,
    ),
    (
        "railyard_queue_wred_drops_total",
        Kind::Counter,
        "Packets dropped by WRED.",
        |q| q.wred_drops,
    ),
    (
        "railyard_queue_wred_drop_bytes_total",
        Kind::Counter,
        "Bytes dropped by WRED.",
        |q| q.wred_drop_bytes,
    ),
    (
        "railyard_queue_tail_drops_total",
        Kind::Counter,
        "Packets tail-dropped (queue full).",
        |q| q.tail_drops,
    ),
    (
        "railyard_queue_tail_drop_bytes_total",
        Kind::Counter,
        "Bytes tail-dropped.",
        |q| q.tail_drop_bytes,
    ),
    (
        "railyard_queue_watchdog_drops_total",
        Kind::Counter,
        "Packets flushed by the PFC watchdog.",
        |q| q.watchdog_drops,
    ),
    (
        "railyard_queue_watchdog_drop_bytes_total",
        Kind::Counter,
        "Bytes flushed by the PFC watchdog.",
        |q| q.watchdog_drop_bytes,
    ),
    (
        "railyard_queue_depth_bytes",
        Kind::Gauge,
        "Bytes queued at the snapshot.",
        |q| q.depth_bytes,
    ),
    (
        "railyard_queue_depth_packets",
        Kind::Gauge,
        "Packets queued at the snapshot.",
        |q| q.depth_packets,
    ),
    (
        "railyard_queue_peak_depth_bytes",
        Kind::Gauge,
        "Most bytes ever queued.",
        |q| q.max_depth_bytes,
    ),
    (
        "railyard_queue_peak_depth_packets",
        Kind::Gauge,
        "Most packets ever queued.",
        |q| q.max_depth_packets,
    ),
];

/// PFC per-priority arrays: (name, kind, help, field). Durations are
/// written separately (they are nanoseconds).
type PfcField = (
    &'static str,
    Kind,
    &'static str,
    fn(&railyard_dataplane::stats::PfcStats) -> &[u64; 8],
);

const PFC_ARRAYS: &[PfcField] = &[
    (
        "railyard_pfc_tx_pause_total",
        Kind::Counter,
        "PFC pause frames sent, per priority.",
        |p| &p.tx_pause,
    ),
    (
        "railyard_pfc_tx_resume_total",
        Kind::Counter,
        "PFC resume (quanta 0) frames sent, per priority.",
        |p| &p.tx_resume,
    ),
    (
        "railyard_pfc_rx_pause_total",
        Kind::Counter,
        "PFC pause frames received, per priority.",
        |p| &p.rx_pause,
    ),
    (
        "railyard_pfc_rx_resume_total",
        Kind::Counter,
        "PFC resume frames received, per priority.",
        |p| &p.rx_resume,
    ),
    (
        "railyard_pfc_watchdog_storms_total",
        Kind::Counter,
        "Pause storms the PFC watchdog declared, per priority.",
        |p| &p.watchdog_storms,
    ),
    (
        "railyard_pfc_watchdog_restores_total",
        Kind::Counter,
        "Stormed queues the PFC watchdog restored, per priority.",
        |p| &p.watchdog_restores,
    ),
    (
        "railyard_pfc_watchdog_ingress_forwarded_total",
        Kind::Counter,
        "Lossless packets forwarded as lossy while the watchdog had shut their queue, per priority.",
        |p| &p.watchdog_ingress_forwarded,
    ),
    (
        "railyard_pfc_ingress_peak_bytes",
        Kind::Gauge,
        "The most bytes each ingress priority group has held (compare with xOFF and headroom).",
        |p| &p.ingress_peak_bytes,
    ),
];

/// PFC per-priority states, from bit masks: (name, help, mask).
type PfcBits = (
    &'static str,
    &'static str,
    fn(&railyard_dataplane::stats::PfcStats) -> u8,
);

const PFC_BITS: &[PfcBits] = &[
    (
        "railyard_pfc_enabled",
        "1 when the priority is lossless on the port (PFC enabled), else 0.",
        |p| p.enabled,
    ),
    (
        "railyard_pfc_rx_paused",
        "1 while the peer holds the queue paused, else 0.",
        |p| p.rx_paused,
    ),
    (
        "railyard_pfc_tx_xoff",
        "1 while the port holds XOFF on the priority (sent, not yet released), else 0.",
        |p| p.tx_xoff,
    ),
];

fn iface(name: &str) -> Labels {
    vec![("interface", name.to_string())]
}

/// Renders a scrape as Prometheus text exposition format 0.0.4.
pub fn render(scrape: &Scrape<'_>) -> String {
    let s = scrape.stats;
    let mut o = Out {
        text: String::with_capacity(64 * 1024),
    };
    o.ints(
        "railyard_switch_info",
        Kind::Gauge,
        "Always 1; the switch's hostname as a label.",
        [(vec![("hostname", s.hostname.clone())], 1)],
    );
    interfaces(&mut o, s);
    queues(&mut o, s);
    pfc(&mut o, s);
    pool(&mut o, s);
    load_balancing(&mut o, s);
    poll_gaps(&mut o, s);
    mac_table(&mut o, s);
    vlans(&mut o, s);
    monitor_sessions(&mut o, s);
    lldp(&mut o, scrape.lldp);
    kernel_routes(&mut o, scrape.kernel_routes);
    control_socket(&mut o, scrape.control_socket);
    o.text
}

fn monitor_sessions(o: &mut Out, s: &SwitchStats) {
    let m = &s.monitor_sessions;
    let session = |id: &u8| vec![("session", id.to_string())];
    o.ints(
        "railyard_monitor_session_mirrored_total",
        Kind::Counter,
        "Copies a monitor session delivered to its destination's queue or ring.",
        m.iter().map(|(id, c)| (session(id), c.mirrored)),
    );
    o.ints(
        "railyard_monitor_session_dropped_total",
        Kind::Counter,
        "Copies a monitor session dropped, by reason.",
        m.iter().flat_map(|(id, c)| {
            [
                ("queue_full", c.queue_full),
                ("no_buffer", c.no_buffer),
                ("destination_down", c.destination_down),
            ]
            .map(|(why, n)| {
                let mut l = session(id);
                l.push(("reason", why.to_string()));
                (l, n)
            })
        }),
    );
}

/// The management socket's counters; the families without samples when
/// there is no socket.
fn control_socket(o: &mut Out, c: Option<&CounterSnapshot>) {
    o.ints(
        "railyard_control_socket_connections_total",
        Kind::Counter,
        "Connections the management socket accepted.",
        c.map(|c| (Vec::new(), c.accepted)),
    );
    o.ints(
        "railyard_control_socket_answered_total",
        Kind::Counter,
        "Requests the management socket answered.",
        c.map(|c| (Vec::new(), c.answered)),
    );
    o.ints(
        "railyard_control_socket_refused_total",
        Kind::Counter,
        "Connections and requests the management socket refused or gave up on, by reason.",
        c.into_iter()
            .flat_map(|c| {
                [
                    ("busy", c.busy),
                    ("streams_busy", c.streams_busy),
                    ("too_long", c.too_long),
                    ("not_utf8", c.not_utf8),
                    ("request_timeout", c.request_timeouts),
                    ("reply_abandoned", c.replies_abandoned),
                    ("handler_panic", c.handler_panics),
                    ("stream_error", c.stream_errors),
                    ("accept_error", c.accept_errors),
                ]
            })
            .map(|(why, n)| (vec![("reason", why.to_string())], n)),
    );
}

fn interfaces(o: &mut Out, s: &SwitchStats) {
    let ifs = &s.interfaces;
    o.ints(
        "railyard_interface_info",
        Kind::Gauge,
        "Always 1; the interface's MAC address and backend as labels.",
        ifs.iter().map(|(n, i)| {
            (
                vec![
                    ("interface", n.clone()),
                    ("mac", i.mac.clone()),
                    ("backend", i.backend.clone()),
                ],
                1,
            )
        }),
    );
    o.ints(
        "railyard_interface_admin_up",
        Kind::Gauge,
        "1 unless the interface is configured `shutdown`.",
        ifs.iter().map(|(n, i)| (iface(n), u64::from(i.admin_up))),
    );
    o.ints(
        "railyard_interface_link_up",
        Kind::Gauge,
        "1 when the backend reports the link up.",
        ifs.iter().map(|(n, i)| (iface(n), u64::from(i.link_up))),
    );
    o.ints(
        "railyard_interface_mtu_bytes",
        Kind::Gauge,
        "The interface's IP MTU.",
        ifs.iter().map(|(n, i)| (iface(n), u64::from(i.mtu))),
    );
    o.ints(
        "railyard_interface_speed_bits_per_second",
        Kind::Gauge,
        "The interface's configured speed (interfaces without one have no sample).",
        ifs.iter().filter_map(|(n, i)| {
            i.speed_mbps
                .map(|m| (iface(n), u64::from(m).saturating_mul(1_000_000)))
        }),
    );
    for (name, help, field) in INTERFACE_COUNTERS {
        o.ints(
            name,
            Kind::Counter,
            help,
            ifs.iter().map(|(n, i)| (iface(n), field(i))),
        );
    }
    o.seconds(
        "railyard_interface_backend_rx_wait_max_seconds",
        Kind::Gauge,
        "The longest a frame waited in the backend's kernel ring before the switch read it (AF_PACKET only).",
        ifs.iter().map(|(n, i)| (iface(n), i.backend_rx_wait_max_ns)),
    );
    o.ints(
        "railyard_drops_total",
        Kind::Counter,
        "Packets the switch dropped, by interface and reason.",
        ifs.iter().flat_map(|(n, i)| {
            i.drops.iter().map(move |(reason, v)| {
                (
                    vec![("interface", n.clone()), ("reason", reason.clone())],
                    *v,
                )
            })
        }),
    );
}

fn queue_labels(name: &str, q: &QueueStats) -> Labels {
    vec![
        ("interface", name.to_string()),
        ("queue", q.queue.to_string()),
    ]
}

fn queues(o: &mut Out, s: &SwitchStats) {
    let all = || {
        s.interfaces
            .iter()
            .flat_map(|(n, i)| i.queues.iter().map(move |q| (n, q)))
    };
    for (name, kind, help, field) in QUEUE_FIELDS {
        o.ints(
            name,
            *kind,
            help,
            all().map(|(n, q)| (queue_labels(n, q), field(q))),
        );
    }
    // The workers keep percentiles of the sojourn time, not bucket counts,
    // so the distribution is a summary of quantiles (0.5, 0.99 and 1 for
    // the longest) without _sum and _count.
    const NAME: &str = "railyard_queue_sojourn_seconds";
    o.family(
        NAME,
        Kind::Summary,
        "Time packets spent in the egress queue (enqueue to departure) since the switch started: median, 99th percentile and longest (quantile 1).",
    );
    for (n, q) in all() {
        let l = q.latency_ns;
        for (quantile, ns) in [("0.5", l.p50), ("0.99", l.p99), ("1", l.max)] {
            let mut labels = queue_labels(n, q);
            labels.push(("quantile", quantile.to_string()));
            o.sample(NAME, &labels, Seconds(ns));
        }
    }
}

fn pfc(o: &mut Out, s: &SwitchStats) {
    let ifs = &s.interfaces;
    let prio = |n: &str, p: usize| -> Labels {
        vec![("interface", n.to_string()), ("priority", p.to_string())]
    };
    for (name, help, bits) in PFC_BITS {
        o.ints(
            name,
            Kind::Gauge,
            help,
            ifs.iter().flat_map(|(n, i)| {
                let m = bits(&i.pfc);
                (0..8).map(move |p| (prio(n, p), u64::from((m >> p) & 1)))
            }),
        );
    }
    for (name, kind, help, field) in PFC_ARRAYS {
        o.ints(
            name,
            *kind,
            help,
            ifs.iter().flat_map(|(n, i)| {
                field(&i.pfc)
                    .iter()
                    .enumerate()
                    .map(move |(p, v)| (prio(n, p), *v))
            }),
        );
    }
    o.seconds(
        "railyard_pfc_paused_seconds_total",
        Kind::Counter,
        "Time each queue spent paused by the peer, per priority.",
        ifs.iter().flat_map(|(n, i)| {
            i.pfc
                .paused_ns
                .iter()
                .enumerate()
                .map(move |(p, v)| (prio(n, p), *v))
        }),
    );
}

fn pool(o: &mut Out, s: &SwitchStats) {
    o.ints(
        "railyard_pool_buffers",
        Kind::Gauge,
        "Packet buffers in the pool.",
        [(Vec::new(), s.pool.capacity as u64)],
    );
    o.ints(
        "railyard_pool_buffers_available",
        Kind::Gauge,
        "Packet buffers free at the snapshot.",
        [(Vec::new(), s.pool.available as u64)],
    );
    o.ints(
        "railyard_pool_buffers_touched",
        Kind::Gauge,
        "Packet buffers ever used: resident memory is about this many times the buffer size.",
        [(Vec::new(), s.pool.touched as u64)],
    );
    o.ints(
        "railyard_pool_exhausted_total",
        Kind::Counter,
        "Buffer allocations that found the pool empty.",
        [(Vec::new(), s.pool.exhausted)],
    );
    o.ints(
        "railyard_neighbor_parked_packets",
        Kind::Gauge,
        "Packets waiting on neighbour resolution.",
        [(Vec::new(), s.neighbor_parked as u64)],
    );
}

fn load_balancing(o: &mut Out, s: &SwitchStats) {
    let groups = &s.load_balancing;
    let group = |g: &str| -> Labels { vec![("group", g.to_string())] };
    o.ints(
        "railyard_lb_group_info",
        Kind::Gauge,
        "Always 1; each ECMP/DLB group (route prefix) with its mode (ecmp, flowlet, per-packet).",
        groups
            .iter()
            .map(|(g, x)| (vec![("group", g.clone()), ("mode", x.mode.clone())], 1)),
    );
    type GroupField = (
        &'static str,
        &'static str,
        fn(&railyard_dataplane::stats::GroupStats) -> u64,
    );
    const GROUP_COUNTERS: &[GroupField] = &[
        (
            "railyard_lb_flowlets_started_total",
            "Flowlets started in the group.",
            |g| g.flowlets_started,
        ),
        (
            "railyard_lb_flowlet_moves_total",
            "Flowlets placed on another member than the flow's previous one.",
            |g| g.flowlet_moves,
        ),
        (
            "railyard_lb_per_packet_choices_total",
            "Packets placed one by one (per-packet mode).",
            |g| g.per_packet_choices,
        ),
        (
            "railyard_lb_reorder_risk_total",
            "Packets sent on another member than their flow's previous packet within the flowlet aging (an upper bound on reordering).",
            |g| g.reorder_risk,
        ),
        (
            "railyard_lb_rehashed_total",
            "Packets whose member was down, re-hashed over the members up.",
            |g| g.rehashed,
        ),
        (
            "railyard_lb_pinned_total",
            "Packets sent to their ingress port's static-pinning destination.",
            |g| g.pinned,
        ),
    ];
    for (name, help, field) in GROUP_COUNTERS {
        o.ints(
            name,
            Kind::Counter,
            help,
            groups.iter().map(|(g, x)| (group(g), field(x))),
        );
    }
    let members = || {
        groups.iter().flat_map(|(g, x)| {
            x.members.iter().map(move |m| {
                (
                    vec![
                        ("group", g.clone()),
                        ("interface", m.interface.clone()),
                        ("gateway", m.gateway.clone().unwrap_or_default()),
                    ],
                    m,
                )
            })
        })
    };
    o.ints(
        "railyard_lb_member_packets_total",
        Kind::Counter,
        "Packets sent through the group member.",
        members().map(|(l, m)| (l, m.packets)),
    );
    o.ints(
        "railyard_lb_member_bytes_total",
        Kind::Counter,
        "Bytes sent through the group member.",
        members().map(|(l, m)| (l, m.bytes)),
    );
    o.ints(
        "railyard_lb_member_buckets",
        Kind::Gauge,
        "Buckets of the group's resilient hash table naming the member.",
        members().map(|(l, m)| (l, m.buckets as u64)),
    );
    o.ints(
        "railyard_lb_member_quality_band",
        Kind::Gauge,
        "DLB port quality band of the member, 0 (idle) to 7 (loaded).",
        members().map(|(l, m)| (l, u64::from(m.quality_band))),
    );
    o.family(
        "railyard_lb_member_load_ratio",
        Kind::Gauge,
        "DLB port load of the member as a fraction of its speed, queue included (may exceed 1).",
    );
    for (l, m) in members() {
        o.sample(
            "railyard_lb_member_load_ratio",
            &l,
            f64::from(m.load_percent) / 100.0,
        );
    }
}

fn poll_gaps(o: &mut Out, s: &SwitchStats) {
    let worker = |w: usize| -> Labels { vec![("worker", w.to_string())] };
    const NAME: &str = "railyard_worker_poll_gap_seconds";
    // The workers count gaps per bucket but keep no sum of their lengths,
    // so the histogram has buckets and a count and no _sum.
    o.family(
        NAME,
        Kind::Histogram,
        "Time a worker went between two polls of its ports, counted by bucket (no _sum: the lengths are not summed).",
    );
    let bucket = format!("{NAME}_bucket");
    for (w, g) in s.poll_gaps.iter().enumerate() {
        let mut cumulative = 0u64;
        for (i, n) in g.buckets.iter().enumerate() {
            cumulative = cumulative.saturating_add(*n);
            // The last bucket (longer gaps) is +Inf, written once below
            // with everything counted.
            if let Some(bound) = POLL_GAP_BOUNDS_S.get(i) {
                let mut l = worker(w);
                l.push(("le", bound.to_string()));
                o.sample(&bucket, &l, cumulative);
            }
        }
        let mut l = worker(w);
        l.push(("le", "+Inf".to_string()));
        o.sample(&bucket, &l, cumulative);
        o.sample(&format!("{NAME}_count"), &worker(w), cumulative);
    }
    o.seconds(
        "railyard_worker_poll_gap_max_seconds",
        Kind::Gauge,
        "The longest gap between two polls since the switch started.",
        s.poll_gaps
            .iter()
            .enumerate()
            .map(|(w, g)| (worker(w), g.max_ns)),
    );
    o.seconds(
        "railyard_worker_poll_gap_recent_max_seconds",
        Kind::Gauge,
        "The longest gap between two polls in the last 10 to 20 seconds.",
        s.poll_gaps
            .iter()
            .enumerate()
            .map(|(w, g)| (worker(w), g.recent_max_ns)),
    );
}

fn mac_table(o: &mut Out, s: &SwitchStats) {
    let m = &s.mac_table;
    let count = |kind: &str| m.entries.iter().filter(|e| e.kind == kind).count() as u64;
    o.ints(
        "railyard_mac_table_entries",
        Kind::Gauge,
        "Entries in the MAC address table, by type (static or dynamic).",
        ["static", "dynamic"]
            .into_iter()
            .map(|k| (vec![("type", k.to_string())], count(k))),
    );
    for (name, help, v) in [
        (
            "railyard_mac_table_learned_total",
            "MAC addresses learned.",
            m.learned,
        ),
        (
            "railyard_mac_table_moves_total",
            "MAC addresses that moved between ports.",
            m.moves,
        ),
        (
            "railyard_mac_table_full_total",
            "Sources not learned because the table was full.",
            m.full,
        ),
        (
            "railyard_mac_table_aged_total",
            "Entries removed by aging.",
            m.aged,
        ),
        (
            "railyard_mac_table_flushed_total",
            "Entries removed because their port went down.",
            m.flushed,
        ),
    ] {
        o.ints(name, Kind::Counter, help, [(Vec::new(), v)]);
    }
}

fn vlans(o: &mut Out, s: &SwitchStats) {
    type VlanField = (
        &'static str,
        &'static str,
        fn(&railyard_dataplane::counters::VlanCounters) -> u64,
    );
    const FIELDS: &[VlanField] = &[
        (
            "railyard_vlan_rx_packets_total",
            "Frames that entered the VLAN on a switchport.",
            |v| v.rx_packets,
        ),
        (
            "railyard_vlan_rx_bytes_total",
            "Bytes of the frames that entered the VLAN on a switchport.",
            |v| v.rx_bytes,
        ),
        (
            "railyard_vlan_routed_in_total",
            "Packets routed into the VLAN through its SVI.",
            |v| v.routed_in,
        ),
        (
            "railyard_vlan_flood_copies_total",
            "Copies made to flood frames in the VLAN.",
            |v| v.flood_copies,
        ),
        (
            "railyard_vlan_switched_total",
            "Frames handed to a port's egress in the VLAN.",
            |v| v.switched,
        ),
        (
            "railyard_vlan_to_svi_total",
            "Frames handed to the VLAN's SVI.",
            |v| v.to_svi,
        ),
        (
            "railyard_vlan_dropped_total",
            "Frames dropped in the VLAN (each also counted by reason on its ingress port).",
            |v| v.dropped,
        ),
    ];
    for (name, help, field) in FIELDS {
        o.ints(
            name,
            Kind::Counter,
            help,
            s.vlans
                .iter()
                .map(|(v, c)| (vec![("vlan", v.to_string())], field(c))),
        );
    }
}

fn lldp(o: &mut Out, snapshot: Option<&LldpSnapshot>) {
    let ports = snapshot.map(|s| s.ports.as_slice()).unwrap_or_default();
    o.ints(
        "railyard_lldp_neighbors",
        Kind::Gauge,
        "LLDP neighbours heard on the port and not aged out.",
        ports
            .iter()
            .map(|p| (iface(&p.name), p.neighbors.len() as u64)),
    );
    type LldpField = (&'static str, &'static str, fn(&LldpCounters) -> u64);
    const FIELDS: &[LldpField] = &[
        (
            "railyard_lldp_frames_out_total",
            "LLDP frames transmitted.",
            |c| c.frames_out,
        ),
        (
            "railyard_lldp_frames_in_total",
            "LLDP frames received (valid or not).",
            |c| c.frames_in,
        ),
        (
            "railyard_lldp_frames_in_error_total",
            "LLDP frames that failed validation.",
            |c| c.frames_in_error,
        ),
        (
            "railyard_lldp_frames_discarded_total",
            "LLDP frames not stored: malformed, table full, or receive disabled.",
            |c| c.frames_discarded,
        ),
        (
            "railyard_lldp_tlvs_unrecognized_total",
            "TLVs of unknown type or unknown organisation/subtype.",
            |c| c.tlvs_unrecognized,
        ),
        (
            "railyard_lldp_tlvs_discarded_total",
            "DCBX TLVs that failed to decode.",
            |c| c.tlvs_discarded,
        ),
        (
            "railyard_lldp_ageouts_total",
            "LLDP neighbours removed because their TTL ran out.",
            |c| c.ageouts,
        ),
        (
            "railyard_lldp_too_many_neighbors_total",
            "LLDP frames from a new neighbour dropped because the port had the maximum.",
            |c| c.too_many_neighbors,
        ),
    ];
    for (name, help, field) in FIELDS {
        o.ints(
            name,
            Kind::Counter,
            help,
            ports.iter().map(|p| (iface(&p.name), field(&p.counters))),
        );
    }
}

fn kernel_routes(o: &mut Out, view: Option<&KernelFibView>) {
    type KernelField = (&'static str, Kind, &'static str, fn(&KernelFibView) -> u64);
    const FIELDS: &[KernelField] = &[
        (
            "railyard_kernel_route_adds_total",
            Kind::Counter,
            "Kernel route notifications that added or replaced a route.",
            |k| k.adds,
        ),
        (
            "railyard_kernel_route_deletes_total",
            Kind::Counter,
            "Kernel route notifications that deleted a route or some of its next hops.",
            |k| k.deletes,
        ),
        (
            "railyard_kernel_route_ignored_total",
            Kind::Counter,
            "Kernel route notifications that changed nothing the switch routes.",
            |k| k.ignored,
        ),
        (
            "railyard_kernel_routes",
            Kind::Gauge,
            "Routes the switch holds from the kernel.",
            |k| k.routes,
        ),
        (
            "railyard_kernel_fib_updates_total",
            Kind::Counter,
            "FIB updates handed to the workers.",
            |k| k.fib_updates,
        ),
        (
            "railyard_kernel_fib_update_errors_total",
            Kind::Counter,
            "FIB updates the workers did not acknowledge.",
            |k| k.fib_update_errors,
        ),
        (
            "railyard_kernel_route_resyncs_total",
            Kind::Counter,
            "Full re-reads of the kernel's table after lost notifications.",
            |k| k.resyncs,
        ),
    ];
    for (name, kind, help, field) in FIELDS {
        o.ints(name, *kind, help, view.map(|k| (Vec::new(), field(k))));
    }
    for (name, help, us) in [
        (
            "railyard_kernel_fib_last_update_seconds",
            "Time from the last batch's first change to the workers' acknowledgement.",
            view.map(|k| k.last_update_us),
        ),
        (
            "railyard_kernel_fib_max_update_seconds",
            "The longest time from a batch's first change to the workers' acknowledgement.",
            view.map(|k| k.max_update_us),
        ),
    ] {
        o.seconds(
            name,
            Kind::Gauge,
            help,
            us.map(|us| (Vec::new(), us.saturating_mul(1000))),
        );
    }
}

/// The sample names a switch can export (`_bucket` and `_count` for a
/// histogram, the base name for the summary), from the renderer itself:
/// for checking what dashboards and alerts query.
pub fn exported_names() -> Vec<String> {
    let text = render(&Scrape {
        stats: &SwitchStats::default(),
        lldp: None,
        kernel_routes: None,
        control_socket: None,
    });
    let mut names = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let Some((name, kind)) = rest.split_once(' ') else {
            continue;
        };
        if kind == "histogram" {
            names.extend(["_bucket", "_count"].map(|s| format!("{name}{s}")));
        } else {
            names.push(name.to_string());
        }
    }
    names
}

#[cfg(test)]
mod tests;
