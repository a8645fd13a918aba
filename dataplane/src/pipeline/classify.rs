//! Classification, per packet: the ingress port's classifier gives the
//! qos-group (DSCP, CoS, ACL rules), which names the egress queue; the PFC
//! priority follows the PCP of a tagged frame or else the qos-group; the
//! packet is lossless when that priority is on the ingress port and its
//! queue is not stormed.

use super::Switch;
use crate::model::pfc::PRIORITIES;
use crate::packet::PacketBuf;

impl Switch {
    /// Sets `pkt`'s qos-group, PFC priority and lossless flag as ingress
    /// port `p` classifies it.
    #[inline]
    pub(super) fn classify(&self, pkt: &mut PacketBuf, p: usize) {
        let slot = &self.ports[p];
        let qg = slot.classifier.classify(pkt);
        pkt.meta.qos_group = qg;
        // Tagged frames carry their PFC priority in the PCP; untagged routed
        // traffic is DSCP-based, so its priority is its qos-group.
        let prio = pkt.meta.pcp().unwrap_or(qg);
        pkt.meta.pfc_priority = prio;
        let lossless = slot.model.pfc.enabled_priorities & !slot.pfc.stormed;
        pkt.meta.lossless = usize::from(prio) < PRIORITIES && lossless & (1 << prio) != 0;
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
}
