/* main.c: the schemagen tool's entry point; everything else lives in cli.c. */
#include "cli.h"

int main(int argc, char **argv) { return sg_cli_main(argc, argv, stdout, stderr); }
