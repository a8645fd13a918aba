//! Natural order for names with numbers in them, as NX-OS lists ports:
//! `Ethernet1/4` before `Ethernet1/32`, `10.0.2.0/24` before `10.0.10.0/24`.
//!
//! Plain text order puts `Ethernet1/32` first because `3` sorts before
//! `4`; listings that users scan by port number need the numbers compared
//! as numbers.

use std::cmp::Ordering;

/// Compares `a` and `b` with every run of ASCII digits taken as a number
/// and everything else as text, byte by byte.
///
/// Names without digits compare exactly as `str::cmp` does. Runs that are
/// equal as numbers but spelled differently (`01` and `1`) are told apart
/// by length, shorter first, so the order is total and agrees with
/// equality: `natural_cmp(a, b) == Equal` only when `a == b`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let (da, ra) = split_digits(a);
                let (db, rb) = split_digits(b);
                let ord = cmp_numbers(da, db).then(da.len().cmp(&db.len()));
                if ord != Ordering::Equal {
                    return ord;
                }
                (a, b) = (ra, rb);
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                (a, b) = (&a[1..], &b[1..]);
            }
        }
    }
}

/// The leading run of digits of `s`, and the rest.
fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    s.split_at(n)
}

/// Compares two runs of digits by value, however long they are.
fn cmp_numbers(a: &[u8], b: &[u8]) -> Ordering {
    let strip = |s: &[u8]| -> usize { s.iter().take_while(|c| **c == b'0').count() };
    let (a, b) = (&a[strip(a)..], &b[strip(b)..]);
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_sort_by_number() {
        let mut v = vec![
            "Ethernet1/32",
            "Ethernet1/4",
            "Ethernet1/31",
            "Ethernet2/1",
            "Ethernet1/10",
            "Ethernet1/1",
            "loopback0",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "Ethernet1/1",
                "Ethernet1/4",
                "Ethernet1/10",
                "Ethernet1/31",
                "Ethernet1/32",
                "Ethernet2/1",
                "loopback0"
            ]
        );
    }

    #[test]
    fn text_without_digits_keeps_text_order() {
        for (a, b) in [("tx_pause", "rx_pause"), ("a", "ab"), ("", "a"), ("Z", "a")] {
            assert_eq!(natural_cmp(a, b), a.cmp(b), "{a} {b}");
            assert_eq!(natural_cmp(b, a), b.cmp(a), "{b} {a}");
        }
    }

    #[test]
    fn numbers_compare_by_value_and_the_order_is_total() {
        assert_eq!(natural_cmp("10.0.2.0/24", "10.0.10.0/24"), Ordering::Less);
        assert_eq!(natural_cmp("p99", "p100"), Ordering::Less);
        assert_eq!(natural_cmp("x1", "x01"), Ordering::Less);
        assert_eq!(natural_cmp("x01", "x1"), Ordering::Greater);
        assert_eq!(natural_cmp("x007", "x7"), Ordering::Greater);
        assert_eq!(natural_cmp("a1b", "a1b"), Ordering::Equal);
        // Digits longer than any integer type.
        assert_eq!(
            natural_cmp("n99999999999999999999999", "n100000000000000000000000"),
            Ordering::Less
        );
        assert_eq!(natural_cmp("1/", "1a"), "/".cmp("a"));
    }
}
