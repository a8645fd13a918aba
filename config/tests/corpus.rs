//! Real public NX-OS configurations (tests/corpus/, sources and licences in
//! tests/corpus/SOURCES.md), kept exactly as published: each loads with no
//! error, and what railyard prints of it reads back to the same model and
//! prints the same again.

mod common;

use std::path::Path;

use common::render;
use railyard_config::{parse_file, parse_str, ParseOptions};

#[test]
fn every_corpus_configuration_loads_and_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/corpus")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "conf"))
        .collect();
    files.sort();
    assert!(files.len() >= 9, "the corpus shrank: {files:?}");
    for path in &files {
        let parsed = parse_file(path, &ParseOptions::default())
            .unwrap_or_else(|es| panic!("{}:\n{}", path.display(), render(&es)));
        let printed = parsed.config.to_string();
        let again =
            parse_str(&printed, "printed.conf", &ParseOptions::default()).unwrap_or_else(|es| {
                panic!(
                    "{}: the printed configuration does not load:\n{}\n{printed}",
                    path.display(),
                    render(&es)
                )
            });
        assert_eq!(
            again.config,
            parsed.config,
            "{}: the printed configuration reads back differently",
            path.display()
        );
        assert_eq!(
            again.config.to_string(),
            printed,
            "{}: printing is not stable",
            path.display()
        );
    }
}
