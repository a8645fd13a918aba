//! MACs as NX-OS writes them: a leaf, for the printer and the checks alike.

use std::fmt;

/// Formats a MAC in NX-OS dotted form, `0011.2233.4455`.
pub(crate) struct Mac<'a>(pub &'a [u8; 6]);

impl fmt::Display for Mac<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}{:02x}.{:02x}{:02x}.{:02x}{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}
