//! Tests of the whole LLDPDU: parse and emit against byte vectors, every
//! rejection [`LldpduError`] names, and round-trip properties.

use super::*;
use crate::wire::MacAddr;
use proptest::collection::vec;
use proptest::prelude::*;

/// Every TLV kind once, in the order `emit` writes them:
static FULL: &[u8] = &[
    0x02, 0x07, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // chassis: MAC 02:00:00:00:00:01
    0x04, 0x0c, 0x05, b'E', b't', b'h', b'e', b'r', b'n', b'e', b't', b'1', b'/',
    b'1', // port: ifname "Ethernet1/1"
    0x06, 0x02, 0x00, 0x78, // ttl 120
    0x08, 0x04, b'u', b'p', b'-', b'1', // port description "up-1"
    0x0a, 0x05, b'l', b'e', b'a', b'f', b'1', // system name "leaf1"
    0x0c, 0x08, b'r', b'a', b'i', b'l', b'y', b'a', b'r', b'd', // system description
    0x0e, 0x04, 0x00, 0x14, 0x00, 0x04, // caps: bridge|router supported, bridge enabled
    // management address: string length 5, IPv4 10.0.0.1, ifIndex 7, no OID
    0x10, 0x0c, 0x05, 0x01, 0x0a, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0xfe, 0x06,
    0x00, 0x12, 0x0f, 0x04, 0x23, 0xf0, // 802.3 max frame size 9200
    0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x08, 0x08, // DCBX PFC (REFERENCE.md §3)
    0x12, 0x02, 0xab, 0xcd, // unknown type 9, two bytes
    0x00, 0x00, // end
];

fn full() -> LldpduRepr {
    LldpduRepr {
        chassis_id: ChassisIdTlv {
            subtype: ChassisIdSubtype::MacAddress,
            id: vec![0x02, 0, 0, 0, 0, 0x01],
        },
        port_id: PortIdTlv {
            subtype: PortIdSubtype::InterfaceName,
            id: b"Ethernet1/1".to_vec(),
        },
        ttl: 120,
        port_description: Some(b"up-1".to_vec()),
        system_name: Some(b"leaf1".to_vec()),
        system_description: Some(b"railyard".to_vec()),
        capabilities: Some(CapabilitiesTlv {
            supported: CAP_BRIDGE | CAP_ROUTER,
            enabled: CAP_BRIDGE,
        }),
        management_addresses: vec![ManagementAddressTlv {
            address_subtype: 1,
            address: vec![10, 0, 0, 1],
            interface_subtype: 2,
            interface_number: 7,
            oid: vec![],
        }],
        org_specific: vec![
            OrgTlv::new_max_frame_size(9200),
            OrgTlv {
                oui: OUI_IEEE_802_1,
                subtype: 0x0b,
                info: vec![0x08, 0x08],
            },
        ],
        unknown: vec![UnknownTlv {
            tlv_type: 9,
            value: vec![0xab, 0xcd],
        }],
    }
}

/// The mandatory TLVs of `FULL` (chassis, port, TTL).
fn mandatory() -> Vec<u8> {
    FULL[..27].to_vec()
}

fn with(tail: &[u8]) -> Vec<u8> {
    let mut v = mandatory();
    v.extend_from_slice(tail);
    v
}

#[test]
fn parse_full() {
    let r = LldpduRepr::parse(FULL).unwrap();
    assert_eq!(r, full());
    assert_eq!(r.chassis_id.mac(), Some(MacAddr([2, 0, 0, 0, 0, 1])));
    assert_eq!(r.port_id.id_lossy(), "Ethernet1/1");
    assert_eq!(r.port_id.mac(), None);
    assert_eq!(r.system_name_lossy().unwrap(), "leaf1");
    assert_eq!(r.port_description_lossy().unwrap(), "up-1");
    assert_eq!(r.system_description_lossy().unwrap(), "railyard");
    assert_eq!(r.max_frame_size(), Some(9200));
    assert!(!r.is_shutdown());
}

#[test]
fn emit_full() {
    let r = full();
    assert_eq!(r.buffer_len(), FULL.len());
    let mut buf = vec![0xa5u8; FULL.len() + 3];
    assert_eq!(r.emit(&mut buf), Ok(FULL.len()));
    assert_eq!(&buf[..FULL.len()], FULL);
    assert_eq!(&buf[FULL.len()..], &[0xa5; 3]);
    assert_eq!(r.to_vec().unwrap(), FULL);
}

#[test]
fn existing_vector_with_padding() {
    // The walk test's LLDPDU: mandatory TLVs, PFC, End, 8 bytes of padding.
    let r = LldpduRepr::parse(&super::tlv::tests::LLDPDU).unwrap();
    assert_eq!(r.chassis_id.mac(), Some(MacAddr([2, 0, 0, 0, 0, 1])));
    assert_eq!(r.port_id.id, b"e1");
    assert_eq!(r.ttl, 120);
    assert_eq!(r.org_specific.len(), 1);
    assert_eq!(r.to_vec().unwrap(), &super::tlv::tests::LLDPDU[..28]);
    // Ethernet pads to 60 bytes: zero padding after End is fine.
    let mut padded = FULL.to_vec();
    padded.resize(200, 0);
    assert_eq!(LldpduRepr::parse(&padded), Ok(full()));
}

#[test]
fn shutdown_and_minimal() {
    let r = LldpduRepr::new(
        ChassisIdTlv {
            subtype: ChassisIdSubtype::Local,
            id: b"x".to_vec(),
        },
        PortIdTlv {
            subtype: PortIdSubtype::Unknown(0),
            id: vec![0; 255],
        },
        0,
    );
    let bytes = r.to_vec().unwrap();
    // Port ID value of 256 bytes: type 2, length 0x100.
    assert_eq!(&bytes[..7], &[0x02, 0x02, 0x07, b'x', 0x05, 0x00, 0x00]);
    let back = LldpduRepr::parse(&bytes).unwrap();
    assert!(back.is_shutdown());
    assert_eq!(back, r);
}

#[test]
fn mandatory_order() {
    use LldpduError::MissingMandatory as M;
    assert_eq!(LldpduRepr::parse(&[]), Err(M(TlvType::ChassisId)));
    assert_eq!(LldpduRepr::parse(&[0, 0]), Err(M(TlvType::ChassisId)));
    // Port ID first.
    assert_eq!(LldpduRepr::parse(&FULL[9..]), Err(M(TlvType::ChassisId)));
    // Chassis, then TTL.
    let mut v = FULL[..9].to_vec();
    v.extend_from_slice(&[0x06, 0x02, 0x00, 0x78, 0x00, 0x00]);
    assert_eq!(LldpduRepr::parse(&v), Err(M(TlvType::PortId)));
    // Chassis, port, End.
    let mut v = FULL[..23].to_vec();
    v.extend_from_slice(&[0x00, 0x00]);
    assert_eq!(LldpduRepr::parse(&v), Err(M(TlvType::Ttl)));
    // Chassis, port, then the bytes end.
    assert_eq!(LldpduRepr::parse(&FULL[..23]), Err(M(TlvType::Ttl)));
}

#[test]
fn bad_lengths() {
    use LldpduError::BadLength as B;
    // Chassis ID of 1 byte (subtype only).
    let v = [0x02, 0x01, 0x04];
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ChassisId)));
    // Chassis ID of 257 bytes.
    let mut v = vec![0x03, 0x01, 0x07];
    v.extend_from_slice(&[b'a'; 256]);
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ChassisId)));
    // 256 is the limit.
    let mut v = vec![0x03, 0x00, 0x07];
    v.extend_from_slice(&[b'a'; 255]);
    v.extend_from_slice(&FULL[9..27]);
    v.extend_from_slice(&[0, 0]);
    assert_eq!(LldpduRepr::parse(&v).unwrap().chassis_id.id.len(), 255);
    // Port ID of 1 byte.
    let mut v = FULL[..9].to_vec();
    v.extend_from_slice(&[0x04, 0x01, 0x05]);
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::PortId)));
    // TTL of 3 bytes.
    let mut v = FULL[..23].to_vec();
    v.extend_from_slice(&[0x06, 0x03, 0x00, 0x78, 0x00, 0x00, 0x00]);
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::Ttl)));
    // Capabilities of 3 bytes.
    let v = with(&[0x0e, 0x03, 0x00, 0x14, 0x00, 0x00, 0x00]);
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::SystemCapabilities)));
    // Management address string length 6 (5-byte address) in a 12-byte value.
    let v = with(&[
        0x10, 0x0c, 0x06, 0x01, 0x0a, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00,
        0x00,
    ]);
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ManagementAddress)));
    // Management address with a string length of 1 (no address).
    let v = with(&[
        0x10, 0x08, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
    ]);
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ManagementAddress)));
    // Management address whose OID length claims more than is there.
    let v = with(&[
        0x10, 0x0c, 0x05, 0x01, 0x0a, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x01, 0x00,
        0x00,
    ]);
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ManagementAddress)));
    // Management address with a byte left over after the OID.
    let v = with(&[
        0x10, 0x0d, 0x05, 0x01, 0x0a, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0xff,
        0x00, 0x00,
    ]);
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ManagementAddress)));
    // Organisationally specific of 3 bytes.
    let v = with(&[0xfe, 0x03, 0x00, 0x80, 0xc2, 0x00, 0x00]);
    assert_eq!(
        LldpduRepr::parse(&v),
        Err(B(TlvType::OrganizationallySpecific))
    );
    // 4 bytes (OUI, subtype, empty info) is enough.
    let v = with(&[0xfe, 0x04, 0x00, 0x80, 0xc2, 0x00, 0x00, 0x00]);
    assert_eq!(LldpduRepr::parse(&v).unwrap().org_specific[0].info, b"");
    // End with a length.
    let v = with(&[0x00, 0x01, 0x00]);
    assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::End)));
}

#[test]
fn duplicates() {
    use LldpduError::Duplicate as D;
    for (tlv, t) in [
        (&FULL[..9], TlvType::ChassisId),
        (&FULL[9..23], TlvType::PortId),
        (&FULL[23..27], TlvType::Ttl),
        (&FULL[27..33], TlvType::PortDescription),
        (&FULL[33..40], TlvType::SystemName),
        (&FULL[40..50], TlvType::SystemDescription),
        (&FULL[50..56], TlvType::SystemCapabilities),
    ] {
        // The mandatory ones are already there once, so one more is a
        // duplicate; the optional ones go in twice.
        let copies = if MANDATORY.contains(&t) { 1 } else { 2 };
        let mut tail = tlv.repeat(copies);
        tail.extend_from_slice(&[0, 0]);
        assert_eq!(LldpduRepr::parse(&with(&tail)), Err(D(t)), "{t:?}");
    }
    // Management addresses and org TLVs may repeat.
    let mut tail = FULL[56..70].repeat(2);
    tail.extend_from_slice(&FULL[78..86].repeat(2));
    tail.extend_from_slice(&[0, 0]);
    let r = LldpduRepr::parse(&with(&tail)).unwrap();
    assert_eq!((r.management_addresses.len(), r.org_specific.len()), (2, 2));
}

#[test]
fn end_and_trailing() {
    // No End.
    assert_eq!(
        LldpduRepr::parse(&FULL[..FULL.len() - 2]),
        Err(LldpduError::MissingEnd)
    );
    assert_eq!(
        LldpduRepr::parse(&mandatory()),
        Err(LldpduError::MissingEnd)
    );
    // Non-zero bytes after End.
    let mut v = FULL.to_vec();
    v.extend_from_slice(&[0, 0, 0, 1]);
    assert_eq!(LldpduRepr::parse(&v), Err(LldpduError::TrailingBytes));
    // A TLV after End is trailing bytes, not a TLV.
    let mut v = with(&[0x00, 0x00]);
    v.extend_from_slice(&FULL[27..33]);
    assert_eq!(LldpduRepr::parse(&v), Err(LldpduError::TrailingBytes));
}

#[test]
fn truncated() {
    // Cut inside each TLV of FULL: always Truncated or a mandatory/End
    // error at a TLV boundary, never a panic.
    let boundaries = [0, 9, 23, 27, 33, 40, 50, 56, 70, 78, 86, 90];
    for cut in 1..FULL.len() {
        let got = LldpduRepr::parse(&FULL[..cut]);
        if boundaries.contains(&cut) {
            assert_ne!(got, Err(LldpduError::Truncated), "cut {cut}");
        } else {
            assert_eq!(got, Err(LldpduError::Truncated), "cut {cut}");
        }
    }
    // A header claiming more than the buffer holds.
    let v = with(&[0x0a, 0x10, b'a']);
    assert_eq!(LldpduRepr::parse(&v), Err(LldpduError::Truncated));
    assert_eq!(
        WireError::from(LldpduError::Truncated),
        WireError::Truncated
    );
    assert_eq!(
        WireError::from(LldpduError::MissingEnd),
        WireError::Malformed
    );
}

#[test]
fn emit_rejects_what_cannot_be_encoded() {
    let mut r = full();
    r.chassis_id.id.clear();
    assert_eq!(r.to_vec(), Err(LldpduError::BadLength(TlvType::ChassisId)));
    let mut r = full();
    r.port_id.id = vec![0; 256];
    assert_eq!(r.to_vec(), Err(LldpduError::BadLength(TlvType::PortId)));
    let mut r = full();
    r.system_name = Some(vec![b'n'; 512]);
    assert_eq!(r.to_vec(), Err(LldpduError::BadLength(TlvType::SystemName)));
    let mut r = full();
    r.management_addresses[0].address = vec![0; 32];
    assert_eq!(
        r.to_vec(),
        Err(LldpduError::BadLength(TlvType::ManagementAddress))
    );
    let mut r = full();
    r.management_addresses[0].oid = vec![0; 129];
    assert_eq!(
        r.to_vec(),
        Err(LldpduError::BadLength(TlvType::ManagementAddress))
    );
    let mut r = full();
    r.org_specific[0].info = vec![0; MAX_ORG_INFO_LEN + 1];
    assert_eq!(
        r.to_vec(),
        Err(LldpduError::BadLength(TlvType::OrganizationallySpecific))
    );
    for bad in [0u8, 5, 8, 127, 128, 255] {
        let mut r = full();
        r.unknown[0].tlv_type = bad;
        assert_eq!(r.to_vec(), Err(LldpduError::InvalidType(bad)));
    }
    // A short buffer is reported, not a panic.
    let mut buf = [0xa5u8; 10];
    assert_eq!(full().emit(&mut buf), Err(LldpduError::Truncated));
}

fn arb_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..=max)
}

prop_compose! {
    fn arb_mgmt()(
        address_subtype in any::<u8>(),
        address in vec(any::<u8>(), 1..=MAX_MGMT_ADDR_LEN),
        interface_subtype in any::<u8>(),
        interface_number in any::<u32>(),
        oid in arb_bytes(MAX_MGMT_OID_LEN),
    ) -> ManagementAddressTlv {
        ManagementAddressTlv { address_subtype, address, interface_subtype, interface_number, oid }
    }
}

prop_compose! {
    fn arb_org()(oui in any::<[u8; 3]>(), subtype in any::<u8>(), info in arb_bytes(MAX_ORG_INFO_LEN)) -> OrgTlv {
        OrgTlv { oui, subtype, info }
    }
}

prop_compose! {
    fn arb_unknown()(tlv_type in 9u8..=126, value in arb_bytes(MAX_VALUE_LEN)) -> UnknownTlv {
        UnknownTlv { tlv_type, value }
    }
}

prop_compose! {
    /// Legal LLDPDUs only: every field within the lengths `check` allows.
    pub(crate) fn arb_lldpdu()(
        cs in any::<u8>(), cid in vec(any::<u8>(), 1..=255),
        ps in any::<u8>(), pid in vec(any::<u8>(), 1..=255),
        ttl in any::<u16>(),
        port_description in proptest::option::of(arb_bytes(MAX_VALUE_LEN)),
        system_name in proptest::option::of(arb_bytes(64)),
        system_description in proptest::option::of(arb_bytes(MAX_VALUE_LEN)),
        capabilities in proptest::option::of(any::<(u16, u16)>()),
        management_addresses in vec(arb_mgmt(), 0..3),
        org_specific in vec(arb_org(), 0..4),
        unknown in vec(arb_unknown(), 0..3),
    ) -> LldpduRepr {
        LldpduRepr {
            chassis_id: ChassisIdTlv { subtype: cs.into(), id: cid },
            port_id: PortIdTlv { subtype: ps.into(), id: pid },
            ttl,
            port_description,
            system_name,
            system_description,
            capabilities: capabilities.map(|(supported, enabled)| CapabilitiesTlv { supported, enabled }),
            management_addresses,
            org_specific,
            unknown,
        }
    }
}

proptest! {
    #[test]
    fn lldpdu_round_trip(r in arb_lldpdu(), pad in 0usize..64) {
        let mut bytes = r.to_vec().unwrap();
        prop_assert_eq!(bytes.len(), r.buffer_len());
        bytes.resize(bytes.len() + pad, 0);
        prop_assert_eq!(LldpduRepr::parse(&bytes).unwrap(), r);
    }

    #[test]
    fn lldpdu_parse_never_panics(bytes in arb_bytes(700)) {
        if let Ok(r) = LldpduRepr::parse(&bytes) {
            let again = r.to_vec().unwrap();
            prop_assert_eq!(LldpduRepr::parse(&again).unwrap(), r);
        }
    }

    #[test]
    fn lldpdu_parse_never_panics_after_mandatory(tail in arb_bytes(300)) {
        // Random TLVs after valid mandatory ones reach the deeper checks.
        let v = with(&tail);
        if let Ok(r) = LldpduRepr::parse(&v) {
            prop_assert_eq!(LldpduRepr::parse(&r.to_vec().unwrap()).unwrap(), r);
        }
    }
}
