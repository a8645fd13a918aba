//! Unit tests: the topology parser, route computation and rendering.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use super::render::render_all;
use super::routes::{host_commands, host_nics, switch_routes};
use super::topology::{parse_str, Ipv4Net, Topology};

fn topologies() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/topologies")
}

fn shipped(name: &str) -> Topology {
    let path = topologies().join(format!("{name}.topo"));
    let text = std::fs::read_to_string(&path).expect("read topology");
    parse_str(&text, &path).unwrap_or_else(|d| panic!("{}", crate::format_diagnostics(&d)))
}

fn net(s: &str) -> Ipv4Net {
    s.parse().expect("prefix")
}

fn ip(s: &str) -> Ipv4Addr {
    s.parse().expect("address")
}

/// The first error of parsing `text`, as (line, col, message, hint).
fn error(text: &str) -> (usize, usize, String, String) {
    let d = parse_str(text, Path::new("t.topo")).expect_err("should fail");
    let d = &d[0];
    (
        d.line,
        d.col,
        d.message.clone(),
        d.hint.clone().unwrap_or_default(),
    )
}

const GOOD: &str = "\
# a comment
switch rail1 role rail   # trailing comment
switch spine1 role spine
host h1
link h1:eth0 rail1:eth1/1 speed 100000 subnet 10.1.1.0/24
link rail1:e1/31 spine1:Ethernet1/1 subnet 10.255.0.0/31 mtu 9000 delay 2500ns
";

#[test]
fn a_good_file_parses() {
    let t = parse_str(GOOD, Path::new("/x/good.topo")).expect("parses");
    assert_eq!(t.name, "good");
    assert_eq!(t.switches.len(), 2);
    assert_eq!(t.switches[1].role, "spine");
    assert_eq!(t.hosts[0].name, "h1");
    let (l0, l1) = (&t.links[0], &t.links[1]);
    assert_eq!(l0.b.port, "Ethernet1/1", "switch ports are canonical");
    assert_eq!(l0.speed, Some(100_000));
    assert_eq!(l0.mtu, 1500);
    assert_eq!(l1.speed, None);
    assert_eq!(l1.mtu, 9000);
    assert_eq!(l0.delay_ns, 1_000, "a cable is 1 us unless it says");
    assert_eq!(l1.delay_ns, 2_500);
    // The switch gets .1 however the link is written; /31 uses both.
    assert_eq!(t.addresses(l0), Some((ip("10.1.1.2"), ip("10.1.1.1"))));
    assert_eq!(t.addresses(l1), Some((ip("10.255.0.0"), ip("10.255.0.1"))));
    assert_eq!(t.ifname(&l1.a), "e1-31");
    assert_eq!(t.ifname(&l0.a), "eth0");
}

#[test]
fn every_error_names_its_position() {
    let cases: &[(&str, usize, usize, &str, &str)] = &[
        ("swich s1 role rail\n", 1, 1, "unknown statement `swich`", "did you mean `switch`?"),
        ("switch s1\n", 1, 10, "needs a role", "templates/ROLE.conf"),
        ("switch s1 role\n", 1, 11, "`role` needs a value", ""),
        ("switch s1 rol rail\n", 1, 11, "unexpected `rol`", ""),
        ("switch 1s role rail\n", 1, 8, "not a valid node name", ""),
        ("switch s1 role rail\nhost s1\n", 2, 6, "already defined on line 1", ""),
        ("switch s1 role rail\nhost h1 x\n", 2, 9, "unexpected `x`", ""),
        (
            "switch s1 role rail\nhost h1\nlink h2:eth0 s1:e1/1 subnet 10.0.0.0/24\n",
            3, 6, "no switch or host named `h2`", "did you mean `h1`?",
        ),
        (
            "switch s1 role rail\nhost h1\nlink h1:eth0 s1:Port1 subnet 10.0.0.0/24\n",
            3, 17, "is not a switch interface", "Ethernet",
        ),
        (
            "switch s1 role rail\nhost h1\nlink h1 s1:e1/1 subnet 10.0.0.0/24\n",
            3, 6, "is not an endpoint", "NODE:PORT",
        ),
        (
            "switch s1 role rail\nhost h1\nlink h1:eth0 s1:e1/1 speed fast subnet 10.0.0.0/24\n",
            3, 28, "not a speed", "100000",
        ),
        (
            "switch s1 role rail\nhost h1\nlink h1:eth0 s1:e1/1 subnet 10.0.0.1/24\n",
            3, 29, "host bits set", "",
        ),
        (
            "switch s1 role rail\nhost h1\nlink h1:eth0 s1:e1/1 sped 1 subnet 10.0.0.0/24\n",
            3, 22, "unknown link option `sped`", "did you mean `speed`?",
        ),
        (
            "switch s1 role rail\nhost h1\nlink h1:eth0 s1:e1/1\n",
            3, 21, "needs a `subnet`", "",
        ),
        (
            "switch s1 role rail\nhost h1\nlink h1:eth0 s1:e1/1 subnet 10.0.0.0/31\n",
            3, 29, "/31 is too small", "/30",
        ),
        (
            "switch s1 role rail\nhost h1\nhost h2\nlink h1:eth0 s1:e1/1 subnet 10.0.0.0/24\nlink h2:eth0 s1:e1/1 subnet 10.0.1.0/24\n",
            5, 14, "s1:Ethernet1/1 is already cabled on line 4", "",
        ),
        (
            "switch s1 role rail\nhost h1\nhost h2\nlink h1:eth0 s1:e1/1 subnet 10.0.0.0/16\nlink h2:eth0 s1:e1/2 subnet 10.0.1.0/24\n",
            5, 29, "overlaps 10.0.0.0/16 of the link on line 4", "",
        ),
        (
            "switch s1 role rail\nhost h1\nhost h2\nlink h1:eth0 h2:eth0 subnet 10.0.0.0/24\nlink h1:eth1 s1:e1/1 subnet 10.0.1.0/24\nlink h2:eth1 s1:e1/2 subnet 10.0.2.0/24\n",
            4, 6, "between two hosts", "",
        ),
        ("switch s1 role rail\nhost h1\n", 2, 6, "host `h1` has no link", "link h1:eth0"),
    ];
    for (text, line, col, msg, hint) in cases {
        let (l, c, m, h) = error(text);
        assert!(
            (l, c) == (*line, *col) && m.contains(msg) && h.contains(hint),
            "{text:?}: got {l}:{c} {m:?} hint {h:?}, want {line}:{col} {msg:?} hint {hint:?}"
        );
    }
    // Rendered like configuration diagnostics: file:line:col and a caret.
    let d = parse_str("swich s1\n", Path::new("t.topo")).expect_err("fails");
    let text = crate::format_diagnostics(&d);
    assert!(
        text.starts_with("t.topo:1:1: error: unknown statement"),
        "{text}"
    );
    assert!(text.contains("^^^^^"), "{text}");
}

#[test]
fn rail_spine_routes_are_ecmp_over_both_spines() {
    let t = shipped("rail-spine");
    assert_eq!((t.switches.len(), t.hosts.len(), t.links.len()), (4, 4, 12));
    let rail1 = switch_routes(&t, "rail1");
    // Only the four rail-2 subnets: rail-1 subnets are connected.
    assert_eq!(rail1.len(), 4, "{rail1:?}");
    for h in 1..=4 {
        let r = rail1
            .iter()
            .find(|r| r.prefix == net(&format!("10.2.{h}.0/24")))
            .expect("route to a rail-2 host");
        assert_eq!(
            r.next_hops,
            vec![ip("10.255.1.1"), ip("10.255.1.3")],
            "spine1 and spine2"
        );
    }
    let spine2 = switch_routes(&t, "spine2");
    assert_eq!(spine2.len(), 8);
    for r in &spine2 {
        let want = if r.prefix.addr.octets()[1] == 1 {
            "10.255.1.2"
        } else {
            "10.255.2.2"
        };
        assert_eq!(r.next_hops, vec![ip(want)], "{}", r.prefix);
    }
    let nics = host_nics(&t, "h3");
    assert_eq!(nics.len(), 2);
    assert_eq!(
        (nics[0].ifname.as_str(), nics[0].address),
        ("eth0", ip("10.1.3.2"))
    );
    assert_eq!(
        (nics[1].switch.as_str(), nics[1].gateway),
        ("rail2", ip("10.2.3.1"))
    );
    assert_eq!(nics[1].rail_routes.len(), 3, "the other rail-2 hosts");
    let cmds: Vec<String> = host_commands(&nics).iter().map(|c| c.join(" ")).collect();
    assert!(
        cmds.contains(&"rule add from 10.2.3.2 lookup 101".to_string()),
        "{cmds:?}"
    );
    assert!(cmds.contains(&"route add 10.2.1.0/24 via 10.2.3.1 dev eth1".to_string()));
    assert_eq!(
        cmds.last().map(String::as_str),
        Some("route add default via 10.1.3.1 dev eth0")
    );
}

#[test]
fn longer_paths_use_only_shortest_next_hops() {
    // A chain r1 - s1 - r2 plus a detour r1 - x - y - r2: only s1 is used.
    let text = "switch r1 role rail\nswitch r2 role rail\nswitch s1 role spine\nswitch x role spine\nswitch y role spine\nhost h\n\
link h:eth0 r2:e1/1 subnet 10.9.0.0/24\n\
link r1:e1/1 s1:e1/1 subnet 10.255.0.0/31\nlink s1:e1/2 r2:e1/2 subnet 10.255.0.2/31\n\
link r1:e1/2 x:e1/1 subnet 10.255.0.4/31\nlink x:e1/2 y:e1/1 subnet 10.255.0.6/31\nlink y:e1/2 r2:e1/3 subnet 10.255.0.8/31\n";
    let t = parse_str(text, Path::new("chain.topo")).expect("parses");
    let r1 = switch_routes(&t, "r1");
    assert_eq!(r1.len(), 1);
    assert_eq!(r1[0].next_hops, vec![ip("10.255.0.1")]);
    assert_eq!(
        switch_routes(&t, "x")[0].next_hops,
        vec![ip("10.255.0.7")],
        "x goes on via y"
    );
}

#[test]
fn shipped_topologies_render_configs_that_compile() {
    for name in ["single", "rail-spine"] {
        let t = shipped(name);
        let rendered = render_all(&t).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(rendered.len(), t.switches.len());
        for r in &rendered {
            let parsed = railyard_config::parse_str(&r.config, &r.switch, &Default::default())
                .unwrap_or_else(|d| panic!("{}", crate::format_diagnostics(&d)));
            crate::compile::compile(&parsed.config).expect("compiles");
            assert!(r.config.contains(&format!("hostname {}\n", r.switch)));
            assert!(r.config.contains("feature lldp") && r.config.contains("pause pfc-cos 3"));
            assert!(!r.config.contains("{{"), "{}", r.config);
        }
        if name == "rail-spine" {
            let rail1 = &rendered[0].config;
            assert!(rail1.contains("interface Ethernet1/31\n  description to spine1 Ethernet1/1"));
            assert!(rail1.contains("  bind af-packet e1-31\n"));
            assert!(rail1
                .contains("ip route 10.2.4.0/24 10.255.1.1\nip route 10.2.4.0/24 10.255.1.3\n"));
            assert!(rail1.contains("!   dlb-interface Ethernet1/31, Ethernet1/32"));
        }
    }
}

#[test]
fn the_dlb_variant_renders_and_templates_report_bad_placeholders() {
    let mut t = shipped("rail-spine");
    t.switches[0].role = "rail-dlb".into();
    let rendered = render_all(&t).expect("renders");
    let parsed = railyard_config::parse_str(&rendered[0].config, "rail1", &Default::default())
        .expect("parses");
    assert!(parsed.config.dlb.is_some());

    let bad = "hostname {{hostname}}\n{{#interface}}\ninterface {{nmae}}\n{{/interface}}\n";
    let d = super::render::render_switch(&t, "rail1", bad, "bad.conf").expect_err("unknown");
    assert_eq!((d[0].line, d[0].col), (3, 11));
    assert!(
        d[0].message.contains("unknown placeholder `{{nmae}}`"),
        "{}",
        d[0].message
    );
    let open = "{{#interface}}\ninterface {{name}}\n";
    let d = super::render::render_switch(&t, "rail1", open, "open.conf").expect_err("unclosed");
    assert!(d[0].message.contains("without `{{/interface}}`"));
}

/// Writes a state file for a lab `name` of topology `topo` under `root`, as
/// `up` records it (no namespaces or processes behind it).
fn fake_lab(root: &Path, name: &str, topo: &str) {
    use super::run::LabState;
    let topology = parse_str(
        "switch s1 role rail\n",
        &Path::new("/x").join(format!("{topo}.topo")),
    )
    .expect("parses");
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let state = LabState {
        name: name.into(),
        topology_name: topology.name.clone(),
        topology,
        dir: dir.clone(),
        namespaces: Vec::new(),
        switches: Vec::new(),
        hosts: Vec::new(),
    };
    std::fs::write(
        dir.join("state.json"),
        serde_json::to_string(&state).expect("json"),
    )
    .expect("write state");
}

#[test]
fn down_takes_a_lab_name_or_a_topology_with_one_lab() {
    use super::run::{down_target, DownTarget};
    let root = tempfile::tempdir().expect("tempdir");
    let root = root.path();
    assert_eq!(down_target(root, "rail-spine"), DownTarget::Nothing);
    fake_lab(root, "rail-spine-3f2a", "rail-spine");
    fake_lab(root, "single-0001", "single");
    fake_lab(root, "single-0002", "single");
    // A lab name is that lab.
    assert_eq!(
        down_target(root, "single-0002"),
        DownTarget::Lab("single-0002".into())
    );
    // A topology (by name or by file) with one lab is that lab.
    let only = DownTarget::OnlyLabOf {
        topology: "rail-spine".into(),
        lab: "rail-spine-3f2a".into(),
    };
    assert_eq!(down_target(root, "rail-spine"), only);
    assert_eq!(
        down_target(root, "scripts/topologies/rail-spine.topo"),
        only
    );
    // With several, the user chooses.
    assert_eq!(
        down_target(root, "single"),
        DownTarget::Ambiguous {
            topology: "single".into(),
            labs: vec!["single-0001".into(), "single-0002".into()],
        }
    );
    // Anything else is nothing to do.
    assert_eq!(down_target(root, "spine"), DownTarget::Nothing);
    assert_eq!(down_target(root, "rail-spine-0000"), DownTarget::Nothing);
}

#[test]
fn a_topology_elsewhere_uses_the_built_in_roles_and_a_local_template_wins() {
    use super::render::{role_sources, TemplateSource};
    let dir = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(topologies().join("rail-spine.topo")).expect("read");
    let path = dir.path().join("mine.topo");
    let t = parse_str(&text, &path).expect("parses");
    // No templates/ beside it: the shipped roles, built in, give the same
    // configurations as the shipped topology.
    assert_eq!(
        role_sources(&t),
        vec![
            ("rail".to_string(), Ok(TemplateSource::Builtin("rail"))),
            ("spine".to_string(), Ok(TemplateSource::Builtin("spine"))),
        ]
    );
    let mine = render_all(&t).expect("renders from the built-in templates");
    let shipped_configs = render_all(&shipped("rail-spine")).expect("renders");
    for (a, b) in mine.iter().zip(&shipped_configs) {
        assert_eq!(a.config, b.config, "{}", a.switch);
        let role = &t
            .switches
            .iter()
            .find(|s| s.name == a.switch)
            .expect("switch")
            .role;
        assert_eq!(
            a.template.to_string(),
            format!("built-in templates/{role}.conf")
        );
    }
    assert!(matches!(
        shipped_configs[0].template,
        TemplateSource::File(ref p) if p.ends_with("templates/rail.conf")
    ));

    // A template beside the topology overrides the built-in role.
    std::fs::create_dir(dir.path().join("templates")).expect("mkdir");
    let local = dir.path().join("templates/rail.conf");
    let own = std::fs::read_to_string(topologies().join("templates/rail.conf"))
        .expect("read")
        .replace("lldp timer 5", "lldp timer 7");
    std::fs::write(&local, own).expect("write");
    assert_eq!(role_sources(&t)[0].1, Ok(TemplateSource::File(local)));
    let rendered = render_all(&t).expect("renders");
    assert!(rendered[0].config.contains("lldp timer 7"));
    assert!(
        rendered[2].config.contains("lldp timer 5"),
        "spine still built in"
    );

    // A role that is neither: the error names the file looked for and the
    // built-in roles.
    let mut odd = t.clone();
    odd.switches[3].role = "leaf".into();
    let e = render_all(&odd).expect_err("no such role");
    assert!(
        e.contains("switch spine2 has role `leaf`")
            && e.contains("templates/leaf.conf does not exist")
            && e.contains("built-in roles: rail, rail-dlb, rail-lossless, spine"),
        "{e}"
    );
    assert!(role_sources(&odd)[2].1.is_err());
}

#[test]
fn lab_lists_and_ports_sort_naturally() {
    let root = tempfile::tempdir().expect("tempdir");
    for name in ["lab-10", "lab-9", "lab-1"] {
        fake_lab(root.path(), name, "single");
    }
    let names: Vec<String> = super::run::list(root.path())
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["lab-1", "lab-9", "lab-10"]);
    match super::run::down_target(root.path(), "single") {
        super::run::DownTarget::Ambiguous { labs, .. } => {
            assert_eq!(labs, ["lab-1", "lab-9", "lab-10"])
        }
        other => panic!("{other:?}"),
    }

    // Ports, uplinks and interface sections in NX-OS order, however the
    // links are written.
    let t = parse_str(
        "switch r role rail\nswitch s role spine\n\
         link r:e1/32 s:e1/1 subnet 10.255.0.0/31\n\
         link r:e1/4 s:e1/2 subnet 10.255.0.2/31\n\
         link r:e1/10 s:e1/3 subnet 10.255.0.4/31\n",
        Path::new("order.topo"),
    )
    .expect("parses");
    let tpl = "! {{uplinks}}\n{{#interface}}\n{{name}}\n{{/interface}}\n";
    let out = super::render::render_switch(&t, "r", tpl, "t.conf").expect("renders");
    assert_eq!(
        out,
        "! Ethernet1/4, Ethernet1/10, Ethernet1/32\nEthernet1/4\nEthernet1/10\nEthernet1/32\n"
    );
}

/// The shipped templates write no `pause` line, so the default thresholds
/// are in force, and `check` says they break xON < WRED min < WRED max <
/// xOFF.
#[test]
fn the_shipped_templates_draw_the_threshold_order_warning() {
    for r in render_all(&shipped("rail-spine")).expect("renders") {
        let parsed = railyard_config::parse_str(&r.config, "t.conf", &Default::default())
            .unwrap_or_else(|d| panic!("{}", crate::format_diagnostics(&d)));
        let c = crate::compile::compile(&parsed.config).expect("compiles");
        assert!(
            c.warnings.iter().any(|w| w.starts_with("qos-group 3 on ")
                && w.contains("break xON < WRED min < WRED max < xOFF")),
            "{}: {:?}",
            r.switch,
            c.warnings
        );
    }
}

#[test]
fn a_bad_delay_is_named_with_its_unit() {
    let (line, col, message, hint) = error(
        "switch s role rail\nhost h\nlink h:eth0 s:Ethernet1/1 subnet 10.0.0.0/24 delay 5parsecs\n",
    );
    assert_eq!((line, col), (3, 52));
    assert!(
        message.contains("`5parsecs` is not a cable delay"),
        "{message}"
    );
    assert!(hint.contains("1us"), "{hint}");
}
