/* ferry/sort.h: records by an unsigned big-endian key (stable; reversed;
 * unique), in memory and through runs on disk; lines by their bytes
 * against qsort; input from a pipe; and the errors (bad descriptors,
 * sizes, flags, a partial record, a missing temporary directory). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ferry/sort.h>

#include "check.h"

#define SIZE 16
#define N 200003

static unsigned char recs[N * SIZE];
static unsigned char out[N * SIZE];

static uint32_t key_of(const unsigned char *r)
{
    return (uint32_t)r[4] << 24 | (uint32_t)r[5] << 16 | (uint32_t)r[6] << 8 | r[7];
}

static uint32_t index_of(const unsigned char *r)
{
    uint32_t i;
    memcpy(&i, r + 8, 4);
    return i;
}

/* Records with keys from a small range (many equal) and their index. */
static void make_records(void)
{
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = 0; i < N; i++) {
        unsigned char *r = recs + (size_t)i * SIZE;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint32_t k = (uint32_t)(x % 5000) * 100003u;
        memset(r, 0xEE, SIZE);
        r[4] = k >> 24;
        r[5] = k >> 16;
        r[6] = k >> 8;
        r[7] = k;
        memcpy(r + 8, &i, 4);
    }
}

static void write_file(const char *name, const void *data, size_t len)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, data, len) == (ssize_t)len);
    CHECK(close(fd) == 0);
}

/* The whole of `name` into buf; its length. */
static size_t read_file(const char *name, void *buf, size_t cap)
{
    int fd = open(name, O_RDONLY);
    CHECK(fd >= 0);
    size_t got = 0;
    ssize_t n;
    while ((n = read(fd, (char *)buf + got, cap - got)) > 0)
        got += (size_t)n;
    CHECK(n == 0);
    close(fd);
    return got;
}

/* Sorts file `in` into file `o` by bytes 4..8; the output's length. */
static size_t sort_records(const char *in, const char *o, unsigned flags, uint64_t budget)
{
    int i = open(in, O_RDONLY), w = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(i >= 0 && w >= 0);
    CHECK(fy_sort_records(i, w, SIZE, 4, 4, flags, budget, ".") == 0);
    /* The input's offset is at its end, as read(2) would leave it. */
    CHECK(lseek(i, 0, SEEK_CUR) == (off_t)N * SIZE);
    close(i);
    close(w);
    return read_file(o, out, sizeof out);
}

static void records(void)
{
    make_records();
    write_file("recs", recs, sizeof recs);
    /* 0: the default budget (in memory); 1 MiB: about ten runs. */
    uint64_t budgets[] = {0, 1 << 20};
    for (int b = 0; b < 2; b++) {
        CHECK(sort_records("recs", "sorted", 0, budgets[b]) == sizeof recs);
        for (size_t i = 1; i < N; i++) {
            const unsigned char *p = out + (i - 1) * SIZE, *r = out + i * SIZE;
            CHECK(key_of(p) <= key_of(r));
            if (key_of(p) == key_of(r))
                CHECK(index_of(p) < index_of(r)); /* stable */
        }
        size_t n = sort_records("recs", "sorted", FY_SORT_REVERSE | FY_SORT_UNIQUE, budgets[b]);
        CHECK(n % SIZE == 0 && n < sizeof recs);
        for (size_t i = 1; i < n / SIZE; i++)
            CHECK(key_of(out + (i - 1) * SIZE) > key_of(out + i * SIZE));
        /* Each kept record is the first of its key in the input. */
        for (size_t i = 0; i < n / SIZE; i++) {
            uint32_t k = key_of(out + i * SIZE), first = index_of(out + i * SIZE);
            for (uint32_t j = 0; j < first; j++)
                CHECK(key_of(recs + (size_t)j * SIZE) != k);
        }
    }
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct feed {
    int fd;
    const char *data;
    size_t len;
};

static void *feeder(void *arg)
{
    struct feed *f = arg;
    CHECK(write(f->fd, f->data, f->len) == (ssize_t)f->len);
    close(f->fd);
    return NULL;
}

/* Lines from a pipe, the last without its newline, through runs (a
 * 192 KiB budget), against qsort of the same lines. */
static void lines(void)
{
    enum { L = 50000 };
    static char text[L * 16], copy[L * 16], want[L * 16], got[L * 16 + 1];
    static char *ptrs[L];
    size_t len = 0;
    for (int i = 0; i < L; i++) {
        ptrs[i] = copy + len;
        int n = sprintf(copy + len, "%u", (unsigned)(i * 2654435761u) % 100000u);
        memcpy(text + len, copy + len, (size_t)n);
        text[len + (size_t)n] = '\n';
        len += (size_t)n + 1;
    }
    qsort(ptrs, L, sizeof ptrs[0], cmp_lines);
    size_t w = 0;
    for (int i = 0; i < L; i++)
        w += (size_t)sprintf(want + w, "%s\n", ptrs[i]);
    int p[2];
    CHECK(pipe(p) == 0);
    struct feed f = {p[1], text, len - 1}; /* the last newline left off */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, feeder, &f) == 0);
    int o = open("lines", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(o >= 0);
    CHECK(fy_sort_lines(p[0], o, '\n', 0, 192 << 10, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    close(p[0]);
    close(o);
    CHECK(read_file("lines", got, sizeof got) == w);
    CHECK(memcmp(got, want, w) == 0);
}

static void errors(void)
{
    int i = open("recs", O_RDONLY), o = open("err", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(i >= 0 && o >= 0);
    errno = 0;
    CHECK(fy_sort_records(-1, o, SIZE, 0, 4, 0, 0, NULL) == -1 && errno == EBADF);
    errno = 0;
    CHECK(fy_sort_records(i, o, 0, 0, 0, 0, 0, NULL) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(fy_sort_records(i, o, SIZE, 10, 7, 0, 0, NULL) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(fy_sort_records(i, o, SIZE, 0, 4, 64, 0, NULL) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(fy_sort_lines(i, o, 256, 0, 0, NULL) == -1 && errno == EINVAL);
    /* Not a whole number of 7-byte records. */
    CHECK(lseek(i, 0, SEEK_SET) == 0);
    errno = 0;
    CHECK(fy_sort_records(i, o, 7, 0, 4, 0, 0, NULL) == -1 && errno == EINVAL);
    /* Runs wanted in a directory that is not there. */
    CHECK(lseek(i, 0, SEEK_SET) == 0);
    errno = 0;
    CHECK(fy_sort_records(i, o, SIZE, 4, 4, 0, 1 << 20, "no/such/dir") == -1);
    CHECK(errno == ENOENT);
    close(i);
    close(o);
    /* A descriptor that is not open. */
    errno = 0;
    CHECK(fy_sort_lines(1000, 1001, '\n', 0, 0, NULL) == -1 && errno == EBADF);
}

int main(int argc, char **argv)
{
    CHECK(argc > 1 && chdir(argv[1]) == 0);
    records();
    lines();
    errors();
    puts("ok");
    return 0;
}
