//! Classification, per packet: the ingress port's classifier gives the
//! qos-group (DSCP, CoS, ACL rules), which names the egress queue; the PFC
//! priority follows the PCP of a tagged frame or else the qos-group; the
//! packet is lossless when that priority is on the ingress port and its
//! queue is not stormed. A packet of a lossless priority whose queue the
//! watchdog has stormed is dropped, or forwarded as lossy when the watchdog
//! says `forward_ingress`.

use super::Switch;
use crate::model::pfc::PRIORITIES;
use crate::packet::PacketBuf;

impl Switch {
    /// Sets `pkt`'s qos-group, PFC priority and lossless flag as ingress
    /// port `p` classifies it. Returns true when the packet's priority is
    /// lossless on `p` but the watchdog has shut its queue there (see
    /// [`watchdog_forwards`](Self::watchdog_forwards)).
    #[inline]
    pub(super) fn classify(&self, pkt: &mut PacketBuf, p: usize) -> bool {
        let slot = &self.ports[p];
        let qg = slot.classifier.classify(pkt);
        pkt.meta.qos_group = qg;
        // Tagged frames carry their PFC priority in the PCP; untagged routed
        // traffic is DSCP-based, so its priority is its qos-group.
        let prio = pkt.meta.pcp().unwrap_or(qg);
        pkt.meta.pfc_priority = prio;
        let bit = if usize::from(prio) < PRIORITIES {
            1u8 << prio
        } else {
            0
        };
        let enabled = slot.model.pfc.enabled_priorities & bit;
        pkt.meta.lossless = enabled & !slot.pfc.stormed != 0;
        enabled & slot.pfc.stormed != 0
    }

    /// Whether a packet [`classify`](Self::classify) found in a priority
    /// the watchdog has shut on its ingress port `p` goes on: dropped
    /// (false), as NX-OS does, or, with `forward_ingress`, forwarded as
    /// lossy (classify already made it so) and counted. Out of line: the
    /// fast path meets it only during a storm.
    #[cold]
    #[inline(never)]
    pub(super) fn watchdog_forwards(&mut self, pkt: &PacketBuf, p: usize) -> bool {
        let slot = &mut self.ports[p];
        let forward = slot.model.pfc.watchdog.is_some_and(|w| w.forward_ingress);
        if forward {
            let prio = usize::from(pkt.meta.pfc_priority) & (PRIORITIES - 1);
            slot.counters.pfc.watchdog_ingress_forwarded[prio] += 1;
        }
        forward
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use crate::meta::Meta;
    use crate::model::{InterfaceModel, SwitchModel};
    use crate::packet::Pool;
    use crate::pipeline::Switch;
    use crate::wire::MacAddr;

    /// A switch whose first port maps DSCP 24 to qos-group 3 and has PFC on
    /// priority 3.
    fn switch() -> (Switch, Pool) {
        let mut port = InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 1, 1]));
        port.dscp_to_qos_group[24] = 3;
        port.pfc.enabled_priorities = 1 << 3;
        let model = SwitchModel {
            interfaces: vec![port],
            ..SwitchModel::default()
        };
        let pool = Pool::new(4);
        let (sw, _) = Switch::new(&model, vec![None], pool.clone());
        (sw, pool)
    }

    fn classified(sw: &Switch, pool: &Pool, dscp: u8, tci: Option<u16>) -> Meta {
        let mut pkt = pool.alloc_from(&[0u8; 60]).unwrap();
        pkt.meta.kind = crate::meta::FrameKind::Ipv4;
        pkt.meta.dscp = dscp;
        pkt.meta.vlan_tci = tci;
        sw.classify(&mut pkt, 0);
        pkt.meta
    }

    #[test]
    fn the_lossless_class_is_lossless_and_others_are_not() {
        let (sw, pool) = switch();
        let m = classified(&sw, &pool, 24, None);
        assert_eq!((m.qos_group, m.pfc_priority, m.lossless), (3, 3, true));
        let m = classified(&sw, &pool, 0, None);
        assert_eq!((m.qos_group, m.pfc_priority, m.lossless), (0, 0, false));
    }

    #[test]
    fn a_tag_names_the_pfc_priority() {
        let (sw, pool) = switch();
        // PCP 5 on a DSCP 24 packet: queue 3, but priority 5, not lossless.
        let m = classified(&sw, &pool, 24, Some(5 << 13));
        assert_eq!((m.qos_group, m.pfc_priority, m.lossless), (3, 5, false));
    }

    #[test]
    fn a_stormed_priority_is_admitted_as_lossy() {
        let (mut sw, pool) = switch();
        sw.ports[0].pfc.stormed = 1 << 3;
        let m = classified(&sw, &pool, 24, None);
        assert_eq!((m.qos_group, m.lossless), (3, false));
    }

    /// A classified DSCP `dscp` packet on port 0, and whether the watchdog
    /// lets it on.
    fn watchdog_says(sw: &mut Switch, pool: &Pool, dscp: u8) -> bool {
        let mut pkt = pool.alloc_from(&[0u8; 60]).unwrap();
        pkt.meta.kind = crate::meta::FrameKind::Ipv4;
        pkt.meta.dscp = dscp;
        !sw.classify(&mut pkt, 0) || sw.watchdog_forwards(&pkt, 0)
    }

    fn with_watchdog(sw: &mut Switch, forward_ingress: bool) {
        sw.ports[0].model.pfc.watchdog = Some(crate::model::WatchdogModel {
            interval_ns: 100_000_000,
            shutdown_multiplier: 1,
            restore_multiplier: 10,
            fixed_restore_multiplier: 0,
            forward_ingress,
        });
    }

    #[test]
    fn lossless_traffic_into_a_shut_queue_is_dropped_by_default() {
        let (mut sw, pool) = switch();
        with_watchdog(&mut sw, false);
        assert!(watchdog_says(&mut sw, &pool, 24), "not stormed: on");
        sw.ports[0].pfc.stormed = 1 << 3;
        assert!(!watchdog_says(&mut sw, &pool, 24), "stormed: dropped");
        assert!(watchdog_says(&mut sw, &pool, 0), "a lossy class: on");
        assert_eq!(sw.ports[0].counters.pfc.watchdog_ingress_forwarded, [0; 8]);
    }

    #[test]
    fn forward_ingress_forwards_it_as_lossy_and_counts_it() {
        let (mut sw, pool) = switch();
        with_watchdog(&mut sw, true);
        sw.ports[0].pfc.stormed = 1 << 3;
        assert!(watchdog_says(&mut sw, &pool, 24));
        assert!(watchdog_says(&mut sw, &pool, 24));
        assert!(watchdog_says(&mut sw, &pool, 0));
        let c = &sw.ports[0].counters.pfc;
        assert_eq!(c.watchdog_ingress_forwarded[3], 2);
        assert_eq!(c.watchdog_ingress_forwarded.iter().sum::<u64>(), 2);
        let m = classified(&sw, &pool, 24, None);
        assert!(!m.lossless, "forwarded as lossy");
    }
}
