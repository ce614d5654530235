/* cli.h: the schemagen command line (docs/cli.md), as a function main calls, so the whole
 * tool can also be driven from a test with its own streams.
 *
 * Exit status: 0 success, 1 errors in the inputs (or in writing the outputs), 2 a usage
 * error. Output is built in memory and written once at the end: a run that fails prints
 * nothing on `out` and writes no file.
 */
#ifndef SG_CLI_H
#define SG_CLI_H

#include <stdio.h>

enum { SG_EXIT_OK = 0, SG_EXIT_FAIL = 1, SG_EXIT_USAGE = 2 };

int sg_cli_main(int argc, char **argv, FILE *out, FILE *err);

#endif
