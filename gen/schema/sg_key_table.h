/* sg_key_table.h: the runtime's dispatch keys and their names, one table for the runtime
 * (sg_key_name, runtime/keys.c) and the generator (the keys `schemagen --kernel-keys` can
 * register a kernel at, and the constant it registers with: docs/cli.md).
 *
 *   X(ID, name)   ID: the key is SG_KEY_##ID of runtime/sg_dispatch.h's sg_key;
 *                 name: as PyTorch spells it (a dispatch table's key, sg_key_name's result)
 *
 * Every value of sg_key that names a key has one row (runtime/keys.c asserts the count), in
 * the enum's order. The rows name keys only: which of them take a kernel of an op is the
 * runtime's rule (every key but Undefined; the alias keys Autograd and Composite* spread it
 * over their keys). */
#ifndef SG_KEY_TABLE_H
#define SG_KEY_TABLE_H

#define SG_KEY_TABLE(X)                                                                       \
    X(UNDEFINED, "Undefined")                                                                 \
    X(CPU, "CPU")                                                                             \
    X(CUDA, "CUDA")                                                                           \
    X(PRIVATEUSE1, "PrivateUse1")                                                             \
    X(PRIVATEUSE2, "PrivateUse2")                                                             \
    X(PRIVATEUSE3, "PrivateUse3")                                                             \
    X(META, "Meta")                                                                           \
    X(BACKEND_SELECT, "BackendSelect")                                                        \
    X(AUTOGRAD_CPU, "AutogradCPU")                                                            \
    X(AUTOGRAD_CUDA, "AutogradCUDA")                                                          \
    X(AUTOGRAD_PRIVATEUSE1, "AutogradPrivateUse1")                                            \
    X(AUTOGRAD_PRIVATEUSE2, "AutogradPrivateUse2")                                            \
    X(AUTOGRAD_PRIVATEUSE3, "AutogradPrivateUse3")                                            \
    X(AUTOGRAD_META, "AutogradMeta")                                                          \
    X(OVERRIDE, "Override")                                                                   \
    X(AUTOGRAD, "Autograd")                                                                   \
    X(COMPOSITE_IMPLICIT_AUTOGRAD, "CompositeImplicitAutograd")                               \
    X(COMPOSITE_EXPLICIT_AUTOGRAD, "CompositeExplicitAutograd")

#endif
