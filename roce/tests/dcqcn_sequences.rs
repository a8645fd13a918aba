//! DCQCN against sequences computed by hand: the computation is written
//! beside each expectation, so a change of rounding or of a rule shows up as
//! a number that no longer matches its arithmetic.
//!
//! Notation: α in 1/1024; a cut is RC − ⌊RC·α / 2^rpg_gd⌋; an increase sets
//! RC = ⌈(RT + RC)/2⌉; rates in bit/s; times in µs unless said.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod dcqcn {
    use railyard_roce::dcqcn::{DcqcnParams, NotificationPoint, ReactionPoint, Section};

    const US: u64 = 1_000;
    const G100: u64 = 100_000_000_000;

    /// Parameters that isolate the cut: α starts at 512 (½), the α period
    /// is 10 µs and G = 512 (each period with a CNP: α = α/2 + 512), no
    /// increase within the test (timer 100 ms, byte counter off) and no
    /// min_dec_fac floor.
    fn cut_params() -> DcqcnParams {
        let mut p = DcqcnParams::default();
        p.set("initial_alpha_value", 512).unwrap();
        p.set("dce_tcp_g", 512).unwrap();
        p.set("dce_tcp_rtt", 10).unwrap();
        p.set("rpg_time_reset", 100_000).unwrap();
        p.set("rpg_byte_reset", 0).unwrap();
        p.set("rpg_min_dec_fac", 0).unwrap();
        p
    }

    #[test]
    fn defaults_are_connectx() {
        let p = DcqcnParams::default();
        let want = [
            ("min_time_between_cnps", 4),
            ("cnp_dscp", 48),
            ("cnp_802p_prio", 6),
            ("clamp_tgt_rate", 0),
            ("clamp_tgt_rate_after_time_inc", 1),
            ("rpg_time_reset", 300),
            ("rpg_byte_reset", 32_767),
            ("rpg_threshold", 1),
            ("rpg_max_rate", 0),
            ("rpg_ai_rate", 5),
            ("rpg_hai_rate", 50),
            ("rpg_gd", 11),
            ("rpg_min_dec_fac", 50),
            ("rpg_min_rate", 1),
            ("rate_to_set_on_first_cnp", 0),
            ("dce_tcp_g", 1019),
            ("dce_tcp_rtt", 1),
            ("rate_reduce_monitor_period", 4),
            ("initial_alpha_value", 1023),
        ];
        for (name, v) in want {
            assert_eq!(p.get(name), Some(v), "{name}");
        }
        assert_eq!(p.entries().len(), want.len());
        assert_eq!(p.cnp_dscp(), 48);
        assert_eq!(p.cnp_priority(), 6);
        assert_eq!(p.min_time_between_cnps_ns(), 4_000);
    }

    #[test]
    fn default_first_cut_halves_the_rate() {
        // α = 1023: dec = ⌊100e9·1023/2048⌋ = 49_951_171_875 (100e9/2048 =
        // 48_828_125 exactly, ×1023); RC = 50_048_828_125, above the 50 %
        // floor of rpg_min_dec_fac.
        let mut rp = ReactionPoint::new(&DcqcnParams::default(), G100);
        assert_eq!(rp.next_timer(), None);
        rp.on_cnp(0);
        assert_eq!(rp.rate_bps(), 50_048_828_125);
        assert_eq!(rp.target_rate_bps(), G100);
        assert_eq!(rp.stats().min_dec_fac_hits, 0);
    }

    #[test]
    fn rate_after_k_cnps() {
        // CNPs at 0, 10, 20, 30, 40 µs, each at an α update instant, so
        // the cut at t uses the α updated at t:
        //   k=1: α=512           RC = 100e9 − 100e9·512/2048   = 75_000_000_000
        //   k=2: α=512/2+512=768 RC = 75e9 − 75e9·768/2048     = 46_875_000_000
        //   k=3: α=768/2+512=896 RC = 46.875e9·(1 − 896/2048)  = 26_367_187_500
        //   k=4: α=960  dec = ⌊26_367_187_500·960/2048⌋ = 12_359_619_140
        //        RC = 14_007_568_360
        //   k=5: α=992  dec = ⌊14_007_568_360·992/2048⌋ = 6_784_915_924
        //        RC = 7_222_652_436
        let want = [
            (512, 75_000_000_000u64),
            (768, 46_875_000_000),
            (896, 26_367_187_500),
            (960, 14_007_568_360),
            (992, 7_222_652_436),
        ];
        let mut rp = ReactionPoint::new(&cut_params(), G100);
        for (k, (alpha, rate)) in want.iter().enumerate() {
            rp.on_cnp(k as u64 * 10 * US);
            assert_eq!(rp.alpha(), *alpha, "α at CNP {}", k + 1);
            assert_eq!(rp.rate_bps(), *rate, "rate after CNP {}", k + 1);
        }
        let s = rp.stats();
        assert_eq!((s.cnps, s.cuts, s.limiters_allocated), (5, 5, 1));
        assert_eq!(s.min_rate_bps, 7_222_652_436);
        // No increase happened, so the target never moved (no clamp).
        assert_eq!(rp.target_rate_bps(), G100);
    }

    #[test]
    fn alpha_decays_without_cnps() {
        // G = 512, period 1 µs, α₀ = 1023, one CNP at 0 (it counts for the
        // first period): t=1: ⌊1023·512/1024⌋ + 512 = 511 + 512 = 1023;
        // then halving: 511, 255, 127, 63, 31, 15, 7, 3, 1, 0 at t=11.
        let mut p = cut_params();
        p.set("dce_tcp_rtt", 1).unwrap();
        p.set("initial_alpha_value", 1023).unwrap();
        let mut rp = ReactionPoint::new(&p, G100);
        rp.on_cnp(0);
        let want = [1023, 511, 255, 127, 63, 31, 15, 7, 3, 1, 0];
        for (i, a) in want.iter().enumerate() {
            rp.on_time((i as u64 + 1) * US);
            assert_eq!(rp.alpha(), *a, "α at {} µs", i + 1);
        }
        // α at 0 needs no timer; only the (far) increase timer remains.
        assert_eq!(rp.next_timer(), Some(100_000 * US));
    }

    #[test]
    fn alpha_decays_with_the_default_gain() {
        // G = 1019 (g = 5/1024), period 1 µs, α₀ = 1023, CNP at 0:
        // t=1: ⌊1023·1019/1024⌋ + 5 = ⌊1018.005⌋ + 5 = 1023
        // t=2: ⌊1023·1019/1024⌋ = 1018; t=3: ⌊1018·1019/1024⌋ = ⌊1013.03⌋ = 1013
        // t=4: ⌊1013·1019/1024⌋ = ⌊1008.05⌋ = 1008
        let mut rp = ReactionPoint::new(&DcqcnParams::default(), G100);
        rp.on_cnp(0);
        for (t, a) in [(1, 1023), (2, 1018), (3, 1013), (4, 1008)] {
            rp.on_time(t * US);
            assert_eq!(rp.alpha(), a, "α at {t} µs");
        }
        // Jumping far ahead runs every period: α reaches 0 and stops.
        rp.on_time(100 * US);
        assert!(rp.alpha() < 1008);
    }

    #[test]
    fn fast_recovery_then_additive_increase_on_the_timer() {
        // Threshold F = 3, timer 100 µs, byte counter off, α = 512 fixed.
        // CNP at 0: RC = 75e9, RT = 100e9.
        // 100: T=1 ≤ 3 FR: RC = (100e9 + 75e9)/2      = 87_500_000_000
        // 200: T=2 FR:     RC = (100e9 + 87.5e9)/2    = 93_750_000_000
        // 300: T=3 FR:     RC = (100e9 + 93.75e9)/2   = 96_875_000_000
        // 400: T=4 > 3, B=0: AI: RT = min(100e9 + 5e6, line) = 100e9,
        //                  RC = (100e9 + 96.875e9)/2  = 98_437_500_000
        let mut p = cut_params();
        p.set("dce_tcp_rtt", 131_071).unwrap();
        p.set("rpg_time_reset", 100).unwrap();
        p.set("rpg_threshold", 3).unwrap();
        let mut rp = ReactionPoint::new(&p, G100);
        rp.on_cnp(0);
        assert_eq!(rp.rate_bps(), 75_000_000_000);
        assert_eq!(rp.next_timer(), Some(100 * US));
        for (t, rate) in [
            (100, 87_500_000_000u64),
            (200, 93_750_000_000),
            (300, 96_875_000_000),
            (400, 98_437_500_000),
        ] {
            rp.on_time(t * US);
            assert_eq!(rp.rate_bps(), rate, "rate at {t} µs");
        }
        let s = rp.stats();
        assert_eq!(
            (s.fast_recovery, s.additive_increase, s.hyper_increase),
            (3, 1, 0)
        );
        assert_eq!(s.timer_events, 4);
    }

    /// α = 512 fixed, clamp_tgt_rate on, F = 1, timer 100 µs; CNPs at 0 and
    /// 10 µs: first RT = 100e9 → RC = 75e9; second RT = RC = 75e9 (clamp),
    /// RC = 75e9 − 75e9·512/2048 = 56_250_000_000; the timer restarts at 10
    /// and fires at 110, 210, 310...
    fn two_cuts(byte_reset: u32) -> ReactionPoint {
        let mut p = cut_params();
        p.set("dce_tcp_rtt", 131_071).unwrap();
        p.set("rpg_time_reset", 100).unwrap();
        p.set("rpg_threshold", 1).unwrap();
        p.set("clamp_tgt_rate", 1).unwrap();
        p.set("rpg_byte_reset", byte_reset).unwrap();
        let mut rp = ReactionPoint::new(&p, G100);
        rp.on_cnp(0);
        rp.on_cnp(10 * US);
        assert_eq!(rp.target_rate_bps(), 75_000_000_000);
        assert_eq!(rp.rate_bps(), 56_250_000_000);
        rp
    }

    #[test]
    fn additive_increase_raises_the_target() {
        // 110: T=1 ≤ 1 FR: RC = (75e9 + 56.25e9)/2 = 65_625_000_000
        // 210: T=2 > 1, B=0: AI: RT = 75_005_000_000,
        //      RC = (75_005_000_000 + 65_625_000_000)/2 = 70_315_000_000
        // 310: AI: RT = 75_010_000_000, RC = (75.01e9 + 70.315e9)/2 = 72_662_500_000
        let mut rp = two_cuts(0);
        for (t, rt, rc) in [
            (110, 75_000_000_000u64, 65_625_000_000u64),
            (210, 75_005_000_000, 70_315_000_000),
            (310, 75_010_000_000, 72_662_500_000),
        ] {
            rp.on_time(t * US);
            assert_eq!((rp.target_rate_bps(), rp.rate_bps()), (rt, rc), "at {t} µs");
        }
        let s = rp.stats();
        assert_eq!((s.fast_recovery, s.additive_increase), (1, 2));
    }

    #[test]
    fn byte_counter_and_hyper_increase() {
        // Byte counter every 1000 bytes, F = 1, AI 5 Mb/s, HAI 50 Mb/s.
        //  20 µs, 1000 B: B=1,T=0 hi ≤ 1 FR: RC = (75e9+56.25e9)/2 = 65_625_000_000
        //  30 µs, 1000 B: B=2,T=0 AI: RT = 75_005_000_000, RC = 70_315_000_000
        // 110 µs timer:   T=1,B=2 lo=1 ≤ 1 AI: RT = 75_010_000_000, RC = 72_662_500_000
        // 210 µs timer:   T=2,B=2 lo=2 > 1 hyper i=1: RT = 75_060_000_000,
        //                 RC = (75.06e9 + 72.6625e9)/2 = 73_861_250_000
        // 220 µs, 1000 B: B=3,T=2 lo=2 hyper i=1: RT = 75_110_000_000,
        //                 RC = (75.11e9 + 73.86125e9)/2 = 74_485_625_000
        // 310 µs timer:   T=3,B=3 lo=3 hyper i=2: RT = 75_210_000_000,
        //                 RC = (75.21e9 + 74.485625e9)/2 = 74_847_812_500
        let mut rp = two_cuts(1000);
        let steps: [(u64, Option<u64>, u64, u64); 6] = [
            (20, Some(1000), 75_000_000_000, 65_625_000_000),
            (30, Some(1000), 75_005_000_000, 70_315_000_000),
            (110, None, 75_010_000_000, 72_662_500_000),
            (210, None, 75_060_000_000, 73_861_250_000),
            (220, Some(1000), 75_110_000_000, 74_485_625_000),
            (310, None, 75_210_000_000, 74_847_812_500),
        ];
        for (t, bytes, rt, rc) in steps {
            match bytes {
                Some(b) => rp.on_sent(t * US, b),
                None => rp.on_time(t * US),
            }
            assert_eq!((rp.target_rate_bps(), rp.rate_bps()), (rt, rc), "at {t} µs");
        }
        let s = rp.stats();
        assert_eq!((s.byte_events, s.timer_events), (3, 3));
        assert_eq!(
            (s.fast_recovery, s.additive_increase, s.hyper_increase),
            (1, 2, 3)
        );
    }

    #[test]
    fn byte_counter_counts_partial_sends_and_a_cut_resets_it() {
        // 2500 B = two events and 500 B left over; a cut clears the 500, so
        // 600 B more make no event (without the reset they would: 1100).
        let mut rp = two_cuts(1000);
        rp.on_sent(20 * US, 2500);
        assert_eq!(rp.stats().byte_events, 2);
        rp.on_cnp(30 * US);
        rp.on_sent(31 * US, 600);
        assert_eq!(rp.stats().byte_events, 2);
        rp.on_sent(32 * US, 400);
        assert_eq!(rp.stats().byte_events, 3);
    }

    #[test]
    fn min_rate_floor() {
        // 10 Gb/s line, rpg_min_rate 4000 Mb/s, α = 1023 held (period far).
        // CNP 1: dec = ⌊10e9·1023/2048⌋ = 4_995_117_187, RC = 5_004_882_813.
        // CNP 2 at 10 µs: dec = ⌊5_004_882_813·1023/2048⌋ = 2_499_997_616,
        //        RC would be 2_504_885_197 < 4e9: floor at 4_000_000_000.
        let mut p = cut_params();
        p.set("initial_alpha_value", 1023).unwrap();
        p.set("dce_tcp_rtt", 131_071).unwrap();
        p.set("rpg_min_rate", 4000).unwrap();
        let mut rp = ReactionPoint::new(&p, 10_000_000_000);
        rp.on_cnp(0);
        assert_eq!(rp.rate_bps(), 5_004_882_813);
        rp.on_cnp(10 * US);
        assert_eq!(rp.rate_bps(), 4_000_000_000);
        rp.on_cnp(20 * US);
        assert_eq!(rp.rate_bps(), 4_000_000_000);
        let s = rp.stats();
        assert_eq!((s.min_rate_floor_hits, s.min_rate_bps), (2, 4_000_000_000));
    }

    #[test]
    fn min_dec_fac_bounds_a_cut() {
        // rpg_min_dec_fac 80: RC·(1 − 1023/2048) ≈ 0.5·RC is raised to 0.8·RC.
        let mut p = DcqcnParams::default();
        p.set("rpg_min_dec_fac", 80).unwrap();
        let mut rp = ReactionPoint::new(&p, G100);
        rp.on_cnp(0);
        assert_eq!(rp.rate_bps(), 80_000_000_000);
        assert_eq!(rp.stats().min_dec_fac_hits, 1);
        // 100 % forbids cuts altogether.
        p.set("rpg_min_dec_fac", 100).unwrap();
        let mut rp = ReactionPoint::new(&p, G100);
        rp.on_cnp(0);
        assert_eq!(rp.rate_bps(), G100);
    }

    #[test]
    fn rate_to_set_on_first_cnp() {
        // 20000 Mb/s on the first CNP: RC = RT = 20e9, no α cut; a second
        // CNP (after the 4 µs monitor period) cuts from there.
        let mut p = DcqcnParams::default();
        p.set("rate_to_set_on_first_cnp", 20_000).unwrap();
        p.set("dce_tcp_rtt", 131_071).unwrap();
        let mut rp = ReactionPoint::new(&p, G100);
        rp.on_cnp(0);
        assert_eq!(
            (rp.rate_bps(), rp.target_rate_bps()),
            (20e9 as u64, 20e9 as u64)
        );
        // 20e9 − ⌊20e9·1023/2048⌋ = 20e9 − 9_990_234_375 = 10_009_765_625
        rp.on_cnp(10 * US);
        assert_eq!(rp.rate_bps(), 10_009_765_625);
    }

    #[test]
    fn cnps_inside_the_monitor_period_make_one_cut_at_its_end() {
        // Monitor period 4 µs: CNPs at 0, 1, 2 µs → cut at 0, one cut at 4.
        let mut rp = ReactionPoint::new(&cut_params(), G100);
        rp.on_cnp(0);
        rp.on_cnp(US);
        rp.on_cnp(2 * US);
        assert_eq!(rp.rate_bps(), 75_000_000_000);
        assert_eq!(rp.next_timer(), Some(4 * US));
        rp.on_time(4 * US - 1);
        assert_eq!(rp.stats().cuts, 1);
        rp.on_time(4 * US);
        // Second cut with α still 512 (α period 10 µs): 75e9·(1 − 1/4).
        assert_eq!(rp.rate_bps(), 56_250_000_000);
        let s = rp.stats();
        assert_eq!((s.cnps, s.cuts, s.cnps_deferred), (3, 2, 2));
    }

    #[test]
    fn limiter_released_at_line_rate_then_reallocated() {
        // 10 Gb/s, α = 512: RC = 7.5e9; F = 5 fast-recovery steps and the
        // capped additive steps bring RC to the line rate (⌈⌉ makes it
        // arrive), where the limiter is released and no timer remains.
        let mut p = cut_params();
        p.set("rpg_time_reset", 10).unwrap();
        p.set("rpg_threshold", 5).unwrap();
        let line = 10_000_000_000;
        let mut rp = ReactionPoint::new(&p, line);
        rp.on_cnp(0);
        assert_eq!(rp.rate_bps(), 7_500_000_000);
        let mut t = 0;
        while rp.is_limited() && t < 10_000 * US {
            t = rp.next_timer().unwrap();
            rp.on_time(t);
        }
        assert!(!rp.is_limited());
        assert_eq!(rp.rate_bps(), line);
        assert_eq!(rp.next_timer(), None);
        let s = rp.stats();
        assert_eq!((s.limiters_allocated, s.limiters_released), (1, 1));
        // 7.5e9 → 8.75, 9.375, 9.6875, 9.84375, 9.921875 (FR); the gap then
        // halves (rounding up) each event: 2^29 > 78_125_000 > 2^26, so
        // about 27 more events.
        assert!(s.fast_recovery == 5 && s.additive_increase > 20);
        // A new CNP is a first CNP again: α back to its initial value.
        rp.on_cnp(t + US);
        assert_eq!(rp.alpha(), 512);
        assert_eq!(rp.rate_bps(), 7_500_000_000);
        assert_eq!(rp.stats().limiters_allocated, 2);
    }

    #[test]
    fn extreme_values_do_not_panic() {
        let mut p = DcqcnParams::default();
        p.set("rpg_gd", 0).unwrap(); // cut factor α/1: may exceed the rate
        p.set("rpg_min_dec_fac", 0).unwrap();
        p.set("rpg_hai_rate", 1_000_000).unwrap();
        p.set("rpg_byte_reset", 1).unwrap();
        let mut rp = ReactionPoint::new(&p, u64::MAX);
        assert_eq!(rp.rate_bps(), railyard_roce::dcqcn::MAX_LINE_BPS);
        rp.on_cnp(0);
        assert_eq!(rp.rate_bps(), 1_000_000); // floored at rpg_min_rate
        rp.on_sent(1, u64::MAX);
        rp.on_time(u64::MAX - 1);
        rp.on_cnp(u64::MAX);
        let mut rp = ReactionPoint::new(&p, 0);
        rp.on_cnp(5);
        rp.on_time(3); // time going backwards
        assert!(rp.rate_bps() >= 1);
    }

    #[test]
    fn np_paces_cnps_per_queue_pair() {
        // min_time_between_cnps 4 µs: CE at 0 → CNP; at 1 and 3.999 µs
        // (inside the gap) → none; at 4 → CNP; at 5 → none; at 8 → CNP.
        let p = DcqcnParams::default();
        let mut np = NotificationPoint::new();
        let sent: Vec<bool> = [0, US, 4 * US - 1, 4 * US, 5 * US, 8 * US]
            .into_iter()
            .map(|t| np.on_ce(t, &p))
            .collect();
        assert_eq!(sent, [true, false, false, true, false, true]);
        let s = np.stats();
        assert_eq!((s.ce_seen, s.cnps, s.ce_coalesced), (6, 3, 3));
        // Another queue pair has its own clock.
        let mut other = NotificationPoint::new();
        assert!(other.on_ce(US, &p));
        // A gap of 0 answers every CE mark.
        let p0 = DcqcnParams::parse("min_time_between_cnps 0", "t").unwrap();
        assert!(np.on_ce(8 * US, &p0));
    }

    #[test]
    fn parse_overrides_on_defaults() {
        let text = "# tuning for the incast\n\
                    rpg_time_reset 100\n\
                    \troce_rp.rpg_ai_rate   20   # a comment\n\
                    \n\
                    roce_np.cnp_dscp 46\n";
        let p = DcqcnParams::parse(text, "cc.conf").unwrap();
        assert_eq!(p.rpg_time_reset, 100);
        assert_eq!(p.rpg_ai_rate, 20);
        assert_eq!(p.cnp_dscp(), 46);
        assert_eq!(p.rpg_hai_rate, 50); // untouched default
        assert_eq!(DcqcnParams::parse("", "e").unwrap(), DcqcnParams::default());
    }

    #[test]
    fn parse_unknown_name_suggests_the_closest() {
        let e = DcqcnParams::parse("rpg_ai_rate 10\nrpg_time_rest 100\n", "cc.conf").unwrap_err();
        assert_eq!(
            e,
            "cc.conf:2:1: error: unknown DCQCN parameter `rpg_time_rest`\n\
             \x20  2 | rpg_time_rest 100\n\
             \x20    | ^^^^^^^^^^^^^\n\
             \x20  = hint: did you mean `rpg_time_reset`?"
        );
        let e = DcqcnParams::parse("bogus 1", "x").unwrap_err();
        assert!(
            e.contains("names are the files of /sys/class/net/IF/ecn"),
            "{e}"
        );
    }

    #[test]
    fn parse_bad_value_states_unit_and_range() {
        let e = DcqcnParams::parse("  rpg_gd 99", "cc.conf").unwrap_err();
        assert!(
            e.starts_with("cc.conf:1:10: error: invalid value `99` for `rpg_gd`"),
            "{e}"
        );
        assert!(e.contains("\n     |          ^^\n"), "{e}");
        assert!(e.contains("is in shift"), "{e}");
        assert!(e.contains("0–15"), "{e}");
        let e = DcqcnParams::parse("rpg_min_rate -1", "f").unwrap_err();
        assert!(e.starts_with("f:1:14: error: invalid value `-1`"), "{e}");
        assert!(e.contains("Mb/s") && e.contains("1–1000000"), "{e}");
    }

    #[test]
    fn parse_structure_errors() {
        let e = DcqcnParams::parse("roce_np.rpg_gd 3", "f").unwrap_err();
        assert!(
            e.starts_with("f:1:1: error: `rpg_gd` is not in `roce_np`"),
            "{e}"
        );
        assert!(e.contains("hint: write `roce_rp.rpg_gd`"), "{e}");
        let e = DcqcnParams::parse("cnp_dscp", "f").unwrap_err();
        assert!(
            e.starts_with("f:1:9: error: `cnp_dscp` needs a value"),
            "{e}"
        );
        let e = DcqcnParams::parse("cnp_dscp 48 49", "f").unwrap_err();
        assert!(
            e.starts_with("f:1:13: error: unexpected text after the value"),
            "{e}"
        );
        let e = DcqcnParams::parse("cnp_dscp 48\nroce_np.cnp_dscp 40", "f").unwrap_err();
        assert!(
            e.starts_with("f:2:1: error: `cnp_dscp` is set twice"),
            "{e}"
        );
        assert!(e.contains("first set on line 1"), "{e}");
        // Every error is reported, not only the first.
        let e = DcqcnParams::parse("rpg_gd 99\nnope 1\nrpg_gd 3", "f").unwrap_err();
        assert!(e.contains("f:1:8:") && e.contains("f:2:1:"), "{e}");
        assert_eq!(e.matches(": error: ").count(), 2, "{e}");
    }

    #[test]
    fn override_file_round_trips_through_entries() {
        let mut p = DcqcnParams::default();
        p.set("rpg_time_reset", 55).unwrap();
        p.set("rpg_threshold", 5).unwrap();
        p.set("dce_tcp_g", 1020).unwrap();
        p.set("cnp_802p_prio", 3).unwrap();
        // A file written from entries() reads back to the same parameters.
        let text: String = p
            .entries()
            .iter()
            .map(|e| format!("{}.{} {}\n", e.section.name(), e.name, e.value))
            .collect();
        let back = DcqcnParams::parse(&text, "dump").unwrap();
        assert_eq!(back, p);
        assert_eq!(back.entries(), p.entries());
        // So does the commented template.
        assert_eq!(DcqcnParams::parse(&p.to_override_file(), "tpl").unwrap(), p);
        let e = p.entries();
        let np = e.iter().filter(|e| e.section == Section::RoceNp).count();
        assert_eq!(np, 3);
        assert!(e.iter().all(|e| e.min <= e.default && e.default <= e.max));
        assert!(e
            .iter()
            .all(|e| !e.unit.is_empty() && !e.meaning.is_empty()));
    }

    #[test]
    fn set_rejects_unknown_names_and_out_of_range_values() {
        let mut p = DcqcnParams::default();
        let e = p.set("rpg_hia_rate", 1).unwrap_err();
        assert!(e.contains("did you mean `rpg_hai_rate`?"), "{e}");
        assert!(p.set("cnp_dscp", 64).is_err());
        assert_eq!(p, DcqcnParams::default());
    }
}
