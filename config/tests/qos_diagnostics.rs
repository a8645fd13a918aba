//! One test per QoS diagnostic: its line, column, message and hint.
//!
//! Errors reject the file; warnings flag dubious but legal settings.

mod common;

use common::{ok, one_error, parse_strict, render, summary, warnings};

/// The single non-summary warning of a text that must load.
fn one_warning(text: &str) -> railyard_config::Diagnostic {
    let p = ok(text);
    let ws: Vec<_> = p.warnings.into_iter().filter(|d| d.line > 0).collect();
    assert_eq!(
        ws.len(),
        1,
        "expected one warning:\n{}",
        common::render(&ws)
    );
    ws.into_iter().next().unwrap()
}

#[test]
fn a_service_policy_naming_a_missing_policy() {
    let d = one_error(
        "policy-map type qos CLASSIFY\ninterface e1/1\n  service-policy type qos input CLASIFY\n",
    );
    assert_eq!(
        summary(&d),
        (
            3,
            33,
            "no policy-map type qos named `CLASIFY`",
            Some("did you mean `CLASSIFY`?")
        )
    );
}

#[test]
fn a_system_service_policy_naming_a_missing_policy() {
    let d = one_error("system qos\n  service-policy type network-qos NQ\n");
    assert_eq!(
        summary(&d),
        (
            2,
            35,
            "no policy-map type network-qos named `NQ`",
            Some("define it with `policy-map type network-qos NQ`")
        )
    );
}

#[test]
fn a_service_policy_naming_a_policy_of_another_type() {
    let d = one_error(
        "policy-map type queuing OUT\ninterface e1/1\n  service-policy type qos input OUT\n",
    );
    assert_eq!(
        summary(&d),
        (
            3,
            33,
            "no policy-map type qos named `OUT`",
            Some("`OUT` is a policy-map type queuing")
        )
    );
}

#[test]
fn an_ingress_queuing_policy_applied_as_output() {
    let d = one_error("policy-map type queuing IN\n  class type queuing c-in-q3\ninterface e1/1\n  service-policy type queuing output IN\n");
    assert_eq!(
        summary(&d),
        (
            4,
            38,
            "policy-map type queuing `IN` has ingress classes (c-in-q…); it cannot be applied as output",
            Some("apply it with `service-policy type queuing input IN`")
        )
    );
}

#[test]
fn a_network_qos_policy_on_an_interface() {
    let d = one_error("interface e1/1\n  service-policy type network-qos N\n");
    assert_eq!(
        summary(&d),
        (
            2,
            18,
            "network-qos policies apply to the whole switch",
            Some("put `service-policy type network-qos NAME` under `system qos`")
        )
    );
}

#[test]
fn a_class_naming_a_missing_class_map() {
    let d = one_error("class-map type qos match-any ROCEv2\n  match dscp 24\npolicy-map type qos P\n  class ROCEV2\n    set qos-group 3\n");
    assert_eq!(
        summary(&d),
        (
            4,
            9,
            "no class-map named `ROCEV2`",
            Some("did you mean `ROCEv2`?")
        )
    );
}

#[test]
fn a_class_map_naming_a_missing_access_list() {
    let d = one_error("class-map type qos match-any R\n  match access-group name ROCE_ACL\n");
    assert_eq!(
        summary(&d),
        (
            2,
            27,
            "no ip access-list named `ROCE_ACL`",
            Some("define it with `ip access-list ROCE_ACL`")
        )
    );
}

#[test]
fn a_class_map_using_an_access_list_with_an_unmodelled_entry() {
    let d = one_error("ip access-list A\n  10 permit tcp any any established\nclass-map type qos match-any R\n  match access-group name A\n");
    assert_eq!(
        summary(&d),
        (
            4,
            27,
            "access list `A` entry 10 matches on `established`, which railyard does not evaluate (line 2)",
            Some("the class would match other traffic than on the switch; rewrite or remove that entry, or match the class another way")
        )
    );
}

/// An object-group reference is the same in either position: kept, with a
/// warning, and an error once a class-map classifies by its list.
#[test]
fn object_group_references_behave_alike_as_source_and_destination() {
    for (line, col, kind) in [
        ("permit ip addrgroup G any", 13, "addrgroup"),
        ("permit ip any addrgroup G", 17, "addrgroup"),
        ("permit tcp any portgroup P any", 18, "portgroup"),
        ("permit tcp any any portgroup P", 22, "portgroup"),
    ] {
        let list = format!("ip access-list A\n  {line}\n");
        let p = ok(&list);
        assert_eq!(
            warnings(&p),
            [(
                2,
                col,
                format!(
                    "ip access-list option `{kind}` is not evaluated; the entry is kept as written"
                )
            )],
            "{line}"
        );
        let d = one_error(&format!(
            "{list}class-map type qos match-any R\n  match access-group name A\n"
        ));
        assert_eq!(
            d.message,
            format!("access list `A` entry 10 matches on `{kind}`, which railyard does not evaluate (line 2)"),
            "{line}"
        );
    }
}

/// Removing the only unevaluated entry makes the list usable again.
#[test]
fn removing_the_unevaluated_entry_clears_the_error() {
    ok("ip access-list A\n  10 deny ip any any fragments\n  20 permit udp any any eq 4791\n  no 10\nclass-map type qos match-any R\n  match access-group name A\n");
}

#[test]
fn strict_mode_rejects_each_unevaluated_option() {
    let es = match parse_strict(
        "ip access-list A\n  deny ip any any fragments\n  deny ip any any fragments\n",
    ) {
        Ok(_) => panic!("strict mode accepted `fragments`"),
        Err(es) => es,
    };
    assert_eq!(es.len(), 2, "{}", render(&es));
    assert_eq!(
        es[0].message,
        "ip access-list option `fragments` is not supported"
    );
}

#[test]
fn a_qos_group_outside_0_to_7() {
    let d = one_error("policy-map type qos P\n  class class-default\n    set qos-group 8\n");
    assert_eq!(
        summary(&d),
        (
            3,
            19,
            "qos-group 8 is out of range",
            Some("qos-group is 0-7")
        )
    );
}

#[test]
fn a_wred_minimum_above_the_maximum() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q3\n    random-detect minimum-threshold 3 mbytes maximum-threshold 150 kbytes ecn\n");
    assert_eq!(
        summary(&d),
        (
            3,
            37,
            "WRED minimum threshold 3145728 bytes is above the maximum 153600 bytes",
            Some("the minimum threshold must not exceed the maximum")
        )
    );
}

#[test]
fn wred_thresholds_in_packets_and_bytes() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q3\n    random-detect minimum-threshold 100 packets maximum-threshold 150 kbytes\n");
    assert_eq!(
        summary(&d),
        (
            3,
            67,
            "WRED thresholds mix packets and bytes",
            Some("give both thresholds in packets, or both in bytes, kbytes or mbytes")
        )
    );
}

#[test]
fn an_unknown_byte_unit() {
    let d = one_error(
        "policy-map type queuing O\n  class type queuing c-out-8q-q3\n    queue-limit 4 mbyte5\n",
    );
    assert_eq!(
        summary(&d),
        (
            3,
            19,
            "unknown unit `mbyte5`",
            Some("did you mean `mbytes`?")
        )
    );
}

#[test]
fn an_unknown_rate_unit() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q7\n    shape min 0 gbit max 10 gbps\n");
    assert_eq!(
        summary(&d),
        (3, 17, "unknown unit `gbit`", Some("did you mean `gbps`?"))
    );
}

#[test]
fn a_malformed_number() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q3\n    bandwidth remaining percent 5O\n");
    assert_eq!(
        summary(&d),
        (
            3,
            33,
            "invalid bandwidth remaining percent `5O`",
            Some("bandwidth remaining percent is 0-100")
        )
    );
}

#[test]
fn a_class_map_redefined_with_another_match_mode() {
    let d = one_error("class-map type qos match-any R\nclass-map type qos match-all R\n");
    assert_eq!(
        summary(&d),
        (
            2,
            20,
            "class-map `R` is already match-any (line 1); it cannot also be match-all",
            Some("remove it first with `no class-map type qos R`, or rename one of them")
        )
    );
}

#[test]
fn an_access_list_sequence_number_reused_for_another_entry() {
    let d = one_error("ip access-list A\n  10 permit udp any any\n  10 deny udp any any\n");
    assert_eq!(
        summary(&d),
        (
            3,
            3,
            "access list `A` already has a different entry 10",
            Some("remove it first with `no 10`, or use another sequence number")
        )
    );
}

#[test]
fn a_strict_priority_queue_with_a_bandwidth_share() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q7\n    priority level 1\n    bandwidth percent 10\n");
    assert_eq!(
        summary(&d),
        (
            4,
            5,
            "a strict-priority queue cannot also have a bandwidth share",
            Some("remove `priority` from the class first with `no priority`")
        )
    );
}

#[test]
fn egress_and_ingress_classes_in_one_policy() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q3\n  class type queuing c-in-q3\n");
    assert_eq!(
        summary(&d),
        (
            3,
            22,
            "policy-map `O` has egress classes; `c-in-q3` is an ingress class",
            Some("egress (c-out-…) and ingress (c-in-…) queuing are separate policy-maps")
        )
    );
}

#[test]
fn a_port_configured_whole_and_broken_out() {
    let d = one_error("interface Ethernet1/49\ninterface Ethernet1/49/1-4\n");
    assert_eq!(
        summary(&d),
        (
            2,
            11,
            "Ethernet1/49 is configured both as one port and as breakout lanes",
            Some("configure either Ethernet1/49 or its breakout lanes such as Ethernet1/49/1, not both")
        )
    );
}

#[test]
fn bandwidth_percent_above_100_in_a_policy() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q1\n    bandwidth percent 60\n  class type queuing c-out-8q-q2\n    bandwidth percent 50\n");
    assert_eq!(
        summary(&d),
        (
            5,
            5,
            "bandwidth percent in policy-map `O` adds up to 110%",
            Some("the shares of one policy may total at most 100%")
        )
    );
}

#[test]
fn bandwidth_remaining_percent_above_100_in_a_policy() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q3\n    bandwidth remaining percent 60\n  class type queuing c-out-8q-q-default\n    bandwidth remaining percent 60\n");
    assert_eq!(
        summary(&d),
        (
            5,
            5,
            "bandwidth remaining percent in policy-map `O` adds up to 120%",
            Some("the shares of one policy may total at most 100%")
        )
    );
}

#[test]
fn one_cos_paused_for_two_qos_groups() {
    let d = one_error("policy-map type network-qos N\n  class type network-qos c-8q-nq3\n    pause pfc-cos 3\n  class type network-qos c-8q-nq4\n    pause pfc-cos 3,4\n");
    assert_eq!(
        summary(&d),
        (
            5,
            5,
            "CoS 3 is paused for both qos-group 3 and qos-group 4 in policy-map `N`",
            Some("a PFC priority pauses one class; give each lossless class its own CoS")
        )
    );
}

#[test]
fn an_unknown_queuing_class() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q8\n");
    assert_eq!(
        summary(&d),
        (
            2,
            22,
            "unknown queuing class `c-out-8q-q8`",
            Some("did you mean `c-out-8q-q1`?")
        )
    );
}

#[test]
fn an_unknown_network_qos_class() {
    let d = one_error("policy-map type network-qos N\n  class type network-qos c-8q-nq9\n");
    assert_eq!(
        summary(&d),
        (
            2,
            26,
            "unknown network-qos class `c-8q-nq9`",
            Some("did you mean `c-8q-nq1`?")
        )
    );
}

#[test]
fn a_class_of_the_wrong_type() {
    let d = one_error("policy-map type qos P\n  class type queuing c-out-8q-q3\n");
    assert_eq!(
        summary(&d),
        (
            2,
            14,
            "a `qos` policy-map takes `class type qos`, not `queuing`",
            Some("write `class type qos NAME`")
        )
    );
}

#[test]
fn a_misspelt_class_map_command() {
    let d = one_error("class-map type qos match-any R\n  match dscpp 24\n");
    assert_eq!(
        summary(&d),
        (
            2,
            9,
            "unknown class-map command `match dscpp`",
            Some("did you mean `match dscp`?")
        )
    );
}

#[test]
fn a_misspelt_policy_class_command() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q3\n    bandwith remaining percent 50\n");
    assert_eq!(
        summary(&d),
        (
            3,
            5,
            "unknown policy-map class command `bandwith`",
            Some("did you mean `bandwidth`?")
        )
    );
}

#[test]
fn a_misspelt_random_detect_keyword() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q3\n    random-detect minimum-treshold 150 kbytes maximum-threshold 3000 kbytes\n");
    assert_eq!(
        summary(&d),
        (
            3,
            19,
            "unknown random-detect keyword `minimum-treshold`",
            Some("did you mean `minimum-threshold`?")
        )
    );
}

#[test]
fn a_misspelt_dscp_name() {
    let d = one_error("class-map type qos match-any R\n  match dscp 24,af4\n");
    assert_eq!(
        summary(&d),
        (
            2,
            17,
            "invalid DSCP value `af4`",
            Some("did you mean `af41`?")
        )
    );
}

#[test]
fn a_dscp_value_out_of_range() {
    let d = one_error("class-map type qos match-any R\n  match dscp 24,64\n");
    assert_eq!(
        summary(&d),
        (2, 17, "DSCP 64 is out of range", Some("DSCP is 0-63"))
    );
}

#[test]
fn a_backwards_dscp_range() {
    let d = one_error("class-map type qos match-any R\n  match dscp 30-24\n");
    assert_eq!(
        summary(&d),
        (
            2,
            14,
            "DSCP range `30-24` ends before it starts",
            Some("write the lower value first, e.g. 24-30")
        )
    );
}

#[test]
fn pause_thresholds_in_an_egress_class() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q3\n    pause buffer-size 100000 pause-threshold 80000 resume-threshold 60000\n");
    assert_eq!(
        summary(&d),
        (
            3,
            5,
            "pause thresholds apply to ingress classes",
            Some("put `pause buffer-size …` under `class type queuing c-in-qN` in an input policy")
        )
    );
}

#[test]
fn a_resume_threshold_above_the_pause_threshold() {
    let d = one_error("policy-map type queuing I\n  class type queuing c-in-q3\n    pause buffer-size 100000 pause-threshold 60000 resume-threshold 80000\n");
    assert_eq!(
        summary(&d),
        (
            3,
            69,
            "resume threshold 80000 is not below the pause threshold 60000",
            Some("XON must be below XOFF, or the queue pauses and resumes at once")
        )
    );
}

#[test]
fn a_pause_threshold_beyond_the_buffer() {
    let d = one_error("policy-map type queuing I\n  class type queuing c-in-q3\n    pause buffer-size 100000 pause-threshold 160000 resume-threshold 80000\n");
    assert_eq!(
        summary(&d),
        (
            3,
            46,
            "pause threshold 160000 exceeds the buffer size 100000",
            Some("XOFF must be reached before the buffer is full")
        )
    );
}

#[test]
fn a_network_qos_mtu_out_of_range() {
    let d = one_error(
        "policy-map type network-qos N\n  class type network-qos c-8q-nq3\n    mtu 9300\n",
    );
    assert_eq!(
        summary(&d),
        (3, 9, "MTU 9300 is out of range", Some("MTU is 576-9216"))
    );
}

#[test]
fn a_shaper_minimum_above_its_maximum() {
    let d = one_error("policy-map type queuing O\n  class type queuing c-out-8q-q7\n    shape min 20 gbps max 10 gbps\n");
    assert_eq!(
        summary(&d),
        (
            3,
            15,
            "shaper minimum is above its maximum",
            Some("the guaranteed rate must not exceed the maximum rate")
        )
    );
}

#[test]
fn an_incomplete_dre_threshold_list() {
    let d = one_error("hardware profile dlb\n  dre-thresholds level-1 10 level-2 20 level-3 30\n");
    assert_eq!(
        summary(&d),
        (
            2,
            51,
            "missing `level-4 P`",
            Some("usage: dre-thresholds level-1 P level-2 P ... level-7 P")
        )
    );
}

#[test]
fn a_misspelt_load_sharing_keyword() {
    let d = one_error("ip load-sharing address source-destination prot source-destination\n");
    assert_eq!(
        summary(&d),
        (
            1,
            44,
            "unknown load-sharing keyword `prot`",
            Some("did you mean `port`?")
        )
    );
}

#[test]
fn a_misspelt_rocev2_dest_qp_is_suggested() {
    let d = one_error("ip load-sharing address source-destination rocev2-dst-qp\n");
    assert_eq!(
        summary(&d),
        (
            1,
            44,
            "unknown load-sharing keyword `rocev2-dst-qp`",
            Some("did you mean `rocev2-dest-qp`?")
        )
    );
}

#[test]
fn a_flowlet_table_size_not_a_power_of_two() {
    let d = one_error("hardware profile dlb\n  flowlet-table-size 5000\n");
    assert_eq!(
        summary(&d),
        (
            2,
            22,
            "flowlet-table-size 5000 is not a power of two",
            Some("flowlet-table-size is a power of two from 256 to 1048576")
        )
    );
}

#[test]
fn a_flowlet_table_size_out_of_range() {
    for (n, col) in [("128", 22), ("2097152", 22), ("0", 22)] {
        let d = one_error(&format!("hardware profile dlb\n  flowlet-table-size {n}\n"));
        assert_eq!(
            summary(&d),
            (
                2,
                col,
                format!("flowlet-table-size {n} is out of range").as_str(),
                Some("flowlet-table-size is a power of two from 256 to 1048576")
            )
        );
    }
    let d = one_error("hardware profile dlb\n  flowlet-table-size big\n");
    assert_eq!(
        summary(&d),
        (
            2,
            22,
            "invalid flowlet-table-size `big`",
            Some("flowlet-table-size is a power of two from 256 to 1048576")
        )
    );
}

#[test]
fn a_zero_sampling_interval() {
    let d = one_error("hardware profile dlb\n  sampling-interval 0 nsecs\n");
    assert_eq!(
        summary(&d),
        (
            2,
            21,
            "sampling-interval 0 is out of range",
            Some("sampling-interval is 1-4294967295")
        )
    );
}

#[test]
fn an_lldp_timer_out_of_range() {
    let d = one_error("lldp timer 300\n");
    assert_eq!(
        summary(&d),
        (
            1,
            12,
            "lldp timer 300 is out of range",
            Some("lldp timer is 5-254")
        )
    );
}

#[test]
fn an_unknown_lldp_tlv() {
    let d = one_error("lldp tlv-select dcbp\n");
    assert_eq!(
        summary(&d),
        (
            1,
            17,
            "unknown LLDP TLV `dcbp`",
            Some("did you mean `dcbxp`?")
        )
    );
}

#[test]
fn an_unknown_dcbx_version() {
    let d = one_error("interface e1/1\n  lldp dcbx version iee8021\n");
    assert_eq!(
        summary(&d),
        (
            2,
            21,
            "unknown DCBX version `iee8021`",
            Some("expected auto, ieee or cee")
        )
    );
    let d = one_error("interface e1/1\n  lldp dcbx version\n");
    assert_eq!(
        summary(&d),
        (
            2,
            21,
            "missing `auto`, `ieee` or `cee`",
            Some("usage: lldp dcbx version auto | ieee | cee")
        )
    );
}

#[test]
fn a_bad_custom_tlv_oui() {
    let hint = Some("write an OUI as three hex octets: 00:11:22, 00-11-22 or 00,11,22");
    for (line, col) in [
        ("lldp tlv custom oui 00:11 subtype 1\n", 21),
        ("lldp tlv custom oui 001122 subtype 1\n", 21),
        ("lldp tlv custom oui 00:11:22:33 subtype 1\n", 21),
        // A bad octet is pointed at.
        ("lldp tlv custom oui 00:1g:22 subtype 1\n", 24),
        ("lldp tlv custom oui 00,11,2 subtype 1\n", 27),
        ("no lldp tlv custom oui 0:11:22 subtype 1\n", 24),
    ] {
        let d = one_error(line);
        let oui = line
            .split_whitespace()
            .nth(if line.starts_with("no") { 5 } else { 4 });
        let message = format!("invalid OUI `{}`", oui.unwrap());
        assert_eq!(summary(&d), (1, col, message.as_str(), hint), "{line}");
    }
}

#[test]
fn a_custom_tlv_subtype_out_of_range() {
    let d = one_error("lldp tlv custom oui 00:11:22 subtype 256\n");
    assert_eq!(
        summary(&d),
        (
            1,
            38,
            "subtype 256 is out of range",
            Some("subtype is 0-255")
        )
    );
    let d = one_error("lldp tlv custom oui 00:11:22 subtype x\n");
    assert_eq!(
        summary(&d),
        (1, 38, "invalid subtype `x`", Some("subtype is 0-255"))
    );
}

#[test]
fn bad_custom_tlv_info() {
    let hint = Some("write each byte as two hex digits, e.g. info 0a0b");
    let d = one_error("lldp tlv custom oui 00:11:22 subtype 1 info 0a0\n");
    assert_eq!(
        summary(&d),
        (1, 45, "info `0a0` has an odd number of hex digits", hint)
    );
    // The first non-hex digit is pointed at.
    let d = one_error("lldp tlv custom oui 00:11:22 subtype 1 info 0a0x\n");
    assert_eq!(
        summary(&d),
        (1, 48, "invalid info `0a0x`: not hexadecimal", hint)
    );
    let d = one_error("lldp tlv custom oui 00:11:22 subtype 1 info 0x0a\n");
    assert_eq!(
        summary(&d),
        (1, 46, "invalid info `0x0a`: not hexadecimal", hint)
    );
    let d = one_error(&format!(
        "lldp tlv custom oui 00:11:22 subtype 1 info {}\n",
        "00".repeat(508)
    ));
    assert_eq!(
        summary(&d),
        (
            1,
            45,
            "info is 508 bytes, too long for an LLDP TLV",
            Some("info has a 507-byte limit (1014 hex digits): an LLDP TLV value is at most 511 bytes, less 4 for the OUI and subtype")
        )
    );
    let d = one_error("lldp tlv custom oui 00:11:22 subtype 1 info\n");
    assert_eq!(
        summary(&d),
        (
            1,
            45,
            "missing information in hex",
            Some("usage: lldp tlv custom oui XX:XX:XX subtype 0-255 [info HEX]")
        )
    );
    let d = one_error("lldp tlv custom oui 00:11:22 subtype 1 data 0a\n");
    assert_eq!(
        summary(&d),
        (
            1,
            40,
            "unknown lldp tlv custom keyword `data`",
            Some("expected info")
        )
    );
}

#[test]
fn a_custom_tlv_diagnostic_renders_with_file_line_column_caret_and_hint() {
    let d = one_error("feature lldp\nlldp tlv custom oui 00-11-22 subtype 1 info abc\n");
    let want = "lab.conf:2:45: error: info `abc` has an odd number of hex digits\n   \
                2 | lldp tlv custom oui 00-11-22 subtype 1 info abc\n     \
                |                                             ^^^\n   \
                = hint: write each byte as two hex digits, e.g. info 0a0b";
    assert_eq!(d.to_string(), want);
}

#[test]
fn lldp_extensions_without_feature_lldp() {
    for text in [
        "interface e1/1\n  lldp dcbx version cee\n",
        "lldp tlv custom oui 00:11:22 subtype 1\n",
    ] {
        let d = one_warning(text);
        assert_eq!(
            summary(&d),
            (
                text.lines().count(),
                if text.starts_with("lldp") { 1 } else { 3 },
                "LLDP is configured but `feature lldp` is not enabled",
                Some("add `feature lldp`, or the settings have no effect")
            ),
            "{text}"
        );
    }
    // `auto` is the default and needs nothing.
    assert!(ok("interface e1/1\n  lldp dcbx version auto\n")
        .warnings
        .is_empty());
}

#[test]
fn an_unknown_pfc_mode() {
    let d = one_error("interface e1/1\n  priority-flow-control mode always\n");
    assert_eq!(
        summary(&d),
        (
            2,
            30,
            "unknown PFC mode `always`",
            Some("expected auto, on or off")
        )
    );
}

#[test]
fn an_invalid_class_map_name() {
    let d = one_error("class-map type qos match-any ROCE!v2\n");
    assert_eq!(
        summary(&d),
        (
            1,
            30,
            "invalid class-map name `ROCE!v2`",
            Some("names are up to 64 letters, digits, `-`, `_`, `.` or `:`")
        )
    );
}

#[test]
fn configuring_class_default_as_a_class_map() {
    let d = one_error("class-map type qos class-default\n");
    assert_eq!(
        summary(&d),
        (
            1,
            20,
            "`class-default` is system-defined and cannot be configured",
            Some("use `class class-default` inside a policy-map")
        )
    );
}

#[test]
fn a_misspelt_access_list_protocol() {
    let d = one_error("ip access-list A\n  permit udpp any any\n");
    assert_eq!(
        summary(&d),
        (
            2,
            10,
            "unknown protocol `udpp`",
            Some("did you mean `udp`?")
        )
    );
}

#[test]
fn ports_on_an_entry_without_ports() {
    let d = one_error("ip access-list A\n  permit ip any any eq 4791\n");
    assert_eq!(
        summary(&d),
        (
            2,
            21,
            "`eq` needs a protocol with ports",
            Some("port conditions apply to tcp, udp and sctp entries")
        )
    );
}

#[test]
fn a_watchdog_interval_out_of_range() {
    let d = one_error("priority-flow-control watch-dog interval 50\n");
    assert_eq!(
        summary(&d),
        (
            1,
            42,
            "watch-dog interval 50 is out of range",
            Some("watch-dog interval is 100-1000")
        )
    );
}

#[test]
fn an_unknown_dlb_mode() {
    let d = one_error("hardware profile dlb\n  mode flowlette\n");
    assert_eq!(
        summary(&d),
        (
            2,
            8,
            "unknown DLB mode `flowlette`",
            Some("did you mean `flowlet`?")
        )
    );
}

#[test]
fn a_strict_priority_queue_without_a_shaper() {
    let d = one_warning(
        "policy-map type queuing O\n  class type queuing c-out-8q-q7\n    priority level 1\n",
    );
    assert_eq!(
        summary(&d),
        (
            3,
            5,
            "strict-priority queue c-out-8q-q7 of policy-map `O` has no shaper",
            Some("without `shape min … max …` it can starve every lower queue")
        )
    );
}

#[test]
fn an_ecn_wred_maximum_above_the_queue_limit() {
    let d = one_warning("policy-map type queuing O\n  class type queuing c-out-8q-q3\n    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn\n    queue-limit 1 mbytes\n");
    assert_eq!(
        summary(&d),
        (
            3,
            5,
            "WRED maximum 3072000 bytes of c-out-8q-q3 in policy-map `O` exceeds its queue limit of 1048576 bytes",
            Some("the queue tail-drops before ECN marking reaches its maximum; lower the threshold or raise the limit")
        )
    );
}

#[test]
fn thresholds_that_break_xon_wred_min_wred_max_xoff() {
    let d = one_warning("policy-map type queuing I\n  class type queuing c-in-q3\n    pause buffer-size 4194304 pause-threshold 2097152 resume-threshold 1048576\npolicy-map type queuing O\n  class type queuing c-out-8q-q3\n    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn\ninterface e1/1-2\n  service-policy type queuing input I\n  service-policy type queuing output O\n");
    assert_eq!(
        summary(&d),
        (
            3,
            5,
            "qos-group 3: thresholds break xON < WRED min < WRED max < xOFF (xON 1048576, WRED 153600-3072000, xOFF 2097152 bytes)",
            Some("ECN should slow senders before PFC pauses the link: put the WRED thresholds between the resume and pause thresholds")
        )
    );
}

#[test]
fn a_lossless_class_on_an_interface_without_pfc() {
    let d = one_warning("class-map type qos match-any R\n  match dscp 24\npolicy-map type qos P\n  class R\n    set qos-group 3\npolicy-map type network-qos N\n  class type network-qos c-8q-nq3\n    pause pfc-cos 3\nsystem qos\n  service-policy type network-qos N\ninterface e1/1\n  service-policy type qos input P\n  priority-flow-control mode off\n");
    assert_eq!(
        summary(&d),
        (
            13,
            3,
            "Ethernet1/1 carries lossless qos-group 3 but has priority-flow-control mode off",
            Some("without PFC the class is dropped instead of paused; use `priority-flow-control mode on` or `auto`")
        )
    );
}

#[test]
fn a_class_that_sets_no_qos_group() {
    let d = one_warning(
        "class-map type qos match-any R\n  match dscp 24\npolicy-map type qos P\n  class R\n",
    );
    assert_eq!(
        summary(&d),
        (
            4,
            9,
            "class `R` of policy-map `P` sets no qos-group; its traffic stays in qos-group 0",
            Some("add `set qos-group N` under the class")
        )
    );
}

#[test]
fn a_class_shadowed_by_earlier_classes() {
    let d = one_warning("class-map type qos match-any A\n  match dscp 24-31\nclass-map type qos match-any B\n  match precedence 3\npolicy-map type qos P\n  class A\n    set qos-group 3\n  class B\n    set qos-group 4\n");
    assert_eq!(
        summary(&d),
        (
            8,
            9,
            "class `B` never matches: earlier classes of policy-map `P` take all its DSCP values",
            Some("classes are evaluated in order; move it up or remove it")
        )
    );
}

#[test]
fn an_empty_class_map_in_use() {
    let d = one_warning(
        "class-map type qos match-any E\npolicy-map type qos P\n  class E\n    set qos-group 1\n",
    );
    assert_eq!(
        summary(&d),
        (
            1,
            30,
            "class-map `E` has no match lines; it matches nothing",
            Some("add `match dscp …`, `match cos …` or `match access-group name …`")
        )
    );
}

#[test]
fn lldp_settings_without_feature_lldp() {
    let d = one_warning("lldp timer 10\ninterface e1/1\n  no lldp transmit\n");
    assert_eq!(
        summary(&d),
        (
            1,
            1,
            "LLDP is configured but `feature lldp` is not enabled",
            Some("add `feature lldp`, or the settings have no effect")
        )
    );
}

#[test]
fn an_lldp_holdtime_shorter_than_the_timer() {
    let d = one_warning("feature lldp\nlldp timer 60\nlldp holdtime 30\n");
    assert_eq!(
        summary(&d),
        (
            3,
            15,
            "lldp holdtime 30 is shorter than the transmit timer 60",
            Some("neighbours expire between advertisements; keep the holdtime a multiple of the timer")
        )
    );
}

#[test]
fn dre_levels_are_band_widths_and_must_fit_in_the_link() {
    // Cisco's CloudScale example: widths adding up to 100, not rising.
    let p = ok("hardware profile dlb\n  dre-thresholds level-1 15 level-2 20 level-3 30 level-4 15 level-5 10 level-6 5 level-7 5\n");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    // Rising absolute thresholds add up to far more than the link.
    let d = one_warning("hardware profile dlb\n  dre-thresholds level-1 10 level-2 20 level-3 30 level-4 25 level-5 50 level-6 60 level-7 70\n");
    assert_eq!(
        summary(&d),
        (
            2,
            3,
            "DRE levels add up to 265 %, more than the link's 100 %",
            Some("each level is the width of one quality band (as in Cisco's examples, which add up to 100), so bands past 100 % are reached only with a standing queue; rising thresholds such as 10 20 … 70 are written 10 10 … 10")
        )
    );
}

#[test]
fn an_unmodelled_class_map_type() {
    let d = one_warning(
        "class-map type control-plane match-any copp-bgp\n  match access-group name copp-acl\n",
    );
    assert_eq!(
        summary(&d),
        (
            1,
            1,
            "`class-map type control-plane` is not modelled; skipped",
            Some("later `class-map type control-plane` lines are skipped without another warning")
        )
    );
}

#[test]
fn an_unmodelled_policy_class_command() {
    let d = one_warning("policy-map type qos P\n  class class-default\n    set dscp 10\n");
    assert_eq!(
        summary(&d),
        (
            3,
            5,
            "policy-map class command `set dscp` is not modelled; skipped",
            Some("later `set dscp` lines are skipped without another warning")
        )
    );
}

#[test]
fn a_qos_diagnostic_renders_with_file_line_column_caret_and_hint() {
    let d = one_error("class-map type qos match-any ROCEv2\n  match dscp 24\npolicy-map type qos P\n  class ROCEV2\n    set qos-group 3\n");
    let want = "lab.conf:4:9: error: no class-map named `ROCEV2`\n   \
                4 |   class ROCEV2\n     \
                |         ^^^^^^\n   \
                = hint: did you mean `ROCEv2`?";
    assert_eq!(d.to_string(), want);
}
