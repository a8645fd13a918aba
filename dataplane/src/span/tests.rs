use super::*;

fn spec(id: u8, rx: &[PortId], tx: &[PortId], port: Option<PortId>) -> SessionSpec {
    SessionSpec {
        id,
        rx: rx.to_vec(),
        tx: tx.to_vec(),
        port,
    }
}

#[test]
fn masks_select_sessions_by_port_and_direction() {
    let set = SpanSet::new(
        4,
        &[
            spec(1, &[0], &[0], Some(3)),
            spec(2, &[1], &[], None),
            spec(5, &[], &[0, 1], None),
        ],
    );
    assert_eq!((set.rx_mask(0), set.tx_mask(0)), (0b001, 0b101));
    assert_eq!((set.rx_mask(1), set.tx_mask(1)), (0b010, 0b100));
    assert_eq!((set.rx_mask(2), set.tx_mask(2)), (0, 0));
    assert_eq!(set.rx_mask(99), 0, "a port past the set copies nothing");
    assert!(set.ring(2).is_some() && set.ring(5).is_some());
    assert!(set.ring(1).is_none(), "session 1 sends to a port");
}

#[test]
fn copies_go_to_their_session_and_full_destinations_count_drops() {
    let pool = Pool::new(SPAN_QUEUE + 64);
    let set = SpanSet::new(2, &[spec(1, &[0], &[], Some(1)), spec(2, &[0], &[0], None)]);
    let frame = [0xabu8; 64];
    set.mirror(set.rx_mask(0), 0, Direction::Rx, &frame, 7, &pool);
    set.mirror(set.tx_mask(0), 0, Direction::Tx, &frame[..60], 8, &pool);
    let [one, two] = set.sessions() else {
        panic!("two sessions")
    };
    assert_eq!(one.counters().mirrored, 1);
    assert_eq!(two.counters().mirrored, 2);
    let SpanTarget::Port { queue, .. } = &one.target else {
        panic!("a port session")
    };
    assert_eq!(queue.pop().unwrap().data(), &frame[..]);
    let ring = set.ring(2).unwrap();
    let first = ring.pop().unwrap();
    assert_eq!((first.dir, first.at, first.len), (Direction::Rx, 7, 64));
    let second = ring.pop().unwrap();
    assert_eq!((second.dir, second.at, second.len), (Direction::Tx, 8, 60));

    // The port queue holds SPAN_QUEUE copies; the rest are counted.
    for _ in 0..SPAN_QUEUE + 5 {
        set.mirror(0b01, 0, Direction::Rx, &frame, 9, &pool);
    }
    let c = one.counters();
    assert_eq!(
        (c.mirrored, c.queue_full, c.no_buffer),
        (1 + SPAN_QUEUE as u64, 5, 0)
    );
    // The file ring likewise.
    for _ in 0..SPAN_RING + 3 {
        set.mirror(0b10, 0, Direction::Rx, &frame, 9, &pool);
    }
    let c = two.counters();
    assert_eq!((c.mirrored, c.queue_full), (2 + SPAN_RING as u64, 3));
    assert_eq!(ring.overflow(), 3);
}

#[test]
fn copies_without_a_free_buffer_are_counted() {
    let pool = Pool::new(2);
    let set = SpanSet::new(2, &[spec(1, &[0], &[], Some(1))]);
    for _ in 0..5 {
        set.mirror(1, 0, Direction::Rx, &[1u8; 60], 0, &pool);
    }
    let c = set.sessions()[0].counters();
    assert_eq!(c.mirrored + c.no_buffer, 5);
    assert!(c.no_buffer >= 3, "{c:?}");
}

#[test]
fn the_board_hands_out_the_latest_set() {
    let board = SpanBoard::default();
    assert_eq!(board.generation(), 0);
    assert!(board.current().is_none());
    board.publish(Some(Arc::new(SpanSet::new(1, &[spec(3, &[0], &[], None)]))));
    assert_eq!(board.generation(), 1);
    assert_eq!(board.current().unwrap().sessions()[0].id, 3);
    board.publish(None);
    assert!(board.current().is_none());
}
