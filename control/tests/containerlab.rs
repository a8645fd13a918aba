//! `railyard lab export --format containerlab`.
//!
//! * Every shipped topology exports to a file that containerlab's published
//!   JSON schema accepts (read from `../shared/anchors/containerlab/` beside
//!   the repository), with consistent `ethN` names on both sides of every
//!   link and in the switch configurations.
//! * The exported `rail-spine` runs in podman containers as containerlab
//!   would run it: the images from `scripts/image.sh --binary` of the
//!   railyard this test run built (tagged `test-PID`, removed again), every node started
//!   with no network and the file's binds, one veth pair per listed link
//!   moved into the two containers' namespaces under the listed names
//!   (transmit checksum offload off, as containerlab does), then each
//!   node's `exec` commands run through `podman exec`, and each switch's
//!   health check. Hosts ping each other across the fabric (one rail, and
//!   rail → spine → rail), the cabling check passes on the switches'
//!   sockets, `railyard show` works through `podman exec`, and SIGTERM
//!   (`podman stop`) ends a switch cleanly. containerlab itself is not run:
//!   what it adds beyond this (management network, its own naming, VXLAN
//!   links between hosts, clabernetes) is not covered here.
//! * rail-spine with `routing bgp` exports with its switches on the FRR
//!   image (`scripts/image.sh --frr`) and runs the same way: every switch's
//!   railyard starts FRR in its container, every eBGP session reaches
//!   Established (`railyard show bgp summary` through `podman exec`), rail1
//!   learns rail2's subnets by BGP over both spines, vtysh in the image
//!   answers, and h1 reaches every host's rail-2 address across the spines.
//!
//! The podman tests run one at a time, each with images, containers and
//! veths of its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{ok, run, wait_for};

fn railyard() -> &'static str {
    env!("CARGO_BIN_EXE_railyard")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("workspace root")
}

/// Runs `railyard lab export` of the shipped `topology` into `out`.
fn export(topology: &str, out: &Path, extra: &[&str]) {
    export_file(
        &workspace().join(format!("scripts/topologies/{topology}.topo")),
        out,
        extra,
    );
}

/// Runs `railyard lab export` of the topology file `topo` into `out`.
fn export_file(topo: &Path, out: &Path, extra: &[&str]) {
    let topology = topo.display();
    let o = Command::new(railyard())
        .args(["lab", "export"])
        .arg(topo)
        .args(["--format", "containerlab", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .expect("run railyard");
    assert!(
        o.status.success(),
        "export {topology}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The exported file as JSON.
fn read_clab(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
}

/// containerlab's schema, beside the repository. Missing, the test fails
/// when `RAILYARD_REQUIRE_ANCHORS` is set (scripts/test.sh sets it) and is
/// skipped with a message otherwise.
fn schema() -> Option<Value> {
    let path = workspace().join("../shared/anchors/containerlab/clab.schema.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(serde_json::from_str(&text).expect("schema is JSON")),
        Err(e) => {
            assert!(
                std::env::var_os("RAILYARD_REQUIRE_ANCHORS").is_none(),
                "{}: {e}",
                path.display()
            );
            eprintln!(
                "SKIPPED: containerlab's schema is not at {} ({e})",
                path.display()
            );
            None
        }
    }
}

fn shipped_topologies() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace().join("scripts/topologies"))
        .expect("topologies")
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            if p.extension()? != "topo" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
}

#[test]
fn every_shipped_topology_exports_to_a_file_the_schema_accepts() {
    let Some(schema) = schema() else { return };
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let topologies = shipped_topologies();
    assert!(topologies.len() >= 5, "{topologies:?}");
    for name in topologies {
        let dir = tempfile::tempdir().expect("tempdir");
        export(&name, dir.path(), &[]);
        let file = dir.path().join(format!("{name}.clab.yml"));
        let doc = read_clab(&file);
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        // The schema does hold the file to something: a kind containerlab
        // does not know is refused.
        let mut bad = doc.clone();
        let first = bad["topology"]["nodes"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .cloned();
        bad["topology"]["nodes"][first.unwrap()]["kind"] = "railyard".into();
        assert!(!validator.is_valid(&bad), "{name}: an unknown kind passes");
        assert_eq!(doc["name"], name.as_str());
        // Each node's interfaces are eth1..ethN, each used once.
        let nodes = doc["topology"]["nodes"].as_object().expect("nodes");
        let mut used: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for l in doc["topology"]["links"].as_array().expect("links") {
            for ep in l["endpoints"].as_array().expect("endpoints") {
                let (node, ifname) = ep.as_str().unwrap().split_once(':').unwrap();
                assert!(nodes.contains_key(node), "{name}: link to unknown {node}");
                let n: u32 = ifname
                    .strip_prefix("eth")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{name}: {ep}"));
                used.entry(node.into()).or_default().push(n);
            }
        }
        for (node, mut ns) in used {
            ns.sort();
            let want: Vec<u32> = (1..=ns.len() as u32).collect();
            assert_eq!(ns, want, "{name}: {node}'s interfaces");
        }
        // Switches run the railyard image on their rendered configuration,
        // which binds exactly the ethN the links give them.
        for (node, v) in nodes {
            assert_eq!(v["kind"], "linux");
            if let Some(binds) = v["binds"].as_array() {
                assert_eq!(
                    v["image"],
                    format!("railyard:{}", env!("CARGO_PKG_VERSION"))
                );
                let bind = binds[0].as_str().unwrap();
                assert_eq!(bind, format!("{node}.conf:/etc/railyard/railyard.conf:ro"));
                let conf =
                    std::fs::read_to_string(dir.path().join(format!("{node}.conf"))).unwrap();
                let bound = conf.matches("bind af-packet eth").count();
                let links = doc["topology"]["links"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|l| l["endpoints"].as_array().unwrap().iter())
                    .filter(|e| e.as_str().unwrap().starts_with(&format!("{node}:")))
                    .count();
                assert_eq!(bound, links, "{name}: {node} binds\n{conf}");
                assert!(!conf.contains("bind af-packet e1-"), "{conf}");
            } else {
                assert_eq!(
                    v["image"],
                    format!("railyard-host:{}", env!("CARGO_PKG_VERSION"))
                );
                let exec = v["exec"].as_array().expect("host exec");
                assert!(exec[0].as_str().unwrap().starts_with("ip addr add "));
            }
        }
    }
}

#[test]
fn export_is_refused_for_a_name_containerlab_would_refuse_and_takes_the_images_given() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = workspace().join("scripts/topologies/single.topo");
    let bad = dir.path().join("my lab.topo");
    std::fs::copy(&src, &bad).unwrap();
    let o = Command::new(railyard())
        .args(["lab", "export"])
        .arg(&bad)
        .args(["--format", "containerlab", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("containerlab takes letters"), "{err}");

    export(
        "single",
        &dir.path().join("ok"),
        &[
            "--image",
            "reg.example/railyard:x",
            "--host-image",
            "alpine:3",
        ],
    );
    let doc = read_clab(&dir.path().join("ok/single.clab.yml"));
    let images: Vec<&str> = doc["topology"]["nodes"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v["image"].as_str().unwrap())
        .collect();
    assert!(images.contains(&"reg.example/railyard:x"), "{images:?}");
    assert!(images.contains(&"alpine:3"), "{images:?}");
}

/// The containers, temporary veths and images of one run; removed on
/// drop, also when the test fails.
struct Pods {
    prefix: String,
    /// A letter of this test's own in its veths' names (`rX…`), which
    /// are at most 15 characters.
    short: char,
    containers: Vec<String>,
    veths: Vec<String>,
    images: Vec<String>,
}

impl Pods {
    fn container(&self, node: &str) -> String {
        format!("{}-{node}", self.prefix)
    }
}

impl Drop for Pods {
    fn drop(&mut self) {
        for c in &self.containers {
            let _ = run(&["podman", "--runtime", "runc", "rm", "-f", "-t", "0", c]);
        }
        for v in &self.veths {
            let _ = run(&["ip", "link", "del", v]);
        }
        for i in &self.images {
            let _ = run(&["podman", "rmi", "-f", i]);
        }
    }
}

/// This process's soft limit on open files (`Max open files` in
/// /proc/self/limits), at most 65536.
fn open_file_limit() -> u64 {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
        })
        .unwrap_or(1024u64)
        .min(65536)
}

fn podman(args: &[&str]) -> Result<String, String> {
    let mut v = vec!["podman", "--runtime", "runc"];
    v.extend_from_slice(args);
    run(&v)
}

/// The podman tests one at a time: they share the machine's two cores,
/// and a switch starved of them misses its deadlines.
static PODMAN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The image tag of test `short` in this run: its own, so a user's
/// railyard:VERSION and the other test's images are left alone.
fn test_tag(short: char) -> String {
    format!("test-{short}{}", std::process::id())
}

/// Builds the images of the railyard this test run built (no other
/// build, `scripts/image.sh --binary`, with `--frr` when `frr`) under
/// [`test_tag`]. The returned [`Pods`] removes them again.
fn build_images(prefix: &str, short: char, frr: bool) -> Pods {
    let t0 = Instant::now();
    let tag = test_tag(short);
    let mut images = vec![format!("railyard:{tag}"), format!("railyard-host:{tag}")];
    let mut args = vec![
        workspace().join("scripts/image.sh").display().to_string(),
        "--binary".into(),
        railyard().into(),
        "--tag".into(),
        tag.clone(),
    ];
    if frr {
        images.push(format!("railyard-frr:{tag}"));
        args.push("--frr".into());
    }
    let pods = Pods {
        prefix: format!("{prefix}{}", std::process::id()),
        short,
        containers: Vec::new(),
        veths: Vec::new(),
        images,
    };
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let built = run(&argv).unwrap_or_else(|e| panic!("scripts/image.sh: {e}"));
    eprintln!("images ({:?}):\n{built}", t0.elapsed());
    for image in &pods.images {
        assert!(built.contains(image.as_str()), "{image}: {built}");
    }
    pods
}

/// The nodes of an exported topology, running.
struct Running {
    /// The file's nodes.
    nodes: serde_json::Map<String, Value>,
    /// Each switch's management socket, as seen from outside.
    sockets: BTreeMap<String, PathBuf>,
}

/// Starts the nodes of `DIR/FILE` as containerlab would, wires its links,
/// runs each node's `exec` list and waits for each switch's health check.
fn start(pods: &mut Pods, dir: &Path, file: &str) -> Running {
    let doc = read_clab(&dir.join(file));
    let nodes = doc["topology"]["nodes"].as_object().expect("nodes").clone();
    let links = doc["topology"]["links"].as_array().expect("links").clone();

    let mut interfaces: BTreeMap<String, usize> = BTreeMap::new();
    for l in &links {
        for ep in l["endpoints"].as_array().unwrap() {
            let node = ep.as_str().unwrap().split_once(':').unwrap().0;
            *interfaces.entry(node.to_string()).or_default() += 1;
        }
    }
    // Each node as containerlab starts a `kind: linux` node: privileged,
    // the file's binds (relative to the file), CLAB_INTFS; no network but
    // loopback, the links come later. Switches' /tmp (their socket) is a
    // directory here, so the cabling check can ask them.
    let mut sockets = BTreeMap::new();
    let nofile = open_file_limit();
    for (node, v) in &nodes {
        let name = pods.container(node);
        let mut args: Vec<String> = [
            "run",
            "-d",
            "--name",
            &name,
            "--hostname",
            node,
            "--network",
            "none",
            "--privileged",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.push(format!("--env=CLAB_INTFS={}", interfaces[node]));
        // podman raises the containers' open-file and process limits by
        // default, which root without CAP_SYS_RESOURCE (these machines)
        // may not: runc fails with "error setting rlimit". Within the
        // limits this process has, nothing needs raising.
        args.push(format!("--ulimit=nofile={nofile}:{nofile}"));
        args.push("--ulimit=nproc=4096:4096".into());
        for b in v["binds"].as_array().into_iter().flatten() {
            let (src, rest) = b.as_str().unwrap().split_once(':').unwrap();
            args.push(format!("--volume={}:{rest}", dir.join(src).display()));
        }
        if v.get("binds").is_some() {
            let run_dir = dir.join(format!("{node}.run"));
            std::fs::create_dir(&run_dir).unwrap();
            args.push(format!("--volume={}:/tmp", run_dir.display()));
            sockets.insert(node.clone(), run_dir.join("railyard.sock"));
        }
        args.push(v["image"].as_str().unwrap().to_string());
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        pods.containers.push(name.clone());
        podman(&argv).unwrap_or_else(|e| panic!("{e}"));
    }
    let pid_of = |node: &str| -> String {
        podman(&["inspect", "-f", "{{.State.Pid}}", &pods.container(node)])
            .unwrap_or_else(|e| panic!("{e}"))
            .trim()
            .to_string()
    };
    let pids: BTreeMap<String, String> = nodes.keys().map(|n| (n.clone(), pid_of(n))).collect();
    // The links, as containerlab makes veth links: a pair, each end moved
    // into its container under its listed name, MTU set, up, transmit
    // checksum offload off.
    for (i, l) in links.iter().enumerate() {
        let ends: Vec<(&str, &str)> = l["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap().split_once(':').unwrap())
            .collect();
        let mtu = l["mtu"].as_u64().unwrap().to_string();
        let tmp = [
            format!("r{}{}a{i}", pods.short, std::process::id()),
            format!("r{}{}b{i}", pods.short, std::process::id()),
        ];
        pods.veths.extend(tmp.iter().cloned());
        ok(&[
            "ip", "link", "add", &tmp[0], "type", "veth", "peer", "name", &tmp[1],
        ]);
        for ((node, ifname), t) in ends.iter().zip(&tmp) {
            let pid = &pids[*node];
            ok(&["ip", "link", "set", t, "netns", pid]);
            ok(&[
                "nsenter", "-t", pid, "-n", "ip", "link", "set", t, "name", ifname,
            ]);
            ok(&[
                "nsenter", "-t", pid, "-n", "ip", "link", "set", ifname, "mtu", &mtu, "up",
            ]);
            ok(&[
                "nsenter", "-t", pid, "-n", "ethtool", "-K", ifname, "tx", "off",
            ]);
        }
    }
    pods.veths.clear();
    // Each node's exec list, as written.
    for (node, v) in &nodes {
        for cmd in v["exec"].as_array().into_iter().flatten() {
            let mut argv = vec!["exec", &pods.container(node)]
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>();
            argv.extend(cmd.as_str().unwrap().split_whitespace().map(String::from));
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            podman(&argv).unwrap_or_else(|e| panic!("{node}: {e}"));
        }
    }
    // Each switch's health check, as written, until it passes.
    for (node, v) in &nodes {
        let Some(test) = v["healthcheck"]["test"].as_array() else {
            continue;
        };
        assert_eq!(test[0], "CMD");
        let c = pods.container(node);
        let mut argv = vec!["exec", c.as_str()];
        argv.extend(test[1..].iter().map(|s| s.as_str().unwrap()));
        let out = wait_for(&format!("{node} healthy"), Duration::from_secs(60), || {
            podman(&argv)
        });
        assert!(out.contains("Ethernet1/1"), "{node}: {out}");
    }
    Running { nodes, sockets }
}

/// Asserts that none of `pods`' images is left in podman's store once it
/// is dropped.
fn assert_removed(pods: Pods) {
    let images = pods.images.clone();
    drop(pods);
    for image in &images {
        assert!(
            podman(&["image", "exists", image]).is_err(),
            "{image} is left behind"
        );
    }
}

#[test]
#[ignore = "needs root and podman"]
fn exported_rail_spine_runs_in_podman_containers() {
    let _one = PODMAN.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let mut pods = build_images("ryclab", 's', false);
    let tag = test_tag('s');
    let (switch_image, host_image) = (format!("railyard:{tag}"), format!("railyard-host:{tag}"));
    let dir = tempfile::tempdir().expect("tempdir");
    export(
        "rail-spine",
        dir.path(),
        &["--image", &switch_image, "--host-image", &host_image],
    );
    let Running { sockets, .. } = start(&mut pods, dir.path(), "rail-spine.clab.yml");
    let t_healthy = t0.elapsed();

    // Host to host: one hop on rail 1, and from h1's rail-1 NIC to h4's
    // rail-2 NIC through a spine.
    let h1 = pods.container("h1");
    for (what, args) in [
        (
            "rail 1",
            vec!["exec", &h1, "ping", "-c", "3", "-W", "2", "10.1.4.2"],
        ),
        (
            "rail 1 → spine → rail 2",
            vec![
                "exec", &h1, "ping", "-c", "3", "-W", "2", "-I", "10.1.1.2", "10.2.4.2",
            ],
        ),
    ] {
        let out = wait_for(what, Duration::from_secs(20), || podman(&args));
        assert!(out.contains("3 packets received"), "{what}: {out}");
    }
    // The cabling check on the switches' sockets.
    let topology = railyard_control::lab::topology::parse_file(
        &workspace().join("scripts/topologies/rail-spine.topo"),
    )
    .expect("rail-spine parses");
    let state = railyard_control::lab::run::LabState {
        name: pods.prefix.clone(),
        topology_name: "rail-spine".into(),
        topology,
        dir: dir.path().to_path_buf(),
        namespaces: Vec::new(),
        switches: sockets
            .iter()
            .map(|(node, socket)| railyard_control::lab::run::SwitchState {
                name: node.clone(),
                namespace: String::new(),
                pid: 0,
                start_time: 0,
                socket: socket.clone(),
                config: dir.path().join(format!("{node}.conf")),
                log: PathBuf::new(),
            })
            .collect(),
        hosts: Vec::new(),
    };
    let rows = wait_for("cabling", Duration::from_secs(30), || {
        let rows = railyard_control::lab::report::cabling(&state);
        let bad: Vec<_> = rows.iter().filter(|r| r.is_bad()).collect();
        if bad.is_empty() {
            Ok(rows)
        } else {
            Err(format!("{bad:?}"))
        }
    });
    let ok_rows = rows
        .iter()
        .filter(|r| r.status == railyard_control::lab::report::CableStatus::Ok)
        .count();
    assert_eq!(ok_rows, 8, "both ends of the four uplinks: {rows:?}");

    // `railyard show` inside the container, on the default socket.
    let rail1 = pods.container("rail1");
    let lldp = podman(&["exec", &rail1, "railyard", "show", "lldp", "neighbors"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(lldp.contains("spine1") && lldp.contains("spine2"), "{lldp}");

    // SIGTERM: the switch stops at once, exits 0 and prints its counters.
    let t_stop = Instant::now();
    podman(&["stop", "-t", "20", &rail1]).unwrap_or_else(|e| panic!("{e}"));
    let stopped_in = t_stop.elapsed();
    let code = podman(&["inspect", "-f", "{{.State.ExitCode}}", &rail1]).unwrap();
    assert_eq!(code.trim(), "0", "rail1's exit status");
    assert!(stopped_in < Duration::from_secs(15), "{stopped_in:?}");
    let logs = podman(&["logs", &rail1]).unwrap();
    assert!(logs.contains("final counters:"), "{logs}");
    eprintln!(
        "rail-spine in podman ({tag}): healthy at {t_healthy:?}, stopped in {stopped_in:?}, \
         total {:?}",
        t0.elapsed()
    );
    // Nothing of the run is left in podman's store.
    assert_removed(pods);
}

/// `podman exec NODE railyard ARGS… --json`, parsed.
fn show_json(pods: &Pods, node: &str, args: &[&str]) -> Result<Value, String> {
    let c = pods.container(node);
    let mut argv = vec!["exec", c.as_str(), "railyard"];
    argv.extend_from_slice(args);
    argv.push("--json");
    let out = podman(&argv)?;
    serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))
}

#[test]
#[ignore = "needs root, podman and FRR"]
fn exported_bgp_rail_spine_runs_in_podman_containers_with_frr() {
    let _one = PODMAN.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let mut pods = build_images("rybgp", 'b', true);
    let tag = test_tag('b');
    let (frr_image, host_image) = (
        format!("railyard-frr:{tag}"),
        format!("railyard-host:{tag}"),
    );
    let t_images = t0.elapsed();
    // rail-spine with `routing bgp`, as the lab_bgp test runs it in
    // namespaces; the switches' templates are the built-in ones.
    let dir = tempfile::tempdir().expect("tempdir");
    let topo = dir.path().join("rail-spine.topo");
    let text = std::fs::read_to_string(workspace().join("scripts/topologies/rail-spine.topo"))
        .expect("rail-spine");
    std::fs::write(&topo, format!("{text}\nrouting bgp\n")).unwrap();
    let out = dir.path().join("clab");
    export_file(
        &topo,
        &out,
        &["--frr-image", &frr_image, "--host-image", &host_image],
    );
    // The switches route by BGP alone: no static route in their
    // configurations.
    for sw in ["rail1", "rail2", "spine1", "spine2"] {
        let conf = std::fs::read_to_string(out.join(format!("{sw}.conf"))).unwrap();
        assert!(conf.contains("router bgp "), "{sw}: {conf}");
        assert!(!conf.contains("\nip route "), "{sw}: {conf}");
    }
    let running = start(&mut pods, &out, "rail-spine.clab.yml");
    for sw in ["rail1", "rail2", "spine1", "spine2"] {
        assert_eq!(running.nodes[sw]["image"], frr_image.as_str());
    }
    let t_healthy = t0.elapsed();
    // Every session Established: each rail has one to each spine, each
    // spine one to each rail.
    for sw in ["rail1", "rail2", "spine1", "spine2"] {
        wait_for(&format!("{sw}'s sessions"), Duration::from_secs(90), || {
            let v = show_json(&pods, sw, &["show", "bgp", "summary"])?;
            let states: Vec<(String, String)> = v["families"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|f| f["peers"].as_array().into_iter().flatten())
                .map(|p| {
                    (
                        p["neighbor"].as_str().unwrap_or("?").to_string(),
                        p["state"].as_str().unwrap_or("?").to_string(),
                    )
                })
                .collect();
            if states.len() == 2 && states.iter().all(|(_, st)| st == "Established") {
                Ok(())
            } else {
                Err(format!("{states:?}"))
            }
        });
    }
    let t_established = t0.elapsed();
    // rail1 has learned rail2's host subnets by BGP, over both spines.
    wait_for(
        "rail1's BGP route to 10.2.4.0/24",
        Duration::from_secs(30),
        || {
            let v = show_json(&pods, "rail1", &["show", "ip", "route"])?;
            let r = v["routes"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| r["prefix"] == "10.2.4.0/24")
                .ok_or("no route")?;
            let hops = r["next_hops"].as_array().map_or(0, Vec::len);
            if r["kind"] == "bgp" && hops == 2 {
                Ok(())
            } else {
                Err(format!("{r}"))
            }
        },
    );
    // vtysh in the image, on the daemons railyard started.
    let rail1 = pods.container("rail1");
    let summary = podman(&[
        "exec",
        &rail1,
        "vtysh",
        "--vty_socket",
        "/tmp/railyard.sock.frr",
        "-c",
        "show bgp ipv4 unicast summary",
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(summary.contains("local AS number 65001"), "{summary}");
    let shown = podman(&["exec", &rail1, "railyard", "show", "bgp", "summary"])
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("podman exec rail1 railyard show bgp summary:\n{shown}");
    // Host to host across the fabric: h1's rail-1 NIC to each host's
    // rail-2 NIC, rail 1 → spine → rail 2, over the learned routes.
    let h1 = pods.container("h1");
    for h in 1..=4 {
        let to = format!("10.2.{h}.2");
        let args = [
            "exec", &h1, "ping", "-c", "3", "-W", "2", "-I", "10.1.1.2", &to,
        ];
        let out = wait_for(&format!("h1 → {to}"), Duration::from_secs(30), || {
            podman(&args)
        });
        assert!(out.contains("3 packets received"), "{to}: {out}");
    }
    let t_reached = t0.elapsed();
    // SIGTERM stops the switch and its FRR: exit status 0.
    podman(&["stop", "-t", "20", &rail1]).unwrap_or_else(|e| panic!("{e}"));
    let code = podman(&["inspect", "-f", "{{.State.ExitCode}}", &rail1]).unwrap();
    assert_eq!(code.trim(), "0", "rail1's exit status");
    eprintln!(
        "bgp rail-spine in podman ({tag}): images {t_images:?}, healthy at {t_healthy:?}, \
         sessions Established at {t_established:?}, every host reached at {t_reached:?}, \
         total {:?}",
        t0.elapsed()
    );
    assert_removed(pods);
}
