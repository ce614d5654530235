/* codegen.h: from the model to generated files, through Lua 5.4 templates.
 *
 * A template is text with two kinds of lines (docs/templates.md):
 *     % lua statement               a line that starts with '%' is Lua
 *     text with $(expr) in it       any other line is output, each $(...) replaced by its value
 * and an optional first line `%! output = "{lib}_{shard}.c", per_shard = true` that names the
 * file it writes ({lib} and {shard} are replaced). Templates see the model as Lua values
 * (`model`, `ops`, ...) and may load helper modules from a lib/ folder with `import "name"`.
 *
 * Everything is rendered in memory first; nothing is written unless every template succeeded.
 */
#ifndef SG_CODEGEN_H
#define SG_CODEGEN_H

#include "model.h"

#include <stdio.h>

/* A template or helper module: its name as it appears in messages ("templates/ops.h.tpl"),
 * the name it is looked up by ("ops.h.tpl", "lib/c.lua"), and its text. */
typedef struct sg_tpl_file {
    const char *label;
    const char *name;
    const char *text;
    size_t      len;
} sg_tpl_file;

/* The built-in templates, compiled into the tool (templates_builtin.c, made at build time). */
extern const sg_tpl_file sg_builtin_templates[];
extern const size_t      sg_builtin_ntemplates;

typedef struct sg_codegen_opts {
    const char        *lib;        /* library name: file and function prefix ("ops") */
    uint32_t           shard_size; /* ops per shard file */
    uint32_t           shards;     /* exactly this many shard files (0: by shard_size) */
    const char *const *inputs;     /* the input paths, for banners */
    uint32_t           ninputs;
    const char *const *template_dirs; /* user template folders, searched before the built-ins */
    uint32_t           ntemplate_dirs;
    uint32_t           threads;    /* Lua states rendering at once: 0 chooses (two where there
                                      are two CPUs and a big model), 1 or 2 says */
} sg_codegen_opts;

/* A generated file: its text as the pieces the template made, in order. Rationale: joining
 * 13 MB of pieces into one string, then copying it, cost more than rendering it (fresh memory
 * is dear on the machines we measured); the pieces are written out as they are. */
typedef struct sg_piece {
    const char *p;
    size_t      n;
} sg_piece;

typedef struct sg_output {
    char     *name;    /* relative to the output folder */
    sg_piece *pieces;  /* valid until sg_outputs_free */
    size_t    npieces;
    size_t    len;     /* bytes in all */
} sg_output;

/* A per-shard output pattern and the first shard number this run did not write: files of
 * that pattern from an earlier run with more shards are stale (sg_outputs_write removes them,
 * so a build that globs the folder never compiles an old shard). */
typedef struct sg_stale {
    char    *pattern; /* "ops_{shard}.c", {lib} already replaced */
    uint32_t from;
} sg_stale;

typedef struct sg_outputs {
    sg_output *items;
    uint32_t   n, cap;
    void      *owner;  /* what holds the pieces' bytes (the renderer) */
    sg_stale  *stale;
    uint32_t   nstale;
} sg_outputs;

/* The whole text of o, appended to b (tests and tools that want one string). */
void sg_output_text(const sg_output *o, sg_buf *b);

void sg_outputs_free(sg_outputs *o);
/* Writes every output into outdir (created with its parents if need be), each atomically and
 * only where its bytes change. Problems are reported on err; returns 0 or -1. */
int  sg_outputs_write(const char *outdir, const sg_outputs *outs, FILE *err);

/* Renders every template over m into out. Errors go to d; returns their number. */
int sg_codegen(const sg_model *m, const sg_codegen_opts *o, sg_outputs *out, sg_diag *d);

/* The C name of an op: ns_name_overload (aten_add_Tensor, aten_add__Tensor, my_ops_k). */
void sg_op_cname(sg_buf *b, const sg_op *op);

#endif
