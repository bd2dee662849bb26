//! Helper threads for the exchanges that block — a CGI process, its
//! pipes and its exit — as Flash's helpers took the blocking disk
//! operations off its event loop. Threads are made as tasks need them,
//! up to [`MAX_THREADS`], and end after a minute without work.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Helper threads at most (the server's, all workers together); a task
/// past them waits for one to be free.
pub(crate) const MAX_THREADS: usize = 64;

/// Tasks waiting at most; past them [`Helpers::run`] refuses (503).
const MAX_WAITING: usize = 1024;

const IDLE_END: Duration = Duration::from_secs(60);

type Task = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    tasks: VecDeque<Task>,
    threads: usize,
    /// Threads waiting for a task.
    idle: usize,
    /// Of those, how many were woken for a task and have not taken it
    /// yet (so that a burst of tasks does not count one idle thread for
    /// each of them).
    woken: usize,
}

/// The server's helper threads.
#[derive(Clone, Default)]
pub(crate) struct Helpers(Arc<(Mutex<State>, Condvar)>);

impl Helpers {
    /// Runs `task` on a helper thread; false if too many wait already.
    pub(crate) fn run(&self, task: impl FnOnce() + Send + 'static) -> bool {
        let (lock, cv) = &*self.0;
        let mut st = lock.lock().unwrap_or_else(|p| p.into_inner());
        if st.tasks.len() >= MAX_WAITING {
            return false;
        }
        st.tasks.push_back(Box::new(task));
        if st.idle > st.woken {
            st.woken += 1;
            cv.notify_one();
            return true;
        }
        if st.threads < MAX_THREADS {
            let me = self.clone();
            let spawned = std::thread::Builder::new()
                .name("ferry-serve-helper".into())
                .spawn(move || me.serve());
            if spawned.is_ok() {
                st.threads += 1;
            } else if st.threads == 0 {
                // No thread to run it, ever: refuse it now.
                st.tasks.pop_back();
                return false;
            }
        }
        true
    }

    fn serve(self) {
        let (lock, cv) = &*self.0;
        let mut st = lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(task) = st.tasks.pop_front() {
                drop(st);
                // A task that panics ends this thread's turn only.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task));
                st = lock.lock().unwrap_or_else(|p| p.into_inner());
                continue;
            }
            st.idle += 1;
            let (next, waited) = cv
                .wait_timeout(st, IDLE_END)
                .unwrap_or_else(|p| p.into_inner());
            st = next;
            st.idle -= 1;
            st.woken = st.woken.saturating_sub(1);
            if waited.timed_out() && st.tasks.is_empty() {
                st.threads -= 1;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn tasks_past_the_thread_count_wait_and_all_run() {
        let h = Helpers::default();
        let (tx, rx) = mpsc::channel();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        for i in 0..MAX_THREADS + 10 {
            let tx = tx.clone();
            let gate = gate.clone();
            assert!(h.run(move || {
                let (m, c) = &*gate;
                let mut open = m.lock().unwrap();
                while !*open {
                    open = c.wait(open).unwrap();
                }
                tx.send(i).unwrap();
            }));
        }
        assert_eq!(h.0 .0.lock().unwrap().threads, MAX_THREADS);
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        let mut got: Vec<usize> = (0..MAX_THREADS + 10).map(|_| rx.recv().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, (0..MAX_THREADS + 10).collect::<Vec<_>>());
    }

    #[test]
    fn tasks_one_after_another_reuse_one_thread() {
        let h = Helpers::default();
        for i in 0..20 {
            let (tx, rx) = mpsc::channel();
            assert!(h.run(move || tx.send(i).unwrap()));
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), i);
            // Let the thread go back to waiting.
            let t = std::time::Instant::now();
            while h.0 .0.lock().unwrap().idle == 0 && t.elapsed() < Duration::from_secs(5) {
                std::thread::yield_now();
            }
        }
        assert_eq!(h.0 .0.lock().unwrap().threads, 1);
    }

    #[test]
    fn a_panicking_task_leaves_the_helpers_working() {
        let h = Helpers::default();
        assert!(h.run(|| panic!("a task's own failure")));
        let (tx, rx) = mpsc::channel();
        assert!(h.run(move || tx.send(7).unwrap()));
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), 7);
    }
}
