//! The eight state bits an LACPDU carries for the actor and for the
//! partner (802.1AX 6.4.2.3, "Actor_State"/"Partner_State").

use std::fmt;

/// An actor's or partner's state octet: a set of flags, kept as the raw
/// byte so every value a peer sends survives (all 256 are legal on the
/// wire).
///
/// `Display` renders the form NX-OS uses in `show lacp interface`,
/// `Ac-1:To-0:Ag-1:Sy-1:Co-1:Di-1:De-0:Ex-0`; [`letters`](State::letters)
/// gives Wireshark's compact `EFDCSGSA` form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct State(pub u8);

impl State {
    /// LACP_Activity: set when the port is active (sends without being
    /// spoken to), clear when passive.
    pub const ACTIVITY: State = State(0x01);
    /// LACP_Timeout: set for the short timeout (the sender wants a LACPDU
    /// every second), clear for the long one (every 30 s).
    pub const TIMEOUT: State = State(0x02);
    /// Aggregation: set when the link may join an aggregate, clear when it
    /// can only be an individual link.
    pub const AGGREGATION: State = State(0x04);
    /// Synchronization: the sender has the link in the right aggregator
    /// (IN_SYNC).
    pub const SYNCHRONIZATION: State = State(0x08);
    /// Collecting: the sender accepts frames from the link.
    pub const COLLECTING: State = State(0x10);
    /// Distributing: the sender sends frames on the link.
    pub const DISTRIBUTING: State = State(0x20);
    /// Defaulted: the sender knows no partner and uses administrative
    /// defaults in its place.
    pub const DEFAULTED: State = State(0x40);
    /// Expired: the sender's Receive machine has timed out its partner once.
    pub const EXPIRED: State = State(0x80);

    /// No flag set.
    pub const fn empty() -> State {
        State(0)
    }

    /// The raw octet.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// True when every flag of `other` is set here.
    pub const fn contains(self, other: State) -> bool {
        self.0 & other.0 == other.0
    }

    /// Sets or clears the flags of `other`.
    pub fn set(&mut self, other: State, on: bool) {
        if on {
            self.0 |= other.0;
        } else {
            self.0 &= !other.0;
        }
    }

    /// This state with the flags of `other` set or cleared.
    #[must_use]
    pub const fn with(self, other: State, on: bool) -> State {
        if on {
            State(self.0 | other.0)
        } else {
            State(self.0 & !other.0)
        }
    }

    /// Active (LACP_Activity set).
    pub const fn active(self) -> bool {
        self.contains(State::ACTIVITY)
    }

    /// Short timeout (LACP_Timeout set): the sender wants fast LACPDUs.
    pub const fn short_timeout(self) -> bool {
        self.contains(State::TIMEOUT)
    }

    /// Aggregatable (Aggregation set).
    pub const fn aggregatable(self) -> bool {
        self.contains(State::AGGREGATION)
    }

    /// In sync (Synchronization set).
    pub const fn in_sync(self) -> bool {
        self.contains(State::SYNCHRONIZATION)
    }

    /// Collecting set.
    pub const fn collecting(self) -> bool {
        self.contains(State::COLLECTING)
    }

    /// Distributing set.
    pub const fn distributing(self) -> bool {
        self.contains(State::DISTRIBUTING)
    }

    /// Defaulted set.
    pub const fn defaulted(self) -> bool {
        self.contains(State::DEFAULTED)
    }

    /// Expired set.
    pub const fn expired(self) -> bool {
        self.contains(State::EXPIRED)
    }

    /// Wireshark's form: one letter per bit from Expired down to Activity
    /// (`E F D C S G S A`), `*` for a clear bit, e.g. `**DCSGSA`.
    pub fn letters(self) -> String {
        const LETTERS: [u8; 8] = *b"EFDCSGSA";
        LETTERS
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                if self.0 & (0x80 >> i) != 0 {
                    char::from(l)
                } else {
                    '*'
                }
            })
            .collect()
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [&str; 8] = ["Ac", "To", "Ag", "Sy", "Co", "Di", "De", "Ex"];
        for (i, name) in NAMES.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            write!(f, "{name}-{}", (self.0 >> i) & 1)?;
        }
        Ok(())
    }
}

impl From<u8> for State {
    fn from(b: u8) -> State {
        State(b)
    }
}

impl From<State> for u8 {
    fn from(s: State) -> u8 {
        s.0
    }
}

impl core::ops::BitOr for State {
    type Output = State;

    fn bitor(self, rhs: State) -> State {
        State(self.0 | rhs.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_text() {
        // 0x3d: Activity, Aggregation, Sync, Collecting, Distributing.
        let s = State(0x3d);
        assert!(s.active() && !s.short_timeout() && s.aggregatable() && s.in_sync());
        assert!(s.collecting() && s.distributing() && !s.defaulted() && !s.expired());
        assert_eq!(s.to_string(), "Ac-1:To-0:Ag-1:Sy-1:Co-1:Di-1:De-0:Ex-0");
        assert_eq!(s.letters(), "**DCSG*A");
        assert_eq!(State(0xff).letters(), "EFDCSGSA");
        assert_eq!(State::empty().letters(), "********");
        let all = State::ACTIVITY
            | State::TIMEOUT
            | State::AGGREGATION
            | State::SYNCHRONIZATION
            | State::COLLECTING
            | State::DISTRIBUTING
            | State::DEFAULTED
            | State::EXPIRED;
        assert_eq!(all, State(0xff));
        let mut t = State::empty();
        t.set(State::TIMEOUT, true);
        assert_eq!(t.bits(), 0x02);
        t.set(State::TIMEOUT, false);
        assert_eq!(t, State::empty());
        assert_eq!(State(0x3d).with(State::DISTRIBUTING, false), State(0x1d));
        assert_eq!(u8::from(State::from(0x47)), 0x47);
    }
}
