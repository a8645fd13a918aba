//! Blocks NX-OS prints as opaque text (banners, certificates) are skipped as
//! a whole, never read as commands.

mod common;

use common::{errors, ok, parse_strict, skip_summary, summary, warnings};

/// A routed port with an address, and nothing else.
const BASE: &str = "interface e1/1\n  no switchport\n  ip address 10.0.0.1/24\n";

/// The configuration `BASE` describes, for comparison.
fn base() -> railyard_config::Config {
    ok(BASE).config
}

#[test]
fn a_multi_line_banner_with_commands_inside_changes_nothing() {
    let text = format!(
        "{BASE}banner motd #\nAuthorised access only.\nip route 0.0.0.0/0 10.0.0.9\ninterface e1/1\n  shutdown\nhostname pwned\n#\n"
    );
    let p = ok(&text);
    assert!(p.config.routes.is_empty(), "{:?}", p.config.routes);
    assert!(!p.config.interfaces[0].shutdown);
    assert_eq!(p.config.hostname, None);
    assert_eq!(p.config, base());
    assert_eq!(
        warnings(&p),
        [(
            4,
            1,
            "`banner motd` is not modelled; skipped with its text (lines 4-10)".to_string()
        )]
    );
    assert_eq!(
        skip_summary(&p),
        Some("skipped 1 unmodelled command: banner motd (1)")
    );
}

#[test]
fn any_delimiter_and_the_ctrl_c_nx_os_prints() {
    for (open, close) in [
        ("^C", "^C"),
        ("\u{3}", "\u{3}"),
        ("%", "%"),
        ("@", "   the end @"),
        ("Z", "text then Z"),
    ] {
        let text = format!(
            "{BASE}banner exec {open}\n  ip route 10.9.0.0/16 10.0.0.9\nshutdown\n{close}\nip route 10.8.0.0/16 10.0.0.8\n"
        );
        let p = ok(&text);
        assert_eq!(p.config.routes.len(), 1, "delimiter {open:?}");
        assert_eq!(p.config.routes[0].prefix.to_string(), "10.8.0.0/16");
        assert_eq!(warnings(&p).len(), 1, "{:?}", p.warnings);
    }
}

#[test]
fn single_line_banners_end_on_their_own_line() {
    let p = ok(&format!(
        "banner motd #Welcome, ip route 1.0.0.0/8 null0#\nbanner exec ^Cshutdown^C\n{BASE}ip route 10.8.0.0/16 10.0.0.8\n"
    ));
    assert_eq!(p.config.routes.len(), 1);
    assert!(!p.config.interfaces[0].shutdown);
    assert_eq!(
        warnings(&p),
        [
            (
                1,
                1,
                "`banner motd` is not modelled; skipped with its text (line 1)".to_string()
            ),
            (
                2,
                1,
                "`banner exec` is not modelled; skipped with its text (line 2)".to_string()
            ),
        ]
    );
}

#[test]
fn a_banner_without_a_type_uses_the_first_character() {
    let p = ok(&format!("banner $\nshutdown\n$\n{BASE}"));
    assert_eq!(p.config, base());
}

#[test]
fn an_unclosed_banner_is_an_error() {
    let es = errors(&format!(
        "{BASE}banner motd #\nip route 0.0.0.0/0 10.0.0.9\n"
    ));
    assert_eq!(es.len(), 1);
    assert_eq!(
        summary(&es[0]),
        (
            4,
            13,
            "`banner motd` text opened with `#` is never closed",
            Some("end the text with a second `#`; until then every later line is banner text")
        )
    );
}

#[test]
fn a_banner_is_an_error_when_strict() {
    let es = parse_strict("banner motd #\nhi\n#\n").unwrap_err();
    assert_eq!(es.len(), 1);
    assert_eq!(es[0].message, "`banner motd` is not supported");
}

#[test]
fn crypto_certificate_blocks_are_skipped_whole() {
    let text = format!(
        "crypto ca trustpoint TP\n  enrollment terminal\ncrypto ca certificate TP\n  certificate ca\n-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\nshutdown\n-----END CERTIFICATE-----\n  quit\n  certificate 01\n3082022B 30820194\nip route 0.0.0.0/0 10.0.0.9\n  quit\n{BASE}"
    );
    let p = ok(&text);
    assert_eq!(p.config, base());
    assert_eq!(
        warnings(&p),
        [(
            1,
            1,
            "`crypto` is not modelled; skipped with the line indented under it (line 2)"
                .to_string()
        )]
    );
}

#[test]
fn pem_text_outside_a_crypto_section_is_skipped_whole() {
    let p = ok(&format!(
        "-----BEGIN CERTIFICATE-----\nshutdown\nip route 0.0.0.0/0 10.0.0.9\n-----END CERTIFICATE-----\n{BASE}"
    ));
    assert_eq!(p.config, base());
    assert_eq!(
        warnings(&p),
        [(
            1,
            1,
            "`certificate text` is not modelled; skipped with its text (lines 1-4)".to_string()
        )]
    );
}
