//! `router bgp` with its address families, neighbors and peer templates;
//! the policies it names are in [`super::policy`].
//!
//! NX-OS's `router bgp` language is far larger than what railyard
//! translates, so these sections are lenient: a command they do not model
//! is skipped with a warning (and its indented body with it, as a `vrf`
//! block), not rejected; only a line spelled close to a modelled command is
//! an error, being most likely a typo of it.

use std::net::{IpAddr, Ipv4Addr};

use super::table::Spec;
use super::value::{self, keyword};
use super::{Args, Builder, Fail, FrameKind, Section};
use crate::bgp::{
    Afi, Aggregate, Asn, Bgp, BgpAf, Neighbor, Network, PeerAf, PeerConfig, PeerTemplate,
    MAX_BGP_PATHS,
};
use crate::lexer::Token;
use crate::model::{parse_interface_spec, IfSpec, IpPrefix};
use crate::validate::{At, BgpAt, PeerKey};

/// Usage of `router bgp`.
pub(super) const ROUTER_BGP: &str = "router bgp ASN (1-4294967295 or asdot 1-65535.0-65535)";
/// Usage of `address-family`.
const ADDRESS_FAMILY: &str = "address-family ipv4 unicast | ipv6 unicast";

/// Commands under `router bgp`.
pub(super) static ROUTER: &[Spec] = &[
    Spec::run(&["router-id"], "router-id A.B.C.D", router_id),
    Spec::run(&["no", "router-id"], "no router-id", no_router_id),
    Spec::run(
        &["bestpath", "as-path", "multipath-relax"],
        "bestpath as-path multipath-relax",
        multipath_relax,
    ),
    Spec::run(
        &["no", "bestpath", "as-path", "multipath-relax"],
        "no bestpath as-path multipath-relax",
        no_multipath_relax,
    ),
    Spec::run(
        &["log-neighbor-changes"],
        "log-neighbor-changes",
        log_neighbor_changes,
    ),
    Spec::run(
        &["no", "log-neighbor-changes"],
        "no log-neighbor-changes",
        no_log_neighbor_changes,
    ),
    Spec::run(&["address-family"], ADDRESS_FAMILY, address_family),
    Spec::run(&["no", "address-family"], ADDRESS_FAMILY, no_address_family),
    Spec::run(
        &["neighbor"],
        "neighbor A.B.C.D | X:X::X [remote-as ASN]",
        neighbor,
    ),
    Spec::run(
        &["no", "neighbor"],
        "no neighbor A.B.C.D | X:X::X",
        no_neighbor,
    ),
    Spec::run(&["template", "peer"], "template peer NAME", template),
    Spec::run(
        &["no", "template", "peer"],
        "no template peer NAME",
        no_template,
    ),
    Spec::skip(&["template", "peer-policy"]),
    Spec::skip(&["template", "peer-session"]),
    Spec::skip(&["bestpath"]),
    Spec::skip(&["vrf"]),
];

/// Commands under a router-level `address-family ipv4|ipv6 unicast`.
pub(super) static ROUTER_AF: &[Spec] = &[
    Spec::run(
        &["maximum-paths"],
        "maximum-paths [ibgp] 1-64",
        maximum_paths,
    ),
    Spec::run(
        &["no", "maximum-paths"],
        "no maximum-paths [ibgp] [N]",
        no_maximum_paths,
    ),
    Spec::run(&["network"], "network PREFIX [route-map NAME]", network),
    Spec::run(&["no", "network"], "no network PREFIX", no_network),
    Spec::run(
        &["redistribute"],
        "redistribute direct route-map NAME",
        redistribute,
    ),
    Spec::run(
        &["no", "redistribute"],
        "no redistribute direct [route-map NAME]",
        no_redistribute,
    ),
    Spec::run(
        &["aggregate-address"],
        "aggregate-address PREFIX [as-set] [summary-only]",
        aggregate,
    ),
    Spec::run(
        &["no", "aggregate-address"],
        "no aggregate-address PREFIX",
        no_aggregate,
    ),
];

/// Commands under `neighbor ADDR` and `template peer NAME`.
pub(super) static PEER: &[Spec] = &[
    Spec::run(&["remote-as"], "remote-as ASN", remote_as),
    Spec::run(&["no", "remote-as"], "no remote-as [ASN]", no_remote_as),
    Spec::run(&["description"], "description TEXT", description),
    Spec::run(&["no", "description"], "no description", no_description),
    Spec::run(&["bfd"], "bfd", bfd),
    Spec::run(&["no", "bfd"], "no bfd", no_bfd),
    Spec::run(&["update-source"], "update-source INTERFACE", update_source),
    Spec::run(
        &["no", "update-source"],
        "no update-source [INTERFACE]",
        no_update_source,
    ),
    Spec::run(&["inherit", "peer"], "inherit peer NAME", inherit),
    Spec::run(
        &["no", "inherit", "peer"],
        "no inherit peer [NAME]",
        no_inherit,
    ),
    Spec::run(&["shutdown"], "shutdown", shutdown),
    Spec::run(&["no", "shutdown"], "no shutdown", no_shutdown),
    Spec::run(&["address-family"], ADDRESS_FAMILY, address_family),
    Spec::run(&["no", "address-family"], ADDRESS_FAMILY, no_address_family),
    Spec::skip(&["inherit", "peer-policy"]),
    Spec::skip(&["inherit", "peer-session"]),
];

/// Commands under a neighbor's (or template's) `address-family`.
pub(super) static PEER_AF: &[Spec] = &[
    Spec::run(&["activate"], "activate", activate),
    Spec::run(
        &["send-community"],
        "send-community [standard | extended | both]",
        send_community,
    ),
    Spec::run(
        &["no", "send-community"],
        "no send-community [standard | extended | both]",
        no_send_community,
    ),
    Spec::run(&["route-map"], "route-map NAME in | out", peer_route_map),
    Spec::run(
        &["no", "route-map"],
        "no route-map NAME in | out",
        no_peer_route_map,
    ),
];

/// Read an AS number: plain (`65001`, `4200000001`) or asdot (`1.10`).
pub(super) fn asn(tok: Token<'_>) -> Result<Asn, Fail> {
    let bad = || {
        Fail::new(
            tok.col,
            format!("invalid AS number `{}`", tok.text),
            Some("an AS number is 1-4294967295, or in asdot 1-65535.0-65535".into()),
        )
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit());
    let n: u64 = match tok.text.split_once('.') {
        Some((hi, lo)) if digits(hi) && digits(lo) => {
            let (hi, lo): (u64, u64) = (
                hi.parse().map_err(|_| bad())?,
                lo.parse().map_err(|_| bad())?,
            );
            if hi > 65535 || lo > 65535 {
                return Err(bad());
            }
            hi * 65536 + lo
        }
        None if digits(tok.text) => tok.text.parse().map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    match u32::try_from(n) {
        Ok(n) if n > 0 => Ok(Asn(n)),
        _ => Err(bad()),
    }
}

/// Read a route-map or prefix-list name (NX-OS allows up to 63 characters).
pub(super) fn policy_name(tok: Token<'_>, what: &str) -> Result<String, Fail> {
    value::name_up_to(tok, what, 63)
}

/// Read a prefix, with host bits clear.
pub(super) fn prefix(tok: Token<'_>) -> Result<IpPrefix, Fail> {
    let p: IpPrefix = tok.text.parse().map_err(|e| Fail::value(tok, e))?;
    if p.network() != p {
        return Err(Fail::new(
            tok.col,
            format!("`{}` has host bits set", tok.text),
            Some(format!("write the network: {}", p.network())),
        ));
    }
    Ok(p)
}

/// `router bgp ASN`: open the section (NX-OS runs one BGP instance; a
/// second header with another AS is an error).
pub(super) fn router_bgp(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let head = a.line.tokens[0].col;
    let parsed = a.expect("AS number").and_then(|t| {
        let n = asn(t)?;
        a.finish()?;
        Ok((t, n))
    });
    let (tok, n) = match parsed {
        Ok(x) => x,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::RouterBgp));
            return Err(f);
        }
    };
    match b.config.bgp.as_ref().map(|g| g.asn) {
        Some(have) if have != n => {
            b.enter(FrameKind::Broken(Section::RouterBgp));
            return Err(Fail::new(
                tok.col,
                format!("BGP is already configured with AS {have}"),
                Some("a switch runs one BGP instance; remove the other `router bgp` first".into()),
            ));
        }
        Some(_) => {}
        None => b.config.bgp = Some(Bgp::new(n)),
    }
    b.mark_first(At::Bgp(BgpAt::Router), head);
    b.enter(FrameKind::Section(Section::RouterBgp, 0, 0));
    Ok(())
}

/// `no router bgp [ASN]`.
pub(super) fn no_router_bgp(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    if let Some(t) = a.next_token() {
        asn(t)?;
    }
    a.finish()?;
    b.config.bgp = None;
    Ok(())
}

/// The BGP instance when the innermost section belongs to it.
fn bgp_mut<'b>(b: &'b mut Builder<'_>) -> Option<&'b mut Bgp> {
    b.config.bgp.as_mut()
}

/// `router-id A.B.C.D`.
fn router_id(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("router ID")?;
    a.finish()?;
    let id: Ipv4Addr = tok.text.parse().map_err(|_| {
        Fail::new(
            tok.col,
            format!("invalid router ID `{}`", tok.text),
            Some("a router ID is an IPv4 address, e.g. 10.0.0.1".into()),
        )
    })?;
    if b.section(Section::RouterBgp).is_some() {
        if let Some(bgp) = bgp_mut(b) {
            bgp.router_id = Some(id);
        }
    }
    Ok(())
}

/// `no router-id`.
fn no_router_id(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if b.section(Section::RouterBgp).is_some() {
        if let Some(bgp) = bgp_mut(b) {
            bgp.router_id = None;
        }
    }
    Ok(())
}

/// Set a router-level flag.
fn router_flag(
    b: &mut Builder<'_>,
    a: &mut Args<'_>,
    f: fn(&mut Bgp, bool),
    on: bool,
) -> Result<(), Fail> {
    a.finish()?;
    if b.section(Section::RouterBgp).is_some() {
        if let Some(bgp) = bgp_mut(b) {
            f(bgp, on);
        }
    }
    Ok(())
}

/// `bestpath as-path multipath-relax`.
fn multipath_relax(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    router_flag(b, a, |g, on| g.multipath_relax = on, true)
}

/// `no bestpath as-path multipath-relax`.
fn no_multipath_relax(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    router_flag(b, a, |g, on| g.multipath_relax = on, false)
}

/// `log-neighbor-changes`.
fn log_neighbor_changes(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    router_flag(b, a, |g, on| g.log_neighbor_changes = on, true)
}

/// `no log-neighbor-changes`.
fn no_log_neighbor_changes(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    router_flag(b, a, |g, on| g.log_neighbor_changes = on, false)
}

/// Which peer the innermost section configures, when it is a neighbor or template.
#[derive(Clone, Copy)]
enum PeerSlot {
    Neighbor(usize),
    Template(usize),
}

impl PeerSlot {
    /// Encoded in a frame's second index, with the family.
    fn code(self, afi: Afi) -> (usize, usize) {
        let af = usize::from(afi == Afi::Ipv6);
        match self {
            PeerSlot::Neighbor(i) => (i, af),
            PeerSlot::Template(i) => (i, 2 | af),
        }
    }

    /// Decoded from a `PeerAf` frame's indices.
    fn decode(a: usize, b: usize) -> (PeerSlot, Afi) {
        let afi = if b & 1 == 1 { Afi::Ipv6 } else { Afi::Ipv4 };
        let slot = if b & 2 == 2 {
            PeerSlot::Template(a)
        } else {
            PeerSlot::Neighbor(a)
        };
        (slot, afi)
    }
}

/// The peer the innermost neighbor or template section configures.
fn peer_slot(b: &Builder<'_>) -> Option<PeerSlot> {
    if let Some((i, _)) = b.section(Section::Neighbor) {
        return Some(PeerSlot::Neighbor(i));
    }
    b.section(Section::Template)
        .map(|(i, _)| PeerSlot::Template(i))
}

/// The settings of a peer slot, and its key for source positions.
fn peer_of<'b>(b: &'b mut Builder<'_>, slot: PeerSlot) -> Option<(&'b mut PeerConfig, PeerKey)> {
    let bgp = b.config.bgp.as_mut()?;
    match slot {
        PeerSlot::Neighbor(i) => bgp
            .neighbors
            .get_mut(i)
            .map(|n| (&mut n.peer, PeerKey::Neighbor(n.addr))),
        PeerSlot::Template(i) => bgp
            .templates
            .get_mut(i)
            .map(|t| (&mut t.peer, PeerKey::Template(t.name.clone()))),
    }
}

/// The innermost neighbor or template, when one is open.
fn peer_mut<'b>(b: &'b mut Builder<'_>) -> Option<(&'b mut PeerConfig, PeerKey)> {
    let slot = peer_slot(b)?;
    peer_of(b, slot)
}

/// The innermost neighbor address-family block, when one is open.
fn peer_af_mut<'b>(b: &'b mut Builder<'_>) -> Option<&'b mut PeerAf> {
    let (i, code) = b.section(Section::PeerAf)?;
    let (slot, afi) = PeerSlot::decode(i, code);
    let (peer, _) = peer_of(b, slot)?;
    match afi {
        Afi::Ipv4 => peer.ipv4.as_mut(),
        Afi::Ipv6 => peer.ipv6.as_mut(),
    }
}

/// The router-level address family open now.
fn router_af_mut<'b>(b: &'b mut Builder<'_>) -> Option<(Afi, &'b mut BgpAf)> {
    let (i, _) = b.section(Section::RouterAf)?;
    let bgp = b.config.bgp.as_mut()?;
    if i == 0 {
        bgp.ipv4.as_mut().map(|af| (Afi::Ipv4, af))
    } else {
        bgp.ipv6.as_mut().map(|af| (Afi::Ipv6, af))
    }
}

/// Read `ipv4 unicast` / `ipv6 unicast`; `Ok(None)` for a family railyard
/// does not model (`l2vpn evpn`, `ipv4 multicast`), which is skipped.
fn family(a: &mut Args<'_>) -> Result<Option<Afi>, Fail> {
    let afi = a.expect("address family")?;
    let safi = a.next_token();
    let v4 = afi.text.eq_ignore_ascii_case("ipv4");
    let v6 = afi.text.eq_ignore_ascii_case("ipv6");
    let unicast = safi.is_some_and(|s| super::is_keyword(s.text, "unicast"));
    match (v4, v6, unicast) {
        (true, _, true) => {
            a.finish()?;
            Ok(Some(Afi::Ipv4))
        }
        (_, true, true) => {
            a.finish()?;
            Ok(Some(Afi::Ipv6))
        }
        _ => {
            a.skip_rest();
            Ok(None)
        }
    }
}

/// `address-family ipv4|ipv6 unicast`, under `router bgp` or a peer.
fn address_family(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let afi = family(a);
    let under_peer = matches!(
        b.innermost().kind,
        FrameKind::Section(Section::Neighbor | Section::Template, ..)
            | FrameKind::Broken(Section::Neighbor | Section::Template)
    );
    let broken = if under_peer {
        Section::PeerAf
    } else {
        Section::RouterAf
    };
    let afi = match afi {
        Ok(Some(afi)) => afi,
        Ok(None) => {
            let kind = a.line.tokens[..a.line.tokens.len().min(3)]
                .iter()
                .map(|t| t.text.to_ascii_lowercase())
                .collect::<Vec<_>>()
                .join(" ");
            let context = b.innermost().kind.context();
            b.skip(context, kind, col, true);
            b.enter(FrameKind::Skip);
            return Ok(());
        }
        Err(f) => {
            b.enter(FrameKind::Broken(broken));
            return Err(f);
        }
    };
    if under_peer {
        let Some(slot) = peer_slot(b) else {
            b.enter(FrameKind::Broken(Section::PeerAf));
            return Ok(());
        };
        if let Some((peer, _)) = peer_of(b, slot) {
            let af = match afi {
                Afi::Ipv4 => &mut peer.ipv4,
                Afi::Ipv6 => &mut peer.ipv6,
            };
            af.get_or_insert_with(PeerAf::default);
        }
        let (i, code) = slot.code(afi);
        b.enter(FrameKind::Section(Section::PeerAf, i, code));
        return Ok(());
    }
    if b.section(Section::RouterBgp).is_none() {
        b.enter(FrameKind::Broken(Section::RouterAf));
        return Ok(());
    }
    if let Some(bgp) = bgp_mut(b) {
        let af = match afi {
            Afi::Ipv4 => &mut bgp.ipv4,
            Afi::Ipv6 => &mut bgp.ipv6,
        };
        af.get_or_insert_with(BgpAf::default);
    }
    b.enter(FrameKind::Section(
        Section::RouterAf,
        usize::from(afi == Afi::Ipv6),
        0,
    ));
    Ok(())
}

/// `no address-family ipv4|ipv6 unicast`.
fn no_address_family(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some(afi) = family(a)? else {
        return Ok(());
    };
    if let Some((peer, _)) = peer_mut(b) {
        match afi {
            Afi::Ipv4 => peer.ipv4 = None,
            Afi::Ipv6 => peer.ipv6 = None,
        }
    } else if b.section(Section::RouterBgp).is_some() {
        if let Some(bgp) = bgp_mut(b) {
            match afi {
                Afi::Ipv4 => bgp.ipv4 = None,
                Afi::Ipv6 => bgp.ipv6 = None,
            }
        }
    }
    Ok(())
}

/// Read a neighbor address.
fn neighbor_addr(tok: Token<'_>) -> Result<IpAddr, Fail> {
    tok.text.parse().map_err(|_| {
        let hint = if tok.text.contains('/') {
            "railyard models neighbors by address; prefix (dynamic) neighbors are not modelled"
        } else {
            "a neighbor is an IPv4 or IPv6 address"
        };
        Fail::new(
            tok.col,
            format!("invalid neighbor address `{}`", tok.text),
            Some(hint.into()),
        )
    })
}

/// `neighbor ADDR [remote-as ASN]`.
fn neighbor(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let parsed = (|| {
        let tok = a.expect("neighbor address")?;
        let addr = neighbor_addr(tok)?;
        let mut remote = None;
        if a.eat("remote-as").is_some() {
            let t = a.expect("AS number")?;
            remote = Some((asn(t)?, t.col));
        }
        a.finish()?;
        Ok((tok, addr, remote))
    })();
    let in_router = b.section(Section::RouterBgp).is_some() && b.config.bgp.is_some();
    let (tok, addr, remote) = match parsed {
        Ok(x) if in_router => x,
        Ok(_) => {
            b.enter(FrameKind::Broken(Section::Neighbor));
            return Ok(());
        }
        Err(f) => {
            b.enter(FrameKind::Broken(Section::Neighbor));
            return Err(f);
        }
    };
    let Some(bgp) = bgp_mut(b) else {
        return Ok(());
    };
    let index = match bgp.neighbors.iter().position(|n| n.addr == addr) {
        Some(i) => i,
        None => {
            bgp.neighbors.push(Neighbor {
                addr,
                peer: PeerConfig::default(),
            });
            bgp.neighbors.len() - 1
        }
    };
    if let Some((n, col)) = remote {
        bgp.neighbors[index].peer.remote_as = Some(n);
        b.mark(At::Bgp(BgpAt::RemoteAs(PeerKey::Neighbor(addr))), col);
    }
    b.mark_first(At::Bgp(BgpAt::Peer(PeerKey::Neighbor(addr))), tok.col);
    b.enter(FrameKind::Section(Section::Neighbor, index, 0));
    Ok(())
}

/// `no neighbor ADDR`.
fn no_neighbor(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("neighbor address")?;
    let addr = neighbor_addr(tok)?;
    a.skip_rest();
    if b.section(Section::RouterBgp).is_none() {
        return Ok(());
    }
    if let Some(bgp) = bgp_mut(b) {
        bgp.neighbors.retain(|n| n.addr != addr);
    }
    Ok(())
}

/// `template peer NAME`.
fn template(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let parsed = a.expect("template name").and_then(|t| {
        let name = value::name_up_to(t, "template", 63)?;
        a.finish()?;
        Ok((t, name))
    });
    let in_router = b.section(Section::RouterBgp).is_some() && b.config.bgp.is_some();
    let (tok, name) = match parsed {
        Ok(x) if in_router => x,
        Ok(_) => {
            b.enter(FrameKind::Broken(Section::Template));
            return Ok(());
        }
        Err(f) => {
            b.enter(FrameKind::Broken(Section::Template));
            return Err(f);
        }
    };
    let Some(bgp) = bgp_mut(b) else {
        return Ok(());
    };
    let index = match bgp.templates.iter().position(|t| t.name == name) {
        Some(i) => i,
        None => {
            bgp.templates.push(PeerTemplate {
                name: name.clone(),
                peer: PeerConfig::default(),
            });
            bgp.templates.len() - 1
        }
    };
    b.mark_first(At::Bgp(BgpAt::Peer(PeerKey::Template(name))), tok.col);
    b.enter(FrameKind::Section(Section::Template, index, 0));
    Ok(())
}

/// `no template peer NAME`.
fn no_template(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("template name")?;
    a.finish()?;
    if b.section(Section::RouterBgp).is_none() {
        return Ok(());
    }
    if let Some(bgp) = bgp_mut(b) {
        bgp.templates.retain(|t| t.name != tok.text);
    }
    Ok(())
}

/// `remote-as ASN`.
fn remote_as(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("AS number")?;
    let n = asn(tok)?;
    a.finish()?;
    if let Some((peer, key)) = peer_mut(b) {
        peer.remote_as = Some(n);
        b.mark(At::Bgp(BgpAt::RemoteAs(key)), tok.col);
    }
    Ok(())
}

/// `no remote-as [ASN]`.
fn no_remote_as(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if let Some((peer, _)) = peer_mut(b) {
        peer.remote_as = None;
    }
    Ok(())
}

/// `description TEXT`.
fn description(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (text, _) = a.rest().ok_or_else(|| a.missing("description"))?;
    let text = text.trim_end().to_owned();
    if let Some((peer, _)) = peer_mut(b) {
        peer.description = Some(text);
    }
    Ok(())
}

/// `no description`.
fn no_description(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if let Some((peer, _)) = peer_mut(b) {
        peer.description = None;
    }
    Ok(())
}

/// `bfd`.
fn bfd(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    a.finish()?;
    if let Some((peer, key)) = peer_mut(b) {
        peer.bfd = true;
        b.mark(At::Bgp(BgpAt::Bfd(key)), col);
    }
    Ok(())
}

/// `no bfd`.
fn no_bfd(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    if let Some((peer, _)) = peer_mut(b) {
        peer.bfd = false;
    }
    Ok(())
}

/// `update-source INTERFACE`: an Ethernet name is kept canonical, another
/// kind (`loopback0`) as written, for validation to warn about.
fn update_source(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (rest, col) = a.rest().ok_or_else(|| a.missing("interface"))?;
    let compact: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
    let name = match parse_interface_spec(&compact) {
        Ok(IfSpec::Ethernet(names)) if names.len() == 1 => names[0].to_string(),
        Ok(IfSpec::Ethernet(_)) => {
            return Err(Fail::new(
                col,
                format!("`{compact}` names a range of interfaces"),
                Some("name one interface".into()),
            ))
        }
        Ok(_) => compact.to_ascii_lowercase(),
        Err(e) => return Err(Fail::new(col, e.message(), e.hint().map(str::to_owned))),
    };
    if let Some((peer, key)) = peer_mut(b) {
        peer.update_source = Some(name);
        b.mark(At::Bgp(BgpAt::UpdateSource(key)), col);
    }
    Ok(())
}

/// `no update-source [INTERFACE]`.
fn no_update_source(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if let Some((peer, _)) = peer_mut(b) {
        peer.update_source = None;
    }
    Ok(())
}

/// `inherit peer NAME`.
fn inherit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("template name")?;
    let name = value::name_up_to(tok, "template", 63)?;
    a.finish()?;
    if let Some((peer, key)) = peer_mut(b) {
        peer.inherit = Some(name);
        b.mark(At::Bgp(BgpAt::Inherit(key)), tok.col);
    }
    Ok(())
}

/// `no inherit peer [NAME]`.
fn no_inherit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if let Some((peer, _)) = peer_mut(b) {
        peer.inherit = None;
    }
    Ok(())
}

/// `shutdown`.
fn shutdown(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    if let Some((peer, _)) = peer_mut(b) {
        peer.shutdown = true;
    }
    Ok(())
}

/// `no shutdown`.
fn no_shutdown(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    if let Some((peer, _)) = peer_mut(b) {
        peer.shutdown = false;
    }
    Ok(())
}

/// `activate`: on NX-OS the neighbor's `address-family` block itself
/// activates the family, so this (written in other dialects) changes nothing.
fn activate(_: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()
}

/// Read `[standard | extended | both]` after `send-community`: (standard, extended).
fn community_kinds(a: &mut Args<'_>) -> Result<(bool, bool), Fail> {
    let Some(tok) = a.next_token() else {
        return Ok((true, false));
    };
    a.finish()?;
    Ok(
        match keyword(tok, &["standard", "extended", "both"], "community kind")? {
            "standard" => (true, false),
            "extended" => (false, true),
            _ => (true, true),
        },
    )
}

/// `send-community [standard | extended | both]`.
fn send_community(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (std, ext) = community_kinds(a)?;
    if let Some(af) = peer_af_mut(b) {
        af.send_community |= std;
        af.send_community_extended |= ext;
    }
    Ok(())
}

/// `no send-community [standard | extended | both]`.
fn no_send_community(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (std, ext) = community_kinds(a)?;
    if let Some(af) = peer_af_mut(b) {
        af.send_community &= !std;
        af.send_community_extended &= !ext;
    }
    Ok(())
}

/// Read `NAME in|out`: the name, its token, and whether it is inbound.
fn route_map_dir<'t>(a: &mut Args<'t>) -> Result<(Token<'t>, String, bool), Fail> {
    let tok = a.expect("route-map name")?;
    let name = policy_name(tok, "route-map")?;
    let dir = a.expect("direction (in or out)")?;
    a.finish()?;
    let inbound = keyword(dir, &["in", "out"], "direction")? == "in";
    Ok((tok, name, inbound))
}

/// `route-map NAME in|out` under a neighbor's address family.
fn peer_route_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (tok, name, inbound) = route_map_dir(a)?;
    let Some((i, code)) = b.section(Section::PeerAf) else {
        return Ok(());
    };
    let (slot, afi) = PeerSlot::decode(i, code);
    let key = peer_of(b, slot).map(|(_, k)| k);
    if let Some(af) = peer_af_mut(b) {
        if inbound {
            af.route_map_in = Some(name.clone());
        } else {
            af.route_map_out = Some(name.clone());
        }
    }
    if let Some(key) = key {
        b.mark(At::Bgp(BgpAt::PeerRouteMap(key, afi, inbound)), tok.col);
    }
    Ok(())
}

/// `no route-map NAME in|out` under a neighbor's address family.
fn no_peer_route_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (_, _, inbound) = route_map_dir(a)?;
    if let Some(af) = peer_af_mut(b) {
        if inbound {
            af.route_map_in = None;
        } else {
            af.route_map_out = None;
        }
    }
    Ok(())
}

/// Check a prefix's family against the address family it is written under.
pub(super) fn same_family(tok: Token<'_>, p: &IpPrefix, afi: Option<Afi>) -> Result<(), Fail> {
    let want = match afi {
        Some(Afi::Ipv4) if !p.is_ipv4() => "ipv4",
        Some(Afi::Ipv6) if p.is_ipv4() => "ipv6",
        _ => return Ok(()),
    };
    Err(Fail::new(
        tok.col,
        format!("`{}` is not an {want} prefix", tok.text),
        Some(format!(
            "write it under `address-family {} unicast`",
            if want == "ipv4" { "ipv6" } else { "ipv4" }
        )),
    ))
}

/// `maximum-paths [ibgp] N`.
fn maximum_paths(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let ibgp = a.eat("ibgp").is_some();
    if !ibgp && a.peek().is_some_and(|t| super::is_keyword(t.text, "eibgp")) {
        return Err(Fail::new(
            a.peek().map_or(0, |t| t.col),
            "`maximum-paths eibgp` is not modelled",
            Some("use `maximum-paths N` (eBGP) and `maximum-paths ibgp N`".into()),
        ));
    }
    let tok = a.expect("number of paths")?;
    let n = value::ranged(tok, "maximum-paths", 1, u64::from(MAX_BGP_PATHS))? as u8;
    a.finish()?;
    if let Some((_, af)) = router_af_mut(b) {
        if ibgp {
            af.maximum_paths_ibgp = Some(n);
        } else {
            af.maximum_paths = Some(n);
        }
    }
    Ok(())
}

/// `no maximum-paths [ibgp] [N]`.
fn no_maximum_paths(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let ibgp = a.eat("ibgp").is_some();
    a.skip_rest();
    if let Some((_, af)) = router_af_mut(b) {
        if ibgp {
            af.maximum_paths_ibgp = None;
        } else {
            af.maximum_paths = None;
        }
    }
    Ok(())
}

/// `network PREFIX [route-map NAME]`.
fn network(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("prefix")?;
    let p = prefix(tok)?;
    let mut route_map = None;
    if a.eat("route-map").is_some() {
        let t = a.expect("route-map name")?;
        route_map = Some((policy_name(t, "route-map")?, t.col));
    }
    a.finish()?;
    let afi = router_af_mut(b).map(|(afi, _)| afi);
    same_family(tok, &p, afi)?;
    let Some((afi, af)) = router_af_mut(b) else {
        return Ok(());
    };
    let rm = route_map.as_ref().map(|(n, _)| n.clone());
    match af.networks.iter_mut().find(|n| n.prefix == p) {
        Some(n) => n.route_map = rm,
        None => af.networks.push(Network {
            prefix: p,
            route_map: rm,
        }),
    }
    if let Some((_, col)) = route_map {
        b.mark(At::Bgp(BgpAt::NetworkRouteMap(afi, p)), col);
    }
    Ok(())
}

/// `no network PREFIX`.
fn no_network(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("prefix")?;
    let p = prefix(tok)?;
    a.skip_rest();
    if let Some((_, af)) = router_af_mut(b) {
        af.networks.retain(|n| n.prefix != p);
    }
    Ok(())
}

/// `redistribute direct route-map NAME`; another source protocol is skipped
/// with a warning.
fn redistribute(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let proto = a.expect("source protocol")?;
    if !super::is_keyword(proto.text, "direct") {
        a.skip_rest();
        let kind = format!("redistribute {}", proto.text.to_ascii_lowercase());
        let context = b.innermost().kind.context();
        b.skip(context, kind, a.line.tokens[0].col, true);
        return Ok(());
    }
    if a.eat("route-map").is_none() {
        return Err(match a.peek() {
            Some(t) => Fail::new(
                t.col,
                format!("unexpected `{}`", t.text),
                Some("usage: redistribute direct route-map NAME".into()),
            ),
            None => Fail::new(
                a.line.end_col(),
                "missing route-map",
                Some("NX-OS redistributes only through a route-map: redistribute direct route-map NAME".into()),
            ),
        });
    }
    let tok = a.expect("route-map name")?;
    let name = policy_name(tok, "route-map")?;
    a.finish()?;
    if let Some((afi, af)) = router_af_mut(b) {
        af.redistribute_direct = Some(name);
        b.mark(At::Bgp(BgpAt::Redistribute(afi)), tok.col);
    }
    Ok(())
}

/// `no redistribute direct [route-map NAME]`.
fn no_redistribute(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let proto = a.expect("source protocol")?;
    a.skip_rest();
    if super::is_keyword(proto.text, "direct") {
        if let Some((_, af)) = router_af_mut(b) {
            af.redistribute_direct = None;
        }
    }
    Ok(())
}

/// `aggregate-address PREFIX [as-set] [summary-only]`.
fn aggregate(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("prefix")?;
    let p = prefix(tok)?;
    let (mut as_set, mut summary_only) = (false, false);
    while a.peek().is_some() {
        if a.eat("as-set").is_some() {
            as_set = true;
        } else if a.eat("summary-only").is_some() {
            summary_only = true;
        } else {
            a.finish()?;
        }
    }
    let afi = router_af_mut(b).map(|(afi, _)| afi);
    same_family(tok, &p, afi)?;
    if let Some((_, af)) = router_af_mut(b) {
        let agg = Aggregate {
            prefix: p,
            as_set,
            summary_only,
        };
        match af.aggregates.iter_mut().find(|x| x.prefix == p) {
            Some(x) => *x = agg,
            None => af.aggregates.push(agg),
        }
    }
    Ok(())
}

/// `no aggregate-address PREFIX`.
fn no_aggregate(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("prefix")?;
    let p = prefix(tok)?;
    a.skip_rest();
    if let Some((_, af)) = router_af_mut(b) {
        af.aggregates.retain(|x| x.prefix != p);
    }
    Ok(())
}
