//! LACPDU tests: a hand-assembled vector read and written, every rejection
//! [`LacpduError`] names, the Ethernet helpers, and properties over
//! random input.

use super::*;
use proptest::prelude::*;

/// An LACPDU as Linux bonding sends it once the bundle is up (fast rate),
/// from the subtype octet on.
static LACPDU: [u8; LACPDU_LEN] = [
    0x01, // subtype: LACP
    0x01, // version 1
    0x01, 0x14, // Actor Information TLV, length 20
    0xff, 0xff, // actor system priority 65535
    0x02, 0x00, 0x00, 0x00, 0x00, 0x0b, // actor system 02:00:00:00:00:0b
    0x00, 0x09, // actor key 9
    0x00, 0xff, // actor port priority 255
    0x00, 0x01, // actor port 1
    0x3f, // actor state: Activity, Timeout, Aggregation, Sync, Collecting, Distributing
    0x00, 0x00, 0x00, // reserved
    0x02, 0x14, // Partner Information TLV, length 20
    0x80, 0x00, // partner system priority 32768
    0x02, 0x00, 0x00, 0x00, 0x00, 0xaa, // partner system 02:00:00:00:00:aa
    0x00, 0x01, // partner key 1
    0x80, 0x00, // partner port priority 32768
    0x00, 0x07, // partner port 7
    0x3d, // partner state: Activity, Aggregation, Sync, Collecting, Distributing
    0x00, 0x00, 0x00, // reserved
    0x03, 0x10, // Collector Information TLV, length 16
    0x00, 0x05, // collector max delay 50 µs
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // reserved
    0x00, 0x00, // Terminator TLV, length 0
    // 50 reserved octets
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00,
];

fn repr() -> LacpduRepr {
    LacpduRepr {
        actor: PortInfo {
            system: SystemId {
                priority: 65535,
                mac: MacAddr([0x02, 0, 0, 0, 0, 0x0b]),
            },
            key: 9,
            port_priority: 255,
            port: 1,
            state: State(0x3f),
        },
        partner: PortInfo {
            system: SystemId {
                priority: 32768,
                mac: MacAddr([0x02, 0, 0, 0, 0, 0xaa]),
            },
            key: 1,
            port_priority: 32768,
            port: 7,
            state: State(0x3d),
        },
        collector_max_delay: 5,
    }
}

#[test]
fn deconstruct() {
    let p = Packet::new_checked(&LACPDU[..]).unwrap();
    assert_eq!(p.subtype(), SlowSubtype::Lacp);
    assert_eq!(p.version(), 1);
    assert_eq!(p.actor_tlv_type(), TlvType::ActorInformation);
    assert_eq!(p.actor_info_len(), 20);
    assert_eq!(p.partner_tlv_type(), TlvType::PartnerInformation);
    assert_eq!(p.partner_info_len(), 20);
    assert_eq!(p.collector_tlv_type(), TlvType::CollectorInformation);
    assert_eq!(p.collector_info_len(), 16);
    assert_eq!(p.collector_max_delay(), 5);
    assert_eq!(p.terminator_tlv_type(), TlvType::Terminator);
    assert_eq!(p.terminator_len(), 0);
    let a = p.actor();
    assert_eq!(a.system.to_string(), "65535,02:00:00:00:00:0b");
    assert_eq!((a.key, a.port_priority, a.port), (9, 255, 1));
    assert_eq!(a.state.letters(), "**DCSGSA");
    assert_eq!(p.partner().state.letters(), "**DCSG*A");
    assert_eq!(LacpduRepr::parse(&LACPDU).unwrap(), repr());
}

#[test]
fn construct() {
    // Pre-filled with 0xa5 so a field never written shows.
    let mut buf = [0xa5u8; LACPDU_LEN + 4];
    assert_eq!(repr().buffer_len(), LACPDU_LEN);
    assert_eq!(repr().emit(&mut buf), Ok(LACPDU_LEN));
    assert_eq!(&buf[..LACPDU_LEN], &LACPDU[..]);
    assert_eq!(&buf[LACPDU_LEN..], &[0xa5; 4]);
    // Reserved octets are written as zero, whatever was there.
    let mut dirty = [0xffu8; LACPDU_LEN];
    repr().emit(&mut dirty).unwrap();
    assert_eq!(dirty, LACPDU);
}

#[test]
fn setters_write_single_fields() {
    let mut buf = LACPDU;
    let mut p = Packet::new_unchecked(&mut buf[..]);
    p.set_version(2);
    p.set_subtype(SlowSubtype::Marker);
    assert_eq!(p.version(), 2);
    assert_eq!(p.subtype(), SlowSubtype::Marker);
    p.set_collector(0x1234);
    assert_eq!(p.collector_max_delay(), 0x1234);
    assert_eq!(&buf[44..46], &[0x12, 0x34]);
}

#[test]
fn truncated_and_short() {
    for n in [0, 1, 2, 59, 60, LACPDU_LEN - 1] {
        assert_eq!(
            LacpduRepr::parse(&LACPDU[..n]),
            Err(LacpduError::Truncated),
            "{n} octets"
        );
    }
    assert_eq!(
        Packet::new_unchecked(&LACPDU[..10]).check_len(),
        Err(WireError::Truncated)
    );
    // Trailing octets (an Ethernet trailer) are ignored.
    let mut long = LACPDU.to_vec();
    long.extend_from_slice(&[0xee; 20]);
    assert_eq!(LacpduRepr::parse(&long), Ok(repr()));
    // Emit into a short buffer is an error, not a panic.
    let mut short = [0u8; LACPDU_LEN - 1];
    assert_eq!(repr().emit(&mut short), Err(LacpduError::Truncated));
    assert_eq!(
        WireError::from(LacpduError::Truncated),
        WireError::Truncated
    );
}

#[test]
fn other_subtypes_and_versions() {
    let mut v = LACPDU;
    v[0] = 2;
    assert_eq!(
        LacpduRepr::parse(&v),
        Err(LacpduError::NotLacp(SlowSubtype::Marker))
    );
    // A 40-octet Marker PDU is a Marker PDU, not a truncated LACPDU.
    assert_eq!(
        LacpduRepr::parse(&v[..40]),
        Err(LacpduError::NotLacp(SlowSubtype::Marker))
    );
    v[0] = 0x42;
    assert_eq!(
        LacpduRepr::parse(&v),
        Err(LacpduError::NotLacp(SlowSubtype::Unknown(0x42)))
    );
    let mut v = LACPDU;
    v[1] = 0;
    assert_eq!(LacpduRepr::parse(&v), Err(LacpduError::BadVersion(0)));
    assert_eq!(
        WireError::from(LacpduError::BadVersion(0)),
        WireError::Malformed
    );
    // A later version is read through its version 1 fields, even with a
    // further TLV where version 1 has its Terminator.
    let mut v = LACPDU;
    v[1] = 2;
    v[58] = 0x04;
    v[59] = 0x06;
    assert_eq!(LacpduRepr::parse(&v), Ok(repr()));
    // In version 1 that TLV is out of place.
    v[1] = 1;
    assert_eq!(
        LacpduRepr::parse(&v),
        Err(LacpduError::BadTlvType {
            expected: TlvType::Terminator,
            found: 4
        })
    );
}

#[test]
fn misplaced_tlvs() {
    let cases: [(usize, u8, LacpduError); 8] = [
        (
            2,
            2,
            LacpduError::BadTlvType {
                expected: TlvType::ActorInformation,
                found: 2,
            },
        ),
        (
            3,
            19,
            LacpduError::BadTlvLength {
                tlv: TlvType::ActorInformation,
                found: 19,
            },
        ),
        (
            22,
            1,
            LacpduError::BadTlvType {
                expected: TlvType::PartnerInformation,
                found: 1,
            },
        ),
        (
            23,
            0,
            LacpduError::BadTlvLength {
                tlv: TlvType::PartnerInformation,
                found: 0,
            },
        ),
        (
            42,
            0,
            LacpduError::BadTlvType {
                expected: TlvType::CollectorInformation,
                found: 0,
            },
        ),
        (
            43,
            20,
            LacpduError::BadTlvLength {
                tlv: TlvType::CollectorInformation,
                found: 20,
            },
        ),
        (
            58,
            3,
            LacpduError::BadTlvType {
                expected: TlvType::Terminator,
                found: 3,
            },
        ),
        (
            59,
            2,
            LacpduError::BadTlvLength {
                tlv: TlvType::Terminator,
                found: 2,
            },
        ),
    ];
    for (at, value, err) in cases {
        let mut v = LACPDU;
        v[at] = value;
        assert_eq!(LacpduRepr::parse(&v), Err(err), "octet {at} = {value}");
        assert!(!err.to_string().is_empty());
    }
    // Reserved octets are not validated (802.1AX: ignored on receipt).
    let mut v = LACPDU;
    v[19] = 0xff;
    v[50] = 0xff;
    v[100] = 0xff;
    assert_eq!(LacpduRepr::parse(&v), Ok(repr()));
}

#[test]
fn ethernet_framing() {
    let src = MacAddr([0x02, 0, 0, 0, 0, 0x0b]);
    let mut frame = [0xa5u8; FRAME_LEN + 2];
    assert_eq!(emit_frame(src, &repr(), &mut frame), Ok(FRAME_LEN));
    assert_eq!(&frame[0..6], &[0x01, 0x80, 0xc2, 0x00, 0x00, 0x02]);
    assert_eq!(&frame[6..12], &src.0);
    assert_eq!(&frame[12..14], &[0x88, 0x09]);
    assert_eq!(&frame[14..FRAME_LEN], &LACPDU[..]);
    assert_eq!(&frame[FRAME_LEN..], &[0xa5; 2]);
    let (from, payload) = slow_payload(&frame[..FRAME_LEN]).unwrap();
    assert_eq!(from, src);
    assert_eq!(LacpduRepr::parse(payload), Ok(repr()));
    assert_eq!(
        emit_frame(src, &repr(), &mut [0u8; FRAME_LEN - 1]),
        Err(LacpduError::Truncated)
    );
    // Not Slow Protocols: another EtherType, a VLAN tag, a runt.
    let mut other = frame;
    other[12..14].copy_from_slice(&[0x88, 0xcc]);
    assert!(slow_payload(&other).is_none());
    other[12..14].copy_from_slice(&[0x81, 0x00]);
    assert!(slow_payload(&other).is_none());
    assert!(slow_payload(&frame[..13]).is_none());
    assert_eq!(slow_payload(&frame[..14]).map(|(_, p)| p.len()), Some(0));
}

prop_compose! {
    fn arb_info()(
        priority in any::<u16>(), mac in any::<[u8; 6]>(), key in any::<u16>(),
        port_priority in any::<u16>(), port in any::<u16>(), state in any::<u8>(),
    ) -> PortInfo {
        PortInfo {
            system: SystemId { priority, mac: MacAddr(mac) },
            key,
            port_priority,
            port,
            state: State(state),
        }
    }
}

prop_compose! {
    /// Every LacpduRepr is legal: all field values are encodable.
    pub(crate) fn arb_lacpdu()(actor in arb_info(), partner in arb_info(), collector_max_delay in any::<u16>()) -> LacpduRepr {
        LacpduRepr { actor, partner, collector_max_delay }
    }
}

proptest! {
    #[test]
    fn round_trip(r in arb_lacpdu(), trailer in proptest::collection::vec(any::<u8>(), 0..16)) {
        let mut bytes = vec![0u8; r.buffer_len()];
        prop_assert_eq!(r.emit(&mut bytes), Ok(LACPDU_LEN));
        bytes.extend_from_slice(&trailer);
        prop_assert_eq!(LacpduRepr::parse(&bytes), Ok(r));
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(r) = LacpduRepr::parse(&bytes) {
            let mut again = [0u8; LACPDU_LEN];
            r.emit(&mut again).unwrap();
            prop_assert_eq!(LacpduRepr::parse(&again), Ok(r));
        }
        let _ = slow_payload(&bytes);
    }

    #[test]
    fn damaged_lacpdu_never_panics(at in 0usize..LACPDU_LEN, value in any::<u8>(), len in 0usize..=LACPDU_LEN) {
        // Random damage to a valid LACPDU reaches the deeper checks.
        let mut v = LACPDU;
        v[at] = value;
        let _ = LacpduRepr::parse(&v[..len]);
        let p = Packet::new_unchecked(&v[..len]);
        if p.check_len().is_ok() {
            let _ = (p.actor(), p.partner(), p.collector_max_delay(), p.terminator_len());
        }
    }
}

/// A whole frame Open vSwitch 3.1 (`lacp=active`, `lacp-time=fast`,
/// userspace datapath) sent to the agent in the interop test, before it
/// had the agent in sync.
static OVS_FRAME: [u8; FRAME_LEN] = [
    0x01, 0x80, 0xc2, 0x00, 0x00, 0x02, // destination: Slow Protocols
    0x82, 0x68, 0xc8, 0x06, 0xf9, 0x7d, // source: the OVS member's MAC
    0x88, 0x09, // EtherType: Slow Protocols
    0x01, 0x01, // LACP, version 1
    0x01, 0x14, 0xff, 0xfe, // Actor TLV; system priority 65534
    0x02, 0x4f, 0x56, 0x53, 0x00, 0x01, // actor system (lacp-system-id)
    0x00, 0x01, 0xff, 0xff, 0x00, 0x02, // key 1, port priority 65535, port 2
    0x3f, 0x00, 0x00, 0x00, // state A T G S C D, reserved
    0x02, 0x14, 0x80, 0x00, // Partner TLV; system priority 32768
    0x02, 0x4c, 0x41, 0x43, 0x50, 0x01, // partner system: the agent
    0x00, 0x07, 0x80, 0x00, 0x00, 0x02, // key 7, port priority 32768, port 2
    0x07, 0x00, 0x00, 0x00, // state A T G (agent not yet in sync), reserved
    0x03, 0x10, 0x00, 0x00, // Collector TLV, max delay 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // reserved
    0x00, 0x00, // Terminator
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, // 50 reserved octets
];

#[test]
fn open_vswitch_frame() {
    let (src, payload) = slow_payload(&OVS_FRAME).unwrap();
    assert_eq!(src.to_string(), "82:68:c8:06:f9:7d");
    let r = LacpduRepr::parse(payload).unwrap();
    assert_eq!(r.actor.system.to_string(), "65534,02:4f:56:53:00:01");
    assert_eq!(
        (r.actor.key, r.actor.port_priority, r.actor.port),
        (1, 65535, 2)
    );
    assert_eq!(r.actor.state, State(0x3f));
    assert_eq!(r.partner.system.to_string(), "32768,02:4c:41:43:50:01");
    assert_eq!(
        (r.partner.key, r.partner.port_priority, r.partner.port),
        (7, 32768, 2)
    );
    assert_eq!(r.partner.state.letters(), "*****GSA");
    assert_eq!(r.collector_max_delay, 0);
    // Emitting what was parsed, from the same source, gives the frame back.
    let mut again = [0u8; FRAME_LEN];
    assert_eq!(emit_frame(src, &r, &mut again), Ok(FRAME_LEN));
    assert_eq!(again, OVS_FRAME);
}
