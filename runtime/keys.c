/* keys.c: dispatch key names and the keys devices select. */
#include "rt_internal.h"
#include "sg_dispatch.h"
#include "sg_key_table.h"

_Thread_local sg_tls_state sg_tls_keys_state = {SG_KEYSET(SG_KEY_BACKEND_SELECT), ~(sg_keyset)0};

/* one row per key (gen/schema/sg_key_table.h, which the generator reads too) */
#define SG_KEY_NAME(id, name) [SG_KEY_##id] = name,
static const char *const names[SG_KEY__ALIAS_END] = {SG_KEY_TABLE(SG_KEY_NAME)};
#undef SG_KEY_NAME
#define SG_KEY_ROW(id, name) +1
_Static_assert(0 SG_KEY_TABLE(SG_KEY_ROW) == SG_KEY__COUNT + (SG_KEY__ALIAS_END - SG_KEY_AUTOGRAD),
               "sg_key_table.h has one row per key");
#undef SG_KEY_ROW

_Static_assert(SG_KEY__COUNT <= 32, "runtime keys stay below the alias keys");
_Static_assert(SG_KEY_AUTOGRAD_META - SG_KEY_AUTOGRAD_CPU == SG_KEY_META - SG_KEY_CPU,
               "one Autograd key per backend key, in the same order");

const char *sg_key_name(sg_key k) {
    if ((unsigned)k >= SG_KEY__ALIAS_END) return NULL;
    const char *r = sg__key_renamed(k); /* a renamed PrivateUse backend's: "NPU" */
    return r ? r : names[k];
}

bool sg_key_is_alias(sg_key k) { return k >= SG_KEY_AUTOGRAD && k < SG_KEY__ALIAS_END; }

/* The device types with a backend key of the same name (SG_DEV_CUDA, SG_KEY_CUDA): one row each
 * serves the backend keys and the key sets of tensors (backend and Autograd key). */
#define SG_DEVICE_KEYS(X) X(CPU) X(CUDA) X(META) X(PRIVATEUSE1) X(PRIVATEUSE2) X(PRIVATEUSE3)
/* a backend key's Autograd key (the static asserts above: same order) */
#define SG_AUTOGRAD_OF(k) ((k) - SG_KEY_CPU + SG_KEY_AUTOGRAD_CPU)
#define SG_DEVICE_KEY(name) [SG_DEV_##name] = SG_KEY_##name,
static const uint8_t backend_keys[SG_DEV__COUNT] = {SG_DEVICE_KEYS(SG_DEVICE_KEY)};
#undef SG_DEVICE_KEY
#define SG_DEVICE_KEYSET(name)                                                                 \
    [SG_DEV_##name] = SG_KEYSET(SG_KEY_##name) | SG_KEYSET(SG_AUTOGRAD_OF(SG_KEY_##name)),
const sg_keyset sg__device_keysets[SG_DEV__COUNT] = {SG_DEVICE_KEYS(SG_DEVICE_KEYSET)};
#undef SG_DEVICE_KEYSET

sg_key sg_key_of_device(sg_device_type t) {
    return (unsigned)t < SG_DEV__COUNT ? (sg_key)backend_keys[t] : SG_KEY_UNDEFINED;
}

sg_key sg_key_autograd_of(sg_key backend) {
    if (backend < SG_KEY_CPU || backend > SG_KEY_META) return SG_KEY_UNDEFINED;
    return (sg_key)SG_AUTOGRAD_OF(backend);
}

sg_keyset sg_keyset_of_device(sg_device d) { return sg__keyset_of_device(d); }
