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

/// How a test's channels carry descriptors: through rings in shared
/// memory (the default) or as packets on the socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Ring,
    Socket,
}

impl Transport {
    fn ring(self) -> bool {
        self == Transport::Ring
    }

    /// The transport a peer process was started with (`Peer::start`).
    fn from_env() -> Transport {
        match std::env::var("FERRY_IPC_TRANSPORT").as_deref() {
            Ok("socket") => Transport::Socket,
            _ => Transport::Ring,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Transport::Ring => "ring",
            Transport::Socket => "socket",
        }
    }
}

/// A test that runs once on each transport: `NAME::ring` and
/// `NAME::socket`.
macro_rules! on_both_transports {
    ($(#[$m:meta])* fn $name:ident($t:ident: Transport) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            fn run($t: crate::Transport) $body
            $(#[$m])*
            #[test]
            fn ring() {
                run(crate::Transport::Ring)
            }
            $(#[$m])*
            #[test]
            fn socket() {
                run(crate::Transport::Socket)
            }
        }
    };
}

/// A channel within this process: a sender with a pool of `slots` slots
/// of `slot_size` bytes, and its receiver.
fn channel(
    slot_size: usize,
    slots: usize,
    transport: Transport,
) -> (ferry::ipc::Sender, ferry::ipc::Receiver) {
    let (a, b) = ferry::ipc::pair().unwrap();
    let tx = ferry::ipc::Sender::new(
        a,
        ferry::ipc::SenderConfig {
            slot_size,
            slots,
            ring: transport.ring(),
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
mod forked;
mod model;
mod pipe_offer;
mod processes;
mod rings;
mod sent_from_the_pool;
mod stopped_receiver;
mod waiting;
