//! Tests of the compiler: configurations in, dataplane models and warnings out.

use super::*;

/// The demo's configuration (the file `demo` embeds).
const DEMO: &str = include_str!("../demo.conf");

const BOOK: &str = "hostname rail1
class-map type qos match-any ROCEv2
  match dscp 24
class-map type qos match-all CNP_ON_3
  match dscp 48
  match cos 3
policy-map type qos QOS_CLASSIFICATION
  class ROCEv2
    set qos-group 3
  class CNP_ON_3
    set qos-group 7
policy-map type queuing QOS_EGRESS_PORT
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn
    queue-limit 4 mbytes
  class type queuing c-out-8q-q7
    priority level 1
    shape min 0 gbps max 10 gbps
  class type queuing c-out-8q-q2
    random-detect threshold burst-optimized ecn
system qos
  service-policy type queuing output QOS_EGRESS_PORT
buffer-size 16 mbytes
interface Ethernet1/1
  no switchport
  service-policy type qos input QOS_CLASSIFICATION
interface Ethernet1/2
  no switchport
";

#[test]
fn qos_compiles_into_tables_and_queues() {
    let parsed = railyard_config::parse_str(BOOK, "book.conf", &Default::default()).unwrap();
    let c = compile(&parsed.config).unwrap();
    let e1 = &c.model.interfaces[0];
    // A match-all on DSCP and CoS needs rules; the classes stay in order.
    assert_eq!(e1.acl_rules.len(), 2);
    assert_eq!(e1.acl_rules[0].terms, vec![RuleTermModel::Dscp(1 << 24)]);
    assert_eq!(e1.acl_rules[0].qos_group, 3);
    assert_eq!(
        e1.acl_rules[1].terms,
        vec![RuleTermModel::Dscp(1 << 48), RuleTermModel::Cos(1 << 3)]
    );
    assert_eq!(e1.acl_rules[1].qos_group, 7);
    assert!(
        e1.dscp_to_qos_group.iter().all(|g| *g == 0),
        "tables hold class-default"
    );
    let q3 = e1.queues[3];
    assert_eq!(q3.bandwidth_remaining_percent, Some(50));
    assert_eq!(q3.limit, dp::QueueLimit::Bytes(4 << 20));
    assert_eq!(
        q3.wred,
        Some(WredModel {
            min: 150 * 1024,
            max: 3000 * 1024,
            unit: ThresholdUnit::Bytes,
            drop_probability_percent: 7,
            weight: 0,
            ecn: true,
        })
    );
    assert_eq!(e1.queues[7].priority_level, Some(1));
    assert_eq!(e1.queues[7].shape_max_bps, Some(10_000_000_000));
    assert_eq!(
        e1.queues[2].wred,
        Some(WredModel {
            min: 950 * 1024,
            max: 3000 * 1024,
            unit: ThresholdUnit::Bytes,
            drop_probability_percent: 7,
            weight: 0,
            ecn: true,
        })
    );
    assert_eq!(
        e1.queues[0].bandwidth_remaining_percent,
        Some(100),
        "default policy for q-default"
    );
    assert_eq!(e1.buffer_bytes, 16 << 20);
    // No input policy on Ethernet1/2: everything in qos-group 0.
    let e2 = &c.model.interfaces[1];
    assert!(e2.dscp_to_qos_group.iter().all(|g| *g == 0) && e2.acl_rules.is_empty());
    // A DSCP-only policy compiles to the table alone.
    let dscp_only = BOOK.replace("class CNP_ON_3\n    set qos-group 7\n", "");
    let parsed = railyard_config::parse_str(&dscp_only, "b.conf", &Default::default()).unwrap();
    let e1 = &compile(&parsed.config).unwrap().model.interfaces[0];
    assert!(e1.acl_rules.is_empty());
    assert_eq!(e1.dscp_to_qos_group[24], 3);
    assert_eq!(e1.dscp_to_qos_group[25], 0);
    assert_eq!(e1.pfc.enabled_priorities, 0, "no pause pfc-cos: no PFC");
}

/// The older Nexus 3000/5000 dialect of the RDMA guides: user-named
/// queuing and network-qos classes by qos-group, `pause no-drop`.
#[test]
fn the_older_mqc_dialect_compiles_pfc_onto_the_named_qos_group() {
    const TOR: &str = "class-map type qos match-all ROCE
  match cos 3
class-map type queuing ROCE
  match qos-group 3
class-map type network-qos ROCE
  match qos-group 3
policy-map type qos MARK
  class ROCE
    set qos-group 3
  class class-default
policy-map type queuing OUT
  class type queuing ROCE
    bandwidth percent 50
  class type queuing class-default
    bandwidth percent 50
policy-map type queuing IN
  class type queuing ROCE
    pause buffer-size 101920 pause-threshold 46800 resume-threshold 34320
  class type queuing class-default
policy-map type network-qos NQ
  class type network-qos ROCE
    mtu 2240
    pause no-drop
  class type network-qos class-default
    mtu 9216
system qos
  service-policy type qos input MARK
  service-policy type queuing output OUT
  service-policy type network-qos NQ
interface Ethernet1/1
  no switchport
  priority-flow-control mode on
  service-policy type queuing input IN
interface Ethernet1/2
  no switchport
";
    let c = compiled(TOR);
    let e1 = &c.model.interfaces[0];
    assert_eq!(e1.pfc.enabled_priorities, 1 << 3, "PFC on priority 3 only");
    assert_eq!(e1.pfc.pg[3].xoff_bytes, 46800);
    assert_eq!(e1.pfc.pg[3].xon_bytes, 34320);
    assert_eq!(e1.queues[3].bandwidth_percent, Some(50));
    assert_eq!(e1.queues[0].bandwidth_percent, Some(50));
    // Ethernet1/2 leaves PFC in its default mode (auto): off until DCBX agrees.
    let e2 = &c.model.interfaces[1];
    assert_eq!(e2.pfc.enabled_priorities, 0);
    assert_eq!(e2.queues[3].bandwidth_percent, Some(50));
    // Without `pause no-drop` the class stays lossy.
    let c = compiled(&TOR.replace("    pause no-drop\n", ""));
    assert_eq!(c.model.interfaces[0].pfc.enabled_priorities, 0);
}

/// Access lists as NX-OS writes them classify: `nos` and `pcp` by
/// protocol number, named ports by their number. A list with an entry
/// railyard cannot evaluate (`fragments`) never reaches the dataplane:
/// the class-map using it is rejected before compiling.
#[test]
fn nxos_access_list_keywords_compile_into_the_classifier() {
    let text = "ip access-list ODD
  deny pcp any any
  permit nos any any
  permit udp any any eq rip
class-map type qos match-any ODD
  match access-group name ODD
policy-map type qos P
  class ODD
    set qos-group 2
interface Ethernet1/1
  no switchport
  service-policy type qos input P
";
    let c = compiled(text);
    let rules = &c.model.interfaces[0].acl_rules;
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].qos_group, 2);
    let RuleTermModel::Access(entries) = &rules[0].terms[0] else {
        panic!("expected an access-list term: {:?}", rules[0].terms);
    };
    let got: Vec<_> = entries
        .iter()
        .map(|e| (e.permit, e.protocol, e.dst_port))
        .collect();
    assert_eq!(
        got,
        [
            (false, Some(108), None),
            (true, Some(94), None),
            (true, Some(17), Some(dp::PortMatch::Eq(520))),
        ]
    );
    let with_fragments = text.replace("deny pcp any any", "deny pcp any any fragments");
    let es = railyard_config::parse_str(&with_fragments, "acl.conf", &Default::default())
        .expect_err("a class-map over an unevaluated entry must not load");
    assert!(
        es.iter()
            .any(|d| d.message.contains("entry 10 matches on `fragments`")),
        "{es:?}"
    );
}

fn demo_switch_model() -> SwitchModel {
    compiled(DEMO).model
}

/// Default headroom covers a software path's response on ports a poll
/// loop serves, and the wire's terms alone where replay models the
/// timing; a configured headroom too small for it is named once.
#[test]
fn software_ports_get_headroom_for_their_response_and_short_ones_are_named() {
    let text = include_str!("../../../config/fuzz/seeds/ingress.conf");
    let base = text.split("\ninterface ").next().unwrap();
    const PAUSE: &str =
        "    pause buffer-size 4194304 pause-threshold 3200 kbytes resume-threshold 100 kbytes";
    assert!(base.contains(PAUSE));
    let conf = format!(
        "{base}\ninterface Ethernet1/1\n  no switchport\n  speed 1000\n  \
             priority-flow-control mode on\n  service-policy type queuing input IN\n  \
             bind af-packet veth1\n\
             interface Ethernet1/2\n  no switchport\n  speed 1000\n  \
             priority-flow-control mode on\n  service-policy type queuing input IN\n\
             interface Ethernet1/3\n  no switchport\n  speed 1000\n  \
             priority-flow-control mode on\n  service-policy type queuing input IN\n  \
             bind af-packet veth3\n"
    )
    .replace(PAUSE, "    queue-limit dynamic 5");
    let parsed = railyard_config::parse_str(&conf, "sw.conf", &Default::default()).unwrap();
    let c = compile(&parsed.config).unwrap();
    let [e1, e2, e3] = &c.model.interfaces[..] else {
        panic!("three interfaces: {:?}", c.model.interfaces.len());
    };
    let wire = dp::PgThresholds::default_for(
        Some(1000),
        e1.mtu,
        e1.buffer_bytes,
        &dp::PfcDelays::default(),
    );
    assert_eq!(e2.pfc.pg[3], wire, "no backend: the wire's terms");
    assert_eq!(e1.pfc.pg[3].headroom_bytes, wire.headroom_bytes + 1_250_000);
    assert_eq!(e3.pfc.pg[3], e1.pfc.pg[3]);
    assert_eq!(e1.pfc.enabled_priorities, 1 << 3);
    assert!(
        !c.warnings.iter().any(|w| w.contains("headroom")),
        "{:?}",
        c.warnings
    );

    // A configured 100 KB of headroom is short on both software ports:
    // one warning names them; the unbound port is not named.
    let short = conf.replace(
        "class type queuing c-in-q3\n    queue-limit dynamic 5",
        "class type queuing c-in-q3\n    \
             pause buffer-size 1100000 pause-threshold 1000000 resume-threshold 500000",
    );
    assert_ne!(short, conf);
    let parsed = railyard_config::parse_str(&short, "sw.conf", &Default::default()).unwrap();
    let c = compile(&parsed.config).unwrap();
    let named: Vec<_> = c
        .warnings
        .iter()
        .filter(|w| w.contains("headroom"))
        .collect();
    assert_eq!(named.len(), 1, "{:?}", c.warnings);
    assert!(
        named[0]
            .starts_with("Ethernet1/1 qos-group 3, Ethernet1/3 qos-group 3: headroom 100000 bytes"),
        "{}",
        named[0]
    );
    assert!(named[0].contains(&format!("{} bytes", wire.headroom_bytes + 1_250_000)));
}

/// The warnings about headroom in `c`.
fn headroom_warnings_of(c: &Compiled) -> Vec<&String> {
    c.warnings
        .iter()
        .filter(|w| w.contains("headroom"))
        .collect()
}

/// A configured headroom is held against the delays the interface
/// configures: 20 000 bytes cover the standard wire at 100 Gb/s
/// (2 × 1542 + 12 500 for 100 m + 480 for 3840 bits = 16 064) but not
/// 300 m of cable (37 500 bytes of round trip: 41 064), and the warning
/// names the terms and where each came from; the default derived from
/// the same 300 m covers it, and replay waits out its 3 µs.
#[test]
fn a_port_in_a_tenant_vrf_is_left_out_of_the_default_table() {
    let c = compiled(
        "interface Ethernet1/1\n  no switchport\n  ip address 10.0.0.1/24\n\
             interface Ethernet1/2\n  no switchport\n  vrf member TENANT\n  \
             ip address 10.9.0.1/24\n\
             interface Ethernet1/3\n  no switchport\n  vrf member TENANT\n\
             interface Ethernet1/4\n  no switchport\n  vrf member default\n  \
             ip address 10.4.0.1/24\n",
    );
    let (fib, _) = railyard_dataplane::fib::Fib::build(&c.model);
    let routed = |a: [u8; 4]| fib.lookup(std::net::IpAddr::from(a)).is_some();
    assert!(routed([10, 0, 0, 7]));
    assert!(
        routed([10, 4, 0, 7]),
        "`vrf member default` is the default VRF"
    );
    assert!(
        !routed([10, 9, 0, 7]),
        "the tenant subnet leaked into the default table"
    );
    let [e1, e2, e3, e4] = &c.model.interfaces[..] else {
        panic!("four interfaces")
    };
    assert!(e1.admin_up && e4.admin_up);
    assert!(!e2.admin_up && !e3.admin_up);
    let w: Vec<_> = c
        .warnings
        .iter()
        .filter(|w| w.contains("vrf member"))
        .collect();
    assert_eq!(
        w,
        [
            "Ethernet1/2, Ethernet1/3: `vrf member TENANT`: railyard forwards in the default \
                 VRF only, so they are left out of forwarding (shut, addresses not installed)"
        ]
    );
}

#[test]
fn a_configured_headroom_short_of_the_configured_delays_warns() {
    let text = include_str!("../../../config/fuzz/seeds/ingress.conf");
    let base = text.split("\ninterface ").next().unwrap();
    let small = base.replace(
        "pause buffer-size 4194304 pause-threshold 3200 kbytes resume-threshold 100 kbytes",
        "pause buffer-size 1020000 pause-threshold 1000000 resume-threshold 500000",
    );
    assert_ne!(small, base);
    let port = |n: u8, extra: &str| {
        format!(
            "interface Ethernet1/{n}\n  no switchport\n  speed 100000\n  \
                 priority-flow-control mode on\n  service-policy type queuing input IN\n{extra}"
        )
    };
    let standard = compiled(&format!("{small}\n{}", port(1, "")));
    assert_eq!(
        headroom_warnings_of(&standard),
        Vec::<&String>::new(),
        "16 064 needed, 20 000 configured"
    );
    let long = "  priority-flow-control cable-length 300\n";
    let c = compiled(&format!("{small}\n{}{}", port(1, ""), port(2, long)));
    let w = headroom_warnings_of(&c);
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(
        w[0].starts_with(
            "Ethernet1/2 qos-group 3: headroom 20000 bytes (buffer-size - pause-threshold) \
                 is less than the 41064 bytes a peer sends at 100000 Mb/s"
        ),
        "{}",
        w[0]
    );
    for term in [
        "a 1542-byte frame in flight at each end",
        "300 m of cable (configured; 3000 ns round trip)",
        "peer response 3840 bit times (default; 480 bytes)",
        "`priority-flow-control cable-length`",
    ] {
        assert!(w[0].contains(term), "{term}: {}", w[0]);
    }
    assert!(!w[0].contains("software response"), "{}", w[0]);
    let e2 = &c.model.interfaces[1];
    assert_eq!(e2.pfc.delays.cable_metres, 300);
    assert_eq!(c.model.interfaces[0].pfc.delays, dp::PfcDelays::default());

    // Without the pause line, the default comes from the same terms.
    let c = compiled(&format!("{base}\n{}", port(1, long)).replace(
        "pause buffer-size 4194304 pause-threshold 3200 kbytes resume-threshold 100 kbytes",
        "queue-limit dynamic 5",
    ));
    assert_eq!(c.model.interfaces[0].pfc.pg[3].headroom_bytes, 41_064);
    assert_eq!(headroom_warnings_of(&c), Vec::<&String>::new());

    // A peer answering in 2 µs (25 000 bytes at 100 Gb/s) is named in time.
    let c = compiled(&format!(
        "{small}\n{}",
        port(1, "  priority-flow-control peer-response 2 us\n")
    ));
    let w = headroom_warnings_of(&c);
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(
        w[0].contains("peer response 2000 ns (configured; 25000 bytes)"),
        "{}",
        w[0]
    );
    assert!(w[0].contains("the 40584 bytes"), "{}", w[0]);
}

/// On a software path the configured software response replaces the
/// standard 10 ms: at 10 Gb/s 10 ms is 12.5 MB, cut to the 8 MiB buffer
/// (warned); 500 µs is 625 000 bytes, which fits.
#[test]
fn a_shorter_software_response_takes_a_software_paths_headroom_down() {
    let text = include_str!("../../../config/fuzz/seeds/ingress.conf");
    let base = text.split("\ninterface ").next().unwrap().replace(
        "pause buffer-size 4194304 pause-threshold 3200 kbytes resume-threshold 100 kbytes",
        "queue-limit dynamic 5",
    );
    let conf = |extra: &str| {
        format!(
            "{base}\ninterface Ethernet1/1\n  no switchport\n  speed 10000\n  \
                 priority-flow-control mode on\n  service-policy type queuing input IN\n  \
                 bind af-packet veth1\n{extra}"
        )
    };
    let c = compiled(&conf(""));
    let w = headroom_warnings_of(&c);
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(w[0].contains("the port buffer caps it"), "{}", w[0]);
    assert!(
        w[0].contains("software response 10.0 ms (default)"),
        "{}",
        w[0]
    );
    let c = compiled(&conf("  priority-flow-control software-response 500 us\n"));
    assert_eq!(headroom_warnings_of(&c), Vec::<&String>::new());
    let e1 = &c.model.interfaces[0];
    // 2 × 1542 + 1250 (100 m at 10 Gb/s) + 480 + 625 000.
    assert_eq!(e1.pfc.pg[3].headroom_bytes, 3_084 + 1_250 + 480 + 625_000);
    assert_eq!(e1.pfc.delays.software_response_ns, 500_000);
    // A configured headroom below that need names the configured term.
    let short = conf("  priority-flow-control software-response 500 us\n").replace(
        "queue-limit dynamic 5",
        "pause buffer-size 1100000 pause-threshold 1000000 resume-threshold 500000",
    );
    let c = compiled(&short);
    let w = headroom_warnings_of(&c);
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(
        w[0].contains("software response 500.0 us (configured)"),
        "{}",
        w[0]
    );
    assert!(w[0].contains("measures the real gaps"), "{}", w[0]);
}

#[test]
fn pfc_compiles_from_network_qos_and_ingress_policy() {
    let text = include_str!("../../../config/fuzz/seeds/ingress.conf");
    let parsed = railyard_config::parse_str(text, "ingress.conf", &Default::default()).unwrap();
    let c = compile(&parsed.config).unwrap();
    let e1 = &c.model.interfaces[0];
    assert_eq!(e1.pfc.enabled_priorities, 1 << 3);
    assert_eq!(
        e1.pfc.pg[3],
        dp::PgThresholds {
            xoff_bytes: 3200 * 1024,
            xon_bytes: 100 * 1024,
            headroom_bytes: 4_194_304 - 3200 * 1024,
        }
    );
    assert_eq!(
        e1.pfc.pg[0],
        dp::PgThresholds::default_for(
            e1.speed_mbps,
            e1.mtu,
            e1.buffer_bytes,
            &dp::PfcDelays::default()
        )
    );
    assert_eq!(e1.pfc.quanta, 0xFFFF);
    assert_eq!(e1.pfc.watchdog, None, "no watch-dog-interval");
    let quanta = format!("{text}\npriority-flow-control pause-quanta 4096\n");
    let parsed = railyard_config::parse_str(&quanta, "q.conf", &Default::default()).unwrap();
    assert_eq!(parsed.config.pfc_pause_quanta, Some(4096));
    assert!(parsed
        .config
        .to_string()
        .contains("priority-flow-control pause-quanta 4096"));
    assert_eq!(
        compile(&parsed.config).unwrap().model.interfaces[0]
            .pfc
            .quanta,
        4096
    );
    let bad = format!("{text}\npriority-flow-control pause-quanta 0\n");
    assert!(railyard_config::parse_str(&bad, "q.conf", &Default::default()).is_err());
    let demo = demo_switch_model();
    let wd = demo.interfaces[0].pfc.watchdog.unwrap();
    assert_eq!(
        (
            wd.interval_ns,
            wd.shutdown_multiplier,
            wd.restore_multiplier
        ),
        (100_000_000, 1, 10)
    );
    assert_eq!(
        wd.fixed_restore_multiplier, 0,
        "fixed restore off by default"
    );
    let demo_fixed = format!(
        "{}\npriority-flow-control fixed-restore multiplier 3\n",
        DEMO
    );
    let wd = compiled(&demo_fixed).model.interfaces[0]
        .pfc
        .watchdog
        .unwrap();
    assert_eq!(wd.fixed_restore_multiplier, 3);
    assert_eq!(wd.fixed_restore_ns(), Some(300_000_000));
    assert!(!wd.forward_ingress, "NX-OS drops by default");
    let fwd = format!("{demo_fixed}priority-flow-control watch-dog ingress forward\n");
    let wd = compiled(&fwd).model.interfaces[0].pfc.watchdog.unwrap();
    assert!(wd.forward_ingress);
    let off = text.replace(
        "priority-flow-control mode on send-tlv",
        "priority-flow-control mode off",
    );
    let parsed = railyard_config::parse_str(&off, "off.conf", &Default::default()).unwrap();
    let c = compile(&parsed.config).unwrap();
    assert_eq!(c.model.interfaces[0].pfc.enabled_priorities, 0);
    // `mode auto`: off until DCBX agrees, which a compiled model has no
    // peer for; the lossless set is still what DCBX would offer.
    let auto = text.replace(
        "priority-flow-control mode on send-tlv",
        "priority-flow-control mode auto",
    );
    let parsed = railyard_config::parse_str(&auto, "auto.conf", &Default::default()).unwrap();
    let c = compile(&parsed.config).unwrap();
    let e1 = &c.model.interfaces[0];
    assert_eq!(e1.pfc.enabled_priorities, 0);
    assert_eq!(e1.pfc.pg[3].xoff_bytes, 3200 * 1024, "thresholds kept");
    let eq = parsed
        .config
        .effective_qos(&railyard_config::InterfaceName::new(1, 1));
    assert_eq!(lossless_priorities(&eq), 1 << 3);
    let note = |c: &Compiled| {
        c.warnings
            .iter()
            .filter(|w| w.contains("mode auto: PFC is off until a DCBX peer agrees"))
            .count()
    };
    assert_eq!(note(&c), 2, "Ethernet1/1-2: {:?}", c.warnings);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.starts_with("Ethernet1/1: lossless qos-group 3 ")),
        "{:?}",
        c.warnings
    );
    let on = railyard_config::parse_str(text, "on.conf", &Default::default()).unwrap();
    assert_eq!(note(&compile(&on.config).unwrap()), 0, "mode on: no note");
}

/// The warnings about xON < WRED min < WRED max < xOFF in `c`.
fn order_warnings(c: &Compiled) -> Vec<&String> {
    c.warnings
        .iter()
        .filter(|w| w.contains("break xON < WRED min < WRED max < xOFF"))
        .collect()
}

#[test]
fn check_sees_default_thresholds_out_of_order() {
    // The demo: WRED 150-3000 KB on queue 3 and no `pause` line, so the
    // defaults (xON 512 KB, xOFF 1 MB at the default buffer) are in force.
    let c = compiled(DEMO);
    let w = order_warnings(&c);
    assert_eq!(w.len(), 1, "one warning for the six like ports: {w:?}");
    let t = c.model.interfaces[0].pfc.pg[3];
    assert!(
        w[0].starts_with("qos-group 3 on Ethernet1/1, Ethernet1/2,"),
        "{}",
        w[0]
    );
    assert!(w[0].contains("Ethernet1/32"), "{}", w[0]);
    assert!(
        w[0].contains(&format!(
            "(xON {}, WRED 153600-3072000, xOFF {} bytes)",
            t.xon_bytes, t.xoff_bytes
        )),
        "{}",
        w[0]
    );
    assert!(w[0].contains("the defaults"), "{}", w[0]);
}

#[test]
fn check_is_quiet_when_the_thresholds_in_force_are_in_order() {
    // The book's ingress policy: resume 100 KB < WRED 150 KB < 3000 KB < pause 3200 KB.
    let text = DEMO
            .replace(
                "policy-map type network-qos qos_network",
                "policy-map type queuing IN\n  class type queuing c-in-q3\n    pause buffer-size 4194304 pause-threshold 3276800 resume-threshold 102400\npolicy-map type network-qos qos_network",
            )
            .replace("system qos\n", "system qos\n  service-policy type queuing input IN\n");
    let parsed = railyard_config::parse_str(&text, "t.conf", &Default::default()).unwrap();
    assert!(
        parsed.warnings.iter().all(|d| !d.message.contains("xON")),
        "{:?}",
        parsed.warnings
    );
    let c = compile(&parsed.config).unwrap();
    assert_eq!(order_warnings(&c), Vec::<&String>::new());
    // WRED in packets counts MTU-sized frames (9216 + 14 B): 20 and 300
    // packets sit between xON and xOFF; 400 packets (3,692,000 B) pass
    // xOFF 3200 KB.
    let packets = |max: u32| {
        compiled(&text.replace(
            "minimum-threshold 150 kbytes maximum-threshold 3000 kbytes",
            &format!("minimum-threshold 20 packets maximum-threshold {max} packets"),
        ))
    };
    assert_eq!(order_warnings(&packets(300)), Vec::<&String>::new());
    let c = packets(400);
    let w = order_warnings(&c);
    assert_eq!(w.len(), 1, "{:?}", c.warnings);
    assert!(w[0].contains("WRED 184600-3692000"), "{}", w[0]);
    assert!(w[0].contains("WRED in packets"), "{}", w[0]);
}

fn compiled(text: &str) -> Compiled {
    let parsed = railyard_config::parse_str(text, "lb.conf", &Default::default()).unwrap();
    compile(&parsed.config).unwrap()
}

const FABRIC: &str = "interface Ethernet1/1
  no switchport
interface Ethernet1/2
  no switchport
interface Ethernet1/3
  no switchport
";

#[test]
fn load_sharing_and_dlb_compile_into_the_balance_model() {
    let text = format!(
        "hostname rail1
ip load-sharing address source-destination port source rocev2-dest-qp rotate 8 universal-id 99
hardware profile dlb
  dlb-interface Ethernet1/3, Ethernet1/2
  mode per-packet
  flowlet-aging 200
  decay-factor 4
  no load-awareness
{FABRIC}"
    );
    let lb = compiled(&text).model.load_balance;
    assert_eq!(
        lb.hash,
        dp::EcmpHashModel {
            src_addr: true,
            dst_addr: true,
            src_port: true,
            dst_port: false,
            concatenation: false,
            rocev2_dest_qp: true,
            rotate: 8,
            seed: 99,
        }
    );
    let dlb = lb.dlb.unwrap();
    assert_eq!(dlb.ports, vec![1, 2]);
    assert_eq!(dlb.mode, dp::DlbMode::PerPacket);
    assert_eq!(dlb.flowlet_aging_ns, 200_000);
    assert_eq!(dlb.decay_factor, 4);
    assert!(!dlb.load_awareness);
    assert_eq!(dlb.levels, cfg::DEFAULT_DRE_THRESHOLDS);
    assert_eq!(dlb.mac, MacAddr(cfg::DEFAULT_DLB_MAC));
    // Interfaces renumbered to a running switch's order keep their DLB role.
    let order: Vec<String> = ["Ethernet1/3", "Ethernet1/1", "Ethernet1/2"]
        .map(String::from)
        .to_vec();
    let r = reorder(compiled(&text), &order).unwrap();
    assert_eq!(r.model.load_balance.dlb.unwrap().ports, vec![0, 2]);
}

#[test]
fn default_hash_seed_differs_per_switch_and_dlb_all_takes_every_port() {
    let a = compiled(&format!("hostname rail1\n{FABRIC}")).model;
    let b = compiled(&format!("hostname spine1\n{FABRIC}")).model;
    assert_eq!(a.load_balance.hash.seed, default_universal_id("rail1"));
    assert_ne!(a.load_balance.hash.seed, b.load_balance.hash.seed);
    assert!(a.load_balance.dlb.is_none());
    let all = compiled(&format!(
        "hardware profile dlb\n  dlb-interface all\n{FABRIC}"
    ));
    let dlb = all.model.load_balance.dlb.unwrap();
    assert_eq!(dlb.ports, vec![0, 1, 2]);
    assert_eq!(dlb.mode, dp::DlbMode::Flowlet);
    assert!(dlb.load_awareness);
    let unknown = compiled(&format!(
        "hardware profile dlb\n  dlb-interface Ethernet1/9\n{FABRIC}"
    ));
    assert!(unknown.warnings.iter().any(|w| w.contains("Ethernet1/9")));
}

/// The book's multi-rail-per-switch leaf: interfaces 1–4 in VLAN 101,
/// 5–8 in VLAN 102, an SVI per VLAN as the hosts' gateway, a trunk and a
/// LACP port-channel uplink.
const MULTI_RAIL: &str = "hostname leaf1
feature interface-vlan
feature lacp
vlan 101
  name RAIL-1
vlan 102
  name RAIL-2
interface Ethernet1/1-4
  switchport
  switchport mode access
  switchport access vlan 101
interface Ethernet1/5-8
  switchport
  switchport mode access
  switchport access vlan 102
interface Ethernet1/9
  switchport
  switchport mode trunk
  switchport trunk allowed vlan 101-102,300
interface Ethernet1/31-32
  no switchport
  channel-group 10 mode active
interface port-channel10
  no switchport
  ip address 10.255.0.0/31
interface Vlan101
  no shutdown
  ip address 10.0.1.1/28
interface Vlan102
  no shutdown
  ip address 10.0.2.1/28
mac address-table aging-time 300
mac address-table static 0200.0000.0099 vlan 101 interface Ethernet1/9
";

#[test]
fn the_books_multi_rail_leaf_compiles_into_switchports_svis_and_a_port_channel() {
    let c = compiled(MULTI_RAIL);
    let m = &c.model;
    let port = |n: &str| m.interfaces.iter().position(|i| i.name == n).unwrap();
    for (n, vlan) in [
        ("Ethernet1/1", 101),
        ("Ethernet1/4", 101),
        ("Ethernet1/5", 102),
    ] {
        assert_eq!(
            m.interfaces[port(n)].l2,
            Some(dp::PortL2::access(vlan)),
            "{n}"
        );
    }
    let trunk = m.interfaces[port("Ethernet1/9")].l2.clone().unwrap();
    assert_eq!(trunk.untagged, None, "native VLAN 1 is not allowed on it");
    assert!(trunk.tagged.contains(101) && trunk.tagged.contains(102));
    assert!(!trunk.tagged.contains(300), "VLAN 300 was never created");
    let pc = port("port-channel10");
    assert_eq!(
        m.interfaces[port("Ethernet1/31")].member_of,
        Some(pc as u16)
    );
    assert_eq!(m.interfaces[port("Ethernet1/31")].l2, None);
    let pcm = &m.interfaces[pc];
    assert_eq!(pcm.l2, None, "a routed port-channel");
    assert_eq!(pcm.ipv4, vec![("10.255.0.0".parse().unwrap(), 31)]);
    assert_eq!(
        pcm.logical,
        Some(Logical::PortChannel {
            number: 10,
            members: vec![port("Ethernet1/31") as u16, port("Ethernet1/32") as u16],
        })
    );
    let svi = &m.interfaces[port("Vlan101")];
    assert_eq!(svi.logical, Some(Logical::Svi { vlan: 101 }));
    assert_eq!(svi.ipv4, vec![("10.0.1.1".parse().unwrap(), 28)]);
    assert!(svi.admin_up);
    assert_eq!(c.binds[port("Vlan101")], None);
    assert_eq!(m.mac_table.aging_ns, 300_000_000_000);
    assert_eq!(
        m.mac_table.statics,
        vec![dp::StaticMac {
            vlan: 101,
            mac: MacAddr([2, 0, 0, 0, 0, 0x99]),
            port: port("Ethernet1/9") as u16,
        }]
    );
    assert!(
        !c.warnings.iter().any(|w| w.contains("treating")),
        "no port is forced to be routed: {:?}",
        c.warnings
    );
    // Reordered as a running switch lists them, members still point at
    // their port-channel.
    let mut order: Vec<String> = m.interfaces.iter().map(|i| i.name.clone()).collect();
    order.reverse();
    let r = reorder(c.clone(), &order).unwrap();
    let pc = r
        .model
        .interfaces
        .iter()
        .position(|i| i.name == "port-channel10")
        .unwrap();
    let m31 = r
        .model
        .interfaces
        .iter()
        .position(|i| i.name == "Ethernet1/31")
        .unwrap();
    assert_eq!(r.model.interfaces[m31].member_of, Some(pc as u16));
    let Some(Logical::PortChannel { members, .. }) = &r.model.interfaces[pc].logical else {
        panic!("port-channel10 lost its members");
    };
    assert!(members.contains(&(m31 as u16)));
}

#[test]
fn a_configuration_without_layer_2_keeps_its_unaddressed_ports_routed() {
    let c = compiled("interface Ethernet1/1\n  ip address 10.0.0.1/24\ninterface Ethernet1/2\n");
    assert!(c.model.interfaces.iter().all(|i| i.l2.is_none()));
}

#[test]
fn a_port_channels_service_policy_classifies_on_its_members() {
    let c = compiled(
        "class-map type qos match-any ROCE
  match dscp 24
policy-map type qos CLASSIFY
  class ROCE
    set qos-group 3
interface Ethernet1/1-2
  no switchport
  channel-group 10
interface Ethernet1/3
  no switchport
interface port-channel10
  no switchport
  service-policy type qos input CLASSIFY
  ip address 10.0.0.0/31
",
    );
    let m = &c.model.interfaces;
    assert_eq!(
        m[0].dscp_to_qos_group[24], 3,
        "a member takes its port-channel's policy"
    );
    assert_eq!(m[1].dscp_to_qos_group[24], 3);
    assert_eq!(m[2].dscp_to_qos_group[24], 0, "a port outside it does not");
}
