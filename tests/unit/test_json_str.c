/* JSON string escapes (gen/json_str.h): every byte 0..255 is written as RFC 8259 asks, in the
 * one spelling the generator uses, and reads back as itself through a small decoder written
 * here from the RFC; the word-wide scan agrees with the byte table everywhere in a word; and
 * the three writers that use the table (--emit=json, the templates' jstr(), the DSL plan) write
 * the same bytes for the same hostile strings. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "check.h"
#include "codegen.h"
#include "derive.h"
#include "dsl.h"
#include "emit.h"
#include "json_str.h"
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- RFC 8259, section 7, as the test reads it ----------------------------------------- */

/* The spelling this project writes for byte c: the short escapes JSON has, \u00xx for every
 * other byte JSON requires escaped (below 0x20) and for 0x7f, the byte itself otherwise. */
static const char *want_escape(unsigned c, char buf[8]) {
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case 0x08: return "\\b";
    case 0x0c: return "\\f";
    case 0x0a: return "\\n";
    case 0x0d: return "\\r";
    case 0x09: return "\\t";
    }
    if (c < 0x20 || c == 0x7f)
        snprintf(buf, 8, "\\u%04x", c);
    else
        buf[0] = (char)c, buf[1] = '\0';
    return buf;
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes the JSON string that starts at s[0] (a quote) into out (NUL-terminated, at most
 * cap bytes with it); returns the length of the token, quotes included, or 0 where it is not
 * a JSON string: an unescaped byte below 0x20, an escape JSON does not have, no closing
 * quote. \u escapes past 0x7f would need UTF-8 encoding: none is ever written, so they are
 * refused here. */
static size_t decode(const char *s, size_t n, char *out, size_t cap, size_t *outlen) {
    size_t o = 0;
    if (n == 0 || s[0] != '"') return 0;
    for (size_t i = 1; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') {
            out[o] = '\0';
            *outlen = o;
            return i + 1;
        }
        if (c < 0x20 || o + 2 > cap) return 0;
        if (c != '\\') {
            out[o++] = (char)c;
            continue;
        }
        if (++i == n) return 0;
        switch (s[i]) {
        case '"': out[o++] = '"'; break;
        case '\\': out[o++] = '\\'; break;
        case '/': out[o++] = '/'; break;
        case 'b': out[o++] = 0x08; break;
        case 'f': out[o++] = 0x0c; break;
        case 'n': out[o++] = 0x0a; break;
        case 'r': out[o++] = 0x0d; break;
        case 't': out[o++] = 0x09; break;
        case 'u': {
            if (n - i < 5) return 0;
            int v = 0;
            for (int k = 1; k <= 4; k++) {
                int h = hexval(s[i + k]);
                if (h < 0) return 0;
                v = v * 16 + h;
            }
            if (v > 0x7f) return 0;
            out[o++] = (char)v;
            i += 4;
            break;
        }
        default: return 0;
        }
    }
    return 0;
}

/* ---- the table, one byte at a time ----------------------------------------------------- */

static void test_every_byte(void) {
    for (unsigned c = 0; c < 256; c++) {
        char want_buf[8], got[SG_JSON_ESC_MAX + 1];
        const char *want = want_escape(c, want_buf);
        size_t      n = sg_json_escape((unsigned char)c, got);
        got[n] = '\0';
        /* the spelling the RFC allows and docs/json-format.md picks */
        CHECK(n == strlen(want));
        CHECK(memcmp(got, want, n) == 0);
        CHECK((sg_json_esc[c] != 0) == (n > 1));
        if (memcmp(got, want, n) != 0) fprintf(stderr, "  byte 0x%02x\n", c);

        /* as a one-byte string: a JSON string that reads back as the byte, no raw control */
        char  one = (char)c;
        sg_buf b;
        sg_buf_init(&b);
        sg_json_put(&b, &one, 1);
        char   back[8];
        size_t backlen = 0;
        CHECK(!b.oom && decode(b.data, b.len, back, sizeof back, &backlen) == b.len);
        CHECK(backlen == 1 && back[0] == one);
        for (size_t i = 0; i < b.len; i++)
            CHECK((unsigned char)b.data[i] >= 0x20 && (unsigned char)b.data[i] != 0x7f);
        sg_buf_free(&b);
    }
    /* the two-character escapes and the \u form, spelled out */
    char e[SG_JSON_ESC_MAX];
    CHECK(sg_json_escape('\n', e) == 2 && memcmp(e, "\\n", 2) == 0);
    CHECK(sg_json_escape(0x1f, e) == 6 && memcmp(e, "\\u001f", 6) == 0);
    CHECK(sg_json_escape(0x7f, e) == 6 && memcmp(e, "\\u007f", 6) == 0);
    CHECK(sg_json_escape('/', e) == 1 && e[0] == '/');
    CHECK(sg_json_escape(0xc3, e) == 1 && (unsigned char)e[0] == 0xc3);
}

/* sg_json_word_plain says what the table says of each byte, at every place in a word and
 * whatever its neighbours are (the word tests borrow across bytes). */
static void test_word_scan(void) {
    static const unsigned char fill[] = {'a', 0x00, 0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff};
    int wrong = 0;
    for (unsigned f = 0; f < sizeof fill; f++)
        for (unsigned p = 0; p < 7; p++)
            for (unsigned c1 = 0; c1 < 256; c1++)
                for (unsigned c2 = 0; c2 < 256; c2++) {
                    unsigned char w[8];
                    memset(w, fill[f], 8);
                    w[p] = (unsigned char)c1;
                    w[p + 1] = (unsigned char)c2;
                    bool want = true;
                    for (int k = 0; k < 8; k++) want = want && !sg_json_esc[w[k]];
                    uint64_t x;
                    memcpy(&x, w, 8);
                    wrong += sg_json_word_plain(x) != want;
                }
    CHECK(wrong == 0);
}

/* sg_json_plain stops at the first byte to escape, wherever it is, and runs to the end where
 * there is none. */
static void test_plain_prefix(void) {
    char s[64];
    for (size_t n = 0; n <= sizeof s; n++) {
        memset(s, 'x', sizeof s);
        CHECK(sg_json_plain(s, n) == n);
        for (size_t p = 0; p < n; p++) {
            memset(s, 'x', sizeof s);
            s[p] = (char)(p % 3 == 0 ? 0x7f : p % 3 == 1 ? '"' : '\n');
            CHECK(sg_json_plain(s, n) == p);
        }
    }
}

/* ---- the three writers ------------------------------------------------------------------- */

/* Every byte JSON escapes but NUL (model strings end at it), '/', and UTF-8 of two, three
 * and four bytes, between plain text. */
static void hostile(sg_buf *s) {
    sg_buf_puts(s, "start ");
    for (unsigned c = 1; c < 0x20; c++) sg_buf_putc(s, (char)c);
    sg_buf_puts(s, " q\" bs\\ sl/ del\x7f \xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e end \\\"");
    sg_buf_putc(s, '\0');
    s->len--;
}

/* The strings of the tags file: the hostile one, long ones (past emit_json's in-place limit
 * and jstr's quick buffer; one whose escapes run across emit_json's 64 KiB windows), and short
 * ones with one byte to escape at each place of a word and its tail. */
enum { NSHORT = 20, NLONG = 4 };
static void tag_strings(sg_buf *out, uint32_t *n) {
    sg_buf h;
    sg_buf_init(&h);
    hostile(&h);
    uint32_t k = 0;
    sg_buf_init(&out[k]);
    sg_buf_puts(&out[k++], h.data);
    sg_buf_init(&out[k]);
    for (int r = 0; r < 120; r++) sg_buf_puts(&out[k], h.data);
    k++;
    sg_buf_init(&out[k]);
    for (int r = 0; r < 5000; r++) sg_buf_putc(&out[k], (char)('a' + r % 26));
    k++;
    sg_buf_init(&out[k]);
    for (int r = 0; r < 30000; r++) sg_buf_puts(&out[k], r % 7 ? "\x01" "a\n" : "\x7f\"\\");
    k++;
    static const char special[] = {0x7f, '"', '\\', 0x01, '\n', 0x1f};
    for (uint32_t len = 1; len <= NSHORT; len++)
        for (uint32_t p = 0; p < len; p++) {
            sg_buf_init(&out[k]);
            for (uint32_t i = 0; i < len; i++)
                sg_buf_putc(&out[k], i == p ? special[(len + p) % sizeof special] : 'a');
            k++;
        }
    sg_buf_free(&h);
    *n = k;
}

/* s as a YAML double-quoted scalar. */
static void yaml_quoted(sg_buf *y, const char *s) {
    sg_buf_putc(y, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f)
            sg_buf_printf(y, "\\x%02x", c);
        else if (c == '"' || c == '\\')
            sg_buf_printf(y, "\\%c", c);
        else
            sg_buf_putc(y, (char)c);
    }
    sg_buf_putc(y, '"');
}

/* s as a schema string default (c10's escapes: three-digit octal), inside a YAML
 * single-quoted scalar (a quote doubled). */
static void schema_quoted(sg_buf *y, const char *s) {
    sg_buf_putc(y, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
            sg_buf_printf(y, "\\%03o", c);
        else if (c == '\'')
            sg_buf_puts(y, "''");
        else
            sg_buf_putc(y, (char)c);
    }
    sg_buf_putc(y, '"');
}

static bool write_file(const char *path, const sg_buf *b) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(b->data, 1, b->len, f) == b->len;
    return fclose(f) == 0 && ok;
}

/* The JSON string token that follows `key` in text (after its first occurrence past
 * `after`), malloc'ed; NULL where there is none. */
static char *token_after(const char *text, const char *after, const char *key) {
    const char *p = after ? strstr(text, after) : text;
    if (!p || !(p = strstr(p, key))) return NULL;
    p += strlen(key);
    if (*p != '"') return NULL;
    const char *q = p + 1;
    while (*q && *q != '"') q += *q == '\\' && q[1] ? 2 : 1;
    if (*q != '"') return NULL;
    size_t n = (size_t)(q + 1 - p);
    char  *t = malloc(n + 1);
    if (!t) return NULL;
    memcpy(t, p, n);
    t[n] = '\0';
    return t;
}

/* What the table gives for s, through sg_json_put. */
static char *reference(const char *s) {
    sg_buf b;
    sg_buf_init(&b);
    sg_json_puts(&b, s);
    return b.data;
}

/* Checks that `got` is the reference spelling of s and reads back as s. */
static void check_token(const char *got, const char *s, const char *who, uint32_t i) {
    char *want = reference(s);
    CHECK(got != NULL);
    if (got && strcmp(got, want) != 0) {
        check_failures++;
        fprintf(stderr, "%s, string %u:\n  got:  %.200s\n  want: %.200s\n", who, i, got, want);
    }
    size_t n = strlen(s) + 1, outlen = 0;
    char  *back = malloc(n);
    CHECK(back && got && decode(got, strlen(got), back, n, &outlen) == strlen(got) &&
          outlen == strlen(s) && memcmp(back, s, outlen) == 0);
    free(back);
    free(want);
}

/* A plan of one artifact whose source names hold s (a path may hold any byte). */
static char *dsl_plan_token(const char *s) {
    sg_dsl_lang     lang = {.name = "triton", .package = "triton", .kind = "triton"};
    int32_t         caps[1] = {90};
    const char     *archs[1] = {"sm_90"};
    sg_dsl_decl     dc = {.name = "k", .op_name = "aten::k", .lang = &lang, .dsl = "triton",
                          .compiler = "triton==3.0", .source = s, .source_path = s,
                          .kernel = "k", .caps = caps, .arch_names = archs, .narchs = 1};
    sg_dsl_artifact art = {.decl = &dc, .prefix = "k__sm90", .warps = 4, .stages = 2};
    sg_dsl_set      set = {.arts = &art, .narts = 1};
    sg_buf          b;
    sg_buf_init(&b);
    sg_dsl_plan(&b, &set);
    char *t = b.oom ? NULL : token_after(b.data, NULL, "\"source_key\": ");
    char *u = b.oom ? NULL : token_after(b.data, NULL, "\"source\": ");
    CHECK(t && u && strcmp(t, u) == 0);
    free(u);
    sg_buf_free(&b);
    return t;
}

static void test_writers_agree(void) {
    char dir[] = "/tmp/sg_json_str_XXXXXX";
    if (!mkdtemp(dir)) SKIP("no temporary folder");
    enum { MAXS = NLONG + NSHORT * (NSHORT + 1) / 2 };
    static sg_buf strs[MAXS];
    uint32_t      nstrs = 0;
    tag_strings(strs, &nstrs);
    CHECK(nstrs == MAXS);

    /* a tags file with every string, an op whose str default is the hostile one */
    char   tags_path[256], ops_path[256], tpl_path[256];
    sg_buf y;
    sg_buf_init(&y);
    for (uint32_t i = 0; i < nstrs; i++) {
        sg_buf_printf(&y, "- tag: t%u\n  desc: ", i);
        yaml_quoted(&y, strs[i].data);
        sg_buf_putc(&y, '\n');
    }
    snprintf(tags_path, sizeof tags_path, "%s/tags.yaml", dir);
    CHECK(write_file(tags_path, &y));
    y.len = 0;
    sg_buf_puts(&y, "- func: 'hostile(Tensor self, str s=");
    schema_quoted(&y, strs[0].data);
    sg_buf_puts(&y, ") -> Tensor'\n");
    snprintf(ops_path, sizeof ops_path, "%s/ops.yaml", dir);
    CHECK(write_file(ops_path, &y));
    y.len = 0;
    sg_buf_puts(&y, "%! output = \"{lib}_j.txt\"\n"
                    "% for _, t in ipairs(model.tags) do\n"
                    "$(t.name)=$(jstr(t.desc))\n"
                    "% end\n"
                    "nul=$(jstr(\"a\\0b\"))\n");
    snprintf(tpl_path, sizeof tpl_path, "%s/j.tpl", dir);
    CHECK(write_file(tpl_path, &y));
    sg_buf_free(&y);

    sg_model m;
    sg_diag  d;
    sg_diag_init(&d);
    CHECK(sg_model_init(&m) == 0);
    sg_load_file(&m, tags_path, &d);
    sg_load_file(&m, ops_path, &d);
    sg_model_group(&m, &d);
    sg_validate(&m, &d);
    if (!d.nerrors) sg_model_derive(&m, &d);
    if (d.nerrors) fprintf(stderr, "%.*s", (int)d.out.len, d.out.data);
    CHECK(d.nerrors == 0);
    sg_diag_free(&d);

    /* the strings reached the model as written */
    CHECK(m.ntags == nstrs);
    for (uint32_t i = 0; i < m.ntags && i < nstrs; i++) CHECK_STR(m.tags[i].desc, strs[i].data);
    const sg_value *v = m.nops == 1 && m.ops[0]->parsed && m.ops[0]->schema.nargs == 2
                            ? m.ops[0]->schema.args[1].default_value
                            : NULL;
    CHECK(v && v->kind == SG_VAL_STR && v->u.str.len == strs[0].len &&
          memcmp(v->u.str.s, strs[0].data, strs[0].len) == 0);

    /* --emit=json: each tag's desc, and the default's value */
    sg_buf json;
    sg_buf_init(&json);
    sg_emit_json(&json, &m);
    CHECK(!json.oom);
    for (uint32_t i = 0; i < nstrs; i++) {
        char after[64];
        snprintf(after, sizeof after, "{\"name\": \"t%u\", ", i);
        char *t = token_after(json.data, after, "\"desc\": ");
        check_token(t, strs[i].data, "--emit=json desc", i);
        free(t);
    }
    char *value = token_after(json.data, "{\"name\": \"s\", ", "\"value\": ");
    check_token(value, strs[0].data, "--emit=json value", 0);

    /* jstr() in a template, over the same tags */
    const char     *inputs[1] = {"ops.yaml"};
    const char     *dirs[1] = {dir};
    sg_codegen_opts o = {.lib = "t", .shards = 1, .inputs = inputs, .ninputs = 1,
                         .template_dirs = dirs, .ntemplate_dirs = 1, .threads = 1};
    sg_outputs      out = {0};
    sg_diag_init(&d);
    CHECK(sg_codegen(&m, &o, &out, &d) == 0);
    if (d.out.len) fprintf(stderr, "%.*s", (int)d.out.len, d.out.data);
    const sg_buf *text = NULL;
    for (uint32_t i = 0; i < out.n; i++)
        if (strcmp(out.items[i].name, "t_j.txt") == 0) text = &out.items[i].text;
    CHECK(text != NULL);
    sg_buf lines;
    sg_buf_init(&lines);
    sg_buf_putc(&lines, '\n');
    if (text) sg_buf_putn(&lines, text->data, text->len);
    for (uint32_t i = 0; text && i < nstrs; i++) {
        char after[32];
        snprintf(after, sizeof after, "\nt%u=", i);
        char *t = token_after(lines.data, after, "=");
        check_token(t, strs[i].data, "jstr()", i);
        free(t);
    }
    /* a Lua string may hold NUL, which a model string cannot */
    char *nul = text ? token_after(lines.data, "\nnul=", "=") : NULL;
    CHECK_STR(nul, "\"a\\u0000b\"");
    free(nul);
    sg_buf_free(&lines);
    sg_outputs_free(&out);
    sg_diag_free(&d);

    /* the DSL plan */
    for (uint32_t i = 0; i < NLONG; i++) {
        char *t = dsl_plan_token(strs[i].data);
        check_token(t, strs[i].data, "DSL plan", i);
        free(t);
    }

    /* and the three agree with each other on the hostile string, byte for byte */
    char *plan = dsl_plan_token(strs[0].data);
    CHECK(value && plan && strcmp(value, plan) == 0);
    free(plan);
    free(value);

    sg_buf_free(&json);
    sg_model_free(&m);
    for (uint32_t i = 0; i < nstrs; i++) sg_buf_free(&strs[i]);
    remove(tags_path);
    remove(ops_path);
    remove(tpl_path);
    rmdir(dir);
}

int main(void) {
    test_every_byte();
    test_word_scan();
    test_plain_prefix();
    test_writers_agree();
    return check_result("test_json_str");
}
