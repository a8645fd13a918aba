//! Sets of small numbers (DSCP, CoS, precedence, qos-groups) kept as
//! bitmasks in the model — bit `n` set for value `n` — but serialized as
//! the list of values, so JSON readers see `[24]`, not `16777216`.

use serde::ser::{SerializeSeq, Serializer};

/// The values whose bits are set in `mask`, ascending.
fn values(mask: u64) -> impl Iterator<Item = u8> {
    (0..64u8).filter(move |n| mask & (1 << n) != 0)
}

/// Serialize a 64-value set (DSCP) as its values.
pub(crate) fn set64<S: Serializer>(mask: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(values(*mask))
}

/// Serialize an 8-value set (CoS, precedence, qos-groups) as its values.
pub(crate) fn set8<S: Serializer>(mask: &u8, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(values(u64::from(*mask)))
}

/// Serialize an array of 8-value sets as a list of value lists.
pub(crate) fn sets8<S: Serializer, const N: usize>(
    masks: &[u8; N],
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(N))?;
    for m in masks {
        seq.serialize_element(&values(u64::from(*m)).collect::<Vec<_>>())?;
    }
    seq.end()
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize)]
    struct Sets {
        #[serde(serialize_with = "super::set64")]
        dscp: u64,
        #[serde(serialize_with = "super::set8")]
        cos: u8,
        #[serde(serialize_with = "super::sets8")]
        per_group: [u8; 2],
    }

    #[test]
    fn sets_serialize_as_their_values() {
        let v = Sets {
            dscp: 1 << 24 | 1 << 63 | 1,
            cos: 0b1000_1000,
            per_group: [0, 1 << 3],
        };
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"dscp":[0,24,63],"cos":[3,7],"per_group":[[],[3]]}"#
        );
    }
}
