//! Global commands: the PFC watchdog, `hardware profile dlb`, `ip
//! load-sharing`, LLDP, and railyard's `buffer-size` extension.

mod common;

use common::{clean, ok, parse_strict};
use railyard_config::{
    CustomTlv, DcbxVersion, Dlb, DlbInterfaces, DlbMode, DlbPin, InterfaceName, LldpTlvSelect,
    LoadSharing, PfcWatchdogTimers, DEFAULT_DECAY_FACTOR, DEFAULT_DLB_MAC, DEFAULT_DRE_THRESHOLDS,
    DEFAULT_FLOWLET_TABLE_SIZE, DEFAULT_SAMPLING_INTERVAL_NS, MBYTE,
};

#[test]
fn the_pfc_watchdog_and_its_timers() {
    let c = clean("priority-flow-control watch-dog-interval on\npriority-flow-control watch-dog interval 200\npriority-flow-control watch-dog shutdown-multiplier 3\npriority-flow-control auto-restore multiplier 20\npriority-flow-control fixed-restore multiplier 15\n").config;
    assert_eq!(c.pfc_watchdog_interval, Some(true));
    assert_eq!(
        c.pfc_watchdog,
        PfcWatchdogTimers {
            interval_ms: 200,
            shutdown_multiplier: 3,
            auto_restore_multiplier: 20,
            fixed_restore_multiplier: 15,
        }
    );
    let c = clean("priority-flow-control watch-dog interval 200\npriority-flow-control watch-dog shutdown-multiplier 3\nno priority-flow-control watch-dog interval\nno priority-flow-control watch-dog shutdown-multiplier\npriority-flow-control watch-dog-interval off\n").config;
    assert_eq!(c.pfc_watchdog, PfcWatchdogTimers::default());
    assert_eq!(c.pfc_watchdog_interval, Some(false));
    // The interface setting overrides the global one.
    let c = clean("priority-flow-control watch-dog-interval on\ninterface e1/1\n  priority-flow-control watch-dog-interval off\ninterface e1/2\n").config;
    assert!(!c.effective_qos(&InterfaceName::new(1, 1)).watchdog.enabled);
    assert!(c.effective_qos(&InterfaceName::new(1, 2)).watchdog.enabled);
}

#[test]
fn a_global_command_after_an_indented_interface_body_is_global() {
    let c =
        clean("interface e1/1\n  mtu 9216\npriority-flow-control watch-dog-interval on\n").config;
    assert_eq!(c.pfc_watchdog_interval, Some(true));
    assert_eq!(c.interfaces[0].pfc_watchdog, None);
    // Indented under the interface it is the interface's.
    let c =
        clean("interface e1/1\n  mtu 9216\n  priority-flow-control watch-dog-interval on\n").config;
    assert_eq!(c.pfc_watchdog_interval, None);
    assert_eq!(c.interfaces[0].pfc_watchdog, Some(true));
}

#[test]
fn hardware_profile_dlb_with_every_sub_command() {
    let text = "hardware profile dlb\n  dlb-interface Ethernet1/1, Ethernet1/2\n  dlb-interface e1/5-6\n  mode per-packet\n  mac-address 00:AA:BB:CC:DD:EE\n  flowlet-aging 256\n  dre-thresholds level-1 15 level-2 20 level-3 30 level-4 15 level-5 10 level-6 5 level-7 5\n  decay-factor 4\n  sampling-interval 256 nsecs\n  load-awareness\n  flowlet-table-size 65536\n  static-pinning\n  source Ethernet1/9 destination Ethernet1/2\n  exit\n";
    let c = clean(text).config;
    let d = c.dlb.clone().unwrap();
    assert_eq!(
        d,
        Dlb {
            interfaces: DlbInterfaces::List(vec![
                InterfaceName::new(1, 1),
                InterfaceName::new(1, 2),
                InterfaceName::new(1, 5),
                InterfaceName::new(1, 6),
            ]),
            mode: DlbMode::PerPacket,
            mac_address: [0x00, 0xaa, 0xbb, 0xcc, 0xdd, 0xee],
            flowlet_aging_us: 256,
            dre_thresholds: Some([15, 20, 30, 15, 10, 5, 5]),
            decay_factor: Some(4),
            sampling_interval_ns: Some(256),
            load_awareness: true,
            flowlet_table_size: 65536,
            policy_driven: false,
            static_pinning: vec![DlbPin {
                source: InterfaceName::new(1, 9),
                destination: InterfaceName::new(1, 2),
            }],
        }
    );
    assert_eq!(clean(&c.to_string()).config, c);
    // Defaults, `all`, and the `no` forms.
    let c = clean("hardware profile dlb\n").config;
    let d = c.dlb.unwrap();
    assert_eq!(d, Dlb::default());
    assert_eq!(d.mac_address, DEFAULT_DLB_MAC);
    assert_eq!((d.flowlet_aging_us, d.mode), (500, DlbMode::Flowlet));
    assert!(d.load_awareness);
    assert_eq!(d.flowlet_table_size, DEFAULT_FLOWLET_TABLE_SIZE);
    assert_eq!(d.dre_thresholds_or_default(), DEFAULT_DRE_THRESHOLDS);
    assert_eq!(d.decay_factor_or_default(), DEFAULT_DECAY_FACTOR);
    assert_eq!(
        d.sampling_interval_ns_or_default(),
        DEFAULT_SAMPLING_INTERVAL_NS
    );
    let undo = format!("{text}hardware profile dlb\n  dlb-interface all\n  no mode\n  no mac-address\n  no flowlet-aging\n  no dre-thresholds\n  no decay-factor\n  no sampling-interval\n  no load-awareness\n  no flowlet-table-size\n  no static-pinning\n");
    let c = clean(&undo).config;
    let d = c.dlb.clone().unwrap();
    assert_eq!(
        d,
        Dlb {
            interfaces: DlbInterfaces::All,
            load_awareness: false,
            ..Dlb::default()
        }
    );
    assert_eq!(
        c.to_string(),
        "hardware profile dlb\n  dlb-interface all\n  no load-awareness\n"
    );
    assert_eq!(clean(&c.to_string()).config, c);
    assert_eq!(
        clean(&format!("{text}no hardware profile dlb\n"))
            .config
            .dlb,
        None
    );
    // Other `hardware` commands are still skipped with a warning.
    let p = ok("hardware access-list tcam region ing-racl 1536\n");
    assert_eq!(p.warnings[0].message, "`hardware` is not modelled; skipped");
}

#[test]
fn ip_load_sharing_forms() {
    let ls = |line: &str| clean(line).config.load_sharing;
    assert_eq!(
        ls("ip load-sharing address source-destination port source-destination\n"),
        LoadSharing::default()
    );
    assert_eq!(
        ls("ip load-sharing address source-destination port source-destination rotate 7 universal-id 12345\n"),
        LoadSharing {
            rotate: Some(7),
            universal_id: Some(12345),
            ..LoadSharing::default()
        }
    );
    assert_eq!(
        ls("ip load-sharing address destination\n"),
        LoadSharing {
            src_addr: false,
            src_port: false,
            dst_port: false,
            ..LoadSharing::default()
        }
    );
    assert_eq!(
        ls("ip load-sharing address source port source concatenation\n"),
        LoadSharing {
            dst_addr: false,
            dst_port: false,
            concatenation: true,
            ..LoadSharing::default()
        }
    );
    assert_eq!(
        ls("ip load-sharing address source port source\nno ip load-sharing\n"),
        LoadSharing::default()
    );
    // railyard's `rocev2-dest-qp`, anywhere among the optional keywords.
    let qp = LoadSharing {
        concatenation: true,
        rocev2_dest_qp: true,
        rotate: Some(5),
        ..LoadSharing::default()
    };
    for line in [
        "ip load-sharing address source-destination port source-destination concatenation rocev2-dest-qp rotate 5\n",
        "ip load-sharing rocev2-dest-qp address source-destination rotate 5 port source-destination concatenation\n",
        "ip load-sharing address source-destination rotate 5 concatenation port source-destination ROCEV2-DEST-QP\n",
    ] {
        assert_eq!(ls(line), qp, "{line}");
    }
    assert!(!LoadSharing::default().rocev2_dest_qp);
    assert_eq!(
        ls("ip load-sharing address destination rocev2-dest-qp\n"),
        LoadSharing {
            src_addr: false,
            src_port: false,
            dst_port: false,
            rocev2_dest_qp: true,
            ..LoadSharing::default()
        }
    );
}

#[test]
fn ip_load_sharing_prints_rocev2_dest_qp_after_concatenation() {
    let c = clean("ip load-sharing universal-id 9 rocev2-dest-qp rotate 5 concatenation address source-destination port source-destination\n").config;
    let text = c.to_string();
    assert_eq!(
        text,
        "ip load-sharing address source-destination port source-destination concatenation rocev2-dest-qp rotate 5 universal-id 9\n"
    );
    assert_eq!(clean(&text).config, c);
    // On its own it still makes the line differ from the default, so it prints.
    let c = clean(
        "ip load-sharing address source-destination port source-destination rocev2-dest-qp\n",
    )
    .config;
    assert_eq!(
        c.to_string(),
        "ip load-sharing address source-destination port source-destination rocev2-dest-qp\n"
    );
    assert_eq!(clean(&c.to_string()).config, c);
}

#[test]
fn dlb_flowlet_table_size_and_load_awareness_print_only_off_default() {
    for n in [256u32, 512, 4096, 65536, 1 << 20] {
        let c = clean(&format!("hardware profile dlb\n  flowlet-table-size {n}\n")).config;
        assert_eq!(c.dlb.as_ref().unwrap().flowlet_table_size, n);
        let text = c.to_string();
        assert_eq!(
            text.contains("flowlet-table-size"),
            n != DEFAULT_FLOWLET_TABLE_SIZE,
            "{text}"
        );
        assert_eq!(clean(&text).config, c);
    }
    // `load-awareness` is accepted and is the default, so it does not print.
    let c = clean("hardware profile dlb\n  no load-awareness\n  load-awareness\n").config;
    assert_eq!(c.dlb, Some(Dlb::default()));
    assert_eq!(c.to_string(), "hardware profile dlb\n");
}

#[test]
fn lldp_globals_and_per_interface_switches() {
    let c = clean("feature lldp\nlldp timer 10\nlldp holdtime 40\nlldp reinit 5\nno lldp tlv-select dcbxp\nno lldp tlv-select system-name\ninterface e1/1\n  no lldp transmit\ninterface e1/2\n  no lldp receive\n  lldp receive\n").config;
    let l = &c.lldp;
    assert!(l.enabled);
    assert_eq!((l.timer_s, l.holdtime_s, l.reinit_s), (10, 40, 5));
    assert!(!l.tlv_select.dcbxp && !l.tlv_select.system_name);
    assert!(l.tlv_select.port_description);
    let e1 = c.interface("e1/1").unwrap();
    assert!(!e1.lldp_transmit && e1.lldp_receive);
    let e2 = c.interface("e1/2").unwrap();
    assert!(e2.lldp_transmit && e2.lldp_receive);
    // NX-OS defaults.
    let d = ok("").config.lldp;
    assert!(!d.enabled);
    assert_eq!((d.timer_s, d.holdtime_s, d.reinit_s), (30, 120, 2));
    assert_eq!(d.tlv_select, LldpTlvSelect::default());
    let c = clean("feature lldp\nlldp timer 10\nno lldp timer\nno lldp tlv-select dcbxp\nlldp tlv-select dcbxp\n").config;
    assert_eq!(c.lldp.timer_s, 30);
    assert!(c.lldp.tlv_select.dcbxp);
    // `no feature lldp` turns it off again.
    assert!(!clean("feature lldp\nno feature lldp\n").config.lldp.enabled);
    // Other LLDP commands are still skipped.
    let p = ok("lldp portid-subtype 1\n");
    assert_eq!(p.warnings[0].message, "`lldp` is not modelled; skipped");
}

#[test]
fn lldp_custom_tlvs_add_replace_and_remove_by_oui_and_subtype() {
    let tlv = |oui, subtype, info: &[u8]| CustomTlv {
        oui,
        subtype,
        info: info.to_vec(),
    };
    // The three OUI forms, either case; `info` is optional.
    let c = clean("feature lldp\nlldp tlv custom oui 00:11:22 subtype 5 info 0a0B\nlldp tlv custom oui AB-CD-EF subtype 0\nlldp tlv custom oui 00,1b,21 subtype 255\n").config;
    assert_eq!(
        c.lldp.custom_tlvs,
        [
            tlv([0x00, 0x11, 0x22], 5, &[0x0a, 0x0b]),
            tlv([0xab, 0xcd, 0xef], 0, &[]),
            tlv([0x00, 0x1b, 0x21], 255, &[]),
        ]
    );
    // The same OUI and subtype again replaces the entry where it stands;
    // another subtype is another entry; keywords abbreviate.
    let c = clean("feature lldp\nlldp tlv custom oui 00:11:22 subtype 5 info 01\nlldp tlv custom oui 00:11:22 subtype 6\nlldp tlv custom oui 00-11-22 subtype 5 info 0203\nlldp tlv cust o 00:11:22 s 7 i ff\n").config;
    assert_eq!(
        c.lldp.custom_tlvs,
        [
            tlv([0x00, 0x11, 0x22], 5, &[2, 3]),
            tlv([0x00, 0x11, 0x22], 6, &[]),
            tlv([0x00, 0x11, 0x22], 7, &[0xff]),
        ]
    );
    // `no` removes by OUI and subtype only, whatever info follows; an absent entry is no error.
    let c = clean("feature lldp\nlldp tlv custom oui 00:11:22 subtype 5 info 01\nlldp tlv custom oui 00:11:22 subtype 6\nno lldp tlv custom oui 00,11,22 subtype 5 info 99\nno lldp tlv custom oui 00:11:22 subtype 9\n").config;
    assert_eq!(c.lldp.custom_tlvs, [tlv([0x00, 0x11, 0x22], 6, &[])]);
    // The longest info fits.
    let long = "ab".repeat(507);
    let c = clean(&format!(
        "feature lldp\nlldp tlv custom oui 00:11:22 subtype 1 info {long}\n"
    ))
    .config;
    assert_eq!(c.lldp.custom_tlvs[0].info, vec![0xab; 507]);
    assert_eq!(clean(&c.to_string()).config, c);
    // `lldp tlv-select` is still its own command.
    let c = clean("feature lldp\nno lldp tlv-select dcbxp\n").config;
    assert!(!c.lldp.tlv_select.dcbxp && c.lldp.custom_tlvs.is_empty());
}

#[test]
fn lldp_dcbx_version_per_interface() {
    let c = clean("feature lldp\ninterface e1/1-3\n  lldp dcbx version cee\ninterface e1/2\n  lldp dcbx version IEEE\ninterface e1/3\n  no lldp dcbx version\ninterface e1/4\n  lldp dcbx version a\n").config;
    let v = |n| c.interface(n).unwrap().dcbx_version;
    assert_eq!(
        [v("e1/1"), v("e1/2"), v("e1/3"), v("e1/4")],
        [
            DcbxVersion::Cee,
            DcbxVersion::Ieee,
            DcbxVersion::Auto,
            DcbxVersion::Auto
        ]
    );
    assert_eq!(
        clean("interface e1/1\n").config.interfaces[0].dcbx_version,
        DcbxVersion::Auto
    );
    assert_eq!(DcbxVersion::default(), DcbxVersion::Auto);
    for k in DcbxVersion::KEYWORDS {
        assert_eq!(DcbxVersion::from_keyword(k).unwrap().keyword(), k);
    }
    // Modelled, so strict mode accepts it rather than rejecting an unmodelled `lldp` line.
    let p = parse_strict("feature lldp\ninterface e1/1\n  lldp dcbx version ieee\n  no lldp dcbx version\nlldp tlv custom oui 00:11:22 subtype 1\n").unwrap();
    assert!(p.warnings.is_empty(), "{}", common::render(&p.warnings));
}

#[test]
fn the_watchdog_ingress_extension() {
    assert!(
        !ok("").config.pfc_watchdog_ingress_forward,
        "drop by default"
    );
    let c = clean("priority-flow-control watch-dog ingress forward\n").config;
    assert!(c.pfc_watchdog_ingress_forward);
    assert_eq!(
        c.to_string(),
        "priority-flow-control watch-dog ingress forward\n"
    );
    for back in [
        "priority-flow-control watch-dog ingress drop\n",
        "no priority-flow-control watch-dog ingress\n",
    ] {
        let c = clean(&format!(
            "priority-flow-control watch-dog ingress forward\n{back}"
        ))
        .config;
        assert!(!c.pfc_watchdog_ingress_forward, "{back}");
        assert_eq!(c.to_string(), "", "the default prints nothing");
    }
    let d = common::one_error("priority-flow-control watch-dog ingress lossy\n");
    assert_eq!(d.line, 1);
    assert!(d.message.contains("lossy"), "{}", d.message);
    let d = common::one_error("priority-flow-control watch-dog ingress\n");
    assert!(d.message.contains("`drop` or `forward`"), "{}", d.message);
}

#[test]
fn the_buffer_size_extension() {
    let c = clean("buffer-size 32 mbytes\n").config;
    assert_eq!(c.buffer_bytes, Some(32 * MBYTE));
    assert_eq!(c.to_string(), "buffer-size 32 mbytes\n");
    assert_eq!(
        clean("buffer-size 1000 bytes\nno buffer-size\n")
            .config
            .buffer_bytes,
        None
    );
    let d = common::one_error("buffer-size 32 packets\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (1, 16, "unknown unit `packets`")
    );
}

#[test]
fn the_dpdk_eal_args_extension() {
    let text = "dpdk eal-args --no-huge --no-shconf -m 1024 --vdev net_null0,size=64\ninterface e1/1\n  bind dpdk net_null0\n";
    let p = clean(text);
    assert_eq!(
        p.config.dpdk_eal_args,
        [
            "--no-huge",
            "--no-shconf",
            "-m",
            "1024",
            "--vdev",
            "net_null0,size=64"
        ]
    );
    assert!(p
        .config
        .to_string()
        .starts_with("dpdk eal-args --no-huge --no-shconf -m 1024 --vdev net_null0,size=64\n"));
    // A later line replaces; `no` goes back to the defaults.
    let p = ok("dpdk eal-args --no-huge\ndpdk eal-args -l 1\ninterface e1/1\n  bind dpdk 0\n");
    assert_eq!(p.config.dpdk_eal_args, ["-l", "1"]);
    let p = clean("dpdk eal-args --no-huge\nno dpdk eal-args\n");
    assert!(p.config.dpdk_eal_args.is_empty());
    assert!(!p.config.to_string().contains("dpdk"));
    // At least one argument.
    let d = common::one_error("dpdk eal-args\n");
    assert_eq!(d.line, 1);
    assert!(d.message.contains("EAL argument"), "{}", d.message);
    // What DPDK 22.11 refuses is an error; unused arguments a warning.
    let d =
        common::one_error("dpdk eal-args --no-huge --in-memory\ninterface e1/1\n  bind dpdk 0\n");
    assert_eq!((d.line, d.col), (1, 1));
    assert!(d.message.contains("--in-memory"), "{}", d.message);
    let p = ok("dpdk eal-args --no-huge\n");
    assert_eq!(common::warnings(&p).len(), 1, "{:?}", common::warnings(&p));
    assert!(common::warnings(&p)[0]
        .2
        .contains("no interface is bound to dpdk"));
    // Strict mode knows the line.
    assert!(parse_strict("dpdk eal-args --no-huge\ninterface e1/1\n  bind dpdk 0\n").is_ok());
}

#[test]
fn a_fully_modelled_qos_file_passes_strict_mode() {
    let text = "feature lldp\nlldp timer 10\nclass-map type qos match-any R\n  match dscp 24\npolicy-map type qos P\n  class R\n    set qos-group 3\nsystem qos\n  service-policy type qos input P\nhardware profile dlb\n  dlb-interface all\nip load-sharing address source-destination rotate 3\ninterface e1/1\n  priority-flow-control mode on\n  no lldp receive\n";
    let p = parse_strict(text).unwrap();
    assert!(p.warnings.is_empty(), "{}", common::render(&p.warnings));
    // Unmodelled QoS lines are errors in strict mode.
    let es = parse_strict("policy-map type qos P\n  class class-default\n    police cir 1 gbps\nclass-map type control-plane match-any C\n").unwrap_err();
    let got: Vec<(usize, usize, &str)> = es
        .iter()
        .map(|d| (d.line, d.col, d.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (3, 5, "policy-map class command `police` is not supported"),
            (4, 1, "`class-map type control-plane` is not supported"),
        ]
    );
}
