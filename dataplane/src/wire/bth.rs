//! The InfiniBand Base Transport Header as RoCEv2 carries it: the 12 bytes
//! right after a UDP header whose destination port is 4791.
//!
//! The switch reads it to classify RDMA traffic and to recognise congestion
//! notification packets (CNP, opcode 0x81); it never checks the ICRC.

use super::{Result, WireError};

/// UDP destination port of RoCEv2.
pub const ROCEV2_UDP_PORT: u16 = 4791;

enum_with_unknown! {
    /// BTH opcode: transport (top 3 bits) and operation (low 5 bits).
    pub enum Opcode(u8) {
        /// RC SEND First.
        RcSendFirst = 0x00,
        /// RC SEND Middle.
        RcSendMiddle = 0x01,
        /// RC SEND Last.
        RcSendLast = 0x02,
        /// RC SEND Last with Immediate.
        RcSendLastImm = 0x03,
        /// RC SEND Only.
        RcSendOnly = 0x04,
        /// RC SEND Only with Immediate.
        RcSendOnlyImm = 0x05,
        /// RC RDMA WRITE First.
        RcRdmaWriteFirst = 0x06,
        /// RC RDMA WRITE Middle.
        RcRdmaWriteMiddle = 0x07,
        /// RC RDMA WRITE Last.
        RcRdmaWriteLast = 0x08,
        /// RC RDMA WRITE Last with Immediate.
        RcRdmaWriteLastImm = 0x09,
        /// RC RDMA WRITE Only.
        RcRdmaWriteOnly = 0x0A,
        /// RC RDMA WRITE Only with Immediate.
        RcRdmaWriteOnlyImm = 0x0B,
        /// RC RDMA READ Request.
        RcRdmaReadRequest = 0x0C,
        /// RC RDMA READ Response First.
        RcRdmaReadResponseFirst = 0x0D,
        /// RC RDMA READ Response Middle.
        RcRdmaReadResponseMiddle = 0x0E,
        /// RC RDMA READ Response Last.
        RcRdmaReadResponseLast = 0x0F,
        /// RC RDMA READ Response Only.
        RcRdmaReadResponseOnly = 0x10,
        /// RC Acknowledge.
        RcAcknowledge = 0x11,
        /// RC ATOMIC Acknowledge.
        RcAtomicAcknowledge = 0x12,
        /// RC CmpSwap.
        RcCompareSwap = 0x13,
        /// RC FetchAdd.
        RcFetchAdd = 0x14,
        /// UD SEND Only.
        UdSendOnly = 0x64,
        /// UD SEND Only with Immediate.
        UdSendOnlyImm = 0x65,
        /// Congestion Notification Packet (RoCEv2 DCQCN).
        Cnp = 0x81,
    }
}

mod field {
    use crate::wire::{Field, Rest};

    pub const OPCODE: usize = 0;
    pub const SE_M_PAD_TVER: usize = 1;
    pub const PKEY: Field = 2..4;
    pub const FECN_BECN: usize = 4;
    pub const DEST_QP: Field = 5..8;
    pub const ACK_REQ: usize = 8;
    pub const PSN: Field = 9..12;
    pub const PAYLOAD: Rest = 12..;
}

/// Length of the Base Transport Header.
pub const HEADER_LEN: usize = field::PAYLOAD.start;

const SE: u8 = 0x80;
const MIGREQ: u8 = 0x40;
const PAD_SHIFT: u8 = 4;
const PAD_MASK: u8 = 0x30;
const TVER_MASK: u8 = 0x0f;
const FECN: u8 = 0x80;
const BECN: u8 = 0x40;
const ACK_REQ: u8 = 0x80;
const U24: u32 = 0x00ff_ffff;

/// Imbue a raw octet buffer with Base Transport Header structure; the buffer
/// starts at the UDP payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking its length; accessors may then panic.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len).
    ///
    /// # Errors
    /// `Truncated` when the buffer cannot hold the header.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Ensures no accessor can panic.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than [`HEADER_LEN`] (12).
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    #[inline]
    fn byte(&self, at: usize) -> u8 {
        self.buffer.as_ref()[at]
    }

    #[inline]
    fn u24_at(&self, f: core::ops::Range<usize>) -> u32 {
        let b = &self.buffer.as_ref()[f];
        u32::from_be_bytes([0, b[0], b[1], b[2]])
    }

    /// Opcode.
    #[inline]
    pub fn opcode(&self) -> Opcode {
        Opcode::from(self.byte(field::OPCODE))
    }

    /// The opcode byte as sent, for a stage that only keeps it (the parser
    /// stores it in the packet's metadata without naming it).
    #[inline]
    pub fn opcode_byte(&self) -> u8 {
        self.byte(field::OPCODE)
    }

    /// Solicited event: the responder should raise a completion event.
    #[inline]
    pub fn solicited_event(&self) -> bool {
        self.byte(field::SE_M_PAD_TVER) & SE != 0
    }

    /// Migration request state (MigReq).
    #[inline]
    pub fn migreq(&self) -> bool {
        self.byte(field::SE_M_PAD_TVER) & MIGREQ != 0
    }

    /// Pad bytes (0–3) added to align the payload to 4 bytes.
    #[inline]
    pub fn pad_count(&self) -> u8 {
        (self.byte(field::SE_M_PAD_TVER) & PAD_MASK) >> PAD_SHIFT
    }

    /// Transport header version (0).
    #[inline]
    pub fn tver(&self) -> u8 {
        self.byte(field::SE_M_PAD_TVER) & TVER_MASK
    }

    /// Partition key.
    #[inline]
    pub fn pkey(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::PKEY];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Forward explicit congestion notification bit.
    #[inline]
    pub fn fecn(&self) -> bool {
        self.byte(field::FECN_BECN) & FECN != 0
    }

    /// Backward explicit congestion notification bit.
    #[inline]
    pub fn becn(&self) -> bool {
        self.byte(field::FECN_BECN) & BECN != 0
    }

    /// Destination queue pair (24 bits).
    #[inline]
    pub fn dest_qp(&self) -> u32 {
        self.u24_at(field::DEST_QP)
    }

    /// Acknowledge request: the responder should acknowledge this packet.
    #[inline]
    pub fn ack_req(&self) -> bool {
        self.byte(field::ACK_REQ) & ACK_REQ != 0
    }

    /// Packet sequence number (24 bits).
    #[inline]
    pub fn psn(&self) -> u32 {
        self.u24_at(field::PSN)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// Everything after the BTH: extended headers, payload and ICRC.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_bits(&mut self, at: usize, mask: u8, bits: u8) {
        let b = &mut self.buffer.as_mut()[at];
        *b = (*b & !mask) | (bits & mask);
    }

    fn set_u24_at(&mut self, f: core::ops::Range<usize>, v: u32) {
        let b = (v & U24).to_be_bytes();
        self.buffer.as_mut()[f].copy_from_slice(&b[1..]);
    }

    /// Sets the opcode.
    #[inline]
    pub fn set_opcode(&mut self, v: Opcode) {
        self.buffer.as_mut()[field::OPCODE] = v.into();
    }

    /// Sets the solicited event bit.
    #[inline]
    pub fn set_solicited_event(&mut self, v: bool) {
        self.set_bits(field::SE_M_PAD_TVER, SE, if v { SE } else { 0 });
    }

    /// Sets the MigReq bit.
    #[inline]
    pub fn set_migreq(&mut self, v: bool) {
        self.set_bits(field::SE_M_PAD_TVER, MIGREQ, if v { MIGREQ } else { 0 });
    }

    /// Sets the pad count; only the low 2 bits are used.
    #[inline]
    pub fn set_pad_count(&mut self, v: u8) {
        self.set_bits(field::SE_M_PAD_TVER, PAD_MASK, v << PAD_SHIFT);
    }

    /// Sets the transport header version; only the low 4 bits are used.
    #[inline]
    pub fn set_tver(&mut self, v: u8) {
        self.set_bits(field::SE_M_PAD_TVER, TVER_MASK, v);
    }

    /// Sets the partition key.
    #[inline]
    pub fn set_pkey(&mut self, v: u16) {
        self.buffer.as_mut()[field::PKEY].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the FECN bit.
    #[inline]
    pub fn set_fecn(&mut self, v: bool) {
        self.set_bits(field::FECN_BECN, FECN, if v { FECN } else { 0 });
    }

    /// Sets the BECN bit.
    #[inline]
    pub fn set_becn(&mut self, v: bool) {
        self.set_bits(field::FECN_BECN, BECN, if v { BECN } else { 0 });
    }

    /// Sets the destination QP; only the low 24 bits are used.
    #[inline]
    pub fn set_dest_qp(&mut self, v: u32) {
        self.set_u24_at(field::DEST_QP, v);
    }

    /// Sets the acknowledge request bit.
    #[inline]
    pub fn set_ack_req(&mut self, v: bool) {
        self.set_bits(field::ACK_REQ, ACK_REQ, if v { ACK_REQ } else { 0 });
    }

    /// Sets the PSN; only the low 24 bits are used.
    #[inline]
    pub fn set_psn(&mut self, v: u32) {
        self.set_u24_at(field::PSN, v);
    }

    /// Everything after the BTH, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// A Base Transport Header as plain data, for tests and for building CNPs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BthRepr {
    /// Opcode.
    pub opcode: Opcode,
    /// Solicited event.
    pub solicited_event: bool,
    /// MigReq.
    pub migreq: bool,
    /// Pad count (0–3).
    pub pad_count: u8,
    /// Transport header version (0–15).
    pub tver: u8,
    /// Partition key.
    pub pkey: u16,
    /// FECN bit.
    pub fecn: bool,
    /// BECN bit.
    pub becn: bool,
    /// Destination QP (24 bits).
    pub dest_qp: u32,
    /// Acknowledge request.
    pub ack_req: bool,
    /// Packet sequence number (24 bits).
    pub psn: u32,
}

impl BthRepr {
    /// Reads the header.
    ///
    /// # Errors
    /// `Truncated` when shorter than 12 bytes.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<BthRepr> {
        packet.check_len()?;
        Ok(BthRepr {
            opcode: packet.opcode(),
            solicited_event: packet.solicited_event(),
            migreq: packet.migreq(),
            pad_count: packet.pad_count(),
            tver: packet.tver(),
            pkey: packet.pkey(),
            fecn: packet.fecn(),
            becn: packet.becn(),
            dest_qp: packet.dest_qp(),
            ack_req: packet.ack_req(),
            psn: packet.psn(),
        })
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the 12 header bytes, reserved bits zero; out-of-range values
    /// are masked to their field width.
    ///
    /// # Panics
    /// When the buffer is shorter than [`HEADER_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let b = packet.buffer.as_mut();
        b[field::SE_M_PAD_TVER] = 0;
        b[field::FECN_BECN] = 0;
        b[field::ACK_REQ] = 0;
        packet.set_opcode(self.opcode);
        packet.set_solicited_event(self.solicited_event);
        packet.set_migreq(self.migreq);
        packet.set_pad_count(self.pad_count);
        packet.set_tver(self.tver);
        packet.set_pkey(self.pkey);
        packet.set_fecn(self.fecn);
        packet.set_becn(self.becn);
        packet.set_dest_qp(self.dest_qp);
        packet.set_ack_req(self.ack_req);
        packet.set_psn(self.psn);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// RC RDMA WRITE Only, SE, MigReq, pad 2, pkey 0xffff, FECN, QP 0x000d2a,
    /// AckReq, PSN 0x123456, then 2 payload bytes.
    static BTH_BYTES: [u8; 14] = [
        0x0a, 0xe0, 0xff, 0xff, 0x80, 0x00, 0x0d, 0x2a, 0x80, 0x12, 0x34, 0x56, 0xbe, 0xef,
    ];

    fn repr() -> BthRepr {
        BthRepr {
            opcode: Opcode::RcRdmaWriteOnly,
            solicited_event: true,
            migreq: true,
            pad_count: 2,
            tver: 0,
            pkey: 0xffff,
            fecn: true,
            becn: false,
            dest_qp: 0x0d2a,
            ack_req: true,
            psn: 0x12_3456,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&BTH_BYTES[..]).unwrap();
        assert_eq!(p.opcode(), Opcode::RcRdmaWriteOnly);
        assert_eq!(p.opcode_byte(), u8::from(Opcode::RcRdmaWriteOnly));
        assert!(p.solicited_event() && p.migreq());
        assert_eq!((p.pad_count(), p.tver()), (2, 0));
        assert_eq!(p.pkey(), 0xffff);
        assert!(p.fecn() && !p.becn());
        assert_eq!(p.dest_qp(), 0x0d2a);
        assert!(p.ack_req());
        assert_eq!(p.psn(), 0x12_3456);
        assert_eq!(p.payload(), &[0xbe, 0xef]);
        assert_eq!(BthRepr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn construct() {
        let mut bytes = [0xa5u8; 14];
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        repr().emit(&mut p);
        p.payload_mut().copy_from_slice(&[0xbe, 0xef]);
        assert_eq!(bytes, BTH_BYTES);
    }

    #[test]
    fn truncated_and_cnp() {
        assert_eq!(
            Packet::new_checked(&BTH_BYTES[..11]),
            Err(WireError::Truncated)
        );
        let mut b = BTH_BYTES;
        b[0] = 0x81;
        let p = Packet::new_checked(&b[..12]).unwrap();
        assert_eq!(p.opcode(), Opcode::Cnp);
        assert_eq!(u8::from(Opcode::Cnp), 0x81);
        assert_eq!(Opcode::from(0x2a), Opcode::Unknown(0x2a));
        assert_eq!(p.payload(), &[] as &[u8]);
    }

    proptest! {
        #[test]
        fn repr_round_trip(op in any::<u8>(), se in any::<bool>(), m in any::<bool>(), pad in 0u8..4,
                           tver in 0u8..16, pkey in any::<u16>(), f in any::<bool>(), b in any::<bool>(),
                           qp in 0u32..(1 << 24), ack in any::<bool>(), psn in 0u32..(1 << 24)) {
            let r = BthRepr {
                opcode: Opcode::from(op), solicited_event: se, migreq: m, pad_count: pad, tver,
                pkey, fecn: f, becn: b, dest_qp: qp, ack_req: ack, psn,
            };
            let mut buf = [0xa5u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            prop_assert_eq!(BthRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
