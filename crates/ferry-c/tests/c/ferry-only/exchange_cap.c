/* ferry/exchange.h under a small cap (FERRY_EXCHANGE_CAP=64K from the
 * harness): allocation past it fails at once with ENOMEM, a read that
 * cannot have a buffer takes nothing from its descriptor, and a buffer
 * given back lifts the refusal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ferry/exchange.h>

#include "check.h"

int main(void)
{
    void *held[64];
    int n = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        void *p = fy_uf_allocate(4096);
        if (p == NULL) {
            CHECK(errno == ENOMEM);
            break;
        }
        CHECK(n < 64);
        held[n++] = p;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(n == 16); /* 64 KiB of 4 KiB buffers */
    CHECK(t1.tv_sec - t0.tv_sec < 5); /* refused, not waited */
    void *b;
    CHECK(fy_uf_get(1, &b) == -1 && errno == ENOMEM && b == NULL);
    /* More than the cap in one buffer: ENOMEM too (the largest buffer
     * class fits nowhere under it). */
    CHECK(fy_uf_allocate(1 << 20) == NULL && errno == ENOMEM);

    int p[2];
    CHECK(pipe(p) == 0 && write(p[1], "kept", 4) == 4);
    CHECK(fy_uf_read(p[0], &b, 100) == -1 && errno == ENOMEM && b == NULL);
    CHECK(fy_uf_deallocate(held[--n], 4096) == 0);
    CHECK(fy_uf_read(p[0], &b, 100) == 4 && memcmp(b, "kept", 4) == 0);
    CHECK(fy_uf_deallocate(b, 4) == 0);
    while (n > 0)
        CHECK(fy_uf_deallocate(held[--n], 4096) == 0);
    CHECK((b = fy_uf_allocate(65536)) != NULL);
    CHECK(fy_uf_deallocate(b, 65536) == 0);
    printf("ok\n");
    return 0;
}
