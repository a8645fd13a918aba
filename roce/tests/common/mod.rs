//! Shared by the collective tests: ranks laid out as hosts × NICs.

use std::net::Ipv4Addr;

use railyard_roce::plan::RankAddr;
use railyard_roce::MacAddr;

/// `hosts` hosts of `nics` NICs each, host-major, NIC n on rail n.
pub fn ranks(hosts: usize, nics: usize) -> Vec<RankAddr> {
    let mut v = Vec::new();
    for h in 0..hosts {
        for n in 0..nics {
            v.push(RankAddr {
                host: h,
                nic: n,
                name: format!("h{h}.eth{n}"),
                ip: Ipv4Addr::new(10, n as u8, h as u8, 2),
                mac: MacAddr([2, 0, 0, 0, h as u8, n as u8]),
            });
        }
    }
    v
}
