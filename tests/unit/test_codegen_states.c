/* Rendering on two Lua states at once (gen/render.c) must give what one state gives: the same
 * files in the same order, byte for byte, and the same messages where templates fail. Each
 * render has an environment of its own, and a render that makes much garbage still runs. The
 * quoting helpers templates get (cstr, jstr), failing Lua's allocations through the hook, and
 * writing the corpus's outputs (two threads), are checked here too. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "check.h"
#include "codegen.h"
#include "derive.h"
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Loads and checks yaml (and tags, where given) as the tool does before rendering. */
static bool load(sg_model *m, const char *yaml, const char *tags) {
    sg_diag d;
    sg_diag_init(&d);
    if (sg_model_init(m) != 0) return false;
    if (tags) sg_load_file(m, tags, &d);
    sg_load_file(m, yaml, &d);
    sg_model_group(m, &d);
    sg_validate(m, &d);
    if (!d.nerrors) sg_model_derive(m, &d);
    if (d.nerrors) fprintf(stderr, "%.*s", (int)d.out.len, d.out.data);
    bool ok = d.nerrors == 0;
    sg_diag_free(&d);
    return ok;
}

typedef struct result {
    sg_outputs out;
    sg_diag    d;
    int        errors;
} result;

static void render(result *r, const sg_model *m, uint32_t threads, uint32_t shards,
                   const char *tpl_dir) {
    memset(&r->out, 0, sizeof r->out);
    sg_diag_init(&r->d);
    const char     *inputs[1] = {"ops.yaml"};
    const char     *dirs[1] = {tpl_dir};
    sg_codegen_opts o = {.lib = "t", .shards = shards, .inputs = inputs, .ninputs = 1,
                         .template_dirs = dirs, .ntemplate_dirs = tpl_dir ? 1 : 0,
                         .threads = threads};
    r->errors = sg_codegen(m, &o, &r->out, &r->d);
}

static void result_free(result *r) {
    sg_outputs_free(&r->out);
    sg_diag_free(&r->d);
}

/* Same names, order and bytes; the same messages. */
static void check_same(const result *a, const result *b) {
    CHECK(a->errors == b->errors);
    CHECK(a->out.n == b->out.n);
    CHECK(a->d.out.len == b->d.out.len &&
          memcmp(a->d.out.data ? a->d.out.data : "", b->d.out.data ? b->d.out.data : "",
                 a->d.out.len) == 0);
    for (uint32_t i = 0; i < a->out.n && i < b->out.n; i++) {
        CHECK_STR(a->out.items[i].name, b->out.items[i].name);
        const sg_buf *x = &a->out.items[i].text, *y = &b->out.items[i].text;
        CHECK(x->len == y->len && x->len > 0 && memcmp(x->data, y->data, x->len) == 0);
    }
}

static void write_file(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void remove_file(const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(remove(path) == 0);
}

/* Every built-in template over the golden schemas, in 3 shards: one state and two agree. */
static void test_builtins(const sg_model *m) {
    result one, two;
    render(&one, m, 1, 3, NULL);
    render(&two, m, 2, 3, NULL);
    CHECK(one.errors == 0);
    CHECK(one.out.n >= 7); /* header, 3 shards, composites, table, registrations */
    check_same(&one, &two);
    result_free(&one);
    result_free(&two);
}

/* Failing templates: messages in template order, one for a template that fails in every
 * shard (its first shard's), nothing rendered; the same on two states. */
static void test_errors(const sg_model *m, const char *dir) {
    write_file(dir, "a_header.tpl", "%! output = no_such_function()\ntext\n");
    write_file(dir, "b_shards.tpl",
               "%! output = \"{lib}_b{shard}.txt\", per_shard = true\n"
               "% error(\"boom in shard \" .. shard)\n");
    write_file(dir, "c_fine.tpl", "%! output = \"{lib}_c.txt\"\n$(#model.ops) ops\n");
    result one, two;
    render(&one, m, 1, 4, dir);
    render(&two, m, 2, 4, dir);
    CHECK(one.errors == 2);
    CHECK(one.out.n == 0);
    const char *text = one.d.out.data ? one.d.out.data : "";
    const char *a = strstr(text, "a_header.tpl:1:"), *b = strstr(text, "boom in shard 0");
    CHECK(a && b && a < b);
    CHECK(!strstr(text, "boom in shard 1"));
    check_same(&one, &two);
    result_free(&one);
    result_free(&two);
    remove_file(dir, "a_header.tpl");
    remove_file(dir, "b_shards.tpl");
    remove_file(dir, "c_fine.tpl");
}

/* A global one render sets is not seen by another (of its template or another one), whatever
 * state they run in; a render that makes more garbage than a state may hold (2.3 GB of strings
 * made and dropped, against a cap of 1 GiB) has it collected and stands. */
static void test_isolation_and_garbage(const sg_model *m, const char *dir) {
    write_file(dir, "g_global.tpl",
               "%! output = \"{lib}_g{shard}.txt\", per_shard = true\n"
               "% assert(seen == nil, \"a render saw another render's global\")\n"
               "% seen = shard\n"
               "shard $(seen)\n");
    write_file(dir, "h_garbage.tpl",
               "%! output = \"{lib}_h.txt\"\n"
               "% local n, unit = 0, string.rep(\"x\", 1000)\n"
               "% for i = 1, 36000 do n = n + #(unit:rep(32) .. i) end\n"
               "$(n)\n");
    result one, two;
    render(&one, m, 1, 4, dir);
    render(&two, m, 2, 4, dir);
    CHECK(one.errors == 0);
    if (one.d.out.len) fprintf(stderr, "%.*s", (int)one.d.out.len, one.d.out.data);
    check_same(&one, &two);
    bool found = false;
    for (uint32_t i = 0; i < one.out.n; i++) {
        if (strcmp(one.out.items[i].name, "t_h.txt") != 0) continue;
        const sg_buf *x = &one.out.items[i].text;
        const char *want = "1152168894\n"; /* 36000 strings of 32000 x, and the digits of 1..36000 */
        CHECK(x->len == strlen(want) && memcmp(x->data, want, x->len) == 0);
        found = true;
    }
    CHECK(found);
    result_free(&one);
    result_free(&two);
    remove_file(dir, "g_global.tpl");
    remove_file(dir, "h_garbage.tpl");
}

/* The text of output `name` of r (empty where there is none), malloc'ed. */
static char *output_text(const result *r, const char *name) {
    sg_buf x;
    sg_buf_init(&x);
    for (uint32_t i = 0; i < r->out.n; i++)
        if (strcmp(r->out.items[i].name, name) == 0)
            sg_buf_putn(&x, r->out.items[i].text.data, r->out.items[i].text.len);
    sg_buf_putc(&x, '\0');
    return x.data;
}

/* cstr and jstr quote for C and for JSON: short strings (quoted at once) and long ones (past
 * the quick buffer), with and without characters to escape, and nil. */
static void test_quoting(const sg_model *m, const char *dir) {
    write_file(dir, "q_quote.tpl",
               "%! output = \"{lib}_q.txt\"\n"
               "% local long = string.rep(\"ab\", 600)\n"
               "% for _, s in ipairs({\"plain\", 'a\"b\\\\c', \"tab\\there\", \"\\127\", \"\\195\\169\", long, long .. \"\\n\"}) do\n"
               "$(cstr(s)) $(jstr(s))\n"
               "% end\n"
               "$(cstr(nil)) $(jstr(nil))\n");
    result r;
    render(&r, m, 1, 1, dir);
    CHECK(r.errors == 0);
    if (r.d.out.len) fprintf(stderr, "%.*s", (int)r.d.out.len, r.d.out.data);
    sg_buf want;
    sg_buf_init(&want);
    sg_buf_puts(&want, "\"plain\" \"plain\"\n");
    sg_buf_puts(&want, "\"a\\\"b\\\\c\" \"a\\\"b\\\\c\"\n");
    sg_buf_puts(&want, "\"tab\\011here\" \"tab\\there\"\n");
    sg_buf_puts(&want, "\"\\177\" \"\\u007f\"\n");
    sg_buf_puts(&want, "\"\xc3\xa9\" \"\xc3\xa9\"\n");
    for (int k = 0; k < 2; k++) {
        for (int q = 0; q < 2; q++) {
            sg_buf_putc(&want, '"');
            for (int i = 0; i < 600; i++) sg_buf_puts(&want, "ab");
            if (k) sg_buf_puts(&want, q ? "\\n" : "\\012");
            sg_buf_puts(&want, q ? "\"\n" : "\" ");
        }
    }
    sg_buf_puts(&want, "NULL null\n");
    sg_buf_putc(&want, '\0');
    char *got = output_text(&r, "t_q.txt");
    CHECK_STR(got, want.data);
    free(got);
    sg_buf_free(&want);
    result_free(&r);
    remove_file(dir, "q_quote.tpl");
}

/* C.comment (the tool's ccomment): fixed cases, then random strings over the bytes that
 * matter, against the Lua it replaced (kept here as the reference: the generated C's comments
 * must not change). */
static void test_comment(const sg_model *m, const char *dir) {
    write_file(dir, "k_comment.tpl",
               "%! output = \"{lib}_k.txt\"\n"
               "% local C = import \"c\"\n"
               "% local function ref(s)\n"
               "%   local function byte_of(out, s, i)\n"
               "%     local c = s:sub(i, i)\n"
               "%     local prev = (out[#out] or \"\"):sub(-1)\n"
               "%     if (c == \"/\" and prev == \"*\") or (c == \"*\" and prev == \"/\") or (c == \"?\" and s:sub(i - 1, i - 1) == \"?\") then\n"
               "%       out[#out + 1] = \"\\\\\" .. c\n"
               "%     else\n"
               "%       out[#out + 1] = c\n"
               "%     end\n"
               "%   end\n"
               "%   local raw_high = utf8.len(s) ~= nil\n"
               "%   local out, tail = {}, s:find(\"\\\\[ \\t]*$\")\n"
               "%   for i = 1, #s do\n"
               "%     local b = s:byte(i)\n"
               "%     if b < 32 or b == 127 or (b > 127 and not raw_high) or i == tail then\n"
               "%       out[#out + 1] = string.format(\"\\\\%03o\", b)\n"
               "%     else\n"
               "%       byte_of(out, s, i)\n"
               "%     end\n"
               "%   end\n"
               "%   return table.concat(out)\n"
               "% end\n"
               "% for _, s in ipairs({\"a(Tensor self) -> Tensor\", \"*/*\", \"/**/\", \"?\?\?/\", \"a\\\\ \\t\", \"a\\\\b\\\\\",\n"
               "%                     \"\\1\\n\\127\", \"\\195\\169\", \"\\195\", \"\\237\\160\\128\", \"\\244\\144\\128\\128\", \"\"}) do\n"
               "[$(C.comment(s))]\n"
               "% end\n"
               "% local pieces = {\"*\", \"/\", \"?\", \"\\\\\", \" \", \"\\t\", \"\\n\", \"a\", \"\\127\", \"\\195\", \"\\169\",\n"
               "%                 \"\\224\", \"\\160\", \"\\237\", \"\\240\", \"\\144\", \"\\244\", \"\\128\", \"\\191\", \"\\255\", \"\\0\"}\n"
               "% local x, bad = 12345, 0\n"
               "% for n = 1, 4000 do\n"
               "%   local t = {}\n"
               "%   for k = 1, n % 9 do\n"
               "%     x = (x * 1103515245 + 12345) % 2147483648\n"
               "%     t[k] = pieces[x % #pieces + 1]\n"
               "%   end\n"
               "%   local s = table.concat(t)\n"
               "%   if C.comment(s) ~= ref(s) then bad = bad + 1 end\n"
               "% end\n"
               "differ: $(bad)\n");
    result r;
    render(&r, m, 1, 1, dir);
    CHECK(r.errors == 0);
    if (r.d.out.len) fprintf(stderr, "%.*s", (int)r.d.out.len, r.d.out.data);
    char *got = output_text(&r, "t_k.txt");
    CHECK_STR(got, "[a(Tensor self) -> Tensor]\n"
                   "[*\\/\\*]\n"
                   "[/\\**\\/]\n"
                   "[?\\?\\?/]\n"
                   "[a\\134 \\011]\n"
                   "[a\\b\\134]\n"
                   "[\\001\\012\\177]\n"
                   "[\xc3\xa9]\n"
                   "[\\303]\n"
                   "[\\355\\240\\200]\n"
                   "[\\364\\220\\200\\200]\n"
                   "[]\n"
                   "differ: 0\n");
    free(got);
    result_free(&r);
    remove_file(dir, "k_comment.tpl");
}

/* # on the model's views: a list's length, 0 for a record (string keys only) as on a plain
 * table, whether or not its view's metatable has __len (lua_model.c leaves it out there). */
static void test_lengths(const sg_model *m, const char *dir) {
    write_file(dir, "l_len.tpl",
               "%! output = \"{lib}_l.txt\"\n"
               "% local op = model.ops[1]\n"
               "% local n = 0\n"
               "% for _ in ipairs(model.ops) do n = n + 1 end\n"
               "$(#model) $(#op) $(#op.variants) $(#op.args[1]) $(tostring(#model.ops == n)) $(#op.args) $(#op.returns)\n"
               "% local args, k = op.args, 0\n"
               "% for _ in pairs(args) do k = k + 1 end\n"
               "$(tostring(#args == k)) $(tostring(next(op) ~= nil)) $(tostring(next(op.variants) ~= nil))\n");
    result r;
    render(&r, m, 1, 1, dir);
    CHECK(r.errors == 0);
    if (r.d.out.len) fprintf(stderr, "%.*s", (int)r.d.out.len, r.d.out.data);
    char *got = output_text(&r, "t_l.txt");
    char  want[128];
    snprintf(want, sizeof want, "0 0 0 0 true %u %u\ntrue true true\n", m->ops[0]->schema.nargs,
             m->ops[0]->schema.nrets);
    CHECK_STR(got, want);
    free(got);
    result_free(&r);
    remove_file(dir, "l_len.tpl");
}

/* op.dispatch is made when first read (lua_model.c): pairs and next see it before any read,
 * it is read-only like the rest, ops without one have none, and alike tables are one table
 * whatever order they are read in (an entry's keys and another op's kernel_keys too). */
static void test_lazy_dispatch(const char *dir) {
    write_file(dir, "lazy.yaml",
               "- func: a(Tensor self) -> Tensor\n"
               "  dispatch:\n"
               "    CPU: k_cpu\n"
               "- func: b(Tensor self, Tensor other) -> Tensor\n"
               "  dispatch:\n"
               "    CPU: k_cpu\n"
               "- func: c(Tensor self) -> Tensor\n");
    char path[512];
    snprintf(path, sizeof path, "%s/lazy.yaml", dir);
    sg_model model;
    CHECK(load(&model, path, NULL));
    write_file(dir, "z_lazy.tpl",
               "%! output = \"{lib}_z.txt\"\n"
               "% local a, b, c = model.ops[1], model.ops[2], model.ops[3]\n"
               "% local seen = {}\n"
               "% for k, v in pairs(b) do seen[k] = v end\n"
               "% local k1, v1 = next(a, nil)\n"
               "% while k1 ~= nil and k1 ~= 'dispatch' do k1, v1 = next(a, k1) end\n"
               "$(tostring(seen.dispatch ~= nil)) $(tostring(k1)) $(tostring(rawequal(v1, a.dispatch)))\n"
               "$(tostring(rawequal(a.dispatch, b.dispatch))) $(a.dispatch[1].kernel) $(#a.dispatch) $(tostring(c.dispatch))\n"
               "$(tostring(rawequal(a.dispatch[1].keys, a.kernel_keys) == (a.kernel_keys[1] == 'CPU' and #a.kernel_keys == 1)))\n"
               "% local ok1, e1 = pcall(function() c.dispatch = 1 end)\n"
               "% local ok2, e2 = pcall(function() a.dispatch[1].kernel = 'x' end)\n"
               "$(tostring(ok1)) $(tostring(ok2)) $(tostring(e1:find('read%-only') ~= nil)) $(tostring(e2:find('read%-only') ~= nil)) $(a.dispatch[1].kernel)\n"
               "$(tostring(c.structured_out)) $(tostring(a.no_such_field)) $(a.cname)\n");
    result r;
    render(&r, &model, 1, 1, dir);
    CHECK(r.errors == 0);
    if (r.d.out.len) fprintf(stderr, "%.*s", (int)r.d.out.len, r.d.out.data);
    char *got = output_text(&r, "t_z.txt");
    CHECK_STR(got, "true dispatch true\n"
                   "true k_cpu 1 nil\n"
                   "true\n"
                   "false false true true k_cpu\n"
                   "nil nil aten_a\n");
    free(got);
    result_free(&r);
    sg_model_free(&model);
    remove_file(dir, "z_lazy.tpl");
    remove_file(dir, "lazy.yaml");
}

/* Tables of the model alike in content are one table (lua_model.c shares them): for every two
 * ops, each of these fields is the same table exactly where the two hold the same. The schemas
 * have pairs of both kinds for each field. */
static void test_shared_tables(const char *dir) {
    write_file(dir, "shared.yaml",
               "- func: a(Tensor self) -> Tensor\n"
               "  variants: function, method\n"
               "  dispatch:\n"
               "    CPU: a_cpu\n"
               "  tags: nondeterministic_seeded\n"
               "- func: b(Tensor self) -> Tensor\n"
               "  variants: function, method\n"
               "  dispatch:\n"
               "    CPU: a_cpu\n"
               "  tags: nondeterministic_seeded\n"
               "- func: c(Tensor self, Tensor other) -> (Tensor, Tensor)\n"
               "  variants: function\n"
               "  dispatch:\n"
               "    CPU, CUDA: c_any\n");
    char path[512];
    snprintf(path, sizeof path, "%s/shared.yaml", dir);
    sg_model model;
    CHECK(load(&model, path, NULL));
    const sg_model *m = &model;
    write_file(dir, "s_shared.tpl",
               "%! output = \"{lib}_s.txt\"\n"
               "% local function same(a, b)\n"
               "%   if type(a) ~= 'table' or type(b) ~= 'table' then return a == b end\n"
               "%   for k, v in pairs(a) do if not same(v, b[k]) then return false end end\n"
               "%   for k in pairs(b) do if a[k] == nil then return false end end\n"
               "%   return true\n"
               "% end\n"
               "% local fields = {'tags', 'variants', 'dispatch', 'kernel_keys', 'args',\n"
               "%                 'returns'}\n"
               "% local alike, apart = {}, {}\n"
               "% for i, x in ipairs(model.ops) do\n"
               "%   for j, y in ipairs(model.ops) do\n"
               "%     for _, f in ipairs(fields) do\n"
               "%       local a, b = x[f], y[f]\n"
               "%       if i < j and a ~= nil and b ~= nil then\n"
               "%         local s = same(a, b)\n"
               "%         local t = s and alike or apart\n"
               "%         t[f] = (t[f] or 0) + 1\n"
               "%         if s ~= rawequal(a, b) then\n"
               "wrong $(f) of $(x.cname) and $(y.cname)\n"
               "%         end\n"
               "%       end\n"
               "%     end\n"
               "%   end\n"
               "% end\n"
               "counts:\n"
               "% for _, f in ipairs(fields) do\n"
               "$(f) $(alike[f] or 0) $(apart[f] or 0)\n"
               "% end\n");
    result r;
    render(&r, m, 1, 1, dir);
    CHECK(r.errors == 0);
    char *got = output_text(&r, "t_s.txt");
    CHECK(got != NULL);
    if (got) {
        CHECK(strstr(got, "wrong") == NULL);
        if (strstr(got, "wrong")) fprintf(stderr, "%s", got);
        static const char *const fields[] = {"tags", "variants", "dispatch", "kernel_keys",
                                             "args", "returns"};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
            char line[64];
            long alike = 0, apart = 0;
            snprintf(line, sizeof line, "\n%s ", fields[i]);
            const char *at = strstr(got, line);
            CHECK(at && sscanf(at + strlen(line), "%ld %ld", &alike, &apart) == 2);
            CHECK(alike > 0 && apart > 0);
        }
    }
    free(got);
    result_free(&r);
    sg_model_free(&model);
    remove_file(dir, "s_shared.tpl");
    remove_file(dir, "shared.yaml");
}

/* _w writes an integer itself (render.c): every piece comes out as tostring gives it, for
 * integers at both ends of the range and floats alike. */
static void test_numbers(const sg_model *m, const char *dir) {
    write_file(dir, "n_numbers.tpl",
               "%! output = \"{lib}_n.txt\"\n"
               "% for _, x in ipairs({0, -1, 7, 1234567890123, math.maxinteger, math.mininteger,\n"
               "%                     3.0, -0.5, 1e300, 2^63, 10 // 3, 10 / 2}) do\n"
               "$(x)=$(tostring(x))\n"
               "% end\n");
    result r;
    render(&r, m, 1, 1, dir);
    CHECK(r.errors == 0);
    char *got = output_text(&r, "t_n.txt");
    int   lines = 0;
    for (char *line = got, *nl; line && (nl = strchr(line, '\n')); line = nl + 1, lines++) {
        *nl = '\0';
        char *eq = strchr(line, '=');
        CHECK(eq != NULL);
        if (!eq) break;
        *eq = '\0';
        CHECK_STR(line, eq + 1);
    }
    CHECK(lines == 12);
    free(got);
    result_free(&r);
    remove_file(dir, "n_numbers.tpl");
}

/* Writes r's outputs into a fresh folder twice, and
 * reads each file back: its bytes, and the second write leaves them as they were. */
static void test_write(const result *r) {
    char dir[] = "/tmp/sg_codegen_write_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    for (int pass = 0; pass < 2; pass++) {
        CHECK(sg_outputs_write(dir, &r->out, stderr) == 0);
        for (uint32_t i = 0; i < r->out.n; i++) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, r->out.items[i].name);
            FILE  *f = fopen(path, "rb");
            const sg_buf *want = &r->out.items[i].text;
            sg_buf        got;
            sg_buf_init(&got);
            char   chunk[65536];
            size_t n;
            while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0) sg_buf_putn(&got, chunk, n);
            CHECK(f != NULL && got.len == want->len && memcmp(got.data, want->data, got.len) == 0);
            if (f) fclose(f);
            if (pass == 1) CHECK(remove(path) == 0);
            sg_buf_free(&got);
        }
    }
    CHECK(rmdir(dir) == 0); /* nothing else was left there (no temporary files) */
}

/* An allocation hook that fails the n-th allocation and every one after it. */
typedef struct failing {
    long calls, fail_at;
} failing;

static void *failing_alloc(void *ud, void *ptr, size_t size) {
    failing *f = ud;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return ++f->calls >= f->fail_at ? NULL : malloc(size);
}

/* Lua's memory comes through sg_codegen_opts.alloc: failing it anywhere (starting a state,
 * building the model, rendering) makes sg_codegen fail with a message and no outputs, never
 * crash; with no failure, the hook serves every block and the files are the usual ones. */
static void test_alloc_failures(const sg_model *m) {
    const char     *inputs[1] = {"ops.yaml"};
    failing         f = {0, -1};
    sg_codegen_opts o = {.lib = "t", .shards = 2, .inputs = inputs, .ninputs = 1, .threads = 1,
                         .alloc = failing_alloc, .alloc_ud = &f};
    result plain, hooked;
    render(&plain, m, 1, 2, NULL);
    f.fail_at = (long)1 << 60;
    memset(&hooked.out, 0, sizeof hooked.out);
    sg_diag_init(&hooked.d);
    hooked.errors = sg_codegen(m, &o, &hooked.out, &hooked.d);
    long total = f.calls;
    CHECK(total > 1000);
    check_same(&plain, &hooked);
    result_free(&plain);
    result_free(&hooked);
    /* a failure at 40 points spread over the run */
    for (long k = 1; k <= 40; k++) {
        f = (failing){0, 1 + total * k / 41};
        sg_outputs out = {0};
        sg_diag    d;
        sg_diag_init(&d);
        int errors = sg_codegen(m, &o, &out, &d);
        CHECK(errors > 0);
        CHECK(out.n == 0);
        const char *text = d.out.data ? d.out.data : "";
        CHECK(strstr(text, "memory") != NULL);
        if (errors == 0 || !strstr(text, "memory"))
            fprintf(stderr, "failing allocation %ld of %ld: %d errors: %s\n", f.fail_at, total,
                    errors, text);
        sg_outputs_free(&out);
        sg_diag_free(&d);
    }
}

/* The whole corpus: what the tool writes for PyTorch, one state against two. */
static void test_corpus(void) {
    const char *yaml = SG_CORPUS_DIR "/native_functions.yaml", *tags = SG_CORPUS_DIR "/tags.yaml";
    if (access(yaml, R_OK) != 0) {
        fprintf(stderr, "note: no corpus at %s: its part of the test is skipped\n", yaml);
        return;
    }
    sg_model m;
    CHECK(load(&m, yaml, tags));
    result one, two;
    render(&one, &m, 1, 8, NULL);
    render(&two, &m, 2, 8, NULL);
    CHECK(one.errors == 0);
    CHECK(one.out.n == 19); /* header, table, registrations, 8 wrapper and 8 kernel shards */
    check_same(&one, &two);
    test_write(&two);
    result_free(&one);
    result_free(&two);
    sg_model_free(&m);
}

int main(void) {
    sg_model m;
    CHECK(load(&m, SG_TESTS_DIR "/golden/codegen/ops.yaml", NULL));
    char dir[] = "/tmp/sg_codegen_states_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_builtins(&m);
    test_errors(&m, dir);
    test_isolation_and_garbage(&m, dir);
    test_quoting(&m, dir);
    test_comment(&m, dir);
    test_lengths(&m, dir);
    test_lazy_dispatch(dir);
    test_shared_tables(dir);
    test_numbers(&m, dir);
    test_alloc_failures(&m);
    CHECK(rmdir(dir) == 0);
    sg_model_free(&m);
    test_corpus();
    return check_result("test_codegen_states");
}
