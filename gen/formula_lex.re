/* formula_lex.re: the scanner of derivatives.yaml's formulas; re2c turns it into C at build
 * time. The text must end with a NUL sentinel; NULs inside the text are caught by the bounds
 * check and come out as SG_FT_BAD. Comments are whitespace (the corpus writes argument names
 * as comments: f(x, / *sorted=* /false), spaced here to keep this comment whole). */
#include "formula_lex.h"

/*!re2c
    re2c:define:YYCTYPE  = "unsigned char";
    re2c:define:YYCURSOR = cur;
    re2c:define:YYMARKER = mar;
    re2c:define:YYLIMIT  = lim;
    re2c:yyfill:enable   = 0;
    re2c:eof             = 0;

    WS       = [ \t\r\n\f\v]+;
    IDENT    = [A-Za-z_][A-Za-z0-9_]*;
    DIGITS   = [0-9]+;
    HEX      = "0" [xX] [0-9a-fA-F]+;
    EXP      = [eE] [+-]? DIGITS;
    FLOAT    = DIGITS "." [0-9]* EXP? | "." DIGITS EXP? | DIGITS EXP;
    TAIL     = [A-Za-z0-9_.]+;
    DQSTR    = "\"" ([^"\\\x00\n] | "\\" [^\x00\n])* "\"";
    CHAR     = "'" ([^'\\\x00\n] | "\\" [^\x00\n])* "'";
    LCOMMENT = "//" [^\n\x00]*;
    BCOMMENT = "/*" ([^*\x00] | "*"+ [^*/\x00])* "*"+ "/";

    // C++ keywords that start no expression of the grammar; true, false, nullptr, this and the
    // fundamental types (functional casts such as double(x)) stay names.
    KEYWORD  = "alignas" | "alignof" | "asm" | "auto" | "break" | "case" | "catch" | "class"
             | "co_await" | "co_return" | "co_yield" | "concept" | "const" | "const_cast"
             | "consteval" | "constexpr" | "constinit" | "continue" | "decltype" | "default"
             | "delete" | "do" | "dynamic_cast" | "else" | "enum" | "explicit" | "export"
             | "extern" | "for" | "friend" | "goto" | "if" | "inline" | "mutable" | "namespace"
             | "new" | "noexcept" | "operator" | "private" | "protected" | "public" | "register"
             | "reinterpret_cast" | "requires" | "return" | "sizeof" | "static" | "static_assert"
             | "static_cast" | "struct" | "switch" | "template" | "thread_local" | "throw" | "try"
             | "typedef" | "typeid" | "typename" | "union" | "using" | "virtual" | "volatile"
             | "while";
*/

void sg_fx_lex(const char *text, size_t len, uint32_t *pos, sg_ftoken *tok) {
    const unsigned char *base = (const unsigned char *)text;
    const unsigned char *cur = base + *pos, *lim = base + len, *mar = cur, *start;
    sg_ft_kind kind;
    (void)mar;
again:
    start = cur;
    /*!re2c
        WS | LCOMMENT | BCOMMENT { goto again; }
        "/*"        { kind = SG_FT_BADCOMMENT; cur = lim; goto done; }
        $           { kind = SG_FT_EOF; goto done; }

        KEYWORD     { kind = SG_FT_KEYWORD; goto done; }
        IDENT       { kind = SG_FT_IDENT; goto done; }
        DIGITS | HEX { kind = SG_FT_INT; goto done; }
        FLOAT       { kind = SG_FT_FLOAT; goto done; }
        (DIGITS | HEX | FLOAT) TAIL { kind = SG_FT_BADNUM; goto done; }
        DQSTR       { kind = SG_FT_STRING; goto done; }
        "\""        { kind = SG_FT_BADSTR; goto done; }
        CHAR | "'"  { kind = SG_FT_CHAR; goto done; }

        "("   { kind = SG_FT_LPAREN; goto done; }
        ")"   { kind = SG_FT_RPAREN; goto done; }
        "["   { kind = SG_FT_LBRACKET; goto done; }
        "]"   { kind = SG_FT_RBRACKET; goto done; }
        "{"   { kind = SG_FT_LBRACE; goto done; }
        "}"   { kind = SG_FT_RBRACE; goto done; }
        ","   { kind = SG_FT_COMMA; goto done; }
        "."   { kind = SG_FT_DOT; goto done; }
        "->"  { kind = SG_FT_ARROW; goto done; }
        "::"  { kind = SG_FT_COLONCOLON; goto done; }
        "?"   { kind = SG_FT_QUESTION; goto done; }
        ":"   { kind = SG_FT_COLON; goto done; }
        "*"   { kind = SG_FT_STAR; goto done; }
        "/"   { kind = SG_FT_SLASH; goto done; }
        "%"   { kind = SG_FT_PERCENT; goto done; }
        "+"   { kind = SG_FT_PLUS; goto done; }
        "-"   { kind = SG_FT_MINUS; goto done; }
        "<<"  { kind = SG_FT_SHL; goto done; }
        ">>"  { kind = SG_FT_SHR; goto done; }
        "<"   { kind = SG_FT_LT; goto done; }
        "<="  { kind = SG_FT_LE; goto done; }
        ">"   { kind = SG_FT_GT; goto done; }
        ">="  { kind = SG_FT_GE; goto done; }
        "=="  { kind = SG_FT_EQ; goto done; }
        "!="  { kind = SG_FT_NE; goto done; }
        "&"   { kind = SG_FT_AMP; goto done; }
        "^"   { kind = SG_FT_CARET; goto done; }
        "|"   { kind = SG_FT_PIPE; goto done; }
        "&&"  { kind = SG_FT_ANDAND; goto done; }
        "||"  { kind = SG_FT_OROR; goto done; }
        "!"   { kind = SG_FT_BANG; goto done; }
        "~"   { kind = SG_FT_TILDE; goto done; }
        "=" | [-+*/%&^|] "=" | "<<=" | ">>=" { kind = SG_FT_ASSIGN; goto done; }
        "++" | "--" { kind = SG_FT_INCDEC; goto done; }
        ";"   { kind = SG_FT_SEMI; goto done; }
        *     { kind = SG_FT_BAD; goto done; }
    */
done:
    tok->kind = kind;
    tok->start = (uint32_t)(start - base);
    tok->end = (uint32_t)(cur - base);
    *pos = tok->end;
}

const char *sg_ft_describe(sg_ft_kind k) {
    static const char *const names[] = {
        [SG_FT_EOF] = "the end of the formula", [SG_FT_IDENT] = "a name",
        [SG_FT_INT] = "an integer", [SG_FT_FLOAT] = "a number", [SG_FT_STRING] = "a string",
        [SG_FT_LPAREN] = "'('", [SG_FT_RPAREN] = "')'", [SG_FT_LBRACKET] = "'['",
        [SG_FT_RBRACKET] = "']'", [SG_FT_LBRACE] = "'{'", [SG_FT_RBRACE] = "'}'",
        [SG_FT_COMMA] = "','", [SG_FT_DOT] = "'.'", [SG_FT_ARROW] = "'->'",
        [SG_FT_COLONCOLON] = "'::'", [SG_FT_QUESTION] = "'?'", [SG_FT_COLON] = "':'",
        [SG_FT_STAR] = "'*'", [SG_FT_SLASH] = "'/'", [SG_FT_PERCENT] = "'%'",
        [SG_FT_PLUS] = "'+'", [SG_FT_MINUS] = "'-'", [SG_FT_SHL] = "'<<'", [SG_FT_SHR] = "'>>'",
        [SG_FT_LT] = "'<'", [SG_FT_LE] = "'<='", [SG_FT_GT] = "'>'", [SG_FT_GE] = "'>='",
        [SG_FT_EQ] = "'=='", [SG_FT_NE] = "'!='", [SG_FT_AMP] = "'&'", [SG_FT_CARET] = "'^'",
        [SG_FT_PIPE] = "'|'", [SG_FT_ANDAND] = "'&&'", [SG_FT_OROR] = "'||'",
        [SG_FT_BANG] = "'!'", [SG_FT_TILDE] = "'~'", [SG_FT_ASSIGN] = "an assignment",
        [SG_FT_INCDEC] = "an increment or decrement", [SG_FT_SEMI] = "';'",
        [SG_FT_CHAR] = "a character literal", [SG_FT_BADNUM] = "a number with a suffix",
        [SG_FT_BADSTR] = "an unterminated string", [SG_FT_BADCOMMENT] = "an unterminated comment",
        [SG_FT_KEYWORD] = "a C++ keyword", [SG_FT_BAD] = "an unexpected character",
    };
    return names[k];
}
