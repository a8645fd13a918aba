//! The older Nexus 3000/5000 MQC dialect that RDMA / SMB Direct guides
//! publish: user-named `class-map type queuing|network-qos NAME` classes
//! that name a qos-group (`match qos-group N`), `class-default` in queuing
//! and network-qos policies, and `pause no-drop`, mapped onto the same
//! queue and qos-group model as the Nexus 9000 system class names.

mod common;

use common::{errors, ok, render, summary, warnings};
use railyard_config::{parse_str, Bandwidth, Direction, InterfaceName, ParseOptions};

/// A Nexus 3132 ToR for SMB Direct in the style of the published guides:
/// RoCE on CoS 5 (carried in qos-group 4), everything else in class-default,
/// lines ending in CRLF as the switch prints them.
const TOR: &str = "hostname tor-a\r
class-map type qos match-all SMB\r
  match cos 5\r
class-map type queuing SMB\r
  match qos-group 4\r
policy-map type qos MARK_SMB\r
  class SMB\r
    set qos-group 4\r
  class class-default\r
policy-map type queuing SMB_OUT\r
  class type queuing SMB\r
    bandwidth percent 60\r
  class type queuing class-default\r
    bandwidth percent 40\r
policy-map type queuing SMB_IN\r
  class type queuing SMB\r
    pause buffer-size 102400 pause-threshold 46080 resume-threshold 34560\r
  class type queuing class-default\r
class-map type network-qos SMB\r
  match qos-group 4\r
class-map type network-qos Bulk\r
  match qos-group 2\r
policy-map type network-qos SMB_NQ\r
  class type network-qos SMB\r
    mtu 2240\r
    pause no-drop\r
  class type network-qos class-default\r
    mtu 9216\r
system qos\r
  service-policy type qos input MARK_SMB\r
  service-policy type queuing output SMB_OUT\r
  service-policy type network-qos SMB_NQ\r
interface Ethernet1/1\r
  no switchport\r
  priority-flow-control mode on\r
  service-policy type queuing input SMB_IN\r
";

fn e1_1() -> InterfaceName {
    "Ethernet1/1".parse().unwrap()
}

#[test]
fn named_classes_configure_the_queue_and_qos_group_their_class_map_names() {
    let p = ok(TOR);
    assert!(warnings(&p).is_empty(), "{}", render(&p.warnings));
    let c = &p.config;
    assert_eq!(c.queuing_class_maps.len(), 1);
    assert_eq!(c.queuing_class_maps[0].qos_group, Some(4));
    assert_eq!(c.network_qos_class_maps.len(), 2);

    let out = c.queuing_policy("SMB_OUT").unwrap();
    assert_eq!(out.direction, Direction::Egress);
    let smb = out.class(4).expect("SMB is queue 4");
    assert_eq!(smb.class.as_deref(), Some("SMB"));
    assert_eq!(smb.bandwidth, Some(Bandwidth::Percent(60)));
    let default = out.class(0).expect("class-default is queue 0");
    assert_eq!(default.class.as_deref(), Some("class-default"));
    assert_eq!(default.bandwidth, Some(Bandwidth::Percent(40)));

    let input = c.queuing_policy("SMB_IN").unwrap();
    assert_eq!(
        input.direction,
        Direction::Ingress,
        "pause thresholds make it an input policy"
    );
    assert_eq!(input.class(4).unwrap().pause.unwrap().xoff, 46080);

    let nq = c.network_qos_policy("SMB_NQ").unwrap();
    let g4 = nq.classes.iter().find(|k| k.qos_group == 4).unwrap();
    assert_eq!((g4.mtu, g4.no_drop), (Some(2240), true));
    assert!(g4.pause_pfc_cos.is_empty());
    let g0 = nq.classes.iter().find(|k| k.qos_group == 0).unwrap();
    assert_eq!((g0.mtu, g0.no_drop), (Some(9216), false));
}

#[test]
fn pause_no_drop_makes_the_class_lossless_on_the_cos_classified_into_it() {
    let eq = ok(TOR).config.effective_qos(&e1_1());
    assert_eq!(eq.lossless, 1 << 4, "qos-group 4 is lossless");
    assert_eq!(
        eq.pfc_cos_of_group[4],
        1 << 5,
        "paused on the CoS that maps into it"
    );
    assert_eq!(eq.pfc_cos, 1 << 5);
    assert_eq!(eq.mtu_of_group[4], 2240);
    assert_eq!(eq.mtu_of_group[0], 9216);
    assert_eq!(eq.egress[4].bandwidth, Some(Bandwidth::Percent(60)));
    assert_eq!(eq.egress[0].bandwidth, Some(Bandwidth::Percent(40)));
    assert_eq!(eq.ingress[4].pause.unwrap().buffer_size, 102400);
    assert_eq!(eq.classifier.cos_table.unwrap()[5], 4);

    // Without it the class is lossy again.
    let lossy = TOR.replace("    pause no-drop\r\n", "");
    let eq = ok(&lossy).config.effective_qos(&e1_1());
    assert_eq!((eq.lossless, eq.pfc_cos), (0, 0));
}

#[test]
fn pause_no_drop_with_pfc_cos_pauses_on_the_given_priorities() {
    let text = TOR.replace("    pause no-drop\r\n", "    pause no-drop pfc-cos 3,5\r\n");
    let eq = ok(&text).config.effective_qos(&e1_1());
    assert_eq!(eq.lossless, 1 << 4);
    assert_eq!(eq.pfc_cos_of_group[4], (1 << 3) | (1 << 5));
}

#[test]
fn a_dscp_classification_pauses_a_no_drop_group_on_its_own_priority() {
    let text = TOR.replace("  match cos 5\r\n", "  match dscp 26\r\n");
    let eq = ok(&text).config.effective_qos(&e1_1());
    assert_eq!(eq.pfc_cos_of_group[4], 1 << 4);
}

#[test]
fn the_older_dialect_prints_back_as_written_and_reads_back_the_same() {
    let p = ok(TOR);
    let printed = p.config.to_string();
    for line in [
        "class-map type queuing SMB\n  match qos-group 4\n",
        "class-map type network-qos Bulk\n  match qos-group 2\n",
        "  class type queuing SMB\n    bandwidth percent 60\n",
        "  class type queuing class-default\n",
        "  class type network-qos SMB\n    mtu 2240\n    pause no-drop\n",
        "  class type network-qos class-default\n    mtu 9216\n",
    ] {
        assert!(printed.contains(line), "{line:?} missing from\n{printed}");
    }
    let again = parse_str(&printed, "printed.conf", &ParseOptions::default())
        .unwrap_or_else(|es| panic!("{}\n{printed}", render(&es)));
    assert_eq!(again.config, p.config);
    assert_eq!(again.config.to_string(), printed);
}

#[test]
fn a_flat_four_space_paste_reads_like_the_nested_configuration() {
    // Guides that paste the configuration as one code block indent every
    // line alike: the parser goes by keyword, not by indentation.
    let flat: String = TOR
        .lines()
        .take_while(|l| !l.starts_with("interface"))
        .map(|l| format!("    {}\n", l.trim()))
        .collect();
    let nested: String = TOR
        .lines()
        .take_while(|l| !l.starts_with("interface"))
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    assert_eq!(ok(&flat).config, ok(&nested).config);
}

#[test]
fn an_unknown_class_name_suggests_the_closest_class_map() {
    let text = TOR.replace(
        "  class type queuing SMB\r\n    bandwidth",
        "  class type queuing SBM\r\n    bandwidth",
    );
    let es = errors(&text);
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(
        summary(&es[0]),
        (
            11,
            22,
            "unknown queuing class `SBM`",
            Some("did you mean `SMB`?")
        )
    );
}

#[test]
fn a_class_map_of_the_other_type_is_named_in_the_hint() {
    let text = "class-map type queuing RDMA\n  match qos-group 3\n\
                policy-map type network-qos NQ\n  class type network-qos RDMA\n    mtu 2240\n";
    let es = errors(text);
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(es[0].message, "unknown network-qos class `RDMA`");
    assert_eq!(
        es[0].hint.as_deref(),
        Some("`RDMA` is a class-map type queuing; define `class-map type network-qos RDMA` with `match qos-group N`")
    );
}

#[test]
fn a_name_far_from_any_class_says_how_to_define_it() {
    let es = errors("policy-map type queuing OUT\n  class type queuing Storage\n");
    assert_eq!(es.len(), 1, "{}", render(&es));
    let hint = es[0].hint.as_deref().unwrap();
    assert!(
        hint.starts_with(
            "define it first with `class-map type queuing Storage` and `match qos-group N`"
        ),
        "{hint}"
    );
}

#[test]
fn a_class_map_that_names_no_qos_group_is_skipped_with_a_warning() {
    let text = "class-map type network-qos match-any cm_nq\n\
                policy-map type network-qos NQ\n  class type network-qos cm_nq\n    mtu 9216\n";
    let p = ok(text);
    assert_eq!(
        warnings(&p),
        vec![(
            3,
            26,
            "class-map type network-qos `cm_nq` matches no qos-group; its class here configures nothing and is skipped"
                .to_string()
        )]
    );
    assert!(p
        .config
        .network_qos_policy("NQ")
        .unwrap()
        .classes
        .is_empty());
    // Its body is still checked.
    let es = errors(&text.replace("mtu 9216", "mtu 99999"));
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(es[0].line, 4);
}

#[test]
fn two_classes_for_one_qos_group_are_an_error() {
    let text = "class-map type queuing A\n  match qos-group 3\n\
                class-map type queuing B\n  match qos-group 3\n\
                policy-map type queuing OUT\n  class type queuing A\n    bandwidth percent 50\n  \
                class type queuing B\n    bandwidth percent 20\n";
    let es = errors(text);
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(
        summary(&es[0]).2,
        "class `B` configures queue 3, which class `A` of policy-map `OUT` already configures"
    );
}

#[test]
fn a_queuing_class_map_names_one_qos_group() {
    let es = errors("class-map type queuing A\n  match qos-group 3\n  match qos-group 4\n");
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(es[0].line, 3);
    assert!(
        es[0].message.contains("already matches qos-group 3"),
        "{}",
        es[0].message
    );
}

#[test]
fn a_system_class_name_still_decides_a_policys_direction() {
    let text = "class-map type queuing A\n  match qos-group 3\n\
                policy-map type queuing OUT\n  class type queuing A\n    bandwidth percent 50\n  \
                class type queuing c-out-8q-q-default\n    bandwidth percent 50\n";
    let p = ok(text);
    let out = p.config.queuing_policy("OUT").unwrap();
    assert_eq!(out.direction, Direction::Egress);
    assert_eq!(out.classes.len(), 2);
}

#[test]
fn no_class_map_and_no_class_remove_the_named_items() {
    let text = format!(
        "{TOR}policy-map type network-qos SMB_NQ\n  no class type network-qos SMB\nno class-map type network-qos Bulk\n"
    );
    let p = ok(&text);
    let nq = p.config.network_qos_policy("SMB_NQ").unwrap();
    assert!(nq.classes.iter().all(|k| k.qos_group != 4));
    assert_eq!(p.config.network_qos_class_maps.len(), 1);
}

// All errors in one pass: a section or class whose header fails still has
// its body checked, and the body changes nothing.

#[test]
fn a_failed_class_header_still_has_its_body_checked() {
    let text = "policy-map type queuing OUT\n  class type queuing c-out-8q-q9\n    bandwidth percent 500\n  \
                class type queuing c-out-8q-q3\n    bandwidth percent 20\n";
    let es = errors(text);
    let lines: Vec<usize> = es.iter().map(|d| d.line).collect();
    assert_eq!(lines, vec![2, 3], "{}", render(&es));
}

#[test]
fn a_failed_policy_header_still_has_its_classes_and_bodies_checked() {
    let text = "policy-map type network-qos NQ extra\n  class type network-qos c-8q-nq9\n    mtu 99999\n  \
                class type network-qos c-8q-nq3\n    pause pfc-cos 9\n";
    let es = errors(text);
    let lines: Vec<usize> = es.iter().map(|d| d.line).collect();
    assert_eq!(lines, vec![1, 2, 3, 5], "{}", render(&es));
}

#[test]
fn a_failed_class_map_header_still_has_its_matches_checked() {
    let es =
        errors("class-map type qos class-default\n  match dscp 64\n  match cos 3\n  mtach cos 4\n");
    let lines: Vec<usize> = es.iter().map(|d| d.line).collect();
    assert_eq!(lines, vec![1, 2, 4], "{}", render(&es));
}

#[test]
fn a_failed_header_s_body_changes_nothing() {
    // Were the broken class's `priority` applied to the open queue 3, it
    // would clash with that queue's bandwidth share and be a second error.
    let text = "policy-map type queuing OUT\n  class type queuing c-out-8q-q3\n    bandwidth percent 20\n  \
                class type queuing c-out-8q-q9\n    priority level 1\n";
    let es = errors(text);
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(es[0].line, 4);
    // The same line in an open class is checked against it.
    let es = errors(&text.replace("c-out-8q-q9\n", "c-out-8q-q3\n"));
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(
        es[0].message,
        "a strict-priority queue cannot also have a bandwidth share"
    );
}
