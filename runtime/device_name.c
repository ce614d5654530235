/* device_name.c: device type names (renamable PrivateUse ones), the dispatch key names that
 * follow them, and device strings. */
#include "rt_internal.h"
#include "sg_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const builtin_names[SG_DEV__COUNT] = {
    [SG_DEV_CPU] = "cpu",
    [SG_DEV_CUDA] = "cuda",
    [SG_DEV_META] = "meta",
    [SG_DEV_PRIVATEUSE1] = "privateuseone",
    [SG_DEV_PRIVATEUSE2] = "privateusetwo",
    [SG_DEV_PRIVATEUSE3] = "privateusethree",
};

/* A renamed type's names: its device name, backend key name and Autograd key name.
 * Rationale: written once, then published by one atomic store of `published`, so readers
 * (every message, every describe) take no lock and never see a half-written name. */
typedef struct renamed {
    char dev[SG_DEVICE_NAME_MAX + 1];
    char key[SG_DEVICE_NAME_MAX + 1];
    char autograd[SG_DEVICE_NAME_MAX + 9];
} renamed;

static renamed       names[SG_DEV__COUNT];
static const renamed *published[SG_DEV__COUNT];
static pthread_mutex_t rename_lock = PTHREAD_MUTEX_INITIALIZER;

static bool is_private(sg_device_type t) {
    return t == SG_DEV_PRIVATEUSE1 || t == SG_DEV_PRIVATEUSE2 || t == SG_DEV_PRIVATEUSE3;
}

const char *sg_device_type_name(sg_device_type t) {
    if ((unsigned)t >= SG_DEV__COUNT) return "?";
    const renamed *r = __atomic_load_n(&published[t], __ATOMIC_ACQUIRE);
    return r ? r->dev : builtin_names[t];
}

const char *sg__key_renamed(int key) {
    static const int8_t dev_of[][2] = {
        {SG_KEY_PRIVATEUSE1, SG_DEV_PRIVATEUSE1},
        {SG_KEY_PRIVATEUSE2, SG_DEV_PRIVATEUSE2},
        {SG_KEY_PRIVATEUSE3, SG_DEV_PRIVATEUSE3},
        {SG_KEY_AUTOGRAD_PRIVATEUSE1, SG_DEV_PRIVATEUSE1},
        {SG_KEY_AUTOGRAD_PRIVATEUSE2, SG_DEV_PRIVATEUSE2},
        {SG_KEY_AUTOGRAD_PRIVATEUSE3, SG_DEV_PRIVATEUSE3},
    };
    for (size_t i = 0; i < sizeof dev_of / sizeof dev_of[0]; i++) {
        if (dev_of[i][0] != key) continue;
        const renamed *r = __atomic_load_n(&published[dev_of[i][1]], __ATOMIC_ACQUIRE);
        if (!r) return NULL;
        return key >= SG_KEY_AUTOGRAD_CPU ? r->autograd : r->key;
    }
    return NULL;
}

/* The type a name (s[0..n)) names, current and PrivateUse names both; -1 where none. */
static int type_of_name(const char *s, size_t n) {
    for (int t = 0; t < SG_DEV__COUNT; t++) {
        const char *cur = sg_device_type_name((sg_device_type)t);
        if (strlen(cur) == n && !memcmp(cur, s, n)) return t;
        if (strlen(builtin_names[t]) == n && !memcmp(builtin_names[t], s, n)) return t;
    }
    return -1;
}

sg_status sg_device_rename(sg_device_type type, const char *name) {
    if (!is_private(type))
        return sg_error(SG_EINVAL, "sg_device_rename: %s is built in; only the PrivateUse "
                                   "device types can be renamed",
                        sg_device_type_name(type));
    if (!name) return sg_error(SG_EINVAL, "sg_device_rename: the name is NULL");
    size_t n = strlen(name);
    bool   ok = n >= 1 && n <= SG_DEVICE_NAME_MAX && name[0] >= 'a' && name[0] <= 'z';
    for (size_t i = 0; ok && i < n; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
             name[i] == '_';
    if (!ok)
        return sg_error(SG_EINVAL, "sg_device_rename: '%s' is not a device name: 1 to %d "
                                   "characters of a-z, 0-9 and '_', starting with a letter",
                        name, SG_DEVICE_NAME_MAX);
    pthread_mutex_lock(&rename_lock);
    sg_status st = SG_OK;
    int       other = type_of_name(name, n);
    if (published[type]) {
        if (strcmp(published[type]->dev, name) != 0)
            st = sg_error(SG_EEXISTS, "sg_device_rename: %s was renamed '%s' already; it cannot "
                                      "become '%s'",
                          builtin_names[type], published[type]->dev, name);
    } else if (other >= 0 && other != (int)type) {
        st = sg_error(SG_EEXISTS, "sg_device_rename: '%s' is the name of another device type",
                      name);
    } else {
        renamed *r = &names[type];
        memcpy(r->dev, name, n + 1);
        for (size_t i = 0; i <= n; i++)
            r->key[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 'a' + 'A' : name[i]);
        memcpy(r->autograd, "Autograd", 8);
        memcpy(r->autograd + 8, r->key, n + 1);
        __atomic_store_n(&published[type], r, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&rename_lock);
    return st;
}

static sg_status bad_string(const char *s, const char *why) {
    char types[160];
    size_t k = 0;
    types[0] = '\0';
    for (int t = 0; t < SG_DEV__COUNT; t++) {
        int w = snprintf(types + k, sizeof types - k, "%s%s", t ? ", " : "",
                         sg_device_type_name((sg_device_type)t));
        if (w < 0 || (size_t)w >= sizeof types - k) break;
        k += (size_t)w;
    }
    return sg_error(SG_EINVAL, "sg_device_parse: '%s' is not a device: %s (expected a device "
                               "type, one of %s, optionally followed by ':' and an index)",
                    s, why, types);
}

sg_status sg_device_parse(const char *s, sg_device *out) {
    if (!out) return sg_error(SG_EINVAL, "sg_device_parse: out is NULL");
    if (!s) return sg_error(SG_EINVAL, "sg_device_parse: the string is NULL");
    const char *colon = strchr(s, ':');
    size_t      n = colon ? (size_t)(colon - s) : strlen(s);
    int         t = type_of_name(s, n);
    if (t < 0) return bad_string(s, "unknown device type");
    if (!colon) {
        /* the current device where the backend is there to say; else 0, and whether that
         * device exists is for the call that uses it to check, as with any index */
        *out = (sg_device){(int8_t)t, 0};
        if (t == SG_DEV_CPU || t == SG_DEV_META || sg_device_count((sg_device_type)t, NULL) == 0)
            return SG_OK;
        return sg_device_current((sg_device_type)t, out);
    }
    const char *p = colon + 1;
    long        idx = 0;
    if (!*p) return bad_string(s, "no index after ':'");
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return bad_string(s, "the index is not a number");
        if (p - colon > 1 && colon[1] == '0') return bad_string(s, "the index has a leading 0");
        idx = idx * 10 + (*p - '0');
        if (idx > 127) return bad_string(s, "the index is above 127");
    }
    if ((t == SG_DEV_CPU || t == SG_DEV_META) && idx != 0)
        return bad_string(s, "cpu and meta have one device, index 0");
    *out = (sg_device){(int8_t)t, (int8_t)idx};
    return SG_OK;
}

char *sg_device_format(sg_device d, char *buf, size_t n) {
    if (!buf || !n) return buf;
    if (d.type == SG_DEV_CPU || d.type == SG_DEV_META)
        snprintf(buf, n, "%s", sg_device_type_name((sg_device_type)d.type));
    else
        snprintf(buf, n, "%s:%d", sg_device_type_name((sg_device_type)d.type), d.index);
    return buf;
}
