/* test_rt_schema.c: sg_op_define on hostile schema strings. The runtime parses schemas with
 * the schema library, so every nesting is bounded there too: a megabyte of each pathological
 * shape is refused with SG_EINVAL and a message, on a thread with a small stack (a parser or
 * a printer that recursed once per level would overflow it). What c10 accepts for custom ops
 * (duplicate argument names, annotations on non-Tensor types) defines; what c10 refuses
 * (overload 'default', non-finite or out-of-range defaults) does not. */
#include "check.h"
#include "sg_runtime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* head, then unit repeated to about 1 MB, then tail. */
static char *repeat(const char *head, const char *unit, const char *tail) {
    size_t nh = strlen(head), nu = strlen(unit), nt = strlen(tail), n = (1u << 20) / nu;
    char  *t = malloc(nh + n * nu + nt + 1), *o = t;
    memcpy(o, head, nh), o += nh;
    for (size_t i = 0; i < n; i++) memcpy(o, unit, nu), o += nu;
    memcpy(o, tail, nt + 1);
    return t;
}

/* sg_op_define(text) fails with SG_EINVAL and a message holding needle. */
static void refused(const char *text, const char *needle) {
    sg_op    *op = (sg_op *)1;
    sg_status st = sg_op_define(text, &op);
    CHECK(st == SG_EINVAL && op == NULL);
    if (st != SG_EINVAL || !strstr(sg_last_error(), needle))
        fprintf(stderr, "for %.60s...: status %d, message: %.300s\n  wanted: %s\n", text,
                (int)st, sg_last_error(), needle);
    CHECK(strstr(sg_last_error(), "sg_op_define: ") == sg_last_error());
    CHECK(strstr(sg_last_error(), needle) != NULL);
}

static void refused_huge(const char *head, const char *unit, const char *tail,
                         const char *needle) {
    char *t = repeat(head, unit, tail);
    refused(t, needle);
    free(t);
}

static void *hostile(void *unused) {
    (void)unused;
    refused_huge("my_ops::deep(Tensor", "[]", " x) -> ()", "type nested more than 32 levels");
    refused_huge("my_ops::deep(int", "?[]", " x) -> ()", "type nested more than 32 levels");
    refused_huge("my_ops::deep(Tensor x) -> Tensor", "[]", "", "type nested more than 32");
    refused_huge("my_ops::deep(", "(", "", "type nested more than 32 levels");
    refused_huge("my_ops::deep(", "Dict(str, ", "", "type nested more than 32 levels");
    refused_huge("my_ops::deep(", "Future(", "", "type nested more than 32 levels");
    refused_huge("my_ops::deep(int[] x=", "[", "", "list default nested more than 32 levels");
    refused_huge("my_ops::deep(Tensor(a", "|a", ") x) -> ()", "more than 64 names");
    refused_huge("my_ops::deep(", "Tensor a, ", ") -> ()", "more than 256 arguments");
    refused_huge("my_ops::deep(int[] x=[", "1,", "1]) -> ()", "more than 256 items");
    return NULL;
}

static void test_hostile_nesting(void) {
    pthread_attr_t attr;
    pthread_t      th;
    CHECK(pthread_attr_init(&attr) == 0);
    CHECK(pthread_attr_setstacksize(&attr, 256 * 1024) == 0);
    /* checked once joined: the thread's CHECKs count into the same counters */
    int created = pthread_create(&th, &attr, hostile, NULL);
    int joined = created == 0 ? pthread_join(th, NULL) : -1;
    CHECK(created == 0 && joined == 0);
    pthread_attr_destroy(&attr);
    sg_op *op = NULL;
    CHECK(sg_op_find("my_ops::deep", NULL, &op) == SG_ENOTFOUND && op == NULL);
}

static void test_c10_rules(void) {
    refused("my_ops::f.default(Tensor x) -> Tensor", "'default' is not a legal overload name");
    refused("my_ops::f.__name__(Tensor x) -> Tensor", "not a legal overload name");
    refused("my_ops::g(Tensor x, float y=1e400) -> Tensor", "out of the range of a double");
    refused("my_ops::g(Tensor x, float y=nan) -> Tensor", "'nan' is not a number");
    refused("my_ops::g(Tensor x, int y=0x10) -> Tensor", "hexadecimal");
    refused("my_ops::g(Tensor x, str y='\\x41') -> Tensor", "'\\x' escapes");
    /* what c10 takes from a custom library: both names kept, int(a!) read */
    sg_op *op = NULL;
    CHECK(sg_op_define("my_ops::dup(Tensor x, Tensor x, int(a!) n, int y=010) -> Tensor", &op) ==
          SG_OK);
    CHECK(op && sg_op_nargs(op) == 4);
    if (op) CHECK_STR(sg_op_schema(op), "my_ops::dup(Tensor x, Tensor x, int(a!) n, int y=010) -> Tensor");
}

int main(void) {
    test_hostile_nesting();
    test_c10_rules();
    sg_runtime_shutdown();
    return check_result("test_rt_schema");
}
