//! Fuzz the LACP wire code and agent with raw frames: nothing may panic,
//! whatever parses must re-emit to bytes that parse back the same, and a
//! frame the agent accepts must leave it able to poll.

#![no_main]

use libfuzzer_sys::fuzz_target;
use railyard_lacp::wire::{slow_payload, LacpduRepr, MacAddr, SystemId, LACPDU_LEN};
use railyard_lacp::{Agent, PortConfig};

fuzz_target!(|data: &[u8]| {
    // The whole input as a Slow Protocols payload.
    if let Ok(r) = LacpduRepr::parse(data) {
        let mut b = [0u8; LACPDU_LEN];
        r.emit(&mut b).expect("a parsed LACPDU re-emits");
        assert_eq!(LacpduRepr::parse(&b), Ok(r));
    }
    let _ = slow_payload(data);

    // The whole input as a frame to an agent with one member up.
    let mut agent = Agent::new(SystemId {
        priority: 1,
        mac: MacAddr([2, 0, 0, 0, 0, 1]),
    });
    agent
        .add_port(1, PortConfig::new(MacAddr([2, 0, 0, 0, 1, 1]), 1, 1))
        .expect("one port");
    agent.set_link(1, true, 0);
    let _ = agent.receive(1, 1, data);
    let mut sent = 0;
    agent.poll(2, &mut |_, f| {
        assert!(LacpduRepr::parse(&f[14..]).is_ok());
        sent += 1;
    });
    assert!(sent <= 1);
    let _ = agent.snapshot();
});
