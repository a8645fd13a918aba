//! DPDK port: an ethdev (a NIC bound to a poll-mode driver, or a virtual
//! device such as `net_af_packet`, `net_ring`, `net_null`, `net_tap`,
//! `net_pcap`) driven through the system's DPDK. Built only with the `dpdk`
//! cargo feature.
//!
//! **EAL.** DPDK's environment (memory, lcores, buses, drivers) is global to
//! the process and can be initialised once: [`Eal::init`] does it on first
//! use and hands every later caller the same [`Eal`]. Its arguments come from
//! the configuration's `dpdk eal-args …`; [`Eal::effective_args`] adds what
//! railyard needs when they are not given: `--no-shconf` and `--no-huge -m
//! 1024` unless hugepages are asked for (`--huge-dir`, `--socket-mem`, `-m`),
//! `--iova-mode=va` (no physical-address look-ups, which need hugepages and
//! privileges), `-l 0` (only a main lcore: railyard's own workers poll the
//! ports), `--no-telemetry`, and `-d <PMD dir>` (see below); with no
//! arguments at all, also `--no-pci` (see [`DEFAULT_EAL_ARGS`]). DPDK 22.11
//! rejects `--in-memory` together with `--no-huge`; `--no-shconf` is the
//! equivalent there. `rte_eal_init` pins the calling thread to the main
//! lcore's CPU; railyard puts the thread's affinity back afterwards so that
//! the workers it spawns later are not all confined to that CPU.
//!
//! **Drivers.** Debian builds DPDK as shared libraries and ships the PMDs as
//! plugins in `RTE_EAL_PMD_PATH` (`/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0`).
//! EAL loads that directory by itself when it detects that it is linked
//! shared ("EAL: Detected shared linkage of DPDK"), as railyard is: checked
//! here, `net_null0` probes with only `-d …/librte_mempool_ring.so.23`
//! given. railyard still passes `-d <that dir>` whenever no `-d` is given,
//! so that a build where the detection fails (a static EAL) finds the
//! drivers too; loading the directory (about 130 libraries) takes ~100 ms
//! once per process, and a second load of the same file is a no-op.
//! Give `-d` with single driver files (`-d
//! …/pmds-23.0/librte_net_af_packet.so.23 -d …/librte_mempool_ring.so.23`)
//! to load fewer; the mempool driver `mempool_ring` is always needed.
//!
//! **Ports.** `bind dpdk 0` names an ethdev by port id (a NIC probed by EAL,
//! or a `--vdev` from the EAL arguments); `bind dpdk net_af_packet0,iface=veth1`
//! names a device by devargs: an existing port of that name is used,
//! otherwise the device is hot-plugged with `rte_dev_probe`. Each port gets
//! one receive and one transmit queue, promiscuous mode where the driver has
//! it, and two mbuf pools of its own (receive and transmit) sized for jumbo
//! frames in a single segment.
//!
//! **Copying.** railyard's [`PacketBuf`](crate::PacketBuf) is a buffer of railyard's
//! own [`Pool`], not an mbuf, so the port copies: each received mbuf chain
//! into a pool buffer (then frees the mbuf at once), and each transmitted
//! packet into a fresh mbuf from the port's transmit pool. That is one
//! `memcpy` per frame each way, and it keeps mbufs out of the pipeline: no
//! stage has to know about DPDK, packets may wait in egress queues for as
//! long as PFC holds them without starving the driver's receive ring, and
//! buffers may cross workers exactly as today. Measured, the copies are not
//! the bottleneck: four `net_null` ports forward the benchmark's 64-byte mix
//! at about 2 Mpps on one core, copies included, no slower than railyard's
//! in-memory ring ports (see docs/src/performance.md). Zero copy would need `PacketBuf` to
//! wrap an mbuf (receive), or the pool's buffers attached to mbufs as
//! external buffers (transmit, `rte_pktmbuf_attach_extbuf`); the latter
//! needs the pool to hand out raw buffers and take them back from a DPDK
//! free callback on any thread, and room for DPDK's shared-info block at the
//! end of each buffer (a jumbo frame fills a pool buffer today). Not done.
//!
//! **Counters.** [`IoCounters`] counts what crossed `rx_burst`/`tx_burst`;
//! `rx_dropped` adds the driver's `rx_missed_errors` (imissed: the receive
//! ring was full) and `rx_mbuf_allocation_errors` (rx_nombuf), read through
//! the extended statistics; `tx_errors` adds the driver's `tx_errors`.
//! [`DpdkPort::xstats`] returns every extended statistic by name.
//!
//! **Threads.** The port's queues are used by whichever thread owns the port
//! (one worker); DPDK's pools are multi-producer, multi-consumer, so workers
//! that are not EAL lcores may use them (without a per-lcore cache).

// This module is the FFI boundary to DPDK.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::io;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use dpdk_sys as sys;

use crate::clock::Nanos;
use crate::packet::{Burst, Pool, BUF_SIZE, BURST_SIZE, MAX_FRAME};
use crate::port::refresh::RefreshTimer;
use crate::port::{IoCounters, Port, TxDone};
use crate::wire::MacAddr;

/// The EAL arguments railyard uses when the configuration gives none: a
/// lab setup without hugepages, NIC bindings or shared state.
pub const DEFAULT_EAL_ARGS: &[&str] = &[
    "--no-pci",
    "--no-huge",
    "--no-shconf",
    "-m",
    "1024",
    "--iova-mode=va",
    "-l",
    "0",
    "--no-telemetry",
];

/// The directory Debian's DPDK loads its driver plugins from.
pub fn pmd_dir() -> &'static str {
    CStr::from_bytes_with_nul(sys::RTE_EAL_PMD_PATH)
        .ok()
        .and_then(|c| c.to_str().ok())
        .unwrap_or("")
}

/// DPDK's error text for a (positive) errno value.
fn rte_error(errnum: c_int) -> String {
    // SAFETY: rte_strerror returns a pointer to a static or thread-local
    // NUL-terminated string, valid until the next call on this thread; it is
    // copied out at once.
    let s = unsafe { sys::rte_strerror(errnum.abs()) };
    if s.is_null() {
        return format!("error {errnum}");
    }
    // SAFETY: non-null and NUL-terminated, as above.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

/// The calling thread's `rte_errno`, as text.
fn last_rte_error() -> String {
    // SAFETY: reads a thread-local integer.
    rte_error(unsafe { sys::ry_rte_errno() })
}

fn err(what: impl std::fmt::Display) -> io::Error {
    io::Error::other(what.to_string())
}

/// The initialised DPDK environment (one per process).
#[derive(Debug)]
pub struct Eal {
    args: Vec<String>,
}

static EAL: OnceLock<Result<Eal, String>> = OnceLock::new();
/// Serialises `init` so two first callers do not both call `rte_eal_init`.
static EAL_INIT: Mutex<()> = Mutex::new(());

impl Eal {
    /// Completes `args` (the configuration's `dpdk eal-args`) with what
    /// railyard needs and the user did not say; see the module doc. The
    /// result starts with the program name, as `rte_eal_init` expects.
    pub fn effective_args(args: &[String]) -> Vec<String> {
        let has = |flags: &[&str]| {
            args.iter().any(|a| {
                flags
                    .iter()
                    .any(|f| a == f || a.starts_with(&format!("{f}=")))
            })
        };
        let mut out = vec!["railyard".to_string()];
        out.extend(args.iter().cloned());
        if args.is_empty() {
            // No EAL arguments at all: a lab run, which must not touch the
            // machine's PCI devices (EAL would try to take over any NIC
            // whose driver it has, e.g. virtio).
            out.push("--no-pci".into());
        }
        let hugepages = has(&[
            "--huge-dir",
            "--socket-mem",
            "--socket-limit",
            "--huge-unlink",
        ]);
        if !has(&["--no-shconf", "--in-memory"]) {
            out.push("--no-shconf".into());
        }
        if !hugepages && !has(&["--no-huge"]) {
            out.push("--no-huge".into());
        }
        if !hugepages && !has(&["-m", "--socket-mem"]) {
            out.extend(["-m".into(), "1024".into()]);
        }
        if !has(&["--iova-mode"]) {
            out.push("--iova-mode=va".into());
        }
        if !has(&["-l", "-c", "--lcores"]) {
            out.extend(["-l".into(), "0".into()]);
        }
        if !has(&["--no-telemetry", "--telemetry"]) {
            out.push("--no-telemetry".into());
        }
        if !has(&["-d"]) && !pmd_dir().is_empty() {
            out.extend(["-d".into(), pmd_dir().into()]);
        }
        out
    }

    /// Initialises EAL with `args` (completed by [`Eal::effective_args`]) on
    /// the first call; every later call returns the same environment,
    /// whatever its arguments (EAL cannot be initialised twice).
    ///
    /// # Errors
    /// Why `rte_eal_init` failed (the first failure is also returned to every
    /// later caller: DPDK cannot retry).
    pub fn init(args: &[String]) -> io::Result<&'static Eal> {
        let _guard = EAL_INIT.lock().unwrap_or_else(|p| p.into_inner());
        let r = EAL.get_or_init(|| Self::init_once(Self::effective_args(args)));
        match r {
            Ok(eal) => {
                let wanted = Self::effective_args(args);
                if wanted != eal.args {
                    tracing::debug!(
                        running = ?eal.args,
                        asked = ?wanted,
                        "EAL is already initialised; keeping its arguments"
                    );
                }
                Ok(eal)
            }
            Err(e) => Err(err(e)),
        }
    }

    /// The environment, if [`Eal::init`] has succeeded.
    pub fn get() -> Option<&'static Eal> {
        EAL.get().and_then(|r| r.as_ref().ok())
    }

    /// The arguments EAL was initialised with (program name first).
    pub fn args(&self) -> &[String] {
        &self.args
    }

    fn init_once(args: Vec<String>) -> Result<Eal, String> {
        let cargs: Vec<CString> = args
            .iter()
            .map(|a| CString::new(a.as_str()))
            .collect::<Result<_, _>>()
            .map_err(|_| "an EAL argument contains a NUL byte".to_string())?;
        // EAL may keep pointers into argv (device arguments), so the strings
        // live for the rest of the process.
        let leaked: &'static mut [CString] = Vec::leak(cargs);
        let mut argv: Vec<*mut c_char> = leaked.iter().map(|c| c.as_ptr().cast_mut()).collect();
        argv.push(ptr::null_mut());
        let argv: &'static mut [*mut c_char] = Vec::leak(argv);
        let affinity = current_affinity();
        // SAFETY: argv holds argc valid NUL-terminated strings followed by a
        // null pointer, all of which outlive the process's use of them; this
        // runs at most once per process (OnceLock under a mutex).
        let r = unsafe { sys::rte_eal_init((argv.len() - 1) as c_int, argv.as_mut_ptr()) };
        if let Some(set) = affinity {
            restore_affinity(&set);
        }
        if r < 0 {
            let hint = if args.iter().any(|a| a == "--in-memory") {
                " (DPDK 22.11 refuses --in-memory with --no-huge; use --no-shconf)"
            } else {
                ""
            };
            return Err(format!(
                "rte_eal_init({}) failed: {}{hint}",
                args.join(" "),
                last_rte_error()
            ));
        }
        tracing::info!(args = %args.join(" "), "DPDK EAL initialised");
        Ok(Eal { args })
    }

    /// Ports (ethdevs) that exist now: EAL's probed devices, `--vdev`s and
    /// hot-plugged ones, as `(port id, name)`.
    pub fn ports(&self) -> Vec<(u16, String)> {
        (0..max_ports())
            .filter_map(|p| port_name(p).map(|n| (p, n)))
            .collect()
    }
}

fn max_ports() -> u16 {
    // SAFETY: returns a compile-time constant.
    u16::try_from(unsafe { sys::ry_rte_max_ethports() }).unwrap_or(u16::MAX)
}

fn port_name(port: u16) -> Option<String> {
    // SAFETY: plain query on a port id; invalid ids return 0.
    if unsafe { sys::rte_eth_dev_is_valid_port(port) } == 0 {
        return None;
    }
    let mut buf = [0 as c_char; 64];
    // SAFETY: buf has RTE_ETH_NAME_MAX_LEN (64) bytes, which the call fills
    // with a NUL-terminated name.
    if unsafe { sys::rte_eth_dev_get_name_by_port(port, buf.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: NUL-terminated within buf, as above.
    Some(
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned(),
    )
}

fn port_by_name(name: &str) -> Option<u16> {
    let c = CString::new(name).ok()?;
    let mut id = 0u16;
    // SAFETY: c is a valid string and id a valid out-pointer for the call.
    (unsafe { sys::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) } == 0).then_some(id)
}

fn current_affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a live cpu_set_t of the size passed; pid 0 is this thread.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    (r == 0).then_some(set)
}

fn restore_affinity(set: &libc::cpu_set_t) {
    // SAFETY: set is a valid cpu_set_t of the size passed; pid 0 is this thread.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
}

/// Queue and pool sizes of a [`DpdkPort`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpdkOptions {
    /// Receive descriptors (ring size of the one receive queue).
    pub rx_desc: u16,
    /// Transmit descriptors.
    pub tx_desc: u16,
    /// Mbufs in each of the port's two pools; best a power of two minus one,
    /// and more than the descriptors plus a burst.
    pub mbufs: u32,
    /// Per-lcore cache of each pool (only EAL lcores use it).
    pub cache: u32,
    /// Receive frames addressed to any MAC, as a switch port must.
    pub promiscuous: bool,
}

impl Default for DpdkOptions {
    fn default() -> Self {
        DpdkOptions {
            rx_desc: 1024,
            tx_desc: 1024,
            mbufs: 4095,
            cache: 256,
            promiscuous: true,
        }
    }
}

/// An mbuf pool owned by one port; freed on drop when no mbuf of it is out.
struct Mempool(NonNull<sys::rte_mempool>);

impl Mempool {
    fn create(name: &str, n: u32, cache: u32, data_room: u16) -> io::Result<Mempool> {
        let c = CString::new(name).map_err(|_| err("pool name has a NUL"))?;
        // SAFETY: c is a valid name; the other arguments are plain values.
        // SOCKET_ID_ANY (-1): no NUMA preference.
        let mp = unsafe { sys::rte_pktmbuf_pool_create(c.as_ptr(), n, cache, 0, data_room, -1) };
        NonNull::new(mp).map(Mempool).ok_or_else(|| {
            err(format!(
                "rte_pktmbuf_pool_create {name} ({n} x {data_room} B): {} \
                 (give EAL more memory with `-m`?)",
                last_rte_error()
            ))
        })
    }

    fn ptr(&self) -> *mut sys::rte_mempool {
        self.0.as_ptr()
    }

    fn in_use(&self) -> u32 {
        // SAFETY: the pool is alive while self is.
        unsafe { sys::rte_mempool_in_use_count(self.ptr()) }
    }
}

impl Drop for Mempool {
    fn drop(&mut self) {
        // An mbuf still out (in another device's ring) would point into a
        // freed pool: leak the pool rather than risk that.
        if self.in_use() == 0 {
            // SAFETY: no mbuf of the pool is in use and its device is closed
            // (DpdkPort drops pools after closing the port).
            unsafe { sys::rte_mempool_free(self.ptr()) };
        } else {
            tracing::warn!(
                in_use = self.in_use(),
                "DPDK pool still has mbufs out; not freeing it"
            );
        }
    }
}

static NEXT_POOL: AtomicU32 = AtomicU32::new(0);

/// Where in the extended statistics the counters railyard adds up are.
#[derive(Debug, Default, Clone)]
struct XstatIds {
    rx_missed: Option<usize>,
    rx_nombuf: Option<usize>,
    tx_errors: Option<usize>,
}

/// A DPDK ethdev opened as a switch port (see the module doc).
pub struct DpdkPort {
    port_id: u16,
    name: String,
    bound: String,
    mac: MacAddr,
    counters: IoCounters,
    /// Driver counters added to `counters` (imissed + nombuf, tx errors).
    driver: Cell<(u64, u64)>,
    xstat_ids: XstatIds,
    link: Cell<bool>,
    refresh: RefreshTimer,
    warned_oversize: bool,
    /// The virtual device `open` hot-plugged, removed again on drop.
    probed: Option<CString>,
    /// Dropped after the device is closed (field order).
    rx_pool: Mempool,
    tx_pool: Mempool,
}

// SAFETY: the raw pointers are to DPDK pools, which are multi-thread safe;
// the port's queues are used only through `&mut self`, i.e. by the one
// thread that owns the port at a time.
unsafe impl Send for DpdkPort {}

fn check(r: c_int, what: &str, port: &str) -> io::Result<()> {
    if r < 0 {
        Err(err(format!("{port}: {what}: {}", rte_error(r))))
    } else {
        Ok(())
    }
}

impl DpdkPort {
    /// Opens the ethdev `spec` names — a port id (`0`) or a device
    /// (`net_null0`, `net_af_packet0,iface=veth1`), hot-plugged if EAL does
    /// not know it yet — configures one receive and one transmit queue and
    /// starts it. `eal` proves EAL is up.
    ///
    /// # Errors
    /// An unknown port, a device DPDK cannot probe, or a driver that refuses
    /// the configuration; the message names the step.
    pub fn open(_eal: &Eal, spec: &str, opts: &DpdkOptions) -> io::Result<DpdkPort> {
        let (port_id, probed) = resolve(spec)?;
        let name = port_name(port_id).unwrap_or_else(|| spec.to_string());
        let what = format!("dpdk {spec}");

        // SAFETY: rte_eth_dev_info is plain data (pointers null when zeroed).
        let mut info: sys::rte_eth_dev_info = unsafe { std::mem::zeroed() };
        // SAFETY: port_id is valid (resolve checked) and info a live out-struct.
        check(
            unsafe { sys::rte_eth_dev_info_get(port_id, &mut info) },
            "dev_info_get",
            &what,
        )?;

        let seq = NEXT_POOL.fetch_add(1, Ordering::Relaxed);
        // One segment per frame: room for a jumbo frame (and, on transmit, a
        // packet whose headroom was used) after DPDK's own headroom.
        let rx_room = (sys::RTE_PKTMBUF_HEADROOM as usize + MAX_FRAME) as u16;
        let tx_room = (sys::RTE_PKTMBUF_HEADROOM as usize + BUF_SIZE) as u16;
        let rx_pool = Mempool::create(
            &format!("ry_rx{port_id}_{seq}"),
            opts.mbufs,
            opts.cache,
            rx_room,
        )?;
        let tx_pool = Mempool::create(
            &format!("ry_tx{port_id}_{seq}"),
            opts.mbufs,
            opts.cache,
            tx_room,
        )?;

        let mut conf = sys::rte_eth_conf::default();
        // Accept jumbo frames where the driver can; drivers with a smaller
        // limit keep theirs (frames they cannot take never arrive).
        // (Ethernet header, one tag and FCS: 22 bytes around the MTU.)
        let max_mtu = u32::from(info.max_mtu)
            .min(info.max_rx_pktlen.saturating_sub(22))
            .min(crate::packet::MAX_MTU as u32);
        if max_mtu > 1500 {
            conf.rxmode.mtu = max_mtu;
        }
        // SAFETY: conf is a live, initialised rte_eth_conf; port_id is valid.
        let r = unsafe { sys::rte_eth_dev_configure(port_id, 1, 1, &conf) };
        if r < 0 && conf.rxmode.mtu != 0 {
            conf.rxmode.mtu = 0;
            // SAFETY: as above.
            check(
                unsafe { sys::rte_eth_dev_configure(port_id, 1, 1, &conf) },
                "configure",
                &what,
            )?;
        } else {
            check(r, "configure", &what)?;
        }
        let (mut rxd, mut txd) = (opts.rx_desc, opts.tx_desc);
        // SAFETY: the port is configured; rxd/txd are live.
        check(
            unsafe { sys::rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &mut rxd, &mut txd) },
            "adjust descriptors",
            &what,
        )?;
        // SAFETY: returns the NUMA socket of the port (or -1).
        let socket = unsafe { sys::rte_eth_dev_socket_id(port_id) };
        let socket = if socket < 0 { 0 } else { socket as u32 };
        // SAFETY: the port is configured with one queue each; null confs mean
        // the driver's defaults; the pool outlives the port (field order).
        check(
            unsafe {
                sys::rte_eth_rx_queue_setup(port_id, 0, rxd, socket, ptr::null(), rx_pool.ptr())
            },
            "rx_queue_setup",
            &what,
        )?;
        // SAFETY: as above.
        check(
            unsafe { sys::rte_eth_tx_queue_setup(port_id, 0, txd, socket, ptr::null()) },
            "tx_queue_setup",
            &what,
        )?;
        // SAFETY: the port is configured with its queues set up.
        check(unsafe { sys::rte_eth_dev_start(port_id) }, "start", &what)?;
        if opts.promiscuous {
            // Not every driver has it (ring, null); ignore refusals.
            // SAFETY: plain call on a started port.
            let _ = unsafe { sys::rte_eth_promiscuous_enable(port_id) };
        }
        let mut addr = sys::rte_ether_addr::default();
        // SAFETY: addr is a live out-struct.
        let _ = unsafe { sys::rte_eth_macaddr_get(port_id, &mut addr) };

        let mut port = DpdkPort {
            port_id,
            name,
            bound: spec.to_string(),
            mac: MacAddr(addr.addr_bytes),
            counters: IoCounters::default(),
            driver: Cell::new((0, 0)),
            xstat_ids: XstatIds::default(),
            link: Cell::new(false),
            refresh: RefreshTimer::new(),
            warned_oversize: false,
            probed,
            rx_pool,
            tx_pool,
        };
        port.xstat_ids = port.find_xstats();
        port.refresh();
        Ok(port)
    }

    /// The ethdev's port id.
    pub fn port_id(&self) -> u16 {
        self.port_id
    }

    /// The ethdev's name (`net_af_packet0`, a PCI address, …).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes `frames` (round robin, each at most one mbuf long) into every
    /// free mbuf of the receive pool, and returns how many it wrote. For
    /// benchmarks over `net_null`, whose receive side hands out mbufs from
    /// that pool without writing them: the pipeline then sees these frames.
    pub fn fill_rx_pool(&mut self, frames: &[Vec<u8>]) -> usize {
        if frames.is_empty() {
            return 0;
        }
        let mut taken = Vec::new();
        loop {
            // SAFETY: the pool is alive; a non-null mbuf is ours.
            let m = unsafe { sys::ry_rte_pktmbuf_alloc(self.rx_pool.ptr()) };
            if m.is_null() {
                break;
            }
            let f = &frames[taken.len() % frames.len()];
            // SAFETY: m is a fresh single-segment mbuf we own.
            let room = usize::from(unsafe { sys::ry_rte_pktmbuf_tailroom(m) });
            let n = f.len().min(room);
            // SAFETY: the data area has `room` >= n bytes; m is ours.
            unsafe {
                ptr::copy_nonoverlapping(f.as_ptr(), sys::ry_rte_pktmbuf_mtod(m).cast(), n);
                sys::ry_rte_pktmbuf_set_len(m, n as u16);
            }
            taken.push(m);
        }
        let n = taken.len();
        for m in taken {
            // SAFETY: each mbuf was allocated above and is freed once.
            unsafe { sys::ry_rte_pktmbuf_free(m) };
        }
        n
    }

    /// Every extended statistic the driver keeps, by name.
    pub fn xstats(&self) -> Vec<(String, u64)> {
        let names = self.xstat_names();
        let values = self.xstat_values(names.len());
        names.into_iter().zip(values).collect()
    }

    fn xstat_names(&self) -> Vec<String> {
        // SAFETY: a null table with size 0 asks for the count.
        let n = unsafe { sys::rte_eth_xstats_get_names(self.port_id, ptr::null_mut(), 0) };
        let Ok(n) = usize::try_from(n) else {
            return Vec::new();
        };
        let mut names = vec![sys::rte_eth_xstat_name::default(); n];
        // SAFETY: names has n entries, the size passed.
        let got =
            unsafe { sys::rte_eth_xstats_get_names(self.port_id, names.as_mut_ptr(), n as u32) };
        if got < 0 || got as usize > n {
            return Vec::new();
        }
        names.truncate(got as usize);
        names
            .iter()
            // SAFETY: each name is a NUL-terminated string in its 64-byte array.
            .map(|x| {
                unsafe { CStr::from_ptr(x.name.as_ptr()) }
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    fn xstat_values(&self, n: usize) -> Vec<u64> {
        let mut vals = vec![sys::rte_eth_xstat::default(); n];
        // SAFETY: vals has n entries, the size passed (null only when n is 0,
        // which the API allows).
        let got = unsafe {
            sys::rte_eth_xstats_get(
                self.port_id,
                if n == 0 {
                    ptr::null_mut()
                } else {
                    vals.as_mut_ptr()
                },
                n as u32,
            )
        };
        if got < 0 || got as usize > n {
            return vec![0; n];
        }
        let mut out = vec![0; n];
        for x in &vals[..got as usize] {
            if let Some(slot) = out.get_mut(x.id as usize) {
                *slot = x.value;
            }
        }
        out
    }

    fn find_xstats(&self) -> XstatIds {
        let names = self.xstat_names();
        let pos = |n: &str| names.iter().position(|x| x == n);
        XstatIds {
            rx_missed: pos("rx_missed_errors"),
            rx_nombuf: pos("rx_mbuf_allocation_errors"),
            tx_errors: pos("tx_errors"),
        }
    }

    /// Re-reads link state and the driver's drop counters.
    fn refresh(&self) {
        self.refresh.restart();
        let mut link = sys::rte_eth_link::default();
        // SAFETY: link is a live out-struct; the port id is valid.
        let r = unsafe { sys::rte_eth_link_get_nowait(self.port_id, &mut link) };
        self.link
            .set(r == 0 && u32::from(link.link_status()) == sys::RTE_ETH_LINK_UP);
        // By id into fixed arrays: no allocation on the polling thread.
        let ids = &self.xstat_ids;
        let wanted = [ids.rx_missed, ids.rx_nombuf, ids.tx_errors];
        let mut idv = [0u64; 3];
        let mut n = 0;
        for id in wanted.iter().flatten() {
            idv[n] = *id as u64;
            n += 1;
        }
        if n == 0 {
            return;
        }
        let mut vals = [0u64; 3];
        // SAFETY: idv and vals hold n (<= 3) entries each.
        let r = unsafe {
            sys::rte_eth_xstats_get_by_id(self.port_id, idv.as_ptr(), vals.as_mut_ptr(), n as u32)
        };
        if r != n as c_int {
            return;
        }
        let mut it = vals[..n].iter();
        let mut get = |i: Option<usize>| i.and_then(|_| it.next()).copied().unwrap_or(0);
        let (missed, nombuf, tx_errors) =
            (get(ids.rx_missed), get(ids.rx_nombuf), get(ids.tx_errors));
        self.driver.set((missed + nombuf, tx_errors));
    }

    fn refresh_if_due(&self) {
        if self.refresh.due() {
            self.refresh();
        }
    }
}

/// The port id `spec` names, probing the device if needed (then also the
/// device's name, for removal).
fn resolve(spec: &str) -> io::Result<(u16, Option<CString>)> {
    if let Ok(id) = spec.parse::<u16>() {
        return port_name(id).map(|_| (id, None)).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("dpdk port {spec}: no such ethdev (is the NIC bound and probed, or the --vdev given?)"),
            )
        });
    }
    let name = spec.split(',').next().unwrap_or(spec);
    if let Some(id) = port_by_name(name) {
        return Ok((id, None));
    }
    let c = CString::new(spec).map_err(|_| err("device arguments contain a NUL"))?;
    // SAFETY: c is a valid devargs string for the call.
    let r = unsafe { sys::rte_dev_probe(c.as_ptr()) };
    if r < 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("dpdk {spec}: rte_dev_probe failed: {}", rte_error(r)),
        ));
    }
    let dev = CString::new(name).ok();
    match port_by_name(name) {
        Some(id) => Ok((id, dev)),
        None => {
            if let Some(d) = &dev {
                remove_vdev(d);
            }
            Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("dpdk {spec}: probed, but no ethdev is named {name}"),
            ))
        }
    }
}

/// Unplugs a virtual device `resolve` hot-plugged.
fn remove_vdev(name: &CStr) {
    // SAFETY: both strings are valid for the call; the device's ethdev, if
    // any, is closed.
    let r = unsafe { sys::rte_eal_hotplug_remove(c"vdev".as_ptr(), name.as_ptr()) };
    if r < 0 {
        tracing::debug!(device = ?name, "rte_eal_hotplug_remove: {}", rte_error(r));
    }
}

impl Drop for DpdkPort {
    fn drop(&mut self) {
        // SAFETY: the port was started by `open` and is used by no one else;
        // after close the pools can go (their field drops run next).
        unsafe {
            sys::rte_eth_dev_stop(self.port_id);
            sys::rte_eth_dev_close(self.port_id);
        }
        if let Some(dev) = &self.probed {
            remove_vdev(dev);
        }
    }
}

/// Copies an mbuf chain into `dst`; `None` when it does not fit.
///
/// # Safety
/// `m` must be a valid mbuf chain owned by the caller.
unsafe fn copy_chain(mut m: *mut sys::rte_mbuf, dst: &mut [u8]) -> Option<usize> {
    // SAFETY: m is valid (caller).
    let total = unsafe { sys::ry_rte_pktmbuf_pkt_len(m) } as usize;
    if total > dst.len() {
        return None;
    }
    let mut off = 0;
    while !m.is_null() && off < total {
        // SAFETY: m is a valid segment of the chain; its data is data_len
        // bytes at mtod.
        let seg = unsafe {
            std::slice::from_raw_parts(
                sys::ry_rte_pktmbuf_mtod(m).cast::<u8>(),
                usize::from(sys::ry_rte_pktmbuf_data_len(m)),
            )
        };
        let n = seg.len().min(total - off);
        dst[off..off + n].copy_from_slice(&seg[..n]);
        off += n;
        // SAFETY: as above.
        m = unsafe { sys::ry_rte_pktmbuf_next(m) };
    }
    Some(off)
}

impl Port for DpdkPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        self.refresh_if_due();
        let want = BURST_SIZE - burst.len();
        if want == 0 {
            return 0;
        }
        let mut mbufs = [ptr::null_mut::<sys::rte_mbuf>(); BURST_SIZE];
        // SAFETY: mbufs has room for `want` pointers; queue 0 exists and is
        // used only by this (the owning) thread.
        let got = usize::from(unsafe {
            sys::ry_rte_eth_rx_burst(self.port_id, 0, mbufs.as_mut_ptr(), want as u16)
        });
        let mut n = 0;
        for &m in &mbufs[..got] {
            match pool.alloc() {
                Some(mut pkt) => {
                    let room = pkt.tailroom_mut();
                    let room_len = room.len().min(MAX_FRAME);
                    // SAFETY: m came from rx_burst and is ours until freed.
                    match unsafe { copy_chain(m, &mut room[..room_len]) } {
                        Some(len) => {
                            pkt.set_len(len);
                            pkt.timestamp = now;
                            burst.push(pkt);
                            n += 1;
                        }
                        None => {
                            self.counters.rx_dropped += 1;
                            if !self.warned_oversize {
                                self.warned_oversize = true;
                                tracing::warn!(port = %self.bound, "dropping a frame longer than the largest frame railyard forwards");
                            }
                        }
                    }
                }
                // The pool counts the miss; the frame is lost.
                None => self.counters.rx_dropped += 1,
            }
        }
        if got > 0 {
            // SAFETY: the first `got` entries are mbufs rx_burst gave us, each
            // freed exactly once here.
            unsafe { sys::ry_rte_pktmbuf_free_bulk(mbufs.as_mut_ptr(), got as u32) };
        }
        self.counters.rx_frames += n as u64;
        n
    }

    /// Copies a prefix of `burst` into mbufs and hands them to the driver;
    /// what the driver does not take (its ring is full) stays in `burst`.
    /// Frames no mbuf can hold are dropped and counted in `tx_errors`.
    fn tx_burst(&mut self, burst: &mut Burst, _now: Nanos) -> TxDone {
        let mut done = 0;
        let mut result = TxDone::default();
        while done < burst.len() {
            let pending = burst.len() - done;
            let mut mbufs = [ptr::null_mut::<sys::rte_mbuf>(); BURST_SIZE];
            // SAFETY: mbufs has room for `pending` (<= BURST_SIZE) pointers.
            if unsafe {
                sys::ry_rte_pktmbuf_alloc_bulk(
                    self.tx_pool.ptr(),
                    mbufs.as_mut_ptr(),
                    pending as u32,
                )
            } != 0
            {
                // Transmit pool empty (mbufs still in the driver): retry later.
                break;
            }
            let mut k = 0;
            let mut oversize = false;
            for p in &burst[done..] {
                let m = mbufs[k];
                let data = p.data();
                // SAFETY: m is a fresh single-segment mbuf from our pool.
                let room = usize::from(unsafe { sys::ry_rte_pktmbuf_tailroom(m) });
                if data.len() > room {
                    oversize = true;
                    break;
                }
                // SAFETY: the mbuf's data area has `room` >= data.len() bytes
                // at mtod, and nothing else refers to it.
                unsafe {
                    ptr::copy_nonoverlapping(
                        data.as_ptr(),
                        sys::ry_rte_pktmbuf_mtod(m).cast::<u8>(),
                        data.len(),
                    );
                    sys::ry_rte_pktmbuf_set_len(m, data.len() as u16);
                }
                k += 1;
            }
            // SAFETY: mbufs[..k] are filled mbufs; queue 0 is ours. The
            // driver takes ownership of the first `sent`.
            let sent = usize::from(unsafe {
                sys::ry_rte_eth_tx_burst(self.port_id, 0, mbufs.as_mut_ptr(), k as u16)
            });
            // SAFETY: mbufs[sent..pending] are still ours (unsent or unused),
            // each freed exactly once.
            unsafe {
                sys::ry_rte_pktmbuf_free_bulk(mbufs.as_mut_ptr().add(sent), (pending - sent) as u32)
            };
            done += sent;
            result.sent += sent;
            self.counters.tx_frames += sent as u64;
            if sent < k {
                break;
            }
            if oversize {
                self.counters.tx_errors += 1;
                result.failed += 1;
                result.failed_bytes += burst[done].len() as u64;
                done += 1;
            }
        }
        crate::packet::free_front(burst, done);
        result
    }

    fn link_up(&self) -> bool {
        self.refresh_if_due();
        self.link.get()
    }

    fn mac(&self) -> Option<MacAddr> {
        Some(self.mac)
    }

    fn io_counters(&self) -> IoCounters {
        self.refresh();
        let (rx_drops, tx_errors) = self.driver.get();
        let mut c = self.counters;
        c.rx_dropped += rx_drops;
        c.tx_errors += tx_errors;
        c
    }

    fn describe(&self) -> String {
        if self.bound == self.name {
            format!("dpdk {} (port {})", self.name, self.port_id)
        } else {
            format!("dpdk {} (port {}, {})", self.name, self.port_id, self.bound)
        }
    }
}

impl std::fmt::Debug for DpdkPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpdkPort")
            .field("port_id", &self.port_id)
            .field("name", &self.name)
            .field("mac", &self.mac)
            .field("counters", &self.counters)
            .finish()
    }
}

/// A pair of DPDK rings made into an ethdev with `rte_eth_from_rings`, and
/// the test side of it: what is put in with [`RingDevice::inject`] is what
/// the port receives, and what the port transmits comes out of
/// [`RingDevice::drain`]. For in-process tests and benchmarks.
pub struct RingDevice {
    name: String,
    port_id: u16,
    to_port: NonNull<sys::rte_ring>,
    from_port: NonNull<sys::rte_ring>,
    pool: Mempool,
}

// SAFETY: rings and pools are multi-thread safe DPDK objects; the handle
// only enqueues/dequeues through `&mut self`.
unsafe impl Send for RingDevice {}

impl RingDevice {
    /// Creates the rings (`size` slots, a power of two) and the ethdev `name`.
    ///
    /// # Errors
    /// DPDK could not create the rings, pool or device.
    pub fn create(_eal: &Eal, name: &str, size: u32) -> io::Result<RingDevice> {
        let ring = |dir: &str| -> io::Result<NonNull<sys::rte_ring>> {
            let c = CString::new(format!("{name}_{dir}")).map_err(|_| err("NUL in name"))?;
            // SAFETY: c is a valid name; flags 0: multi-producer/consumer.
            NonNull::new(unsafe { sys::rte_ring_create(c.as_ptr(), size, -1, 0) }).ok_or_else(
                || {
                    err(format!(
                        "rte_ring_create {name}_{dir}: {}",
                        last_rte_error()
                    ))
                },
            )
        };
        let to_port = ring("in")?;
        let from_port = ring("out")?;
        let pool = Mempool::create(
            &format!("{name}_pool"),
            size * 2 - 1,
            0,
            (sys::RTE_PKTMBUF_HEADROOM as usize + MAX_FRAME) as u16,
        )?;
        let c = CString::new(name).map_err(|_| err("NUL in name"))?;
        let rx = [to_port.as_ptr()];
        let tx = [from_port.as_ptr()];
        // SAFETY: the arrays hold one live ring each, which outlive the
        // device (the device is closed before the rings go, in Drop).
        let id = unsafe { sys::rte_eth_from_rings(c.as_ptr(), rx.as_ptr(), 1, tx.as_ptr(), 1, 0) };
        let port_id = u16::try_from(id)
            .map_err(|_| err(format!("rte_eth_from_rings {name}: {}", last_rte_error())))?;
        Ok(RingDevice {
            // The driver prefixes its own name ("net_ring_…").
            name: port_name(port_id).unwrap_or_else(|| name.to_string()),
            port_id,
            to_port,
            from_port,
            pool,
        })
    }

    /// The ethdev's name, for [`DpdkPort::open`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The ethdev's port id.
    pub fn port_id(&self) -> u16 {
        self.port_id
    }

    /// Queues `frame` for the port to receive; false when the ring or the
    /// pool is full (or the frame too long).
    pub fn inject(&mut self, frame: &[u8]) -> bool {
        // SAFETY: the pool is alive.
        let m = unsafe { sys::ry_rte_pktmbuf_alloc(self.pool.ptr()) };
        if m.is_null() {
            return false;
        }
        // SAFETY: m is a fresh single-segment mbuf we own.
        let room = usize::from(unsafe { sys::ry_rte_pktmbuf_tailroom(m) });
        if frame.len() > room {
            // SAFETY: m is ours, freed once.
            unsafe { sys::ry_rte_pktmbuf_free(m) };
            return false;
        }
        // SAFETY: the data area has room for the frame; m is ours.
        unsafe {
            ptr::copy_nonoverlapping(
                frame.as_ptr(),
                sys::ry_rte_pktmbuf_mtod(m).cast(),
                frame.len(),
            );
            sys::ry_rte_pktmbuf_set_len(m, frame.len() as u16);
        }
        let objs = [m.cast::<std::ffi::c_void>()];
        // SAFETY: the ring is alive; on success it owns m.
        if unsafe { sys::ry_rte_ring_enqueue_burst(self.to_port.as_ptr(), objs.as_ptr(), 1) } == 1 {
            true
        } else {
            // SAFETY: not enqueued, still ours.
            unsafe { sys::ry_rte_pktmbuf_free(m) };
            false
        }
    }

    /// Takes every frame the port has transmitted so far.
    pub fn drain(&mut self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let mut objs = [ptr::null_mut::<std::ffi::c_void>(); BURST_SIZE];
            // SAFETY: objs has BURST_SIZE slots; dequeued mbufs become ours.
            let n = unsafe {
                sys::ry_rte_ring_dequeue_burst(
                    self.from_port.as_ptr(),
                    objs.as_mut_ptr(),
                    BURST_SIZE as u32,
                )
            } as usize;
            for &o in &objs[..n] {
                let m = o.cast::<sys::rte_mbuf>();
                let mut buf = vec![0u8; BUF_SIZE];
                // SAFETY: m is a valid mbuf chain we own now.
                if let Some(len) = unsafe { copy_chain(m, &mut buf) } {
                    buf.truncate(len);
                    out.push(buf);
                }
                // SAFETY: ours, freed once.
                unsafe { sys::ry_rte_pktmbuf_free(m) };
            }
            if n < BURST_SIZE {
                return out;
            }
        }
    }

    /// Frames waiting for the port to receive them.
    pub fn pending(&self) -> usize {
        // SAFETY: the ring is alive.
        unsafe { sys::ry_rte_ring_count(self.to_port.as_ptr()) as usize }
    }
}

impl Drop for RingDevice {
    fn drop(&mut self) {
        // Free what is still queued, close the device if no port has, then
        // free the rings (the pool goes last, by field drop).
        let _ = self.drain();
        loop {
            let mut o = ptr::null_mut::<std::ffi::c_void>();
            // SAFETY: the ring is alive; a dequeued mbuf becomes ours.
            if unsafe { sys::ry_rte_ring_dequeue_burst(self.to_port.as_ptr(), &mut o, 1) } == 0 {
                break;
            }
            // SAFETY: ours, freed once.
            unsafe { sys::ry_rte_pktmbuf_free(o.cast()) };
        }
        if port_by_name(&self.name) == Some(self.port_id) {
            // No DpdkPort closed it (one that did has released the port).
            // SAFETY: the device exists and is not started.
            unsafe { sys::rte_eth_dev_close(self.port_id) };
        }
        // SAFETY: the device using the rings is closed; nothing else holds them.
        unsafe {
            sys::rte_ring_free(self.to_port.as_ptr());
            sys::rte_ring_free(self.from_port.as_ptr());
        }
    }
}

impl std::fmt::Debug for RingDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingDevice")
            .field("name", &self.name)
            .field("port_id", &self.port_id)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_in_what_is_missing() {
        let a = Eal::effective_args(&[]);
        assert_eq!(a[0], "railyard");
        for want in DEFAULT_EAL_ARGS {
            assert!(a.iter().any(|x| x == want), "{want} missing from {a:?}");
        }
        assert!(a.windows(2).any(|w| w[0] == "-d" && w[1] == pmd_dir()));
    }

    #[test]
    fn given_arguments_win() {
        let given: Vec<String> = ["-l", "1", "-m", "512", "-d", "/x", "--iova-mode=pa"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let a = Eal::effective_args(&given);
        assert_eq!(a.iter().filter(|x| *x == "-l").count(), 1);
        assert_eq!(a.iter().filter(|x| *x == "-m").count(), 1);
        assert_eq!(a.iter().filter(|x| *x == "-d").count(), 1);
        assert!(!a.iter().any(|x| x == "--iova-mode=va"));
        // Hugepages asked for: no --no-huge added.
        let huge = Eal::effective_args(&["--huge-dir".into(), "/mnt/huge".into()]);
        assert!(!huge.iter().any(|x| x == "--no-huge"));
        assert!(!huge.iter().any(|x| x == "-m"));
    }
}
