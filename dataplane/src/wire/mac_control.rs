//! MAC control frames (EtherType 0x8808): 802.1Qbb priority flow control and
//! 802.3x PAUSE, the frames lossless classes live by.
//!
//! The view starts at the opcode, i.e. at the payload of an Ethernet frame.
//! Offsets below are relative to that payload; REFERENCE.md §1 gives them
//! relative to the frame (add 14).

use super::ethernet::{self, EtherType, EthernetRepr};
use super::{MacAddr, Result, WireError};

enum_with_unknown! {
    /// MAC control opcode.
    pub enum Opcode(u16) {
        /// 802.3x PAUSE (0x0001): one pause time for the whole link.
        Pause = 0x0001,
        /// 802.1Qbb PFC (0x0101): a pause time per priority.
        Pfc = 0x0101,
    }
}

mod field {
    use crate::wire::Field;

    pub const OPCODE: Field = 0..2;
    pub const PFC_ENABLE: Field = 2..4;
    pub const PFC_QUANTA: Field = 4..20;
    pub const PAUSE_TIME: Field = 2..4;
}

/// Length of the opcode, the part every MAC control frame has.
pub const HEADER_LEN: usize = field::OPCODE.end;
/// Length of a PFC body: opcode, class-enable vector and eight quanta.
pub const PFC_LEN: usize = field::PFC_QUANTA.end;
/// Length of a PAUSE body: opcode and pause time.
pub const PAUSE_LEN: usize = field::PAUSE_TIME.end;
/// Length of a whole MAC control frame on the wire without FCS (the Ethernet
/// minimum; everything after the body is zero padding).
pub const FRAME_LEN: usize = 60;
/// The destination every PFC and PAUSE frame is sent to; bridges never forward it.
pub const PAUSE_DST: MacAddr = MacAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);

/// Imbue a raw octet buffer with MAC control structure, so a port can act on
/// the PFC and PAUSE frames its peer sends.
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
    /// As [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Ensures no accessor can panic: the opcode, plus the whole body of a
    /// PFC ([`PFC_LEN`]) or PAUSE ([`PAUSE_LEN`]) frame.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than its opcode needs.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let need = match self.opcode() {
            Opcode::Pfc => PFC_LEN,
            Opcode::Pause => PAUSE_LEN,
            Opcode::Unknown(_) => HEADER_LEN,
        };
        if len < need {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The u16 at `f`, or 0 when the buffer is too short (only possible when
    /// the opcode does not carry that field).
    fn u16_or_zero(&self, f: core::ops::Range<usize>) -> u16 {
        match self.buffer.as_ref().get(f) {
            Some(&[hi, lo]) => u16::from_be_bytes([hi, lo]),
            _ => 0,
        }
    }

    /// Opcode.
    #[inline]
    pub fn opcode(&self) -> Opcode {
        let b = &self.buffer.as_ref()[field::OPCODE];
        Opcode::from(u16::from_be_bytes([b[0], b[1]]))
    }

    /// PFC class-enable vector as on the wire (high byte reserved); 0 when
    /// the frame is too short to carry it.
    #[inline]
    pub fn class_enable_vector(&self) -> u16 {
        self.u16_or_zero(field::PFC_ENABLE)
    }

    /// PFC enabled priorities: bit n set means priority n's quanta apply.
    #[inline]
    pub fn class_enable(&self) -> u8 {
        self.class_enable_vector() as u8
    }

    /// PFC pause quanta, priority 0 first; zeros where the frame is too
    /// short to carry them.
    #[inline]
    pub fn pfc_quanta(&self) -> [u16; 8] {
        let mut q = [0u16; 8];
        for (i, v) in q.iter_mut().enumerate() {
            let at = field::PFC_QUANTA.start + 2 * i;
            *v = self.u16_or_zero(at..at + 2);
        }
        q
    }

    /// PAUSE time in quanta; 0 when the frame is too short to carry it.
    #[inline]
    pub fn pause_time(&self) -> u16 {
        self.u16_or_zero(field::PAUSE_TIME)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16_at(&mut self, f: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the opcode.
    #[inline]
    pub fn set_opcode(&mut self, v: Opcode) {
        self.set_u16_at(field::OPCODE, v.into());
    }

    /// Sets the PFC class-enable vector (high byte 0 on the wire).
    ///
    /// # Panics
    /// When the buffer is shorter than [`PAUSE_LEN`].
    #[inline]
    pub fn set_class_enable(&mut self, enable: u8) {
        self.set_u16_at(field::PFC_ENABLE, u16::from(enable));
    }

    /// Sets the eight PFC quanta, priority 0 first.
    ///
    /// # Panics
    /// When the buffer is shorter than [`PFC_LEN`].
    #[inline]
    pub fn set_pfc_quanta(&mut self, quanta: [u16; 8]) {
        for (i, q) in quanta.iter().enumerate() {
            let at = field::PFC_QUANTA.start + 2 * i;
            self.set_u16_at(at..at + 2, *q);
        }
    }

    /// Sets the PAUSE time.
    ///
    /// # Panics
    /// When the buffer is shorter than [`PAUSE_LEN`].
    #[inline]
    pub fn set_pause_time(&mut self, quanta: u16) {
        self.set_u16_at(field::PAUSE_TIME, quanta);
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// A MAC control frame as plain data: what a port acts on when it receives
/// one and what it sends when a lossless queue crosses XOFF or XON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacControlRepr {
    /// Priority flow control.
    Pfc {
        /// Enabled priorities: bit n means `quanta[n]` applies.
        enable: u8,
        /// Pause time per priority in 512-bit-time quanta; 0 means resume.
        quanta: [u16; 8],
    },
    /// 802.3x PAUSE for the whole link.
    Pause {
        /// Pause time in quanta; 0 means resume.
        quanta: u16,
    },
    /// Another opcode, kept for the counters.
    Unknown(u16),
}

impl MacControlRepr {
    /// Reads a MAC control payload. The reserved high byte of the PFC
    /// class-enable vector is ignored, as receivers do.
    ///
    /// # Errors
    /// `Truncated` when shorter than its opcode needs.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<MacControlRepr> {
        packet.check_len()?;
        Ok(match packet.opcode() {
            Opcode::Pfc => MacControlRepr::Pfc {
                enable: packet.class_enable(),
                quanta: packet.pfc_quanta(),
            },
            Opcode::Pause => MacControlRepr::Pause {
                quanta: packet.pause_time(),
            },
            Opcode::Unknown(op) => MacControlRepr::Unknown(op),
        })
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        match self {
            MacControlRepr::Pfc { .. } => PFC_LEN,
            MacControlRepr::Pause { .. } => PAUSE_LEN,
            MacControlRepr::Unknown(_) => HEADER_LEN,
        }
    }

    /// Writes the payload that follows the Ethernet header: opcode and body.
    ///
    /// # Panics
    /// When the buffer is shorter than [`buffer_len`](Self::buffer_len).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        match *self {
            MacControlRepr::Pfc { enable, quanta } => {
                packet.set_opcode(Opcode::Pfc);
                packet.set_class_enable(enable);
                packet.set_pfc_quanta(quanta);
            }
            MacControlRepr::Pause { quanta } => {
                packet.set_opcode(Opcode::Pause);
                packet.set_pause_time(quanta);
            }
            MacControlRepr::Unknown(op) => packet.set_opcode(Opcode::from(op)),
        }
    }

    /// Writes a whole 60-byte frame from `src` to [`PAUSE_DST`]: Ethernet
    /// header, this payload and zero padding, ready for a port to send.
    pub fn emit_frame(&self, src: MacAddr, frame: &mut [u8; FRAME_LEN]) {
        let eth = EthernetRepr {
            src_addr: src,
            dst_addr: PAUSE_DST,
            ethertype: EtherType::MacControl,
        };
        eth.emit(&mut ethernet::Frame::new_unchecked(&mut frame[..]));
        let (_, payload) = frame.split_at_mut(ethernet::HEADER_LEN);
        let (body, padding) = payload.split_at_mut(self.buffer_len());
        self.emit(&mut Packet::new_unchecked(body));
        padding.fill(0);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SRC: MacAddr = MacAddr([0x02, 0x00, 0x00, 0x00, 0x00, 0x01]);

    /// REFERENCE.md §1: XOFF priority 3 for 0xFFFF.
    /// `0180c2000001 <src> 8808 0101 0008 0000 0000 0000 ffff 0000 0000 0000 0000 <26 zero bytes>`
    fn xoff_prio3_frame() -> [u8; FRAME_LEN] {
        let mut f = [0u8; FRAME_LEN];
        f[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
        f[6..12].copy_from_slice(&SRC.0);
        f[12..34].copy_from_slice(&[
            0x88, 0x08, 0x01, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ]);
        f
    }

    fn xoff_prio3() -> MacControlRepr {
        let mut quanta = [0u16; 8];
        quanta[3] = 0xffff;
        MacControlRepr::Pfc {
            enable: 1 << 3,
            quanta,
        }
    }

    /// 802.3x PAUSE for 0x1234 quanta, padded to the 46-byte minimum payload.
    fn pause_payload() -> [u8; 46] {
        let mut p = [0u8; 46];
        p[..4].copy_from_slice(&[0x00, 0x01, 0x12, 0x34]);
        p
    }

    #[test]
    fn deconstruct_pfc() {
        let frame = xoff_prio3_frame();
        let eth = ethernet::Frame::new_checked(&frame[..]).unwrap();
        assert_eq!(eth.dst_addr(), PAUSE_DST);
        assert_eq!(eth.ethertype(), EtherType::MacControl);
        let p = Packet::new_checked(eth.payload()).unwrap();
        assert_eq!(p.opcode(), Opcode::Pfc);
        assert_eq!(p.class_enable_vector(), 0x0008);
        assert_eq!(p.class_enable(), 0x08);
        assert_eq!(p.pfc_quanta(), [0, 0, 0, 0xffff, 0, 0, 0, 0]);
        assert_eq!(MacControlRepr::parse(&p).unwrap(), xoff_prio3());
    }

    #[test]
    fn construct_pfc_frame() {
        let mut frame = [0xa5u8; FRAME_LEN];
        xoff_prio3().emit_frame(SRC, &mut frame);
        assert_eq!(frame, xoff_prio3_frame());
    }

    #[test]
    fn construct_pfc_payload() {
        let mut buf = [0xa5u8; PFC_LEN + 2];
        xoff_prio3().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(&buf[..PFC_LEN], &xoff_prio3_frame()[14..14 + PFC_LEN]);
        assert_eq!(&buf[PFC_LEN..], &[0xa5, 0xa5]);
    }

    #[test]
    fn pause_both_ways() {
        let bytes = pause_payload();
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.opcode(), Opcode::Pause);
        assert_eq!(p.pause_time(), 0x1234);
        let r = MacControlRepr::parse(&p).unwrap();
        assert_eq!(r, MacControlRepr::Pause { quanta: 0x1234 });
        let mut frame = [0xa5u8; FRAME_LEN];
        r.emit_frame(SRC, &mut frame);
        assert_eq!(&frame[14..], &bytes[..]);
        assert_eq!(&frame[12..14], &[0x88, 0x08]);
    }

    #[test]
    fn truncated_and_unknown() {
        let frame = xoff_prio3_frame();
        let pfc = &frame[14..];
        assert_eq!(Packet::new_checked(&pfc[..1]), Err(WireError::Truncated));
        assert_eq!(
            Packet::new_checked(&pfc[..PFC_LEN - 1]),
            Err(WireError::Truncated)
        );
        assert!(Packet::new_checked(&pfc[..PFC_LEN]).is_ok());
        let pause = pause_payload();
        assert_eq!(Packet::new_checked(&pause[..3]), Err(WireError::Truncated));
        // An unknown opcode needs only its two bytes, and the PFC/PAUSE
        // accessors still do not panic on it.
        let p = Packet::new_checked(&[0x00, 0x02][..]).unwrap();
        assert_eq!(p.opcode(), Opcode::Unknown(2));
        assert_eq!(
            (p.pause_time(), p.class_enable(), p.pfc_quanta()),
            (0, 0, [0; 8])
        );
        assert_eq!(
            MacControlRepr::parse(&p).unwrap(),
            MacControlRepr::Unknown(2)
        );
        let mut frame = [0xa5u8; FRAME_LEN];
        MacControlRepr::Unknown(2).emit_frame(SRC, &mut frame);
        assert_eq!(&frame[14..16], &[0x00, 0x02]);
        assert!(frame[16..].iter().all(|&b| b == 0));
    }

    proptest! {
        #[test]
        fn pfc_round_trip(enable in any::<u8>(), quanta in any::<[u16; 8]>(), src in any::<[u8; 6]>()) {
            let r = MacControlRepr::Pfc { enable, quanta };
            let mut frame = [0xa5u8; FRAME_LEN];
            r.emit_frame(MacAddr(src), &mut frame);
            let eth = ethernet::Frame::new_checked(&frame[..]).unwrap();
            prop_assert_eq!(eth.src_addr(), MacAddr(src));
            let p = Packet::new_checked(eth.payload()).unwrap();
            prop_assert_eq!(MacControlRepr::parse(&p).unwrap(), r);
            prop_assert!(frame[14 + PFC_LEN..].iter().all(|&b| b == 0));
        }

        #[test]
        fn any_payload_parses_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..48)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = (p.class_enable(), p.pfc_quanta(), p.pause_time());
                prop_assert!(MacControlRepr::parse(&p).is_ok());
            }
        }
    }
}
