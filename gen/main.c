/* main.c: the schemagen tool's entry point; everything else lives in cli.c. */
#define _POSIX_C_SOURCE 200809L /* SIGXFSZ */
#include "cli.h"

#include <signal.h>

int main(int argc, char **argv) {
    /* Past a file-size limit (ulimit -f), a write then fails with EFBIG and the run reports
     * it, where SIGXFSZ's default would kill the process without a word. */
#ifdef SIGXFSZ
    signal(SIGXFSZ, SIG_IGN);
#endif
    return sg_cli_main(argc, argv, stdout, stderr);
}
