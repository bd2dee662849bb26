//! Requests on a descriptor that cannot seek (a pipe, a socket, a
//! terminal) run one at a time, in the order they were started: the bytes
//! of two reads or two writes never interleave.

use super::lock::Mutex;

/// Requests on a pipe, socket or terminal waiting their turn: they run
/// one at a time, in the order they were started (the bytes of two reads
/// or two writes never interleave).
#[derive(Default)]
pub(crate) struct Chain {
    pub(crate) busy: bool,
    /// Each waiting request: its number in the chain, and what starts it
    /// (`true`: its turn) or ends it timed out without I/O (`false`: its
    /// deadline passed while it waited).
    pub(crate) waiting: std::collections::VecDeque<(u64, Turn)>,
    pub(crate) next: u64,
}

pub(crate) type Turn = Box<dyn FnOnce(bool) + Send>;

/// Starts the next request waiting in `c`, or marks it idle.
pub(crate) fn next_in_chain(c: &Mutex<Chain>) {
    let next = {
        let mut g = c.lock();
        match g.waiting.pop_front() {
            Some((_, f)) => Some(f),
            None => {
                g.busy = false;
                None
            }
        }
    };
    if let Some(f) = next {
        in_turn(f);
    }
}

/// Runs `f(true)`, flat: a request that ends at once (its deadline past,
/// or cancelled) starts the next one from its completion, which would
/// otherwise nest one call deeper per waiting request (thousands of them
/// overflowed the reaper's stack). A call made inside another on this
/// thread is queued and run by the outer one's loop.
pub(crate) fn in_turn(f: Turn) {
    use std::cell::RefCell;
    use std::collections::VecDeque;
    thread_local! {
        static QUEUED: RefCell<Option<VecDeque<Turn>>> = const { RefCell::new(None) };
    }
    let first = QUEUED.with(|q| {
        let mut q = q.borrow_mut();
        match q.as_mut() {
            Some(waiting) => {
                waiting.push_back(f);
                None
            }
            None => {
                *q = Some(VecDeque::new());
                Some(f)
            }
        }
    });
    let Some(mut f) = first else {
        return;
    };
    /// Ends the loop's turn on this thread however it ends.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            QUEUED.with(|q| *q.borrow_mut() = None);
        }
    }
    let _reset = Reset;
    loop {
        f(true);
        match QUEUED.with(|q| q.borrow_mut().as_mut().and_then(VecDeque::pop_front)) {
            Some(n) => f = n,
            None => return,
        }
    }
}
