//! One timer thread per process for deadlines that no backend watches:
//! a request on a pipe or socket waiting its turn behind another (it has
//! no entry in the ring and no worker yet). Made at first use, and anew
//! in a child after `fork` (the parent's thread is not there).

use super::lock::{Condvar, Mutex};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Due {
    heap: BinaryHeap<Reverse<(Instant, u64)>>,
    jobs: HashMap<u64, Job>,
    next: u64,
}

struct Timer {
    due: Mutex<Due>,
    more: Condvar,
    pid: u32,
}

/// Runs `job` on the timer thread at `when` (at once if it has passed).
/// If the thread cannot be started, `job` runs now.
pub(crate) fn at(when: Instant, job: Job) {
    let Some(t) = timer() else {
        job();
        return;
    };
    let mut d = t.due.lock();
    d.next += 1;
    let id = d.next;
    d.heap.push(Reverse((when, id)));
    d.jobs.insert(id, job);
    drop(d);
    t.more.notify_one();
}

fn timer() -> Option<&'static Timer> {
    static TIMER: Mutex<Option<&'static Timer>> = Mutex::new(None);
    let mut g = TIMER.lock();
    let me = std::process::id();
    if let Some(t) = *g {
        if t.pid == me {
            return Some(t);
        }
    }
    let t: &'static Timer = Box::leak(Box::new(Timer {
        due: Mutex::new(Due::default()),
        more: Condvar::new(),
        pid: me,
    }));
    std::thread::Builder::new()
        .name("ferry-aio-timer".into())
        .spawn(move || run(t))
        .ok()?;
    *g = Some(t);
    Some(t)
}

fn run(t: &'static Timer) {
    let mut d = t.due.lock();
    loop {
        let Some(&Reverse((when, id))) = d.heap.peek() else {
            d = t.more.wait(d);
            continue;
        };
        if Instant::now() < when {
            d = t.more.wait_until(d, when).0;
            continue;
        }
        d.heap.pop();
        let job = d.jobs.remove(&id);
        drop(d);
        if let Some(job) = job {
            // A panic in a job is kept from the timer thread.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        }
        d = t.due.lock();
    }
}
