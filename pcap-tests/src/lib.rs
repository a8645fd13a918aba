//! Helpers for building traces and reading pcaps in end-to-end tests.
