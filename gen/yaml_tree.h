/* yaml_tree.h: reading a YAML file into sg_ynode trees (yaml_tree.c), for yaml_ops.c to turn
 * into ops. Private to gen/.
 *
 * A schema or tags file is one YAML sequence of entries. The reader hands each entry to its
 * caller as soon as the entry is complete, so the caller's diagnostics and the reader's (YAML
 * syntax errors, nesting too deep, aliases) come out in file order. */
#ifndef SG_YAML_TREE_H
#define SG_YAML_TREE_H

#include "model.h"

typedef struct sg_yreader sg_yreader;

/* Called for each top-level entry, in order; e lives in the reader's arena. */
typedef void (*sg_yaml_entry_fn)(void *ud, sg_yreader *r, const sg_ynode *e);

/* A piece of a source: bytes [from, to), from at the start of line `line` (the whole source:
 * {0, src->len, 1}). */
typedef struct sg_yaml_piece {
    size_t   from, to;
    uint32_t line;
} sg_yaml_piece;

/* Reads a piece of src's YAML as a stream of its own, nodes from arena a, problems to d
 * (file:line:col, src's positions); calls entry for each entry of the top-level sequence.
 * false where it stopped before the end (a YAML error, out of memory). */
bool sg_yaml_read_piece(const sg_source *src, sg_yaml_piece piece, sg_arena *a, sg_diag *d,
                        sg_yaml_entry_fn entry, void *ud);
/* Reads all of src as one document whose root may be of any kind (a JSON object: the DSL
 * sidecars); calls entry once, with the root. */
bool sg_yaml_read_doc(const sg_source *src, sg_arena *a, sg_diag *d, sg_yaml_entry_fn entry,
                      void *ud);
/* Where each byte of scalar y's value (a node r made) is in the source: *n spans, valid until
 * the next call on r. */
const sg_span *sg_yaml_spans(sg_yreader *r, const sg_ynode *y, uint32_t *n);
bool sg_yaml_stopped(const sg_yreader *r);
/* Reports "out of memory reading FILE" (once per file) and stops. */
void sg_yaml_oom(sg_yreader *r);

#endif
