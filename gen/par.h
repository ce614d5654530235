/* par.h: the little parallelism the front end uses: two jobs at once on a 2-core budget. */
#ifndef SG_PAR_H
#define SG_PAR_H

#include <stdbool.h>

/* Online processors (1 where unknown). */
int sg_cpu_count(void);
/* Runs fn(a) on a new thread and fn(b) on this one, and waits for both. false when no thread
 * could be started (then neither ran). */
bool sg_run2(void *(*fn)(void *), void *a, void *b);

/* A second thread kept for the parallel steps of one run (a model's load, then its checks),
 * so that each step does not pay for starting one: about 0.25 ms on the VMs we measure on,
 * before the new thread runs. Between jobs it waits spinning for a little while (the next
 * step usually follows within a millisecond), then asleep. */
typedef struct sg_worker sg_worker;
/* NULL where no thread can start (sg_worker_run2 then starts one per call). */
sg_worker *sg_worker_new(void);
/* Ends the thread and frees w (NULL: nothing). */
void sg_worker_free(sg_worker *w);
/* fn(a) on w's thread and fn(b) on this one; returns when both are done. false when no thread
 * could run fn(a) (then neither ran). */
bool sg_worker_run2(sg_worker *w, void *(*fn)(void *), void *a, void *b);
/* What a caller that shared out like pieces of work noted: the worker's share of the speed
 * (its rate over both rates; 1/2 until noted, less where its CPU is slower), for later steps
 * to share by. */
void   sg_worker_note_share(sg_worker *w, double share);
double sg_worker_share(const sg_worker *w);

#endif
