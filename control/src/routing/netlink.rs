//! Requests to the kernel's rtnetlink: the addresses of mirror interfaces,
//! and ARP off on the ports' own interfaces.
//!
//! The messages are netlink-packet-route's; this module only sends one
//! request and waits for the kernel's acknowledgement.

use std::io;
use std::net::IpAddr;

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_CREATE, NLM_F_REPLACE,
    NLM_F_REQUEST,
};
use netlink_packet_route::address::{AddressAttribute, AddressHeaderFlags, AddressMessage};
use netlink_packet_route::link::{LinkAttribute, LinkFlags, LinkMessage};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

/// A route-netlink socket for requests that the kernel acknowledges.
pub struct Rtnl {
    socket: Socket,
    seq: u32,
    buf: Vec<u8>,
}

impl Rtnl {
    /// Opens a socket in the current network namespace.
    ///
    /// # Errors
    /// The socket's error.
    pub fn open() -> io::Result<Rtnl> {
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind_auto()?;
        socket.connect(&SocketAddr::new(0, 0))?;
        Ok(Rtnl {
            socket,
            seq: 0,
            buf: vec![0; 16 * 1024],
        })
    }

    /// Adds `addr/len` to interface `index` (replacing an identical one).
    /// IPv6 addresses skip duplicate address detection: a mirror's
    /// addresses are the switch's own, and a routing session should not
    /// wait a second or two for DAD.
    ///
    /// # Errors
    /// The kernel's refusal.
    pub fn add_address(&mut self, index: u32, addr: IpAddr, len: u8) -> io::Result<()> {
        let msg = address_message(index, addr, len);
        self.request(
            RouteNetlinkMessage::NewAddress(msg),
            NLM_F_CREATE | NLM_F_REPLACE,
        )
    }

    /// Removes `addr/len` from interface `index`.
    ///
    /// # Errors
    /// The kernel's refusal (e.g. no such address).
    pub fn delete_address(&mut self, index: u32, addr: IpAddr, len: u8) -> io::Result<()> {
        self.request(
            RouteNetlinkMessage::DelAddress(address_message(index, addr, len)),
            0,
        )
    }

    /// Turns ARP off on interface `name` (`ip link set NAME arp off`).
    ///
    /// A port's own Linux interface shares the switch's namespace with the
    /// mirrors, and the kernel answers ARP on any interface for an address
    /// on any other: it would hand a peer the veth's MAC for the switch's
    /// address, and the peer's frames would bypass the switch.
    ///
    /// # Errors
    /// The kernel's refusal (e.g. no such interface).
    pub fn set_noarp(&mut self, name: &str) -> io::Result<()> {
        let mut msg = LinkMessage::default();
        msg.header.flags = LinkFlags::Noarp;
        msg.header.change_mask = LinkFlags::Noarp;
        msg.attributes.push(LinkAttribute::IfName(name.to_string()));
        self.request(RouteNetlinkMessage::SetLink(msg), 0)
    }

    fn request(&mut self, payload: RouteNetlinkMessage, flags: u16) -> io::Result<()> {
        self.seq = self.seq.wrapping_add(1);
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_ACK | flags;
        header.sequence_number = self.seq;
        let mut msg = NetlinkMessage::new(header, NetlinkPayload::from(payload));
        msg.finalize();
        let mut out = vec![0; msg.buffer_len()];
        msg.serialize(&mut out);
        self.socket.send(&out, 0)?;
        loop {
            let n = self.socket.recv(&mut &mut self.buf[..], 0)?;
            let mut off = 0;
            while off < n {
                let reply =
                    NetlinkMessage::<RouteNetlinkMessage>::deserialize(&self.buf[off..n])
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
                let len = reply.header.length as usize;
                if reply.header.sequence_number == self.seq {
                    if let NetlinkPayload::Error(e) = reply.payload {
                        return match e.code {
                            None => Ok(()),
                            Some(code) => Err(io::Error::from_raw_os_error(-code.get())),
                        };
                    }
                }
                if len == 0 {
                    break;
                }
                off += len;
            }
        }
    }
}

fn address_message(index: u32, addr: IpAddr, len: u8) -> AddressMessage {
    let mut msg = AddressMessage::default();
    msg.header.index = index;
    msg.header.prefix_len = len;
    match addr {
        IpAddr::V4(_) => {
            msg.header.family = AddressFamily::Inet;
            msg.attributes.push(AddressAttribute::Local(addr));
        }
        IpAddr::V6(_) => {
            msg.header.family = AddressFamily::Inet6;
            msg.header.flags = AddressHeaderFlags::Nodad;
        }
    }
    msg.attributes.push(AddressAttribute::Address(addr));
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_core::Emitable;

    #[test]
    fn an_ipv4_address_carries_local_and_address_and_ipv6_skips_dad() {
        let m = address_message(7, "10.0.0.1".parse().unwrap(), 31);
        assert_eq!(m.header.family, AddressFamily::Inet);
        assert_eq!((m.header.index, m.header.prefix_len), (7, 31));
        assert!(m
            .attributes
            .contains(&AddressAttribute::Local("10.0.0.1".parse().unwrap())));
        assert!(m
            .attributes
            .contains(&AddressAttribute::Address("10.0.0.1".parse().unwrap())));
        let m = address_message(7, "2001:db8::1".parse().unwrap(), 127);
        assert_eq!(m.header.family, AddressFamily::Inet6);
        assert!(m.header.flags.contains(AddressHeaderFlags::Nodad));
        // The header is ifaddrmsg: family, prefix length, flags, scope, index.
        let mut b = vec![0; m.header.buffer_len()];
        m.header.emit(&mut b);
        assert_eq!(b, [10, 127, 2, 0, 7, 0, 0, 0]);
    }
}
