/* backend.c: the generic device guard, streams and events (sg_backend.h), served by each device
 * type's optional hooks, with the behaviour of a synchronous one-queue device where a hook is
 * missing. */
#include "rt_internal.h"
#include "sg_backend.h"

#include <stdlib.h>

/* The implementation of dev's type, or an error naming fn and the device. */
static sg_status impl_of(sg_device dev, const char *fn, const sg_device_impl **out) {
    *out = NULL;
    if ((unsigned)dev.type >= SG_DEV__COUNT)
        return sg_error(SG_EINVAL, "%s: device type %d does not exist", fn, dev.type);
    const sg_device_impl *impl = sg__device_impl((sg_device_type)dev.type);
    if (!impl)
        return sg_error(SG_EDEVICE, "%s: the %s backend is unavailable: no implementation is "
                                    "registered for it",
                        fn, sg_device_type_name((sg_device_type)dev.type));
    *out = impl;
    return SG_OK;
}

/* impl_of, and dev must exist. */
static sg_status existing(sg_device dev, const char *fn, const sg_device_impl **out) {
    sg_status st = impl_of(dev, fn, out);
    if (!st && sg_device_check(dev)) {
        char d[32];
        return sg_error(sg_last_status(), "%s: %s: %s", fn, sg_device_format(dev, d, sizeof d),
                        sg_last_error());
    }
    return st;
}

sg_status sg_device_current(sg_device_type type, sg_device *out) {
    if (!out) return sg_error(SG_EINVAL, "sg_device_current: out is NULL");
    *out = (sg_device){(int8_t)type, 0};
    const sg_device_impl *impl;
    sg_status             st = impl_of(*out, "sg_device_current", &impl);
    if (st || !impl->get_device) return st;
    int8_t i = 0;
    if ((st = impl->get_device(&i))) return st;
    out->index = i;
    return SG_OK;
}

sg_status sg_device_set_current(sg_device dev) {
    const sg_device_impl *impl;
    sg_status             st = existing(dev, "sg_device_set_current", &impl);
    if (st) return st;
    if (impl->set_device) return impl->set_device(dev.index);
    if (dev.index != 0)
        return sg_error(SG_EUNSUPPORTED, "sg_device_set_current: the %s backend has no device "
                                         "guard (set_device), so only index 0 can be current",
                        sg_device_type_name((sg_device_type)dev.type));
    return SG_OK;
}

sg_status sg_device_synchronize(sg_device dev) {
    const sg_device_impl *impl;
    sg_status             st = existing(dev, "sg_device_synchronize", &impl);
    if (st || !impl->synchronize) return st;
    return impl->synchronize(dev);
}

sg_status sg_device_guard_enter(sg_device_guard *g, sg_device dev) {
    if (!g) return sg_error(SG_EINVAL, "sg_device_guard_enter: the guard is NULL");
    g->active = false;
    g->prev = dev;
    sg_status st = sg_device_current((sg_device_type)dev.type, &g->prev);
    if (st) return st;
    if (sg_device_eq(g->prev, dev)) return sg_device_check(dev);
    if ((st = sg_device_set_current(dev))) return st;
    g->active = true;
    return SG_OK;
}

void sg_device_guard_exit(sg_device_guard *g) {
    if (!g || !g->active) return;
    g->active = false;
    /* Rationale: restoring a device that was current a moment ago fails only where the backend
     * is broken; the region's own status is what the caller reports, so this one is dropped. */
    const sg_device_impl *impl = sg__device_impl((sg_device_type)g->prev.type);
    if (impl && impl->set_device) (void)impl->set_device(g->prev.index);
}

sg_status sg_stream_current(sg_device dev, void **stream) {
    if (!stream) return sg_error(SG_EINVAL, "sg_stream_current: stream is NULL");
    *stream = NULL;
    const sg_device_impl *impl;
    sg_status             st = existing(dev, "sg_stream_current", &impl);
    if (st || !impl->get_stream) return st;
    return impl->get_stream(dev, stream);
}

sg_status sg_stream_set(sg_device dev, void *stream) {
    const sg_device_impl *impl;
    sg_status             st = existing(dev, "sg_stream_set", &impl);
    if (st) return st;
    if (impl->set_stream) return impl->set_stream(dev, stream);
    if (stream)
        return sg_error(SG_EUNSUPPORTED, "sg_stream_set: the %s backend has no streams; only "
                                         "NULL (its default stream) can be set",
                        sg_device_type_name((sg_device_type)dev.type));
    return SG_OK;
}

struct sg_event {
    sg_device dev;
    void     *handle;
};

static sg_status no_events(sg_device dev, const char *fn) {
    return sg_error(SG_EUNSUPPORTED, "%s: the %s backend has no events", fn,
                    sg_device_type_name((sg_device_type)dev.type));
}

sg_status sg_event_create(sg_device dev, sg_event **out) {
    if (!out) return sg_error(SG_EINVAL, "sg_event_create: out is NULL");
    *out = NULL;
    const sg_device_impl *impl;
    sg_status             st = existing(dev, "sg_event_create", &impl);
    if (st) return st;
    if (!impl->event_create) return no_events(dev, "sg_event_create");
    sg_event *ev = calloc(1, sizeof *ev);
    if (!ev) return sg_error(SG_ENOMEM, "sg_event_create: out of memory");
    ev->dev = dev;
    if ((st = impl->event_create(dev, &ev->handle))) {
        free(ev);
        return st;
    }
    *out = ev;
    return SG_OK;
}

void sg_event_destroy(sg_event *ev) {
    if (!ev) return;
    const sg_device_impl *impl = sg__device_impl((sg_device_type)ev->dev.type);
    if (impl && impl->event_destroy) impl->event_destroy(ev->dev, ev->handle);
    free(ev);
}

/* The event's implementation, with its events (an event exists only where they do). */
static sg_status event_impl(sg_event *ev, const char *fn, const sg_device_impl **out) {
    if (!ev) return sg_error(SG_EINVAL, "%s: the event is NULL", fn);
    return impl_of(ev->dev, fn, out);
}

sg_status sg_event_record(sg_event *ev) {
    const sg_device_impl *impl;
    void                 *stream = NULL;
    sg_status             st = event_impl(ev, "sg_event_record", &impl);
    if (!st) st = sg_stream_current(ev->dev, &stream);
    return st ? st : impl->event_record(ev->dev, ev->handle, stream);
}

sg_status sg_event_wait(sg_event *ev, sg_device dev) {
    const sg_device_impl *impl;
    void                 *stream = NULL;
    sg_status             st = event_impl(ev, "sg_event_wait", &impl);
    if (st) return st;
    if (dev.type != ev->dev.type) {
        char a[32], b[32];
        return sg_error(SG_EINVAL, "sg_event_wait: an event of %s cannot be waited for by a "
                                   "stream of %s",
                        sg_device_format(ev->dev, a, sizeof a), sg_device_format(dev, b, sizeof b));
    }
    if ((st = sg_stream_current(dev, &stream))) return st;
    return impl->event_wait(dev, ev->handle, stream);
}

sg_status sg_event_synchronize(sg_event *ev) {
    const sg_device_impl *impl;
    sg_status             st = event_impl(ev, "sg_event_synchronize", &impl);
    return st ? st : impl->event_synchronize(ev->dev, ev->handle);
}

sg_status sg_event_query(sg_event *ev, bool *done) {
    const sg_device_impl *impl;
    if (!done) return sg_error(SG_EINVAL, "sg_event_query: done is NULL");
    sg_status st = event_impl(ev, "sg_event_query", &impl);
    if (st) return st;
    if (!impl->event_query) {
        /* without a query hook, waiting is the only way to know */
        if ((st = impl->event_synchronize(ev->dev, ev->handle))) return st;
        *done = true;
        return SG_OK;
    }
    return impl->event_query(ev->dev, ev->handle, done);
}
