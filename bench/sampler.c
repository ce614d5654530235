/* sampler.c: a sampling profiler to LD_PRELOAD where no profiler is installed and no
 * performance counters are exposed (docs/perf.md, "Profiling where no profiler is installed").
 *
 *   SG_SAMPLER_OUT=FILE [SG_SAMPLER_US=100] LD_PRELOAD=libsg_sampler.so PROGRAM ARGS...
 *   python3 bench/sampler_report.py FILE [TOP]
 *
 * A timer on the main thread's wall clock (CLOCK_MONOTONIC, so samples come every US
 * microseconds whether the thread computes or waits in a driver call) raises SIGPROF; the
 * handler records the interrupted instruction address. At exit the samples and the process's
 * memory map go to FILE, one "S addr" or "M maps-line" per line, for sampler_report.py to
 * resolve into objects and symbols. Only the main thread is sampled: the benchmarks' calls run
 * there. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { CAP = 1 << 22 }; /* samples kept: 7 minutes at the default rate */

static uintptr_t     *samples;
static volatile size_t nsamples;

static void on_sample(int sig, siginfo_t *si, void *ctx) {
    (void)sig, (void)si;
    const ucontext_t *uc = ctx;
    size_t            n = nsamples;
    if (n < CAP) {
#if defined(__x86_64__)
        samples[n] = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
        samples[n] = (uintptr_t)uc->uc_mcontext.pc;
#else
        samples[n] = 0;
#endif
        nsamples = n + 1;
    }
}

__attribute__((constructor)) static void sampler_start(void) {
    if (!getenv("SG_SAMPLER_OUT")) return;
    samples = mmap(NULL, CAP * sizeof *samples, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (samples == MAP_FAILED) {
        samples = NULL;
        fprintf(stderr, "sg_sampler: no memory for the samples: not sampling\n");
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    const char *us_env = getenv("SG_SAMPLER_US");
    long        us = us_env ? atol(us_env) : 100;
    if (us < 10) us = 10;
    timer_t                 timer;
    const struct itimerspec every = {{us / 1000000, us % 1000000 * 1000},
                                     {us / 1000000, us % 1000000 * 1000}};
    if (sigaction(SIGPROF, &sa, NULL) != 0 || timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0 ||
        timer_settime(timer, 0, &every, NULL) != 0)
        fprintf(stderr, "sg_sampler: cannot set the timer: not sampling\n");
}

__attribute__((destructor)) static void sampler_stop(void) {
    const char *path = getenv("SG_SAMPLER_OUT");
    if (!path || !samples) return;
    signal(SIGPROF, SIG_IGN);
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "sg_sampler: cannot write %s\n", path);
        return;
    }
    FILE *maps = fopen("/proc/self/maps", "r");
    char  line[4096];
    while (maps && fgets(line, sizeof line, maps)) fprintf(out, "M %s", line);
    if (maps) fclose(maps);
    size_t n = nsamples;
    for (size_t i = 0; i < n; i++) fprintf(out, "S %lx\n", (unsigned long)samples[i]);
    fclose(out);
}
