//! The QoS language: real-world configurations compiled field by field,
//! the resolved per-interface view, classifier lowering and the grammar's forms.

mod common;

use common::{clean, ok, one_error, warnings};
use railyard_config::{
    AclRule, Bandwidth, ClassMapKind, ClassifyInput, Direction, FlowKey, InterfaceName, Match,
    MatchMode, NqClass, PauseThresholds, PfcMode, PortMatch, QosPolicyClass, QueueConfig,
    QueueLimit, QueuingClass, RuleTerm, Shape, Threshold, Wred, WredPreset, KBYTE, MBYTE,
};

/// The RoCEv2 switch configuration of Deep Learning for Network Engineers, ch. 11.
const BOOK: &str = "\
class-map type qos match-any ROCEv2
  match dscp 24
class-map type qos match-any CNP
  match dscp 48
policy-map type qos QOS_CLASSIFICATION
  class ROCEv2
    set qos-group 3
  class CNP
    set qos-group 7
  class class-default
    set qos-group 0
policy-map type queuing QOS_EGRESS_PORT
  class type queuing c-out-8q-q6
    bandwidth remaining percent 0
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn
  class type queuing c-out-8q-q7
    priority level 1
policy-map type network-qos qos_network
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
priority-flow-control watch-dog-interval on
system qos
  service-policy type network-qos qos_network
  service-policy type queuing output QOS_EGRESS_PORT
interface Ethernet2/24
  priority-flow-control mode auto
  priority-flow-control watch-dog
  service-policy type qos input QOS_CLASSIFICATION
";

fn e(module: u8, port: u8) -> InterfaceName {
    InterfaceName::new(module, port)
}

fn book_wred() -> Wred {
    Wred {
        min: Threshold::Bytes(150 * 1024),
        max: Threshold::Bytes(3000 * 1024),
        drop_probability: 7,
        weight: 0,
        ecn: true,
        preset: None,
    }
}

#[test]
fn the_book_configuration_compiles_field_by_field() {
    let p = ok(BOOK);
    let c = &p.config;

    let names: Vec<&str> = c.class_maps.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["ROCEv2", "CNP"]);
    let roce = c.class_map("ROCEv2").unwrap();
    assert_eq!(roce.kind, ClassMapKind::Qos);
    assert_eq!(roce.match_mode, MatchMode::Any);
    assert_eq!(roce.matches, [Match::Dscp(1 << 24)]);
    assert_eq!(c.class_map("CNP").unwrap().matches, [Match::Dscp(1 << 48)]);

    let qp = c.qos_policy("QOS_CLASSIFICATION").unwrap();
    let set = |class: &str, g| QosPolicyClass {
        class: class.into(),
        set_qos_group: Some(g),
    };
    assert_eq!(
        qp.classes,
        [set("ROCEv2", 3), set("CNP", 7), set("class-default", 0)]
    );

    let out = c.queuing_policy("QOS_EGRESS_PORT").unwrap();
    assert_eq!(out.direction, Direction::Egress);
    assert_eq!(
        out.classes,
        [
            QueuingClass {
                bandwidth: Some(Bandwidth::RemainingPercent(0)),
                ..QueuingClass::new(6)
            },
            QueuingClass {
                bandwidth: Some(Bandwidth::RemainingPercent(50)),
                wred: Some(book_wred()),
                ..QueuingClass::new(3)
            },
            QueuingClass {
                priority_level: Some(1),
                ..QueuingClass::new(7)
            },
        ]
    );

    let nq = c.network_qos_policy("qos_network").unwrap();
    assert_eq!(
        nq.classes,
        [NqClass {
            qos_group: 3,
            mtu: Some(9216),
            pause_pfc_cos: vec![3],
            ..NqClass::default()
        }]
    );
    assert_eq!(c.pfc_watchdog_interval, Some(true));
    assert_eq!(c.system_qos.network_qos.as_deref(), Some("qos_network"));
    assert_eq!(
        c.system_qos.queuing_output.as_deref(),
        Some("QOS_EGRESS_PORT")
    );
    assert_eq!(c.system_qos.queuing_input, None);
    assert_eq!(c.system_qos.qos_input, None);

    let i = c.interface("Ethernet2/24").unwrap();
    assert_eq!(i.pfc_mode, PfcMode::Auto);
    assert!(!i.pfc_send_tlv);
    assert_eq!(i.pfc_watchdog, Some(true));
    assert_eq!(
        i.service_policy_qos_input.as_deref(),
        Some("QOS_CLASSIFICATION")
    );
    assert_eq!(i.service_policy_queuing_output, None);
    assert!(i.lldp_transmit && i.lldp_receive);

    // The only thing that looks wrong: CNP's strict-priority queue has no shaper.
    assert_eq!(
        warnings(&p),
        [(
            19,
            5,
            "strict-priority queue c-out-8q-q7 of policy-map `QOS_EGRESS_PORT` has no shaper"
                .to_string()
        )]
    );
}

#[test]
fn the_book_configuration_resolves_per_interface() {
    let c = ok(BOOK).config;
    let q = c.effective_qos(&e(2, 24));
    assert_eq!(q.interface, e(2, 24));
    assert_eq!(q.policies.qos_input.as_deref(), Some("QOS_CLASSIFICATION"));
    assert_eq!(
        q.policies.queuing_output.as_deref(),
        Some("QOS_EGRESS_PORT")
    );
    // DSCP 24 → qos-group 3, DSCP 48 → qos-group 7, everything else → 0.
    for (dscp, group) in q.classifier.dscp_table.iter().enumerate() {
        let want = match dscp {
            24 => 3,
            48 => 7,
            _ => 0,
        };
        assert_eq!(*group, want, "DSCP {dscp}");
    }
    assert_eq!(q.classifier.cos_table, None);
    assert!(q.classifier.acl_rules.is_empty());
    assert_eq!(q.classifier.default_group, 0);
    // Egress: the policy's queues, the default output policy for the rest.
    assert_eq!(
        q.egress[3],
        QueueConfig {
            bandwidth: Some(Bandwidth::RemainingPercent(50)),
            wred: Some(book_wred()),
            ..QueueConfig::default()
        }
    );
    assert_eq!(q.egress[7].priority_level, Some(1));
    assert_eq!(q.egress[6].bandwidth, Some(Bandwidth::RemainingPercent(0)));
    assert_eq!(q.egress[0], QueueConfig::default_for(0));
    assert_eq!(
        q.egress[0].bandwidth,
        Some(Bandwidth::RemainingPercent(100))
    );
    for queue in [1, 2, 4, 5] {
        assert_eq!(
            q.egress[queue].bandwidth,
            Some(Bandwidth::RemainingPercent(0)),
            "q{queue}"
        );
    }
    assert!(q.ingress.iter().all(|pg| pg.pause.is_none()));
    // Lossless qos-group 3, paused on priority 3, jumbo MTU.
    assert_eq!(q.lossless, 1 << 3);
    assert_eq!(q.pfc_cos_of_group, [0, 0, 0, 1 << 3, 0, 0, 0, 0]);
    assert_eq!(q.pfc_cos, 1 << 3);
    assert_eq!(
        q.mtu_of_group,
        [1500, 1500, 1500, 9216, 1500, 1500, 1500, 1500]
    );
    assert_eq!(q.pfc_mode, PfcMode::Auto);
    assert!(q.watchdog.enabled);
    assert_eq!(q.watchdog.timers.interval_ms, 100);

    // The walk-through: a RoCEv2 packet lands in 3, its CNP in 7.
    let pkt = |dscp| ClassifyInput {
        dscp: Some(dscp),
        ..ClassifyInput::default()
    };
    assert_eq!(q.classifier.classify(&pkt(24)), 3);
    assert_eq!(q.classifier.classify(&pkt(48)), 7);
    assert_eq!(q.classifier.classify(&pkt(0)), 0);
    assert_eq!(q.classifier.classify(&ClassifyInput::default()), 0);

    // An interface without a qos policy keeps everything in qos-group 0 but
    // still gets the system queuing and network-qos policies.
    let other = c.effective_qos(&e(1, 1));
    assert!(other.classifier.dscp_table.iter().all(|g| *g == 0));
    assert_eq!(other.egress[3].wred, Some(book_wred()));
    assert_eq!(other.lossless, 1 << 3);
    assert!(other.watchdog.enabled, "the global watchdog applies");
}

#[test]
fn without_any_policy_the_nexus_defaults_apply() {
    let c = clean("interface e1/1\n").config;
    let q = c.effective_qos(&e(1, 1));
    assert_eq!(q.egress[7].priority_level, Some(1));
    assert_eq!(q.egress[7].bandwidth, None);
    for queue in 1..=6 {
        assert_eq!(
            q.egress[queue].bandwidth,
            Some(Bandwidth::RemainingPercent(0))
        );
    }
    assert_eq!(
        q.egress[0].bandwidth,
        Some(Bandwidth::RemainingPercent(100))
    );
    assert_eq!(q.mtu_of_group, [1500; 8]);
    assert_eq!((q.lossless, q.pfc_cos), (0, 0));
    assert!(q.classifier.dscp_table.iter().all(|g| *g == 0));
    assert!(!q.watchdog.enabled);
    assert_eq!(q.watchdog.timers.shutdown_multiplier, 1);
    assert_eq!(q.watchdog.timers.auto_restore_multiplier, 10);
    // System-defined policy names mean the defaults too.
    let c = clean("system qos\n  service-policy type queuing output default-8q-out-policy\n  service-policy type network-qos default-nq-policy\n").config;
    assert_eq!(c.effective_qos(&e(1, 1)).egress, q.egress);
}

/// An ingress policy with pause thresholds and an egress policy with two strict levels and shapers.
const INGRESS: &str = "\
feature lldp
class-map type qos match-all ROCE
  match dscp 26
  match cos 3
class-map type qos match-any CNP
  match dscp 48
  match cos 6
policy-map type qos CLASSIFY
  class CNP
    set qos-group 6
  class ROCE
    set qos-group 3
policy-map type queuing IN
  class type queuing c-in-q3
    pause buffer-size 4194304 pause-threshold 3200 kbytes resume-threshold 100 kbytes
  class type queuing c-in-q-default
    queue-limit dynamic 5
policy-map type queuing OUT
  class type queuing c-out-8q-q7
    priority level 1
    shape min 0 gbps max 20 gbps
  class type queuing c-out-8q-q6
    priority level 2
    shape min 1 gbps max 10 gbps
  class type queuing c-out-8q-q3
    bandwidth remaining percent 60
    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 2 ecn
    queue-limit 4 mbytes
  class type queuing c-out-8q-q-default
    bandwidth remaining percent 40
policy-map type network-qos NQ
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
  class type network-qos c-8q-nq-default
    mtu 9216
system qos
  service-policy type network-qos NQ
interface Ethernet1/1-2
  priority-flow-control mode on send-tlv
  service-policy type qos input CLASSIFY
  service-policy type queuing input IN
  service-policy type queuing output OUT
";

#[test]
fn an_ingress_policy_with_pause_thresholds_and_two_strict_levels() {
    let c = clean(INGRESS).config;
    let inp = c.queuing_policy("IN").unwrap();
    assert_eq!(inp.direction, Direction::Ingress);
    assert_eq!(
        inp.classes,
        [
            QueuingClass {
                pause: Some(PauseThresholds {
                    buffer_size: 4 * MBYTE,
                    xoff: 3200 * KBYTE,
                    xon: 100 * KBYTE,
                }),
                ..QueuingClass::new(3)
            },
            QueuingClass {
                queue_limit: Some(QueueLimit::Dynamic(5)),
                ..QueuingClass::new(0)
            },
        ]
    );
    let out = c.queuing_policy("OUT").unwrap();
    assert_eq!(out.direction, Direction::Egress);
    let q7 = out.class(7).unwrap();
    assert_eq!(q7.priority_level, Some(1));
    assert_eq!(
        q7.shape,
        Some(Shape {
            min_bps: 0,
            max_bps: 20_000_000_000
        })
    );
    let q6 = out.class(6).unwrap();
    assert_eq!(q6.priority_level, Some(2));
    assert_eq!(
        q6.shape,
        Some(Shape {
            min_bps: 1_000_000_000,
            max_bps: 10_000_000_000
        })
    );
    let q3 = out.class(3).unwrap();
    assert_eq!(q3.queue_limit, Some(QueueLimit::Bytes(4 * MBYTE)));
    assert_eq!(q3.wred.unwrap().weight, 2);

    for port in [1, 2] {
        let i = c.interface_by_name(&e(1, port)).unwrap();
        assert_eq!((i.pfc_mode, i.pfc_send_tlv), (PfcMode::On, true));
        let q = c.effective_qos(&e(1, port));
        assert_eq!(
            q.ingress[3].pause,
            Some(PauseThresholds {
                buffer_size: 4_194_304,
                xoff: 3_276_800,
                xon: 102_400
            })
        );
        assert_eq!(q.ingress[0].queue_limit, Some(QueueLimit::Dynamic(5)));
        assert_eq!(q.ingress[5].pause, None);
        assert_eq!(q.egress[7].priority_level, Some(1));
        assert_eq!(q.egress[6].priority_level, Some(2));
        assert_eq!(q.egress[0].bandwidth, Some(Bandwidth::RemainingPercent(40)));
        // Queues the policy does not list keep the default policy's settings.
        assert_eq!(q.egress[5], QueueConfig::default_for(5));
        assert_eq!(q.mtu_of_group[0], 9216);
        assert_eq!(q.mtu_of_group[3], 9216);
        assert_eq!(q.mtu_of_group[1], 1500);
        assert_eq!(q.lossless, 1 << 3);
        assert!(!q.watchdog.enabled);
        // match-all DSCP + CoS and match-any DSCP | CoS need rules.
        let rules: Vec<(&str, &[RuleTerm], u8)> = q
            .classifier
            .acl_rules
            .iter()
            .map(|r: &AclRule| (r.class.as_str(), r.terms.as_slice(), r.qos_group))
            .collect();
        assert_eq!(
            rules,
            [
                ("CNP", &[RuleTerm::Dscp(1 << 48)][..], 6),
                ("CNP", &[RuleTerm::Cos(1 << 6)][..], 6),
                (
                    "ROCE",
                    &[RuleTerm::Dscp(1 << 26), RuleTerm::Cos(1 << 3)][..],
                    3
                ),
            ]
        );
        let pkt = |dscp, pcp| ClassifyInput {
            dscp: Some(dscp),
            pcp,
            flow: None,
        };
        assert_eq!(q.classifier.classify(&pkt(26, Some(3))), 3);
        assert_eq!(q.classifier.classify(&pkt(26, Some(0))), 0);
        assert_eq!(q.classifier.classify(&pkt(26, None)), 0);
        assert_eq!(q.classifier.classify(&pkt(0, Some(6))), 6);
        assert_eq!(q.classifier.classify(&pkt(48, None)), 6);
        assert!(q.classifier.dscp_table.iter().all(|g| *g == 0));
    }
}

#[test]
fn classifier_lowering_per_class_shape() {
    let base = "class-map type qos match-any A\n  match precedence 3\n  match dscp 46\nclass-map type qos match-all B\n  match dscp 10-20\n  match dscp 16-30\npolicy-map type qos P\n  class A\n    set qos-group 4\n  class B\n    set qos-group 2\n  class class-default\n    set qos-group 1\ninterface e1/1\n  service-policy type qos input P\n";
    let q = clean(base).config.effective_qos(&e(1, 1));
    for d in 0..64u8 {
        let want = match d {
            24..=31 | 46 => 4,
            16..=20 => 2,
            _ => 1,
        };
        assert_eq!(q.classifier.dscp_table[usize::from(d)], want, "DSCP {d}");
    }
    assert_eq!(q.classifier.default_group, 1);
    // Non-IP traffic goes to class-default's group.
    assert_eq!(q.classifier.classify(&ClassifyInput::default()), 1);

    // CoS only: a CoS table.
    let cos = "class-map type qos match-any C\n  match cos 3,4\npolicy-map type qos P\n  class C\n    set qos-group 3\ninterface e1/1\n  service-policy type qos input P\n";
    let q = clean(cos).config.effective_qos(&e(1, 1));
    assert_eq!(q.classifier.cos_table, Some([0, 0, 0, 3, 3, 0, 0, 0]));
    assert!(q.classifier.acl_rules.is_empty());
    let untagged = ClassifyInput {
        dscp: Some(24),
        ..ClassifyInput::default()
    };
    assert_eq!(q.classifier.classify(&untagged), 0, "untagged is CoS 0");

    // An access group: rules, with the list copied in.
    let acl = "ip access-list ROCE\n  10 permit udp any any eq 4791\nclass-map type qos match-any R\n  match access-group name ROCE\npolicy-map type qos P\n  class R\n    set qos-group 3\ninterface e1/1\n  service-policy type qos input P\n";
    let c = clean(acl).config;
    let q = c.effective_qos(&e(1, 1));
    assert_eq!(q.classifier.acl_rules.len(), 1);
    assert_eq!(
        q.classifier.acl_rules[0].terms,
        [RuleTerm::Access(c.access_list("ROCE").unwrap().clone())]
    );
    let flow = |dport| FlowKey {
        protocol: 17,
        src: "10.0.0.1".parse().unwrap(),
        dst: "10.0.0.2".parse().unwrap(),
        src_port: Some(50000),
        dst_port: Some(dport),
        dscp: 0,
    };
    let pkt = |dport| ClassifyInput {
        dscp: Some(0),
        pcp: None,
        flow: Some(flow(dport)),
    };
    assert_eq!(q.classifier.classify(&pkt(4791)), 3);
    assert_eq!(q.classifier.classify(&pkt(53)), 0);
}

#[test]
fn the_first_matching_class_wins() {
    let text = "class-map type qos match-any A\n  match dscp 24-31\nclass-map type qos match-any B\n  match dscp 24,46\npolicy-map type qos P\n  class A\n    set qos-group 2\n  class B\n    set qos-group 5\ninterface e1/1\n  service-policy type qos input P\n";
    let q = clean(text).config.effective_qos(&e(1, 1));
    assert_eq!(q.classifier.dscp_table[24], 2);
    assert_eq!(q.classifier.dscp_table[46], 5);
    // Mixed kinds keep the order through rules.
    let text = "class-map type qos match-any A\n  match cos 3\nclass-map type qos match-any B\n  match dscp 24\npolicy-map type qos P\n  class A\n    set qos-group 2\n  class B\n    set qos-group 5\ninterface e1/1\n  service-policy type qos input P\n";
    let q = clean(text).config.effective_qos(&e(1, 1));
    let both = ClassifyInput {
        dscp: Some(24),
        pcp: Some(3),
        flow: None,
    };
    assert_eq!(q.classifier.classify(&both), 2);
    assert_eq!(
        q.classifier.classify(&ClassifyInput {
            dscp: Some(24),
            pcp: Some(0),
            flow: None
        }),
        5
    );
    assert_eq!(q.classifier.groups(), (1 << 0) | (1 << 2) | (1 << 5));
}

#[test]
fn dscp_cos_and_precedence_lists_ranges_and_names() {
    let c = clean(
        "class-map type qos match-any X\n  match dscp 10, 12-14,ef af41 cs3\n  match cos 1-2,7\n  match precedence critical 2\n",
    )
    .config;
    let m = &c.class_map("X").unwrap().matches;
    assert_eq!(
        m[0],
        Match::Dscp(
            (1 << 10) | (1 << 12) | (1 << 13) | (1 << 14) | (1 << 46) | (1 << 34) | (1 << 24)
        )
    );
    assert_eq!(m[1], Match::Cos(0b1000_0110));
    assert_eq!(m[2], Match::Precedence((1 << 5) | (1 << 2)));
    // `no match` removes values; an emptied line disappears.
    let c = clean("class-map type qos match-any X\n  match dscp 24-26\n  match cos 3\n  no match dscp 25\n  no match cos 3\n").config;
    assert_eq!(
        c.class_map("X").unwrap().matches,
        [Match::Dscp((1 << 24) | (1 << 26))]
    );
    // Identical lines are kept once; the default mode is match-all.
    let c = clean("class-map type qos Y\n  match dscp 1\n  match dscp 1\n").config;
    let y = c.class_map("Y").unwrap();
    assert_eq!(y.match_mode, MatchMode::All);
    assert_eq!(y.matches.len(), 1);
    // Without `type`, a class-map is a qos class-map.
    assert!(clean("class-map match-any Z\n")
        .config
        .class_map("Z")
        .is_some());
}

#[test]
fn access_lists_by_protocol_addresses_ports_and_dscp() {
    let c = clean(
        "ip access-list ROCE\n  statistics per-entry\n  remark RoCEv2 traffic\n  10 permit udp 10.1.0.0/16 any eq 4791 dscp 26\n  permit tcp host 10.0.0.1 range 1000 2000 10.2.0.0 0.0.255.255 gt 1023\n  5 deny ip any any dscp af41\n  30 permit 47 any any\n  no 30\n  permit icmp any 10.9.0.0/24 log\n",
    )
    .config;
    let acl = c.access_list("ROCE").unwrap();
    let seqs: Vec<u32> = acl.entries.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [5, 10, 20, 30]);
    let e10 = &acl.entries[1];
    assert!(e10.permit);
    assert_eq!(e10.protocol, Some(17));
    assert_eq!(e10.src, Some("10.1.0.0/16".parse().unwrap()));
    assert_eq!(e10.dst, None);
    assert_eq!(e10.dst_port, Some(PortMatch::Eq(4791.into())));
    assert_eq!(e10.dscp, Some(26));
    let e20 = &acl.entries[2];
    assert_eq!(e20.protocol, Some(6));
    assert_eq!(e20.src, Some("10.0.0.1/32".parse().unwrap()));
    assert_eq!(
        e20.src_port,
        Some(PortMatch::Range(1000.into(), 2000.into()))
    );
    assert_eq!(e20.dst, Some("10.2.0.0/16".parse().unwrap()));
    assert_eq!(e20.dst_port, Some(PortMatch::Gt(1023.into())));
    let e5 = &acl.entries[0];
    assert!(!e5.permit);
    assert_eq!((e5.protocol, e5.dscp), (None, Some(34)));
    let e30 = &acl.entries[3];
    assert_eq!(e30.protocol, Some(1), "the icmp entry took seq 30");
    // Named ports, and `no permit …` by content.
    let c = clean("ip access-list A\n  permit tcp any any eq bgp\n  permit udp any any eq 53\n  no permit udp any any eq domain\n").config;
    let acl = c.access_list("A").unwrap();
    assert_eq!(acl.entries.len(), 1);
    assert_eq!(acl.entries[0].dst_port, Some(PortMatch::Eq(179.into())));
}

#[test]
fn unevaluated_access_list_options_keep_the_entry_with_a_warning() {
    let p = ok("ip access-list copp\n  10 permit tcp any any established\n  20 permit icmp any any echo\n  30 permit ip any any\n");
    assert_eq!(
        warnings(&p),
        [
            (
                2,
                25,
                "ip access-list option `established` is not evaluated; the entry is kept as written"
                    .to_string()
            ),
            (
                3,
                26,
                "ip access-list option ICMP message type is not evaluated; the entry is kept as written"
                    .to_string()
            ),
        ]
    );
    let acl = p.config.access_list("copp").unwrap();
    assert_eq!(acl.entries.len(), 3);
    let u = acl.entries[1].unevaluated.as_ref().unwrap();
    assert_eq!(u.options, ["ICMP message type"]);
    assert_eq!(u.text, "icmp any any echo");
    assert_eq!(acl.entries[1].protocol, Some(1));
    assert!(acl.entries[2].unevaluated.is_none());
}

/// Batfish's `acl_l4_fragments_semantics`: skipping the entries with options
/// used to drop a `deny` and renumber the unnumbered lines after it.
#[test]
fn entries_with_unevaluated_options_keep_their_place_and_numbering() {
    let text = "ip access-list F\n  permit icmp host 192.0.2.1 any 0\n  deny icmp host 192.0.2.1 any 1\n  permit 2 host 192.0.2.1 any\n  deny 3 host 192.0.2.1 any\n  permit 4 host 192.0.2.1 any fragments\n  deny 5 host 192.0.2.1 any fragments\n";
    let p = ok(text);
    let acl = p.config.access_list("F").unwrap();
    let got: Vec<_> = acl
        .entries
        .iter()
        .map(|e| (e.seq, e.permit, e.protocol, e.unevaluated.is_some()))
        .collect();
    assert_eq!(
        got,
        [
            (10, true, Some(1), true),
            (20, false, Some(1), true),
            (30, true, Some(2), false),
            (40, false, Some(3), false),
            (50, true, Some(4), true),
            (60, false, Some(5), true),
        ]
    );
    // Printed as written, and read back the same.
    let printed = p.config.to_string();
    assert!(
        printed.contains("  20 deny icmp host 192.0.2.1 any 1\n"),
        "{printed}"
    );
    assert!(
        printed.contains("  60 deny 5 host 192.0.2.1 any fragments\n"),
        "{printed}"
    );
    assert_eq!(ok(&printed).config, p.config);
    // `no deny …` with the same text removes it.
    let p = ok(&format!("{text}  no deny 5 host 192.0.2.1 any fragments\n"));
    assert_eq!(p.config.access_list("F").unwrap().entries.len(), 5);
}

/// Every protocol keyword NX-OS lists for `permit ?`, and numbers 0-255.
#[test]
fn every_nxos_protocol_keyword_and_number() {
    for (name, number) in [
        ("ahp", 51),
        ("eigrp", 88),
        ("esp", 50),
        ("gre", 47),
        ("icmp", 1),
        ("igmp", 2),
        ("nos", 94),
        ("ospf", 89),
        ("pcp", 108),
        ("pim", 103),
        ("tcp", 6),
        ("udp", 17),
    ] {
        let p = clean(&format!("ip access-list A\n  permit {name} any any\n"));
        let e = &p.config.access_list("A").unwrap().entries[0];
        assert_eq!(e.protocol, Some(number), "{name}");
        assert!(
            p.config
                .to_string()
                .contains(&format!("10 permit {name} any any")),
            "{name}"
        );
        let p = clean(&format!("ip access-list A\n  permit {number} any any\n"));
        assert_eq!(
            p.config.access_list("A").unwrap().entries[0].protocol,
            Some(number)
        );
    }
    let p =
        clean("ip access-list A\n  permit ip any any\n  permit 0 any any\n  permit 255 any any\n");
    let protocols: Vec<_> = p
        .config
        .access_list("A")
        .unwrap()
        .entries
        .iter()
        .map(|e| e.protocol)
        .collect();
    assert_eq!(protocols, [None, Some(0), Some(255)]);
    let d = one_error("ip access-list A\n  permit 256 any any\n");
    assert_eq!((d.line, d.col), (2, 10));
    let d = one_error("ip access-list A\n  permit pcq any any\n");
    assert_eq!(d.hint.as_deref(), Some("did you mean `pcp`?"));
}

/// List-level commands NX-OS prints that railyard does not model.
#[test]
fn ignore_routable_and_fragments_at_list_level_are_skipped_with_a_warning() {
    let p = ok("ip access-list A\n  fragments permit-all\n  ignore routable\n  statistics per-entry\n  permit udp any any eq 4791\n");
    assert_eq!(
        warnings(&p),
        [
            (
                2,
                3,
                "ip access-list command `fragments` is not modelled; skipped".to_string()
            ),
            (
                3,
                3,
                "ip access-list command `ignore` is not modelled; skipped".to_string()
            ),
        ]
    );
    assert_eq!(p.config.access_list("A").unwrap().entries.len(), 1);
}

#[test]
fn no_forms_undo_each_setting() {
    let text = format!(
        "{INGRESS}\
policy-map type queuing OUT
  class type queuing c-out-8q-q3
    no random-detect
    no queue-limit
    no bandwidth
  class type queuing c-out-8q-q7
    no shape
    no priority
  no class type queuing c-out-8q-q6
policy-map type queuing IN
  class type queuing c-in-q3
    no pause
policy-map type network-qos NQ
  class type network-qos c-8q-nq3
    no mtu
    no pause pfc-cos
policy-map type qos CLASSIFY
  class ROCE
    no set qos-group
  no class CNP
interface Ethernet1/1
  no priority-flow-control mode
  no service-policy type queuing output OUT
  no lldp transmit
  no lldp receive
system qos
  no service-policy type network-qos NQ
no class-map type qos match-any CNP
"
    );
    let p = ok(&text);
    let c = &p.config;
    let out = c.queuing_policy("OUT").unwrap();
    assert_eq!(out.class(3), Some(&QueuingClass::new(3)));
    assert_eq!(out.class(7), Some(&QueuingClass::new(7)));
    assert_eq!(out.class(6), None);
    assert_eq!(
        c.queuing_policy("IN").unwrap().class(3).unwrap().pause,
        None
    );
    assert_eq!(
        c.network_qos_policy("NQ").unwrap().classes[0],
        NqClass {
            qos_group: 3,
            ..NqClass::default()
        }
    );
    let cl = c.qos_policy("CLASSIFY").unwrap();
    assert_eq!(
        cl.classes,
        [QosPolicyClass {
            class: "ROCE".into(),
            set_qos_group: None
        }]
    );
    assert!(c.class_map("CNP").is_none());
    assert_eq!(c.system_qos.network_qos, None);
    let i1 = c.interface("e1/1").unwrap();
    assert_eq!((i1.pfc_mode, i1.pfc_send_tlv), (PfcMode::Auto, false));
    assert_eq!(i1.service_policy_queuing_output, None);
    assert!(!i1.lldp_transmit && !i1.lldp_receive);
    let i2 = c.interface("e1/2").unwrap();
    assert_eq!(i2.service_policy_queuing_output.as_deref(), Some("OUT"));
    // Whole policies go too; references to them are then errors.
    let unused = "policy-map type queuing IN\n  class type queuing c-in-q1\npolicy-map type network-qos NQ\npolicy-map type qos P\nip access-list A\n";
    let c = ok(&format!(
        "{unused}no policy-map type queuing IN\nno policy-map type network-qos NQ\nno policy-map P\nno ip access-list A\n"
    ))
    .config;
    assert!(c.queuing_policies.is_empty() && c.network_qos_policies.is_empty());
    assert!(c.qos_policies.is_empty() && c.access_lists.is_empty());
    let es = common::errors(&format!("{INGRESS}no policy-map type queuing IN\n"));
    assert_eq!(
        es.len(),
        1,
        "the same line is reported once for the whole range"
    );
    assert!(es
        .iter()
        .all(|d| d.message == "no policy-map type queuing named `IN`"));
}

#[test]
fn indentation_does_not_matter_and_keywords_abbreviate() {
    let flat: String = BOOK
        .lines()
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    assert_eq!(ok(&flat).config, ok(BOOK).config);
    let odd: String = BOOK
        .lines()
        .enumerate()
        .map(|(n, l)| format!("{}{}\n", " ".repeat(n % 3), l.trim_start()))
        .collect();
    assert_eq!(ok(&odd).config, ok(BOOK).config);
    let short = "class-map type qos match-any R\n mat dscp 24\npolicy-map type qos P\n cl R\n  set qos 3\npolicy-map type queuing O\n class type queuing c-out-8q-q3\n  bandwidth rem per 50\n  random min 150 kb max 3000 kb drop 7 wei 0 ecn\n  queue-lim 4 mb\n";
    let c = ok(short).config;
    let q3 = c.queuing_policy("O").unwrap().class(3).unwrap();
    assert_eq!(q3.bandwidth, Some(Bandwidth::RemainingPercent(50)));
    assert_eq!(q3.wred, Some(book_wred()));
    assert_eq!(q3.queue_limit, Some(QueueLimit::Bytes(4 * MBYTE)));
    assert_eq!(c.qos_policy("P").unwrap().classes[0].set_qos_group, Some(3));
}

#[test]
fn exit_and_end_close_nested_sections() {
    let text = "policy-map type qos P\n  class class-default\n    set qos-group 1\n    exit\n  class class-default\n    exit\n  exit\nhostname a\npolicy-map type network-qos N\n  class type network-qos c-8q-nq2\n    mtu 4000\n    end\nhostname b\n";
    let c = clean(text).config;
    assert_eq!(c.hostname.as_deref(), Some("b"));
    assert_eq!(c.qos_policy("P").unwrap().classes.len(), 1);
    assert_eq!(
        c.network_qos_policy("N").unwrap().classes[0].mtu,
        Some(4000)
    );
}

#[test]
fn other_queuing_forms() {
    let text = "policy-map type queuing O\n  class type queuing c-out-8q-q1\n    bandwidth percent 20\n    queue-limit 2000 packets\n    random-detect minimum-threshold 100 packets maximum-threshold 900 packets\n  class type queuing c-out-8q-q2\n    bandwidth 10 gbps\n    queue-limit percent 30\n    random-detect threshold burst-optimized ecn\n  class type queuing c-out-8q-q4\n    random-detect threshold mesh-optimized\n    shape min 500 mbps max 1500000 kbps\n  class type queuing c-out-8q-q5\n    priority\n    shape min 0 bps max 1 gbps\n";
    let c = clean(text).config;
    let o = c.queuing_policy("O").unwrap();
    let q1 = o.class(1).unwrap();
    assert_eq!(q1.bandwidth, Some(Bandwidth::Percent(20)));
    assert_eq!(q1.queue_limit, Some(QueueLimit::Packets(2000)));
    let w = q1.wred.unwrap();
    assert_eq!(
        (w.min, w.max),
        (Threshold::Packets(100), Threshold::Packets(900))
    );
    assert_eq!((w.drop_probability, w.weight, w.ecn), (10, 0, false));
    let q2 = o.class(2).unwrap();
    assert_eq!(q2.bandwidth, Some(Bandwidth::Rate(10_000_000_000)));
    assert_eq!(q2.queue_limit, Some(QueueLimit::Percent(30)));
    assert_eq!(q2.wred, Some(WredPreset::BurstOptimized.wred(true)));
    let q4 = o.class(4).unwrap();
    assert_eq!(q4.wred.unwrap().preset, Some(WredPreset::MeshOptimized));
    assert_eq!(
        q4.shape,
        Some(Shape {
            min_bps: 500_000_000,
            max_bps: 1_500_000_000
        })
    );
    assert_eq!(o.class(5).unwrap().priority_level, Some(1));
}

#[test]
fn the_model_serializes_to_json() {
    let c = ok(BOOK).config;
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["interfaces"][0]["name"], "Ethernet2/24");
    // A set of values serializes as the values, not the model's bitmask.
    assert_eq!(
        json["class_maps"][0]["matches"][0]["Dscp"],
        serde_json::json!([24])
    );
    assert_eq!(json["system_qos"]["network_qos"], "qos_network");
    let q = serde_json::to_value(c.effective_qos(&e(2, 24))).unwrap();
    assert_eq!(q["classifier"]["dscp_table"].as_array().unwrap().len(), 64);
    assert_eq!(q["classifier"]["dscp_table"][24], 3);
    assert_eq!(q["egress"][7]["priority_level"], 1);
    assert_eq!(q["interface"], "Ethernet2/24");
}

/// Every TCP and UDP port keyword NX-OS lists, with its number.
const NXOS_TCP_PORTS: &[(&str, u16)] = &[
    ("bgp", 179),
    ("chargen", 19),
    ("cmd", 514),
    ("daytime", 13),
    ("discard", 9),
    ("domain", 53),
    ("drip", 3949),
    ("echo", 7),
    ("exec", 512),
    ("finger", 79),
    ("ftp", 21),
    ("ftp-data", 20),
    ("gopher", 70),
    ("hostname", 101),
    ("ident", 113),
    ("irc", 194),
    ("klogin", 543),
    ("kshell", 544),
    ("login", 513),
    ("lpd", 515),
    ("nntp", 119),
    ("pim-auto-rp", 496),
    ("pop2", 109),
    ("pop3", 110),
    ("smtp", 25),
    ("sunrpc", 111),
    ("tacacs", 49),
    ("talk", 517),
    ("telnet", 23),
    ("time", 37),
    ("uucp", 540),
    ("whois", 43),
    ("www", 80),
];

/// See [`NXOS_TCP_PORTS`].
const NXOS_UDP_PORTS: &[(&str, u16)] = &[
    ("biff", 512),
    ("bootpc", 68),
    ("bootps", 67),
    ("discard", 9),
    ("dnsix", 195),
    ("domain", 53),
    ("echo", 7),
    ("isakmp", 500),
    ("mobile-ip", 434),
    ("nameserver", 42),
    ("netbios-dgm", 138),
    ("netbios-ns", 137),
    ("netbios-ss", 139),
    ("non500-isakmp", 4500),
    ("ntp", 123),
    ("pim-auto-rp", 496),
    ("rip", 520),
    ("snmp", 161),
    ("snmptrap", 162),
    ("sunrpc", 111),
    ("syslog", 514),
    ("tacacs", 49),
    ("talk", 517),
    ("tftp", 69),
    ("time", 37),
    ("who", 513),
    ("xdmcp", 177),
];

#[test]
fn every_nxos_port_keyword_in_every_operator_round_trips_as_written() {
    for (protocol, list) in [("tcp", NXOS_TCP_PORTS), ("udp", NXOS_UDP_PORTS)] {
        for &(name, number) in list {
            let text = format!(
                "ip access-list A\n  10 permit {protocol} any eq {name} any neq {name}\n  20 permit {protocol} any lt {name} any gt {name}\n  30 permit {protocol} any range {name} 65535 any range 0 {name}\n"
            );
            let p = clean(&text);
            let acl = p.config.access_list("A").unwrap();
            let e = &acl.entries;
            assert_eq!(e[0].src_port, Some(PortMatch::Eq(number.into())), "{name}");
            assert_eq!(e[0].dst_port, Some(PortMatch::Neq(number.into())), "{name}");
            assert_eq!(e[1].src_port, Some(PortMatch::Lt(number.into())), "{name}");
            assert_eq!(e[1].dst_port, Some(PortMatch::Gt(number.into())), "{name}");
            assert_eq!(
                e[2].src_port,
                Some(PortMatch::Range(number.into(), 65535.into())),
                "{name}"
            );
            assert_eq!(
                e[2].dst_port,
                Some(PortMatch::Range(0.into(), number.into())),
                "{name}"
            );
            assert!(e[0].dst_port.unwrap().matches(number.wrapping_add(1)));
            assert!(!e[0].dst_port.unwrap().matches(number));
            // Printed back as written, and read back the same.
            let printed = p.config.to_string();
            let want = format!(
                "ip access-list A\n  10 permit {protocol} any eq {name} any neq {name}\n  20 permit {protocol} any lt {name} any gt {name}\n  30 permit {protocol} any range {name} 65535 any range 0 {name}\n"
            );
            assert_eq!(printed, want);
            assert_eq!(clean(&printed).config, p.config);
        }
    }
    // Upper case is read and printed in NX-OS's spelling.
    let c = clean("ip access-list A\n  permit udp any any eq NETBIOS-NS\n").config;
    assert!(c.to_string().contains("eq netbios-ns\n"), "{c}");
}

#[test]
fn a_misspelt_port_keyword_gets_the_protocols_own_suggestion() {
    let d = one_error("ip access-list A\n  permit udp any any eq netbios-nx\n");
    assert_eq!(d.message, "unknown port `netbios-nx`");
    assert_eq!(d.hint.as_deref(), Some("did you mean `netbios-ns`?"));
}
