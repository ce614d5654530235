/* formula.h: derivatives.yaml's formulas (C++ expressions such as "grad * self.sgn()") as trees.
 *
 * The parser takes one formula and gives a tree in an arena the caller owns; the printer gives
 * the tree back as canonical text. Loading derivatives.yaml and translating the trees into C
 * are other modules' work: this one knows expressions only.
 *
 * Grammar accepted (a subset of C++'s expressions; docs/autograd.md, "Formulas"):
 *   expr     := binary ['?' expr ':' expr]                      (right associative)
 *   binary   := unary (op unary)*  with C++'s precedence, left associative:
 *               * / %   + -   << >>   < <= > >=   == !=   &   ^   |   &&   ||
 *   unary    := ('-' | '+' | '!' | '~' | '*') unary | postfix
 *   postfix  := primary ( '(' [expr (',' expr)*] ')' | '[' expr ']' | '.' ident | '->' ident )*
 *   primary  := int | float | string | name | template | name '{' ... '}' | template '{' ... '}'
 *             | '(' expr ')' | '{' [expr (',' expr)*] '}'
 *   name     := ['::'] ident ('::' ident)*
 *   template := name '<' [targ (',' targ)*] '>'    only where '(' or '{' follows the '>'
 *   targ     := name ['<' [targ (',' targ)*] '>'] | int
 * A '<' after a name opens a template argument list only where what follows is such a list
 * closed by '>' (or the first half of '>>') and then '(' or '{'; otherwise it is less-than.
 * Block and line comments count as whitespace.
 *
 * Refused, each with the byte offset and what it was: lambdas, assignments (= += ...), '++' and
 * '--', ';', the comma operator, C++ keywords that start no such expression (new, sizeof,
 * static_cast, ...), character literals, number suffixes, a call of anything but a
 * name, member or template-id, a name qualified by a template-id (A<T>::b), unterminated
 * strings and comments, a tree deeper than SG_FX_MAX_DEPTH and recursion deeper than
 * SG_FX_MAX_NESTING.
 */
#ifndef SG_FORMULA_H
#define SG_FORMULA_H

#include "sg_schema.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The highest tree a parse gives (a leaf is 1), and so the deepest recursion of the printer and
 * of any walker of a tree. The corpus's highest formula is 12. */
#define SG_FX_MAX_DEPTH 64
/* The deepest the parser recurses: each expression (an argument, an index, an item, a
 * parenthesised operand, an operand of '?:'), each unary operator and each template argument
 * list is a level. Rationale: the canonical print of a tree of height h needs at most 2h + 1
 * (a parenthesised unary operator is two), so every tree the parser gives reads back. */
#define SG_FX_MAX_NESTING (2 * SG_FX_MAX_DEPTH + 1)

typedef enum sg_fx_kind {
    SG_FX_IDENT,    /* a name, possibly qualified: text "at::scalar_tensor", "grad", "::std::nullopt" */
    SG_FX_INT,      /* text as written: "0", "1", "0x1f" */
    SG_FX_FLOAT,    /* text as written: "0.", "1e-5", ".5" */
    SG_FX_STRING,   /* text without the quotes, escapes kept as written */
    SG_FX_TEMPLATE, /* a template-id: text "std::tuple", kids the arguments (IDENT, TEMPLATE, INT) */
    SG_FX_CALL,     /* kids[0] the callee (IDENT, MEMBER or TEMPLATE), kids[1..] the arguments;
                     * braced: written callee{...} rather than callee(...) (callee IDENT or TEMPLATE) */
    SG_FX_MEMBER,   /* kids[0] the object; text the member name; arrow: true for "->" */
    SG_FX_INDEX,    /* kids[0] the object, kids[1] the index */
    SG_FX_UNARY,    /* text the operator ("-", "!", "~", "+", "*": a dereference), kids[0] */
    SG_FX_BINARY,   /* text the operator ("*", "+", ">=", "&&", ...), kids[0], kids[1] */
    SG_FX_TERNARY,  /* kids[0] ? kids[1] : kids[2] */
    SG_FX_BRACE,    /* {a, b, ...}: kids the items (may be empty) */
} sg_fx_kind;

typedef struct sg_fx sg_fx;
struct sg_fx {
    sg_fx_kind kind;
    uint32_t   off, len; /* its bytes in the formula text, its operands' parentheses included
                          * (a node written in parentheses: the bytes inside them) */
    const char *text;    /* NUL-terminated, in the arena; NULL where the kind has none */
    bool       arrow;    /* SG_FX_MEMBER: "->" */
    bool       braced;   /* SG_FX_CALL: T{...} */
    uint16_t   height;   /* 1 for a leaf, else 1 + the highest kid's; at most SG_FX_MAX_DEPTH */
    sg_fx    **kids;
    uint32_t   nkids;
};

typedef struct sg_fx_error {
    uint32_t off;      /* byte offset in the text where the problem is */
    char     msg[160]; /* "expected ')' to close the call at 12, found ','", "a lambda is not supported" */
} sg_fx_error;

/* Parses one formula (not NUL-terminated: n bytes) into a tree in arena a. NULL on a syntax
 * error or a construct the grammar refuses (err says where and what), or when out of memory
 * (err->msg "out of memory"). The tree holds no pointer into s. */
sg_fx *sg_fx_parse(sg_arena *a, const char *s, size_t n, sg_fx_error *err);

/* The tree as canonical text: binary, unary and ternary expressions fully parenthesised,
 * single spaces around binary operators, ", " between items, no other space; printing,
 * parsing the print and printing again gives the same bytes. */
void sg_fx_print(sg_buf *b, const sg_fx *x);

#endif
