//! Fuzz the LLDP/DCBX wire code with raw LLDPDUs: parsing must never panic,
//! and whatever parses must re-emit to bytes that parse back the same.

#![no_main]

use libfuzzer_sys::fuzz_target;
use railyard_lldp::wire::dcbx::{AppRepr, CeeRepr, DcbxTlv, EtsRepr, PfcRepr};
use railyard_lldp::wire::lldpdu::{LldpduRepr, OrgTlv};

/// Re-encodes a DCBX TLV that decoded and checks it decodes the same.
fn check_dcbx(org: &OrgTlv) {
    if let Some(Ok(d)) = DcbxTlv::parse(org) {
        let again = d.to_org_tlv().expect("a parsed DCBX TLV re-emits");
        assert_eq!(DcbxTlv::parse(&again), Some(Ok(d)));
    }
}

fuzz_target!(|data: &[u8]| {
    // The whole input as an LLDPDU.
    if let Ok(r) = LldpduRepr::parse(data) {
        let bytes = r.to_vec().expect("a parsed LLDPDU re-emits");
        assert_eq!(bytes.len(), r.buffer_len());
        assert_eq!(LldpduRepr::parse(&bytes).as_ref(), Ok(&r));
        for org in &r.org_specific {
            check_dcbx(org);
        }
    }

    // The whole input as each DCBX info string, so the DCBX parsers see
    // arbitrary bytes without first having to build a valid LLDPDU.
    if let Ok(e) = EtsRepr::parse_config(data) {
        let mut b = [0u8; 21];
        e.emit_config(&mut b).expect("ETS re-emits");
        assert_eq!(EtsRepr::parse_config(&b), Ok(e));
    }
    if let Ok(e) = EtsRepr::parse_recommendation(data) {
        let mut b = [0u8; 21];
        e.emit_recommendation(&mut b).expect("ETS re-emits");
        assert_eq!(EtsRepr::parse_recommendation(&b), Ok(e));
    }
    if let Ok(p) = PfcRepr::parse(data) {
        let mut b = [0u8; 2];
        p.emit(&mut b).expect("PFC re-emits");
        assert_eq!(PfcRepr::parse(&b), Ok(p));
    }
    if let Ok(a) = AppRepr::parse(data) {
        // Longer than one TLV can carry is fine for the parser but not for emit.
        if let Ok(org) = a.to_org_tlv() {
            assert_eq!(AppRepr::parse(&org.info), Ok(a));
        }
    }
    if let Ok(c) = CeeRepr::parse(data) {
        if let Ok(org) = c.to_org_tlv() {
            assert_eq!(CeeRepr::parse(&org.info), Ok(c));
        }
    }
});
