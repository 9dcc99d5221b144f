/* Preloaded before libfaketime for the web node whose clock runs ahead (lab/cluster).
 *
 * libfaketime 0.9.10 (Debian 12) breaks absolute sleeps on CLOCK_MONOTONIC: with
 * FAKETIME_DONT_FAKE_MONOTONIC=1 they fail with EINVAL, without it they oversleep by the
 * offset. Python >= 3.11 implements time.sleep() exactly so, and gunicorn's arbiter dies of
 * it. Only the wall clock is meant to move, so sleeps go straight to the kernel. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remain) {
    if (syscall(SYS_clock_nanosleep, clock, flags, request, remain) == -1)
        return errno;
    return 0;
}

int nanosleep(const struct timespec *request, struct timespec *remain) {
    return syscall(SYS_nanosleep, request, remain) == -1 ? -1 : 0;
}
