//! `hardware profile dlb` as Cisco's own examples write it: `static-pinning`
//! with `source … destination …`, `mode policy-driven …`, `exit` lines, and
//! `dre-thresholds` levels read as band widths.

mod common;

use common::{clean, errors, ok, warnings};
use railyard_config::{DlbMode, DlbPin, InterfaceName};

/// Cisco's CloudScale example as genielibs prints it (one-space indent,
/// ` , ` separators, double spaces and a trailing blank in `dre-thresholds`).
const CLOUDSCALE: &str = "hardware profile dlb\n mode flowlet\n dlb-interface Ethernet1/5 , Ethernet1/7 , Ethernet1/17 , Ethernet1/21 , Ethernet1/26\n mac-address aa:bb:cc:dd:ee:ff\n flowlet-aging 600\n dre-thresholds  level-1 15  level-2 20  level-3 30  level-4 15  level-5 10  level-6 5  level-7 5 \n static-pinning\n source Ethernet1/1 destination Ethernet1/2\n exit";

fn pin(src: u8, dst: u8) -> DlbPin {
    DlbPin {
        source: InterfaceName::new(1, src),
        destination: InterfaceName::new(1, dst),
    }
}

#[test]
fn cisco_cloudscale_example_loads_with_its_pin_and_levels() {
    let p = ok(CLOUDSCALE);
    let d = p.config.dlb.clone().unwrap();
    assert_eq!(d.static_pinning, vec![pin(1, 2)]);
    assert_eq!(d.dre_thresholds, Some([15, 20, 30, 15, 10, 5, 5]));
    assert_eq!(d.dre_band_starts(), [15, 35, 65, 80, 90, 95, 100]);
    assert_eq!(d.flowlet_aging_us, 600);
    // Levels adding up to 100 draw no warning; the only one says the pin's
    // destination is outside the DLB ports, so it can never apply.
    let ws = warnings(&p);
    assert_eq!(ws.len(), 1, "{ws:?}");
    assert_eq!((ws[0].0, ws[0].1), (8, 9));
    assert!(ws[0].2.contains("not a `dlb-interface`"), "{}", ws[0].2);
}

#[test]
fn policy_driven_mode_is_accepted_applied_to_all_and_warned() {
    let text = "hardware profile dlb\n mode policy-driven per-packet\n dlb-interface Ethernet1/1 , Ethernet1/2 , Ethernet1/3 , Ethernet1/4\n mac-address 00:cc:cc:cc:cc:cd\n flowlet-aging 1024\n static-pinning\n source Ethernet1/5 destination Ethernet1/2\n exit";
    let p = ok(text);
    let d = p.config.dlb.clone().unwrap();
    assert_eq!((d.mode, d.policy_driven), (DlbMode::PerPacket, true));
    assert_eq!(d.static_pinning, vec![pin(5, 2)]);
    assert_eq!(
        warnings(&p),
        vec![(
            2,
            2,
            "`mode policy-driven per-packet`: the QoS policy that selects DLB traffic is not \
             modelled; per-packet balancing applies to all traffic over DLB groups"
                .to_string()
        )]
    );
    // It prints as written and reads back the same.
    let printed = p.config.to_string();
    assert!(
        printed.contains("  mode policy-driven per-packet\n"),
        "{printed}"
    );
    assert!(
        printed.contains("  static-pinning\n    source Ethernet1/5 destination Ethernet1/2\n"),
        "{printed}"
    );
    assert_eq!(ok(&printed).config, p.config);
    // `mode policy-driven flowlet` too; `no mode` clears it.
    let p = ok("hardware profile dlb\n  mode policy-driven flowlet\n");
    let d = p.config.dlb.clone().unwrap();
    assert_eq!((d.mode, d.policy_driven), (DlbMode::Flowlet, true));
    let d = ok("hardware profile dlb\n  mode policy-driven flowlet\n  no mode\n")
        .config
        .dlb
        .unwrap();
    assert!(!d.policy_driven);
}

#[test]
fn pins_replace_per_source_and_can_be_removed() {
    let base = "hardware profile dlb\n  dlb-interface all\n  static-pinning\n    source Ethernet1/1 destination Ethernet1/2\n    source Ethernet1/3 destination Ethernet1/4\n    source Ethernet1/1 destination Ethernet1/5\n";
    let d = clean(base).config.dlb.unwrap();
    assert_eq!(d.static_pinning, vec![pin(1, 5), pin(3, 4)]);
    let d = clean(&format!(
        "{base}    no source Ethernet1/3 destination Ethernet1/4\n"
    ))
    .config
    .dlb
    .unwrap();
    assert_eq!(d.static_pinning, vec![pin(1, 5)]);
    // After `exit` the DLB section is still open; `no static-pinning` clears all.
    let d = clean(&format!(
        "{base}  exit\n  flowlet-aging 700\n  no static-pinning\n"
    ))
    .config
    .dlb
    .unwrap();
    assert!(d.static_pinning.is_empty());
    assert_eq!(d.flowlet_aging_us, 700);
}

#[test]
fn bad_pins_are_errors_with_hints() {
    let e = errors(
        "hardware profile dlb\n  static-pinning\n    source Ethernet1/1 destination Ethernet1/1\n",
    );
    assert_eq!(e[0].message, "Ethernet1/1 is pinned to itself");
    let e = errors("hardware profile dlb\n  static-pinning\n    source Ethernet1/1 Ethernet1/2\n");
    assert_eq!((e[0].line, e[0].col), (3, 24));
    let e = errors("hardware profile dlb\n  static-pinning\n    source port-channel1 destination Ethernet1/2\n");
    assert!(
        e[0].message.contains("not port-channel"),
        "{}",
        e[0].message
    );
    let e = errors("hardware profile dlb\n  static-pinning\n    source Ethernet1/1-2 destination Ethernet1/3\n");
    assert!(e[0].message.contains("not the range"), "{}", e[0].message);
}
