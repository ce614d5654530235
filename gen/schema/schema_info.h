/* schema_info.h: lookups in the schema language's tables (private to the library). */
#ifndef SG_SCHEMA_INFO_H
#define SG_SCHEMA_INFO_H

#include "sg_schema.h"

/* The sg_type_kind a named default constant belongs to ("Mean" -> int), or -1. */
int sg_constant_type(const char *name, size_t len);

#endif
