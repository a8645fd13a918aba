//! Unit tests: ranks, path MTU, fairness.

use std::path::Path;

use super::build::{path_mtu, rank_of, ranks};
use super::report::jain;
use crate::lab::topology::parse_str;

#[test]
fn the_path_mtu_is_the_largest_roce_mtu_that_fits() {
    assert_eq!(path_mtu(1500), 1024);
    assert_eq!(path_mtu(9216), 4096);
    assert_eq!(path_mtu(4200), 4096);
    assert_eq!(path_mtu(4150), 2048);
    assert_eq!(path_mtu(576), 512);
    assert_eq!(path_mtu(575), 256);
}

#[test]
fn ranks_are_rail_aligned_and_names_resolve() {
    let t = parse_str(
        "switch r1 role rail\nswitch r2 role rail\nhost a\nhost b\n\
         link a:eth1 r2:Ethernet1/1 subnet 10.2.1.0/24\n\
         link a:eth0 r1:Ethernet1/1 subnet 10.1.1.0/24\n\
         link b:eth0 r1:Ethernet1/2 subnet 10.1.2.0/24\n\
         link b:eth1 r2:Ethernet1/2 subnet 10.2.2.0/24\n",
        Path::new("t.topo"),
    )
    .expect("parses");
    let r = ranks(&t);
    let names: Vec<&str> = r.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["a.eth0", "a.eth1", "b.eth0", "b.eth1"]);
    assert_eq!((r[1].host, r[1].nic), (0, 1));
    assert_eq!(r[1].ip.to_string(), "10.2.1.2");
    assert_eq!(rank_of(&r, "b"), Ok(2));
    assert_eq!(rank_of(&r, "b.eth1"), Ok(3));
    let e = rank_of(&r, "c").expect_err("no host c");
    assert!(e.contains("hosts: a, b"), "{e}");
}

#[test]
fn jain_is_one_for_equal_shares_and_one_over_n_for_a_hog() {
    assert!((jain(&[5.0, 5.0, 5.0, 5.0]) - 1.0).abs() < 1e-12);
    assert!((jain(&[8.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    let mid = jain(&[2.0, 1.0]);
    assert!((mid - 0.9).abs() < 1e-12, "{mid}");
}
