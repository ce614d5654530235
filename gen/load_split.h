/* load_split.h: a big schema file loaded in pieces by two threads at once (load_split.c).
 * Private to gen/; load.c calls it before a load in one pass. */
#ifndef SG_LOAD_SPLIT_H
#define SG_LOAD_SPLIT_H

#include "model.h"

/* Files smaller than this are read in one pass: a thread does not pay for itself there. */
enum { SG_SPLIT_MIN = 256 * 1024 };

/* Loads src (one of m's sources) in pieces, on the caller's thread and one created and joined
 * here, where src is at least min_len bytes long. true where it did, with no message to give;
 * false where it did not (too small, no place to cut, or anything at all to report), with m's
 * ops unchanged: the caller then loads src in one pass, which gives the file's messages. */
bool sg_load_split(sg_model *m, const sg_source *src, size_t min_len);

#endif
