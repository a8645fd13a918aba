//! The book's two-switch RoCEv2 configuration (REFERENCE.md §5) as the
//! agent's plain configuration: what railyard's control plane makes of it,
//! so the agent's tests here and the control plane's test of that
//! translation check against the same values.

use std::net::Ipv4Addr;

use crate::dcbx::{App, DcbxMode, Ets, LocalDcbx, Pfc, ROCEV2_UDP_PORT, SEL_DSCP, SEL_UDP};
use crate::wire::lldpdu::{
    ChassisIdSubtype, ChassisIdTlv, LldpduRepr, OrgTlv, PortIdSubtype, PortIdTlv,
};
use crate::wire::MacAddr;
use crate::{ethernet_frame, AgentConfig, PortConfig, TlvSelect};

/// The DCBX a port of the book's switch advertises: priority p → TC p, q7
/// strict, q3 50 and the default queue 100 (bandwidth remaining) normalised
/// to 67/33, PFC on priority 3, willing (`priority-flow-control mode auto`),
/// APP RoCEv2 and the DSCPs 24 → 3 and 48 → 7.
pub fn book_dcbx() -> LocalDcbx {
    LocalDcbx {
        ets: Ets {
            willing: true,
            prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
            tc_bandwidth: [67, 0, 0, 33, 0, 0, 0, 0],
            tsa: [2, 2, 2, 2, 2, 2, 2, 0],
        },
        pfc: Pfc {
            willing: true,
            mbc: false,
            cap: 8,
            enable: 0x08,
        },
        app: vec![
            App {
                priority: 3,
                selector: SEL_UDP,
                protocol: ROCEV2_UDP_PORT,
            },
            App {
                priority: 3,
                selector: SEL_DSCP,
                protocol: 24,
            },
            App {
                priority: 7,
                selector: SEL_DSCP,
                protocol: 48,
            },
        ],
    }
}

/// One switch of the pair: hostname, base MAC (the chassis ID; the port's
/// MAC is derived from it), the port's address and description.
fn book_switch(host: &str, base: [u8; 4], ip: Ipv4Addr, description: &str) -> AgentConfig {
    let [a, b, c, d] = base;
    AgentConfig {
        enabled: true,
        chassis_mac: MacAddr([a, b, c, d, 0, 0]),
        system_name: host.into(),
        system_description: format!("railyard {} software switch", env!("CARGO_PKG_VERSION")),
        timer_s: 30,
        holdtime_s: 120,
        reinit_s: 2,
        tlv_select: TlvSelect::default(),
        custom_tlvs: Vec::new(),
        ports: vec![PortConfig {
            name: "Ethernet1/1".into(),
            description: Some(description.into()),
            mac: MacAddr([a, b, c, d, 1, 1]),
            admin_up: true,
            transmit: true,
            receive: true,
            mtu: 9216,
            mgmt_ipv4: Some(ip),
            dcbx_mode: DcbxMode::Auto,
            dcbx: Some(book_dcbx()),
            configured_pfc: 0x08,
            pfc_auto: true,
        }],
    }
}

/// leaf1 of the book (10.0.0.1, "uplink to leaf2").
pub fn leaf1() -> AgentConfig {
    book_switch(
        "leaf1",
        [0x02, 0xa8, 0x9b, 0x54],
        Ipv4Addr::new(10, 0, 0, 1),
        "uplink to leaf2",
    )
}

/// leaf2 of the book (10.0.0.2, "uplink to leaf1"), with one custom TLV
/// (`lldp tlv custom oui 00:11:22 subtype 1 info 0102`).
pub fn leaf2() -> AgentConfig {
    let mut c = leaf2_described("uplink to leaf1");
    c.custom_tlvs.push(OrgTlv {
        oui: [0x00, 0x11, 0x22],
        subtype: 1,
        info: vec![0x01, 0x02],
    });
    c
}

fn leaf1_described(description: &str) -> AgentConfig {
    let mut c = leaf1();
    if let Some(p) = c.ports.first_mut() {
        p.description = Some(description.into());
    }
    c
}

fn leaf2_described(description: &str) -> AgentConfig {
    book_switch(
        "leaf2",
        [0x02, 0xab, 0x9b, 0x59],
        Ipv4Addr::new(10, 0, 0, 2),
        description,
    )
}

/// leaf1 with `priority-flow-control mode on` (not willing) and description "x".
pub fn leaf1_pfc_on() -> AgentConfig {
    let mut c = leaf1_described("x");
    for p in &mut c.ports {
        if let Some(d) = p.dcbx.as_mut() {
            d.ets.willing = false;
            d.pfc.willing = false;
        }
        p.pfc_auto = false;
    }
    c
}

/// leaf2 without the custom TLV, with `lldp dcbx version cee` and description "x".
pub fn leaf2_cee() -> AgentConfig {
    let mut c = leaf2_described("x");
    for p in &mut c.ports {
        p.dcbx_mode = DcbxMode::Cee;
    }
    c
}

/// leaf1 without `pause pfc-cos 3` (no lossless class, so no DCBX) and description "x".
pub fn leaf1_without_pfc() -> AgentConfig {
    let mut c = leaf1_described("x");
    for p in &mut c.ports {
        p.dcbx = None;
        p.configured_pfc = 0;
    }
    c
}

/// A neighbour's LLDP frame from `mac`, naming its port `port`, with the
/// given TTL and org TLVs, as the agent receives it.
#[allow(clippy::expect_used)] // a fixture: a frame that does not build is a broken test
pub fn peer_frame(mac: [u8; 6], port: &str, ttl: u16, orgs: Vec<OrgTlv>) -> Vec<u8> {
    let mut pdu = LldpduRepr::new(
        ChassisIdTlv {
            subtype: ChassisIdSubtype::MacAddress,
            id: mac.to_vec(),
        },
        PortIdTlv {
            subtype: PortIdSubtype::InterfaceName,
            id: port.as_bytes().to_vec(),
        },
        ttl,
    );
    pdu.org_specific = orgs;
    ethernet_frame(MacAddr(mac), &pdu.to_vec().expect("a fixture LLDPDU fits"))
}
