use super::*;
use railyard_config::{parse_str, ParseOptions};

const CONFIG: &str = "\
interface Ethernet1/1-4
  no switchport
monitor session 1
  description lab span
  source interface Ethernet1/1 both
  source interface Ethernet1/2 rx
  destination interface Ethernet1/4
  no shut
monitor session 2
  source interface Ethernet1/3 tx
  destination file /tmp/s2.pcapng
  no shut
monitor session 3
  source interface Ethernet1/3 tx
  destination interface Ethernet1/4
";

fn load() -> (Vec<MonitorSession>, SwitchModel) {
    let config = parse_str(CONFIG, "lab.conf", &ParseOptions::default())
        .unwrap()
        .config;
    let model = crate::compile::compile(&config).unwrap().model;
    (config.monitor_sessions, model)
}

#[test]
fn enabled_sessions_become_port_numbered_specs_and_shut_ones_do_not() {
    let (sessions, model) = load();
    let specs = specs(&sessions, &model);
    let port = |n: &str| model.interfaces.iter().position(|i| i.name == n).unwrap() as PortId;
    assert_eq!(
        specs,
        [
            (
                SessionSpec {
                    id: 1,
                    rx: vec![port("Ethernet1/1"), port("Ethernet1/2")],
                    tx: vec![port("Ethernet1/1")],
                    port: Some(port("Ethernet1/4")),
                },
                None
            ),
            (
                SessionSpec {
                    id: 2,
                    rx: vec![],
                    tx: vec![port("Ethernet1/3")],
                    port: None,
                },
                Some(PathBuf::from("/tmp/s2.pcapng"))
            ),
        ]
    );
    assert_eq!(
        down_reason(&sessions[2], &model),
        Some("Session admin shut")
    );
    assert_eq!(
        file_interfaces(&specs[0].0),
        [port("Ethernet1/1"), port("Ethernet1/2")]
    );
}

#[test]
fn show_output_reads_like_nx_os_with_counters() {
    let (sessions, model) = load();
    let reply = MonitorReply {
        sessions: sessions
            .iter()
            .map(|s| SessionReply {
                id: s.id,
                description: s.description.clone(),
                state: if down_reason(s, &model).is_none() {
                    "up"
                } else {
                    "down"
                }
                .into(),
                reason: down_reason(s, &model).map(str::to_owned),
                source_rx: vec!["Ethernet1/1".into(), "Ethernet1/2".into()],
                source_tx: vec!["Ethernet1/1".into()],
                destination: s.destination.as_ref().map(ToString::to_string),
                counters: SpanCounters {
                    mirrored: 10,
                    queue_full: 2,
                    ..SpanCounters::default()
                },
                written: (s.id == 2).then_some(10),
                write_errors: (s.id == 2).then_some(0),
            })
            .collect(),
    };
    let one = render(&reply, Some(1));
    assert_eq!(
        one,
        "   session 1
---------------
description       : lab span
type              : local
state             : up
source intf       :
    rx            : Eth1/1 Eth1/2
    tx            : Eth1/1
    both          : Eth1/1
destination ports : Eth1/4
frames mirrored   : 10
frames dropped    : 2 (queue_full 2, no_buffer 0, destination_down 0)

"
    );
    let all = render(&reply, None);
    assert!(
        all.contains("destination file  : /tmp/s2.pcapng\n"),
        "{all}"
    );
    assert!(all.contains("frames written    : 10\n"), "{all}");
    assert!(
        all.contains("state             : down (Session admin shut)\n"),
        "{all}"
    );
    assert_eq!(render(&reply, Some(7)), "Session 7 not configured\n");
}
