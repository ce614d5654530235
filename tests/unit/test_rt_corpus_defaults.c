/* test_rt_corpus_defaults.c: every op of the corpus (native_functions.yaml) defines with the
 * runtime, and every default its schemas give has a boxed value that the boxed call's type
 * check of that argument accepts: a boxed call may leave any defaulted argument out. Skips
 * where the corpus is absent.
 *
 * The schemas are read from the file's `- func: ...` lines (each on one line, a plain YAML
 * scalar, so the line's text is the schema): the runtime links no YAML reader. */
#include "check.h"
#include "rt_dispatch.h" /* argc: what the boxed call accepts per argument */
#include "sg_runtime.h"

#include <stdio.h>
#include <string.h>

int main(void) {
    const char *path = SG_CORPUS_DIR "/native_functions.yaml";
    FILE       *f = fopen(path, "r");
    if (!f) SKIP("%s is absent", path);
    static char line[8192];
    int         nops = 0, ndefaults = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        static const char prefix[] = "- func: ";
        if (strncmp(line, prefix, sizeof prefix - 1) != 0) continue;
        char *schema = line + sizeof prefix - 1;
        schema[strcspn(schema, "\r\n")] = '\0';
        sg_op    *op = NULL;
        sg_status st = sg_op_define(schema, &op);
        CHECK(st == SG_OK);
        if (st) {
            fprintf(stderr, "define %s: %s\n", schema, sg_last_error());
            continue;
        }
        nops++;
        for (int32_t i = 0; i < sg_op_nargs(op); i++) {
            sg_arg_info info;
            CHECK(sg_op_arg_info(op, i, &info) == SG_OK);
            if (!info.has_default) continue;
            ndefaults++;
            sg_any v;
            st = sg_op_arg_default(op, i, &v);
            bool ok = st == SG_OK && (uint32_t)v.tag < SG_ANY__COUNT &&
                      (op->argc[i].accepts >> v.tag & 1);
            CHECK(ok);
            if (!ok && bad++ < 20)
                fprintf(stderr, "%s%s%s: argument %d '%s' (%s=%s): %s\n", sg_op_name(op),
                        *sg_op_overload(op) ? "." : "", sg_op_overload(op), (int)i, info.name,
                        info.type, info.default_text,
                        st ? sg_last_error() : sg_any_tag_name(v.tag));
        }
    }
    fclose(f);
    printf("%d ops, %d defaults\n", nops, ndefaults);
    CHECK(nops > 2000);      /* the file was the corpus, and was read */
    CHECK(ndefaults > 2000);
    sg_runtime_shutdown();
    return check_result("test_rt_corpus_defaults");
}
