/* par.h: the little parallelism the front end uses: two jobs at once on a 2-core budget. */
#ifndef SG_PAR_H
#define SG_PAR_H

#include <stdbool.h>

/* Online processors (1 where unknown). */
int sg_cpu_count(void);
/* Runs fn(a) on a new thread and fn(b) on this one, and waits for both. false when no thread
 * could be started (then neither ran). */
bool sg_run2(void *(*fn)(void *), void *a, void *b);

#endif
