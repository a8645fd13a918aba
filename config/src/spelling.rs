//! Spelling suggestions ("did you mean"), shared by the parser (keywords)
//! and validation (names of class-maps, policies, access lists).

/// The candidate closest in spelling to `word`, if close enough to suggest.
pub(crate) fn closest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let lower = word.to_ascii_lowercase();
    let mut best: Option<(usize, &'c str)> = None;
    for c in candidates {
        let d = edit_distance(&lower, &c.to_ascii_lowercase());
        let close = d <= 2.max(c.len() / 4) && d < c.len().max(1);
        if close && !matches!(best, Some((bd, _)) if bd <= d) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance between two short strings.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
