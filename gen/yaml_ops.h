/* yaml_ops.h: a schema or tags file's YAML into the model's ops and tags (yaml_ops.c). Private
 * to gen/; load.c calls it with a source already in the model. */
#ifndef SG_YAML_OPS_H
#define SG_YAML_OPS_H

#include "model.h"
#include "yaml_tree.h"

/* Reads src (one of m's sources) into m: each entry an op, or a tag in a tags file (told apart
 * by the first entry). Problems go to d; returns the number of errors added. */
int sg_yaml_load(sg_model *m, const sg_source *src, sg_diag *d);
/* The same over a piece of src alone (yaml_tree.h): for load_split.c. */
int sg_yaml_load_piece(sg_model *m, const sg_source *src, sg_yaml_piece piece, sg_diag *d);

#endif
