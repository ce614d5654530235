/* schema_info.h: lookups in the schema language's tables (private to the library). */
#ifndef SG_SCHEMA_INFO_H
#define SG_SCHEMA_INFO_H

#include "sg_schema.h"

/* The sg_type_kind a named default constant belongs to ("Mean" -> int), or -1. */
int sg_constant_type(const char *name, size_t len);
/* The same, and the constant's value in its c10 enum ("long" -> 4, c10's ScalarType::Long;
 * "Mean" -> 1) in *value; -1 (and *value untouched) where no constant has the name. */
int sg_constant_lookup(const char *name, size_t len, int64_t *value);

/* The facts that every later pass asks for, many times per op, worked out once when s is
 * parsed: each argument's write flag, self_index and kind (schema_facts.c). */
void sg_schema_derive_facts(sg_schema *s);

#endif
