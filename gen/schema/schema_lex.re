/* schema_lex.re: the schema language's scanner; re2c turns it into C at build time.
 * The text must end with a NUL sentinel; NULs inside the text are caught by the bounds check.
 * As in c10's lexer, a string literal ends on its line: a raw line break inside one leaves it
 * unterminated (an escaped one, backslash and line break, is part of the string). */
#include "schema_lex.h"
#include "sg_schema.h"

/*!re2c
    re2c:define:YYCTYPE  = "unsigned char";
    re2c:define:YYCURSOR = cur;
    re2c:define:YYMARKER = mar;
    re2c:define:YYLIMIT  = lim;
    re2c:yyfill:enable   = 0;
    re2c:eof             = 0;

    WS      = [ \t\r\n\f\v]+;
    IDENT   = [A-Za-z_][A-Za-z0-9_]*;
    DIGITS  = [0-9]+;
    HEX     = "0" [xX] [0-9a-fA-F]+;
    EXP     = [eE] [+-]? DIGITS;
    FLOAT   = DIGITS "." [0-9]* EXP? | "." DIGITS EXP? | DIGITS EXP;
    SQSTR   = "'" ([^'\\\x00\n] | "\\" [^\x00])* "'";
    DQSTR   = "\"" ([^"\\\x00\n] | "\\" [^\x00])* "\"";
*/

/* The keyword rules below spell the names of sg_type_infos (schema_info.c): re2c's DFA is the
 * lookup, and test_schema_lex checks that the two agree. */
void sg_lex(const char *text, size_t len, uint32_t *pos, sg_token *tok) {
    const unsigned char *base = (const unsigned char *)text;
    const unsigned char *cur = base + *pos, *lim = base + len, *mar = cur, *start;
    int type = -1;
    sg_tok_kind kind;
    (void)mar;
again:
    start = cur;
    /*!re2c
        WS          { goto again; }
        $           { kind = SG_T_EOF; goto done; }

        "Tensor"            { type = SG_TY_TENSOR;        kind = SG_T_IDENT; goto done; }
        "int"               { type = SG_TY_INT;           kind = SG_T_IDENT; goto done; }
        "SymInt"            { type = SG_TY_SYMINT;        kind = SG_T_IDENT; goto done; }
        "float"             { type = SG_TY_FLOAT;         kind = SG_T_IDENT; goto done; }
        "SymFloat"          { type = SG_TY_SYMFLOAT;      kind = SG_T_IDENT; goto done; }
        "bool"              { type = SG_TY_BOOL;          kind = SG_T_IDENT; goto done; }
        "SymBool"           { type = SG_TY_SYMBOOL;       kind = SG_T_IDENT; goto done; }
        "complex"           { type = SG_TY_COMPLEX;       kind = SG_T_IDENT; goto done; }
        "str"               { type = SG_TY_STR;           kind = SG_T_IDENT; goto done; }
        "Scalar"            { type = SG_TY_SCALAR;        kind = SG_T_IDENT; goto done; }
        "ScalarType"        { type = SG_TY_SCALAR_TYPE;   kind = SG_T_IDENT; goto done; }
        "Layout"            { type = SG_TY_LAYOUT;        kind = SG_T_IDENT; goto done; }
        "MemoryFormat"      { type = SG_TY_MEMORY_FORMAT; kind = SG_T_IDENT; goto done; }
        "Device"            { type = SG_TY_DEVICE;        kind = SG_T_IDENT; goto done; }
        "DeviceIndex"       { type = SG_TY_DEVICE_INDEX;  kind = SG_T_IDENT; goto done; }
        "Generator"         { type = SG_TY_GENERATOR;     kind = SG_T_IDENT; goto done; }
        "Dimname"           { type = SG_TY_DIMNAME;       kind = SG_T_IDENT; goto done; }
        "DimVector"         { type = SG_TY_DIMVECTOR;     kind = SG_T_IDENT; goto done; }
        "Storage"           { type = SG_TY_STORAGE;       kind = SG_T_IDENT; goto done; }
        "Stream"            { type = SG_TY_STREAM;        kind = SG_T_IDENT; goto done; }
        "QScheme"           { type = SG_TY_QSCHEME;       kind = SG_T_IDENT; goto done; }
        "Quantizer"         { type = SG_TY_QUANTIZER;     kind = SG_T_IDENT; goto done; }
        "ConstQuantizerPtr" { type = SG_TY_CONST_QUANTIZER_PTR; kind = SG_T_IDENT; goto done; }
        "GraphModule"       { type = SG_TY_GRAPH_MODULE;  kind = SG_T_IDENT; goto done; }
        "Capsule"           { type = SG_TY_CAPSULE;       kind = SG_T_IDENT; goto done; }
        "Any"               { type = SG_TY_ANY;           kind = SG_T_IDENT; goto done; }
        "AnyClassType"      { type = SG_TY_ANY_CLASS;     kind = SG_T_IDENT; goto done; }
        "AnyEnumType"       { type = SG_TY_ANY_ENUM;      kind = SG_T_IDENT; goto done; }
        "NoneType"          { type = SG_TY_NONE;          kind = SG_T_IDENT; goto done; }
        "Dict"              { type = SG_TY_DICT;          kind = SG_T_IDENT; goto done; }
        "Future"            { type = SG_TY_FUTURE;        kind = SG_T_IDENT; goto done; }
        "RRef"              { type = SG_TY_RREF;          kind = SG_T_IDENT; goto done; }
        "Await"             { type = SG_TY_AWAIT;         kind = SG_T_IDENT; goto done; }
        "Union"             { type = SG_TY_UNION;         kind = SG_T_IDENT; goto done; }
        "Tuple"             { type = SG_TY_TUPLE;         kind = SG_T_IDENT; goto done; }
        IDENT               { kind = SG_T_IDENT; goto done; }

        DIGITS | HEX        { kind = SG_T_INT; goto done; }
        FLOAT               { kind = SG_T_FLOAT; goto done; }
        (DIGITS | FLOAT) [jJ] { kind = SG_T_IMAG; goto done; }
        SQSTR | DQSTR       { kind = SG_T_STRING; goto done; }
        ['"]                { kind = SG_T_BADSTR; cur = lim; goto done; }

        "("   { kind = SG_T_LPAREN; goto done; }
        ")"   { kind = SG_T_RPAREN; goto done; }
        "["   { kind = SG_T_LBRACKET; goto done; }
        "]"   { kind = SG_T_RBRACKET; goto done; }
        ","   { kind = SG_T_COMMA; goto done; }
        "*"   { kind = SG_T_STAR; goto done; }
        "!"   { kind = SG_T_BANG; goto done; }
        "?"   { kind = SG_T_QUESTION; goto done; }
        "|"   { kind = SG_T_PIPE; goto done; }
        "="   { kind = SG_T_EQUALS; goto done; }
        "."   { kind = SG_T_DOT; goto done; }
        "::"  { kind = SG_T_COLONCOLON; goto done; }
        "->"  { kind = SG_T_ARROW; goto done; }
        "..." { kind = SG_T_ELLIPSIS; goto done; }
        "-"   { kind = SG_T_MINUS; goto done; }
        *     { kind = SG_T_BAD; goto done; }
    */
done:
    tok->kind = kind;
    tok->type = type;
    tok->start = (uint32_t)(start - base);
    tok->end = (uint32_t)(cur - base);
    *pos = tok->end;
}

const char *sg_tok_describe(sg_tok_kind k) {
    static const char *const names[] = {
        [SG_T_EOF] = "end of schema", [SG_T_IDENT] = "a name", [SG_T_INT] = "an integer",
        [SG_T_FLOAT] = "a number", [SG_T_IMAG] = "a complex number", [SG_T_STRING] = "a string",
        [SG_T_LPAREN] = "'('", [SG_T_RPAREN] = "')'", [SG_T_LBRACKET] = "'['",
        [SG_T_RBRACKET] = "']'", [SG_T_COMMA] = "','", [SG_T_STAR] = "'*'", [SG_T_BANG] = "'!'",
        [SG_T_QUESTION] = "'?'", [SG_T_PIPE] = "'|'", [SG_T_EQUALS] = "'='", [SG_T_DOT] = "'.'",
        [SG_T_COLONCOLON] = "'::'", [SG_T_ARROW] = "'->'", [SG_T_ELLIPSIS] = "'...'",
        [SG_T_MINUS] = "'-'", [SG_T_BAD] = "an unexpected character",
        [SG_T_BADSTR] = "an unterminated string (a string ends on its line)",
    };
    return names[k];
}
