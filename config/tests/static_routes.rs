//! `ip route` options from real NX-OS configurations: `track`, a next hop
//! in another VRF, `name`, `tag` and the preference in either order.

mod common;

use common::{clean, errors, ok, warnings};

const PORT: &str = "interface Ethernet1/1\n  no switchport\n  ip address 10.255.1.1/24\n";

/// The routes of a configuration as `PREFIX TARGET` strings.
fn routes(text: &str) -> Vec<String> {
    ok(text)
        .config
        .routes
        .iter()
        .map(|r| format!("{} {}", r.prefix, r.target))
        .collect()
}

#[test]
fn name_tag_and_preference_in_either_order() {
    let text = format!(
        "{PORT}ip route 10.0.5.0/24 Ethernet1/1 10.255.1.254 name foo tag 1000\n\
         ip route 10.0.6.0/24 Ethernet1/1 10.255.1.254 name foo tag 1000 5\n\
         ip route 10.0.7.0/24 Ethernet1/1 10.255.1.254 name foo 5\n\
         ip route 10.0.8.0/24 Ethernet1/1 10.255.1.254 name foo 5 tag 1000\n"
    );
    let p = clean(&text);
    assert_eq!(p.config.routes.len(), 4);
}

#[test]
fn track_is_accepted_and_warned_once_with_a_count() {
    let text = format!(
        "{PORT}ip route 10.0.3.0/24 Ethernet1/1 10.255.1.254 track 500\n\
         ip route 10.0.4.0/24 Ethernet1/1 10.255.1.254 track 500 name foo 5 tag 1000\n"
    );
    let p = ok(&text);
    assert_eq!(p.config.routes.len(), 2, "tracked routes are installed");
    let ws = warnings(&p);
    assert_eq!(ws.len(), 1, "{ws:?}");
    assert_eq!((ws[0].0, ws[0].1), (4, 47));
    assert_eq!(
        ws[0].2,
        "`ip route … track N`: object tracking is not modelled; the route is installed as if \
         the tracked object were up (2 times: lines 4, 5)"
    );
    let e = errors(&format!(
        "{PORT}ip route 10.0.3.0/24 Ethernet1/1 10.255.1.254 track 0\n"
    ));
    assert_eq!(e[0].message, "track object 0 is out of range");
    let e = errors(&format!(
        "{PORT}ip route 10.0.3.0/24 Ethernet1/1 10.255.1.254 track\n"
    ));
    assert_eq!((e[0].line, e[0].col), (4, 53));
}

#[test]
fn a_next_hop_in_another_vrf_is_left_out_with_a_warning() {
    let text = format!(
        "{PORT}ip route 10.0.9.0/24 10.255.2.254 vrf vrf2 track 500 name foo 5 tag 1000\n\
         ip route 10.0.10.0/24 Ethernet1/1 10.255.2.254 vrf vrf2\n\
         ip route 10.0.11.0/24 10.255.1.254 vrf default\n"
    );
    assert_eq!(routes(&text), vec!["10.0.11.0/24 10.255.1.254".to_string()]);
    let p = ok(&text);
    let ws = warnings(&p);
    assert_eq!(ws.len(), 2, "{ws:?}");
    assert_eq!(
        ws[0],
        (
            4,
            35,
            "`ip route 10.0.9.0/24 10.255.2.254 vrf vrf2`: the next hop is in VRF vrf2; railyard \
             forwards in the default VRF only, so the route is left out"
                .to_string()
        )
    );
    assert!(ws[1]
        .2
        .starts_with("`ip route 10.0.10.0/24 Ethernet1/1 10.255.2.254 vrf vrf2`"));
    // `vrf` needs a name.
    let e = errors(&format!("{PORT}ip route 10.0.9.0/24 10.255.2.254 vrf\n"));
    assert_eq!(e[0].line, 4);
}
