/* sampler_busy.c: a program whose time is all in one function, for the sampler's test. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double sg_sampler_busy_loop(long n) {
    volatile double s = 0;
    for (long i = 0; i < n; i++) s += (double)i * 0.5;
    return s;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 200000000L;
    printf("%g\n", sg_sampler_busy_loop(n));
    return 0;
}
