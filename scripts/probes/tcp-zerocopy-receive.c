// tcp-zerocopy-receive.c - loopback TCP copy-avoidance probe (sender x receiver matrix),
// docs/BENCHMARKS.md, "stream: why ttcp --io exchange stays under 1.2× read-write" (2026-11-25, 2909f0a).
//
// Sender modes  (-s): send | zc (MSG_ZEROCOPY) | sendfile
// Receiver modes(-r): recv | zcrx (TCP_ZEROCOPY_RECEIVE) | splice (sock->pipe->/dev/null)
//
// One run = one connection moving -n bytes. Parent = receiver (listener),
// forked child = sender. Prints one "RESULT" line with key=value pairs.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

static const char *smode = "send", *rmode = "recv";
static size_t bufsz = 128 << 10;     /* sender chunk and receiver buffer */
static size_t maplen = 0;            /* zcrx mapping length (default bufsz) */
static uint64_t total = 4ULL << 30;  /* bytes per run */
static int mss = 0;                  /* TCP_MAXSEG value, 0 = leave default */
static int v6 = 0, touch = 0, verify = 0, use_copybuf = 1, rcvlowat = 0;
static int pin_s = -1, pin_r = -1;    /* -P s,r : CPU pinning */
static size_t cblen = 0;             /* zcrx copybuf_len (default bufsz) */
static int nzcbufs = 8;              /* MSG_ZEROCOPY ring size */
static const char *fpath = "/tmp/ferry-zc-probe.bin"; /* sendfile source, made on first use */
static size_t fsize = 256ULL << 20;

static void die(const char *m) { perror(m); exit(1); }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double cpu_self(void)
{
	struct rusage ru; getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}
static double sys_self(void)
{
	struct rusage ru; getrusage(RUSAGE_SELF, &ru);
	return ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* byte at stream offset o == pat[o % bufsz]; pat has 2*bufsz bytes for easy memcmp */
static unsigned char *pat;
static void make_pattern(void)
{
	pat = aligned_alloc(4096, 2 * bufsz);
	for (size_t i = 0; i < bufsz; i++) pat[i] = pat[i + bufsz] = (unsigned char)(i * 131 + (i >> 9) * 7 + 1);
}
static uint64_t verify_bad = 0;
static volatile uint64_t sink;
static void consume(const unsigned char *p, size_t len, uint64_t off)
{
	if (verify) {
		while (len) {
			size_t o = off % bufsz, c = len < bufsz ? len : bufsz;
			if (memcmp(p, pat + o, c)) verify_bad++;
			p += c; len -= c; off += c;
		}
	} else if (touch) {
		const uint64_t *w = (const uint64_t *)p; uint64_t s = 0;
		for (size_t i = 0; i < len / 8; i++) s += w[i];
		sink += s;
	}
}

static int tcpinfo_mss(int fd, int rcv)
{
	struct tcp_info ti; socklen_t l = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l)) return -1;
	return rcv ? ti.tcpi_rcv_mss : ti.tcpi_snd_mss;
}

static void pin(int cpu)
{
	if (cpu < 0) return;
	cpu_set_t c; CPU_ZERO(&c); CPU_SET(cpu, &c);
	if (sched_setaffinity(0, sizeof(c), &c)) die("sched_setaffinity");
}

static void set_mss(int fd)
{
	if (mss && setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss))) die("TCP_MAXSEG");
}

/* ---------------- sender ---------------- */
struct sres { double cpu, sys; uint64_t zc_calls, zc_notif_copied, zc_notif, enobufs; int snd_mss; };

static uint64_t zc_done;  /* number of completed zerocopy send calls (ranges summed) */
static uint64_t zc_copied_cnt, zc_notif_cnt;
static int reap(int fd, int block)
{
	char ctrl[256];
	int got = 0;
	for (;;) {
		struct msghdr msg = { .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };
		if (block && !got) {
			struct pollfd p = { .fd = fd, .events = 0 };
			if (poll(&p, 1, 5000) <= 0) { fprintf(stderr, "zc reap: poll timeout\n"); return -1; }
		}
		int r = recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EAGAIN) { if (block && !got) continue; return got; }
			die("recvmsg errqueue");
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
			      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR))) continue;
			struct sock_extended_err *e = (void *)CMSG_DATA(c);
			if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY) { fprintf(stderr, "errqueue: origin %d errno %d\n", e->ee_origin, e->ee_errno); continue; }
			uint32_t lo = e->ee_info, hi = e->ee_data;
			zc_done += (uint64_t)(hi - lo + 1);
			zc_notif_cnt++;
			if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED) zc_copied_cnt++;
			got++;
		}
	}
}

static void ensure_file(void)
{
	struct stat st;
	if (stat(fpath, &st) == 0 && (size_t)st.st_size == fsize) return;
	int fd = open(fpath, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0) die("open data file");
	for (size_t o = 0; o < fsize; o += bufsz)
		if (write(fd, pat, bufsz) != (ssize_t)bufsz) die("write data file");
	fsync(fd);
	close(fd);
}

static void sender(struct sockaddr *sa, socklen_t sl, int resfd)
{
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
	if (fd < 0) die("socket");
	set_mss(fd);
	int zc = !strcmp(smode, "zc"), sf = !strcmp(smode, "sendfile");
	if (zc) { int one = 1; if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) die("SO_ZEROCOPY"); }
	if (connect(fd, sa, sl)) die("connect");
	struct sres R = { 0 };
	int nb = zc ? nzcbufs : 1;
	unsigned char *bufs = mmap(NULL, nb * bufsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (bufs == MAP_FAILED) die("mmap sendbuf");
	for (int i = 0; i < nb; i++) memcpy(bufs + i * bufsz, pat, bufsz);
	uint64_t *last_id = calloc(nb, sizeof(uint64_t)); /* 1-based id of last zc call using slot */
	int ffd = -1; off_t foff = 0;
	if (sf) { ffd = open(fpath, O_RDONLY); if (ffd < 0) die("open file"); }
	uint64_t sent = 0, calls = 0;
	int slot = 0;
	while (sent < total) {
		size_t want = total - sent < bufsz ? total - sent : bufsz;
		size_t boff = sent % bufsz;  /* keep stream offset == pattern offset */
		if (want > bufsz - boff) want = bufsz - boff;
		ssize_t r;
		if (sf) {
			if ((size_t)foff >= fsize) foff = 0;
			r = sendfile(fd, ffd, &foff, want);
		} else if (zc) {
			if (boff == 0) {
				slot = (slot + 1) % nb;
				while (last_id[slot] && zc_done < last_id[slot]) if (reap(fd, 1) < 0) break;
			}
			r = send(fd, bufs + slot * bufsz + boff, want, MSG_ZEROCOPY);
			if (r < 0 && errno == ENOBUFS) { R.enobufs++; reap(fd, 1); continue; }
			if (r > 0) { calls++; last_id[slot] = calls; }
			reap(fd, 0);
		} else {
			r = send(fd, bufs + boff, want, 0);
		}
		if (r < 0) { if (errno == EINTR) continue; die("send"); }
		sent += r;
	}
	R.snd_mss = tcpinfo_mss(fd, 0);
	if (zc) while (zc_done < calls) if (reap(fd, 1) < 0) break;
	shutdown(fd, SHUT_WR);
	/* wait for receiver to close so all data is acked/consumed */
	char c; while (recv(fd, &c, 1, 0) > 0) ;
	R.cpu = cpu_self(); R.sys = sys_self();
	R.zc_calls = calls; R.zc_notif_copied = zc_copied_cnt; R.zc_notif = zc_notif_cnt;
	if (write(resfd, &R, sizeof(R)) != sizeof(R)) die("write res");
	close(fd);
	_exit(0);
}

/* ---------------- receiver ---------------- */
int main(int argc, char **argv)
{
	int o;
	while ((o = getopt(argc, argv, "s:r:b:c:n:m:6tvCL:z:F:K:P:")) != -1) {
		switch (o) {
		case 's': smode = optarg; break;
		case 'r': rmode = optarg; break;
		case 'b': bufsz = strtoul(optarg, NULL, 0) << 10; break;
		case 'c': maplen = strtoul(optarg, NULL, 0) << 10; break;
		case 'n': total = strtoull(optarg, NULL, 0) << 20; break;
		case 'm': mss = atoi(optarg); break;
		case '6': v6 = 1; break;
		case 't': touch = 1; break;
		case 'v': verify = 1; break;
		case 'C': use_copybuf = 0; break;
		case 'L': rcvlowat = atoi(optarg); break;
		case 'z': nzcbufs = atoi(optarg); break;
		case 'K': cblen = strtoul(optarg, NULL, 0); break;
		case 'P': sscanf(optarg, "%d,%d", &pin_s, &pin_r); break;
		case 'F': fsize = strtoull(optarg, NULL, 0) << 20; break;
		default: fprintf(stderr, "usage: zc -s send|zc|sendfile -r recv|zcrx|splice [-b KiB] [-c mapKiB] [-n MiB] [-m mss] [-6] [-t touch] [-v verify] [-C no copybuf] [-K copybuf bytes] [-L rcvlowat] [-z nbufs] [-F fileMiB] [-P sndcpu,rcvcpu]\n"); return 2;
		}
	}
	if (!maplen) maplen = bufsz;
	if (!cblen || cblen > bufsz) cblen = bufsz;
	if (fsize % bufsz) fsize = (fsize / bufsz + 1) * bufsz;
	make_pattern();
	if (!strcmp(smode, "sendfile")) ensure_file();

	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	if (v6) { struct sockaddr_in6 *a = (void *)&ss; a->sin6_family = AF_INET6; a->sin6_addr = in6addr_loopback; sl = sizeof(*a); }
	else { struct sockaddr_in *a = (void *)&ss; a->sin_family = AF_INET; a->sin_addr.s_addr = htonl(INADDR_LOOPBACK); sl = sizeof(*a); }
	int lfd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (lfd < 0) die("socket");
	int one = 1; setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	set_mss(lfd);
	if (bind(lfd, (void *)&ss, sl)) die("bind");
	if (listen(lfd, 1)) die("listen");
	getsockname(lfd, (void *)&ss, &sl);

	int rp[2]; if (pipe(rp)) die("pipe");
	pid_t pid = fork();
	if (pid == 0) { pin(pin_s); close(rp[0]); close(lfd); sender((void *)&ss, sl, rp[1]); }
	close(rp[1]);
	pin(pin_r);

	int fd = accept(lfd, NULL, NULL);
	if (fd < 0) die("accept");
	if (rcvlowat && setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &rcvlowat, sizeof(rcvlowat))) die("SO_RCVLOWAT");
	double c0 = cpu_self(), s0 = sys_self(), t0 = now();

	unsigned char *buf = mmap(NULL, bufsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) die("mmap rcvbuf");
	uint64_t got = 0, mapped = 0, copied = 0, calls = 0, skiprecv = 0, cbcopied = 0, emptycalls = 0;
	int zc_errno = 0, zc_err_field = 0, rcv_mss = -1;

	if (!strcmp(rmode, "recv")) {
		while (got < total) {
			ssize_t r = recv(fd, buf, bufsz, 0);
			if (r < 0) { if (errno == EINTR) continue; die("recv"); }
			if (r == 0) break;
			consume(buf, r, got);
			got += r; copied += r;
		}
	} else if (!strcmp(rmode, "splice")) {
		int p[2]; if (pipe(p)) die("pipe");
		if (fcntl(p[1], F_SETPIPE_SZ, (int)bufsz) < 0) perror("F_SETPIPE_SZ");
		int dn = open("/dev/null", O_WRONLY);
		while (got < total) {
			ssize_t r = splice(fd, NULL, p[1], NULL, bufsz, SPLICE_F_MOVE);
			if (r < 0) { if (errno == EINTR) continue; die("splice in"); }
			if (r == 0) break;
			ssize_t left = r;
			while (left > 0) {
				ssize_t w = splice(p[0], NULL, dn, NULL, left, SPLICE_F_MOVE);
				if (w <= 0) die("splice out");
				left -= w;
			}
			got += r;
		}
	} else if (!strcmp(rmode, "zcrx")) {
		unsigned char *map = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) die("mmap socket");
		while (got < total) {
			struct tcp_zerocopy_receive zc;
			memset(&zc, 0, sizeof(zc));
			zc.address = (uintptr_t)map;
			zc.length = maplen;
			if (use_copybuf) { zc.copybuf_address = (uintptr_t)buf; zc.copybuf_len = cblen; }
			socklen_t zl = sizeof(zc);
			calls++;
			if (getsockopt(fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &zl)) {
				if (!zc_errno) { zc_errno = errno; fprintf(stderr, "TCP_ZEROCOPY_RECEIVE: %s (errno %d)\n", strerror(errno), errno); }
				if (errno == EINTR || errno == EAGAIN) continue;
				/* fall back to plain recv for the rest */
				ssize_t r = recv(fd, buf, bufsz, 0);
				if (r <= 0) break;
				consume(buf, r, got); got += r; copied += r; continue;
			}
			if (zc.err && !zc_err_field) { zc_err_field = zc.err; fprintf(stderr, "zc.err=%d\n", zc.err); }
			if (zc.length) { consume(map, zc.length, got); got += zc.length; mapped += zc.length; }
			if (use_copybuf && zc.copybuf_len > 0) { consume(buf, zc.copybuf_len, got); got += zc.copybuf_len; cbcopied += zc.copybuf_len; copied += zc.copybuf_len; }
			else if (use_copybuf && zc.copybuf_len < 0 && !zc_err_field) { zc_err_field = zc.copybuf_len; fprintf(stderr, "copybuf_len err %d\n", zc.copybuf_len); }
			uint32_t skip = zc.recv_skip_hint;
			while (skip) {
				size_t w = skip < bufsz ? skip : bufsz;
				ssize_t r = recv(fd, buf, w, 0);
				if (r <= 0) die("recv skip");
				consume(buf, r, got); got += r; copied += r; skiprecv += r; skip -= r;
			}
			if (!zc.length && !zc.recv_skip_hint && !(use_copybuf && zc.copybuf_len > 0)) {
				emptycalls++;
				struct pollfd p = { .fd = fd, .events = POLLIN };
				if (poll(&p, 1, 10000) <= 0) { fprintf(stderr, "poll timeout got=%llu\n", (unsigned long long)got); break; }
				if (p.revents & (POLLHUP | POLLERR)) { char c; if (recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0) break; }
			}
		}
		munmap(map, maplen);
	} else if (!strcmp(rmode, "errs")) {
		/* probe error codes of the zerocopy-receive API, then drain with recv() */
		struct { const char *what; int prot, flags; size_t off; int anon; } t[] = {
			{ "mmap PROT_READ|PROT_WRITE MAP_SHARED", PROT_READ | PROT_WRITE, MAP_SHARED, 0, 0 },
			{ "mmap PROT_READ MAP_PRIVATE", PROT_READ, MAP_PRIVATE, 0, 0 },
			{ "getsockopt on anonymous (non-socket) VMA", PROT_READ, MAP_SHARED, 0, 1 },
			{ "getsockopt on address+100 (unaligned)", PROT_READ, MAP_SHARED, 100, 0 },
		};
		usleep(200000);
		for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			void *m = t[i].anon ? mmap(NULL, maplen, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
					    : mmap(NULL, maplen, t[i].prot, t[i].flags, fd, 0);
			if (m == MAP_FAILED) { printf("ERRS %s: mmap -> %s (errno %d)\n", t[i].what, strerror(errno), errno); continue; }
			struct tcp_zerocopy_receive zc; memset(&zc, 0, sizeof(zc));
			zc.address = (uintptr_t)m + t[i].off; zc.length = maplen - 4096;
			socklen_t zl = sizeof(zc);
			int r = getsockopt(fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &zl);
			printf("ERRS %s: mmap ok, getsockopt -> %d %s (errno %d) length=%u skip=%u inq=%u err=%d\n", t[i].what, r,
			       r ? strerror(errno) : "ok", r ? errno : 0, zc.length, zc.recv_skip_hint, zc.inq, zc.err);
			if (!r) got += zc.length;
			if (!r && zc.recv_skip_hint) { ssize_t q = recv(fd, buf, zc.recv_skip_hint < bufsz ? zc.recv_skip_hint : bufsz, 0); if (q > 0) got += q; }
			munmap(m, maplen);
		}
		{	/* nonzero reserved field, and an oversized optlen */
			void *m = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, 0);
			struct { struct tcp_zerocopy_receive z; char pad[64]; } big; memset(&big, 0, sizeof(big));
			big.z.address = (uintptr_t)m; big.z.length = maplen; big.z.reserved = 1;
			socklen_t zl = sizeof(big.z);
			int r = getsockopt(fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &big.z, &zl);
			printf("ERRS reserved=1: getsockopt -> %d %s (errno %d)\n", r, r ? strerror(errno) : "ok", r ? errno : 0);
			if (!r) got += big.z.length;
			memset(&big, 0, sizeof(big)); big.z.address = (uintptr_t)m; big.z.length = maplen; big.pad[0] = 1;
			zl = sizeof(big);
			r = getsockopt(fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &big, &zl);
			printf("ERRS optlen=%u (> struct, nonzero tail): getsockopt -> %d %s (errno %d)\n", zl, r, r ? strerror(errno) : "ok", r ? errno : 0);
			if (!r) got += big.z.length;
			munmap(m, maplen);
		}
		while (got < total) { ssize_t r = recv(fd, buf, bufsz, 0); if (r <= 0) break; got += r; }
	} else { fprintf(stderr, "bad -r\n"); return 2; }

	double t1 = now();
	rcv_mss = tcpinfo_mss(fd, 1);
	double rc = cpu_self() - c0, rs = sys_self() - s0;
	close(fd);
	struct sres R;
	if (read(rp[0], &R, sizeof(R)) != sizeof(R)) die("read res");
	waitpid(pid, NULL, 0);
	double gib = got / (double)(1ULL << 30);
	printf("RESULT pin=%d,%d snd=%s rcv=%s buf=%zuK map=%zuK mss=%d v6=%d touch=%d gbps=%.3f secs=%.3f snd_cpu_per_gib=%.4f snd_sys_per_gib=%.4f rcv_cpu_per_gib=%.4f rcv_sys_per_gib=%.4f"
	       " cb=%zu bytes=%llu mapped_frac=%.4f copied_frac=%.4f cbcopied=%llu skiprecv=%llu zccalls=%llu empty=%llu zc_errno=%d zc_err=%d"
	       " snd_mss=%d rcv_mss=%d zc_sends=%llu zc_notif=%llu zc_notif_copied=%llu enobufs=%llu verify_bad=%llu\n",
	       pin_s, pin_r, smode, rmode, bufsz >> 10, maplen >> 10, mss, v6, touch || verify, got / (t1 - t0) / 1e9, t1 - t0,
	       R.cpu / gib, R.sys / gib, rc / gib, rs / gib, use_copybuf ? cblen : 0,
	       (unsigned long long)got, got ? mapped / (double)got : 0, got ? copied / (double)got : 0,
	       (unsigned long long)cbcopied, (unsigned long long)skiprecv, (unsigned long long)calls, (unsigned long long)emptycalls,
	       zc_errno, zc_err_field, R.snd_mss, rcv_mss, (unsigned long long)R.zc_calls, (unsigned long long)R.zc_notif,
	       (unsigned long long)R.zc_notif_copied, (unsigned long long)R.enobufs, (unsigned long long)verify_bad);
	return 0;
}
