/* check.h: the unit tests' few macros. A failed CHECK reports file:line and the expression,
 * and the test goes on; main returns check_result(). SKIP exits 77 (ctest: skipped). */
#ifndef SG_CHECK_H
#define SG_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        check_count++;                                                               \
        if (!(cond)) {                                                               \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_STR(a, b)                                                                   \
    do {                                                                                  \
        const char *check_a_ = (a), *check_b_ = (b);                                      \
        check_count++;                                                                    \
        if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                  \
            check_failures++;                                                             \
            fprintf(stderr, "%s:%d: check failed: %s == %s\n  got:      %s\n  expected: %s\n", \
                    __FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",           \
                    check_b_ ? check_b_ : "(null)");                                      \
        }                                                                                 \
    } while (0)

/* A message (or any string) that must hold text. */
#define CHECK_HAS(msg, text)                                                               \
    do {                                                                                   \
        const char *check_m_ = (msg);                                                      \
        check_count++;                                                                     \
        if (!check_m_ || !strstr(check_m_, (text))) {                                      \
            check_failures++;                                                              \
            fprintf(stderr, "%s:%d: check failed: %s holds \"%s\"\n  got: %s\n", __FILE__,  \
                    __LINE__, #msg, (text), check_m_ ? check_m_ : "(null)");               \
        }                                                                                  \
    } while (0)

#define SKIP(...)                                  \
    do {                                           \
        fprintf(stderr, "skipped: " __VA_ARGS__);  \
        fputc('\n', stderr);                       \
        exit(77);                                  \
    } while (0)

static inline int check_result(const char *name) {
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
