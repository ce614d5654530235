/* read_file.h: a whole file's bytes, for the generator's inputs that are not YAML sources
 * (templates, DSL declarations, sidecars and binaries). */
#ifndef SG_READ_FILE_H
#define SG_READ_FILE_H

#include "schema/sg_schema.h"

#include <stdbool.h>

/* Appends the bytes of the file at path to b; false (errno set) where it cannot be opened or
 * read, or memory ran out. */
bool sg_read_file(const char *path, sg_buf *b);

#endif
