//! Generates the DPDK bindings and compiles the inline-function shim, when
//! the `link` feature asks for them; otherwise does nothing (the crate is
//! then empty and needs no DPDK).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/shim.h");
    println!("cargo:rerun-if-changed=src/shim.c");
    #[cfg(feature = "link")]
    link::main();
}

#[cfg(feature = "link")]
mod link {
    use std::path::PathBuf;

    /// The DPDK release these bindings are written against (Debian 12's).
    const MIN_VERSION: &str = "22.11";

    pub fn main() {
        match pkg_config::Config::new()
            .atleast_version(MIN_VERSION)
            .cargo_metadata(true)
            .probe("libdpdk")
        {
            Ok(_) => {}
            Err(e) => panic!(
                "\n\nrailyard's `dpdk` feature needs DPDK >= {MIN_VERSION} and its pkg-config file \
                 (Debian/Ubuntu: apt-get install libdpdk-dev libclang-dev pkg-config).\n\
                 pkg-config said: {e}\n\n"
            ),
        };
        // The PMD libraries that railyard calls directly (not only through
        // ethdev): net_ring for `rte_eth_from_rings`. pkg-config's shared
        // link line lists no drivers, which EAL loads as plugins.
        println!("cargo:rustc-link-lib=dylib=rte_net_ring");

        // The C flags DPDK wants (-I..., -include rte_config.h, -march=...).
        let out = std::process::Command::new("pkg-config")
            .args(["--cflags", "libdpdk"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_else(|| panic!("`pkg-config --cflags libdpdk` failed"));
        let flags: Vec<String> = out.split_whitespace().map(str::to_string).collect();

        let mut build = cc::Build::new();
        build.file("src/shim.c").warnings(false).opt_level(3);
        for f in &flags {
            build.flag(f);
        }
        build.compile("ry_dpdk_shim");

        // bindgen sees the same headers through clang; -march is a GCC-style
        // flag clang also understands, but keep only what matters to parsing.
        let clang_args = flags
            .iter()
            .filter(|f| {
                f.starts_with("-I")
                    || f.starts_with("-D")
                    || f.starts_with("-include")
                    || **f == "rte_config.h"
            })
            .cloned()
            .chain(["-msse4.2".to_string()]);
        let bindings = bindgen::Builder::default()
            .header("src/shim.h")
            .clang_args(clang_args)
            .allowlist_function("rte_eal_.*")
            .allowlist_function("rte_eth_.*")
            .allowlist_function("rte_pktmbuf_pool_create.*")
            .allowlist_function("rte_mempool_(avail|in_use)_count|rte_mempool_free|rte_mempool_lookup")
            .allowlist_function("rte_ring_(create|free|lookup)")
            .allowlist_function("rte_dev_(probe|remove)")
            .allowlist_function("rte_socket_id|rte_thread_register|rte_thread_unregister|rte_strerror")
            .allowlist_function("ry_.*")
            .allowlist_var("RTE_ETH_.*|RTE_MBUF_.*|RTE_PKTMBUF_.*|RING_F_.*|RTE_MAX_ETHPORTS|LCORE_ID_ANY|SOCKET_ID_ANY|RTE_ETHER_ADDR_LEN|RTE_EAL_PMD_PATH")
            // Inline functions have no symbol; the ry_ shims stand in.
            .generate_inline_functions(false)
            .layout_tests(false)
            .derive_default(true)
            .prepend_enum_name(false)
            .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
            .parse_callbacks(Box::new(super::CommentsAsText))
            .generate()
            .unwrap_or_else(|e| panic!("bindgen over the DPDK headers failed (is libclang-dev installed?): {e}"));
        let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("bindings.rs");
        bindings
            .write_to_file(&out)
            .unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    }
}

/// Keeps DPDK's C comments in the bindings' docs as plain text: read as
/// Markdown, their indented lines are code blocks that rustdoc would compile
/// and run as Rust doctests (and fail), e.g. under `cargo test --workspace
/// --features railyard-dataplane/dpdk`.
#[cfg(feature = "link")]
#[derive(Debug)]
struct CommentsAsText;

#[cfg(feature = "link")]
impl bindgen::callbacks::ParseCallbacks for CommentsAsText {
    fn process_comment(&self, comment: &str) -> Option<String> {
        Some(format!("```text\n{}\n```", comment.replace("```", "'''")))
    }
}
