/* The compiled line scanner: one pass over a Claude Code transcript's bytes builds the per-line
 * index that pipeline/core/index.py's pure-Python loop builds (`_build_index_python`), record for
 * record, field for field.
 *
 * For each line it validates the JSON (RFC 8259, as strictly as msgspec), its UTF-8 and its
 * nesting depth in the same pass, picks out only the members the index keeps, and counts the
 * seed estimate's character inventory on the way. Anything unusual is not decided here: a line
 * that is blank-free but not plain compact JSON of the types Claude Code writes (a syntax error,
 * invalid UTF-8, a surrogate escape, a member of an unexpected type, a duplicate member, a
 * spaced writer, deep nesting, a float spelling the seed counts another way, ...) is handed to
 * the pure-Python `decode_record`, the reference, which returns what it always did. So the
 * fast path only ever answers where its answer is provably the reference's; the differential
 * tests (tests/formats/claude_code/test_scan.py) hold it to that on the corpus and fuzzed lines.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Lines nested deeper go to the reference: real records nest under 30 deep. */
#define FAST_MAX_DEPTH 200
/* The seed's exact-arithmetic bound (pipeline.estimate.seed._EXACT_ARITHMETIC_LIMIT). */
#define EXACT_ARITHMETIC_LIMIT 1000000
#define RECORD_ALLOWANCE 12

/* ---- configuration, set once by configure() ------------------------------------------------ */
static PyObject *RecordType;     /* DecodedRecord */
static PyObject *PointerAbsent, *PointerLeaf, *PointerEmpty, *PointerNull;
static PyObject *KindBlank, *KindRecord;
static PyObject *ProblemKinds;   /* dict: LineProblem.kind -> LineKind */
static PyObject *PromptKey;      /* callable(mode, raws) -> str | None */
static PyObject *WeightOf;       /* callable(char) -> tenths */
static PyObject *EmptyTuple, *EmptyStr, *StrT;
static PyObject *KindNames[8];   /* interned record type names */
static uint8_t bmp_weight[65536]; /* tenths per BMP code point; 0 = not looked up yet */

/* ---- values -------------------------------------------------------------------------------- */
enum { V_ABSENT = 0, V_NULL, V_FALSE, V_TRUE, V_NUM, V_STR, V_ARR, V_OBJ };

typedef struct {
    const uint8_t *start; /* first byte of the value (a string's opening quote) */
    const uint8_t *end;   /* one past its last byte */
    int type;
    int escaped;          /* a string holding a backslash */
    int unicode_escape;   /* ... holding \u or \/ (spelled otherwise when re-serialized) */
} Val;

typedef struct {
    const uint8_t *p, *end;
    int max_depth;         /* deeper nesting goes to the reference */
    int fallback;          /* this line goes to the reference */
    int error;             /* a Python exception is set */
    int64_t nonascii_bytes, nonascii_chars, tenths;
} Scan;

static uint8_t STRING_STOP[256]; /* bytes a string scan must look at: quote, backslash, control, high */

static int weight_of(Scan *s, uint32_t cp) {
    if ((cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
        (cp >= 0x20000 && cp <= 0x323AF) || (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x31F0 && cp <= 0x31FF) ||
        (cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0x1100 && cp <= 0x11FF))
        return 13;
    if (cp > 0xFFFF) return 15;
    if (bmp_weight[cp]) return bmp_weight[cp];
    /* The seed's own classifier (unicodedata of this interpreter), asked once per character. */
    PyObject *ch = PyUnicode_FromOrdinal((int)cp);
    if (!ch) { s->error = 1; return 0; }
    PyObject *w = PyObject_CallOneArg(WeightOf, ch);
    Py_DECREF(ch);
    if (!w) { s->error = 1; return 0; }
    long value = PyLong_AsLong(w);
    Py_DECREF(w);
    if (value <= 0 || value > 255) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "weight out of range");
        s->error = 1;
        return 0;
    }
    bmp_weight[cp] = (uint8_t)value;
    return (int)value;
}

/* One UTF-8 sequence starting at a byte >= 0x80: its code point, or -1 when it is not valid UTF-8
 * (overlong, surrogate, beyond U+10FFFF, cut short): such lines are read by the reference. */
static int32_t utf8_at(const uint8_t *p, const uint8_t *end, int *len) {
    uint8_t c = p[0];
    if (c >= 0xC2 && c <= 0xDF) {
        if (end - p < 2 || (p[1] & 0xC0) != 0x80) return -1;
        *len = 2;
        return ((c & 0x1F) << 6) | (p[1] & 0x3F);
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return -1;
        int32_t cp = ((c & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
        if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
        *len = 3;
        return cp;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return -1;
        int32_t cp = ((c & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F);
        if (cp < 0x10000 || cp > 0x10FFFF) return -1;
        *len = 4;
        return cp;
    }
    return -1;
}

static int hex4(const uint8_t *p, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/* A string at s->p (its opening quote); counts its raw non-ASCII characters into the line's
 * inventory. Returns 0 (and marks the line for the reference) on anything msgspec would refuse. */
static int scan_string(Scan *s, Val *v) {
    const uint8_t *p = s->p + 1, *end = s->end;
    v->start = s->p;
    v->type = V_STR;
    v->escaped = 0;
    v->unicode_escape = 0;
    for (;;) {
#if defined(__SSE2__)
        /* 16 bytes at a time: quote, backslash, and (as signed bytes below 0x20) control or high bytes */
        const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
        while (end - p >= 16) {
            __m128i chunk = _mm_loadu_si128((const __m128i *)p);
            __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)),
                                        _mm_cmplt_epi8(chunk, space));
            int mask = _mm_movemask_epi8(stop);
            if (mask) {
                p += __builtin_ctz((unsigned)mask);
                goto found;
            }
            p += 16;
        }
#endif
        while (p < end && !STRING_STOP[*p]) p++;
#if defined(__SSE2__)
    found:
#endif
        if (p >= end) goto bad;
        uint8_t c = *p;
        if (c == '"') break;
        if (c == '\\') {
            v->escaped = 1;
            if (end - p < 2) goto bad;
            uint8_t e = p[1];
            if (e == 'u') {
                uint32_t u;
                if (end - p < 6 || !hex4(p + 2, &u)) goto bad;
                /* Surrogate escapes (paired or not) are left to the reference. */
                if (u >= 0xD800 && u <= 0xDFFF) goto bad;
                v->unicode_escape = 1;
                p += 6;
            } else if (e == '/') {
                v->unicode_escape = 1;
                p += 2;
            } else if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                p += 2;
            } else {
                goto bad;
            }
            continue;
        }
        if (c < 0x20) goto bad;
        int len;
        int32_t cp = utf8_at(p, end, &len);
        if (cp < 0) goto bad;
        int w = weight_of(s, (uint32_t)cp);
        if (s->error) return 0;
        s->tenths += w;
        s->nonascii_chars += 1;
        s->nonascii_bytes += len;
        p += len;
    }
    s->p = p + 1;
    v->end = s->p;
    return 1;
bad:
    s->fallback = 1;
    return 0;
}

static inline void skip_ws(Scan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n')) s->p++;
}

static int scan_number(Scan *s, Val *v) {
    const uint8_t *p = s->p, *end = s->end;
    v->start = p;
    v->type = V_NUM;
    if (p < end && *p == '-') p++;
    if (p >= end) goto bad;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (p < end && *p >= '0' && *p <= '9') p++;
    else goto bad;
    if (p < end && *p == '.') {
        p++;
        if (p >= end || *p < '0' || *p > '9') goto bad;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') goto bad;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    s->p = p;
    v->end = p;
    return 1;
bad:
    s->fallback = 1;
    return 0;
}

static int scan_value(Scan *s, Val *v, int depth);

static int scan_literal(Scan *s, Val *v, const char *word, size_t n, int type) {
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) {
        s->fallback = 1;
        return 0;
    }
    v->start = s->p;
    s->p += n;
    v->end = s->p;
    v->type = type;
    return 1;
}

/* The member loop of any object: `on_member` sees each key (as raw bytes between its quotes)
 * and scans the value itself; returns 0 to stop. */
typedef int (*MemberFn)(Scan *s, const uint8_t *key, Py_ssize_t key_len, int key_escaped, void *ctx, int depth);

/* Opens the container at s->p: 1 when it is empty (and closed), 0 to read its items, -1 to stop. */
static int open_container(Scan *s, Val *v, int depth, int type, uint8_t close) {
    if (depth > s->max_depth) { s->fallback = 1; return -1; }
    v->start = s->p;
    v->type = type;
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        v->end = s->p;
        return 1;
    }
    return 0;
}

/* After an item: 0 when another follows, 1 when the container closed, -1 to stop. */
static int next_item(Scan *s, Val *v, uint8_t close) {
    skip_ws(s);
    if (s->p < s->end && *s->p == ',') {
        s->p++;
        skip_ws(s);
        return 0;
    }
    if (s->p < s->end && *s->p == close) {
        s->p++;
        v->end = s->p;
        return 1;
    }
    s->fallback = 1;
    return -1;
}

static int scan_members(Scan *s, Val *v, int depth, MemberFn on_member, void *ctx) {
    int state = open_container(s, v, depth, V_OBJ, '}');
    while (state == 0) {
        if (s->p >= s->end || *s->p != '"') { s->fallback = 1; return 0; }
        Val key;
        if (!scan_string(s, &key)) return 0;
        skip_ws(s);
        if (s->p >= s->end || *s->p != ':') { s->fallback = 1; return 0; }
        s->p++;
        skip_ws(s);
        if (!on_member(s, key.start + 1, key.end - key.start - 2, key.escaped, ctx, depth)) return 0;
        state = next_item(s, v, '}');
    }
    return state > 0;
}

static int skip_member(Scan *s, const uint8_t *key, Py_ssize_t key_len, int key_escaped, void *ctx, int depth) {
    (void)key; (void)key_len; (void)key_escaped; (void)ctx;
    Val ignored;
    return scan_value(s, &ignored, depth + 1);
}

static int scan_array(Scan *s, Val *v, int depth, int (*on_item)(Scan *, void *, int), void *ctx) {
    int state = open_container(s, v, depth, V_ARR, ']');
    while (state == 0) {
        Val item;
        if (on_item ? !on_item(s, ctx, depth) : !scan_value(s, &item, depth + 1)) return 0;
        state = next_item(s, v, ']');
    }
    return state > 0;
}

static int scan_value(Scan *s, Val *v, int depth) {
    if (s->p >= s->end) { s->fallback = 1; return 0; }
    switch (*s->p) {
    case '"': return scan_string(s, v);
    case '{': return scan_members(s, v, depth, skip_member, NULL);
    case '[': return scan_array(s, v, depth, NULL, NULL);
    case 't': return scan_literal(s, v, "true", 4, V_TRUE);
    case 'f': return scan_literal(s, v, "false", 5, V_FALSE);
    case 'n': return scan_literal(s, v, "null", 4, V_NULL);
    default:
        if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9')) return scan_number(s, v);
        s->fallback = 1;
        return 0;
    }
}

/* ---- the members kept ---------------------------------------------------------------------- */
enum {
    K_TYPE, K_SUBTYPE, K_UUID, K_PARENT, K_LOGICAL_PARENT, K_SESSION, K_SIDECHAIN, K_TIMESTAMP, K_CWD,
    K_VERSION, K_COMPACT_SUMMARY, K_META, K_SOURCE_TOOL, K_LEAF, K_EXPLICIT, K_LAST_PROMPT, K_MESSAGE_ID,
    K_AGENT_ID, K_COST, K_MESSAGE, K_ATTACHMENT, K_CONTENT, K_ERROR, K_COMPACT_METADATA, K_COUNT
};
static const char *HEAD_KEYS[K_COUNT] = {
    "type", "subtype", "uuid", "parentUuid", "logicalParentUuid", "sessionId", "isSidechain", "timestamp",
    "cwd", "version", "isCompactSummary", "isMeta", "sourceToolAssistantUUID", "leafUuid", "explicit",
    "lastPrompt", "messageId", "agentId", "costUSD", "message", "attachment", "content", "error",
    "compactMetadata",
};

#define MAX_BLOCKS_KEPT 4096 /* a message with more blocks goes to the reference */

typedef struct {
    Val type, id, tool_use_id, text, tool_use_id2;
} BlockVals;

typedef struct {
    Val id, role, content;
    BlockVals *blocks;
    Py_ssize_t nblocks, cap;
} MessageVals;

typedef struct {
    Val v[K_COUNT];
    MessageVals message;
    Val attachment_tool;
} Head;

static size_t HEAD_KEY_LENGTHS[K_COUNT];

#define key_is(key, len, name) ((len) == (Py_ssize_t)(sizeof(name) - 1) && memcmp((key), (name), (size_t)(len)) == 0)

/* `Any` members msgspec would turn into Python values: only strings, null and booleans are
 * decided here (numbers, arrays and objects go to the reference). */
static int scan_any(Scan *s, Val *slot, int depth) {
    if (slot->type != V_ABSENT) { s->fallback = 1; return 0; } /* duplicate member */
    if (!scan_value(s, slot, depth + 1)) return 0;
    if (slot->type == V_NUM || slot->type == V_ARR || slot->type == V_OBJ) { s->fallback = 1; return 0; }
    return 1;
}

static int block_member(Scan *s, const uint8_t *key, Py_ssize_t len, int escaped, void *ctx, int depth) {
    static const char *NAMES[5] = {"type", "id", "tool_use_id", "toolUseID", "text"};
    BlockVals *b = (BlockVals *)ctx;
    Val *slots[5] = {&b->type, &b->id, &b->tool_use_id, &b->tool_use_id2, &b->text};
    if (escaped) { s->fallback = 1; return 0; }
    for (int i = 0; i < 5; i++) {
        if ((size_t)len != strlen(NAMES[i]) || memcmp(key, NAMES[i], (size_t)len) != 0) continue;
        if (i < 4) return scan_any(s, slots[i], depth);
        if (slots[i]->type != V_ABSENT) { s->fallback = 1; return 0; } /* text: any value, kept raw */
        return scan_value(s, slots[i], depth + 1);
    }
    return skip_member(s, key, len, escaped, NULL, depth);
}

static int block_item(Scan *s, void *ctx, int depth) {
    MessageVals *m = (MessageVals *)ctx;
    if (s->p >= s->end || *s->p != '{') { s->fallback = 1; return 0; } /* not a block object */
    if (m->nblocks == m->cap) {
        if (m->cap >= MAX_BLOCKS_KEPT) { s->fallback = 1; return 0; }
        Py_ssize_t cap = m->cap ? m->cap * 2 : 16;
        BlockVals *grown = PyMem_Realloc(m->blocks, (size_t)cap * sizeof(BlockVals));
        if (!grown) { PyErr_NoMemory(); s->error = 1; return 0; }
        m->blocks = grown;
        m->cap = cap;
    }
    BlockVals *b = &m->blocks[m->nblocks];
    memset(b, 0, sizeof(*b));
    Val whole;
    if (!scan_members(s, &whole, depth + 1, block_member, b)) return 0;
    m->nblocks++;
    return 1;
}

static int message_member(Scan *s, const uint8_t *key, Py_ssize_t len, int escaped, void *ctx, int depth) {
    MessageVals *m = (MessageVals *)ctx;
    if (escaped) { s->fallback = 1; return 0; }
    if (key_is(key, len, "id")) return scan_any(s, &m->id, depth);
    if (key_is(key, len, "role")) return scan_any(s, &m->role, depth);
    if (key_is(key, len, "content")) {
        if (m->content.type != V_ABSENT || s->p >= s->end) { s->fallback = 1; return 0; }
        if (*s->p == '[') return scan_array(s, &m->content, depth + 1, block_item, m);
        if (!scan_value(s, &m->content, depth + 1)) return 0;
        if (m->content.type != V_STR && m->content.type != V_NULL) { s->fallback = 1; return 0; }
        return 1;
    }
    return skip_member(s, key, len, escaped, NULL, depth);
}

static int attachment_member(Scan *s, const uint8_t *key, Py_ssize_t len, int escaped, void *ctx, int depth) {
    Head *h = (Head *)ctx;
    if (escaped) { s->fallback = 1; return 0; }
    if (key_is(key, len, "toolUseID")) return scan_any(s, &h->attachment_tool, depth);
    return skip_member(s, key, len, escaped, NULL, depth);
}

static int head_member(Scan *s, const uint8_t *key, Py_ssize_t len, int escaped, void *ctx, int depth) {
    Head *h = (Head *)ctx;
    if (escaped) { s->fallback = 1; return 0; }
    int k = -1;
    for (int i = 0; i < K_COUNT; i++) {
        if ((size_t)len == HEAD_KEY_LENGTHS[i] && key[0] == (uint8_t)HEAD_KEYS[i][0] &&
            memcmp(key, HEAD_KEYS[i], (size_t)len) == 0) {
            k = i;
            break;
        }
    }
    if (k < 0) return skip_member(s, key, len, escaped, NULL, depth);
    Val *slot = &h->v[k];
    if (slot->type != V_ABSENT) { s->fallback = 1; return 0; } /* duplicate member */
    if (s->p >= s->end) { s->fallback = 1; return 0; }
    int ok;
    if (k == K_MESSAGE && *s->p == '{') ok = scan_members(s, slot, depth + 1, message_member, &h->message);
    else if (k == K_ATTACHMENT && *s->p == '{') ok = scan_members(s, slot, depth + 1, attachment_member, h);
    else ok = scan_value(s, slot, depth + 1);
    if (!ok) return 0;
    int t = slot->type;
    switch (k) {
    case K_MESSAGE:
        ok = t == V_OBJ || t == V_NULL;
        break;
    case K_ATTACHMENT: case K_CONTENT: case K_ERROR: case K_COMPACT_METADATA:
        ok = 1;
        break;
    case K_SIDECHAIN: case K_COMPACT_SUMMARY: case K_META: case K_EXPLICIT:
        ok = t == V_TRUE || t == V_FALSE || t == V_NULL;
        break;
    case K_COST:
        ok = t == V_NUM || t == V_NULL;
        break;
    default: /* str | None */
        ok = t == V_STR || t == V_NULL;
    }
    if (!ok) s->fallback = 1;
    return ok;
}

/* ---- from values to Python ----------------------------------------------------------------- */

/* A string value's text (NULL with an exception set on failure). */
static PyObject *string_of(const Val *v) {
    const uint8_t *p = v->start + 1, *end = v->end - 1;
    if (!v->escaped) return PyUnicode_DecodeUTF8((const char *)p, end - p, "strict");
    char *buf = PyMem_Malloc((size_t)(end - p) + 1);
    if (!buf) return PyErr_NoMemory();
    char *o = buf;
    while (p < end) {
        if (*p != '\\') { *o++ = (char)*p++; continue; }
        uint8_t e = p[1];
        p += 2;
        switch (e) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            uint32_t u = 0;
            hex4(p, &u); /* validated by the scan; never a surrogate */
            p += 4;
            if (u < 0x80) *o++ = (char)u;
            else if (u < 0x800) { *o++ = (char)(0xC0 | (u >> 6)); *o++ = (char)(0x80 | (u & 0x3F)); }
            else {
                *o++ = (char)(0xE0 | (u >> 12));
                *o++ = (char)(0x80 | ((u >> 6) & 0x3F));
                *o++ = (char)(0x80 | (u & 0x3F));
            }
            break;
        }
        default: *o++ = (char)e; /* " \ / */
        }
    }
    PyObject *text = PyUnicode_DecodeUTF8(buf, o - buf, "strict");
    PyMem_Free(buf);
    return text;
}

/* Whether a value is the string `name` (after unescaping). -1 on error. */
static int string_equals(const Val *v, const char *name) {
    if (v->type != V_STR) return 0;
    size_t n = strlen(name);
    if (!v->escaped) return (size_t)(v->end - v->start - 2) == n && memcmp(v->start + 1, name, n) == 0;
    PyObject *text = string_of(v);
    if (!text) return -1;
    int equal = PyUnicode_CompareWithASCIIString(text, name) == 0;
    Py_DECREF(text);
    return equal;
}

static int string_empty(const Val *v) { return v->type == V_STR && v->end - v->start == 2; }

/* `_set`/`_text`: the string when it is a non-empty string, else None (new reference). */
static PyObject *text_or_none(const Val *v) {
    if (v->type != V_STR || string_empty(v)) Py_RETURN_NONE;
    return string_of(v);
}

/* The record type as an interned name where it is one of the common ones. */
static PyObject *kind_of(const Val *v) {
    if (v->type != V_STR || string_empty(v)) Py_RETURN_NONE;
    if (!v->escaped) {
        Py_ssize_t n = v->end - v->start - 2;
        for (int i = 0; i < 8 && KindNames[i]; i++) {
            Py_ssize_t size;
            const char *name = PyUnicode_AsUTF8AndSize(KindNames[i], &size);
            if (name && size == n && memcmp(name, v->start + 1, (size_t)n) == 0) {
                Py_INCREF(KindNames[i]);
                return KindNames[i];
            }
        }
    }
    return string_of(v);
}

/* Strings most lines repeat, kept from the lines before so equal values share one object (a
 * giant session's index would hold hundreds of MB of copies): every line carries the session's
 * id and version, a line's parent (or the assistant line a tool result answers) is mostly one of
 * the last records' uuids, a tool result names a recent call's id, and the fragments of one
 * streamed message share its id. A cache only: a value not found is made as before. */
#define RING 64

typedef struct {
    PyObject *items[RING];
    int next;
} Ring;

typedef struct {
    PyObject *session, *version, *message_id;
    Ring uuids, tools; /* recent record uuids; recent tool_use ids */
} Recent;

static void ring_clear(Ring *r) {
    for (int i = 0; i < RING; i++) Py_CLEAR(r->items[i]);
}

static void recent_clear(Recent *r) {
    Py_CLEAR(r->session);
    Py_CLEAR(r->version);
    Py_CLEAR(r->message_id);
    ring_clear(&r->uuids);
    ring_clear(&r->tools);
}

/* Whether `known` is the very ASCII text of the unescaped, non-empty string `v`. */
static int same_text(const Val *v, PyObject *known) {
    if (!known || v->type != V_STR || v->escaped || !PyUnicode_IS_COMPACT_ASCII(known)) return 0;
    Py_ssize_t n = v->end - v->start - 2;
    return n > 0 && PyUnicode_GET_LENGTH(known) == n && memcmp(PyUnicode_DATA(known), v->start + 1, (size_t)n) == 0;
}

/* `text_or_none`, returning `known` itself when it is that very text (new reference). */
static PyObject *shared_text(const Val *v, PyObject *known) {
    if (same_text(v, known)) {
        Py_INCREF(known);
        return known;
    }
    return text_or_none(v);
}

/* A string value's text (`string_of`), one of the ring's own when it holds that text. */
static PyObject *ring_string(const Val *v, Ring *r) {
    for (int i = 0; i < RING; i++) {
        if (same_text(v, r->items[i])) {
            Py_INCREF(r->items[i]);
            return r->items[i];
        }
    }
    return string_of(v);
}

/* `text_or_none` through the ring. */
static PyObject *ring_text(const Val *v, Ring *r) {
    if (v->type != V_STR || string_empty(v)) Py_RETURN_NONE;
    return ring_string(v, r);
}

/* Keep `value` (a str) in a cache slot; None and failures leave the slot as it was. */
static void remember(PyObject **slot, PyObject *value) {
    if (value && PyUnicode_Check(value)) {
        Py_INCREF(value);
        Py_XSETREF(*slot, value);
    }
}

static void ring_push(Ring *r, PyObject *value) {
    if (value && PyUnicode_Check(value) && PyUnicode_GET_LENGTH(value) > 0) {
        remember(&r->items[r->next], value);
        r->next = (r->next + 1) % RING;
    }
}

/* ---- the seed estimate --------------------------------------------------------------------- */

typedef struct {
    int64_t ascii, tenths, nonascii;
} Inventory;

/* The characters of a span already validated by the scan. */
static int span_inventory(Scan *s, const uint8_t *p, const uint8_t *end, Inventory *inv) {
    while (p < end) {
        if (*p < 0x80) { inv->ascii++; p++; continue; }
        int len = 1;
        int32_t cp = utf8_at(p, end, &len);
        if (cp < 0) { s->fallback = 1; return 0; }
        inv->tenths += weight_of(s, (uint32_t)cp);
        if (s->error) return 0;
        inv->nonascii++;
        p += len;
    }
    return 1;
}

/* int(weighted + ascii / 4 + 0.999) on exact values, as pipeline.estimate.seed._tokens. */
static int64_t seed_tokens(int64_t ascii, int64_t tenths) {
    int64_t x = 2 * tenths + 5 * ascii;
    int64_t q = x >= 0 ? (x + 19) / 20 : -((-x) / 20);
    return (q > 1 ? q : 1) + RECORD_ALLOWANCE;
}

static const int IDENTITY[6] = {K_UUID, K_PARENT, K_SESSION, K_TIMESTAMP, K_CWD, K_VERSION};

/* A string member whose re-serialized spelling (orjson's) is its raw spelling. */
static int reserializes_as_written(const Val *v) { return v->type == V_NULL || (v->type == V_STR && !v->unicode_escape); }

/* `line_estimate.raw_estimate` on the line's own bytes; -1 sends the line to the reference. */
static int64_t estimate(Scan *s, Head *h, const uint8_t *line, Py_ssize_t n, int is_api, int kind_id) {
    /* kind_id: 0 user, 1 assistant, 2 attachment, 3 system, -1 another */
    if (kind_id < 0) return 0;
    Val *cost = &h->v[K_COST];
    if (cost->type == V_NUM) {
        char buf[64];
        Py_ssize_t len = cost->end - cost->start;
        if (len >= (Py_ssize_t)sizeof(buf)) return -1;
        memcpy(buf, cost->start, (size_t)len);
        buf[len] = 0;
        errno = 0;
        double value = strtod(buf, NULL);
        if (errno || !isfinite(value)) return -1;
        if (value != 0 && fabs(value) < 1e-4) return -1; /* Python spells it 5e-05, JavaScript 0.00005 */
    }
    if (s->nonascii_chars > EXACT_ARITHMETIC_LIMIT) return -1;
    if (is_api) {
        int64_t ascii = (int64_t)n - s->nonascii_bytes, tenths = s->tenths;
        for (int i = 0; i < 6; i++) {
            Val *v = &h->v[IDENTITY[i]];
            if (v->type == V_ABSENT) continue;
            if (!reserializes_as_written(v)) return -1;
            Inventory inv = {0, 0, 0};
            if (!span_inventory(s, v->start, v->end, &inv)) return -1;
            ascii -= inv.ascii + (int64_t)HEAD_KEY_LENGTHS[IDENTITY[i]] + 4;
            tenths -= inv.tenths;
        }
        return seed_tokens(ascii, tenths);
    }
    if (kind_id == 2) {
        Val *a = &h->v[K_ATTACHMENT];
        if (a->type != V_OBJ) return 0;
        Inventory inv = {0, 0, 0};
        if (!span_inventory(s, a->start, a->end, &inv)) return -1;
        return seed_tokens(inv.ascii, inv.tenths);
    }
    if (kind_id != 3) return 0;
    Inventory inv = {0, 0, 0};
    int parts = 0;
    Val *subtype = &h->v[K_SUBTYPE];
    if (subtype->type == V_STR) {
        if (!reserializes_as_written(subtype)) return -1;
        inv.ascii += 10; /* "subtype": */
        if (!span_inventory(s, subtype->start, subtype->end, &inv)) return -1;
        parts++;
    } else {
        static const char NULL_SUBTYPE[] = "\"subtype\":null";
        size_t k = sizeof(NULL_SUBTYPE) - 1;
        for (Py_ssize_t i = 0; i + (Py_ssize_t)k <= n; i++) {
            if (line[i] == '"' && memcmp(line + i, NULL_SUBTYPE, k) == 0) {
                inv.ascii += (int64_t)k;
                parts++;
                break;
            }
        }
    }
    static const int RAW_KEYS[3] = {K_CONTENT, K_ERROR, K_COMPACT_METADATA};
    for (int i = 0; i < 3; i++) {
        Val *v = &h->v[RAW_KEYS[i]];
        if (v->type == V_ABSENT) continue;
        inv.ascii += (int64_t)HEAD_KEY_LENGTHS[RAW_KEYS[i]] + 3;
        if (!span_inventory(s, v->start, v->end, &inv)) return -1;
        parts++;
    }
    return seed_tokens(inv.ascii + 2 + (parts > 1 ? parts - 1 : 0), inv.tenths);
}

/* `seed.raw_inventory_is_exact`: no \u escape, no 0.0000, no e-[1-9][,}\]]. */
static int inventory_is_exact(const uint8_t *line, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == 'u') return 0;
        if (c == '0' && i + 6 <= n && memcmp(line + i, "0.0000", 6) == 0) return 0;
        if (c == 'e' && i + 3 < n && line[i + 1] == '-' && line[i + 2] >= '1' && line[i + 2] <= '9' &&
            (line[i + 3] == ',' || line[i + 3] == '}' || line[i + 3] == ']'))
            return 0;
    }
    return 1;
}

/* `decode._is_loose`: whether the writer spaced its separators (the reference counts those). */
static int is_loose(const uint8_t *line, Py_ssize_t n) {
    if (n < 2 || line[1] != '"') return !(n == 2 && line[0] == '{' && line[1] == '}');
    Py_ssize_t limit = n < 512 ? n : 512;
    for (Py_ssize_t i = 1; i + 1 < limit; i++) {
        if (line[i] == '"' && line[i + 1] == ':') {
            uint8_t after = i + 2 < n ? line[i + 2] : 0;
            return after == ' ' || after == '\t';
        }
    }
    return 1;
}

/* ---- one record ---------------------------------------------------------------------------- */

static const char *BLOCK_NAMES[7] = {"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image", "document"};
static const char BLOCK_LETTERS[7] = {'T', 'K', 'K', 'U', 'R', 'I', 'D'};

typedef struct {
    PyObject *blocks, *uses, *results, *texts; /* texts: raw text members of text blocks, or NULL */
} Facts;

static void facts_clear(Facts *f) {
    Py_CLEAR(f->blocks);
    Py_CLEAR(f->uses);
    Py_CLEAR(f->results);
    Py_CLEAR(f->texts);
}

/* `decode._block_facts` over the typed message content. Returns 0 with an exception set. */
static int block_facts(MessageVals *m, int want_text, Facts *f, Recent *recent) {
    Val *content = &m->content;
    if (content->type == V_STR) {
        f->blocks = StrT; Py_INCREF(StrT);
        f->uses = EmptyTuple; Py_INCREF(EmptyTuple);
        f->results = EmptyTuple; Py_INCREF(EmptyTuple);
        return 1;
    }
    if (content->type != V_ARR || m->nblocks == 0) {
        f->blocks = EmptyStr; Py_INCREF(EmptyStr);
        f->uses = EmptyTuple; Py_INCREF(EmptyTuple);
        f->results = EmptyTuple; Py_INCREF(EmptyTuple);
        return 1;
    }
    Py_ssize_t n = m->nblocks, nuses = 0, nresults = 0;
    char letters_small[64];
    char *letters = n <= 64 ? letters_small : PyMem_Malloc((size_t)n);
    PyObject *uses = PyList_New(0), *results = PyList_New(0);
    if (!letters || !uses || !results) goto error;
    for (Py_ssize_t i = 0; i < n; i++) {
        BlockVals *b = &m->blocks[i];
        int which = -1;
        if (b->type.type == V_STR) {
            for (int j = 0; j < 7; j++) {
                int eq = string_equals(&b->type, BLOCK_NAMES[j]);
                if (eq < 0) goto error;
                if (eq) { which = j; break; }
            }
        }
        letters[i] = which >= 0 ? BLOCK_LETTERS[which] : 'O';
        if (which == 3) { /* tool_use */
            PyObject *id = b->id.type == V_STR ? string_of(&b->id) : (Py_INCREF(EmptyStr), EmptyStr);
            if (!id || PyList_Append(uses, id) < 0) { Py_XDECREF(id); goto error; }
            ring_push(&recent->tools, id);
            Py_DECREF(id);
            nuses++;
        } else if (which == 4) { /* tool_result: tool_use_id or toolUseID, by truthiness */
            Val *chosen = &b->tool_use_id;
            int truthy = chosen->type == V_TRUE || (chosen->type == V_STR && !string_empty(chosen));
            if (!truthy) chosen = &b->tool_use_id2;
            PyObject *id = chosen->type == V_STR ? ring_string(chosen, &recent->tools) : (Py_INCREF(EmptyStr), EmptyStr);
            if (!id || PyList_Append(results, id) < 0) { Py_XDECREF(id); goto error; }
            Py_DECREF(id);
            nresults++;
        } else if (which == 0 && want_text && b->text.type == V_STR) {
            if (!f->texts && !(f->texts = PyList_New(0))) goto error;
            PyObject *raw = PyBytes_FromStringAndSize((const char *)b->text.start, b->text.end - b->text.start);
            if (!raw || PyList_Append(f->texts, raw) < 0) { Py_XDECREF(raw); goto error; }
            Py_DECREF(raw);
        }
    }
    f->blocks = PyUnicode_DecodeASCII(letters, n, NULL);
    if (!f->blocks) goto error;
    f->uses = nuses ? PyList_AsTuple(uses) : (Py_INCREF(EmptyTuple), EmptyTuple);
    f->results = nresults ? PyList_AsTuple(results) : (Py_INCREF(EmptyTuple), EmptyTuple);
    if (!f->uses || !f->results) goto error;
    if (letters != letters_small) PyMem_Free(letters);
    Py_DECREF(uses);
    Py_DECREF(results);
    return 1;
error:
    if (letters && letters != letters_small) PyMem_Free(letters);
    Py_XDECREF(uses);
    Py_XDECREF(results);
    facts_clear(f);
    return 0;
}

/* The prompt fingerprint, by the reference's own helper (a human prompt or a pointer's text). */
static PyObject *prompt_key(int mode, PyObject *raws) {
    PyObject *m = PyLong_FromLong(mode);
    if (!m) return NULL;
    PyObject *key = PyObject_CallFunctionObjArgs(PromptKey, m, raws, NULL);
    Py_DECREF(m);
    return key;
}

static PyObject *raw_tuple(const Val *v) {
    PyObject *raw = PyBytes_FromStringAndSize((const char *)v->start, v->end - v->start);
    if (!raw) return NULL;
    PyObject *t = PyTuple_Pack(1, raw);
    Py_DECREF(raw);
    return t;
}

/* 0 user, 1 assistant, 2 attachment, 3 system, -1 any other type (or none), -2 on error. */
static int kind_id_of(const Val *type) {
    static const char *NAMES[4] = {"user", "assistant", "attachment", "system"};
    if (type->type != V_STR) return -1;
    for (int i = 0; i < 4; i++) {
        int eq = string_equals(type, NAMES[i]);
        if (eq < 0) return -2;
        if (eq) return i;
    }
    return -1;
}

static PyObject *pointer_state(const Val *leaf) {
    PyObject *state = leaf->type == V_ABSENT ? PointerAbsent
                      : leaf->type == V_NULL ? PointerNull
                      : string_empty(leaf)   ? PointerEmpty
                                             : PointerLeaf;
    Py_INCREF(state);
    return state;
}

#define NFIELDS 29

/* The DecodedRecord of a scanned line (NULL with an exception set, or Py_None for fallback). */
static PyObject *assemble(Scan *s, Head *h, const uint8_t *line, Py_ssize_t n, int escapes_possible, Recent *recent) {
    Val *v = h->v;
    int kind_id = kind_id_of(&v[K_TYPE]);
    if (kind_id == -2) return NULL;
    int is_api = (kind_id == 0 || kind_id == 1) && v[K_MESSAGE].type == V_OBJ;
    if (escapes_possible && !inventory_is_exact(line, n)) Py_RETURN_NONE;
    int64_t tokens = estimate(s, h, line, n, is_api, kind_id);
    if (s->error) return NULL;
    if (tokens < 0 || s->fallback) Py_RETURN_NONE;

    PyObject *f[NFIELDS] = {0};
    Facts facts = {0};
    PyObject *record = NULL;
    MessageVals *m = &h->message;
    f[0] = kind_of(&v[K_TYPE]);
    f[1] = text_or_none(&v[K_SUBTYPE]);
    f[2] = text_or_none(&v[K_UUID]);
    f[3] = PyBool_FromLong(string_empty(&v[K_UUID]));
    f[4] = ring_text(&v[K_PARENT], &recent->uuids);
    f[5] = PyBool_FromLong(string_empty(&v[K_PARENT]));
    f[6] = text_or_none(&v[K_LOGICAL_PARENT]);
    f[7] = shared_text(&v[K_SESSION], recent->session);
    f[8] = PyBool_FromLong(v[K_SIDECHAIN].type == V_TRUE);
    f[9] = text_or_none(&v[K_TIMESTAMP]);
    f[10] = shared_text(&v[K_VERSION], recent->version);
    if (is_api) {
        f[11] = shared_text(&m->id, recent->message_id);
        f[12] = kind_of(&m->role); /* "user" and "assistant" are interned record type names */
        if (!block_facts(m, kind_id == 0, &facts, recent)) goto done;
    } else {
        f[11] = Py_None; Py_INCREF(Py_None);
        f[12] = Py_None; Py_INCREF(Py_None);
        facts.blocks = EmptyStr; Py_INCREF(EmptyStr);
        facts.uses = EmptyTuple; Py_INCREF(EmptyTuple);
        facts.results = EmptyTuple; Py_INCREF(EmptyTuple);
    }
    f[13] = PyBool_FromLong(is_api);
    f[14] = facts.blocks; facts.blocks = NULL;
    f[15] = facts.uses; facts.uses = NULL;
    f[16] = facts.results; facts.results = NULL;
    f[17] = ring_text(&v[K_SOURCE_TOOL], &recent->uuids);
    f[18] = kind_id == 2 && v[K_ATTACHMENT].type == V_OBJ ? ring_text(&h->attachment_tool, &recent->tools) : (Py_INCREF(Py_None), Py_None);
    f[19] = PyBool_FromLong(v[K_COMPACT_SUMMARY].type == V_TRUE);
    {
        int boundary = kind_id == 3 ? string_equals(&v[K_SUBTYPE], "compact_boundary") : 0;
        if (boundary < 0) goto done;
        f[20] = PyBool_FromLong(boundary);
    }
    f[21] = PyBool_FromLong(v[K_META].type == V_TRUE);
    f[22] = pointer_state(&v[K_LEAF]);
    f[23] = text_or_none(&v[K_LEAF]);
    f[24] = PyBool_FromLong(v[K_EXPLICIT].type == V_TRUE);
    /* prompt key */
    f[25] = NULL;
    if (kind_id == 0 && f[12] && f[12] != Py_None && PyUnicode_CompareWithASCIIString(f[12], "user") == 0 &&
        v[K_COMPACT_SUMMARY].type != V_TRUE && v[K_META].type != V_TRUE && PyTuple_GET_SIZE(f[16]) == 0) {
        if (m->content.type == V_STR) {
            PyObject *raws = raw_tuple(&m->content);
            if (!raws) goto done;
            f[25] = prompt_key(0, raws);
            Py_DECREF(raws);
        } else if (facts.texts) {
            f[25] = prompt_key(1, facts.texts);
        }
        if (!f[25] && PyErr_Occurred()) goto done;
    } else if (kind_id < 0 && v[K_LAST_PROMPT].type == V_STR) {
        int pointer = string_equals(&v[K_TYPE], "last-prompt");
        if (pointer < 0) goto done;
        if (pointer) {
            PyObject *raws = raw_tuple(&v[K_LAST_PROMPT]);
            if (!raws) goto done;
            f[25] = prompt_key(2, raws);
            Py_DECREF(raws);
            if (!f[25]) goto done;
        }
    }
    if (!f[25]) { f[25] = Py_None; Py_INCREF(Py_None); }
    {
        int snapshot = string_equals(&v[K_TYPE], "file-history-snapshot");
        if (snapshot < 0) goto done;
        f[26] = snapshot ? text_or_none(&v[K_MESSAGE_ID]) : (Py_INCREF(Py_None), Py_None);
    }
    f[27] = text_or_none(&v[K_AGENT_ID]);
    f[28] = PyLong_FromLongLong(tokens);
    for (int i = 0; i < NFIELDS; i++) {
        if (!f[i]) goto done;
    }
    record = PyObject_Vectorcall(RecordType, f, NFIELDS, NULL);
    if (record) {
        ring_push(&recent->uuids, f[2]);
        remember(&recent->session, f[7]);
        remember(&recent->version, f[10]);
        remember(&recent->message_id, f[11]);
    }
done:
    for (int i = 0; i < NFIELDS; i++) Py_XDECREF(f[i]);
    facts_clear(&facts);
    return record;
}

/* A non-blank line's record, Py_None when the reference must read it, NULL on error. */
static PyObject *fast_record(const uint8_t *line, Py_ssize_t n, int max_depth, int escapes_possible, int *last_prompt,
                             Recent *recent) {
    /* bytes.strip(): ASCII whitespace including \v and \f */
    while (n > 0 && (line[0] == ' ' || (line[0] >= '\t' && line[0] <= '\r'))) { line++; n--; }
    while (n > 0 && (line[n - 1] == ' ' || (line[n - 1] >= '\t' && line[n - 1] <= '\r'))) n--;
    if (n < 2 || line[0] != '{' || is_loose(line, n)) Py_RETURN_NONE;
    Scan s = {line, line + n, max_depth < FAST_MAX_DEPTH ? max_depth : FAST_MAX_DEPTH, 0, 0, 0, 0, 0};
    Head h;
    memset(&h, 0, sizeof(h));
    Val whole;
    PyObject *result = NULL;
    if (!scan_members(&s, &whole, 1, head_member, &h) || s.p != s.end) {
        if (s.error) goto done;
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    result = assemble(&s, &h, line, n, escapes_possible, recent);
    if (result && result != Py_None) *last_prompt = string_equals(&h.v[K_TYPE], "last-prompt") == 1;
done:
    PyMem_Free(h.message.blocks);
    return result;
}

/* ---- the whole file ------------------------------------------------------------------------ */

static int is_blank(const uint8_t *p, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!(p[i] == ' ' || (p[i] >= '\t' && p[i] <= '\r'))) return 0;
    }
    return 1;
}

typedef struct {
    int64_t *items;
    Py_ssize_t n, cap;
} Int64s;

static int push(Int64s *a, int64_t value) {
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? a->cap * 2 : 1024;
        int64_t *grown = PyMem_Realloc(a->items, (size_t)cap * sizeof(int64_t));
        if (!grown) { PyErr_NoMemory(); return 0; }
        a->items = grown;
        a->cap = cap;
    }
    a->items[a->n++] = value;
    return 1;
}

/* The kind and record of a line the reference decoded (a DecodedRecord or a LineProblem). */
static int from_reference(PyObject *decoded, PyObject **kind, PyObject **record) {
    if (PyObject_TypeCheck(decoded, (PyTypeObject *)RecordType)) {
        *kind = KindRecord;
        Py_INCREF(KindRecord);
        *record = decoded;
        return 1;
    }
    PyObject *name = PyObject_GetAttrString(decoded, "kind");
    Py_DECREF(decoded);
    if (!name) return 0;
    PyObject *k = PyDict_GetItemWithError(ProblemKinds, name);
    Py_DECREF(name);
    if (!k) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "unknown line problem");
        return 0;
    }
    Py_INCREF(k);
    *kind = k;
    *record = Py_None;
    Py_INCREF(Py_None);
    return 1;
}

static int is_last_prompt(PyObject *record) {
    if (record == Py_None) return 0;
    PyObject *type = PyObject_GetAttrString(record, "type");
    if (!type) return -1;
    int yes = PyUnicode_Check(type) && PyUnicode_CompareWithASCIIString(type, "last-prompt") == 0;
    Py_DECREF(type);
    return yes;
}

static PyObject *int64_bytes(Int64s *a) {
    return PyBytes_FromStringAndSize((const char *)a->items, a->n * (Py_ssize_t)sizeof(int64_t));
}

static PyObject *index_lines(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t max_line_bytes;
    int max_depth, escapes_possible;
    PyObject *reference;
    if (!RecordType) {
        PyErr_SetString(PyExc_RuntimeError, "configure() was not called");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*nipO", &view, &max_line_bytes, &max_depth, &escapes_possible, &reference))
        return NULL;
    const uint8_t *data = view.buf;
    Py_ssize_t size = view.len, start = 0, crlf = 0, number = 0, latest = 0;
    Int64s offsets = {0}, lengths = {0};
    Recent recent = {0};
    PyObject *kinds = PyList_New(0), *records = PyList_New(0), *result = NULL;
    int bom = size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF;
    if (!kinds || !records) goto done;
    while (start < size) {
        const uint8_t *nl = memchr(data + start, '\n', (size_t)(size - start));
        Py_ssize_t end = nl ? nl - data : size;
        number++;
        if (!push(&offsets, start) || !push(&lengths, end - start)) goto done;
        Py_ssize_t content_end = end;
        if (end > start && data[end - 1] == '\r') { crlf++; content_end--; }
        Py_ssize_t content_start = start == 0 && bom ? 3 : start;
        const uint8_t *line = data + content_start;
        Py_ssize_t n = content_end - content_start;
        PyObject *kind, *record;
        if (is_blank(line, n)) {
            kind = KindBlank; Py_INCREF(kind);
            record = Py_None; Py_INCREF(record);
        } else {
            int last_prompt = 0;
            record = n <= max_line_bytes ? fast_record(line, n, max_depth, escapes_possible, &last_prompt, &recent)
                                         : (Py_INCREF(Py_None), Py_None);
            if (!record) goto done;
            int pointer = -1;
            if (record != Py_None) {
                kind = KindRecord; Py_INCREF(kind);
                pointer = last_prompt;
            } else {
                Py_DECREF(record);
                PyObject *raw = PyBytes_FromStringAndSize((const char *)line, n);
                if (!raw) goto done;
                PyObject *decoded = PyObject_CallOneArg(reference, raw);
                Py_DECREF(raw);
                if (!decoded || !from_reference(decoded, &kind, &record)) goto done;
            }
            if (pointer == -1) pointer = is_last_prompt(record);
            if (pointer < 0) { Py_DECREF(kind); Py_DECREF(record); goto done; }
            if (pointer) latest = number;
        }
        int failed = PyList_Append(kinds, kind) < 0 || PyList_Append(records, record) < 0;
        Py_DECREF(kind);
        Py_DECREF(record);
        if (failed) goto done;
        if (!nl) break;
        start = end + 1;
    }
    {
        PyObject *offsets_b = int64_bytes(&offsets), *lengths_b = int64_bytes(&lengths);
        PyObject *kinds_t = PyList_AsTuple(kinds), *records_t = PyList_AsTuple(records);
        PyObject *latest_o = latest ? PyLong_FromSsize_t(latest) : (Py_INCREF(Py_None), Py_None);
        if (offsets_b && lengths_b && kinds_t && records_t && latest_o) {
            result = Py_BuildValue("(OOOOnO)", offsets_b, lengths_b, kinds_t, records_t, crlf, latest_o);
        }
        Py_XDECREF(latest_o);
        Py_XDECREF(offsets_b);
        Py_XDECREF(lengths_b);
        Py_XDECREF(kinds_t);
        Py_XDECREF(records_t);
    }
done:
    recent_clear(&recent);
    PyMem_Free(offsets.items);
    PyMem_Free(lengths.items);
    Py_XDECREF(kinds);
    Py_XDECREF(records);
    PyBuffer_Release(&view);
    return result;
}

/* One line, as `decode_record` would return it, or None where the reference must decide. */
static PyObject *scan_line(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    int max_depth, escapes_possible;
    if (!RecordType) {
        PyErr_SetString(PyExc_RuntimeError, "configure() was not called");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*ip", &view, &max_depth, &escapes_possible)) return NULL;
    int last_prompt = 0;
    Recent recent = {0};
    PyObject *result = is_blank(view.buf, view.len)
                           ? (Py_INCREF(Py_None), Py_None)
                           : fast_record(view.buf, view.len, max_depth, escapes_possible, &last_prompt, &recent);
    recent_clear(&recent);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *record, *pointers, *blank, *rec, *problems, *key, *weight, *names;
    if (!PyArg_ParseTuple(args, "OOOOO!OOO!", &record, &pointers, &blank, &rec, &PyDict_Type, &problems, &key,
                          &weight, &PyTuple_Type, &names))
        return NULL;
    PyObject *absent, *leaf, *empty, *null;
    if (!PyArg_ParseTuple(pointers, "OOOO", &absent, &leaf, &empty, &null)) return NULL;
    if (!PyType_Check(record) || PyTuple_GET_SIZE(names) > 8) {
        PyErr_SetString(PyExc_TypeError, "configure(record type, ..., at most 8 names)");
        return NULL;
    }
#define KEEP(slot, value) do { Py_XDECREF(slot); slot = value; Py_INCREF(slot); } while (0)
    KEEP(RecordType, record);
    KEEP(PointerAbsent, absent);
    KEEP(PointerLeaf, leaf);
    KEEP(PointerEmpty, empty);
    KEEP(PointerNull, null);
    KEEP(KindBlank, blank);
    KEEP(KindRecord, rec);
    KEEP(ProblemKinds, problems);
    KEEP(PromptKey, key);
    KEEP(WeightOf, weight);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) KEEP(KindNames[i], PyTuple_GET_ITEM(names, i));
#undef KEEP
    Py_RETURN_NONE;
}

static PyMethodDef METHODS[] = {
    {"configure", configure, METH_VARARGS,
     "configure(record_type, pointer_states, blank, record, problem_kinds, prompt_key, weight, names)"},
    {"index_lines", index_lines, METH_VARARGS,
     "index_lines(data, max_line_bytes, max_depth, escapes_possible, reference) -> (offsets, lengths, "
     "kinds, records, crlf_lines, latest_pointer)"},
    {"scan_line", scan_line, METH_VARARGS, "scan_line(line, max_depth, escapes_possible) -> DecodedRecord | None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_scan", "The compiled line scanner.", -1, METHODS};

PyMODINIT_FUNC PyInit__scan(void) {
    for (int k = 0; k < K_COUNT; k++) HEAD_KEY_LENGTHS[k] = strlen(HEAD_KEYS[k]);
    for (int c = 0; c < 256; c++) STRING_STOP[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80;
    EmptyTuple = PyTuple_New(0);
    EmptyStr = PyUnicode_FromString("");
    StrT = PyUnicode_InternFromString("T");
    if (!EmptyTuple || !EmptyStr || !StrT) return NULL;
    return PyModule_Create(&MODULE);
}
