//! A worker that panics takes its ports down with it; the runtime must say
//! so, so the switch stops instead of answering as if it still forwarded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use railyard_dataplane::model::{InterfaceModel, SwitchModel};
use railyard_dataplane::port::null::NullPort;
use railyard_dataplane::port::{IoCounters, Port, TxDone};
use railyard_dataplane::runtime::{Runtime, RuntimeOptions};
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::{Burst, MonotonicClock, Nanos, Pool};

/// A backend that breaks on its first poll, as a bug in a backend would.
struct Broken;

impl Port for Broken {
    fn rx_burst(&mut self, _pool: &Pool, _burst: &mut Burst, _now: Nanos) -> usize {
        panic!("broken backend");
    }
    fn tx_burst(&mut self, _burst: &mut Burst, _now: Nanos) -> TxDone {
        TxDone::default()
    }
    fn io_counters(&self) -> IoCounters {
        IoCounters::default()
    }
    fn describe(&self) -> String {
        "broken".to_string()
    }
}

fn start(broken: bool) -> Runtime {
    let model = SwitchModel {
        interfaces: vec![InterfaceModel::new(
            "Ethernet1/1",
            MacAddr([2, 0, 0, 0, 0, 1]),
        )],
        ..SwitchModel::default()
    };
    let port: Box<dyn Port> = if broken {
        Box::new(Broken)
    } else {
        Box::new(NullPort::new("idle", Vec::new()))
    };
    let (runtime, _) = Runtime::start(
        &model,
        vec![Some(port)],
        Pool::new(64),
        Arc::new(MonotonicClock::new()),
        &RuntimeOptions {
            workers: 1,
            ..RuntimeOptions::default()
        },
    );
    runtime
}

#[test]
fn a_worker_that_panicked_is_reported_and_a_healthy_one_is_not() {
    let broken = start(true);
    let deadline = Instant::now() + Duration::from_secs(10);
    while broken.dead_worker().is_none() {
        assert!(
            Instant::now() < deadline,
            "the dead worker was never reported"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(broken.dead_worker(), Some(0));
    broken.shutdown();

    let healthy = start(false);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(healthy.dead_worker(), None);
    healthy.shutdown();
}
