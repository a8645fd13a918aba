//! Panic-free cursors shared with the DCBX module: a [`Reader`] and a
//! [`Writer`] of big-endian fields and 7-bit type / 9-bit length TLVs.

use super::tlv::{LEN_MASK, MAX_VALUE_LEN, TYPE_SHIFT};
use crate::wire::{Result, WireError};

/// Reads big-endian fields off the front of a slice; every read is checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Starts reading at the front of `bytes`.
    pub(crate) const fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { rest: bytes }
    }

    /// The bytes not read yet.
    pub(crate) const fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// The next `n` bytes, or `None` when fewer remain (nothing is consumed then).
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    /// The next `N` bytes as an array.
    pub(crate) fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Some(a)
    }

    /// The next byte.
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[b]| b)
    }

    /// The next big-endian u16.
    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_be_bytes)
    }

    /// The next big-endian u32.
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_be_bytes)
    }

    /// Splits off one 7-bit type / 9-bit length TLV: its type and value.
    ///
    /// # Errors
    /// `Truncated` when the header or the value it claims runs past the end;
    /// nothing is consumed then.
    pub(crate) fn tlv(&mut self) -> Result<(u8, &'a [u8])> {
        let mut r = *self;
        let header = r.u16().ok_or(WireError::Truncated)?;
        let ty = (header >> TYPE_SHIFT) as u8;
        let value = r
            .take(usize::from(header & LEN_MASK))
            .ok_or(WireError::Truncated)?;
        *self = r;
        Ok((ty, value))
    }
}

/// Writes big-endian fields into a buffer; every write is checked.
#[derive(Debug)]
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl<'a> Writer<'a> {
    /// Starts writing at the front of `buf`.
    pub(crate) fn new(buf: &'a mut [u8]) -> Writer<'a> {
        Writer { buf, at: 0 }
    }

    /// Bytes written so far.
    pub(crate) const fn written(&self) -> usize {
        self.at
    }

    /// Appends `bytes`.
    ///
    /// # Errors
    /// `Truncated` when the buffer has no room; nothing is written then.
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self
            .at
            .checked_add(bytes.len())
            .ok_or(WireError::Truncated)?;
        let dst = self.buf.get_mut(self.at..end).ok_or(WireError::Truncated)?;
        dst.copy_from_slice(bytes);
        self.at = end;
        Ok(())
    }

    /// Appends a byte.
    pub(crate) fn u8(&mut self, v: u8) -> Result<()> {
        self.put(&[v])
    }

    /// Appends a big-endian u16.
    pub(crate) fn u16(&mut self, v: u16) -> Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// Appends a big-endian u32.
    pub(crate) fn u32(&mut self, v: u32) -> Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// Appends a 7-bit type / 9-bit length TLV header.
    ///
    /// # Errors
    /// `Malformed` when `ty` needs more than 7 bits or `len` more than 9;
    /// `Truncated` when the buffer has no room.
    pub(crate) fn tlv_header(&mut self, ty: u8, len: usize) -> Result<()> {
        if ty > 0x7f || len > MAX_VALUE_LEN {
            return Err(WireError::Malformed);
        }
        // len <= 0x1ff, so the cast is lossless.
        self.u16((u16::from(ty) << TYPE_SHIFT) | len as u16)
    }
}
