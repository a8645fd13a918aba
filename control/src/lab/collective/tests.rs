//! Unit tests: ranks, settings, the fabric summary and the job file.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::Path;

use clap::Parser;
use railyard_dataplane::stats::{InterfaceStats, QueueStats, SwitchStats};
use railyard_roce::dcqcn::DcqcnParams;
use railyard_roce::nic::{CongestionControl, NicStats};
use railyard_roce::report::{FlowResult, JobResult};
use railyard_roce::MacAddr;

use super::super::cli::{LabArgs, LabCommand};
use super::super::topology::{parse_str, Topology};
use super::*;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    lab: LabArgs,
}

fn lab(args: &[&str]) -> Result<LabCommand, String> {
    Cli::try_parse_from(std::iter::once("lab").chain(args.iter().copied()))
        .map(|c| c.lab.command)
        .map_err(|e| e.to_string())
}

#[test]
fn collective_arguments_have_the_documented_defaults() {
    let LabCommand::Collective {
        name,
        op,
        size,
        live,
    } = lab(&["collective", "rs-1", "allreduce", "16M"]).unwrap()
    else {
        panic!("not a collective")
    };
    assert_eq!(
        (name.as_str(), op.as_str(), size.as_str()),
        ("rs-1", "allreduce", "16M")
    );
    assert_eq!(live.cc, Cc::Dcqcn);
    assert_eq!(live.nic_mbps, 2000);
    assert_eq!(live.timeout, 60);
    assert_eq!(live.channels, 2);
    assert_eq!(parse_size(&live.chunk), Ok(128 * 1024));
    assert!(!live.json && live.dcqcn_params.is_none());
    assert_eq!(collective_spec(&op, &size), "allreduce:16M");
    assert_eq!(collective_spec("AllGather", "1M"), "allgather:1M");
}

#[test]
fn collective_and_incast_options_parse_and_bad_ones_fail() {
    let LabCommand::Collective { live, .. } = lab(&[
        "collective",
        "x",
        "alltoall",
        "1M",
        "--cc",
        "none",
        "--nic-mbps",
        "500",
        "--json",
        "--timeout",
        "20",
        "--dcqcn-params",
        "p.txt",
    ])
    .unwrap() else {
        panic!("not a collective")
    };
    assert_eq!(live.cc, Cc::None);
    assert_eq!((live.nic_mbps, live.timeout, live.json), (500, 20, true));
    assert_eq!(live.dcqcn_params.as_deref(), Some(Path::new("p.txt")));
    assert!(lab(&["collective", "x", "allreduce", "1M", "--cc", "hpcc"]).is_err());
    assert!(lab(&["collective", "x", "allreduce"]).is_err());

    let LabCommand::Incast {
        size, endpoints, ..
    } = lab(&["incast", "x", "4M", "h1", "h2.eth1", "h3"]).unwrap()
    else {
        panic!("not an incast")
    };
    assert_eq!(
        incast_spec(&size, &endpoints).unwrap(),
        "incast:4M:h1,h2.eth1:h3"
    );
    // A receiver alone is no incast.
    assert!(lab(&["incast", "x", "4M", "h1"]).is_err());
    assert!(incast_spec("4M", &["h1".to_string()]).is_err());
    assert!(incast_spec("4M", &[]).is_err());
}

#[test]
fn sizes_parse_with_binary_suffixes() {
    assert_eq!(parse_size("4096"), Ok(4096));
    assert_eq!(parse_size("512K"), Ok(512 << 10));
    assert_eq!(parse_size("16m"), Ok(16 << 20));
    assert_eq!(parse_size("1G"), Ok(1 << 30));
    for bad in ["", "M", "12X", "1.5M", "-1", "99999999999999999999G"] {
        assert!(parse_size(bad).is_err(), "{bad}");
    }
}

fn rail_spine() -> Topology {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/topologies/rail-spine.topo");
    parse_str(&std::fs::read_to_string(&path).unwrap(), &path).unwrap()
}

#[test]
fn ranks_are_hosts_in_order_then_nics_in_ethn_order() {
    let ranks = rank_specs(&rail_spine()).unwrap();
    let names: Vec<String> = ranks.iter().map(RankSpec::name).collect();
    assert_eq!(
        names,
        ["h1.eth0", "h1.eth1", "h2.eth0", "h2.eth1", "h3.eth0", "h3.eth1", "h4.eth0", "h4.eth1"]
    );
    let r3 = &ranks[3];
    assert_eq!((r3.host, r3.nic), (1, 1));
    assert_eq!(r3.ip, Ipv4Addr::new(10, 2, 2, 2));
    assert_eq!(r3.gateway, Ipv4Addr::new(10, 2, 2, 1));
    assert_eq!(r3.mtu, 1500);
    assert_eq!(rank_of(&ranks, "h2"), Ok(2));
    assert_eq!(rank_of(&ranks, "h2.eth1"), Ok(3));
    assert_eq!(rank_of(&ranks, "h4.eth0"), Ok(6));
    let e = rank_of(&ranks, "h9").unwrap_err();
    assert!(e.contains("h1.eth0") && e.contains("h9"), "{e}");
    assert!(rank_of(&ranks, "h1.eth7").is_err());
}

#[test]
fn nics_are_ordered_by_number_not_as_written_or_as_text() {
    let text = "\
switch s1 role rail
host a
host b
link a:eth10 s1:Ethernet1/1 subnet 10.0.1.0/24
link a:eth2 s1:Ethernet1/2 subnet 10.0.2.0/24
link b:eth0 s1:Ethernet1/3 subnet 10.0.3.0/24 mtu 9000
";
    let t = parse_str(text, Path::new("t.topo")).unwrap();
    let ranks = rank_specs(&t).unwrap();
    let names: Vec<String> = ranks.iter().map(RankSpec::name).collect();
    assert_eq!(names, ["a.eth2", "a.eth10", "b.eth0"]);
    assert_eq!((ranks[1].nic, ranks[1].ip), (1, Ipv4Addr::new(10, 0, 1, 2)));
    assert_eq!(path_mtu(ranks[2].mtu), 4096);
    let one = parse_str(
        "switch s1 role rail\nhost a\nlink a:eth0 s1:Ethernet1/1 subnet 10.0.1.0/24\n",
        Path::new("t.topo"),
    )
    .unwrap();
    assert!(rank_specs(&one).is_err());
}

#[test]
fn path_mtu_is_the_largest_roce_mtu_that_fits_the_link() {
    assert_eq!(path_mtu(1500), 1024);
    assert_eq!(path_mtu(9000), 4096);
    // The largest packet: RETH and immediate data on a WRITE ONLY.
    assert_eq!(path_mtu(4096 + 64), 4096);
    assert_eq!(path_mtu(4096 + 63), 2048);
    assert_eq!(path_mtu(1088), 1024);
    assert_eq!(path_mtu(1087), 512);
    assert_eq!(path_mtu(100), 256);
}

#[test]
fn nic_settings_make_the_nic_the_issue_asks_for() {
    let mut r = rank_specs(&rail_spine()).unwrap().remove(0);
    r.mac = "02:00:00:00:01:02".into();
    let s = NicSettings {
        line_rate_bps: 2_000_000_000,
        dscp: 24,
        priority: 3,
        ack_every: 16,
        rto_ns: 4_000_000,
        cc: Cc::None,
        dcqcn_params: None,
    };
    let gw = MacAddr([2, 0, 0, 0, 0, 1]);
    let c = s.nic_config(&r, gw).unwrap();
    assert_eq!(c.mac, MacAddr([2, 0, 0, 0, 1, 2]));
    assert_eq!(c.gateway_mac, gw);
    assert_eq!(c.ip, Ipv4Addr::new(10, 1, 1, 2));
    assert_eq!(
        (c.path_mtu, c.dscp, c.priority, c.ack_every),
        (1024, 24, 3, 16)
    );
    assert_eq!((c.rto_ns, c.line_rate_bps), (4_000_000, 2_000_000_000));
    assert!(!c.answer_arp);
    assert_eq!(c.cc, CongestionControl::None);
    let dcqcn = NicSettings {
        cc: Cc::Dcqcn,
        ..s.clone()
    };
    assert_eq!(
        dcqcn.nic_config(&r, gw).unwrap().cc,
        CongestionControl::Dcqcn(DcqcnParams::default())
    );
    r.mac = "nonsense".into();
    assert!(s.nic_config(&r, gw).is_err());
}

fn iface(ce: u64, pause: u64, tail3: u64, overflow: u64) -> InterfaceStats {
    let mut i = InterfaceStats::default();
    i.pfc.enabled = 1 << 3;
    i.pfc.tx_pause[3] = pause;
    i.pfc.paused_ns[3] = 5_000;
    i.queues = (0..8)
        .map(|q| QueueStats {
            queue: q,
            ecn_marked: if q == 3 { ce } else { 0 },
            tail_drops: if q == 3 { tail3 } else { 1 },
            max_depth_bytes: 1000 * u64::from(q),
            ..QueueStats::default()
        })
        .collect();
    i.drops.insert("ingress_overflow".into(), overflow);
    i.drops.insert("tail_drop".into(), tail3 + 7);
    i.drops.insert("no_route".into(), 0);
    i
}

#[test]
fn switch_counters_over_a_run_are_the_difference_of_two_snapshots() {
    let mut before = SwitchStats::default();
    before
        .interfaces
        .insert("Ethernet1/1".into(), iface(10, 2, 1, 0));
    let mut after = SwitchStats::default();
    after
        .interfaces
        .insert("Ethernet1/1".into(), iface(25, 6, 4, 2));
    after
        .interfaces
        .insert("Ethernet1/2".into(), InterfaceStats::default());
    let t = tally_since(&tally_switch(&after), &tally_switch(&before));
    let p = &t["Ethernet1/1"];
    assert_eq!((p.ecn_marked, p.pause_tx, p.paused_ns), (15, 4, 0));
    // Lossless: queue 3's tail drops (3 more) and the ingress overflow
    // (2); queue 0's tail drops are not lossless.
    assert_eq!(p.lossless_drops, 5);
    assert_eq!(p.drops["tail_drop"], 3);
    assert_eq!(p.max_queue_bytes, 7000);
    let mut f = FabricSummary::default();
    let links = f.add_switch("rail1", &t);
    assert_eq!(
        (f.ecn_marked, f.pfc_pause_frames, f.lossless_drops),
        (15, 4, 5)
    );
    assert_eq!(
        f.drops.len(),
        2,
        "only reasons that happened: {:?}",
        f.drops
    );
    assert_eq!(f.drops["ingress_overflow"], 2);
    assert_eq!(links.len(), 1, "the quiet port is left out");
    assert_eq!(
        (links[0].interface.as_str(), links[0].drops),
        ("Ethernet1/1", 5)
    );
}

#[test]
fn nic_counters_add_up_and_the_minimum_rate_is_the_lowest() {
    let a = NicStats {
        cnp_sent: 3,
        rate_cuts: 2,
        min_rate_bps: 500_000_000,
        retransmitted: 7,
        paused_ns: 2_500,
        ..NicStats::default()
    };
    let b = NicStats {
        cnp_received: 4,
        min_rate_bps: 2_000_000_000,
        pfc_pause_frames: 1,
        ..NicStats::default()
    };
    let mut f = FabricSummary::default();
    f.add_nics([&b, &a]);
    assert_eq!((f.cnp_sent, f.cnp_received, f.rate_cuts), (3, 4, 2));
    assert_eq!((f.retransmissions, f.nic_pfc_pause_frames), (7, 1));
    assert_eq!(f.min_rate_gbps, 0.5);
    assert_eq!(f.nic_paused_us, 2.5);
}

#[test]
fn json_report_has_the_names_the_issue_fixed() {
    let flow = FlowResult {
        src: "h1.eth0".into(),
        dst: "h4.eth0".into(),
        bytes: 4 << 20,
        fct_us: Some(1234.5),
    };
    let results = [JobResult {
        op: "incast".into(),
        bytes: 4 << 20,
        count: 1 << 20,
        time_us: 1300.0,
        algbw_gbps: 3.2,
        busbw_gbps: 3.2,
        wrong: 0,
        completed: true,
        flows: vec![flow],
    }];
    let mut fabric = FabricSummary::default();
    fabric.drops.insert("wred".into(), 3);
    let links = [LinkPfc::default()];
    let v = serde_json::to_value(JsonReport::new(&results, &fabric, &links)).unwrap();
    for k in [
        "op",
        "bytes",
        "time_us",
        "algbw_gbps",
        "busbw_gbps",
        "wrong",
    ] {
        assert!(v["results"][0].get(k).is_some(), "results[0].{k}: {v}");
    }
    for k in ["src", "dst", "bytes", "fct_us"] {
        assert!(v["flows"][0].get(k).is_some(), "flows[0].{k}: {v}");
    }
    assert_eq!(v["flows"][0]["fct_us"], 1234.5);
    for k in [
        "ecn_marked",
        "cnp_sent",
        "cnp_received",
        "rate_cuts",
        "pfc_pause_frames",
        "drops",
        "lossless_drops",
        "retransmissions",
    ] {
        assert!(v["fabric"].get(k).is_some(), "fabric.{k}: {v}");
    }
    assert_eq!(v["fabric"]["drops"]["wred"], 3);
    assert!(v["links"].is_array());
}

#[test]
fn fabric_summary_renders_every_counter_and_the_busy_ports() {
    let f = FabricSummary {
        ecn_marked: 11,
        cnp_sent: 12,
        rate_cuts: 13,
        min_rate_gbps: 0.25,
        drops: BTreeMap::from([("wred".to_string(), 14)]),
        ..FabricSummary::default()
    };
    let links = [LinkPfc {
        switch: "rail1".into(),
        interface: "Ethernet1/4".into(),
        pause_tx: 15,
        ..LinkPfc::default()
    }];
    let mut out = Vec::new();
    f.render(&mut out, &links).unwrap();
    let text = String::from_utf8(out).unwrap();
    for want in [
        "CE marked 11",
        "CNPs sent 12",
        "rate cuts 13",
        "0.250 Gb/s",
        "wred 14",
        "rail1:Ethernet1/4",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let mut out = Vec::new();
    FabricSummary::default().render(&mut out, &[]).unwrap();
    assert!(String::from_utf8(out).unwrap().contains("drops: none"));
}

#[test]
fn the_job_file_round_trips() {
    let mut ranks = rank_specs(&rail_spine()).unwrap();
    for r in &mut ranks {
        r.mac = "02:00:00:00:00:01".into();
    }
    let job = LiveJob {
        ranks,
        workload: Workload::Incast {
            bytes: 4096,
            srcs: vec![0, 2],
            dst: 4,
        },
        options: JobOptions::default(),
        nic: NicSettings {
            line_rate_bps: 1,
            dscp: 24,
            priority: 3,
            ack_every: 16,
            rto_ns: 4_000_000,
            cc: Cc::Dcqcn,
            dcqcn_params: Some(("rpg_min_rate 10".into(), "p.txt".into())),
        },
        start_unix_ns: 5,
        timeout_ns: 6,
        arp_timeout_ns: 7,
    };
    let back: LiveJob = serde_json::from_str(&serde_json::to_string(&job).unwrap()).unwrap();
    assert_eq!(back, job);
    assert_eq!(job.hosts(), [0, 1, 2, 3]);
    let h2: Vec<String> = job.host_ranks(1).iter().map(|r| r.name()).collect();
    assert_eq!(h2, ["h2.eth0", "h2.eth1"]);
}
