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

sg_key sg_key_of_device(sg_device_type t) {
    switch (t) {
    case SG_DEV_CPU: return SG_KEY_CPU;
    case SG_DEV_CUDA: return SG_KEY_CUDA;
    case SG_DEV_META: return SG_KEY_META;
    case SG_DEV_PRIVATEUSE1: return SG_KEY_PRIVATEUSE1;
    case SG_DEV_PRIVATEUSE2: return SG_KEY_PRIVATEUSE2;
    case SG_DEV_PRIVATEUSE3: return SG_KEY_PRIVATEUSE3;
    default: return SG_KEY_UNDEFINED;
    }
}

sg_key sg_key_autograd_of(sg_key backend) {
    if (backend < SG_KEY_CPU || backend > SG_KEY_META) return SG_KEY_UNDEFINED;
    return (sg_key)(backend - SG_KEY_CPU + SG_KEY_AUTOGRAD_CPU);
}

sg_keyset sg_keyset_of_device(sg_device d) {
    sg_key k = sg_key_of_device((sg_device_type)d.type);
    return k == SG_KEY_UNDEFINED ? 0 : SG_KEYSET(k) | SG_KEYSET(sg_key_autograd_of(k));
}
