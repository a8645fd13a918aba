//! What happens to the fabric during a run: links that fail (and maybe
//! come back) at given virtual times, and links slower than the topology
//! says (an asymmetric fabric), named from the command line as one of
//! their ends (`rail1:Ethernet1/31`; `e1/31` works too).

use railyard_config::InterfaceName;
use railyard_dataplane::clock::Nanos;

use crate::lab::topology::Topology;

/// A link going down at `down_ns`, and up again at `up_ns` if given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkFailure {
    /// Index of the link in the topology.
    pub link: usize,
    /// When it goes down.
    pub down_ns: Nanos,
    /// When it comes back, if it does.
    pub up_ns: Option<Nanos>,
}

/// The link one of whose ends is `NODE:PORT`.
///
/// # Errors
///
/// No such node, port, or cable, with a hint.
pub fn find_link(t: &Topology, end: &str) -> Result<usize, String> {
    let (node, port) = end.split_once(':').ok_or_else(|| {
        format!("{end:?}: name a link by one end, NODE:PORT, like rail1:Ethernet1/31")
    })?;
    let port = match port.parse::<InterfaceName>() {
        Ok(n) if t.is_switch(node) => n.to_string(),
        _ => port.to_string(),
    };
    t.links
        .iter()
        .position(|l| {
            (l.a.node == node && l.a.port == port) || (l.b.node == node && l.b.port == port)
        })
        .ok_or_else(|| {
            format!(
                "{end:?}: no link of {} has that end (links are written `link {node}:PORT …` in {})",
                t.path.display(),
                t.path.display()
            )
        })
}

fn duration(text: &str, what: &str) -> Result<Nanos, String> {
    humantime::parse_duration(text.trim())
        .map(|d| d.as_nanos() as Nanos)
        .map_err(|e| format!("{what}: bad time {text:?} ({e}); write it like 200us or 1ms"))
}

/// Reads `--fail NODE:PORT@DOWN[-UP]` (`rail1:Ethernet1/31@200us-600us`).
///
/// # Errors
///
/// A malformed spec, an unknown link, or an up time not after the down time.
pub fn parse_failure(t: &Topology, spec: &str) -> Result<LinkFailure, String> {
    let what = format!("--fail {spec}");
    let (end, times) = spec.rsplit_once('@').ok_or_else(|| {
        format!("{what}: expected NODE:PORT@TIME[-TIME], like rail1:Ethernet1/31@200us")
    })?;
    let link = find_link(t, end).map_err(|e| format!("{what}: {e}"))?;
    let (down, up) = match times.split_once('-') {
        Some((d, u)) => (duration(d, &what)?, Some(duration(u, &what)?)),
        None => (duration(times, &what)?, None),
    };
    if up.is_some_and(|u| u <= down) {
        return Err(format!(
            "{what}: the link must come back after it goes down"
        ));
    }
    Ok(LinkFailure {
        link,
        down_ns: down,
        up_ns: up,
    })
}

/// Applies `--degrade NODE:PORT:MBPS`: the link runs at MBPS both ways.
///
/// # Errors
///
/// A malformed spec, an unknown link, or a speed of 0.
pub fn apply_degrade(t: &mut Topology, spec: &str) -> Result<(), String> {
    let what = format!("--degrade {spec}");
    let (end, mbps) = spec
        .rsplit_once(':')
        .ok_or_else(|| format!("{what}: expected NODE:PORT:MBPS, like rail1:Ethernet1/31:25000"))?;
    let mbps: u32 = mbps
        .trim()
        .parse()
        .ok()
        .filter(|m| *m > 0)
        .ok_or_else(|| format!("{what}: {mbps:?} is no speed; give Mb/s, like 25000"))?;
    let link = find_link(t, end).map_err(|e| format!("{what}: {e}"))?;
    t.links[link].speed = Some(mbps);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo() -> Topology {
        crate::lab::topology::parse_str(
            "switch leaf1 role rail\nswitch spine1 role spine\nhost h1\n\
             link h1:eth0 leaf1:Ethernet1/1 speed 100000 subnet 10.1.1.0/24\n\
             link leaf1:Ethernet1/31 spine1:Ethernet1/1 speed 100000 subnet 10.255.0.0/31\n",
            std::path::Path::new("t.topo"),
        )
        .unwrap_or_else(|d| panic!("{d:?}"))
    }

    #[test]
    fn a_link_is_found_by_either_end_and_any_interface_spelling() {
        let t = topo();
        assert_eq!(find_link(&t, "leaf1:Ethernet1/31"), Ok(1));
        assert_eq!(find_link(&t, "leaf1:e1/31"), Ok(1));
        assert_eq!(find_link(&t, "spine1:eth1/1"), Ok(1));
        assert_eq!(find_link(&t, "h1:eth0"), Ok(0));
        assert!(find_link(&t, "leaf1:Ethernet1/9")
            .unwrap_err()
            .contains("no link"));
        assert!(find_link(&t, "leaf1").unwrap_err().contains("NODE:PORT"));
    }

    #[test]
    fn failures_and_degrades_parse_with_clear_errors() {
        let mut t = topo();
        assert_eq!(
            parse_failure(&t, "leaf1:e1/31@200us-600us"),
            Ok(LinkFailure {
                link: 1,
                down_ns: 200_000,
                up_ns: Some(600_000)
            })
        );
        assert_eq!(
            parse_failure(&t, "spine1:Ethernet1/1@1ms").map(|f| f.up_ns),
            Ok(None)
        );
        assert!(parse_failure(&t, "leaf1:e1/31@600us-200us")
            .unwrap_err()
            .contains("come back after"));
        assert!(parse_failure(&t, "leaf1:e1/31")
            .unwrap_err()
            .contains("@TIME"));
        assert!(parse_failure(&t, "leaf1:e1/31@soon")
            .unwrap_err()
            .contains("bad time"));
        apply_degrade(&mut t, "leaf1:Ethernet1/31:25000").unwrap();
        assert_eq!(t.links[1].speed, Some(25_000));
        assert!(apply_degrade(&mut t, "leaf1:Ethernet1/31:0").is_err());
        assert!(apply_degrade(&mut t, "leaf1:Ethernet1/31:fast").is_err());
    }
}
