//! Natural ordering of names, as NX-OS lists interfaces: runs of digits
//! compare as numbers, so `Ethernet1/4` comes before `Ethernet1/32` and
//! `Ethernet1/1/2` (a breakout lane) right after `Ethernet1/1`.

use std::cmp::Ordering;

/// Compares `a` and `b` naturally: text compares character by character,
/// digit runs by their numeric value (of any length, without overflow).
/// Names equal but for leading zeros (`e01`, `e1`) order fewer zeros first,
/// and what is still equal falls back to plain text order, so this is a
/// total order consistent with `==`.
pub fn cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    let mut zeros = Ordering::Equal;
    loop {
        match (x.first(), y.first()) {
            (None, None) => return zeros.then_with(|| a.cmp(b)),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (dx, rx) = split_digits(x);
                let (dy, ry) = split_digits(y);
                let (nx, ny) = (trim_zeros(dx), trim_zeros(dy));
                let by_value = nx.len().cmp(&ny.len()).then_with(|| nx.cmp(ny));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                if zeros == Ordering::Equal {
                    zeros = dx.len().cmp(&dy.len());
                }
                (x, y) = (rx, ry);
            }
            (Some(_), Some(_)) => {
                // Compare one character (UTF-8 sequences compare bytewise
                // in code point order).
                let (cx, rx) = split_char(x);
                let (cy, ry) = split_char(y);
                match cx.cmp(cy) {
                    Ordering::Equal => (x, y) = (rx, ry),
                    other => return other,
                }
            }
        }
    }
}

/// Sorts names naturally in place.
pub fn sort<S: AsRef<str>>(names: &mut [S]) {
    names.sort_by(|a, b| cmp(a.as_ref(), b.as_ref()));
}

fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    s.split_at(n)
}

fn trim_zeros(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|c| **c == b'0').count();
    &s[n..]
}

/// One character: an ASCII byte, or a whole UTF-8 sequence (its leading
/// byte and the continuation bytes after it).
fn split_char(s: &[u8]) -> (&[u8], &[u8]) {
    let n = 1 + s
        .iter()
        .skip(1)
        .take_while(|c| (**c & 0xc0) == 0x80)
        .count();
    s.split_at(n.min(s.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interfaces_sort_as_nx_os_lists_them() {
        let mut names = vec![
            "Ethernet1/32",
            "Ethernet1/4",
            "Ethernet2/1",
            "Ethernet1/1/2",
            "Ethernet1/10",
            "Ethernet1/1",
            "Ethernet1/1/1",
            "Ethernet1/3",
        ];
        sort(&mut names);
        assert_eq!(
            names,
            [
                "Ethernet1/1",
                "Ethernet1/1/1",
                "Ethernet1/1/2",
                "Ethernet1/3",
                "Ethernet1/4",
                "Ethernet1/10",
                "Ethernet1/32",
                "Ethernet2/1",
            ]
        );
    }

    #[test]
    fn it_is_a_total_order_consistent_with_equality() {
        let names = [
            "",
            "a",
            "a1",
            "a01",
            "a001",
            "a2",
            "a10",
            "a1b",
            "a1/1",
            "b",
            "B",
            "é1",
            "e1",
            "x99999999999999999999999999",
            "x100000000000000000000000000",
            "10",
            "9",
            "1a",
        ];
        for a in names {
            assert_eq!(cmp(a, a), Ordering::Equal, "{a}");
            for b in names {
                assert_eq!(cmp(a, b), cmp(b, a).reverse(), "{a} {b}");
                assert_eq!(cmp(a, b) == Ordering::Equal, a == b, "{a} {b}");
                for c in names {
                    if cmp(a, b) != Ordering::Greater && cmp(b, c) != Ordering::Greater {
                        assert_ne!(cmp(a, c), Ordering::Greater, "{a} {b} {c}");
                    }
                }
            }
        }
        assert_eq!(cmp("a9", "a10"), Ordering::Less);
        assert_eq!(cmp("a1", "a01"), Ordering::Less, "fewer zeros first");
        assert_eq!(cmp("a01b", "a1c"), Ordering::Less, "zeros only break ties");
        assert_eq!(
            cmp(
                "x99999999999999999999999999",
                "x100000000000000000000000000"
            ),
            Ordering::Less,
            "long digit runs do not overflow"
        );
        assert_eq!(cmp("rail-spine-9", "rail-spine-10"), Ordering::Less);
    }
}
