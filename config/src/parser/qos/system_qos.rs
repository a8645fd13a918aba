//! The `system qos` section and the `service-policy` lines it holds.

use super::*;

/// Commands under `system qos`.
pub(in crate::parser) static SYSTEM_QOS: &[Spec] = &[
    Spec::run(
        &["service-policy"],
        SYSTEM_SERVICE_POLICY,
        system_service_policy,
    ),
    Spec::run(
        &["no", "service-policy"],
        SYSTEM_SERVICE_POLICY,
        no_system_service_policy,
    ),
    Spec::skip(&["fex"]),
];

/// `system qos`.
pub(in crate::parser) fn system_qos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let r = a.finish();
    b.enter(FrameKind::Section(Section::SystemQos, 0, 0));
    r
}

/// `no system qos`: remove every system policy.
pub(in crate::parser) fn no_system_qos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    b.config.system_qos = Default::default();
    Ok(())
}

/// The slot of [`SystemQos`](crate::qos::SystemQos) a policy goes in.
pub(super) fn system_slot(s: &mut crate::qos::SystemQos, slot: PolicySlot) -> &mut Option<String> {
    match slot {
        PolicySlot::NetworkQos => &mut s.network_qos,
        PolicySlot::QueuingOutput => &mut s.queuing_output,
        PolicySlot::QueuingInput => &mut s.queuing_input,
        PolicySlot::QosInput => &mut s.qos_input,
    }
}

/// `service-policy ...` under `system qos`.
pub(super) fn system_service_policy(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (slot, name) = service_policy_args(a, false)?;
    let Some(tok) = name else { return Ok(()) };
    let name = value::name(tok, "policy-map")?;
    b.mark(At::SystemPolicy(slot), tok.col);
    *system_slot(&mut b.config.system_qos, slot) = Some(name);
    Ok(())
}

/// `no service-policy ...` under `system qos`.
pub(super) fn no_system_service_policy(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (slot, _) = service_policy_args(a, true)?;
    *system_slot(&mut b.config.system_qos, slot) = None;
    Ok(())
}
