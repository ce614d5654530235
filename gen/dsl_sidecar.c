/* dsl_sidecar.c: the exporter's sidecars (PREFIX.json) and binaries (PREFIX.cubin) checked
 * against the declarations (docs/dsl.md, "What schemagen generates"): every planned artifact
 * must have both, built from the declared source by the declared compiler for a declared arch,
 * with the planned parameters, a binary whose hash matches and that holds the entry symbol as
 * a function, and no hidden scratch memory to allocate.
 *
 * The sidecar is JSON, read with libyaml through the schema loader's node tree (JSON is YAML
 * for these files), so every refusal names the sidecar's line and column; a note names the
 * declaration. */
#include "dsl.h"
#include "read_file.h"
#include "sha256.h"
#include "yaml_tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    sg_dsl_set      *s;
    sg_dsl_artifact *a;
    const char      *dir;
    sg_diag         *d;
    const sg_source *src;
    const sg_ynode  *root;
    bool             failed;
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void refuse(reader *R, sg_pos pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sg_diag_vreport(R->d, SG_ERROR, pos, fmt, ap); /* no pos.src: a message with no position */
    va_end(ap);
    sg_diag_report(R->d, SG_NOTE, R->a->decl->pos, "artifact '%s' of the declaration '%s'",
                   R->a->prefix, R->a->decl->name);
    R->failed = true;
}

/* A file's bytes into the set's arena; NULL (errno set) where it cannot be read. */
static char *slurp(sg_arena *a, const char *path, size_t *len) {
    sg_buf b;
    sg_buf_init(&b);
    int   e = sg_read_file(path, &b) ? 0 : errno;
    char *p = e ? NULL : sg_arena_strndup(a, b.data ? b.data : "", b.len);
    if (!e && !p) e = ENOMEM;
    *len = b.len;
    sg_buf_free(&b);
    errno = e;
    return p;
}

/* ---- JSON values --------------------------------------------------------------------------- */

static const sg_ynode *get(const sg_ynode *map, const char *key) {
    if (!map || map->kind != SG_Y_MAP) return NULL;
    for (uint32_t i = 0; i + 1 < map->nitems; i += 2)
        if (map->items[i]->kind == SG_Y_SCALAR && strcmp(map->items[i]->text, key) == 0)
            return map->items[i + 1];
    return NULL;
}

/* The value of key in map, of kind k; refused where absent or of another kind. */
static const sg_ynode *need(reader *R, const sg_ynode *map, const char *key, sg_ynode_kind k) {
    if (R->failed) return NULL;
    const sg_ynode *v = get(map, key);
    if (!v) {
        refuse(R, map->pos, "the sidecar lacks '%s'", key);
        return NULL;
    }
    if (v->kind != k) {
        refuse(R, v->pos, "'%s' in the sidecar needs %s", key,
               k == SG_Y_SEQ ? "a list" : k == SG_Y_MAP ? "an object" : "a string or number");
        return NULL;
    }
    return v;
}

static const char *need_str(reader *R, const sg_ynode *map, const char *key) {
    const sg_ynode *v = need(R, map, key, SG_Y_SCALAR);
    return v ? v->text : NULL;
}

static bool need_int(reader *R, const sg_ynode *v, const char *what, long long *out) {
    if (R->failed) return false;
    char *end = NULL;
    errno = 0;
    long long n = v && v->kind == SG_Y_SCALAR ? strtoll(v->text, &end, 10) : -1;
    if (!v || v->kind != SG_Y_SCALAR || !v->plain || *end || errno || n < 0 || n > UINT32_MAX) {
        refuse(R, v ? v->pos : R->root->pos, "%s in the sidecar needs a count", what);
        return false;
    }
    *out = n;
    return true;
}

/* Whether v is a string equal to want; refused (saying `what`) where not. */
static bool same(reader *R, const sg_ynode *v, const char *want, const char *what) {
    if (R->failed || !v) return false;
    if (v->kind == SG_Y_SCALAR && strcmp(v->text, want) == 0) return true;
    refuse(R, v->pos, "%s: the sidecar says '%s', the plan '%s'", what,
           v->kind == SG_Y_SCALAR ? v->text : "(not a string)", want);
    return false;
}

/* ---- the binary ---------------------------------------------------------------------------- */

static uint64_t rd(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Looks symbol up in the ELF64 (little-endian) image's .symtab: 0 a defined function, 1 a
 * symbol that is not one, 2 absent; -1 where the image is not a well-formed ELF64 file (*why
 * says how). Every offset is checked against the image's size before it is read. */
int sg_dsl_elf_symbol(const unsigned char *img, size_t n, const char *symbol, const char **why) {
    if (n < 64 || memcmp(img, "\177ELF", 4) != 0 || img[4] != 2 || img[5] != 1) {
        *why = "not a 64-bit little-endian ELF file";
        return -1;
    }
    uint64_t shoff = rd(img + 0x28, 8), shentsize = rd(img + 0x3A, 2), shnum = rd(img + 0x3C, 2);
    if (shentsize != 64 || shoff > n || shnum > (n - shoff) / 64) {
        *why = "its section headers lie outside the file";
        return -1;
    }
    int found = 2;
    for (uint64_t i = 0; i < shnum; i++) {
        const unsigned char *sh = img + shoff + 64 * i;
        if (rd(sh + 4, 4) != 2) continue; /* SHT_SYMTAB */
        uint64_t off = rd(sh + 0x18, 8), size = rd(sh + 0x20, 8), link = rd(sh + 0x28, 4);
        uint64_t ent = rd(sh + 0x38, 8);
        if (ent != 24 || off > n || size > n - off || link >= shnum) {
            *why = "its symbol table lies outside the file";
            return -1;
        }
        const unsigned char *str = img + shoff + 64 * link;
        uint64_t soff = rd(str + 0x18, 8), ssize = rd(str + 0x20, 8);
        if (soff > n || ssize > n - soff) {
            *why = "its string table lies outside the file";
            return -1;
        }
        const char *strtab = (const char *)img + soff;
        size_t want = strlen(symbol);
        for (uint64_t k = 0; k < size / 24; k++) {
            const unsigned char *sym = img + off + 24 * k;
            uint64_t name = rd(sym, 4);
            if (name >= ssize || ssize - name < want + 1 ||
                memcmp(strtab + name, symbol, want + 1) != 0)
                continue;
            bool func = (sym[4] & 0xF) == 2 /* STT_FUNC */ && rd(sym + 6, 2) != 0;
            if (func) return 0;
            found = 1;
        }
    }
    return found;
}

/* A file the sidecar names in the artifacts folder ({"file": NAME, "sha256": HEX}), read and
 * its hash checked; NULL where refused. */
static const unsigned char *check_file(reader *R, const sg_ynode *f, const char *what,
                                       size_t *len, const char **name) {
    const char *file = need_str(R, f, "file"), *sha = need_str(R, f, "sha256");
    if (!file || !sha) return NULL;
    const sg_ynode *fv = get(f, "file");
    if (strchr(file, '/') || !file[0] || file[0] == '.') {
        refuse(R, fv->pos, "the %s's file is a name in the artifacts folder, not '%s'", what,
               file);
        return NULL;
    }
    size_t n = strlen(R->dir) + strlen(file) + 2;
    char *path = malloc(n);
    if (!path) {
        refuse(R, fv->pos, "out of memory");
        return NULL;
    }
    snprintf(path, n, "%s/%s", R->dir, file);
    bool runtime = strcmp(what, "runtime library") == 0;
    if (runtime && R->s->runtime_path && strcmp(R->s->runtime_path, path) == 0 &&
        strcmp(R->s->runtime_sha, sha) == 0) {
        free(path); /* checked for an artifact before: the same file, the same hash */
        *name = file;
        *len = 0;
        return (const unsigned char *)"";
    }
    const unsigned char *img = (const unsigned char *)slurp(R->s->a, path, len);
    if (!img) {
        refuse(R, fv->pos, "cannot read the %s '%s': %s", what, path, strerror(errno));
        free(path);
        return NULL;
    }
    char hex[65];
    sg_sha256_hex(img, *len, hex);
    if (strcmp(hex, sha) != 0) {
        free(path);
        refuse(R, get(f, "sha256")->pos, "the %s '%s' has the SHA-256 %s, not the sidecar's: "
               "it was rebuilt or altered since", what, file, hex);
        return NULL;
    }
    if (runtime) {
        size_t np = strlen(path) + 1;
        char  *keep = sg_arena_alloc(R->s->a, np + sizeof hex);
        if (keep) {
            memcpy(keep, path, np);
            memcpy(keep + np, hex, sizeof hex);
            R->s->runtime_path = keep;
            R->s->runtime_sha = keep + np;
        }
    }
    free(path);
    *name = file;
    return img;
}

/* The binary: a cubin with the kernel, or an object file with the loader the DSL names after
 * the prefix. */
static void check_binary(reader *R, const sg_ynode *bin) {
    bool object = R->a->decl->lang->object;
    size_t len;
    const char *file = NULL, *why = "";
    const unsigned char *img = check_file(R, bin, "binary", &len, &file);
    if (!img) return;
    char loader[300];
    snprintf(loader, sizeof loader, "_mlir_%s_cuda_init", R->a->prefix);
    const char *symbol = object ? loader : R->a->symbol;
    int r = sg_dsl_elf_symbol(img, len, symbol, &why);
    if (r != 0) {
        if (r < 0)
            refuse(R, get(bin, "file")->pos, "the binary '%s' is not %s: %s", file,
                   object ? "an object file" : "a cubin", why);
        else
            refuse(R, object ? get(bin, "file")->pos : get(R->root, "symbol")->pos,
                   "the binary '%s' has %s '%s'", file,
                   r == 1 ? "a symbol that is not a function named" : "no symbol", symbol);
        return;
    }
    if (object) return; /* linked into the library, not embedded */
    R->a->image = img;
    R->a->image_size = len;
}

/* ---- the sidecar --------------------------------------------------------------------------- */

/* The names of a list of parameter names, as flags per parameter of the declaration. */
static bool *param_flags(reader *R, const sg_ynode *list, const char *what) {
    const sg_dsl_decl *dc = R->a->decl;
    bool *flags = sg_arena_alloc(R->s->a, (dc->nparams + 1) * sizeof *flags);
    if (!flags || R->failed) return flags;
    for (uint32_t i = 0; list && i < list->nitems; i++) {
        const sg_ynode *x = list->items[i];
        uint32_t k = 0;
        while (k < dc->nparams && !(x->kind == SG_Y_SCALAR && strcmp(dc->params[k].name, x->text) == 0))
            k++;
        if (k == dc->nparams) {
            refuse(R, x->pos, "%s names '%s', which is not a parameter", what,
                   x->kind == SG_Y_SCALAR ? x->text : "?");
            return flags;
        }
        flags[k] = true;
    }
    return flags;
}

static void check_params(reader *R, const sg_ynode *params) {
    const sg_dsl_decl *dc = R->a->decl;
    if (!params) return;
    sg_buf want;
    sg_buf_init(&want);
    for (uint32_t i = 0; i < params->nitems && i < dc->nparams && !R->failed; i++) {
        const sg_ynode *p = params->items[i];
        want.len = 0;
        sg_dsl_param_type(&want, &dc->params[i], R->a);
        sg_buf_putc(&want, '\0');
        if (p->kind != SG_Y_SEQ || p->nitems != 2 || want.oom) {
            refuse(R, p->pos, "a parameter in the sidecar is [name, type]");
            break;
        }
        if (same(R, p->items[0], dc->params[i].name, "a parameter's name"))
            same(R, p->items[1], want.data, "the type of a parameter");
    }
    if (!R->failed && params->nitems != dc->nparams)
        refuse(R, params->pos, "the sidecar lists %u parameters, the plan %u", params->nitems,
               dc->nparams);
    sg_buf_free(&want);
}

static void check_hidden(reader *R, const sg_ynode *hidden) {
    for (uint32_t i = 0; hidden && i < hidden->nitems && !R->failed; i++) {
        const sg_ynode *h = hidden->items[i];
        long long size;
        if (h->kind != SG_Y_MAP) {
            refuse(R, h->pos, "a hidden parameter in the sidecar is an object");
            return;
        }
        if (!need_int(R, get(h, "size"), "a hidden parameter's size", &size)) return;
        if (size != 0) {
            const char *name = get(h, "name") && get(h, "name")->kind == SG_Y_SCALAR
                                   ? get(h, "name")->text : "?";
            refuse(R, get(h, "size")->pos, "the hidden parameter '%s' needs %lld bytes of "
                   "scratch memory per program: not supported yet", name, size);
            return;
        }
    }
    if (hidden) R->a->nhidden = hidden->nitems;
}

static void check_assumes(reader *R, const sg_ynode *root) {
    const sg_ynode *as = need(R, root, "assumes", SG_Y_MAP);
    if (!as) return;
    const sg_ynode *div = get(as, "divisibility_16"), *i32 = get(as, "int32");
    R->a->div16 = param_flags(R, div && div->kind == SG_Y_SEQ ? div : NULL, "divisibility_16");
    R->a->int32 = param_flags(R, i32 && i32->kind == SG_Y_SEQ ? i32 : NULL, "int32");
}

/* An object artifact (CuTeDSL's export_to_c): the entry LIB_dsl.c calls is the header's
 * wrapper, named after the prefix, with each tensor a 1-D struct of a pointer and one int32
 * size and each scalar by value; what the header declared is checked against that. */
static void check_object(reader *R, const sg_ynode *root) {
    sg_dsl_artifact *a = R->a;
    const sg_dsl_decl *dc = a->decl;
    const char *symbol = need_str(R, root, "symbol");
    if (!symbol) return;
    size_t n = strlen(a->prefix) + 32;
    char *want = sg_arena_alloc(R->s->a, n);
    if (!want) {
        refuse(R, root->pos, "out of memory");
        return;
    }
    snprintf(want, n, "cute_dsl_%s_wrapper", a->prefix);
    if (!same(R, get(root, "symbol"), want, "the entry")) return;
    a->symbol = want;
    check_params(R, need(R, root, "params", SG_Y_SEQ));
    const sg_ynode *lay = need(R, root, "layouts", SG_Y_SEQ);
    const sg_ynode *ct = need(R, root, "ctypes", SG_Y_SEQ);
    if (R->failed) return;
    if (lay->nitems != dc->nparams || ct->nitems != dc->nparams) {
        refuse(R, (lay->nitems != dc->nparams ? lay : ct)->pos, "the sidecar's %s list %u "
               "parameters, the plan %u", lay->nitems != dc->nparams ? "layouts" : "ctypes",
               lay->nitems != dc->nparams ? lay->nitems : ct->nitems, dc->nparams);
        return;
    }
    sg_buf t;
    sg_buf_init(&t);
    for (uint32_t i = 0; i < dc->nparams && !R->failed; i++) {
        const sg_dsl_param *p = &dc->params[i];
        const sg_ynode *l = lay->items[i];
        int pd = p->grid_var >= 0 ? (int)a->vals[p->grid_var].i : p->base;
        if (p->ptr && !(l->kind == SG_Y_SEQ && l->nitems == 2 &&
                        l->items[0]->kind == SG_Y_SCALAR && !strcmp(l->items[0]->text, "1") &&
                        l->items[1]->kind == SG_Y_SCALAR && !strcmp(l->items[1]->text, "0")))
            refuse(R, l->pos, "the tensor '%s' has a layout other than [1, 0] (one dynamic size, "
                   "no dynamic stride): only 1-D compact tensors are supported", p->name);
        t.len = 0;
        if (p->ptr)
            sg_buf_printf(&t, "%s_Tensor_%s_t *", a->prefix, p->name);
        else
            sg_buf_puts(&t, sg_dsl_dtypes[pd].ctype);
        sg_buf_putc(&t, '\0');
        if (!R->failed && !t.oom)
            same(R, ct->items[i], t.data, "the entry's C type of a parameter");
    }
    sg_buf_free(&t);
    check_assumes(R, root);
    const sg_ynode *bin = need(R, root, "binary", SG_Y_MAP);
    if (bin && !R->failed) check_binary(R, bin);
    const sg_ynode *hdr = need(R, root, "header", SG_Y_MAP);
    const sg_ynode *rt = need(R, root, "runtime", SG_Y_MAP);
    size_t len;
    const char *name = NULL;
    if (hdr && !R->failed) {
        n = strlen(a->prefix) + 3;
        char *hname = sg_arena_alloc(R->s->a, n);
        if (hname) snprintf(hname, n, "%s.h", a->prefix);
        if (check_file(R, hdr, "header", &len, &name) && hname && strcmp(name, hname) != 0)
            refuse(R, get(hdr, "file")->pos, "the header is '%s', not '%s'", name, hname);
    }
    if (rt && !R->failed) check_file(R, rt, "runtime library", &len, &name);
}

static void check_sidecar(reader *R, const sg_ynode *root) {
    sg_dsl_artifact *a = R->a;
    const sg_dsl_decl *dc = a->decl;
    R->root = root;
    if (root->kind != SG_Y_MAP) {
        refuse(R, root->pos, "a sidecar is a JSON object");
        return;
    }
    same(R, need(R, root, "version", SG_Y_SCALAR), "1", "the sidecar's version");
    same(R, need(R, root, "prefix", SG_Y_SCALAR), a->prefix, "the prefix");
    same(R, need(R, root, "kind", SG_Y_SCALAR), dc->lang->kind, "the kind");
    same(R, need(R, root, "decl", SG_Y_SCALAR), dc->name, "the declaration");
    /* staleness first: a sidecar from another compiler or source says little else of use */
    const sg_ynode *comp = need(R, root, "compiler", SG_Y_MAP);
    if (comp && same(R, need(R, comp, "name", SG_Y_SCALAR), dc->lang->package, "the compiler"))
        same(R, need(R, comp, "version", SG_Y_SCALAR), dc->compiler_version,
             "stale artifact: the compiler's version");
    const sg_ynode *srcs = need(R, root, "sources", SG_Y_MAP);
    if (srcs && !R->failed) {
        const sg_ynode *h = get(srcs, dc->source);
        if (!h)
            refuse(R, srcs->pos, "the sidecar has no hash of the source '%s'", dc->source);
        else
            same(R, h, dc->source_sha, "stale artifact: the SHA-256 of the source");
    }
    const sg_ynode *arch = R->failed ? NULL : get(root, "arch");
    if (!R->failed && (!arch || arch->kind != SG_Y_SCALAR)) {
        refuse(R, arch ? arch->pos : root->pos, "the sidecar names no arch");
        return;
    }
    uint32_t k = 0;
    while (arch && k < dc->narchs && strcmp(dc->arch_names[k], arch->text) != 0) k++;
    if (!R->failed && k == dc->narchs) {
        refuse(R, arch->pos, "the sidecar's arch '%s' is not one the declaration lists", arch->text);
        return;
    }
    same(R, arch, dc->arch_names[a->arch], "the arch");
    const sg_ynode *cap = need(R, root, "capability", SG_Y_SEQ);
    char want_cap[2][12];
    snprintf(want_cap[0], sizeof want_cap[0], "%d", dc->caps[a->arch] / 10);
    snprintf(want_cap[1], sizeof want_cap[1], "%d", dc->caps[a->arch] % 10);
    if (cap && !R->failed && cap->nitems != 2)
        refuse(R, cap->pos, "the capability in the sidecar is [major, minor]");
    if (cap && !R->failed && same(R, cap->items[0], want_cap[0], "the capability's major"))
        same(R, cap->items[1], want_cap[1], "the capability's minor");
    if (dc->lang->object) {
        check_object(R, root);
        a->have_sidecar = !R->failed;
        return;
    }
    long long shared = 0, warps = 0, stages = 0, ctas = 0;
    const char *symbol = need_str(R, root, "symbol");
    if (!need_int(R, get(root, "shared"), "'shared'", &shared) ||
        !need_int(R, get(root, "num_warps"), "'num_warps'", &warps) ||
        !need_int(R, get(root, "num_stages"), "'num_stages'", &stages) ||
        !need_int(R, get(root, "num_ctas"), "'num_ctas'", &ctas))
        return;
    if (warps != a->warps || stages != a->stages)
        refuse(R, get(root, warps != a->warps ? "num_warps" : "num_stages")->pos,
               "the sidecar's num_warps %lld and num_stages %lld are not the plan's %u and %u",
               warps, stages, a->warps, a->stages);
    else if (ctas != 1)
        refuse(R, get(root, "num_ctas")->pos, "num_ctas %lld: clusters are not supported yet",
               ctas);
    if (R->failed || !symbol) return;
    /* Rationale: the symbol becomes a C string literal in LIB_dsl.c; the DSLs name their
     * kernels with identifiers, so anything else is refused rather than escaped. */
    bool plain = symbol[0] != '\0';
    for (const char *q = symbol; *q; q++)
        plain &= (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                 (*q >= '0' && *q <= '9') || *q == '_' || *q == '.' || *q == '$';
    if (!plain) {
        refuse(R, get(root, "symbol")->pos, "the sidecar's symbol '%s' is not a plain name "
               "(letters, digits, '_', '.', '$')", symbol);
        return;
    }
    a->symbol = symbol, a->shared = (uint32_t)shared;
    check_params(R, need(R, root, "params", SG_Y_SEQ));
    check_hidden(R, need(R, root, "hidden", SG_Y_SEQ));
    check_assumes(R, root);
    const sg_ynode *bin = need(R, root, "binary", SG_Y_MAP);
    if (bin && !R->failed) check_binary(R, bin);
    a->have_sidecar = !R->failed;
}

static void on_root(void *ud, sg_yreader *r, const sg_ynode *root) {
    (void)r;
    check_sidecar(ud, root);
}

int sg_dsl_read_artifacts(sg_dsl_set *s, const char *dir, sg_diag *d) {
    uint32_t before = d->nerrors;
    for (uint32_t i = 0; i < s->narts; i++) {
        sg_dsl_artifact *a = &s->arts[i];
        reader R = {.s = s, .a = a, .dir = dir, .d = d};
        size_t n = strlen(dir) + strlen(a->prefix) + 8, len;
        char *path = sg_arena_alloc(s->a, n);
        if (!path) {
            sg_diag_plain(d, SG_ERROR, "out of memory");
            break;
        }
        snprintf(path, n, "%s/%s.json", dir, a->prefix);
        char *text = slurp(s->a, path, &len);
        if (!text) {
            sg_diag_report(d, SG_ERROR, a->decl->pos, "artifact '%s' was not exported: cannot "
                           "read '%s': %s", a->prefix, path, strerror(errno));
            continue;
        }
        sg_source *src = sg_arena_alloc(s->a, sizeof *src);
        if (!src) {
            sg_diag_plain(d, SG_ERROR, "out of memory");
            break;
        }
        *src = (sg_source){path, text, len};
        R.src = src;
        uint32_t e = d->nerrors;
        if (!sg_yaml_read_doc(src, s->a, d, on_root, &R) && d->nerrors == e)
            refuse(&R, (sg_pos){src, 1, 1}, "cannot read the sidecar");
        else if (d->nerrors != e && !R.failed)
            sg_diag_report(d, SG_NOTE, a->decl->pos, "artifact '%s' of the declaration '%s'",
                           a->prefix, a->decl->name);
    }
    return (int)(d->nerrors - before);
}
