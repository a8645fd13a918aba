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
