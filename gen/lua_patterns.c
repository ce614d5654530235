/* lua_patterns.c: string.find, match, gmatch and gsub under the template budget.
 *
 * A pattern match runs in C, where the count hook never fires, and Lua's matcher backtracks:
 * ("a"):rep(5000):find(".-.-.-b") takes hours. So before the library's function runs, its work
 * is bounded from above and charged to the budget (tpl.h, sg_lua_mem.left); a call whose bound
 * is more than what is left stops with an error at the template's line. The bound:
 *
 *     starts * (product over the items of the choices each offers) * (pattern length
 *                                                     + subject length * (%b and %1-%9 items))
 *
 * where starts is 1 for an anchored pattern and the subject's length + 1 otherwise (gmatch and
 * gsub try each start once in all), and an item x*, x- offers one more choice than the longest
 * run of characters of the subject that x matches (x+ that many, x? two). Everyday patterns
 * over names and lines get small bounds; `.-` over a long string gets a big one, as it should.
 */
#include "tpl.h"

#include <ctype.h>
#include <lauxlib.h>
#include <lualib.h>
#include <string.h>

enum { ESC = '%' };

/* Whether c is in the class named by cl (the letter after %). */
static bool in_class(int c, int cl) {
    bool r;
    switch (tolower(cl)) {
    case 'a': r = isalpha(c); break;
    case 'c': r = iscntrl(c); break;
    case 'd': r = isdigit(c); break;
    case 'g': r = isgraph(c); break;
    case 'l': r = islower(c); break;
    case 'p': r = ispunct(c); break;
    case 's': r = isspace(c); break;
    case 'u': r = isupper(c); break;
    case 'w': r = isalnum(c); break;
    case 'x': r = isxdigit(c); break;
    default: return cl == c; /* an escaped character stands for itself */
    }
    return isupper(cl) ? !r : r;
}

/* Whether c is in the set p[0..end) (p just after '[', end at its ']'). */
static bool in_set(int c, const char *p, const char *end) {
    bool yes = true;
    if (*p == '^') {
        yes = false;
        p++;
    }
    for (; p < end; p++) {
        if (*p == ESC && p + 1 < end) {
            p++;
            if (in_class(c, (unsigned char)*p)) return yes;
        } else if (p + 2 < end && p[1] == '-') {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2]) return yes;
            p += 2;
        } else if ((unsigned char)*p == c) {
            return yes;
        }
    }
    return !yes;
}

/* The end of the single-character item at p (a character, %x, . or [set]); NULL where the
 * pattern ends inside it. */
static const char *item_end(const char *p, const char *end) {
    if (*p == ESC) return p + 1 < end ? p + 2 : NULL;
    if (*p != '[') return p + 1;
    p++;
    if (p < end && *p == '^') p++;
    do { /* the first character of a set may be ']' */
        if (p >= end) return NULL;
        if (*p == ESC && ++p >= end) return NULL;
        p++;
    } while (p < end && *p != ']');
    return p < end ? p + 1 : NULL;
}

static bool item_matches(int c, const char *p, const char *ep) {
    if (*p == '.') return true;
    if (*p == ESC) return in_class(c, (unsigned char)p[1]);
    if (*p == '[') return in_set(c, p + 1, ep - 1);
    return (unsigned char)*p == c;
}

/* The longest run of s's characters that the item p..ep matches. */
static double longest_run(const char *s, size_t n, const char *p, const char *ep) {
    size_t best = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        run = item_matches((unsigned char)s[i], p, ep) ? run + 1 : 0;
        if (run > best) best = run;
    }
    return (double)best;
}

/* The bound above on the steps of matching pattern p (plen bytes) over s (n bytes), every
 * start included (each == true: gmatch, gsub). */
static double bound(const char *s, size_t n, const char *p, size_t plen) {
    const char *end = p + plen;
    double      starts = (double)n + 1, choices = 1, scans = 0;
    if (p < end && *p == '^') {
        starts = 1;
        p++;
    }
    while (p < end) {
        if (*p == '(' || *p == ')') {
            p++;
            continue;
        }
        if (*p == '$' && p + 1 == end) break;
        if (*p == ESC && p + 1 < end && p[1] == 'b') { /* %bxy: a scan, no choice */
            scans++;
            p += 4;
            continue;
        }
        if (*p == ESC && p + 1 < end && p[1] == 'f') { /* %f[set]: looks at one place */
            p += 2;
            const char *e = p < end ? item_end(p, end) : NULL;
            if (!e) return 1e300;
            p = e;
            continue;
        }
        if (*p == ESC && p + 1 < end && isdigit((unsigned char)p[1])) { /* a back reference */
            scans++;
            p += 2;
            continue;
        }
        const char *e = item_end(p, end);
        if (!e) return 1e300; /* malformed: let it be refused, whatever Lua would say */
        if (e < end && (*e == '*' || *e == '-' || *e == '+' || *e == '?')) {
            double run = longest_run(s, n, p, e);
            choices *= *e == '?' ? 2 : *e == '+' ? (run > 1 ? run : 1) : run + 1;
            e++;
        }
        if (choices > 1e200) return 1e300;
        p = e;
    }
    return starts * choices * ((double)plen + 1 + (double)n * scans);
}

/* Charges the bound of the call's pattern (argument 2, over argument 1 from init, argument
 * init_arg, where the function has one) or refuses it. */
static void charge(lua_State *L, int init_arg) {
    size_t      n, plen;
    const char *s = luaL_checklstring(L, 1, &n);
    const char *p = luaL_checklstring(L, 2, &plen);
    if (init_arg) {
        lua_Integer init = luaL_optinteger(L, init_arg, 1);
        if (init < 0) init = (lua_Integer)n + init + 1;
        if (init > 1) {
            size_t skip = (size_t)init - 1 > n ? n : (size_t)init - 1;
            s += skip;
            n -= skip;
        }
    }
    sg_lua_mem *mem;
    lua_getallocf(L, (void **)&mem);
    double w = bound(s, n, p, plen);
    if (w > (double)(mem->left > 0 ? mem->left : 0))
        luaL_error(L, "a pattern match may take up to %f steps over a string of %I bytes, more "
                      "than is left of the template's budget (--template-budget)",
                   (lua_Number)w, (lua_Integer)n);
    mem->left -= (int64_t)w;
}

/* The wrapper of the library's function f (upvalue 1): charges, then calls it with the same
 * arguments. which: 0 find, 1 match, 2 gmatch, 3 gsub. */
static int guarded(lua_State *L) {
    int  which = (int)lua_tointeger(L, lua_upvalueindex(2));
    int  n = lua_gettop(L);
    bool plain = which == 0 && lua_toboolean(L, 4);
    if (!plain) charge(L, which <= 1 ? 3 : 0);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
}

void sg_lua_guard_patterns(lua_State *L) {
    static const char *const names[] = {"find", "match", "gmatch", "gsub"};
    lua_getglobal(L, LUA_STRLIBNAME);
    for (int i = 0; i < 4; i++) {
        lua_getfield(L, -1, names[i]);
        lua_pushinteger(L, i);
        lua_pushcclosure(L, guarded, 2);
        lua_setfield(L, -2, names[i]);
    }
    lua_pop(L, 1);
}
