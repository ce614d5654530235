/* par.c: see par.h. POSIX threads; on Linux, CPU placement as described below. */
#if defined(__linux__)
#define _GNU_SOURCE /* sched_getcpu, CPU_* and pthread_attr_setaffinity_np */
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include "par.h"

#include <pthread.h>
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#endif

int sg_cpu_count(void) {
#if defined(__linux__)
    cpu_set_t set; /* the CPUs this process may use (taskset, cgroups), not all online ones */
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        return n > 0 ? n : 1;
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

typedef struct start {
    void *(*fn)(void *);
    void *arg;
#if defined(__linux__)
    cpu_set_t allowed; /* the process's CPUs, given back to the thread once it runs */
    bool      pinned;
#endif
} start;

static void *trampoline(void *p) {
    start *s = p;
#if defined(__linux__)
    if (s->pinned) pthread_setaffinity_np(pthread_self(), sizeof s->allowed, &s->allowed);
#endif
    return s->fn(s->arg);
}

/* Rationale: Linux may queue a new thread on its creator's CPU and move it only at the next
 * load balance; on the 2-vCPU machines we measure on, that started the second job 1-4 ms late,
 * or never beside the first at all (the two then shared one CPU). So the thread starts on
 * another CPU the process may use (it then runs within ~0.3 ms), and is free to move after. */
static void place(pthread_attr_t *attr, start *s) {
#if defined(__linux__)
    int me = sched_getcpu();
    s->pinned = false;
    if (me < 0 || sched_getaffinity(0, sizeof s->allowed, &s->allowed) != 0) return;
    for (int k = 1; k < CPU_SETSIZE; k++) {
        int cpu = (me + k) % CPU_SETSIZE;
        if (!CPU_ISSET(cpu, &s->allowed)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        s->pinned = pthread_attr_setaffinity_np(attr, sizeof one, &one) == 0;
        return;
    }
#else
    (void)attr;
    (void)s;
#endif
}

bool sg_run2(void *(*fn)(void *), void *a, void *b) {
    pthread_t      t;
    pthread_attr_t attr;
    start          s = {.fn = fn, .arg = a};
    if (pthread_attr_init(&attr) != 0) return false;
    place(&attr, &s);
    int rc = pthread_create(&t, &attr, trampoline, &s);
    pthread_attr_destroy(&attr);
    if (rc != 0) return false;
    fn(b);
    pthread_join(t, NULL);
    return true;
}
