/* frontend.c: how long the front end takes over PyTorch's native_functions.yaml, in-process.
 *
 *   sg_bench_frontend [--reps N] [--warmup N] path/to/native_functions.yaml
 *
 * One repetition is what `schemagen --emit=json` does: a fresh model, sg_load_file (read + YAML
 * + schema parse), sg_model_group and sg_validate, then the JSON (sg_emit_json) written through
 * stdio to /dev/null as the tool writes it to standard output, then freeing it all. After the warm-up runs, each of N
 * repetitions is timed phase by phase with a monotonic clock; the figures are the median (and the minimum) over N. libyaml's
 * event loop alone, over the same bytes held in memory, gives the floor that any YAML-based
 * loader pays.
 *
 * Output, one figure a line ("name value unit"), for bench/run to print and compare:
 *   frontend_ms, frontend_min_ms (the whole pipeline), frontend_load_parse_ms (model creation
 *   included), frontend_group_validate_ms, frontend_json_ms, libyaml_events_ms,
 *   and the sizes that put them in scale: ops, JSON bytes, arena bytes, input bytes, reps.
 *
 * Exit status: 0; 77 when the file is absent (skipped, with a message); 1 when the corpus gave
 * errors (the figures are still printed, but they time a failing run) or on bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yaml.h>

#include "emit.h"
#include "model.h"

enum { PH_LOAD, PH_CHECK, PH_JSON, PH_TOTAL, PH__COUNT };

static const char *const phase_names[PH__COUNT] = {
    [PH_LOAD] = "frontend_load_parse_ms",
    [PH_CHECK] = "frontend_group_validate_ms",
    [PH_JSON] = "frontend_json_ms",
    [PH_TOTAL] = "frontend_ms",
};

/* What one repetition measured, beyond its times. */
typedef struct run_facts {
    uint32_t nops;
    uint32_t nerrors;
    size_t   json_bytes;
    size_t   arena_bytes;
} run_facts;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), n > 0; sorts v. */
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The JSON goes where the tool's would: through stdio, here to /dev/null, a window at a time. */
static FILE *devnull;
typedef struct sink_state {
    FILE  *fp;
    size_t bytes;
} sink_state;

static bool count_and_write(void *ud, const char *data, size_t len) {
    sink_state *s = ud;
    s->bytes += len;
    return fwrite(data, 1, len, s->fp) == len;
}

/* One pass of the pipeline; fills t[PH_*] in milliseconds. When show_diags is set, the
 * diagnostics (if any) go to stderr. Returns -1 when the model cannot be created. */
static int run_pipeline(const char *path, double t[PH__COUNT], run_facts *f, int show_diags) {
    sg_model m;
    sg_diag  d;
    sg_buf   json;

    double t0 = now_ms();
    if (sg_model_init(&m) != 0)
        return -1;
    sg_diag_init(&d);
    sg_load_file(&m, path, &d);
    double t1 = now_ms();
    sg_model_group(&m, &d);
    sg_validate(&m, &d);
    double t3 = now_ms();
    sg_buf_init(&json);
    sink_state sink = {devnull, 0};
    sg_buf_set_sink(&json, count_and_write, &sink);
    sg_emit_json(&json, &m);
    sg_buf_flush(&json);
    fflush(devnull);
    double t4 = now_ms();

    f->nops = m.nops;
    f->nerrors = d.nerrors;
    f->json_bytes = json.oom ? 0 : sink.bytes;
    f->arena_bytes = sg_model_memory(&m);
    if (show_diags && d.out.len > 0)
        fprintf(stderr, "%.*s", (int)d.out.len, d.out.data);

    sg_buf_free(&json);
    sg_diag_free(&d);
    sg_model_free(&m);
    double t5 = now_ms();

    t[PH_LOAD] = t1 - t0;
    t[PH_CHECK] = t3 - t1;
    t[PH_JSON] = t4 - t3;
    t[PH_TOTAL] = t5 - t0;
    return 0;
}

/* libyaml's parser alone: every event of the document, nothing built. Returns the event count,
 * or -1 on a YAML error. */
static long yaml_events(const char *text, size_t len) {
    yaml_parser_t p;
    yaml_event_t  ev;
    long          n = 0;
    if (!yaml_parser_initialize(&p))
        return -1;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    for (;;) {
        if (!yaml_parser_parse(&p, &ev)) {
            n = -1;
            break;
        }
        int done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        n++;
        if (done)
            break;
    }
    yaml_parser_delete(&p);
    return n;
}

static char *read_file(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char  *data = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1 << 20;
            char *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fclose(fp);
                return NULL;
            }
            data = grown;
        }
        size_t got = fread(data + n, 1, cap - n, fp);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        free(data);
        return NULL;
    }
    *len = n;
    return data;
}

static int parse_count(const char *s, int *out) {
    char *end;
    long  v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0 || v > 100000)
        return -1;
    *out = (int)v;
    return 0;
}

static int usage(void) {
    fprintf(stderr, "usage: sg_bench_frontend [--reps N] [--warmup N] native_functions.yaml\n");
    return 1;
}

int main(int argc, char **argv) {
    int         reps = 20, warmup = 2;
    const char *path = NULL;
    devnull = fopen("/dev/null", "wb");
    if (!devnull) {
        perror("/dev/null");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            if (parse_count(argv[++i], &reps) != 0 || reps == 0)
                return usage();
        } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
            if (parse_count(argv[++i], &warmup) != 0)
                return usage();
        } else if (argv[i][0] == '-' || path) {
            return usage();
        } else {
            path = argv[i];
        }
    }
    if (!path)
        return usage();

    size_t len = 0;
    char  *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "skipped: cannot read %s (%s); the corpus is optional\n", path,
                strerror(errno));
        return 77;
    }

    double   *samples = calloc((size_t)reps * PH__COUNT, sizeof *samples);
    double   *scratch = calloc((size_t)reps, sizeof *scratch);
    run_facts facts = {0};
    if (!samples || !scratch) {
        fprintf(stderr, "sg_bench_frontend: out of memory\n");
        return 1;
    }

    /* The pipeline. The first pass shows its diagnostics, so a failing corpus is never timed
     * silently. */
    for (int r = -warmup; r < reps; r++) {
        double t[PH__COUNT];
        if (run_pipeline(path, t, &facts, r == -warmup) != 0) {
            fprintf(stderr, "sg_bench_frontend: out of memory\n");
            return 1;
        }
        if (r >= 0)
            for (int p = 0; p < PH__COUNT; p++)
                samples[p * reps + r] = t[p];
    }

    /* libyaml alone, same bytes, same repetitions. */
    long nevents = 0;
    for (int r = -warmup; r < reps; r++) {
        double t0 = now_ms();
        nevents = yaml_events(text, len);
        double t1 = now_ms();
        if (r >= 0)
            scratch[r] = t1 - t0;
    }
    if (nevents < 0) {
        fprintf(stderr, "sg_bench_frontend: libyaml cannot parse %s\n", path);
        return 1;
    }
    double events_ms = median(scratch, reps);

    double *total = samples + PH_TOTAL * reps;
    double  min_ms = total[0];
    for (int r = 1; r < reps; r++)
        if (total[r] < min_ms)
            min_ms = total[r];

    printf("%s %.3f ms\n", phase_names[PH_TOTAL], median(total, reps));
    printf("frontend_min_ms %.3f ms\n", min_ms);
    for (int p = 0; p < PH_TOTAL; p++)
        printf("%s %.3f ms\n", phase_names[p], median(samples + p * reps, reps));
    printf("frontend_ops %u ops\n", facts.nops);
    printf("frontend_json_bytes %zu bytes\n", facts.json_bytes);
    printf("frontend_arena_bytes %zu bytes\n", facts.arena_bytes);
    printf("libyaml_events_ms %.3f ms\n", events_ms);
    printf("frontend_input_bytes %zu bytes\n", len);
    printf("frontend_reps %d runs\n", reps);

    free(samples);
    free(scratch);
    free(text);
    if (facts.nerrors) {
        fprintf(stderr, "sg_bench_frontend: %u errors in %s: the figures above time a failing run\n",
                facts.nerrors, path);
        return 1;
    }
    return 0;
}
