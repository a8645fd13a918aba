//! `railyard run` with `bind dpdk` (a build with `--features dpdk`): two
//! hosts ping each other through DPDK's `net_af_packet` on veth, with the
//! EAL arguments taken from the configuration's `dpdk eal-args`.

#![cfg(feature = "dpdk")]

mod common;

use common::{ok, Lab, Switch};

fn ping(ns: &str, dst: &str) {
    ok(&[
        "ip", "netns", "exec", ns, "ping", "-c", "3", "-i", "0.2", "-W", "2", dst,
    ]);
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn hosts_ping_each_other_through_railyard_on_dpdk_af_packet() {
    let mut lab = Lab::new();
    let (h1, h2, sw) = (lab.ns("h1"), lab.ns("h2"), lab.ns("sw"));
    lab.veth(&h1, "eth0", &sw, "p1");
    lab.veth(&h2, "eth0", &sw, "p2");
    lab.host(
        &h1,
        "eth0",
        "10.92.1.2/24",
        "10.92.1.1",
        "fd00:92:1::2/64",
        "fd00:92:1::1",
    );
    lab.host(
        &h2,
        "eth0",
        "10.92.2.2/24",
        "10.92.2.1",
        "fd00:92:2::2/64",
        "fd00:92:2::1",
    );
    let conf = lab.path("sw.conf");
    // One port from the EAL arguments (--vdev), one hot-plugged by `bind`.
    std::fs::write(
        &conf,
        "hostname dpdksw
dpdk eal-args --no-huge --no-shconf -m 512 --iova-mode=va --no-pci --vdev net_af_packet0,iface=p1
interface Ethernet1/1
  no switchport
  ip address 10.92.1.1/24
  bind dpdk net_af_packet0
interface Ethernet1/2
  no switchport
  ip address 10.92.2.1/24
  bind dpdk net_af_packet1,iface=p2
",
    )
    .expect("write config");
    let switch = Switch::start(&sw, &conf, &lab.path("sw.sock"), &lab.path("sw.log"), &[]);
    ping(&h1, "10.92.1.1");
    ping(&h1, "10.92.2.2");
    ping(&h2, "10.92.1.2");
    let stats = switch.show().expect("show");
    let (e1, e2) = (
        &stats["interfaces"]["Ethernet1/1"],
        &stats["interfaces"]["Ethernet1/2"],
    );
    assert!(e2["tx_packets"].as_u64().unwrap_or(0) >= 6, "{e2}");
    assert_eq!(e1["rx_malformed"], 0);
    assert_eq!(e1["link_up"], true, "{e1}");
    assert!(
        e1["backend"]
            .as_str()
            .unwrap_or("")
            .starts_with("dpdk net_af_packet0"),
        "{e1}"
    );
    let running = switch
        .cli(&["show", "running-config"])
        .expect("show running-config");
    assert!(running.contains("dpdk eal-args --no-huge"), "{running}");
    let summary = switch.stop();
    assert!(summary.contains("Ethernet1/1"), "{summary}");
}
