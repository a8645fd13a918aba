//! The LLDP part of the model: `feature lldp`'s globals (`lldp timer`,
//! `holdtime`, `reinit`, `tlv-select`) and railyard's custom TLVs, as plain
//! data as written in the configuration.

use serde::Serialize;

/// The TLVs `lldp tlv-select` turns on and off (all on by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct LldpTlvSelect {
    /// `dcbxp`: the DCBX TLVs (ETS, PFC, application priority).
    pub dcbxp: bool,
    /// `management-address`.
    pub management_address: bool,
    /// `port-description`.
    pub port_description: bool,
    /// `port-vlan`.
    pub port_vlan: bool,
    /// `power-management`.
    pub power_management: bool,
    /// `system-capabilities`.
    pub system_capabilities: bool,
    /// `system-description`.
    pub system_description: bool,
    /// `system-name`.
    pub system_name: bool,
}

impl LldpTlvSelect {
    /// Every keyword `lldp tlv-select` accepts, in printing order.
    pub const KEYWORDS: [&'static str; 8] = [
        "dcbxp",
        "management-address",
        "port-description",
        "port-vlan",
        "power-management",
        "system-capabilities",
        "system-description",
        "system-name",
    ];

    /// The flag for a keyword of [`Self::KEYWORDS`].
    pub fn flag_mut(&mut self, keyword: &str) -> Option<&mut bool> {
        Some(match keyword {
            "dcbxp" => &mut self.dcbxp,
            "management-address" => &mut self.management_address,
            "port-description" => &mut self.port_description,
            "port-vlan" => &mut self.port_vlan,
            "power-management" => &mut self.power_management,
            "system-capabilities" => &mut self.system_capabilities,
            "system-description" => &mut self.system_description,
            "system-name" => &mut self.system_name,
            _ => return None,
        })
    }

    /// The flag for a keyword of [`Self::KEYWORDS`] (false for an unknown one).
    pub fn flag(&self, keyword: &str) -> bool {
        let mut copy = *self;
        copy.flag_mut(keyword).is_some_and(|f| *f)
    }
}

impl Default for LldpTlvSelect {
    fn default() -> Self {
        LldpTlvSelect {
            dcbxp: true,
            management_address: true,
            port_description: true,
            port_vlan: true,
            power_management: true,
            system_capabilities: true,
            system_description: true,
            system_name: true,
        }
    }
}

/// Default LLDP transmit interval, seconds (NX-OS).
pub const DEFAULT_LLDP_TIMER_S: u16 = 30;
/// Default LLDP hold time advertised as TTL, seconds (NX-OS).
pub const DEFAULT_LLDP_HOLDTIME_S: u16 = 120;
/// Default LLDP re-initialisation delay, seconds (NX-OS).
pub const DEFAULT_LLDP_REINIT_S: u16 = 2;

/// Most information an organisationally specific LLDP TLV carries: the
/// 511-byte TLV value less the 3-byte OUI and 1-byte subtype (IEEE 802.1AB).
pub const MAX_CUSTOM_TLV_INFO: usize = 507;

/// One `lldp tlv custom` entry (railyard extension): an organisationally
/// specific TLV advertised on every LLDP port, so TLVs railyard does not
/// model (e.g. Ultra Ethernet link negotiation, whose layouts are not public)
/// can still be sent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct CustomTlv {
    /// The organisation's OUI, e.g. `[0x00, 0x11, 0x22]`.
    pub oui: [u8; 3],
    /// The organisation-defined subtype.
    pub subtype: u8,
    /// The information string, at most [`MAX_CUSTOM_TLV_INFO`] bytes (may be empty).
    pub info: Vec<u8>,
}

/// The global LLDP settings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Lldp {
    /// Whether `feature lldp` is configured (mirrors [`Config::features`](crate::Config::features)).
    pub enabled: bool,
    /// `lldp timer S` (5-254).
    pub timer_s: u16,
    /// `lldp holdtime S` (10-255).
    pub holdtime_s: u16,
    /// `lldp reinit S` (1-10).
    pub reinit_s: u16,
    /// `[no] lldp tlv-select …`.
    pub tlv_select: LldpTlvSelect,
    /// `lldp tlv custom …` entries, in configuration order; at most one per
    /// OUI and subtype.
    pub custom_tlvs: Vec<CustomTlv>,
}

impl Default for Lldp {
    fn default() -> Self {
        Lldp {
            enabled: false,
            timer_s: DEFAULT_LLDP_TIMER_S,
            holdtime_s: DEFAULT_LLDP_HOLDTIME_S,
            reinit_s: DEFAULT_LLDP_REINIT_S,
            tlv_select: LldpTlvSelect::default(),
            custom_tlvs: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tlv_flags_by_keyword() {
        let mut t = LldpTlvSelect::default();
        for k in LldpTlvSelect::KEYWORDS {
            assert!(t.flag(k));
            *t.flag_mut(k).unwrap() = false;
            assert!(!t.flag(k));
        }
        assert!(t.flag_mut("bogus").is_none());
    }
}
