%! output = "{lib}_typed_calls.h"
% local C = import "c"
% local L = lib:upper()
/* $(output): every op of the schema set called through its typed C wrapper from boxed
 * arguments. Test support, not part of the library: the conformance runner calls each case
 * boxed and then typed, and requires the same outcome (docs/conformance.md, "The typed path").
 * $(C.comment(banner)) */
#ifndef $(L)_TYPED_CALLS_H
#define $(L)_TYPED_CALLS_H

#include "sg_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a call could be made typed: $(L)_TYPED_CALLED where it was, else why not. */
typedef enum $(lib)_typed_how {
    $(L)_TYPED_CALLED,     /* the wrapper ran: its status is the call's */
    $(L)_TYPED_NO_OP,      /* the schema set has no such op */
    $(L)_TYPED_NO_WRAPPER, /* the op has no typed wrapper (varargs or varret: boxed only) */
    $(L)_TYPED_COUNT,      /* not every argument given (C has no defaults), or too few result
                              slots */
    $(L)_TYPED_TAG,        /* an argument's boxed tag is none its C parameter can hold */
    $(L)_TYPED__COUNT
} $(lib)_typed_how;

/* Calls name.overload ("aten::add", "Tensor"; a name without "::" is aten's) through its typed
 * wrapper: args[0..nargs) unboxed as the op's boxing adapter unboxes them, every argument
 * given, and the results boxed into rets[0..nrets) as the adapter boxes its kernel's (owned:
 * sg_any_release). rets start as None and stay so where the call fails; *st is the wrapper's
 * status. Where the call cannot be made typed, nothing is called, *st is SG_OK and the result
 * says why. */
$(lib)_typed_how $(lib)_typed_call(const char *name, const char *overload, const sg_any *args,
    int32_t nargs, sg_any *rets, int32_t nrets, sg_status *st);

/* A phrase for how ("no typed wrapper (varargs or varret)"); "?" out of range. */
const char *$(lib)_typed_how_text($(lib)_typed_how how);

#ifdef __cplusplus
}
#endif
#endif
