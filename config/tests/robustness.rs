//! Damaged input never panics, and every diagnostic quotes the line it names.

mod common;

use railyard_config::{parse_str, Diagnostic, ParseOptions};

const CORPUS: &str = "\
hostname leaf1
feature lldp
interface Ethernet1/1-4, Ethernet1/8
  no switchport
  ip address 10.0.0.1/24
  ip address 10.0.1.1 255.255.255.0 secondary
  ipv6 address 2001:db8::1/64
  mtu 9216
  mac-address 0011.2233.4455
  speed 100000
  ip arp 10.0.0.2 00:11:22:33:44:55
  ipv6 neighbor 2001:db8::2 0011.2233.4466
  bind af-packet veth0
  description to spine
  shutdown
  exit
interface e1/9 - 10
  service-policy type qos input P
  priority-flow-control mode on send-tlv
router bgp 65001
  neighbor 10.0.0.2
ip access-list A
  10 permit udp 10.1.0.0/16 any eq 4791 dscp 26
class-map type qos match-any R
  match dscp 24,26-28
  match access-group name A
policy-map type qos P
  class R
    set qos-group 3
policy-map type queuing O
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
    random-detect minimum-threshold 150 kbytes maximum-threshold 3 mbytes drop-probability 7 weight 0 ecn
    queue-limit 4 mbytes
  class type queuing c-out-8q-q7
    priority level 1
    shape min 0 gbps max 10 gbps
policy-map type queuing I
  class type queuing c-in-q3
    pause buffer-size 4194304 pause-threshold 3276800 resume-threshold 102400
policy-map type network-qos N
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
system qos
  service-policy type network-qos N
hardware profile dlb
  dlb-interface Ethernet1/1, Ethernet1/2
  dre-thresholds level-1 10 level-2 20 level-3 30 level-4 40 level-5 50 level-6 60 level-7 70
ip load-sharing address source-destination port source-destination rotate 7
lldp holdtime 60
ip route 0.0.0.0/0 Ethernet1/1 10.0.0.2 name up tag 5 10
ipv6 route ::/0 Ethernet1/1 fe80::1
end
";

/// Check the invariants every diagnostic must satisfy against the text it came from.
fn check(text: &str, diags: &[Diagnostic]) {
    let lines: Vec<&str> = text.lines().collect();
    for d in diags {
        assert!(
            d.line <= lines.len(),
            "line {} out of range for:\n{text}",
            d.line
        );
        if d.line > 0 {
            let mut want = lines[d.line - 1].trim_end_matches('\r');
            if d.line == 1 {
                // A byte-order mark opening the file is not part of its first line.
                want = want.strip_prefix('\u{feff}').unwrap_or(want);
            }
            assert_eq!(d.source_line, want);
        }
        // Rendering must not panic either.
        let _ = d.to_string();
    }
}

fn parse_both(text: &str) {
    for strict in [false, true] {
        match parse_str(text, "fuzz.conf", &ParseOptions { strict }) {
            Ok(p) => {
                check(text, &p.warnings);
                // Whatever loads must print text that loads to the same model.
                let printed = p.config.to_string();
                let again = common::parse(&printed).unwrap_or_else(|es| {
                    panic!("reprint of\n{text}\nfailed:\n{}", common::render(&es))
                });
                assert_eq!(again.config, p.config);
            }
            Err(es) => {
                assert!(!es.is_empty());
                check(text, &es);
            }
        }
    }
}

#[test]
fn every_truncation_of_every_line() {
    let lines: Vec<&str> = CORPUS.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        for (cut, _) in line.char_indices() {
            let mut damaged = lines.clone();
            damaged[i] = &line[..cut];
            parse_both(&damaged.join("\n"));
        }
    }
}

#[test]
fn random_character_substitutions() {
    const ALPHABET: &[char] = &[
        ' ', '\t', ',', '-', '/', ':', '.', '!', '#', '0', '1', '9', 'e', 'x', 'é', '\u{feff}',
        '\r',
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let chars: Vec<char> = CORPUS.chars().collect();
    for _ in 0..3000 {
        let mut damaged = chars.clone();
        for _ in 0..1 + next() % 3 {
            let at = (next() % damaged.len() as u64) as usize;
            damaged[at] = ALPHABET[(next() % ALPHABET.len() as u64) as usize];
        }
        parse_both(&damaged.iter().collect::<String>());
    }
}

#[test]
fn lines_out_of_context() {
    // Every line alone, and the corpus with its lines reversed.
    for line in CORPUS.lines() {
        parse_both(line);
    }
    let reversed: Vec<&str> = CORPUS.lines().rev().collect();
    parse_both(&reversed.join("\n"));
}
