//! Unit tests: fairness.

use super::report::jain;

#[test]
fn jain_is_one_for_equal_shares_and_one_over_n_for_a_hog() {
    assert!((jain(&[5.0, 5.0, 5.0, 5.0]) - 1.0).abs() < 1e-12);
    assert!((jain(&[8.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    let mid = jain(&[2.0, 1.0]);
    assert!((mid - 0.9).abs() < 1e-12, "{mid}");
}
