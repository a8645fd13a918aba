//! Tests of the packet buffers and their pool.

use super::*;

#[test]
fn copies_of_every_length_are_exact_and_touch_nothing_else() {
    let src: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
    for n in 0..=300 {
        let mut dst = vec![0u8; n + 8];
        copy_bytes(&mut dst[4..4 + n], &src[..n]);
        assert_eq!(&dst[4..4 + n], &src[..n], "length {n}");
        assert!(
            dst[..4].iter().chain(&dst[4 + n..]).all(|b| *b == 0),
            "length {n}"
        );
    }
}

#[test]
fn set_frame_refuses_a_frame_past_the_buffer() {
    let pool = Pool::new(2);
    let mut pkt = pool.alloc_from(&[1, 2, 3]).unwrap();
    assert!(!pkt.set_frame(&vec![9; BUF_SIZE - HEADROOM + 1]));
    assert_eq!(pkt.data(), &[1, 2, 3]);
    assert!(pkt.set_frame(&vec![9; BUF_SIZE - HEADROOM]));
    assert_eq!(pkt.len(), BUF_SIZE - HEADROOM);
    assert!(pool.alloc_from(&vec![0; MAX_FRAME + 1]).is_none());
}

#[test]
fn what_the_egress_side_reads_is_in_the_first_cache_line() {
    use std::mem::offset_of;
    let egress = [
        offset_of!(Buffer, pool),
        offset_of!(Buffer, head),
        offset_of!(Buffer, len),
        offset_of!(Buffer, next),
        offset_of!(Buffer, info.timestamp),
        offset_of!(Buffer, info.in_port),
        offset_of!(Buffer, info.meta.kind),
        offset_of!(Buffer, info.meta.out_port),
        offset_of!(Buffer, info.meta.l3_offset),
        offset_of!(Buffer, info.meta.qos_group),
        offset_of!(Buffer, info.meta.lossless),
        offset_of!(Buffer, info.meta.pfc_priority),
        offset_of!(Buffer, info.meta.ecn),
        offset_of!(Buffer, info.meta.l3_len),
    ];
    assert!(egress.iter().all(|o| *o < 64), "{egress:?}");
    assert_eq!(offset_of!(Buffer, data) % 64, 0);
}

#[test]
fn buffers_return_to_the_pool_on_drop() {
    let pool = Pool::new(2);
    let a = pool.alloc_from(&[1, 2, 3]).unwrap();
    let b = pool.alloc().unwrap();
    assert_eq!(pool.available(), 0);
    assert!(pool.alloc().is_none());
    assert_eq!(pool.exhausted(), 1);
    assert_eq!(a.data(), &[1, 2, 3]);
    drop(a);
    drop(b);
    assert_eq!(pool.available(), 2);
    assert!(pool.alloc().is_some());
}

#[test]
fn a_pool_lends_buffers_given_back_before_touching_new_ones() {
    let pool = Pool::new(4096);
    // Several threads' worth of churn, a few packets held at a time.
    for round in 0..10_000 {
        let held: Vec<PacketBuf> = (0..1 + round % 7).map(|_| pool.alloc().unwrap()).collect();
        drop(held);
    }
    let std::thread::Result::Ok(()) = std::thread::spawn({
        let pool = pool.clone();
        move || {
            for _ in 0..1_000 {
                drop(pool.alloc().unwrap());
            }
        }
    })
    .join() else {
        panic!("the other thread failed");
    };
    // Each thread's cache carved one burst from the slab; nothing more.
    let carved = pool.shared.fresh.load(Ordering::Relaxed);
    assert_eq!(carved, 2 * BURST_SIZE, "carved {carved}");
    // Every buffer can still be lent, carved or not.
    let all: Vec<PacketBuf> = (0..4096).map_while(|_| pool.alloc()).collect();
    assert_eq!(all.len(), 4096);
    assert!(pool.alloc().is_none());
    let distinct: std::collections::HashSet<usize> = all.iter().map(|p| p.hint().0).collect();
    assert_eq!(distinct.len(), 4096);
}

#[test]
fn a_thread_that_only_takes_reuses_what_a_trimming_thread_frees() {
    // The LLDP agent's pattern: one thread builds frames, a worker sends
    // and frees them, trimming its cache at every publication.
    let pool = Pool::new(1 << 16);
    let (tx, rx) = std::sync::mpsc::sync_channel::<PacketBuf>(4);
    let worker = std::thread::spawn({
        let pool = pool.clone();
        move || {
            for (i, pkt) in rx.into_iter().enumerate() {
                drop(pkt);
                if i % 10 == 9 {
                    pool.trim_cache(Pool::TRIM_KEEP);
                }
            }
        }
    });
    for _ in 0..20_000 {
        tx.send(pool.alloc_from(&[0u8; 60]).unwrap()).unwrap();
    }
    drop(tx);
    worker.join().unwrap();
    // Fresh buffers are touched only until the worker's first trims come
    // back round: a few bursts, not one per frame or a cache's worth.
    let carved = pool.shared.fresh.load(Ordering::Relaxed);
    assert!(
        carved <= Pool::TRIM_KEEP + 4 * BURST_SIZE,
        "carved {carved} buffers for 20,000 frames"
    );
    // Trimming lost nothing.
    assert_eq!(pool.available(), 1 << 16);
}

#[test]
fn buffers_freed_on_another_thread_come_back() {
    let pool = Pool::new(64);
    let pkts: Vec<PacketBuf> = (0..64).map(|_| pool.alloc().unwrap()).collect();
    assert!(pool.alloc().is_none());
    std::thread::spawn(move || drop(pkts)).join().unwrap();
    // The other thread's cache returned its buffers when it ended.
    let again: Vec<PacketBuf> = (0..64).map(|_| pool.alloc().unwrap()).collect();
    assert_eq!(again.len(), 64);
    assert_eq!(pool.available(), 0);
}

#[test]
fn a_dropped_pool_is_freed_even_after_a_thread_cached_its_buffers() {
    let pool = Pool::new(16);
    drop(pool.alloc());
    let weak = Arc::downgrade(&pool.shared);
    drop(pool);
    assert_eq!(
        weak.strong_count(),
        0,
        "the thread cache kept the pool alive"
    );
    // A new pool on the same thread works and prunes the dead cache.
    let again = Pool::new(4);
    assert!(again.alloc().is_some());
}

#[test]
fn a_thread_taking_what_it_returns_leaves_the_shared_count_alone() {
    let pool = Pool::new(1024);
    let in_use = || pool.shared.in_use.load(Ordering::Relaxed);
    let mut burst = Burst::new();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..100 {
        assert_eq!(pool.alloc_burst(&mut burst, BURST_SIZE), BURST_SIZE);
        seen.insert(in_use());
        assert_eq!(pool.available(), 1024 - BURST_SIZE);
        free_burst(&mut burst);
        seen.insert(in_use());
        assert_eq!(pool.available(), 1024);
    }
    // One batch counted on the first burst, then never touched again.
    assert_eq!(seen.len(), 1, "{seen:?}");
    // Handing buffers from one thread to another moves a batch at a time.
    let pkts: Vec<PacketBuf> = (0..600).map(|_| pool.alloc().unwrap()).collect();
    assert_eq!(pool.available(), 1024 - 600);
    std::thread::scope(|s| {
        s.spawn(|| drop(pkts));
    });
    assert_eq!(pool.available(), 1024);
}

#[test]
fn the_last_packet_home_frees_a_pool_without_handles() {
    use std::sync::mpsc::channel;
    let pool = Pool::new(64);
    let weak = Arc::downgrade(&pool.shared);
    let kept = pool.alloc_from(&[7; 60]).unwrap();
    let other = pool.clone();
    let (to_thread, packets) = channel::<PacketBuf>();
    let (done, finished) = channel::<()>();
    let (quit, told) = channel::<()>();
    let (dropped, handle_gone) = channel::<()>();
    let t = std::thread::spawn(move || {
        // This thread's cache takes credit on the pool and keeps it
        // while the thread lives; it frees the last packet after every
        // handle is gone.
        drop(other.alloc().unwrap());
        drop(other);
        dropped.send(()).unwrap();
        drop(packets.recv().unwrap());
        done.send(()).unwrap();
        told.recv().unwrap();
    });
    handle_gone.recv().unwrap();
    // The last handle: this thread's cache lets go at once.
    drop(pool);
    assert!(weak.strong_count() > 0, "a packet is still out");
    to_thread.send(kept).unwrap();
    finished.recv().unwrap();
    let alive = weak.strong_count();
    quit.send(()).unwrap();
    t.join().unwrap();
    assert_eq!(alive, 0, "a live thread's credit kept the pool");
}

#[test]
fn buffers_passed_around_threads_all_come_home() {
    use std::sync::mpsc::channel;
    const THREADS: usize = 4;
    let pool = Pool::new(512);
    let weak = Arc::downgrade(&pool.shared);
    // A ring of threads: each allocates bursts, passes them on, and
    // frees what it is passed, so loans and returns land on different
    // threads' credit all the time.
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..THREADS).map(|_| channel::<Vec<PacketBuf>>()).unzip();
    let mut rxs = rxs.into_iter().map(Some).collect::<Vec<_>>();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let pool = pool.clone();
            let next = txs[(t + 1) % THREADS].clone();
            let rx = rxs[t].take().unwrap();
            std::thread::spawn(move || {
                for round in 0..200 {
                    let mut burst = Burst::new();
                    pool.alloc_burst(&mut burst, 1 + (round * 7 + t) % BURST_SIZE);
                    let _ = next.send(burst.drain(..).collect());
                    while let Ok(pkts) = rx.try_recv() {
                        drop(pkts);
                    }
                }
                drop(next);
                // Free whatever is still on the way here.
                for pkts in rx {
                    drop(pkts);
                }
            })
        })
        .collect();
    drop(txs);
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(pool.available(), 512, "every buffer is home");
    assert_eq!(
        pool.shared.in_use.load(Ordering::Relaxed),
        0,
        "no thread holds credit"
    );
    drop(pool);
    assert_eq!(weak.strong_count(), 0, "the pool is freed");
}

#[test]
fn a_busy_thread_reuses_the_same_hot_buffers() {
    let pool = Pool::new(1024);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..1000 {
        let p = pool.alloc().unwrap();
        seen.insert(p.data().as_ptr() as usize);
    }
    assert_eq!(seen.len(), 1, "the cache cycles {} buffers", seen.len());
}

#[test]
fn bursts_are_allocated_and_freed_in_one_go() {
    let pool = Pool::new(40);
    let other = Pool::new(4);
    let mut burst = Burst::new();
    burst.push(other.alloc().unwrap());
    assert_eq!(pool.alloc_burst(&mut burst, 100), BURST_SIZE - 1);
    assert_eq!(burst.len(), BURST_SIZE);
    assert!(burst[1..]
        .iter()
        .all(|p| p.len() == 0 && p.capacity() == BUF_SIZE - HEADROOM));
    assert_eq!(pool.available(), 40 - 31);
    assert_eq!(other.available(), 3);
    free_front(&mut burst, 3);
    assert_eq!(burst.len(), BURST_SIZE - 3);
    assert_eq!((pool.available(), other.available()), (40 - 29, 4));
    free_burst(&mut burst);
    assert!(burst.is_empty());
    assert_eq!((pool.available(), other.available()), (40, 4));
    // Fewer buffers than asked for: what there is, and one miss counted.
    let small = Pool::new(5);
    assert_eq!(small.alloc_burst(&mut burst, 8), 5);
    assert_eq!(small.exhausted(), 1);
    assert_eq!(small.alloc_burst(&mut burst, 8), 0);
    free_burst(&mut burst);
    assert_eq!(small.available(), 5);
}

#[test]
fn headroom_push_and_pull() {
    let pool = Pool::new(1);
    let mut p = pool.alloc_from(&[9; 20]).unwrap();
    assert!(p.push_front(4));
    assert_eq!(p.len(), 24);
    assert!(p.pull_front(4));
    assert_eq!(p.data(), &[9; 20]);
    assert!(!p.pull_front(21));
    assert!(!p.push_front(HEADROOM + 1));
    assert!(pool.alloc_from(&vec![0; MAX_FRAME + 1]).is_none());
}
