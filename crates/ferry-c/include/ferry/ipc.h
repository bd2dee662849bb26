/*
 * ferry/ipc.h — buffers passed by reference between processes.
 *
 * A sender owns a pool of buffers in a sealed memfd and sends it once to
 * its receiver over a Unix SOCK_SEQPACKET socket; from then on a message
 * is a list of places in the pool, and the receiver reads the sender's
 * pages in place (mapped read-only: nobody but the sender can write
 * them, and it writes a slot again only once the receiver gave it back).
 *
 *     // receiver                          // sender
 *     fy_ipc_listener *l =                 int s = fy_ipc_connect("name");
 *         fy_ipc_listen("name");           fy_ipc_sender *tx =
 *     int s = fy_ipc_accept(l, -1);            fy_ipc_sender_open(s, 0, 0);
 *     fy_ipc_receiver *rx =                fy_ipc_send(tx, "hello", 5);
 *         fy_ipc_receiver_open(s);         fy_ipc_sender_close(tx);
 *     const void *p;
 *     ssize_t n;
 *     while ((n = fy_ipc_recv(rx, &p)) > 0) {
 *         use(p, n);                       // the sender's pages, no copy
 *         fy_ipc_release(rx, p);           // its slot may be reused
 *     }
 *     fy_ipc_receiver_close(rx);
 *
 * Names are abstract Unix socket names: no file in any file system, gone
 * with the process, so kill -9 of either side leaves nothing behind. A
 * pair made by fy_ipc_pair suits a child made by fork.
 *
 *   fy_ipc_pair(sv)          two connected sockets (close-on-exec) in
 *       sv[0], sv[1]; 0, or -1 with errno.
 *   fy_ipc_listen(name)      listens on the abstract name; NULL + errno
 *       (EADDRINUSE: the name is taken; EINVAL: NULL or empty name).
 *   fy_ipc_accept(l, ms)     the next connection's descriptor, waiting at
 *       most ms milliseconds (negative: for ever); -1 + errno (ETIMEDOUT).
 *   fy_ipc_listener_close(l) closes the listener.
 *   fy_ipc_connect(name)     a descriptor connected to the name; -1 +
 *       errno (ECONNREFUSED: nobody listens).
 *   fy_ipc_sender_open(sock, slot_size, slots)   the sending end on sock
 *       (taken over, closed on failure too); slot_size and slots 0 take
 *       the defaults (64 KiB, 64). Sends the pool. NULL + errno.
 *   fy_ipc_send(tx, buf, n)  one message of n bytes (at most slot_size
 *       times slots), copied into the pool and passed by reference;
 *       waits for free slots as long as the receiver lives. n, or -1 +
 *       errno (EPIPE: the receiver went away).
 *   fy_ipc_sender_close(tx)  an orderly close (the receiver gets 0 after
 *       what was sent) and frees tx; 0, or -1 + errno (freed anyway).
 *   fy_ipc_receiver_open(sock)   the receiving end on sock (taken over,
 *       closed on failure too): waits for the pool, checks its seals and
 *       size, maps it read-only. NULL + errno. The peer must be a ferry
 *       sender (fy_ipc_sender, or ferry::ipc::Sender): a buffer's bytes
 *       stay as received because that sender writes a slot again only
 *       once it is released, and nothing else may write on its socket.
 *   fy_ipc_recv(rx, &p)      the next buffer: *p points at its bytes in
 *       the pool (read-only; valid until released), the return value is
 *       its length. 0 at the end (the sender closed; *p NULL); -1 + errno
 *       (EIO: the sender went away without closing — buffers held stay
 *       valid; EINVAL: it broke the protocol).
 *   fy_ipc_release(rx, p)    gives a buffer back (p as fy_ipc_recv gave
 *       it); 0, or -1 + EINVAL for anything else.
 *   fy_ipc_receiver_close(rx)    frees rx and every buffer still held.
 *
 * A handle is used by one thread at a time. No call lets a Rust panic
 * through: a bug inside ferry is -1 (or NULL) with ENOMEM.
 */
#ifndef FERRY_IPC_H
#define FERRY_IPC_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct FyIpcListener fy_ipc_listener;
typedef struct FyIpcSender fy_ipc_sender;
typedef struct FyIpcReceiver fy_ipc_receiver;

int fy_ipc_pair(int sv[2]);
fy_ipc_listener *fy_ipc_listen(const char *name);
int fy_ipc_accept(fy_ipc_listener *l, int timeout_ms);
void fy_ipc_listener_close(fy_ipc_listener *l);
int fy_ipc_connect(const char *name);
fy_ipc_sender *fy_ipc_sender_open(int sock, size_t slot_size, size_t slots);
ssize_t fy_ipc_send(fy_ipc_sender *tx, const void *buf, size_t n);
int fy_ipc_sender_close(fy_ipc_sender *tx);
fy_ipc_receiver *fy_ipc_receiver_open(int sock);
ssize_t fy_ipc_recv(fy_ipc_receiver *rx, const void **bufp);
int fy_ipc_release(fy_ipc_receiver *rx, const void *buf);
void fy_ipc_receiver_close(fy_ipc_receiver *rx);

#ifdef __cplusplus
}
#endif

#endif
