//! Whether a lab's counters add up: every packet a switch's egress queue was
//! offered was sent, dropped with a reason or is still queued, and every
//! frame one end of a switch–switch cable sent arrived at the other end
//! (read, or dropped by the receiving backend and counted there). A
//! frame lost without a counter shows up here as an imbalance; the soak
//! (`scripts/soak.sh`) ends with this check, and so do the lab tests.
//!
//! Cable balance holds only once traffic has stopped and the wire is empty:
//! frames in a veth or in a receive ring not yet read are on neither side.

use railyard_dataplane::stats::SwitchStats;
use serde::Serialize;

use super::run::LabState;
use super::topology::Topology;

/// The outcome of a conservation check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Conservation {
    /// Egress queues that were offered at least one packet.
    pub queues: usize,
    /// Switch–switch cables whose two ends were compared.
    pub cables: usize,
    /// Every imbalance found, one line each.
    pub problems: Vec<String>,
}

impl Conservation {
    /// True when nothing was found out of balance.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// One line: `ok (N queues with traffic, M cables)` or the number of
    /// problems.
    pub fn summary(&self) -> String {
        let what = format!(
            "{} queue(s) with traffic, {} cable(s)",
            self.queues, self.cables
        );
        if self.ok() {
            format!("ok ({what})")
        } else {
            format!("broken: {} imbalance(s) in {what}", self.problems.len())
        }
    }
}

/// Checks the counters of the switches in `stats` (one snapshot each, named
/// by hostname as in `topology`).
pub fn check(stats: &[SwitchStats], topology: &Topology) -> Conservation {
    let mut c = Conservation::default();
    for s in stats {
        for (name, i) in &s.interfaces {
            for q in &i.queues {
                let out =
                    q.tx_packets + q.wred_drops + q.tail_drops + q.watchdog_drops + q.depth_packets;
                if q.offered_packets != out {
                    c.problems.push(format!(
                        "{} {name} queue {}: offered {} but accounted for {out} (tx {} + wred {} \
                         + tail {} + watchdog {} + queued {})",
                        s.hostname,
                        q.queue,
                        q.offered_packets,
                        q.tx_packets,
                        q.wred_drops,
                        q.tail_drops,
                        q.watchdog_drops,
                        q.depth_packets
                    ));
                }
                c.queues += usize::from(q.offered_packets > 0);
            }
        }
    }
    let port = |node: &str, port: &str| {
        let s = stats.iter().find(|s| s.hostname == node)?;
        s.interfaces.get(port)
    };
    for l in &topology.links {
        let (Some(a), Some(b)) = (port(&l.a.node, &l.a.port), port(&l.b.node, &l.b.port)) else {
            continue;
        };
        for (from, to, tx, rx) in [(&l.a, &l.b, a, b), (&l.b, &l.a, b, a)] {
            // Frames the receiving backend could not take (a full kernel
            // ring while its switch was stalled) arrived and were counted
            // there, as `backend_rx_dropped`.
            let got = rx.rx_packets + rx.backend_rx_dropped;
            if tx.tx_packets != got {
                c.problems.push(format!(
                    "{from} -> {to}: {} sent, {} received and {} dropped by the receiving \
                     backend ({} lost on the cable)",
                    tx.tx_packets,
                    rx.rx_packets,
                    rx.backend_rx_dropped,
                    i128::from(tx.tx_packets) - i128::from(got)
                ));
            }
        }
        c.cables += 1;
    }
    c
}

/// Checks a lab's snapshots this many times before reporting an imbalance.
const ATTEMPTS: usize = 5;

/// Fetches every switch's counters from its socket and checks them. The
/// switches publish their counters independently, every 100 ms, and keep
/// sending LLDP after the traffic stops, so a frame can be counted as sent
/// by one switch and not yet as received by the other: a failed check is
/// taken again a few times, 300 ms apart, and only a lasting imbalance is
/// reported.
///
/// # Errors
/// A switch that does not answer.
pub fn of_lab(state: &LabState) -> Result<Conservation, String> {
    let mut attempt = 0;
    loop {
        let stats = state
            .switches
            .iter()
            .map(|sw| crate::mgmt::fetch_stats(&sw.socket).map_err(|e| format!("{}: {e}", sw.name)))
            .collect::<Result<Vec<_>, _>>()?;
        let c = check(&stats, &state.topology);
        attempt += 1;
        if c.ok() || attempt == ATTEMPTS {
            return Ok(c);
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;
    use railyard_dataplane::stats::{InterfaceStats, QueueStats};

    fn switch(name: &str, port: &str, rx: u64, tx: u64, queue: QueueStats) -> SwitchStats {
        let mut s = SwitchStats {
            hostname: name.into(),
            ..SwitchStats::default()
        };
        s.interfaces.insert(
            port.into(),
            InterfaceStats {
                rx_packets: rx,
                tx_packets: tx,
                queues: vec![queue],
                ..InterfaceStats::default()
            },
        );
        s
    }

    #[test]
    fn a_queue_or_cable_that_loses_a_frame_is_named() {
        let topo = super::super::topology::parse_str(
            "switch a role rail\nswitch b role rail\n\
             link a:Ethernet1/1 b:Ethernet1/1 subnet 10.0.0.0/31\n",
            std::path::Path::new("t.topo"),
        )
        .unwrap();
        let q = |offered, tx, tail, depth| QueueStats {
            queue: 3,
            offered_packets: offered,
            tx_packets: tx,
            tail_drops: tail,
            depth_packets: depth,
            ..QueueStats::default()
        };
        let good = [
            switch("a", "Ethernet1/1", 7, 10, q(12, 10, 1, 1)),
            switch("b", "Ethernet1/1", 10, 7, q(7, 7, 0, 0)),
        ];
        let c = check(&good, &topo);
        assert!(c.ok(), "{c:?}");
        assert_eq!((c.queues, c.cables), (2, 1));
        assert_eq!(c.summary(), "ok (2 queue(s) with traffic, 1 cable(s))");

        let bad = [
            switch("a", "Ethernet1/1", 7, 10, q(12, 10, 1, 0)),
            switch("b", "Ethernet1/1", 9, 7, q(7, 7, 0, 0)),
        ];
        let c = check(&bad, &topo);
        assert_eq!(c.problems.len(), 2, "{c:?}");
        assert!(
            c.problems[0].starts_with("a Ethernet1/1 queue 3: offered 12 but accounted for 11"),
            "{}",
            c.problems[0]
        );
        assert_eq!(
            c.problems[1],
            "a:Ethernet1/1 -> b:Ethernet1/1: 10 sent, 9 received and 0 dropped by the \
             receiving backend (1 lost on the cable)"
        );
        // What the receiving backend dropped is accounted for.
        let mut ring_full = bad.clone();
        ring_full[0]
            .interfaces
            .get_mut("Ethernet1/1")
            .unwrap()
            .queues[0]
            .depth_packets = 1;
        ring_full[1]
            .interfaces
            .get_mut("Ethernet1/1")
            .unwrap()
            .backend_rx_dropped = 1;
        assert!(check(&ring_full, &topo).ok());
        assert!(c.summary().starts_with("broken: 2 imbalance(s)"));
    }
}
