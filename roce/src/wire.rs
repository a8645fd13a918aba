//! RoCEv2 on the wire: the InfiniBand extended transport headers an RC
//! RDMA WRITE and its acknowledgement carry after the BTH (RETH, AETH,
//! ImmDt), the invariant CRC (ICRC) that ends every packet, and whole
//! Ethernet/IPv4/UDP frames built into a caller's buffer and read back into
//! a borrowed struct.
//!
//! A RoCEv2 frame as this crate sends it (untagged, no FCS):
//!
//! ```text
//! Ethernet 14 | IPv4 20 (DSCP, ECN, DF, TTL 64) | UDP 8 (dst 4791, csum 0)
//!   | BTH 12 | RETH 16 (WRITE FIRST/ONLY) | AETH 4 (ACK) | ImmDt 4 (…_IMM)
//!   | payload | pad 0-3 | ICRC 4
//! ```
//!
//! A CNP is BTH opcode 0x81 with BECN set, 16 reserved zero bytes and the
//! ICRC.
//!
//! The ICRC is InfiniBand Annex A17's for RoCEv2 over IPv4: CRC-32 over
//! eight 0xff bytes (the absent LRH), the IPv4 header with TOS, TTL and
//! checksum set to ones, the UDP header with its checksum set to ones, the
//! BTH with its reserved byte (FECN/BECN) set to ones, and everything after
//! the BTH up to the ICRC; sent least significant byte first. Masking the
//! fields switches rewrite is what lets a switch mark CE without breaking it.
//!
//! The views follow the dataplane's contract: after `check_len` succeeds no
//! accessor panics; [`RoceRepr::emit`] and [`RxFrame::parse`] never panic.

use std::net::Ipv4Addr;

use railyard_dataplane::wire::{
    arp, ethernet, ipv4, mac_control, udp, ArpRepr, EtherType, IpProtocol, MacControlRepr,
};
use railyard_wire_core::{MacAddr, Result, WireError};

pub use railyard_dataplane::wire::bth::{self, BthRepr, Opcode, ROCEV2_UDP_PORT};

/// Length of the ICRC that ends every RoCEv2 packet.
pub const ICRC_LEN: usize = 4;
/// Reserved bytes a CNP carries after its BTH.
pub const CNP_RESERVED_LEN: usize = 16;
/// Bytes before the BTH in a frame this crate builds: Ethernet, IPv4, UDP.
pub const OUTER_LEN: usize = ethernet::HEADER_LEN + ipv4::HEADER_LEN + udp::HEADER_LEN;
/// TTL of every packet this crate builds.
pub const TTL: u8 = 64;
/// ECN codepoint ECT(0), which data and ACKs carry.
pub const ECN_ECT0: u8 = 0b10;
/// ECN codepoint CE, which a congested switch sets.
pub const ECN_CE: u8 = 0b11;
/// Partition key of every packet (the default partition, full member).
pub const DEFAULT_PKEY: u16 = 0xffff;

/// Whether the opcode carries a RETH (RDMA WRITE FIRST and ONLY).
pub fn has_reth(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::RcRdmaWriteFirst | Opcode::RcRdmaWriteOnly | Opcode::RcRdmaWriteOnlyImm
    )
}

/// Whether the opcode carries immediate data.
pub fn has_imm(op: Opcode) -> bool {
    matches!(op, Opcode::RcRdmaWriteLastImm | Opcode::RcRdmaWriteOnlyImm)
}

/// Whether the opcode carries an AETH (acknowledgements).
pub fn has_aeth(op: Opcode) -> bool {
    matches!(op, Opcode::RcAcknowledge)
}

/// Whether the opcode is one of the RDMA WRITE packets a responder takes.
pub fn is_write(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::RcRdmaWriteFirst
            | Opcode::RcRdmaWriteMiddle
            | Opcode::RcRdmaWriteLast
            | Opcode::RcRdmaWriteLastImm
            | Opcode::RcRdmaWriteOnly
            | Opcode::RcRdmaWriteOnlyImm
    )
}

/// Whether the opcode starts a message (FIRST or ONLY).
pub fn starts_message(op: Opcode) -> bool {
    has_reth(op)
}

/// Whether the opcode ends a message (LAST or ONLY).
pub fn ends_message(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::RcRdmaWriteLast
            | Opcode::RcRdmaWriteLastImm
            | Opcode::RcRdmaWriteOnly
            | Opcode::RcRdmaWriteOnlyImm
    )
}

/// The RDMA Extended Transport Header: where a WRITE lands.
pub mod reth {
    use railyard_wire_core::{Field, Result, WireError};

    mod field {
        use super::Field;
        pub const VA: Field = 0..8;
        pub const R_KEY: Field = 8..12;
        pub const DMA_LEN: Field = 12..16;
    }

    /// Length of the RETH.
    pub const HEADER_LEN: usize = field::DMA_LEN.end;

    /// Imbue a raw octet buffer with RETH structure; the buffer starts right
    /// after the BTH.
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
        /// `Truncated` when shorter than [`HEADER_LEN`].
        pub fn new_checked(buffer: T) -> Result<Packet<T>> {
            let p = Self::new_unchecked(buffer);
            p.check_len()?;
            Ok(p)
        }

        /// Ensures no accessor can panic.
        ///
        /// # Errors
        /// `Truncated` when shorter than [`HEADER_LEN`] (16).
        pub fn check_len(&self) -> Result<()> {
            if self.buffer.as_ref().len() < HEADER_LEN {
                Err(WireError::Truncated)
            } else {
                Ok(())
            }
        }

        /// Virtual address in the responder's memory.
        pub fn va(&self) -> u64 {
            let mut b = [0u8; 8];
            b.copy_from_slice(&self.buffer.as_ref()[field::VA]);
            u64::from_be_bytes(b)
        }

        /// Remote key of the memory region.
        pub fn r_key(&self) -> u32 {
            let mut b = [0u8; 4];
            b.copy_from_slice(&self.buffer.as_ref()[field::R_KEY]);
            u32::from_be_bytes(b)
        }

        /// Length of the whole WRITE in bytes.
        pub fn dma_len(&self) -> u32 {
            let mut b = [0u8; 4];
            b.copy_from_slice(&self.buffer.as_ref()[field::DMA_LEN]);
            u32::from_be_bytes(b)
        }
    }

    impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
        /// Sets the virtual address.
        pub fn set_va(&mut self, v: u64) {
            self.buffer.as_mut()[field::VA].copy_from_slice(&v.to_be_bytes());
        }
        /// Sets the remote key.
        pub fn set_r_key(&mut self, v: u32) {
            self.buffer.as_mut()[field::R_KEY].copy_from_slice(&v.to_be_bytes());
        }
        /// Sets the DMA length.
        pub fn set_dma_len(&mut self, v: u32) {
            self.buffer.as_mut()[field::DMA_LEN].copy_from_slice(&v.to_be_bytes());
        }
    }

    /// A RETH as plain data.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct RethRepr {
        /// Virtual address.
        pub va: u64,
        /// Remote key.
        pub r_key: u32,
        /// DMA length.
        pub dma_len: u32,
    }

    impl RethRepr {
        /// Reads the header.
        ///
        /// # Errors
        /// `Truncated` when shorter than 16 bytes.
        pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<RethRepr> {
            p.check_len()?;
            Ok(RethRepr {
                va: p.va(),
                r_key: p.r_key(),
                dma_len: p.dma_len(),
            })
        }

        /// Bytes [`emit`](Self::emit) writes.
        pub const fn buffer_len(&self) -> usize {
            HEADER_LEN
        }

        /// Writes the 16 bytes.
        ///
        /// # Panics
        /// When the buffer is shorter than [`HEADER_LEN`].
        pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
            p.set_va(self.va);
            p.set_r_key(self.r_key);
            p.set_dma_len(self.dma_len);
        }
    }
}

/// The ACK Extended Transport Header: what an acknowledgement says.
pub mod aeth {
    use railyard_wire_core::{Field, Result, WireError};

    mod field {
        use super::Field;
        pub const SYNDROME: usize = 0;
        pub const MSN: Field = 1..4;
    }

    /// Length of the AETH.
    pub const HEADER_LEN: usize = field::MSN.end;

    /// Credit count field of an ACK that advertises no credits (invalid
    /// credit count: the responder does not limit the requester).
    pub const NO_CREDITS: u8 = 0x1f;

    const KIND_MASK: u8 = 0xe0;
    const KIND_ACK: u8 = 0x00;
    const KIND_RNR_NAK: u8 = 0x20;
    const KIND_NAK: u8 = 0x60;
    const VALUE_MASK: u8 = 0x1f;
    const NAK_PSN_SEQUENCE_ERROR: u8 = 0x00;

    /// The AETH syndrome: ACK, NAK and why; decoding never fails.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Syndrome {
        /// Positive acknowledgement with a credit count (0x1f: none).
        Ack {
            /// Credit count (5 bits).
            credits: u8,
        },
        /// NAK: PSN sequence error, the responder expects the AETH's PSN.
        NakPsnSequenceError,
        /// Receiver-not-ready NAK with its timer code.
        RnrNak(u8),
        /// Another NAK code (invalid request, remote access error, …).
        Nak(u8),
        /// A reserved syndrome, kept as received.
        Unknown(u8),
    }

    impl From<u8> for Syndrome {
        fn from(b: u8) -> Self {
            let v = b & VALUE_MASK;
            match b & KIND_MASK {
                KIND_ACK => Syndrome::Ack { credits: v },
                KIND_RNR_NAK => Syndrome::RnrNak(v),
                KIND_NAK if v == NAK_PSN_SEQUENCE_ERROR => Syndrome::NakPsnSequenceError,
                KIND_NAK => Syndrome::Nak(v),
                _ => Syndrome::Unknown(b),
            }
        }
    }

    impl From<Syndrome> for u8 {
        fn from(s: Syndrome) -> u8 {
            match s {
                Syndrome::Ack { credits } => KIND_ACK | (credits & VALUE_MASK),
                Syndrome::NakPsnSequenceError => KIND_NAK | NAK_PSN_SEQUENCE_ERROR,
                Syndrome::RnrNak(v) => KIND_RNR_NAK | (v & VALUE_MASK),
                Syndrome::Nak(v) => KIND_NAK | (v & VALUE_MASK),
                Syndrome::Unknown(b) => b,
            }
        }
    }

    /// Imbue a raw octet buffer with AETH structure; the buffer starts right
    /// after the BTH.
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
        /// `Truncated` when shorter than [`HEADER_LEN`].
        pub fn new_checked(buffer: T) -> Result<Packet<T>> {
            let p = Self::new_unchecked(buffer);
            p.check_len()?;
            Ok(p)
        }

        /// Ensures no accessor can panic.
        ///
        /// # Errors
        /// `Truncated` when shorter than [`HEADER_LEN`] (4).
        pub fn check_len(&self) -> Result<()> {
            if self.buffer.as_ref().len() < HEADER_LEN {
                Err(WireError::Truncated)
            } else {
                Ok(())
            }
        }

        /// The syndrome.
        pub fn syndrome(&self) -> Syndrome {
            Syndrome::from(self.buffer.as_ref()[field::SYNDROME])
        }

        /// Message sequence number (24 bits): messages the responder completed.
        pub fn msn(&self) -> u32 {
            let b = &self.buffer.as_ref()[field::MSN];
            u32::from_be_bytes([0, b[0], b[1], b[2]])
        }
    }

    impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
        /// Sets the syndrome.
        pub fn set_syndrome(&mut self, s: Syndrome) {
            self.buffer.as_mut()[field::SYNDROME] = s.into();
        }
        /// Sets the MSN; only the low 24 bits are used.
        pub fn set_msn(&mut self, v: u32) {
            let b = v.to_be_bytes();
            self.buffer.as_mut()[field::MSN].copy_from_slice(&b[1..]);
        }
    }

    /// An AETH as plain data.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct AethRepr {
        /// ACK or NAK.
        pub syndrome: Syndrome,
        /// Message sequence number (24 bits).
        pub msn: u32,
    }

    impl AethRepr {
        /// Reads the header.
        ///
        /// # Errors
        /// `Truncated` when shorter than 4 bytes.
        pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<AethRepr> {
            p.check_len()?;
            Ok(AethRepr {
                syndrome: p.syndrome(),
                msn: p.msn(),
            })
        }

        /// Bytes [`emit`](Self::emit) writes.
        pub const fn buffer_len(&self) -> usize {
            HEADER_LEN
        }

        /// Writes the 4 bytes.
        ///
        /// # Panics
        /// When the buffer is shorter than [`HEADER_LEN`].
        pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
            p.set_syndrome(self.syndrome);
            p.set_msn(self.msn);
        }
    }
}

/// Length of the immediate data header (ImmDt).
pub const IMMDT_LEN: usize = 4;

pub use aeth::{AethRepr, Syndrome};
pub use reth::RethRepr;

/// Most bytes an IPv4 header with options takes.
const MAX_IPV4_HEADER: usize = 60;
/// Headers the ICRC masks: IPv4 (up to 60), UDP, BTH.
const MASKED_MAX: usize = MAX_IPV4_HEADER + udp::HEADER_LEN + bth::HEADER_LEN;
/// Offset of the BTH's reserved byte (FECN, BECN, resv6) inside the BTH.
const BTH_RESV8A: usize = 4;

/// Computes the ICRC of an IPv4 RoCEv2 packet: `ip` runs from the first byte
/// of the IPv4 header to the last byte before the ICRC. `None` when `ip` is
/// too short to hold the IPv4, UDP and BTH headers.
pub fn icrc(ip: &[u8]) -> Option<u32> {
    let ihl = usize::from(*ip.first()? & 0x0f) * 4;
    if ihl < ipv4::HEADER_LEN {
        return None;
    }
    let masked_len = ihl + udp::HEADER_LEN + bth::HEADER_LEN;
    if ip.len() < masked_len {
        return None;
    }
    let mut m = [0u8; MASKED_MAX];
    let m = &mut m[..masked_len];
    m.copy_from_slice(&ip[..masked_len]);
    m[1] = 0xff; // TOS: DSCP and ECN
    m[8] = 0xff; // TTL
    m[10] = 0xff; // header checksum
    m[11] = 0xff;
    m[ihl + 6] = 0xff; // UDP checksum
    m[ihl + 7] = 0xff;
    m[ihl + udp::HEADER_LEN + BTH_RESV8A] = 0xff;
    let mut h = crc32fast::Hasher::new();
    h.update(&[0xff; 8]);
    h.update(m);
    h.update(&ip[masked_len..]);
    Some(h.finalize())
}

/// A RoCEv2 packet as plain data: the outer headers, the BTH, whichever
/// extended headers its opcode carries, and its payload borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceRepr<'a> {
    /// Ethernet source.
    pub src_mac: MacAddr,
    /// Ethernet destination.
    pub dst_mac: MacAddr,
    /// IPv4 source.
    pub src_ip: Ipv4Addr,
    /// IPv4 destination.
    pub dst_ip: Ipv4Addr,
    /// DSCP (0-63).
    pub dscp: u8,
    /// ECN field (0-3).
    pub ecn: u8,
    /// TTL.
    pub ttl: u8,
    /// UDP source port: the flow's entropy (the destination is 4791).
    pub src_port: u16,
    /// Base transport header; `pad_count` is derived from the payload on
    /// emit.
    pub bth: BthRepr,
    /// RETH (WRITE FIRST and ONLY).
    pub reth: Option<RethRepr>,
    /// AETH (ACKNOWLEDGE).
    pub aeth: Option<AethRepr>,
    /// Immediate data (WRITE LAST/ONLY with immediate).
    pub imm: Option<u32>,
    /// Payload without pad bytes; a CNP's 16 reserved bytes.
    pub payload: &'a [u8],
}

/// A BTH with the fields this crate sets: default partition, version 0.
pub fn bth_repr(opcode: Opcode, dest_qp: u32, psn: u32, ack_req: bool) -> BthRepr {
    BthRepr {
        opcode,
        solicited_event: false,
        migreq: false,
        pad_count: 0,
        tver: 0,
        pkey: DEFAULT_PKEY,
        fecn: false,
        becn: false,
        dest_qp: dest_qp & 0x00ff_ffff,
        ack_req,
        psn: psn & 0x00ff_ffff,
    }
}

/// Pad bytes that align `len` payload bytes to 4.
const fn pad_for(len: usize) -> usize {
    (4 - len % 4) % 4
}

impl<'a> RoceRepr<'a> {
    /// Bytes of the whole frame [`emit`](Self::emit) writes (no FCS).
    pub fn buffer_len(&self) -> usize {
        OUTER_LEN + self.transport_len()
    }

    /// Bytes from the BTH to the end of the ICRC.
    fn transport_len(&self) -> usize {
        self.transport_len_for(self.payload.len())
    }

    /// Bytes from the BTH to the end of the ICRC with `payload_len` bytes
    /// of payload.
    fn transport_len_for(&self, payload_len: usize) -> usize {
        bth::HEADER_LEN
            + self.reth.map_or(0, |_| reth::HEADER_LEN)
            + self.aeth.map_or(0, |_| aeth::HEADER_LEN)
            + self.imm.map_or(0, |_| IMMDT_LEN)
            + payload_len
            + pad_for(payload_len)
            + ICRC_LEN
    }

    /// Writes the whole frame (Ethernet II, IPv4 with its checksum, UDP with
    /// checksum 0, BTH with the pad count, the extended headers present,
    /// payload, zero pad, ICRC) at the start of `buf`; returns its length.
    ///
    /// # Errors
    /// `Truncated` when `buf` is shorter than [`buffer_len`](Self::buffer_len)
    /// or the packet would not fit IPv4's length field. Never panics.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        self.emit_with(buf, self.payload.len(), true)
    }

    /// Writes the frame as [`emit`](Self::emit) would for a payload of
    /// `payload_len` bytes, except that the payload is not written (the
    /// bytes `buf` already holds there go out; `self.payload` is ignored)
    /// and the ICRC is 0: the frames of a data-free job, whose payload
    /// nobody reads, at the cost of their headers only. Read them with
    /// [`RxFrame::parse_with`] and the ICRC unchecked.
    ///
    /// # Errors
    /// As [`emit`](Self::emit). Never panics.
    pub fn emit_data_free(&self, payload_len: usize, buf: &mut [u8]) -> Result<usize> {
        self.emit_with(buf, payload_len, false)
    }

    fn emit_with(&self, buf: &mut [u8], payload_len: usize, data: bool) -> Result<usize> {
        let len = OUTER_LEN + self.transport_len_for(payload_len);
        let ip_len = len - ethernet::HEADER_LEN;
        let ip_len16 = u16::try_from(ip_len).map_err(|_| WireError::Truncated)?;
        if buf.len() < len {
            return Err(WireError::Truncated);
        }
        let buf = &mut buf[..len];
        ethernet::EthernetRepr {
            src_addr: self.src_mac,
            dst_addr: self.dst_mac,
            ethertype: EtherType::Ipv4,
        }
        .emit(&mut ethernet::Frame::new_unchecked(&mut buf[..]));
        let (_, ip) = buf.split_at_mut(ethernet::HEADER_LEN);
        {
            let (udp_and_rest, _) = ip.split_at_mut(ip_len);
            let (_, l4) = udp_and_rest.split_at_mut(ipv4::HEADER_LEN);
            let mut u = udp::Packet::new_unchecked(&mut l4[..]);
            u.set_src_port(self.src_port);
            u.set_dst_port(ROCEV2_UDP_PORT);
            u.set_len(ip_len16 - ipv4::HEADER_LEN as u16);
            u.set_checksum(0);
            let t = &mut l4[udp::HEADER_LEN..];
            let mut bth = self.bth;
            bth.pad_count = pad_for(payload_len) as u8;
            bth.emit(&mut bth::Packet::new_unchecked(&mut t[..]));
            let mut at = bth::HEADER_LEN;
            if let Some(r) = self.reth {
                r.emit(&mut reth::Packet::new_unchecked(&mut t[at..]));
                at += reth::HEADER_LEN;
            }
            if let Some(a) = self.aeth {
                a.emit(&mut aeth::Packet::new_unchecked(&mut t[at..]));
                at += aeth::HEADER_LEN;
            }
            if let Some(i) = self.imm {
                t[at..at + IMMDT_LEN].copy_from_slice(&i.to_be_bytes());
                at += IMMDT_LEN;
            }
            if data {
                t[at..at + payload_len].copy_from_slice(self.payload);
            }
            at += payload_len;
            let pad = pad_for(payload_len);
            t[at..at + pad].fill(0);
        }
        ipv4::Ipv4Repr {
            src_addr: self.src_ip,
            dst_addr: self.dst_ip,
            protocol: IpProtocol::Udp,
            payload_len: ip_len16 - ipv4::HEADER_LEN as u16,
            ttl: self.ttl,
            dscp: self.dscp,
            ecn: self.ecn,
        }
        .emit(&mut ipv4::Packet::new_unchecked(&mut ip[..]));
        let (covered, crc) = ip.split_at_mut(ip_len - ICRC_LEN);
        let c = if data {
            icrc(covered).ok_or(WireError::Truncated)?
        } else {
            0
        };
        crc.copy_from_slice(&c.to_le_bytes());
        Ok(len)
    }

    /// Reads a RoCEv2 packet from its IPv4 header on (`ip` may run past the
    /// IPv4 total length: Ethernet padding), Ethernet addresses given.
    fn parse_ip(
        src_mac: MacAddr,
        dst_mac: MacAddr,
        ip: &'a [u8],
        verify_icrc: bool,
    ) -> core::result::Result<Option<RoceRepr<'a>>, RxError> {
        let p = ipv4::Packet::new_checked(ip).map_err(|_| RxError::Malformed)?;
        if p.version() != 4 || !p.verify_checksum() || p.is_fragment() {
            return Err(RxError::Malformed);
        }
        if p.protocol() != IpProtocol::Udp {
            return Ok(None);
        }
        let ip = &ip[..usize::from(p.total_len())];
        let ihl = usize::from(p.header_len());
        let u = udp::Packet::new_checked(&ip[ihl..]).map_err(|_| RxError::Malformed)?;
        if u.dst_port() != ROCEV2_UDP_PORT {
            return Ok(None);
        }
        if usize::from(u.len()) != ip.len() - ihl {
            return Err(RxError::Malformed);
        }
        let t = &ip[ihl + udp::HEADER_LEN..];
        if t.len() < bth::HEADER_LEN + ICRC_LEN {
            return Err(RxError::Malformed);
        }
        let (covered_t, crc) = t.split_at(t.len() - ICRC_LEN);
        let covered = &ip[..ip.len() - ICRC_LEN];
        let want = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
        if verify_icrc && icrc(covered) != Some(want) {
            return Err(RxError::Icrc);
        }
        let b = bth::Packet::new_unchecked(covered_t);
        let bth = BthRepr::parse(&b).map_err(|_| RxError::Malformed)?;
        let mut rest = &covered_t[bth::HEADER_LEN..];
        let mut take = |n: usize| -> core::result::Result<&'a [u8], RxError> {
            if rest.len() < n {
                return Err(RxError::Malformed);
            }
            let (h, r) = rest.split_at(n);
            rest = r;
            Ok(h)
        };
        let reth = if has_reth(bth.opcode) {
            let h = take(reth::HEADER_LEN)?;
            Some(RethRepr::parse(&reth::Packet::new_unchecked(h)).map_err(|_| RxError::Malformed)?)
        } else {
            None
        };
        let aeth = if has_aeth(bth.opcode) {
            let h = take(aeth::HEADER_LEN)?;
            Some(AethRepr::parse(&aeth::Packet::new_unchecked(h)).map_err(|_| RxError::Malformed)?)
        } else {
            None
        };
        let imm = if has_imm(bth.opcode) {
            let h = take(IMMDT_LEN)?;
            Some(u32::from_be_bytes([h[0], h[1], h[2], h[3]]))
        } else {
            None
        };
        let pad = usize::from(bth.pad_count);
        if rest.len() < pad {
            return Err(RxError::Malformed);
        }
        let payload = &rest[..rest.len() - pad];
        Ok(Some(RoceRepr {
            src_mac,
            dst_mac,
            src_ip: p.src_addr(),
            dst_ip: p.dst_addr(),
            dscp: p.dscp(),
            ecn: p.ecn(),
            ttl: p.ttl(),
            src_port: u.src_port(),
            bth,
            reth,
            aeth,
            imm,
            payload,
        }))
    }
}

/// Why a frame could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxError {
    /// Too short, or a length, version or checksum that does not hold.
    Malformed,
    /// A RoCEv2 packet whose ICRC does not verify.
    Icrc,
}

/// A frame a NIC may receive, read without copying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxFrame<'a> {
    /// A RoCEv2 packet with a verified ICRC.
    Roce(RoceRepr<'a>),
    /// An ARP packet.
    Arp {
        /// Ethernet source.
        src_mac: MacAddr,
        /// Ethernet destination.
        dst_mac: MacAddr,
        /// The ARP packet.
        arp: ArpRepr,
    },
    /// PFC or 802.3x PAUSE.
    MacControl {
        /// Ethernet destination.
        dst_mac: MacAddr,
        /// The MAC control body.
        ctl: MacControlRepr,
    },
    /// Well formed as far as read, but nothing a RoCEv2 NIC takes (another
    /// EtherType, another IP protocol or UDP port).
    Other,
}

/// The 802.1Q TPID, skipped on receive.
pub(crate) const TPID: u16 = 0x8100;
/// Bytes of an 802.1Q tag.
const VLAN_TAG_LEN: usize = 4;

impl<'a> RxFrame<'a> {
    /// Reads an Ethernet frame (no FCS; one 802.1Q tag is skipped).
    ///
    /// # Errors
    /// [`RxError::Malformed`] when a header is short or inconsistent,
    /// [`RxError::Icrc`] when a RoCEv2 ICRC does not verify. Never panics.
    pub fn parse(frame: &'a [u8]) -> core::result::Result<RxFrame<'a>, RxError> {
        Self::parse_with(frame, true)
    }

    /// Reads an Ethernet frame as [`parse`](Self::parse) does, verifying
    /// RoCEv2 ICRCs only when `verify_icrc` (a data-free job's frames carry
    /// ICRC 0, see [`RoceRepr::emit_data_free`]).
    ///
    /// # Errors
    /// As [`parse`](Self::parse). Never panics.
    pub fn parse_with(
        frame: &'a [u8],
        verify_icrc: bool,
    ) -> core::result::Result<RxFrame<'a>, RxError> {
        let f = ethernet::Frame::new_checked(frame).map_err(|_| RxError::Malformed)?;
        let (src_mac, dst_mac) = (f.src_addr(), f.dst_addr());
        let mut ethertype = f.ethertype();
        let mut payload = &frame[ethernet::HEADER_LEN..];
        if u16::from(ethertype) == TPID {
            if payload.len() < VLAN_TAG_LEN {
                return Err(RxError::Malformed);
            }
            ethertype = EtherType::from(u16::from_be_bytes([payload[2], payload[3]]));
            payload = &payload[VLAN_TAG_LEN..];
        }
        match ethertype {
            EtherType::Ipv4 => Ok(RoceRepr::parse_ip(src_mac, dst_mac, payload, verify_icrc)?
                .map_or(RxFrame::Other, RxFrame::Roce)),
            EtherType::Arp => {
                let p = arp::Packet::new_checked(payload).map_err(|_| RxError::Malformed)?;
                let arp = ArpRepr::parse(&p).map_err(|_| RxError::Malformed)?;
                Ok(RxFrame::Arp {
                    src_mac,
                    dst_mac,
                    arp,
                })
            }
            EtherType::MacControl => {
                let p =
                    mac_control::Packet::new_checked(payload).map_err(|_| RxError::Malformed)?;
                let ctl = MacControlRepr::parse(&p).map_err(|_| RxError::Malformed)?;
                Ok(RxFrame::MacControl { dst_mac, ctl })
            }
            _ => Ok(RxFrame::Other),
        }
    }
}

/// Writes an ARP reply frame (60 bytes, zero padded) from `mac`/`ip` to the
/// asker; returns its length.
///
/// # Errors
/// `Truncated` when `buf` is shorter than 60 bytes.
pub fn emit_arp_reply(
    mac: MacAddr,
    ip: Ipv4Addr,
    to_mac: MacAddr,
    to_ip: Ipv4Addr,
    buf: &mut [u8],
) -> Result<usize> {
    const LEN: usize = mac_control::FRAME_LEN;
    if buf.len() < LEN {
        return Err(WireError::Truncated);
    }
    let buf = &mut buf[..LEN];
    buf.fill(0);
    ethernet::EthernetRepr {
        src_addr: mac,
        dst_addr: to_mac,
        ethertype: EtherType::Arp,
    }
    .emit(&mut ethernet::Frame::new_unchecked(&mut buf[..]));
    ArpRepr {
        operation: railyard_dataplane::wire::ArpOperation::Reply,
        source_hw: mac,
        source_ip: ip,
        target_hw: to_mac,
        target_ip: to_ip,
    }
    .emit(&mut arp::Packet::new_unchecked(
        &mut buf[ethernet::HEADER_LEN..],
    ));
    Ok(LEN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const A: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0a]);
    const B: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0b]);

    /// RC RDMA WRITE ONLY with immediate, 5 payload bytes (so 3 pad bytes):
    /// 10.0.0.1:0xc000 -> 10.0.0.2:4791, DSCP 24 ECT(0), QP 0x000011,
    /// PSN 0x000007 with AckReq, VA 0x1000, R_Key 0x2a, DMA length 5,
    /// immediate 0xdeadbeef.
    fn only_imm() -> RoceRepr<'static> {
        RoceRepr {
            src_mac: A,
            dst_mac: B,
            src_ip: Ipv4Addr::new(10, 0, 0, 1),
            dst_ip: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 24,
            ecn: ECN_ECT0,
            ttl: TTL,
            src_port: 0xc000,
            bth: BthRepr {
                pad_count: 3,
                ..bth_repr(Opcode::RcRdmaWriteOnlyImm, 0x11, 7, true)
            },
            reth: Some(RethRepr {
                va: 0x1000,
                r_key: 0x2a,
                dma_len: 5,
            }),
            aeth: None,
            imm: Some(0xdead_beef),
            payload: b"hello",
        }
    }

    #[rustfmt::skip]
    static ONLY_IMM_BYTES: [u8; 14 + 20 + 8 + 12 + 16 + 4 + 8 + 4] = [
        // Ethernet
        0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x08, 0x00,
        // IPv4: total 72, DF, TTL 64, UDP, checksum
        0x45, 0x62, 0x00, 0x48, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x41,
        10, 0, 0, 1, 10, 0, 0, 2,
        // UDP: 0xc000 -> 4791, length 52, checksum 0
        0xc0, 0x00, 0x12, 0xb7, 0x00, 0x34, 0x00, 0x00,
        // BTH: opcode 0x0b, pad 3, pkey ffff, QP 0x11, AckReq, PSN 7
        0x0b, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x07,
        // RETH
        0, 0, 0, 0, 0, 0, 0x10, 0x00, 0, 0, 0, 0x2a, 0, 0, 0, 5,
        // ImmDt
        0xde, 0xad, 0xbe, 0xef,
        // payload and pad
        b'h', b'e', b'l', b'l', b'o', 0, 0, 0,
        // ICRC (filled in by the test from an independent computation)
        0, 0, 0, 0,
    ];

    /// The ICRC computed the long way: copy, mask, CRC-32 of the whole.
    fn reference_icrc(ip: &[u8]) -> u32 {
        let mut v = vec![0xffu8; 8];
        v.extend_from_slice(ip);
        v[8 + 1] = 0xff;
        v[8 + 8] = 0xff;
        v[8 + 10] = 0xff;
        v[8 + 11] = 0xff;
        v[8 + 26] = 0xff;
        v[8 + 27] = 0xff;
        v[8 + 28 + 4] = 0xff;
        crc32fast::hash(&v)
    }

    fn only_imm_bytes() -> Vec<u8> {
        let mut b = ONLY_IMM_BYTES.to_vec();
        let n = b.len();
        let c = reference_icrc(&b[14..n - 4]);
        b[n - 4..].copy_from_slice(&c.to_le_bytes());
        b
    }

    #[test]
    fn deconstruct() {
        let b = only_imm_bytes();
        assert_eq!(RxFrame::parse(&b), Ok(RxFrame::Roce(only_imm())));
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 200];
        let n = only_imm().emit(&mut buf).unwrap();
        assert_eq!(&buf[..n], &only_imm_bytes()[..]);
    }

    /// An ACK: BTH 0x11 and AETH (ACK, no credits, MSN 3).
    #[test]
    fn ack_and_nak_pair() {
        let mut r = only_imm();
        r.bth = bth_repr(Opcode::RcAcknowledge, 0x22, 0xff_fffe, false);
        r.reth = None;
        r.imm = None;
        r.payload = &[];
        r.aeth = Some(AethRepr {
            syndrome: Syndrome::Ack {
                credits: aeth::NO_CREDITS,
            },
            msn: 3,
        });
        let mut buf = [0xa5u8; 100];
        let n = r.emit(&mut buf).unwrap();
        assert_eq!(n, 14 + 20 + 8 + 12 + 4 + 4);
        assert_eq!(
            &buf[42..58],
            &[0x11, 0x00, 0xff, 0xff, 0, 0, 0, 0x22, 0, 0xff, 0xff, 0xfe, 0x1f, 0, 0, 3]
        );
        assert_eq!(RxFrame::parse(&buf[..n]), Ok(RxFrame::Roce(r)));
        let n2 = {
            let mut r2 = r;
            r2.aeth = Some(AethRepr {
                syndrome: Syndrome::NakPsnSequenceError,
                msn: 3,
            });
            r2.emit(&mut buf).unwrap()
        };
        assert_eq!(buf[54], 0x60);
        match RxFrame::parse(&buf[..n2]) {
            Ok(RxFrame::Roce(p)) => {
                assert_eq!(p.aeth.unwrap().syndrome, Syndrome::NakPsnSequenceError)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn syndromes() {
        assert_eq!(Syndrome::from(0x1f), Syndrome::Ack { credits: 0x1f });
        assert_eq!(Syndrome::from(0x60), Syndrome::NakPsnSequenceError);
        assert_eq!(Syndrome::from(0x63), Syndrome::Nak(3));
        assert_eq!(Syndrome::from(0x2e), Syndrome::RnrNak(0x0e));
        assert_eq!(Syndrome::from(0x40), Syndrome::Unknown(0x40));
        for b in 0..=255u8 {
            assert_eq!(u8::from(Syndrome::from(b)), b);
        }
    }

    #[test]
    fn icrc_ignores_ecn_ttl_and_becn_but_not_payload() {
        let mut b = only_imm_bytes();
        // CE mark and TTL decrement (as a switch does, checksum updated).
        b[15] |= 0x03;
        b[22] -= 1;
        let mut ip = ipv4::Packet::new_unchecked(&mut b[14..]);
        ip.fill_checksum();
        b[42 + 4] |= 0x40; // BECN
        match RxFrame::parse(&b) {
            Ok(RxFrame::Roce(p)) => {
                assert_eq!(p.ecn, ECN_CE);
                assert!(p.bth.becn);
            }
            other => panic!("{other:?}"),
        }
        let n = b.len();
        b[n - 6] ^= 1;
        assert_eq!(RxFrame::parse(&b), Err(RxError::Icrc));
    }

    #[test]
    fn cnp_layout() {
        let mut bth = bth_repr(Opcode::Cnp, 0x33, 0, false);
        bth.becn = true;
        let r = RoceRepr {
            dscp: 48,
            ecn: 0,
            bth,
            reth: None,
            imm: None,
            payload: &[0; CNP_RESERVED_LEN],
            ..only_imm()
        };
        let mut buf = [0xa5u8; 128];
        let n = r.emit(&mut buf).unwrap();
        assert_eq!(n, 14 + 20 + 8 + 12 + 16 + 4);
        assert_eq!(buf[15], 48 << 2);
        assert_eq!(&buf[42..46], &[0x81, 0x00, 0xff, 0xff]);
        assert_eq!(buf[46], 0x40);
        assert_eq!(&buf[54..70], &[0u8; 16]);
        assert_eq!(RxFrame::parse(&buf[..n]), Ok(RxFrame::Roce(r)));
    }

    #[test]
    fn truncated_and_impossible() {
        let b = only_imm_bytes();
        for cut in 0..b.len() {
            assert!(RxFrame::parse(&b[..cut]).is_err(), "cut at {cut}");
        }
        // Ethernet padding after the IPv4 total length is ignored.
        let mut padded = b.clone();
        padded.extend_from_slice(&[0; 10]);
        assert_eq!(RxFrame::parse(&padded), Ok(RxFrame::Roce(only_imm())));
        // A pad count larger than what follows the headers.
        let mut small = only_imm();
        small.bth.opcode = Opcode::RcRdmaWriteMiddle;
        small.reth = None;
        small.imm = None;
        small.payload = &[];
        let mut buf = [0u8; 128];
        let n = small.emit(&mut buf).unwrap();
        buf[43] |= 0x30;
        let c = icrc(&buf[14..n - 4]).unwrap();
        buf[n - 4..n].copy_from_slice(&c.to_le_bytes());
        assert_eq!(RxFrame::parse(&buf[..n]), Err(RxError::Malformed));
        // A buffer too small to emit into.
        assert_eq!(only_imm().emit(&mut buf[..40]), Err(WireError::Truncated));
        // Another UDP port is not RoCEv2.
        let mut other = b.clone();
        other[36] = 0x13;
        assert_eq!(RxFrame::parse(&other), Ok(RxFrame::Other));
    }

    #[test]
    fn arp_reply() {
        let mut buf = [0xa5u8; 64];
        let n = emit_arp_reply(
            A,
            Ipv4Addr::new(10, 0, 0, 1),
            B,
            Ipv4Addr::new(10, 0, 0, 2),
            &mut buf,
        )
        .unwrap();
        match RxFrame::parse(&buf[..n]) {
            Ok(RxFrame::Arp { src_mac, arp, .. }) => {
                assert_eq!(src_mac, A);
                assert_eq!(arp.target_ip, Ipv4Addr::new(10, 0, 0, 2));
            }
            other => panic!("{other:?}"),
        }
        assert!(emit_arp_reply(
            A,
            Ipv4Addr::LOCALHOST,
            B,
            Ipv4Addr::LOCALHOST,
            &mut buf[..59]
        )
        .is_err());
    }

    fn arb_opcode() -> impl Strategy<Value = Opcode> {
        prop_oneof![
            Just(Opcode::RcRdmaWriteFirst),
            Just(Opcode::RcRdmaWriteMiddle),
            Just(Opcode::RcRdmaWriteLast),
            Just(Opcode::RcRdmaWriteLastImm),
            Just(Opcode::RcRdmaWriteOnly),
            Just(Opcode::RcRdmaWriteOnlyImm),
            Just(Opcode::RcAcknowledge),
            Just(Opcode::Cnp),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(op in arb_opcode(), qp in 0u32..(1 << 24), psn in 0u32..(1 << 24),
                      ack in any::<bool>(), becn in any::<bool>(), va in any::<u64>(),
                      rkey in any::<u32>(), dlen in any::<u32>(), syn in any::<u8>(),
                      msn in 0u32..(1 << 24), imm in any::<u32>(), dscp in 0u8..64, ecn in 0u8..4,
                      sport in any::<u16>(), payload in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut bth = bth_repr(op, qp, psn, ack);
            bth.becn = becn;
            let payload = if op == Opcode::Cnp { vec![0; CNP_RESERVED_LEN] }
                          else if has_aeth(op) { vec![] } else { payload };
            let r = RoceRepr {
                src_mac: A, dst_mac: B, src_ip: Ipv4Addr::new(10, 1, 2, 3),
                dst_ip: Ipv4Addr::new(10, 4, 5, 6), dscp, ecn, ttl: TTL, src_port: sport,
                bth,
                reth: has_reth(op).then_some(RethRepr { va, r_key: rkey, dma_len: dlen }),
                aeth: has_aeth(op).then_some(AethRepr { syndrome: Syndrome::from(syn), msn }),
                imm: has_imm(op).then_some(imm),
                payload: &payload,
            };
            let mut buf = [0xa5u8; 512];
            let n = r.emit(&mut buf).unwrap();
            prop_assert_eq!(n, r.buffer_len());
            let mut want = r;
            want.bth.pad_count = pad_for(payload.len()) as u8;
            prop_assert_eq!(RxFrame::parse(&buf[..n]), Ok(RxFrame::Roce(want)));
        }

        #[test]
        fn random_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = RxFrame::parse(&b);
        }

        #[test]
        fn random_bytes_behind_valid_headers_never_panic(
            tail in proptest::collection::vec(any::<u8>(), 0..120), cut in 0usize..120) {
            let mut b = only_imm_bytes();
            b.truncate(42);
            b.extend_from_slice(&tail);
            let cut = cut.min(b.len());
            let _ = RxFrame::parse(&b[..cut]);
            let _ = RxFrame::parse(&b);
        }
    }
}
