//! Unit tests: resolving `--capture`, merging parts.

use super::*;

fn topo() -> Topology {
    crate::lab::topology::parse_str(
        "switch leaf1 role rail\nswitch spine1 role spine\nhost h1\n\
         link h1:eth0 leaf1:Ethernet1/1 speed 100000 subnet 10.1.1.0/24\n\
         link leaf1:Ethernet1/31 spine1:Ethernet1/1 speed 100000 subnet 10.0.0.0/31\n",
        std::path::Path::new("t.topo"),
    )
    .unwrap_or_else(|e| panic!("{e:?}"))
}

#[test]
fn a_capture_names_a_cabled_switch_port_in_any_interface_spelling() {
    let t = topo();
    let c = resolve(&t, &["leaf1:e1/31".into(), "leaf1:Ethernet1/31".into()]).unwrap();
    assert_eq!(
        c,
        [CaptureSpec {
            switch: "leaf1".into(),
            port: "Ethernet1/31".into(),
            peer: "spine1:Ethernet1/1".into(),
        }],
        "asked twice, captured once"
    );
    assert_eq!(c[0].if_name(), "leaf1:Ethernet1/31");
}

#[test]
fn a_wrong_capture_says_what_is_there() {
    let t = topo();
    let err = |s: &str| resolve(&t, &[s.to_string()]).unwrap_err();
    let e = err("lef1:Ethernet1/1");
    assert!(
        e.contains("no switch \"lef1\"") && e.contains("did you mean `leaf1`"),
        "{e}"
    );
    let e = err("leaf1:Ethernet1/32");
    assert!(
        e.contains("no cabled interface Ethernet1/32") && e.contains("did you mean `Ethernet1/31`"),
        "{e}"
    );
    let e = err("h1:eth0");
    assert!(e.contains("--capture leaf1:Ethernet1/1"), "{e}");
    let e = err("leaf1");
    assert!(e.contains("SWITCH:INTERFACE"), "{e}");
}

#[test]
fn parts_merge_in_time_order_and_the_earlier_interface_first_on_a_tie() {
    let dir = std::env::temp_dir().join(format!("railyard-capture-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut parts = Vec::new();
    for (i, times) in [[10u64, 30, 30], [5, 30, 40]].iter().enumerate() {
        let mut b = BlockWriter::new();
        for &t in times {
            b.packet(i as u32, t, &[i as u8; 60], SNAPLEN, FLAGS_INBOUND, None);
        }
        let p = dir.join(format!("p{i}"));
        std::fs::write(&p, b.bytes()).unwrap();
        parts.push(p);
    }
    let mut out = Vec::new();
    merge(&parts, &mut out).unwrap();
    let mut r = &out[..];
    let mut buf = Vec::new();
    let mut seen = Vec::new();
    while let Some(ts) = next_block(&mut r, &mut buf).unwrap() {
        seen.push((ts, buf[8]));
    }
    assert_eq!(seen, [(5, 1), (10, 0), (30, 0), (30, 0), (30, 1), (40, 1)]);
    std::fs::remove_dir_all(&dir).unwrap();
}
