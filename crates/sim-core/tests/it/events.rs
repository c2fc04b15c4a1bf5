use sim_core::SimTime;
use sim_core::event::{EventClass, EventQueue};

#[test]
fn order_is_time_then_class_then_sequence() {
    let mut q = EventQueue::new();
    q.schedule(SimTime(10), EventClass::JobArrival, "arr-10-a");
    q.schedule(SimTime(10), EventClass::JobEnd, "end-10-a");
    q.schedule(SimTime(5), EventClass::JobArrival, "arr-5");
    q.schedule(SimTime(10), EventClass::Controller, "node-10");
    q.schedule(SimTime(10), EventClass::JobEnd, "end-10-b");
    q.schedule(SimTime(10), EventClass::JobArrival, "arr-10-b");
    let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
    assert_eq!(order, ["arr-5", "end-10-a", "end-10-b", "node-10", "arr-10-a", "arr-10-b"]);
}

#[test]
fn cancelled_events_are_skipped() {
    let mut q = EventQueue::new();
    let a = q.schedule(SimTime(1), EventClass::JobEnd, 1);
    q.schedule(SimTime(2), EventClass::JobEnd, 2);
    q.cancel(a);
    assert_eq!(q.peek_key().map(|k| k.time), Some(SimTime(2)));
    assert_eq!(q.pop().map(|(_, e)| e), Some(2));
    assert!(q.pop().is_none());
    assert!(q.is_empty());
}
