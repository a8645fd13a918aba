use super::*;
use railyard_dataplane::counters::VlanCounters;
use railyard_dataplane::stats::{
    GroupStats, LatencyStats, MacEntryStats, MemberStats, PollGapStats,
};
use std::collections::BTreeMap;

/// A snapshot with something in every part, and names that need
/// escaping.
fn stats() -> SwitchStats {
    let mut e1 = InterfaceStats {
        mac: "02:00:00:00:00:01".into(),
        admin_up: true,
        link_up: true,
        backend: "af-packet \"p1\"\\x\nnext".into(),
        mtu: 9216,
        speed_mbps: Some(100_000),
        rx_packets: 10,
        rx_bytes: 1000,
        tx_packets: 7,
        backend_rx_wait_max_ns: 1_500_000,
        drops: BTreeMap::from([("no-route".to_string(), 3), ("wred".to_string(), 2)]),
        ..InterfaceStats::default()
    };
    e1.queues = vec![
        QueueStats {
            queue: 0,
            tx_packets: 5,
            ecn_marked: 4,
            depth_bytes: 3000,
            latency_ns: LatencyStats {
                p50: 1_000,
                p99: 250_000,
                max: 2_000_000_000,
            },
            ..QueueStats::default()
        },
        QueueStats {
            queue: 3,
            ecn_marked: 9,
            ..QueueStats::default()
        },
    ];
    e1.pfc.enabled = 0b0000_1000;
    e1.pfc.tx_pause[3] = 42;
    e1.pfc.paused_ns[3] = 2_500_000_000;
    let mut s = SwitchStats {
        hostname: "leaf1".into(),
        ..SwitchStats::default()
    };
    s.interfaces.insert("Ethernet1/1".into(), e1);
    s.interfaces
        .insert("Ethernet1/2".into(), InterfaceStats::default());
    s.load_balancing.insert(
        "10.0.2.0/24".into(),
        GroupStats {
            mode: "flowlet".into(),
            members: vec![
                MemberStats {
                    interface: "Ethernet1/1".into(),
                    gateway: Some("10.0.1.2".into()),
                    packets: 11,
                    load_percent: 150,
                    ..MemberStats::default()
                },
                MemberStats {
                    interface: "Ethernet1/2".into(),
                    packets: 12,
                    ..MemberStats::default()
                },
            ],
            flowlets_started: 5,
            ..GroupStats::default()
        },
    );
    s.poll_gaps = vec![
        PollGapStats {
            recent_max_ns: 30_000,
            max_ns: 7_000_000,
            buckets: vec![100, 20, 3, 0, 1, 0, 2],
        },
        PollGapStats::default(),
    ];
    s.mac_table.learned = 6;
    s.mac_table.entries = vec![MacEntryStats {
        vlan: 10,
        mac: "02:00:00:00:00:09".into(),
        port: "Ethernet1/2".into(),
        kind: "dynamic".into(),
        age_secs: 3,
    }];
    s.vlans.insert(
        10,
        VlanCounters {
            rx_packets: 8,
            ..VlanCounters::default()
        },
    );
    s.monitor_sessions.insert(
        2,
        railyard_dataplane::span::SpanCounters {
            mirrored: 23,
            queue_full: 4,
            ..Default::default()
        },
    );
    s
}

fn text() -> String {
    render(&Scrape {
        stats: &stats(),
        lldp: None,
        kernel_routes: Some(&KernelFibView {
            adds: 1,
            routes: 1,
            ..KernelFibView::default()
        }),
        control_socket: Some(&crate::mgmt::CounterSnapshot {
            accepted: 1005,
            request_timeouts: 1001,
            ..crate::mgmt::CounterSnapshot::default()
        }),
    })
}

/// The value of the sample written exactly as `series`.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

/// Families in order of first appearance, with their TYPE, and the
/// sample lines each family's name prefixes.
fn families(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|r| r.split_once(' '))
        .map(|(n, k)| (n.to_string(), k.to_string()))
        .collect()
}

#[test]
fn every_part_of_the_snapshot_has_its_families() {
    let t = text();
    for (series, v) in [
        ("railyard_switch_info{hostname=\"leaf1\"}", 1.0),
        (
            "railyard_interface_rx_packets_total{interface=\"Ethernet1/1\"}",
            10.0,
        ),
        (
            "railyard_interface_speed_bits_per_second{interface=\"Ethernet1/1\"}",
            1e11,
        ),
        (
            "railyard_interface_backend_rx_wait_max_seconds{interface=\"Ethernet1/1\"}",
            0.0015,
        ),
        (
            "railyard_drops_total{interface=\"Ethernet1/1\",reason=\"no-route\"}",
            3.0,
        ),
        (
            "railyard_queue_ecn_marked_total{interface=\"Ethernet1/1\",queue=\"3\"}",
            9.0,
        ),
        (
            "railyard_queue_depth_bytes{interface=\"Ethernet1/1\",queue=\"0\"}",
            3000.0,
        ),
        (
            "railyard_queue_sojourn_seconds{interface=\"Ethernet1/1\",queue=\"0\",quantile=\"0.99\"}",
            0.00025,
        ),
        (
            "railyard_queue_sojourn_seconds{interface=\"Ethernet1/1\",queue=\"0\",quantile=\"1\"}",
            2.0,
        ),
        (
            "railyard_pfc_tx_pause_total{interface=\"Ethernet1/1\",priority=\"3\"}",
            42.0,
        ),
        (
            "railyard_pfc_enabled{interface=\"Ethernet1/1\",priority=\"3\"}",
            1.0,
        ),
        (
            "railyard_pfc_enabled{interface=\"Ethernet1/1\",priority=\"2\"}",
            0.0,
        ),
        (
            "railyard_pfc_paused_seconds_total{interface=\"Ethernet1/1\",priority=\"3\"}",
            2.5,
        ),
        (
            "railyard_lb_member_packets_total{group=\"10.0.2.0/24\",interface=\"Ethernet1/1\",gateway=\"10.0.1.2\"}",
            11.0,
        ),
        (
            "railyard_lb_member_load_ratio{group=\"10.0.2.0/24\",interface=\"Ethernet1/1\",gateway=\"10.0.1.2\"}",
            1.5,
        ),
        (
            "railyard_lb_group_info{group=\"10.0.2.0/24\",mode=\"flowlet\"}",
            1.0,
        ),
        ("railyard_lb_flowlets_started_total{group=\"10.0.2.0/24\"}", 5.0),
        ("railyard_worker_poll_gap_max_seconds{worker=\"0\"}", 0.007),
        ("railyard_mac_table_entries{type=\"dynamic\"}", 1.0),
        ("railyard_mac_table_learned_total", 6.0),
        ("railyard_vlan_rx_packets_total{vlan=\"10\"}", 8.0),
        ("railyard_kernel_route_adds_total", 1.0),
        ("railyard_pool_buffers_touched", 0.0),
        ("railyard_monitor_session_mirrored_total{session=\"2\"}", 23.0),
        (
            "railyard_monitor_session_dropped_total{session=\"2\",reason=\"queue_full\"}",
            4.0,
        ),
        ("railyard_control_socket_connections_total", 1005.0),
        (
            "railyard_control_socket_refused_total{reason=\"request_timeout\"}",
            1001.0,
        ),
    ] {
        assert_eq!(value(&t, series), Some(v), "{series} in\n{t}");
    }
    // Each family once, all of its samples together right after it.
    let fams = families(&t);
    let mut seen = std::collections::HashSet::new();
    for (n, _) in &fams {
        assert!(seen.insert(n.clone()), "{n} twice");
        assert!(t.contains(&format!("# HELP {n} ")), "{n} has no HELP");
    }
    let mut current = String::new();
    for l in t.lines() {
        if let Some(r) = l.strip_prefix("# TYPE ") {
            current = r.split(' ').next().unwrap_or_default().to_string();
        } else if !l.starts_with('#') {
            let name = l.split(['{', ' ']).next().unwrap_or_default();
            let base = name
                .strip_suffix("_bucket")
                .or_else(|| name.strip_suffix("_count"))
                .filter(|b| *b == current)
                .unwrap_or(name);
            assert_eq!(base, current, "{l} outside its family");
        }
    }
}

#[test]
fn counters_end_in_total_and_nothing_else_does() {
    for (name, kind) in families(&text()) {
        assert!(name.starts_with("railyard_"), "{name}");
        assert_eq!(
            kind == "counter",
            name.ends_with("_total"),
            "{name} is a {kind}"
        );
    }
}

#[test]
fn label_values_are_escaped() {
    let t = text();
    assert!(t.contains(r#"backend="af-packet \"p1\"\\x\nnext""#), "{t}");
    assert_eq!(escape_label("a\\b\"c\nd"), r#"a\\b\"c\nd"#);
    // No raw newline inside a sample line: every line is a comment or
    // `name[{…}] value`.
    for l in t.lines().filter(|l| !l.starts_with('#')) {
        let value = l.rsplit(' ').next().unwrap_or_default();
        assert!(value.parse::<f64>().is_ok(), "{l}");
    }
}

#[test]
fn poll_gap_histogram_is_cumulative_and_ends_in_inf_equal_to_count() {
    let t = text();
    let n = "railyard_worker_poll_gap_seconds";
    let mut previous = 0.0;
    let mut les = Vec::new();
    for l in t
        .lines()
        .filter(|l| l.starts_with(&format!("{n}_bucket{{worker=\"0\"")))
    {
        let v: f64 = l.rsplit(' ').next().unwrap_or_default().parse().unwrap();
        assert!(v >= previous, "not cumulative at {l}");
        previous = v;
        les.push(
            l.split("le=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(les.len(), POLL_GAP_BOUNDS_S.len() + 1, "{les:?}");
    assert_eq!(les.last().map(String::as_str), Some("+Inf"));
    let count = value(&t, &format!("{n}_count{{worker=\"0\"}}"));
    assert_eq!(count, Some(126.0));
    assert_eq!(previous, 126.0);
    assert_eq!(
        value(&t, &format!("{n}_bucket{{worker=\"0\",le=\"0.0001\"}}")),
        Some(120.0)
    );
    // A worker with no gaps counted still has its +Inf and count.
    assert_eq!(
        value(&t, &format!("{n}_bucket{{worker=\"1\",le=\"+Inf\"}}")),
        Some(0.0)
    );
}

#[test]
fn an_empty_switch_exports_the_same_families() {
    let empty = render(&Scrape {
        stats: &SwitchStats::default(),
        lldp: None,
        kernel_routes: None,
        control_socket: None,
    });
    assert_eq!(families(&empty), families(&text()));
    let names = exported_names();
    assert!(names.contains(&"railyard_queue_ecn_marked_total".to_string()));
    assert!(names.contains(&"railyard_worker_poll_gap_seconds_bucket".to_string()));
    assert!(names.contains(&"railyard_lldp_neighbors".to_string()));
}

#[test]
fn lldp_neighbours_and_counters_per_port() {
    use railyard_lldp::fixture::{leaf1, peer_frame};
    let mut agent = railyard_lldp::Agent::new(leaf1(), 0);
    agent.receive(0, &peer_frame([2, 0, 0, 0, 0, 9], "p1", 120, vec![]), 1);
    let snapshot = agent.snapshot();
    let port = &snapshot.ports[0].name;
    let t = render(&Scrape {
        stats: &SwitchStats::default(),
        lldp: Some(&snapshot),
        kernel_routes: None,
        control_socket: None,
    });
    assert_eq!(
        value(
            &t,
            &format!("railyard_lldp_neighbors{{interface=\"{port}\"}}")
        ),
        Some(1.0),
        "{t}"
    );
    assert_eq!(
        value(
            &t,
            &format!("railyard_lldp_frames_in_total{{interface=\"{port}\"}}")
        ),
        Some(1.0),
        "{t}"
    );
}

#[test]
fn seconds_are_exact() {
    assert_eq!(Seconds(0).to_string(), "0");
    assert_eq!(Seconds(1_500_000_000).to_string(), "1.5");
    assert_eq!(Seconds(1).to_string(), "0.000000001");
    assert_eq!(Seconds(250_000).to_string(), "0.00025");
}
