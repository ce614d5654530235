/* par.c: see par.h. POSIX threads. */
#define _POSIX_C_SOURCE 200809L
#include "par.h"

#include <pthread.h>
#include <unistd.h>

int sg_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

bool sg_run2(void *(*fn)(void *), void *a, void *b) {
    pthread_t t;
    if (pthread_create(&t, NULL, fn, a) != 0) return false;
    fn(b);
    pthread_join(t, NULL);
    return true;
}
