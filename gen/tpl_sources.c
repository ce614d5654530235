/* tpl_sources.c: finding templates. The built-ins are compiled into the tool; a user's folder
 * (--templates DIR) adds the .tpl files of DIR and the .lua files of DIR/lib, and one of its
 * files named like a built-in replaces it (the first added of a name wins: user folders are
 * read first). */
#define _DEFAULT_SOURCE
#include "read_file.h"
#include "tpl.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool own(sg_tpl_sources *s, char *p) {
    if (s->nowned == s->capowned) {
        uint32_t cap = s->capowned ? s->capowned * 2 : 16;
        char   **g = realloc(s->owned, cap * sizeof *g);
        if (!g) return false;
        s->owned = g;
        s->capowned = cap;
    }
    s->owned[s->nowned++] = p;
    return true;
}

sg_tpl_file *sg_tpl_find(const sg_tpl_sources *s, const char *name) {
    for (uint32_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].name, name) == 0) return &s->items[i];
    return NULL;
}

/* Adds f, replacing a built-in of the same name (user folders come first: the first wins). */
bool sg_tpl_add(sg_tpl_sources *s, sg_tpl_file f) {
    if (sg_tpl_find(s, f.name)) return true;
    if (s->n == s->cap) {
        uint32_t     cap = s->cap ? s->cap * 2 : 16;
        sg_tpl_file *g = realloc(s->items, cap * sizeof *g);
        if (!g) return false;
        s->items = g;
        s->cap = cap;
    }
    s->items[s->n++] = f;
    return true;
}

void sg_tpl_sources_free(sg_tpl_sources *s) {
    for (uint32_t i = 0; i < s->nowned; i++) free(s->owned[i]);
    free(s->owned);
    free(s->items);
}

static char *read_all(const char *path, size_t *len) {
    sg_buf b;
    sg_buf_init(&b);
    if (!sg_read_file(path, &b)) {
        sg_buf_free(&b);
        return NULL;
    }
    if (!b.data) sg_buf_putn(&b, "", 0);
    *len = b.len;
    return b.data;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

bool sg_tpl_ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Reads dir/sub's *.tpl (sub "") or *.lua (sub "lib") files, in name order. */
static int read_folder(sg_tpl_sources *s, const char *dir, const char *sub, sg_diag *d) {
    sg_buf path;
    sg_buf_init(&path);
    sg_buf_printf(&path, "%s%s%s", dir, *sub ? "/" : "", sub);
    DIR *dp = path.oom ? NULL : opendir(path.data);
    if (!dp) {
        int bad = !*sub; /* lib/ is optional */
        if (bad) sg_diag_plain(d, SG_ERROR, "cannot read the template folder '%s'", dir);
        sg_buf_free(&path);
        return bad;
    }
    char  **names = NULL;
    size_t  nn = 0, cap = 0;
    bool    oom = false;
    for (struct dirent *e; (e = readdir(dp));) {
        if (e->d_name[0] == '.' || !sg_tpl_ends_with(e->d_name, *sub ? ".lua" : ".tpl")) continue;
        if (nn == cap) {
            cap = cap ? cap * 2 : 32;
            char **g = realloc(names, cap * sizeof *g);
            if (!g) {
                oom = true;
                break;
            }
            names = g;
        }
        if (!(names[nn++] = strdup(e->d_name))) oom = true;
    }
    closedir(dp);
    int errors = oom;
    if (oom) sg_diag_plain(d, SG_ERROR, "out of memory reading '%s'", path.data);
    if (nn) qsort(names, nn, sizeof *names, by_name);
    for (size_t i = 0; i < nn; i++) {
        sg_buf label, name;
        sg_buf_init(&label);
        sg_buf_init(&name);
        size_t len = 0;
        char  *text = NULL;
        if (names[i]) {
            sg_buf_printf(&label, "%s/%s", path.data, names[i]);
            sg_buf_printf(&name, "%s%s%s", sub, *sub ? "/" : "", names[i]);
            text = label.oom || name.oom ? NULL : read_all(label.data, &len);
        }
        /* the texts join the owned list one by one; what did not join is freed here */
        bool t_own = text && own(s, text);
        bool l_own = t_own && own(s, label.data);
        bool n_own = l_own && own(s, name.data);
        if (!n_own || !sg_tpl_add(s, (sg_tpl_file){label.data, name.data, text, len})) {
            sg_diag_plain(d, SG_ERROR, "cannot read the template '%s/%s'", path.data,
                          names[i] ? names[i] : "?");
            errors++;
        }
        if (!t_own) free(text);
        if (!l_own) sg_buf_free(&label);
        if (!n_own) sg_buf_free(&name);
        free(names[i]);
    }
    free(names);
    sg_buf_free(&path);
    return errors;
}
int sg_tpl_read_dir(sg_tpl_sources *s, const char *dir, sg_diag *d) {
    int errors = read_folder(s, dir, "", d);
    return errors + read_folder(s, dir, "lib", d);
}
