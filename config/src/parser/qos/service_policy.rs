//! `service-policy` lines: which policy slot they fill, under `system qos` and under an interface.

use super::*;

/// Read `[type KIND] [input|output]` and the policy name (optional when `name_optional`).
pub(super) fn service_policy_args<'t>(
    a: &mut Args<'t>,
    name_optional: bool,
) -> Result<(PolicySlot, Option<Token<'t>>), Fail> {
    let mut kind = "qos";
    if a.peek()
        .is_some_and(|t| t.text.eq_ignore_ascii_case("type"))
    {
        a.next_token();
        let k = a.expect("policy type")?;
        kind = keyword(k, &["qos", "queuing", "network-qos"], "policy type")?;
    }
    let slot = if kind == "network-qos" {
        PolicySlot::NetworkQos
    } else {
        let d = a.expect("`input` or `output`")?;
        match (kind, keyword(d, &["input", "output"], "direction")?) {
            ("queuing", "output") => PolicySlot::QueuingOutput,
            ("queuing", _) => PolicySlot::QueuingInput,
            (_, "input") => PolicySlot::QosInput,
            _ => {
                return Err(Fail::new(
                    d.col,
                    "qos policies classify traffic on input only",
                    Some("write `service-policy type qos input NAME`".into()),
                ))
            }
        }
    };
    let name = if name_optional {
        a.next_token()
    } else {
        Some(a.expect("policy name")?)
    };
    a.finish()?;
    Ok((slot, name))
}

/// The slot of an interface (Ethernet or port-channel) a policy goes in;
/// `None` for an SVI, which has none.
pub(super) fn iface_slot(
    config: &mut crate::model::Config,
    key: IfKey,
    slot: PolicySlot,
) -> Option<&mut Option<String>> {
    let (qos, out, inp) = match key {
        IfKey::Ethernet(i) => {
            let x = &mut config.interfaces[i];
            (
                &mut x.service_policy_qos_input,
                &mut x.service_policy_queuing_output,
                &mut x.service_policy_queuing_input,
            )
        }
        IfKey::PortChannel(i) => {
            let x = &mut config.port_channels[i];
            (
                &mut x.service_policy_qos_input,
                &mut x.service_policy_queuing_output,
                &mut x.service_policy_queuing_input,
            )
        }
        IfKey::Svi(_) => return None,
    };
    Some(match slot {
        PolicySlot::QueuingOutput => out,
        PolicySlot::QueuingInput => inp,
        PolicySlot::QosInput | PolicySlot::NetworkQos => qos,
    })
}

/// `service-policy type qos input NAME | type queuing input|output NAME` under an interface.
pub(in crate::parser) fn iface_service_policy(
    b: &mut Builder<'_>,
    a: &mut Args<'_>,
) -> Result<(), Fail> {
    let first = a.peek();
    let (slot, name) = service_policy_args(a, false)?;
    if slot == PolicySlot::NetworkQos {
        return Err(Fail::new(
            first.map_or(0, |t| t.col),
            "network-qos policies apply to the whole switch",
            Some("put `service-policy type network-qos NAME` under `system qos`".into()),
        ));
    }
    let Some(tok) = name else { return Ok(()) };
    let name = value::name(tok, "policy-map")?;
    for key in b.ports() {
        b.mark(At::IfacePolicy(key, slot), tok.col);
        if let Some(s) = iface_slot(&mut b.config, key, slot) {
            *s = Some(name.clone());
        }
    }
    Ok(())
}

/// `no service-policy ...` under an interface.
pub(in crate::parser) fn no_iface_service_policy(
    b: &mut Builder<'_>,
    a: &mut Args<'_>,
) -> Result<(), Fail> {
    let (slot, _) = service_policy_args(a, true)?;
    for key in b.ports() {
        if let Some(s) = iface_slot(&mut b.config, key, slot) {
            *s = None;
        }
    }
    Ok(())
}
