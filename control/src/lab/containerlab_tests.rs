//! Unit tests of the containerlab export: interface numbering, the switch
//! configurations and host commands against `lab up`'s, YAML scalars.

use std::path::Path;

use super::super::render::render_all;
use super::super::routes::{host_commands, host_nics};
use super::super::topology::{parse_str, Topology};
use super::{default_image, export_files, interface_map, scalar, ExportOptions};

fn shipped(name: &str) -> Topology {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/topologies")
        .join(format!("{name}.topo"));
    let text = std::fs::read_to_string(&path).expect("read topology");
    parse_str(&text, &path).unwrap_or_else(|d| panic!("{}", crate::format_diagnostics(&d)))
}

#[test]
fn ports_are_numbered_from_eth1_in_natural_order() {
    let text = "\
switch r role rail
host a
host b
link b:eth1 r:Ethernet1/10 subnet 10.0.2.0/24
link a:eth0 r:Ethernet1/2 subnet 10.0.1.0/24
link b:eth0 r:Ethernet1/9 subnet 10.0.3.0/24
";
    let t = parse_str(text, Path::new("n.topo")).expect("parses");
    let m = interface_map(&t);
    let get = |n: &str, p: &str| m[&(n.to_string(), p.to_string())].as_str();
    assert_eq!(get("r", "Ethernet1/2"), "eth1");
    assert_eq!(get("r", "Ethernet1/9"), "eth2");
    assert_eq!(get("r", "Ethernet1/10"), "eth3");
    assert_eq!(get("a", "eth0"), "eth1");
    assert_eq!(get("b", "eth0"), "eth1");
    assert_eq!(get("b", "eth1"), "eth2");
    assert_eq!(m.len(), 6);
}

/// An exported switch configuration is `lab render`'s with only the bind
/// lines changed, each to the `ethN` its port got.
#[test]
fn switch_configurations_differ_from_lab_ups_only_in_their_binds() {
    let t = shipped("rail-spine");
    let files = export_files(&t, &ExportOptions::default()).expect("exports");
    let map = interface_map(&t);
    for r in render_all(&t).expect("renders") {
        let exported = &files
            .iter()
            .find(|(name, _)| *name == format!("{}.conf", r.switch))
            .expect("exported")
            .1;
        let mut port = String::new();
        let want: Vec<String> = r
            .config
            .lines()
            .map(|l| {
                if let Some(p) = l.strip_prefix("interface ") {
                    port = p.to_string();
                }
                if l.trim_start().starts_with("bind af-packet ") {
                    format!(
                        "  bind af-packet {}",
                        map[&(r.switch.clone(), port.clone())]
                    )
                } else {
                    l.to_string()
                }
            })
            .collect();
        assert_eq!(exported.lines().collect::<Vec<_>>(), want, "{}", r.switch);
        assert!(!exported.contains("bind af-packet e1-"), "{exported}");
    }
}

/// A host's `exec` list is `lab up`'s `ip` commands with its NICs renamed
/// (`eth0` → `eth1`, `eth1` → `eth2`).
#[test]
fn host_exec_lists_are_lab_ups_commands_on_the_container_interfaces() {
    let t = shipped("rail-spine");
    let files = export_files(&t, &ExportOptions::default()).expect("exports");
    // The file's `exec` lines, read back without a YAML parser: each is a
    // plain `- ip …` item under the host.
    let text = &files[0].1;
    let h1 = &text[text.find("    h1:\n").expect("h1")..];
    let h1 = &h1[..h1.find("    h2:\n").expect("h2")];
    let got: Vec<&str> = h1
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .collect();
    let want: Vec<String> = host_commands(&host_nics(&t, "h1"))
        .into_iter()
        .map(|c| {
            let c = c.join(" ");
            let c = c
                .replace("dev eth1", "dev ETH2")
                .replace("dev eth0", "dev eth1");
            format!("ip {}", c.replace("ETH2", "eth2"))
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(got[0], "ip addr add 10.1.1.2/24 dev eth1");
}

#[test]
fn bgp_topologies_put_switches_on_the_frr_image_with_router_bgp() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/topologies/rail-spine.topo");
    let text = format!(
        "{}\nrouting bgp\n",
        std::fs::read_to_string(&path).expect("read")
    );
    let t = parse_str(&text, &path).expect("parses");
    let opts = ExportOptions {
        frr_image: "reg.example/railyard-frr:x".into(),
        ..ExportOptions::default()
    };
    let files = export_files(&t, &opts).expect("bgp exports");
    let clab = &files[0].1;
    assert_eq!(
        clab.matches("image: reg.example/railyard-frr:x\n").count(),
        4,
        "every switch, no host:\n{clab}"
    );
    assert!(
        !clab.contains(&format!("image: {}\n", default_image())),
        "{clab}"
    );
    assert_eq!(clab.matches("image: railyard-host:").count(), 4, "{clab}");
    let rail1 = &files
        .iter()
        .find(|(n, _)| n == "rail1.conf")
        .expect("rail1")
        .1;
    assert!(rail1.contains("router bgp 65001\n"), "{rail1}");
    assert!(rail1.contains("bind af-packet eth"), "{rail1}");
    // Static routing keeps the plain switch image.
    let plain = export_files(&shipped("rail-spine"), &opts).expect("static");
    assert!(!plain[0].1.contains("railyard-frr"), "{}", plain[0].1);
}

#[test]
fn bad_names_are_refused() {
    let mut t = shipped("single");
    t.name = "-x".into();
    let e = export_files(&t, &ExportOptions::default()).expect_err("name");
    assert!(e.contains("containerlab takes"), "{e}");
}

#[test]
fn scalars_are_quoted_when_yaml_would_read_them_otherwise() {
    for plain in [
        "linux",
        "railyard:0.1.0",
        "rail1.conf:/etc/railyard/railyard.conf:ro",
        "ip addr add 10.1.1.2/24 dev eth1",
    ] {
        assert_eq!(scalar(plain), plain);
    }
    for quoted in [
        "", "true", "No", "null", "1.5", "10.0.0.1", "a: b", "x:", "a #b", "-x", ".inf",
    ] {
        let s = scalar(quoted);
        assert_eq!(s, serde_json::to_string(quoted).unwrap(), "{quoted}");
    }
}
