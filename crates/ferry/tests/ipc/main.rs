//! Copy-free channels between processes (`ferry::ipc`): real processes
//! (this binary runs itself as the peer), kill -9 of either side, hostile
//! peers, and a model of the reference counts. One test binary; each
//! module holds the tests of one behaviour.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

/// Tests that make pools, and those that check none is left in this
/// process (`processes`), run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// A channel within this process: a sender with a pool of `slots` slots
/// of `slot_size` bytes, and its receiver.
fn channel(slot_size: usize, slots: usize) -> (ferry::ipc::Sender, ferry::ipc::Receiver) {
    let (a, b) = ferry::ipc::pair().unwrap();
    let tx = ferry::ipc::Sender::new(
        a,
        ferry::ipc::SenderConfig {
            slot_size,
            slots,
            ..Default::default()
        },
    )
    .unwrap();
    // SAFETY: the peer is the ferry Sender just made, and nothing else
    // writes on its socket.
    let rx = unsafe { ferry::ipc::Receiver::new(b, None) }.unwrap();
    (tx, rx)
}

mod closing;
mod cut_short;
mod model;
mod processes;
mod sent_from_the_pool;
mod waiting;
