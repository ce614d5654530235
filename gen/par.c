/* par.c: see par.h. POSIX threads; on Linux, CPU placement as described below. */
#if defined(__linux__)
#define _GNU_SOURCE /* sched_getcpu, CPU_* and pthread_attr_setaffinity_np */
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
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

/* Starts a thread that runs s->fn(s->arg), placed as above (s must outlive its start). */
static bool start_thread(pthread_t *t, start *s) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return false;
    place(&attr, s);
    int rc = pthread_create(t, &attr, trampoline, s);
    pthread_attr_destroy(&attr);
    return rc == 0;
}

bool sg_run2(void *(*fn)(void *), void *a, void *b) {
    pthread_t t;
    start     s = {.fn = fn, .arg = a};
    if (!start_thread(&t, &s)) return false;
    fn(b);
    pthread_join(t, NULL);
    return true;
}

/* ---- a kept worker ----------------------------------------------------------------------- */

enum { IDLE, POSTED, DONE, QUIT };
/* How long each side waits awake before it sleeps: the worker for its next job, the caller
 * for the worker to finish. Rationale: on the VMs we measure on, waking a thread that sleeps
 * took up to 7 ms (its vCPU had halted), longer than a whole step, so both stay awake through
 * the few milliseconds between the steps of a run, pausing as they spin, and sleep only when
 * a run is over. */
enum { JOB_SPIN_NS = 20000000, DONE_SPIN_NS = 20000000 };

struct sg_worker {
    pthread_t       thread;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    atomic_int      state; /* main thread: IDLE -> POSTED (or QUIT); worker: POSTED -> DONE */
    void *(*fn)(void *);
    void           *arg;
    start           go;
    double          share; /* sg_worker_note_share */
};

static void relax(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#endif
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Asks done(ud) until it says yes (true) or spin_ns have passed (false), pausing between. */
static bool spin(bool (*done)(void *), void *ud, long long spin_ns) {
    long long until = now_ns() + spin_ns;
    for (unsigned i = 1; !done(ud); i++) {
        relax();
        if (i % 64 == 0 && now_ns() > until) return false;
    }
    return true;
}

typedef struct awaited {
    sg_worker *w;
    int        a, b, seen;
} awaited;

static bool in_state(void *ud) {
    awaited *x = ud;
    x->seen = atomic_load(&x->w->state);
    return x->seen == x->a || x->seen == x->b;
}

/* Waits until the state is one of a and b, awake for spin_ns at most, then asleep; returns it. */
static int wait_for(sg_worker *w, int a, int b, long long spin_ns) {
    awaited x = {w, a, b, 0};
    if (spin(in_state, &x, spin_ns)) return x.seen;
    int s;
    pthread_mutex_lock(&w->mu);
    while ((s = atomic_load(&w->state)) != a && s != b) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    return s;
}

/* Sets the state and wakes the other side if it sleeps. */
static void post(sg_worker *w, int state) {
    pthread_mutex_lock(&w->mu);
    atomic_store(&w->state, state);
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void *worker_main(void *p) {
    sg_worker *w = p;
    while (wait_for(w, POSTED, QUIT, JOB_SPIN_NS) == POSTED) {
        w->fn(w->arg);
        post(w, DONE);
    }
    return NULL;
}

sg_worker *sg_worker_new(void) {
    sg_worker *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    atomic_init(&w->state, IDLE);
    w->share = 0.5;
    w->go = (start){.fn = worker_main, .arg = w};
    if (pthread_mutex_init(&w->mu, NULL) != 0) goto no_mutex;
    if (pthread_cond_init(&w->cv, NULL) != 0) goto no_cond;
    if (start_thread(&w->thread, &w->go)) return w;
    pthread_cond_destroy(&w->cv);
no_cond:
    pthread_mutex_destroy(&w->mu);
no_mutex:
    free(w);
    return NULL;
}

/* Joins the worker, awake while it ends (within a few tens of microseconds, where sleeping
 * in pthread_join could wait for a halted vCPU to wake, as in wait_for). */
#if defined(__linux__)
static bool joined(void *ud) { return pthread_tryjoin_np(((sg_worker *)ud)->thread, NULL) == 0; }
#endif

static void join(sg_worker *w) {
#if defined(__linux__)
    if (spin(joined, w, DONE_SPIN_NS)) return;
#endif
    pthread_join(w->thread, NULL);
}

void sg_worker_free(sg_worker *w) {
    if (!w) return;
    post(w, QUIT);
    join(w);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

bool sg_worker_run2(sg_worker *w, void *(*fn)(void *), void *a, void *b) {
    if (!w) return sg_run2(fn, a, b);
    w->fn = fn;
    w->arg = a;
    post(w, POSTED);
    fn(b);
    wait_for(w, DONE, DONE, DONE_SPIN_NS);
    atomic_store(&w->state, IDLE);
    return true;
}

void sg_worker_note_share(sg_worker *w, double share) {
    if (w) w->share = share;
}

double sg_worker_share(const sg_worker *w) { return w ? w->share : 0.5; }
