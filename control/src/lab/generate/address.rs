//! Addresses of a generated fabric, readable and unique.
//!
//! - **Host links**: a /24 each. NIC `n` (ethN) of host `h` (`h1` is 1)
//!   gets `10.(1 + n*B + h/256).(h%256).0/24`, with `B = hosts/256 + 1`
//!   second octets per NIC. Up to 255 hosts that is `10.R.H.0/24` with R
//!   the rail (NIC n on rail n+1), as in `rail-spine.topo`.
//! - **Switch–switch links**: a /31 each, from the top of 10/8 down:
//!   uplink `j` of the `i`th lower switch (leaves first, then the spines of
//!   a three-tier fabric, numbered from 1) gets `BASE + i*STRIDE + 2j`,
//!   with STRIDE the /24s its uplinks need. With up to 128 uplinks per
//!   switch and 255 lower switches that is `10.255.I.(2J)/31`.
//!
//! The two ranges never meet: [`Addressing::new`] refuses a fabric whose
//! host octets would reach the switch–switch range.

use std::net::Ipv4Addr;

use super::GenerateError;
use crate::lab::topology::Ipv4Net;

/// The address plan of one fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addressing {
    /// Second octets per NIC index (`B`).
    per_nic: u32,
    /// First address of the switch–switch range.
    fabric_base: u32,
    /// Addresses per lower switch in the switch–switch range.
    stride: u32,
}

/// `10.0.0.0` as a number.
const TEN: u32 = 10 << 24;

impl Addressing {
    /// Plans addresses for `hosts` hosts of `nics` NICs each and `lower`
    /// switches with at most `max_uplinks` uplinks each.
    ///
    /// # Errors
    /// The fabric does not fit in 10.0.0.0/8 this way.
    pub fn new(
        hosts: u32,
        nics: u32,
        lower: u32,
        max_uplinks: u32,
    ) -> Result<Addressing, GenerateError> {
        let per_nic = hosts / 256 + 1;
        let stride = (2 * max_uplinks).div_ceil(256).max(1) * 256;
        let fabric_addrs = u64::from(lower + 1) * u64::from(stride);
        let fabric_16s = fabric_addrs.div_ceil(65_536);
        let host_top = u64::from(nics) * u64::from(per_nic);
        if host_top + fabric_16s > 255 {
            return Err(GenerateError::new(
                format!(
                    "{hosts} hosts × {nics} NICs and {lower} switches with uplinks do not fit \
                     in 10.0.0.0/8 (a /24 per host link, a /31 per switch link)"
                ),
                "generate fewer hosts or NICs per host",
            ));
        }
        Ok(Addressing {
            per_nic,
            fabric_base: TEN + ((256 - fabric_16s as u32) << 16),
            stride,
        })
    }

    /// The /24 of NIC `nic` (0-based) of host `host` (1-based).
    pub fn host_link(&self, host: u32, nic: u32) -> Ipv4Net {
        let second = 1 + nic * self.per_nic + host / 256;
        Ipv4Net {
            addr: Ipv4Addr::from(TEN | (second << 16) | ((host % 256) << 8)),
            len: 24,
        }
    }

    /// The /31 of uplink `j` (0-based) of lower switch `i` (1-based).
    pub fn fabric_link(&self, i: u32, j: u32) -> Ipv4Net {
        Ipv4Net {
            addr: Ipv4Addr::from(self.fabric_base + i * self.stride + 2 * j),
            len: 31,
        }
    }
}
