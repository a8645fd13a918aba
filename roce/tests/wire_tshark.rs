//! Wireshark is the judge of the RoCEv2 frames this crate builds: every kind
//! is written to a pcap and read back by tshark, which must decode it as
//! InfiniBand over RoCEv2 with the fields we meant, a correct ICRC, and no
//! expert info.

use std::net::Ipv4Addr;
use std::process::Command;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::DataLink;
use railyard_roce::wire::{
    bth_repr, AethRepr, BthRepr, Opcode, RethRepr, RoceRepr, Syndrome, CNP_RESERVED_LEN, ECN_ECT0,
    TTL,
};
use railyard_roce::MacAddr;

/// (frame, opcode, dest QP, PSN) of every kind of frame.
fn frames() -> Vec<(Vec<u8>, u8, u32, u32)> {
    let payload: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    let base = RoceRepr {
        src_mac: MacAddr([0x02, 0, 0, 0, 0, 1]),
        dst_mac: MacAddr([0x02, 0, 0, 0, 0, 2]),
        src_ip: Ipv4Addr::new(10, 0, 0, 1),
        dst_ip: Ipv4Addr::new(10, 0, 0, 2),
        dscp: 24,
        ecn: ECN_ECT0,
        ttl: TTL,
        src_port: 0xc123,
        bth: bth_repr(Opcode::RcRdmaWriteFirst, 0x12, 0xff_fffe, false),
        reth: None,
        aeth: None,
        imm: None,
        payload: &payload,
    };
    let reth = Some(RethRepr {
        va: 0x1_0000,
        r_key: 0x1234,
        dma_len: 3 * 4096 + 5,
    });
    let kinds: Vec<RoceRepr> = vec![
        RoceRepr {
            bth: bth_repr(Opcode::RcRdmaWriteFirst, 0x12, 0xff_fffe, false),
            reth,
            ..base
        },
        RoceRepr {
            bth: bth_repr(Opcode::RcRdmaWriteMiddle, 0x12, 0xff_ffff, false),
            ..base
        },
        RoceRepr {
            bth: bth_repr(Opcode::RcRdmaWriteLast, 0x12, 0, true),
            payload: &payload[..5],
            ..base
        },
        RoceRepr {
            bth: bth_repr(Opcode::RcRdmaWriteLastImm, 0x12, 1, true),
            imm: Some(0xdead_beef),
            payload: &payload[..1024],
            ..base
        },
        RoceRepr {
            bth: bth_repr(Opcode::RcRdmaWriteOnly, 0x12, 2, true),
            reth,
            payload: &payload[..3],
            ..base
        },
        RoceRepr {
            bth: bth_repr(Opcode::RcRdmaWriteOnlyImm, 0x12, 3, true),
            reth,
            imm: Some(7),
            payload: &payload[..0],
            ..base
        },
        RoceRepr {
            bth: bth_repr(Opcode::RcAcknowledge, 0x34, 3, false),
            aeth: Some(AethRepr {
                syndrome: Syndrome::Ack { credits: 0x1f },
                msn: 9,
            }),
            payload: &[],
            ..base
        },
        RoceRepr {
            bth: bth_repr(Opcode::RcAcknowledge, 0x34, 4, false),
            aeth: Some(AethRepr {
                syndrome: Syndrome::NakPsnSequenceError,
                msn: 9,
            }),
            payload: &[],
            ..base
        },
        RoceRepr {
            dscp: 48,
            ecn: 0,
            bth: BthRepr {
                becn: true,
                ..bth_repr(Opcode::Cnp, 0x56, 0, false)
            },
            payload: &[0; CNP_RESERVED_LEN],
            ..base
        },
    ];
    kinds
        .iter()
        .map(|r| {
            let mut buf = vec![0u8; 9216];
            let n = r.emit(&mut buf).unwrap();
            buf.truncate(n);
            (buf, u8::from(r.bth.opcode), r.bth.dest_qp, r.bth.psn)
        })
        .collect()
}

fn write_pcap(path: &std::path::Path, frames: &[Vec<u8>]) {
    let file = std::fs::File::create(path).unwrap();
    let header = PcapHeader {
        datalink: DataLink::ETHERNET,
        snaplen: 65535,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(file, header).unwrap();
    for (i, f) in frames.iter().enumerate() {
        let ts = std::time::Duration::from_micros(i as u64);
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
            .unwrap();
    }
}

fn tshark_fields(path: &std::path::Path, fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(path)
        .args(["-o", "infiniband.identify_payload:FALSE"]);
    cmd.args(["-T", "fields", "-E", "separator=|", "-E", "occurrence=a"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('|').map(str::to_owned).collect())
        .collect()
}

#[test]
#[ignore = "needs tshark"]
fn tshark_decodes_every_frame_kind_as_rocev2() {
    let dir = std::env::temp_dir().join(format!("railyard-roce-wire-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frames.pcap");
    let frames = frames();
    write_pcap(
        &path,
        &frames.iter().map(|f| f.0.clone()).collect::<Vec<_>>(),
    );
    let rows = tshark_fields(
        &path,
        &[
            "udp.dstport",
            "infiniband.bth.opcode",
            "infiniband.bth.destqp",
            "infiniband.bth.psn",
            "infiniband.invariant.crc",
            "_ws.expert",
            "_ws.col.Protocol",
        ],
    );
    assert_eq!(rows.len(), frames.len());
    let status_field = tshark_has_field("infiniband.invariant.crc.status");
    for (row, (frame, op, qp, psn)) in rows.iter().zip(&frames) {
        assert_eq!(row[0], "4791", "{row:?}");
        assert_eq!(row[1], op.to_string(), "{row:?}");
        let shown_qp = u32::from_str_radix(row[2].trim_start_matches("0x"), 16).unwrap();
        assert_eq!(shown_qp, *qp, "{row:?}");
        assert_eq!(row[3], psn.to_string(), "{row:?}");
        assert_eq!(row[5], "", "expert info: {row:?}");
        // tshark shows the ICRC field as the four bytes read in network
        // order: it must find exactly the bytes we put there, at the end.
        let n = frame.len();
        let icrc_be = u32::from_be_bytes([frame[n - 4], frame[n - 3], frame[n - 2], frame[n - 1]]);
        // (Wireshark 4.0 does not decode the CNP's body, so shows no ICRC.)
        if !(*op == 0x81 && row[4].is_empty()) {
            assert_eq!(row[4], format!("{icrc_be:#010x}"), "{row:?}");
        }
        assert!(reference_icrc_ok(&frame[14..]), "ICRC wrong: {row:?}");
    }
    // The independent check can fail: one flipped payload bit breaks it.
    let mut bad = frames[0].0.clone();
    bad[100] ^= 1;
    assert!(!reference_icrc_ok(&bad[14..]));
    if status_field {
        let rows = tshark_fields(&path, &["infiniband.invariant.crc.status"]);
        for row in rows {
            assert_eq!(row[0], "1", "tshark finds the ICRC bad");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Whether this tshark knows a field (newer releases verify the ICRC and
/// report it in `infiniband.invariant.crc.status`; 4.0 only shows it).
fn tshark_has_field(name: &str) -> bool {
    let out = Command::new("tshark")
        .args(["-G", "fields"])
        .output()
        .expect("tshark runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.split('\t').nth(2) == Some(name))
}

/// The ICRC checked the way a receiver checks a CRC-32, bit by bit and
/// independent of the crate's code: over the masked pseudo-packet followed by
/// the received ICRC (least significant byte first) the register must end at
/// the CRC-32 residue.
fn reference_icrc_ok(ip: &[u8]) -> bool {
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let mut v = vec![0xffu8; 8];
    v.extend_from_slice(ip);
    for at in [1, 8, 10, 11, ihl + 6, ihl + 7, ihl + 8 + 4] {
        v[8 + at] = 0xff;
    }
    let mut crc: u32 = 0xffff_ffff;
    for b in v {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    crc == 0xdebb_20e3
}
