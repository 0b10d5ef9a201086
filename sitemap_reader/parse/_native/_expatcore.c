/* _expatcore: the compiled hot path of the sitemap parser (sitemap_reader/parse/native.py).

Theory of operation
-------------------
The extension drives the very expat that pyexpat uses, through pyexpat's C API capsule
(``pyexpat.expat_CAPI``, CPython's Include/pyexpat.h): no libexpat is linked, so both
paths tokenize with the same code and see the same events. Expat calls C handlers; the
element machine of parse/elements.py runs in C on those events, and calls back into the
Python parts only on rare branches (the root, a tag name never seen, a namespace
declaration, an extension object, a problem, a drain of the pending entries).

Everything the capsule lacks is handled by design, not emulated:

- No entity declaration handlers (EntityDecl, UnparsedEntityDecl, ExternalEntityRef)
  and no XML_StopParser: entities can only be declared in an internal DTD subset, and
  the capsule's StartDoctypeDeclHandler says whether one follows. The core asks for a
  *handover* when it does: the caller re-reads the body from its first byte with the
  pure-Python reader (defusedxml's semantics, the reference). Until the root element has
  started, each Parse() slice ends just after a '[' byte, so expat has read nothing of
  the subset when the handover is asked for. Nothing has been emitted before the root.
- No XML_GetCurrentByteIndex: the token bound of parse/bounds.py compares byte offsets
  at fixed offsets of the stream (every max_token bytes). Expat's (line, column) of its
  first unconsumed byte is in the capsule (GetErrorLineNumber/ColumnNumber are
  XML_GetCurrentLineNumber/ColumnNumber), and positions grow strictly with the offset of
  character boundaries, so "the open token began more than max_token bytes ago" is
  "its position is before the position of the previous grid offset", which this module
  counts itself over the bytes it hands to expat (expat's rules: LF, CR and CRLF are
  one line break each; a column is a character).

The distinct names pyexpat would intern (element and attribute names) are counted in a
hash table of their own (keyed with Python's own bytes hash), which is also the cache of
each name's kind; the counts are checked at the same grid offsets as the reference.

Images and hreflang links are gathered in C as parse/gather.py does (an image with an
unusual child goes to the Python gatherer mid-object, with what was gathered so far).

Drainer is a C port of _Emitter.drain (parse/parser.py): the normal-form test of a
location (normalize._FAST_RE), lastmod, changefreq and priority, the default score with
the record itself (and its Image and Alternate records), each switchable off (flags) to
measure what each step costs; every value off the fast paths is handed to the Python
function the reference uses.

Beside them, for the per-record work after the parse and for measurement: text_lines
(TextReader's line loop), UrlSet (discovery/dedupe.py's table), jsonl (writers.py's JSON
Lines), the field fast paths alone, and null_parse (the C-expat baseline).

Identity with the pure path is the contract: tests/parse/test_native.py and
benchmarks/native/fuzz_native.py hold the two to each other; ARCHITECTURE.md (the native
path) and benchmarks/native/NOTES.md have the design.
*/

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#if !defined(_MSC_VER)
#include <strings.h>  /* strncasecmp */
#else
#define strncasecmp _strnicmp
#endif

/* ---- expat's types, as pyexpat.h needs them (no expat.h: the capsule is the API) ---- */

#ifndef XMLCALL
#if defined(_MSC_VER)
#define XMLCALL __cdecl
#elif defined(__GNUC__) && defined(__i386) && !defined(__INTEL_COMPILER)
#define XMLCALL __attribute__((cdecl))
#else
#define XMLCALL
#endif
#endif
typedef struct XML_ParserStruct *XML_Parser;
typedef char XML_Char;
typedef char XML_LChar;
typedef unsigned long XML_Size;
typedef unsigned char XML_Bool;
enum XML_Status { XML_STATUS_ERROR = 0, XML_STATUS_OK = 1, XML_STATUS_SUSPENDED = 2 };
enum XML_Error { XML_ERROR_NONE = 0, XML_ERROR_NO_MEMORY = 1 };
typedef struct {
    void *(*malloc_fcn)(size_t size);
    void *(*realloc_fcn)(void *ptr, size_t size);
    void (*free_fcn)(void *ptr);
} XML_Memory_Handling_Suite;
typedef struct XML_Encoding XML_Encoding;
typedef void(XMLCALL *XML_StartElementHandler)(void *, const XML_Char *, const XML_Char **);
typedef void(XMLCALL *XML_EndElementHandler)(void *, const XML_Char *);
typedef void(XMLCALL *XML_CharacterDataHandler)(void *, const XML_Char *, int);
typedef void(XMLCALL *XML_CommentHandler)(void *, const XML_Char *);
typedef void(XMLCALL *XML_DefaultHandler)(void *, const XML_Char *, int);
typedef void(XMLCALL *XML_StartNamespaceDeclHandler)(void *, const XML_Char *, const XML_Char *);
typedef void(XMLCALL *XML_EndNamespaceDeclHandler)(void *, const XML_Char *);
typedef void(XMLCALL *XML_ProcessingInstructionHandler)(void *, const XML_Char *, const XML_Char *);
typedef int(XMLCALL *XML_UnknownEncodingHandler)(void *, const XML_Char *, XML_Encoding *);
typedef void(XMLCALL *XML_StartDoctypeDeclHandler)(void *, const XML_Char *, const XML_Char *,
                                            const XML_Char *, int);
#include <pyexpat.h>

/* ---- constants shared with the Python side (checked there at import) ---------------- */

enum {
    OTHER = 0, E_URL = 1, E_SITEMAP = 2, E_ITEM = 3,
    F_LOC = 10, F_LASTMOD = 11, F_CHANGEFREQ = 12, F_PRIORITY = 13, F_LINK = 14,
    F_GUID = 15, F_PUBLISHED = 16, F_TITLE = 17, F_FEED_DATE = -2,
    X_IMAGE = 20, X_VIDEO = 21, X_NEWS = 22, X_PAGEMAP = 23, X_XHTML = 24, X_MOBILE = 25,
};
enum {
    S_LOC = 0, S_LASTMOD = 1, S_CHANGEFREQ = 2, S_PRIORITY = 3, S_LINK = 4, S_GUID = 5,
    S_PUBLISHED = 6, S_TITLE = 7, S_ALTERNATES = 8, S_IMAGES = 9, S_VIDEOS = 10, S_NEWS = 11,
    S_EXTRA = 12, ENTRY_SIZE = 13,
};
/* drain() flags: which steps run in C (the rest call the reference's Python functions) */
enum { N_LOC = 1, N_DATE = 2, N_FIELDS = 4, N_RECORD = 8 };

static struct PyExpat_CAPI *capi;
/* Where the capsule's SetReparseDeferralEnabled sits (the member after SetHashSalt). */
#define DEFERRAL_AT (offsetof(struct PyExpat_CAPI, SetHashSalt) + sizeof(void *))
static unsigned long hash_salt;   /* expat's hash salt: random per process, as pyexpat's */
static PyObject *NeedsReference;  /* the core asks the caller for the reference reader */
static PyObject *ExpatError;      /* pyexpat.ExpatError */

/* ======================================================================================
   The name table: every distinct element and attribute name (what pyexpat interns),
   with its kind cached per generation of the prefix declarations.
   ====================================================================================== */

typedef struct {
    char *bytes;         /* NUL-terminated UTF-8, owned; its address identifies the name */
    Py_ssize_t len;
    Py_hash_t hash;
    PyObject *str;       /* the name as str, made on first use */
    PyObject *local;     /* names.locals[name] (lower-case local name), per generation */
    int kind;
    unsigned int gen;    /* kind is valid while gen == NameTable.gen */
} NameEntry;

#define HOT 64

/* Entries are allocated one by one and never move (the handlers hold them across calls
   that add names); the table holds pointers. */
typedef struct {
    NameEntry **slots;
    NameEntry *hot[HOT]; /* a direct-mapped cache of recent names */
    Py_ssize_t mask;     /* capacity - 1 (a power of two) */
    Py_ssize_t count;
    Py_ssize_t chars;    /* characters of all names */
    unsigned int gen;
} NameTable;

static int names_init(NameTable *t) {
    t->mask = 63;
    t->slots = PyMem_Calloc((size_t)(t->mask + 1), sizeof(NameEntry *));
    memset(t->hot, 0, sizeof(t->hot));
    t->count = t->chars = 0;
    t->gen = 1;
    if (t->slots == NULL) { PyErr_NoMemory(); return -1; }
    return 0;
}

static void names_free(NameTable *t) {
    if (t->slots == NULL) return;
    for (Py_ssize_t i = 0; i <= t->mask; i++) {
        NameEntry *e = t->slots[i];
        if (e) {
            PyMem_Free(e->bytes);
            Py_XDECREF(e->str);
            Py_XDECREF(e->local);
            PyMem_Free(e);
        }
    }
    PyMem_Free(t->slots);
    t->slots = NULL;
}

/* -- byte counts over whole buffers (16 bytes at a time where the compiler has vectors) -- */

#if defined(__GNUC__) || defined(__clang__)
typedef unsigned char v16 __attribute__((vector_size(16)));
#define HAVE_V16 1
static inline Py_ssize_t lanes(v16 acc) {
    Py_ssize_t sum = 0;
    for (int i = 0; i < 16; i++) sum += acc[i];
    return sum;
}
#endif

/* How many bytes of p[0:n] equal a, and how many equal b. */
static void count_two(const unsigned char *p, Py_ssize_t n, unsigned char a, unsigned char b,
                      Py_ssize_t *na, Py_ssize_t *nb) {
    Py_ssize_t i = 0, ca = 0, cb = 0;
#ifdef HAVE_V16
    v16 va, vb, acc_a = {0}, acc_b = {0};
    for (int k = 0; k < 16; k++) { va[k] = a; vb[k] = b; }
    int rounds = 0;
    for (; i + 16 <= n; i += 16) {
        v16 v;
        memcpy(&v, p + i, 16);
        acc_a -= (v16)(v == va);
        acc_b -= (v16)(v == vb);
        if (++rounds == 255) {
            ca += lanes(acc_a); cb += lanes(acc_b);
            acc_a = (v16){0}; acc_b = (v16){0};
            rounds = 0;
        }
    }
    ca += lanes(acc_a); cb += lanes(acc_b);
#endif
    for (; i < n; i++) { ca += p[i] == a; cb += p[i] == b; }
    *na = ca;
    *nb = cb;
}

/* Characters of UTF-8 text: the bytes that are not continuation bytes. */
static Py_ssize_t utf8_chars(const char *text, Py_ssize_t n) {
    const unsigned char *p = (const unsigned char *)text;
    Py_ssize_t i = 0, cont = 0;
#ifdef HAVE_V16
    v16 mask, trail, acc = {0};
    for (int k = 0; k < 16; k++) { mask[k] = 0xC0; trail[k] = 0x80; }
    int rounds = 0;
    for (; i + 16 <= n; i += 16) {
        v16 v;
        memcpy(&v, p + i, 16);
        acc -= (v16)((v & mask) == trail);
        if (++rounds == 255) { cont += lanes(acc); acc = (v16){0}; rounds = 0; }
    }
    cont += lanes(acc);
#endif
    for (; i < n; i++) cont += (p[i] & 0xC0) == 0x80;
    return n - cont;
}

/* Is every byte ASCII? (8 at a time) */
static int all_ascii(const char *text, Py_ssize_t n) {
    const unsigned char *p = (const unsigned char *)text;
    uint64_t high = 0;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        high |= w;
    }
    for (; i < n; i++) high |= p[i];
    return (high & 0x8080808080808080ULL) == 0;
}

static int names_grow(NameTable *t) {
    Py_ssize_t size = (t->mask + 1) * 2;
    NameEntry **slots = PyMem_Calloc((size_t)size, sizeof(NameEntry *));
    if (slots == NULL) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i <= t->mask; i++) {
        NameEntry *e = t->slots[i];
        if (e == NULL) continue;
        Py_ssize_t j = (Py_ssize_t)((size_t)e->hash & (size_t)(size - 1));
        while (slots[j]) j = (j + 1) & (size - 1);
        slots[j] = e;
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

static inline size_t hot_index(const char *name, Py_ssize_t len) {
    const unsigned char *p = (const unsigned char *)name;
    return ((size_t)len * 31u + p[0] * 7u + p[len - 1] * 3u + p[len / 2]) & (HOT - 1);
}

static NameEntry *names_find(NameTable *t, const char *name, Py_ssize_t len);

/* The entry of a name, added when new (NULL with an exception set on failure). The hot
   cache answers the few names a sitemap repeats without hashing them; the table is keyed
   with Python's own keyed bytes hash, so hostile names cannot aim collisions at it. */
static NameEntry *names_get(NameTable *t, const char *name) {
    Py_ssize_t len = (Py_ssize_t)strlen(name);
    if (len == 0) return names_find(t, name, len);
    size_t h = hot_index(name, len);
    NameEntry *e = t->hot[h];
    if (e != NULL && e->len == len && memcmp(e->bytes, name, (size_t)len) == 0) return e;
    e = names_find(t, name, len);
    if (e != NULL) t->hot[h] = e;
    return e;
}

static NameEntry *names_find(NameTable *t, const char *name, Py_ssize_t len) {
    Py_hash_t hash = _Py_HashBytes(name, len);
    Py_ssize_t i = (Py_ssize_t)((size_t)hash & (size_t)t->mask);
    for (;;) {
        NameEntry *e = t->slots[i];
        if (e == NULL) break;
        if (e->hash == hash && e->len == len && memcmp(e->bytes, name, (size_t)len) == 0) return e;
        i = (i + 1) & t->mask;
    }
    if ((t->count + 1) * 2 > t->mask + 1) {
        if (names_grow(t) < 0) return NULL;
        return names_find(t, name, len);
    }
    NameEntry *e = PyMem_Calloc(1, sizeof(NameEntry));
    if (e == NULL) { PyErr_NoMemory(); return NULL; }
    e->bytes = PyMem_Malloc((size_t)len + 1);
    if (e->bytes == NULL) { PyMem_Free(e); PyErr_NoMemory(); return NULL; }
    memcpy(e->bytes, name, (size_t)len + 1);
    e->len = len;
    e->hash = hash;
    t->slots[i] = e;
    t->count++;
    t->chars += utf8_chars(name, len);
    return e;
}

static PyObject *name_str(NameEntry *e) {  /* borrowed */
    if (e->str == NULL) e->str = PyUnicode_DecodeUTF8(e->bytes, e->len, "strict");
    return e->str;
}

/* ======================================================================================
   The core: expat, the handlers, the element machine, the bounds.
   ====================================================================================== */

typedef struct {
    PyObject_HEAD
    XML_Parser parser;
    int mode;                    /* 0: handlers do nothing; 1: the element machine */
    /* collaborators (the reference's objects, called on rare branches) */
    PyObject *sink_problem, *sink_drain, *sink_feed_date, *pending;
    Py_ssize_t batch;
    PyObject *classify, *declare, *close_scope, *limit;
    PyObject *child_attrs, *alternate, *child_end, *ext_close;
    PyObject *pieces;            /* the TextBuffer's list (the gatherer reads it) */
    PyObject *root_of, *atom_link, *set_mobile, *finish_item;
    PyObject *gatherer, *locals, *over_cap;  /* the image and hreflang paths in C */
    Py_ssize_t ext_cap;
    PyObject *img;               /* the image:image being gathered in C (its fields dict) */
    int img_python;              /* ... handed to the Python gatherer mid-object */
    PyObject *str_fields, *str_loc, *str_image_image, *str_xhtml_link;
    /* limits */
    Py_ssize_t max_text, depth_cap, max_names, max_name_chars;
    long long max_token;
    /* the stream */
    long long fed, grid;
    unsigned long long line, col;        /* position after the bytes fed (0-based line) */
    unsigned long long grid_line, grid_col;  /* ... at the previous grid offset */
    int prev_cr;
    Py_ssize_t names_seen;
    /* state */
    int error, handover, root_started, root_ended;
    unsigned long root_end_line, root_end_col;  /* where the root's end tag is (1-based line) */
    Py_ssize_t depth;
    int format_set, feed, entries_mask;
    int entry, field, ext, scoped;
    const char *entry_name, *field_name, *ext_name;  /* NameEntry bytes: identity */
    PyObject *v;                 /* the entry in progress: a list of ENTRY_SIZE slots */
    /* the text of the element being read */
    char *text;
    Py_ssize_t text_len, text_cap, text_chars;  /* text_chars: valid when text_counted */
    int text_over, text_counted;
    PyObject *overflow, *empty;
    NameTable names;
    /* counters for the benchmarks */
    long long events;
} Core;

static void core_fail(Core *c) { c->error = 1; }

static int problem(Core *c, const char *code, PyObject *message) {
    if (message == NULL) return -1;
    PyObject *codeobj = PyUnicode_FromString(code);
    if (codeobj == NULL) { Py_DECREF(message); return -1; }
    PyObject *r = PyObject_CallFunctionObjArgs(c->sink_problem, codeobj, message, NULL);
    Py_DECREF(codeobj);
    Py_DECREF(message);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

/* bounded.limit(code, message): records the fatal problem and raises StopParsing */
static void limit(Core *c, const char *code, PyObject *message) {
    if (message == NULL) { core_fail(c); return; }
    PyObject *r = PyObject_CallFunction(c->limit, "sO", code, message);
    Py_DECREF(message);
    Py_XDECREF(r);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "limit() did not raise");
    core_fail(c);
}

static PyObject *new_entry(void) {
    PyObject *v = PyList_New(ENTRY_SIZE);
    if (v == NULL) return NULL;
    for (Py_ssize_t i = 0; i < ENTRY_SIZE; i++) {
        Py_INCREF(Py_None);
        PyList_SET_ITEM(v, i, Py_None);
    }
    return v;
}

/* -- text ------------------------------------------------------------------------------ */

static inline void text_clear(Core *c) {
    c->text_len = c->text_chars = 0;
    c->text_over = c->text_counted = 0;
}

static void XMLCALL on_chars(void *ud, const XML_Char *s, int len) {
    Core *c = (Core *)ud;
    if (c->error || c->mode == 0 || c->text_over) return;
    if (c->text_len + len > c->max_text) {
        /* more bytes than the cap allows characters: count the characters (rare) */
        if (!c->text_counted) {
            c->text_chars = utf8_chars(c->text, c->text_len);
            c->text_counted = 1;
        }
        c->text_chars += utf8_chars(s, len);
        if (c->text_chars > c->max_text) {  /* over the cap: only the verdict is kept */
            c->text_over = 1;
            c->text_len = 0;
            return;
        }
    }
    if (c->text_len + len > c->text_cap) {
        Py_ssize_t cap = c->text_cap * 2;
        while (cap < c->text_len + len) cap *= 2;
        char *text = PyMem_Realloc(c->text, (size_t)cap);
        if (text == NULL) { PyErr_NoMemory(); core_fail(c); return; }
        c->text = text;
        c->text_cap = cap;
    }
    memcpy(c->text + c->text_len, s, (size_t)len);
    c->text_len += len;
}

static inline int ascii_space(unsigned char b) {  /* str.isspace() on ASCII */
    return b == ' ' || (b >= '\t' && b <= '\r') || (b >= 0x1c && b <= 0x1f);
}

static PyObject *ascii_str(const char *s, Py_ssize_t n) {
    PyObject *u = PyUnicode_New(n, 127);
    if (u == NULL) return NULL;
    memcpy(PyUnicode_DATA(u), s, (size_t)n);
    return u;
}

/* TextBuffer.text(): the text stripped; "" and a problem when over the cap. */
static PyObject *text_value(Core *c) {
    if (c->text_over) {
        if (problem(c, "text-too-long",
                    PyUnicode_FromFormat("text longer than %zd chars dropped", c->max_text)) < 0)
            return NULL;
        Py_INCREF(c->empty);
        return c->empty;
    }
    const char *s = c->text;
    Py_ssize_t n = c->text_len;
    if (all_ascii(s, n)) {
        while (n && ascii_space((unsigned char)s[0])) { s++; n--; }
        while (n && ascii_space((unsigned char)s[n - 1])) n--;
        if (n == 0) { Py_INCREF(c->empty); return c->empty; }
        return ascii_str(s, n);
    }
    PyObject *u = PyUnicode_DecodeUTF8(s, n, "strict");
    if (u == NULL) return NULL;
    unsigned char first = (unsigned char)s[0], last = (unsigned char)s[n - 1];
    if (first < 0x80 && !ascii_space(first) && last < 0x80 && !ascii_space(last)) return u;
    PyObject *stripped = PyObject_CallMethod(u, "strip", NULL);  /* Unicode spaces: rare */
    Py_DECREF(u);
    return stripped;
}

/* The raw text into the TextBuffer's pieces, for the gatherer (its text() decides). */
static int text_to_pieces(Core *c) {
    PyObject *piece;
    if (c->text_over) {
        piece = c->overflow;
        Py_INCREF(piece);
    } else if (all_ascii(c->text, c->text_len)) {
        piece = ascii_str(c->text, c->text_len);
    } else {
        piece = PyUnicode_DecodeUTF8(c->text, c->text_len, "strict");
    }
    if (piece == NULL) return -1;
    PyObject *one = PyList_New(1);
    if (one == NULL) { Py_DECREF(piece); return -1; }
    PyList_SET_ITEM(one, 0, piece);
    int r = PyList_SetSlice(c->pieces, 0, PyList_GET_SIZE(c->pieces), one);
    Py_DECREF(one);
    return r;
}

static int pieces_clear(Core *c) {
    return PyList_SetSlice(c->pieces, 0, PyList_GET_SIZE(c->pieces), NULL);
}

/* -- attributes --------------------------------------------------------------------------- */

static PyObject *attrs_dict(Core *c, const XML_Char **atts) {
    PyObject *d = PyDict_New();
    if (d == NULL) return NULL;
    for (int i = 0; atts[i]; i += 2) {
        NameEntry *e = names_get(&c->names, atts[i]);
        PyObject *k = e ? name_str(e) : NULL;
        PyObject *val = k ? PyUnicode_DecodeUTF8(atts[i + 1], (Py_ssize_t)strlen(atts[i + 1]),
                                                 "strict") : NULL;
        if (val == NULL || PyDict_SetItem(d, k, val) < 0) {
            Py_XDECREF(val);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(val);
    }
    return d;
}

/* -- the element machine (parse/elements.py, _start/_end/_finish_entry) ------------------- */

static int kind_of(Core *c, NameEntry *e) {
    if (e->gen == c->names.gen) return e->kind;
    PyObject *s = name_str(e);
    if (s == NULL) return -100;
    PyObject *r = PyObject_CallOneArg(c->classify, s);
    if (r == NULL) return -100;
    long kind = PyLong_AsLong(r);
    Py_DECREF(r);
    if (kind == -1 && PyErr_Occurred()) return -100;
    e->kind = (int)kind;
    e->gen = c->names.gen;
    Py_XSETREF(e->local, Py_XNewRef(PyDict_GetItemWithError(c->locals, s)));
    if (e->local == NULL && PyErr_Occurred()) return -100;
    return (int)kind;
}

/* -- extensions in C: image:image objects and xhtml:link alternates (gather.py) ----------- */

static int set_default(PyObject *dict, PyObject *key, PyObject *value) {
    PyObject *r = PyDict_SetDefault(dict, key, value);
    return r == NULL ? -1 : 0;
}

static int append_capped(Core *c, int slot, PyObject *item, PyObject *what) {
    PyObject *found = PyList_GET_ITEM(c->v, slot);
    if (found == Py_None) {
        found = PyList_New(0);
        if (found == NULL) return -1;
        PyList_SetItem(c->v, slot, found);
    }
    if (PyList_GET_SIZE(found) < c->ext_cap) return PyList_Append(found, item);
    PyObject *r = PyObject_CallOneArg(c->over_cap, what);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

/* ExtensionGatherer.alternate for the common link (rel="alternate", an href, an ASCII
   hreflang without blank ends); 1 when done, 0 for the Python gatherer, -1 on error. */
static int alternate_fast(Core *c, const XML_Char **atts) {
    const char *rel = NULL, *href = NULL, *lang = NULL;
    for (int i = 0; atts[i]; i += 2) {
        const char *k = atts[i];
        if (strcmp(k, "rel") == 0) rel = atts[i + 1];
        else if (strcmp(k, "href") == 0) href = atts[i + 1];
        else if (strcmp(k, "hreflang") == 0) lang = atts[i + 1];
    }
    if (rel == NULL || strcmp(rel, "alternate") != 0 || href == NULL || !href[0] || lang == NULL)
        return 0;
    Py_ssize_t n = (Py_ssize_t)strlen(lang);
    if (n == 0 || !all_ascii(lang, n) || ascii_space((unsigned char)lang[0]) ||
        ascii_space((unsigned char)lang[n - 1]))
        return 0;
    PyObject *langobj = ascii_str(lang, n);
    PyObject *hrefobj = PyUnicode_DecodeUTF8(href, (Py_ssize_t)strlen(href), "strict");
    PyObject *pair = (langobj && hrefobj) ? PyTuple_Pack(2, langobj, hrefobj) : NULL;
    Py_XDECREF(langobj);
    Py_XDECREF(hrefobj);
    if (pair == NULL) return -1;
    int r = append_capped(c, S_ALTERNATES, pair, c->str_xhtml_link);
    Py_DECREF(pair);
    return r < 0 ? -1 : 1;
}

/* The image being gathered in C goes to the Python gatherer (a child with attributes):
   its fields so far become the gatherer's, which reads the rest of the object. */
static int image_to_python(Core *c) {
    if (PyObject_SetAttr(c->gatherer, c->str_fields, c->img) < 0) return -1;
    Py_CLEAR(c->img);
    c->img_python = 1;
    return 0;
}

static int finish_entry(Core *c) {
    PyObject *entry = c->v;
    c->v = new_entry();
    if (c->v == NULL) { c->v = entry; return -1; }
    int rc = -1;
    if (c->entry == E_ITEM) {
        PyObject *r = PyObject_CallOneArg(c->finish_item, entry);
        if (r == NULL) goto done;
        Py_DECREF(r);
    }
    PyObject *loc = PyList_GET_ITEM(entry, S_LOC);
    int truth = PyObject_IsTrue(loc);
    if (truth < 0) goto done;
    if (!truth) {
        rc = problem(c, "missing-loc",
                     PyUnicode_FromString("an entry without a location was skipped"));
        goto done;
    }
    if (c->entry == E_SITEMAP) {
        PyObject *pair = PyTuple_Pack(2, loc, PyList_GET_ITEM(entry, S_LASTMOD));
        if (pair == NULL) goto done;
        rc = PyList_Append(c->pending, pair);
        Py_DECREF(pair);
    } else {
        rc = PyList_Append(c->pending, entry);
    }
    if (rc == 0 && PyList_GET_SIZE(c->pending) >= c->batch) {
        PyObject *r = PyObject_CallNoArgs(c->sink_drain);
        if (r == NULL) rc = -1;
        else Py_DECREF(r);
    }
done:
    Py_DECREF(entry);
    return rc;
}

static int set_slot(Core *c, int index, PyObject *text) {  /* steals text */
    PyObject *entry = c->v;
    if (PyList_GET_ITEM(entry, index) == Py_None) {
        PyList_SetItem(entry, index, text);
        return 0;
    }
    if (index == S_LOC) {  /* several <loc>: each an entry of its own */
        if (finish_entry(c) < 0) { Py_DECREF(text); return -1; }
        PyList_SetItem(c->v, S_LOC, text);
        return 0;
    }
    Py_DECREF(text);
    return 0;
}

static int root(Core *c, NameEntry *e) {
    PyObject *fmt = PyObject_CallOneArg(c->root_of, name_str(e));  /* raises StopParsing */
    if (fmt == NULL) return -1;
    const char *f = PyUnicode_AsUTF8(fmt);
    if (f == NULL) { Py_DECREF(fmt); return -1; }
    c->format_set = 1;
    c->feed = strcmp(f, "rss") == 0 || strcmp(f, "atom") == 0;
    c->entries_mask = c->feed ? (1 << E_ITEM) : ((1 << E_URL) | (1 << E_SITEMAP));
    Py_DECREF(fmt);
    return 0;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts) {
    Core *c = (Core *)ud;
    if (c->error) return;
    c->events++;
    if (c->mode == 0) return;
    NameEntry *e = names_get(&c->names, name);
    if (e == NULL) { core_fail(c); return; }
    int nattrs = 0, xmlns = 0, href = 0;
    for (; atts[nattrs]; nattrs += 2) {
        const char *key = atts[nattrs];
        if (names_get(&c->names, key) == NULL) { core_fail(c); return; }
        if (strncmp(key, "xmlns", 5) == 0) xmlns = 1;
        else if (strcmp(key, "href") == 0) href = 1;
    }
    c->root_started = 1;
    Py_ssize_t depth = c->depth + 1;
    if (depth > c->depth_cap) {
        limit(c, "limit-nesting",
              PyUnicode_FromFormat("elements nested more than %zd deep", c->depth_cap));
        return;
    }
    c->depth = depth;
    if (c->field) return;  /* inside a field, markup is swallowed and only its text kept */
    PyObject *attrs = NULL;
    if (xmlns) {
        attrs = attrs_dict(c, atts);
        if (attrs == NULL) goto fail;
        PyObject *r = PyObject_CallFunction(c->declare, "On", attrs, depth);
        if (r == NULL) goto fail;
        int opened = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (opened < 0) goto fail;
        if (opened) c->scoped = 1;
        c->names.gen++;  /* the prefixes may have changed: classify again */
    }
    int kind = kind_of(c, e);
    if (kind == -100) goto fail;
    text_clear(c);
    if (c->entry) {
        if (c->ext) {
            if (nattrs && c->ext == X_IMAGE && c->img != NULL && image_to_python(c) < 0) goto fail;
            if (nattrs) {
                if (attrs == NULL && (attrs = attrs_dict(c, atts)) == NULL) goto fail;
                PyObject *r = PyObject_CallFunction(c->child_attrs, "iOOO", c->ext, name_str(e),
                                                    attrs, c->v);
                if (r == NULL) goto fail;
                Py_DECREF(r);
            }
        } else if (kind >= F_LOC) {
            if (kind <= F_TITLE) {
                if (kind == F_LINK && href) {
                    if (attrs == NULL && (attrs = attrs_dict(c, atts)) == NULL) goto fail;
                    PyObject *r = PyObject_CallFunctionObjArgs(c->atom_link, c->v, attrs, NULL);
                    if (r == NULL) goto fail;
                    Py_DECREF(r);
                    kind = -1;  /* swallow its content */
                }
                c->field = kind;
                c->field_name = e->bytes;
            } else if (kind == X_XHTML) {
                int done = alternate_fast(c, atts);
                if (done < 0) goto fail;
                if (!done) {
                    if (attrs == NULL && (attrs = attrs_dict(c, atts)) == NULL) goto fail;
                    PyObject *r = PyObject_CallFunctionObjArgs(c->alternate, c->v, attrs, NULL);
                    if (r == NULL) goto fail;
                    Py_DECREF(r);
                }
            } else if (kind <= X_PAGEMAP) {
                c->ext = kind;
                c->ext_name = e->bytes;
                if (kind == X_IMAGE) {  /* gathered in C until something unusual comes */
                    Py_XSETREF(c->img, PyDict_New());
                    if (c->img == NULL) goto fail;
                    c->img_python = 0;
                }
            } else if (kind == X_MOBILE) {
                PyObject *r = PyObject_CallOneArg(c->set_mobile, c->v);
                if (r == NULL) goto fail;
                Py_DECREF(r);
            }
        }
    } else if (kind > 0 && kind < 31 && (c->entries_mask & (1 << kind))) {
        c->entry = kind;
        c->entry_name = e->bytes;
    } else if (!c->format_set) {
        if (root(c, e) < 0) goto fail;
    } else if (kind == F_LASTMOD && c->feed) {
        c->field = F_FEED_DATE;
        c->field_name = e->bytes;
    }
    Py_XDECREF(attrs);
    return;
fail:
    Py_XDECREF(attrs);
    core_fail(c);
}

/* The Python gatherer's child_end (the object was handed to it at this very event). */
static int end_element_python_child(Core *c, NameEntry *e) {
    if (text_to_pieces(c) < 0) return -1;
    PyObject *r = PyObject_CallFunction(c->child_end, "iO", c->ext, name_str(e));
    if (r == NULL || pieces_clear(c) < 0) { Py_XDECREF(r); return -1; }
    Py_DECREF(r);
    text_clear(c);
    return 0;
}

static int end_element(Core *c, NameEntry *e) {
    c->depth--;
    if (c->depth == 0 && !c->root_ended) {  /* ElementMachine.root_end */
        c->root_ended = 1;
        c->root_end_line = (unsigned long)capi->GetErrorLineNumber(c->parser);
        c->root_end_col = (unsigned long)capi->GetErrorColumnNumber(c->parser);
    }
    int field = c->field;
    if (field) {
        if (e->bytes != c->field_name) return 0;
        c->field = OTHER;
        if (field > 0) {
            PyObject *text = text_value(c);
            if (text == NULL || set_slot(c, field - F_LOC, text) < 0) return -1;
        } else if (field == F_FEED_DATE) {
            PyObject *text = text_value(c);
            if (text == NULL) return -1;
            if (PyUnicode_GET_LENGTH(text)) {
                PyObject *r = PyObject_CallOneArg(c->sink_feed_date, text);
                if (r == NULL) { Py_DECREF(text); return -1; }
                Py_DECREF(r);
            }
            Py_DECREF(text);
        }
    } else if (c->ext == X_IMAGE && c->img != NULL) {
        if (e->bytes != c->ext_name) {  /* ExtensionGatherer.child_end, for an image */
            PyObject *local = e->local;
            if (local == NULL) {
                if (image_to_python(c) < 0) return -1;
                return end_element_python_child(c, e);
            }
            const char *l = PyUnicode_AsUTF8(local);
            if (l == NULL) return -1;
            if (!strcmp(l, "price") || !strcmp(l, "id") || !strcmp(l, "tag") ||
                !strcmp(l, "keywords")) {
                if (image_to_python(c) < 0) return -1;
                return end_element_python_child(c, e);
            }
            PyObject *text = text_value(c);
            if (text == NULL) return -1;
            int r = PyUnicode_GET_LENGTH(text) ? set_default(c->img, local, text) : 0;
            Py_DECREF(text);
            if (r < 0) return -1;
        } else {  /* ExtensionGatherer.close */
            c->ext = OTHER;
            PyObject *fields = c->img;
            c->img = NULL;
            int r = append_capped(c, S_IMAGES, fields, c->str_image_image);
            Py_DECREF(fields);
            if (r < 0) return -1;
        }
    } else if (c->ext) {
        if (e->bytes != c->ext_name) {
            if (text_to_pieces(c) < 0) return -1;
            PyObject *r = PyObject_CallFunction(c->child_end, "iO", c->ext, name_str(e));
            if (r == NULL || pieces_clear(c) < 0) { Py_XDECREF(r); return -1; }
            Py_DECREF(r);
        } else {
            int kind = c->ext;
            c->ext = OTHER;
            PyObject *r = PyObject_CallFunction(c->ext_close, "iO", kind, c->v);
            if (r == NULL) return -1;
            Py_DECREF(r);
        }
    } else if (c->entry && e->bytes == c->entry_name) {
        if (PyList_GET_ITEM(c->v, S_LOC) == Py_None) {
            PyObject *text = text_value(c);  /* the location as bare text */
            if (text == NULL) return -1;
            if (PyUnicode_GET_LENGTH(text)) PyList_SetItem(c->v, S_LOC, text);
            else Py_DECREF(text);
        }
        if (finish_entry(c) < 0) return -1;
        c->entry = OTHER;
    }
    text_clear(c);
    return 0;
}

static void XMLCALL on_end(void *ud, const XML_Char *name) {
    Core *c = (Core *)ud;
    if (c->error) return;
    c->events++;
    if (c->mode == 0) return;
    NameEntry *e = names_get(&c->names, name);
    if (e == NULL) { core_fail(c); return; }
    Py_ssize_t depth = c->depth;
    if (end_element(c, e) < 0) { core_fail(c); return; }
    if (c->scoped) {  /* a nested namespace declaration is open: report the end */
        PyObject *r = PyObject_CallFunction(c->close_scope, "n", depth);
        if (r == NULL) { core_fail(c); return; }
        int none_open = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (none_open < 0) { core_fail(c); return; }
        if (none_open) c->scoped = 0;
        c->names.gen++;
    }
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset) {
    Core *c = (Core *)ud;
    (void)name; (void)sysid; (void)pubid;
    if (c->error) return;
    if (has_internal_subset) {  /* entities may be declared: the reference reads this body */
        c->handover = 1;
        c->error = 1;
    }
}

/* -- feeding: fixed-offset bounds (parse/bounds.py, BoundedExpat.parse) ------------------ */

/* The position (expat's rules) after p[0:n], from the position before it. */
static void count_position(Core *c, const unsigned char *p, Py_ssize_t n) {
    if (n == 0) return;
    Py_ssize_t lf, cr;
    count_two(p, n, '\n', '\r', &lf, &cr);
    if (lf | cr) {
        Py_ssize_t crlf = c->prev_cr && p[0] == '\n';  /* a CRLF cut between two slices */
        if (cr)
            for (Py_ssize_t i = 0; i + 1 < n; i++) crlf += (p[i] == '\r') & (p[i + 1] == '\n');
        c->line += (unsigned long long)(lf + cr - crlf);
        Py_ssize_t last = n - 1;
        while (p[last] != '\n' && p[last] != '\r') last--;
        c->col = (unsigned long long)utf8_chars((const char *)p + last + 1, n - last - 1);
    } else {
        c->col += (unsigned long long)utf8_chars((const char *)p, n);
    }
    c->prev_cr = p[n - 1] == '\r';
}

static int measure(Core *c) {
    if (c->names.count != c->names_seen) {
        c->names_seen = c->names.count;
        if (c->names.count > c->max_names || c->names.chars > c->max_name_chars) {
            limit(c, "limit-names", PyUnicode_FromFormat(
                "more than %zd distinct element and attribute names (or more than their "
                "characters' budget) in one document", c->max_names));
            return -1;
        }
    }
    unsigned long long line = (unsigned long long)capi->GetErrorLineNumber(c->parser) - 1;
    unsigned long long col = (unsigned long long)capi->GetErrorColumnNumber(c->parser);
    if (line < c->grid_line || (line == c->grid_line && col < c->grid_col)) {
        limit(c, "limit-token", PyUnicode_FromFormat(
            "a tag, comment or declaration longer than %lld bytes (from line %llu, column %llu)",
            c->max_token, line + 1, col));
        return -1;
    }
    c->grid_line = c->line;
    c->grid_col = c->col;
    return 0;
}

static int expat_error(Core *c) {
    int code = (int)capi->GetErrorCode(c->parser);
    unsigned long line = (unsigned long)capi->GetErrorLineNumber(c->parser);
    unsigned long column = (unsigned long)capi->GetErrorColumnNumber(c->parser);
    PyObject *err = PyObject_CallFunction(ExpatError, "s", capi->ErrorString(code));
    if (err == NULL) return -1;
    PyObject *v;
    if ((v = PyLong_FromLong(code)) == NULL || PyObject_SetAttrString(err, "code", v) < 0) goto bad;
    Py_DECREF(v);
    if ((v = PyLong_FromUnsignedLong(line)) == NULL || PyObject_SetAttrString(err, "lineno", v) < 0)
        goto bad;
    Py_DECREF(v);
    if ((v = PyLong_FromUnsignedLong(column)) == NULL ||
        PyObject_SetAttrString(err, "offset", v) < 0)
        goto bad;
    Py_DECREF(v);
    PyErr_SetObject(ExpatError, err);
    Py_DECREF(err);
    return -1;
bad:
    Py_XDECREF(v);
    Py_DECREF(err);
    return -1;
}

static int after_parse(Core *c, int status) {
    if (c->handover) {
        PyErr_SetNone(NeedsReference);
        return -1;
    }
    if (c->error) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "core failed");
        return -1;
    }
    if (status == XML_STATUS_ERROR) return expat_error(c);
    return 0;
}

static int feed(Core *c, const char *p, Py_ssize_t n) {
    while (n > 0) {
        long long room = c->grid - c->fed;
        Py_ssize_t take = n < room ? n : (Py_ssize_t)room;
        if (!c->root_started) {  /* a DOCTYPE's '[' ends the slice: see the module doc */
            const char *bracket = memchr(p, '[', (size_t)take);
            if (bracket) take = bracket - p + 1;
        }
        count_position(c, (const unsigned char *)p, take);
        int status = capi->Parse(c->parser, p, (int)take, 0);
        c->fed += take;
        p += take;
        n -= take;
        if (after_parse(c, status) < 0) return -1;
        if (c->fed == c->grid) {
            if (measure(c) < 0) return -1;
            c->grid += c->max_token;
        }
    }
    return 0;
}

/* -- the type -------------------------------------------------------------------------------- */

static int core_traverse(Core *c, visitproc visit, void *arg) {
    Py_VISIT(c->sink_problem); Py_VISIT(c->sink_drain); Py_VISIT(c->sink_feed_date);
    Py_VISIT(c->pending); Py_VISIT(c->classify); Py_VISIT(c->declare); Py_VISIT(c->close_scope);
    Py_VISIT(c->limit); Py_VISIT(c->child_attrs); Py_VISIT(c->alternate); Py_VISIT(c->child_end);
    Py_VISIT(c->ext_close); Py_VISIT(c->pieces); Py_VISIT(c->root_of); Py_VISIT(c->atom_link);
    Py_VISIT(c->set_mobile); Py_VISIT(c->finish_item); Py_VISIT(c->v);
    Py_VISIT(c->gatherer); Py_VISIT(c->locals); Py_VISIT(c->over_cap); Py_VISIT(c->img);
    return 0;
}

static int core_clear(Core *c) {
    Py_CLEAR(c->sink_problem); Py_CLEAR(c->sink_drain); Py_CLEAR(c->sink_feed_date);
    Py_CLEAR(c->pending); Py_CLEAR(c->classify); Py_CLEAR(c->declare); Py_CLEAR(c->close_scope);
    Py_CLEAR(c->limit); Py_CLEAR(c->child_attrs); Py_CLEAR(c->alternate); Py_CLEAR(c->child_end);
    Py_CLEAR(c->ext_close); Py_CLEAR(c->pieces); Py_CLEAR(c->root_of); Py_CLEAR(c->atom_link);
    Py_CLEAR(c->set_mobile); Py_CLEAR(c->finish_item); Py_CLEAR(c->v);
    Py_CLEAR(c->gatherer); Py_CLEAR(c->locals); Py_CLEAR(c->over_cap); Py_CLEAR(c->img);
    return 0;
}

static void core_dealloc(Core *c) {
    PyObject_GC_UnTrack(c);
    if (c->parser) capi->ParserFree(c->parser);
    core_clear(c);
    Py_XDECREF(c->overflow);
    Py_XDECREF(c->empty);
    Py_XDECREF(c->str_fields); Py_XDECREF(c->str_loc); Py_XDECREF(c->str_image_image);
    Py_XDECREF(c->str_xhtml_link);
    PyMem_Free(c->text);
    names_free(&c->names);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static int get_method(PyObject *obj, const char *name, PyObject **out) {
    if (obj == Py_None) { *out = NULL; return 0; }
    *out = PyObject_GetAttrString(obj, name);
    return *out ? 0 : -1;
}

static int core_init(Core *c, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"sink", "names", "gatherer", "textbuf", "bounded", "helpers",
                         "max_text", "max_token", "depth_cap", "max_names", "max_name_chars",
                         "mode", NULL};
    PyObject *sink, *names, *gatherer, *textbuf, *bounded, *helpers;
    Py_ssize_t max_text = 8192, depth_cap = 100, max_names = 2000, max_name_chars = 65536;
    long long max_token = 65536;
    int mode = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOO|nLnnni", kw, &sink, &names, &gatherer,
                                     &textbuf, &bounded, &helpers, &max_text, &max_token,
                                     &depth_cap, &max_names, &max_name_chars, &mode))
        return -1;
    if (c->parser != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Core() initialised twice");
        return -1;
    }
    if (max_token < 1) { PyErr_SetString(PyExc_ValueError, "max_token < 1"); return -1; }
    c->mode = mode;
    c->max_text = max_text;
    c->max_token = max_token;
    c->depth_cap = depth_cap;
    c->max_names = max_names;
    c->max_name_chars = max_name_chars;
    c->grid = max_token;
    if (get_method(sink, "problem", &c->sink_problem) < 0 ||
        get_method(sink, "drain", &c->sink_drain) < 0 ||
        get_method(sink, "feed_date", &c->sink_feed_date) < 0 ||
        get_method(sink, "pending", &c->pending) < 0 ||
        get_method(names, "classify", &c->classify) < 0 ||
        get_method(names, "declare", &c->declare) < 0 ||
        get_method(names, "close", &c->close_scope) < 0 ||
        get_method(bounded, "limit", &c->limit) < 0 ||
        get_method(gatherer, "child_attrs", &c->child_attrs) < 0 ||
        get_method(gatherer, "alternate", &c->alternate) < 0 ||
        get_method(gatherer, "child_end", &c->child_end) < 0 ||
        get_method(gatherer, "close", &c->ext_close) < 0 ||
        get_method(textbuf, "pieces", &c->pieces) < 0 ||
        get_method(helpers, "root_of", &c->root_of) < 0 ||
        get_method(helpers, "atom_link", &c->atom_link) < 0 ||
        get_method(helpers, "set_mobile", &c->set_mobile) < 0 ||
        get_method(helpers, "finish_item", &c->finish_item) < 0 ||
        get_method(names, "locals", &c->locals) < 0 ||
        get_method(gatherer, "over_cap", &c->over_cap) < 0)
        return -1;
    if (gatherer != Py_None) {
        Py_INCREF(gatherer);
        c->gatherer = gatherer;
        PyObject *cap = PyObject_GetAttrString(gatherer, "cap");
        if (cap == NULL) return -1;
        c->ext_cap = PyLong_AsSsize_t(cap);
        Py_DECREF(cap);
        if (c->ext_cap == -1 && PyErr_Occurred()) return -1;
    }
    if (!(c->str_fields = PyUnicode_InternFromString("_fields")) ||
        !(c->str_loc = PyUnicode_InternFromString("loc")) ||
        !(c->str_image_image = PyUnicode_InternFromString("image:image")) ||
        !(c->str_xhtml_link = PyUnicode_InternFromString("xhtml:link")))
        return -1;
    c->batch = 256;
    if (sink != Py_None) {
        PyObject *batch = PyObject_GetAttrString(sink, "batch");
        if (batch == NULL) return -1;
        c->batch = PyLong_AsSsize_t(batch);
        Py_DECREF(batch);
        if (c->batch == -1 && PyErr_Occurred()) return -1;
    }
    if (mode != 0 && (c->pending == NULL || !PyList_Check(c->pending) || c->pieces == NULL ||
                      !PyList_Check(c->pieces))) {
        PyErr_SetString(PyExc_TypeError, "sink.pending and textbuf.pieces must be lists");
        return -1;
    }
    if ((c->v = new_entry()) == NULL) return -1;
    if ((c->empty = PyUnicode_New(0, 127)) == NULL) return -1;
    if ((c->overflow = PyUnicode_New(max_text + 1, 127)) == NULL) return -1;
    memset(PyUnicode_DATA(c->overflow), 'x', (size_t)max_text + 1);
    c->text_cap = 256;
    if ((c->text = PyMem_Malloc((size_t)c->text_cap)) == NULL) { PyErr_NoMemory(); return -1; }
    if (names_init(&c->names) < 0) return -1;
    c->parser = capi->ParserCreate_MM("utf-8", NULL, NULL);
    if (c->parser == NULL) { PyErr_NoMemory(); return -1; }
    if (capi->SetHashSalt != NULL) capi->SetHashSalt(c->parser, hash_salt);
    /* expat >= 2.6 (CPython 3.12.3+): reparse deferral off, as BoundedExpat does, so when
       a token completes never follows the chunking. The capsule member after SetHashSalt
       (where present: size says) is SetReparseDeferralEnabled; NULL for an older expat. */
    if ((size_t)capi->size >= DEFERRAL_AT + sizeof(void *)) {
        XML_Bool (*set_deferral)(XML_Parser, XML_Bool);
        memcpy((void *)&set_deferral, (const char *)capi + DEFERRAL_AT, sizeof(set_deferral));
        if (set_deferral != NULL) set_deferral(c->parser, 0);
    }
    capi->SetUserData(c->parser, c);
    capi->SetElementHandler(c->parser, on_start, on_end);
    capi->SetCharacterDataHandler(c->parser, on_chars);
    capi->SetStartDoctypeDeclHandler(c->parser, on_doctype);
    return 0;
}

static PyObject *core_parse(Core *c, PyObject *arg) {
    Py_buffer view;
    if (c->error) {
        PyErr_SetString(PyExc_RuntimeError, "the core stopped already");
        return NULL;
    }
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    int r = feed(c, view.buf, view.len);
    PyBuffer_Release(&view);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *core_finish(Core *c, PyObject *Py_UNUSED(ignored)) {
    if (c->error) {
        PyErr_SetString(PyExc_RuntimeError, "the core stopped already");
        return NULL;
    }
    int status = capi->Parse(c->parser, "", 0, 1);
    if (after_parse(c, status) < 0) return NULL;
    Py_RETURN_NONE;
}

/* ElementMachine.flush_open_entry */
static PyObject *core_flush_open_entry(Core *c, PyObject *Py_UNUSED(ignored)) {
    PyObject *v = c->v;
    if (c->entry != OTHER) {
        int keep = 0;
        int slots[3] = {S_LOC, S_LINK, S_GUID};
        for (int i = 0; i < 3 && !keep; i++) {
            keep = PyObject_IsTrue(PyList_GET_ITEM(v, slots[i]));
            if (keep < 0) return NULL;
        }
        if (keep) {
            if (c->ext && problem(c, "extension-cut", PyUnicode_FromString(
                    "an extension object cut by the break dropped")) < 0)
                return NULL;
            if (finish_entry(c) < 0) return NULL;
        }
    }
    c->entry = OTHER;
    Py_CLEAR(c->img);
    Py_RETURN_NONE;
}

static PyObject *core_get_root_started(Core *c, void *Py_UNUSED(closure)) {
    return PyBool_FromLong(c->root_started);
}
static PyObject *core_get_root_end(Core *c, void *Py_UNUSED(closure)) {
    if (!c->root_ended) Py_RETURN_NONE;
    return Py_BuildValue("(kk)", c->root_end_line, c->root_end_col);
}
static PyObject *core_get_root_closed(Core *c, void *Py_UNUSED(closure)) {
    return PyBool_FromLong(c->root_started && c->depth == 0);
}
static PyObject *core_get_events(Core *c, void *Py_UNUSED(closure)) {
    return PyLong_FromLongLong(c->events);
}
static PyObject *core_get_names(Core *c, void *Py_UNUSED(closure)) {
    return PyLong_FromSsize_t(c->names.count);
}

static PyMethodDef core_methods[] = {
    {"parse", (PyCFunction)core_parse, METH_O, "Hand bytes to expat (grid-measured bounds)."},
    {"finish", (PyCFunction)core_finish, METH_NOARGS, "End of input."},
    {"flush_open_entry", (PyCFunction)core_flush_open_entry, METH_NOARGS,
     "After a break: keep the entry in progress if a location of it was complete."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef core_getset[] = {
    {"root_started", (getter)core_get_root_started, NULL, "The root element has started.", NULL},
    {"root_closed", (getter)core_get_root_closed, NULL, "The root element has ended.", NULL},
    {"root_end", (getter)core_get_root_end, NULL, "(line, column) of the root's end tag, or None.", NULL},
    {"events", (getter)core_get_events, NULL, "Element events seen.", NULL},
    {"names", (getter)core_get_names, NULL, "Distinct names seen.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_expatcore.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The XML reader's expat and element machine, in C.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)core_init,
    .tp_dealloc = (destructor)core_dealloc,
    .tp_traverse = (traverseproc)core_traverse,
    .tp_clear = (inquiry)core_clear,
    .tp_methods = core_methods,
    .tp_getset = core_getset,
};

/* ======================================================================================
   Field fast paths: normal-form URLs, lastmod, changefreq, priority.
   ====================================================================================== */

/* Characters yarl keeps as they are in a path (and, with '?', in a query); '/' has a class
   of its own (a dot segment starts after it). */
static unsigned char PATH_OK[256], QUERY_OK[256];
enum { C_PLAIN = 1, C_SLASH = 2 };

static void tables_init(void) {
    const char *extra = "-._~!$&'()*+,;=:@";
    for (int b = 0; b < 256; b++) {
        int ok = (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') ||
                 (b && strchr(extra, b) != NULL);
        PATH_OK[b] = (unsigned char)(b == '/' ? C_SLASH : ok ? C_PLAIN : 0);
        QUERY_OK[b] = (unsigned char)(b == '/' ? C_SLASH : (ok || b == '?') ? C_PLAIN : 0);
    }
}

static inline int upper_hex(unsigned char b) {
    return (b >= '0' && b <= '9') || (b >= 'A' && b <= 'F');
}

/* An escape yarl keeps as it is (normalize._PATH_PCT / _QUERY_PCT). */
static int kept_escape(const unsigned char *s, Py_ssize_t i, Py_ssize_t n, int query) {
    if (i + 2 >= n) return 0;
    unsigned char h = s[i + 1], l = s[i + 2];
    if (!upper_hex(h) || !upper_hex(l)) return 0;
    switch (h) {
    case '0': case '1': case '8': case '9': case 'A': case 'B': case 'C': case 'D': case 'E':
    case 'F':
        return 1;
    case '2':
        return query ? (l == '0' || l == '2' || l == '3' || l == '5' || l == '6' || l == 'B')
                     : (l == '0' || l == '2' || l == '3' || l == '5' || l == 'B' || l == 'F');
    case '3':
        return query ? (l >= 'B' && l <= 'E') : (l == 'C' || l == 'E' || l == 'F');
    case '5':
        return l >= 'B' && l <= 'E';
    case '6':
        return l == '0';
    case '7':
        return l == 'B' || l == 'C' || l == 'D' || l == 'F';
    default:
        return 0;
    }
}

static inline int label_first(unsigned char b) {
    return (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '_';
}
static inline int label_char(unsigned char b) { return label_first(b) || b == '-'; }

/* One host label (possessive, at most 63 characters); its end, or -1. */
static Py_ssize_t label_at(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) {
    if (i >= n || !label_first(s[i])) return -1;
    Py_ssize_t end = i + 1;
    while (end < n && end - i < 63 && label_char(s[end])) end++;
    return end;
}

/* normalize._FAST_RE.fullmatch(s) and "/." not in s, on the UTF-8 (ASCII) bytes. */
static int url_normal(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i;
    if (n >= 8 && memcmp(s, "https://", 8) == 0) i = 8;
    else if (n >= 7 && memcmp(s, "http://", 7) == 0) i = 7;
    else return 0;
    /* (?=[^/]{1,253}+/) */
    Py_ssize_t run = 0;
    while (i + run < n && s[i + run] != '/' && run < 253) run++;
    if (run == 0 || i + run >= n || s[i + run] != '/') return 0;
    /* (?:L\.)*+ L */
    Py_ssize_t p = i;
    for (;;) {
        Py_ssize_t q = label_at(s, p, n);
        if (q < 0 || q >= n || s[q] != '.') break;
        p = q + 1;
    }
    p = label_at(s, p, n);
    if (p < 0) return 0;
    /* the port: 1-9999 or 10000-59999, not 80 or 443, then '/' */
    if (p < n && s[p] == ':') {
        Py_ssize_t d = p + 1, k = 0;
        while (d + k < n && s[d + k] >= '0' && s[d + k] <= '9') k++;
        if (d + k >= n || s[d + k] != '/') return 0;
        if (!((k >= 1 && k <= 4 && s[d] >= '1') || (k == 5 && s[d] >= '1' && s[d] <= '5')))
            return 0;
        if ((k == 2 && memcmp(s + d, "80", 2) == 0) || (k == 3 && memcmp(s + d, "443", 3) == 0))
            return 0;
        p = d + k;
    }
    if (p >= n || s[p] != '/') return 0;
    /* the path */
    for (;;) {
        while (p < n && PATH_OK[s[p]] == C_PLAIN) p++;
        if (p == n) return 1;
        unsigned char b = s[p];
        if (b == '/') {
            if (p + 1 < n && s[p + 1] == '.') return 0;
            p++;
        } else if (b == '%' && kept_escape(s, p, n, 0)) {
            p += 3;
        } else {
            break;
        }
    }
    if (s[p] != '?' || p + 1 == n) return 0;
    p++;
    /* the query (not empty) */
    for (;;) {
        while (p < n && QUERY_OK[s[p]] == C_PLAIN) p++;
        if (p == n) return 1;
        unsigned char b = s[p];
        if (b == '/') {
            if (p + 1 < n && s[p + 1] == '.') return 0;
            p++;
        } else if (b == '%' && kept_escape(s, p, n, 1)) {
            p += 3;
        } else {
            return 0;
        }
    }
}

/* -- lastmod: the W3C forms real sitemaps write; anything else goes to parse_lastmod ------ */

static long long days_from_civil(int y, int m, int d) {  /* days since 1970-01-01 */
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(long long z, int *y, int *m, int *d) {
    z += 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long yy = yoe + era * 400;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yy + (*m <= 2));
}

static int digits(const unsigned char *s, int n) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int month_days(int y, int m) {
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
    return days[m - 1];
}

/* Microseconds since the epoch (UTC) for the forms below; 0 and *ok = 0 otherwise:
   YYYY-MM-DD | YYYY-MM-DD(T| )hh:mm[:ss[.f{1,6}]][Z|+hh:mm|-hh:mm] (no zone: UTC). */
static long long lastmod_us(const unsigned char *s, Py_ssize_t n, int *ok) {
    *ok = 0;
    if (n < 10 || s[4] != '-' || s[7] != '-') return 0;
    int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
    if (y < 2 || y > 9998 || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo)) return 0;
    long long days = days_from_civil(y, mo, d);
    if (n == 10) { *ok = 1; return days * 86400000000LL; }
    if (n < 16 || (s[10] != 'T' && s[10] != ' ') || s[13] != ':') return 0;
    int h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = 0, us = 0;
    if (h < 0 || h > 23 || mi < 0 || mi > 59) return 0;
    Py_ssize_t i = 16;
    if (i < n && s[i] == ':') {
        if (i + 3 > n || (sec = digits(s + i + 1, 2)) < 0 || sec > 59) return 0;
        i += 3;
        if (i < n && s[i] == '.') {
            Py_ssize_t k = 0;
            while (i + 1 + k < n && s[i + 1 + k] >= '0' && s[i + 1 + k] <= '9') k++;
            if (k < 1 || k > 6) return 0;
            us = digits(s + i + 1, (int)k);
            for (Py_ssize_t z = k; z < 6; z++) us *= 10;
            i += 1 + k;
        }
    }
    int offset = 0;
    if (i == n) {
        /* no zone: UTC */
    } else if (s[i] == 'Z' && i + 1 == n) {
        /* UTC */
    } else if ((s[i] == '+' || s[i] == '-') && i + 6 == n && s[i + 3] == ':') {
        int oh = digits(s + i + 1, 2), om = digits(s + i + 4, 2);
        if (oh < 0 || oh > 23 || om < 0 || om > 59) return 0;
        offset = (oh * 60 + om) * (s[i] == '+' ? 1 : -1);
    } else {
        return 0;
    }
    *ok = 1;
    return ((days * 86400LL + h * 3600LL + mi * 60LL + sec - offset * 60LL) * 1000000LL) + us;
}

static PyObject *datetime_utc(long long us_epoch) {
    long long days = us_epoch >= 0 ? us_epoch / 86400000000LL
                                   : -((-us_epoch + 86400000000LL - 1) / 86400000000LL);
    long long rest = us_epoch - days * 86400000000LL;
    int y, m, d;
    civil_from_days(days, &y, &m, &d);
    int us = (int)(rest % 1000000);
    long long secs = rest / 1000000;
    return PyDateTimeAPI->DateTime_FromDateAndTime(y, m, d, (int)(secs / 3600),
                                                   (int)(secs / 60 % 60), (int)(secs % 60), us,
                                                   PyDateTime_TimeZone_UTC,
                                                   PyDateTimeAPI->DateTimeType);
}

/* ======================================================================================
   drain(): _Emitter.drain in C.
   ====================================================================================== */

typedef struct {
    PyObject_HEAD
    PyObject *emitter, *pending, *base, *build, *dates, *problem, *fatal, *location, *sitemap;
    PyObject *record, *in_location, *fast_match, *parse_lastmod, *isoformat, *freqs, *prios;
    PyObject *parse_changefreq, *parse_priority;
    PyObject *str_urls, *str_out, *empty_tuple;
    PyObject *record_type, *verdict, *audit, *source;
    Py_ssize_t offsets[17];
    PyObject *image_type, *alternate_type, *ext_url, *image_at, *build_image, *str_loc;
    Py_ssize_t image_offsets[5], alternate_offsets[2];
    int strict, flags, revisits, native_build;
    Py_ssize_t max_length, cap;
    double now_ts;
    PyObject *freq_words[7];
} Drainer;

static const char *FREQ_WORDS[7] = {"always", "hourly", "daily", "weekly", "monthly", "yearly",
                                    "never"};
static const double FREQ_RANK[7] = {6.0 / 6, 5.0 / 6, 4.0 / 6, 3.0 / 6, 2.0 / 6, 1.0 / 6, 0.0};
static const double REVISIT[7] = {3600.0, 3600.0, 86400.0, 7 * 86400.0, 30 * 86400.0,
                                  365 * 86400.0, 365 * 86400.0};
static const char *RECORD_SLOTS[17] = {
    "url", "lastmod", "changefreq", "priority", "score", "sitemap", "alternates", "images",
    "videos", "news", "revisit", "removed", "title", "mobile", "pagemaps", "robots", "source"};

static int freq_index(PyObject *s) {
    if (!PyUnicode_IS_ASCII(s)) return -1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    const char *p = (const char *)PyUnicode_DATA(s);
    for (int i = 0; i < 7; i++)
        if ((Py_ssize_t)strlen(FREQ_WORDS[i]) == n && memcmp(p, FREQ_WORDS[i], (size_t)n) == 0)
            return i;
    return -1;
}

/* "0.0".."1.0", "0", "1" (parse.parser._PRIORITIES): the value, or -1. */
static double priority_fast(PyObject *s) {
    if (!PyUnicode_IS_ASCII(s)) return -1.0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    const char *p = (const char *)PyUnicode_DATA(s);
    if (n == 1 && (p[0] == '0' || p[0] == '1')) return p[0] == '1' ? 1.0 : 0.0;
    if (n == 3 && p[1] == '.' && p[2] >= '0' && p[2] <= '9') {
        if (p[0] == '0') return (p[2] - '0') / 10.0;
        if (p[0] == '1' && p[2] == '0') return 1.0;
    }
    return -1.0;
}

#define DRAINER_OBJECTS(X)                                                                   \
    X(emitter) X(pending) X(base) X(build) X(dates) X(problem) X(fatal) X(location) X(sitemap) \
    X(record) X(in_location) X(fast_match) X(parse_lastmod) X(isoformat) X(freqs) X(prios)     \
    X(parse_changefreq) X(parse_priority) X(str_urls) X(str_out) X(empty_tuple)                 \
    X(record_type) X(verdict) X(audit) X(source) X(image_type) X(alternate_type) X(ext_url)    \
    X(image_at) X(build_image) X(str_loc)

static int drainer_traverse(Drainer *d, visitproc visit, void *arg) {
#define VISIT(name) Py_VISIT(d->name);
    DRAINER_OBJECTS(VISIT)
#undef VISIT
    return 0;
}

static int drainer_clear(Drainer *d) {
#define CLEAR(name) Py_CLEAR(d->name);
    DRAINER_OBJECTS(CLEAR)
#undef CLEAR
    for (int i = 0; i < 7; i++) Py_CLEAR(d->freq_words[i]);
    return 0;
}

static void drainer_dealloc(Drainer *d) {
    PyObject_GC_UnTrack(d);
    drainer_clear(d);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

static int attr(PyObject *obj, const char *name, PyObject **out) {
    *out = PyObject_GetAttrString(obj, name);
    return *out ? 0 : -1;
}

static const char *IMAGE_SLOTS[5] = {"loc", "title", "caption", "geo_location", "license"};
static const char *ALTERNATE_SLOTS[2] = {"hreflang", "url"};

/* The offsets of a slotted class's object slots, from their member descriptors. */
static int slot_offsets(PyObject *type, const char **names, int n, Py_ssize_t *offsets) {
    for (int i = 0; i < n; i++) {
        PyObject *desc = PyObject_GetAttrString(type, names[i]);
        if (desc == NULL) return -1;
        if (Py_TYPE(desc) != &PyMemberDescr_Type ||
            ((PyMemberDescrObject *)desc)->d_member->type != T_OBJECT_EX) {
            Py_DECREF(desc);
            PyErr_Format(PyExc_TypeError, "%s is not an object slot", names[i]);
            return -1;
        }
        offsets[i] = ((PyMemberDescrObject *)desc)->d_member->offset;
        Py_DECREF(desc);
        if (((PyTypeObject *)type)->tp_basicsize < offsets[i] + (Py_ssize_t)sizeof(PyObject *)) {
            PyErr_SetString(PyExc_TypeError, "unexpected record layout");
            return -1;
        }
    }
    return 0;
}

/* Drainer(emitter, funcs, flags, record=None): funcs holds the reference's functions
   (fast_url_match, parse_lastmod, parse_changefreq, parse_priority, in_location, _FREQS,
   _PRIORITIES); record is None (the emitter's build is called) or a tuple
   (UrlRecord, now_ts, verdict or None, revisits: bool, audit or None, source). */
static int drainer_init(Drainer *d, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"emitter", "funcs", "flags", "record", NULL};
    PyObject *emitter, *funcs, *record = Py_None;
    int flags;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOi|O", kw, &emitter, &funcs, &flags, &record))
        return -1;
    d->flags = flags;
    Py_INCREF(emitter);
    d->emitter = emitter;
    PyObject *strict = NULL, *max_length = NULL, *cap = NULL;
    if (attr(emitter, "pending", &d->pending) < 0 || attr(emitter, "base", &d->base) < 0 ||
        attr(emitter, "build", &d->build) < 0 || attr(emitter, "_dates", &d->dates) < 0 ||
        attr(emitter, "problem", &d->problem) < 0 || attr(emitter, "fatal", &d->fatal) < 0 ||
        attr(emitter, "_location", &d->location) < 0 ||
        attr(emitter, "_sitemap", &d->sitemap) < 0 || attr(emitter, "_record", &d->record) < 0 ||
        attr(funcs, "in_location", &d->in_location) < 0 ||
        attr(funcs, "fast_url_match", &d->fast_match) < 0 ||
        attr(funcs, "parse_lastmod", &d->parse_lastmod) < 0 ||
        attr(funcs, "isoformat", &d->isoformat) < 0 || attr(funcs, "freqs", &d->freqs) < 0 ||
        attr(funcs, "prios", &d->prios) < 0 ||
        attr(funcs, "parse_changefreq", &d->parse_changefreq) < 0 ||
        attr(funcs, "parse_priority", &d->parse_priority) < 0 ||
        attr(emitter, "strict", &strict) < 0 || attr(emitter, "max_url_length", &max_length) < 0 ||
        attr(emitter, "max_entries", &cap) < 0) {
        Py_XDECREF(strict); Py_XDECREF(max_length); Py_XDECREF(cap);
        return -1;
    }
    d->strict = PyObject_IsTrue(strict);
    d->max_length = PyLong_AsSsize_t(max_length);
    d->cap = PyLong_AsSsize_t(cap);
    Py_DECREF(strict); Py_DECREF(max_length); Py_DECREF(cap);
    if (PyErr_Occurred()) return -1;
    d->str_urls = PyUnicode_InternFromString("urls");
    d->str_out = PyUnicode_InternFromString("out");
    d->empty_tuple = PyTuple_New(0);
    if (!d->str_urls || !d->str_out || !d->empty_tuple) return -1;
    for (int i = 0; i < 7; i++)
        if ((d->freq_words[i] = PyUnicode_InternFromString(FREQ_WORDS[i])) == NULL) return -1;
    if (record != Py_None) {
        PyObject *type, *verdict, *audit, *source, *image, *alternate;
        int revisits;
        if (!PyArg_ParseTuple(record, "OdOpOOOO", &type, &d->now_ts, &verdict, &revisits, &audit,
                              &source, &image, &alternate))
            return -1;
        if (slot_offsets(image, IMAGE_SLOTS, 5, d->image_offsets) < 0 ||
            slot_offsets(alternate, ALTERNATE_SLOTS, 2, d->alternate_offsets) < 0 ||
            attr(emitter, "ext_url", &d->ext_url) < 0 || attr(funcs, "image_at", &d->image_at) < 0 ||
            attr(funcs, "build_image", &d->build_image) < 0 ||
            (d->str_loc = PyUnicode_InternFromString("loc")) == NULL)
            return -1;
        Py_INCREF(image); d->image_type = image;
        Py_INCREF(alternate); d->alternate_type = alternate;
        for (int i = 0; i < 17; i++) {  /* the slots' offsets, from their member descriptors */
            PyObject *desc = PyObject_GetAttrString(type, RECORD_SLOTS[i]);
            if (desc == NULL) return -1;
            if (Py_TYPE(desc) != &PyMemberDescr_Type) {
                Py_DECREF(desc);
                PyErr_Format(PyExc_TypeError, "%s is not a slot", RECORD_SLOTS[i]);
                return -1;
            }
            PyMemberDef *m = ((PyMemberDescrObject *)desc)->d_member;
            if (m->type != T_OBJECT_EX) {
                Py_DECREF(desc);
                PyErr_Format(PyExc_TypeError, "%s is not an object slot", RECORD_SLOTS[i]);
                return -1;
            }
            d->offsets[i] = m->offset;
            Py_DECREF(desc);
        }
        if (((PyTypeObject *)type)->tp_basicsize < d->offsets[16] + (Py_ssize_t)sizeof(PyObject *)) {
            PyErr_SetString(PyExc_TypeError, "unexpected record layout");
            return -1;
        }
        Py_INCREF(type); d->record_type = type;
        Py_INCREF(verdict); d->verdict = verdict;
        Py_INCREF(audit); d->audit = audit;
        Py_INCREF(source); d->source = source;
        d->revisits = revisits;
        d->native_build = 1;
    }
    return 0;
}

static double datetime_ts(PyObject *dt, int *ok) {  /* timestamp() of a UTC datetime */
    *ok = 0;
    if (!PyDateTime_Check(dt) || PyDateTime_DATE_GET_TZINFO(dt) != PyDateTime_TimeZone_UTC) {
        PyObject *r = PyObject_CallMethod(dt, "timestamp", NULL);
        if (r == NULL) return 0.0;
        double v = PyFloat_AsDouble(r);
        Py_DECREF(r);
        *ok = !(v == -1.0 && PyErr_Occurred());
        return v;
    }
    long long days = days_from_civil(PyDateTime_GET_YEAR(dt), PyDateTime_GET_MONTH(dt),
                                     PyDateTime_GET_DAY(dt));
    long long us = ((days * 86400LL + PyDateTime_DATE_GET_HOUR(dt) * 3600LL +
                     PyDateTime_DATE_GET_MINUTE(dt) * 60LL + PyDateTime_DATE_GET_SECOND(dt)) *
                    1000000LL) + PyDateTime_DATE_GET_MICROSECOND(dt);
    *ok = 1;
    return (double)us / 1e6;
}

/* make_scorer(now, verdict)'s score (records/scoring.py), same operations in the same order */
static int score_of(Drainer *d, PyObject *prio, int freq, PyObject *lastmod, double *out) {
    const double missing = 0.125;  /* 0.5 ** (90 / 30) */
    double fresh = missing;
    if (lastmod != Py_None) {
        int ok;
        double ts = datetime_ts(lastmod, &ok);
        if (!ok) return -1;
        double age = d->now_ts - ts;
        fresh = age <= 0.0 ? 1.0 : pow(0.5, age / (30.0 * 86400.0));
        if (d->verdict != Py_None && fresh > missing) {
            PyObject *u = PyObject_GetAttrString(d->verdict, "uniform");
            if (u == NULL) return -1;
            int uniform = PyObject_IsTrue(u);
            Py_DECREF(u);
            if (uniform < 0) return -1;
            if (uniform) fresh = missing;
        }
    }
    double p = prio == Py_None ? 0.6 * 0.5 : 0.6 * PyFloat_AS_DOUBLE(prio);
    double f = freq < 0 ? 0.25 * 0.5 : 0.25 * FREQ_RANK[freq];
    *out = p + f + 0.15 * fresh;
    return 0;
}

#define SLOT(obj, i) (*(PyObject **)((char *)(obj) + d->offsets[i]))

static PyObject *build_record(Drainer *d, PyObject *url, PyObject *lastmod, PyObject *freq,
                              int freq_i, PyObject *prio, PyObject *alternates, PyObject *images) {
    double score;
    if (score_of(d, prio, freq_i, lastmod, &score) < 0) return NULL;
    PyTypeObject *type = (PyTypeObject *)d->record_type;
    PyObject *rec = type->tp_alloc(type, 0);
    if (rec == NULL) return NULL;
    PyObject *robots = Py_None;
    if (d->audit != Py_None) {
        robots = PyObject_CallOneArg(d->audit, url);
        if (robots == NULL) { Py_DECREF(rec); return NULL; }
    } else {
        Py_INCREF(robots);
    }
    PyObject *revisit;
    if (d->revisits) revisit = PyFloat_FromDouble(freq_i < 0 ? 7 * 86400.0 : REVISIT[freq_i]);
    else { revisit = Py_None; Py_INCREF(revisit); }
    PyObject *scoreobj = PyFloat_FromDouble(score);
    if (revisit == NULL || scoreobj == NULL) {
        Py_XDECREF(revisit); Py_XDECREF(scoreobj); Py_DECREF(robots); Py_DECREF(rec);
        return NULL;
    }
    PyObject *values[17] = {url, lastmod, freq, prio, scoreobj, d->base, alternates,
                            images, d->empty_tuple, Py_None, revisit, Py_False, Py_None,
                            Py_False, d->empty_tuple, robots, d->source};
    for (int i = 0; i < 17; i++) {
        Py_INCREF(values[i]);
        SLOT(rec, i) = values[i];
    }
    Py_DECREF(scoreobj); Py_DECREF(revisit); Py_DECREF(robots);
    return rec;
}

/* A slotted record of ``type`` with these values (new references taken). */
static PyObject *slotted(PyObject *type, const Py_ssize_t *offsets, PyObject **values, int n) {
    PyObject *obj = ((PyTypeObject *)type)->tp_alloc((PyTypeObject *)type, 0);
    if (obj == NULL) return NULL;
    for (int i = 0; i < n; i++) {
        Py_INCREF(values[i]);
        *(PyObject **)((char *)obj + offsets[i]) = values[i];
    }
    return obj;
}

static int normal_url(Drainer *d, PyObject *s) {
    return PyUnicode_Check(s) && PyUnicode_IS_ASCII(s) && PyUnicode_GET_LENGTH(s) <= d->max_length &&
           url_normal(PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s));
}

/* _Emitter._alternates: [(hreflang, href), ...] -> (Alternate, ...) */
static PyObject *alternates_of(Drainer *d, PyObject *pairs) {
    PyObject *found = PyList_New(0);
    if (found == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pairs); i++) {
        PyObject *pair = PyList_GET_ITEM(pairs, i);
        PyObject *lang = PyTuple_GET_ITEM(pair, 0), *href = PyTuple_GET_ITEM(pair, 1), *url;
        if (normal_url(d, href)) {
            url = Py_NewRef(href);
        } else {
            url = PyObject_CallFunction(d->ext_url, "Os", href, "xhtml:link href");
            if (url == NULL) goto fail;
            if (url == Py_None) { Py_DECREF(url); continue; }
        }
        PyObject *values[2] = {lang, url};
        PyObject *alt = slotted(d->alternate_type, d->alternate_offsets, values, 2);
        Py_DECREF(url);
        if (alt == NULL || PyList_Append(found, alt) < 0) { Py_XDECREF(alt); goto fail; }
        Py_DECREF(alt);
    }
    PyObject *tuple = PyList_AsTuple(found);
    Py_DECREF(found);
    return tuple;
fail:
    Py_DECREF(found);
    return NULL;
}

/* extensions.human_text for the common text (ASCII, printable, no double space): the text
   stripped of spaces, or None; NULL (no exception) when the reference must decide. */
static PyObject *human_text_fast(PyObject *text) {
    if (text == NULL || text == Py_None) return Py_NewRef(Py_None);
    if (!PyUnicode_CheckExact(text) || !PyUnicode_IS_ASCII(text)) return NULL;
    const char *p = (const char *)PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (n == 0) return Py_NewRef(Py_None);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (p[i] < 0x20 || p[i] > 0x7e) return NULL;
        if (p[i] == ' ' && i + 1 < n && p[i + 1] == ' ') return NULL;
    }
    Py_ssize_t a = 0, b = n;
    while (a < b && p[a] == ' ') a++;
    while (b > a && p[b - 1] == ' ') b--;
    if (a == b) return Py_NewRef(Py_None);
    if (a == 0 && b == n) return Py_NewRef(text);
    return PyUnicode_Substring(text, a, b);
}

/* extensions.image_at(url, fields) when its texts take human_text's fast path; NULL with
   no exception set when the reference must build it. */
static PyObject *image_at_fast(Drainer *d, PyObject *url, PyObject *fields) {
    static const char *keys[3] = {"title", "caption", "geo_location"};
    PyObject *values[5] = {url, NULL, NULL, NULL, NULL};
    PyObject *image = NULL;
    int i;
    for (i = 0; i < 3; i++) {
        PyObject *raw = PyDict_GetItemString(fields, keys[i]);
        values[i + 1] = human_text_fast(raw);
        if (values[i + 1] == NULL) goto done;
    }
    values[4] = PyDict_GetItemString(fields, "license");
    if (values[4] == NULL) values[4] = Py_None;
    image = slotted(d->image_type, d->image_offsets, values, 5);
done:
    for (int k = 1; k < 4; k++) Py_XDECREF(values[k]);
    return image;
}

/* _Emitter._images: [fields, ...] -> (Image, ...) */
static PyObject *images_of(Drainer *d, PyObject *items) {
    PyObject *found = PyList_New(0);
    if (found == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *fields = PyList_GET_ITEM(items, i), *image;
        PyObject *loc = PyDict_GetItemWithError(fields, d->str_loc);
        if (loc == NULL && PyErr_Occurred()) goto fail;
        if (loc != NULL && normal_url(d, loc)) {
            if (PyDict_GET_SIZE(fields) == 1) {
                PyObject *values[5] = {loc, Py_None, Py_None, Py_None, Py_None};
                image = slotted(d->image_type, d->image_offsets, values, 5);
            } else {
                image = image_at_fast(d, loc, fields);
                if (image == NULL && !PyErr_Occurred())
                    image = PyObject_CallFunctionObjArgs(d->image_at, loc, fields, NULL);
            }
        } else {
            image = PyObject_CallFunctionObjArgs(d->build_image, fields, d->emitter, NULL);
        }
        if (image == NULL) goto fail;
        if (image != Py_None && PyList_Append(found, image) < 0) { Py_DECREF(image); goto fail; }
        Py_DECREF(image);
    }
    PyObject *tuple = PyList_AsTuple(found);
    Py_DECREF(found);
    return tuple;
fail:
    Py_DECREF(found);
    return NULL;
}

static int set_urls(Drainer *d, Py_ssize_t count) {
    PyObject *n = PyLong_FromSsize_t(count);
    if (n == NULL) return -1;
    int r = PyObject_SetAttr(d->emitter, d->str_urls, n);
    Py_DECREF(n);
    return r;
}

static int call_problem(Drainer *d, const char *code, PyObject *message) {
    if (message == NULL) return -1;
    PyObject *r = PyObject_CallFunction(d->problem, "sO", code, message);
    Py_DECREF(message);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

static PyObject *shorter(PyObject *s, Py_ssize_t n) {
    return PyUnicode_Substring(s, 0, n < PyUnicode_GET_LENGTH(s) ? n : PyUnicode_GET_LENGTH(s));
}

/* One page entry's fields: returns the record (new ref), Py_None to skip, NULL on error. */
static PyObject *page(Drainer *d, PyObject *entry, Py_ssize_t *count) {
    PyObject **f = ((PyListObject *)entry)->ob_item;
    PyObject *loc = f[S_LOC], *lastmod = f[S_LASTMOD], *changefreq = f[S_CHANGEFREQ];
    PyObject *priority = f[S_PRIORITY];
    PyObject *url = NULL, *modified = NULL, *freq = NULL, *prio = NULL, *result = NULL;
    int normal;
    if (d->flags & N_LOC) {
        normal = PyUnicode_IS_ASCII(loc) && PyUnicode_GET_LENGTH(loc) <= d->max_length &&
                 url_normal(PyUnicode_DATA(loc), PyUnicode_GET_LENGTH(loc));
    } else {
        PyObject *m = PyObject_CallOneArg(d->fast_match, loc);
        if (m == NULL) return NULL;
        normal = m != Py_None && PyUnicode_GET_LENGTH(loc) <= d->max_length;
        Py_DECREF(m);
        if (normal) {
            PyObject *dot = PyUnicode_FromString("/.");
            normal = dot && !PySequence_Contains(loc, dot);
            Py_XDECREF(dot);
        }
    }
    if (normal) {
        Py_INCREF(loc);
        url = loc;
    } else {
        url = PyObject_CallFunction(d->location, "Os", loc, "location");
        if (url == NULL) return NULL;
        if (url == Py_None) return url;
    }
    if (d->strict && d->base != Py_None) {
        PyObject *r = PyObject_CallFunctionObjArgs(d->in_location, url, d->base, NULL);
        if (r == NULL) goto done;
        int inside = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (inside < 0) goto done;
        if (!inside) {
            if (call_problem(d, "out-of-location", PyUnicode_FromFormat(
                    "%U is outside the sitemap's location", url)) < 0)
                goto done;
            Py_INCREF(Py_None);
            result = Py_None;
            goto done;
        }
    }
    if (*count == d->cap) {
        PyObject *exc = PyObject_CallFunction(d->fatal, "sN", "limit-urls", PyUnicode_FromFormat(
            "more than %zd entries; rest ignored", d->cap));
        if (exc != NULL) {
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
        }
        goto done;
    }
    (*count)++;
    if (lastmod != Py_None && PyUnicode_GET_LENGTH(lastmod) > 0) {
        modified = PyDict_GetItemWithError(d->dates, lastmod);
        if (modified != NULL) {
            Py_INCREF(modified);
        } else if (PyErr_Occurred()) {
            goto done;
        } else {
            int ok = 0;
            if (d->flags & N_DATE && PyUnicode_IS_ASCII(lastmod)) {
                long long us = lastmod_us(PyUnicode_DATA(lastmod), PyUnicode_GET_LENGTH(lastmod),
                                          &ok);
                if (ok) {
                    modified = datetime_utc(us);
                    if (modified == NULL) goto done;
                }
            }
            if (!ok) {
                modified = PyObject_CallOneArg(d->parse_lastmod, lastmod);
                if (modified == NULL) goto done;
            }
            if (PyDict_GET_SIZE(d->dates) < 4096 && PyDict_SetItem(d->dates, lastmod, modified) < 0)
                goto done;
        }
        if (modified == Py_None) {
            PyObject *cut = shorter(lastmod, 60);
            if (cut == NULL || call_problem(d, "bad-date", PyUnicode_FromFormat(
                    "date %R not understood", cut)) < 0) {
                Py_XDECREF(cut);
                goto done;
            }
            Py_DECREF(cut);
        }
    } else {
        modified = Py_None;
        Py_INCREF(modified);
    }
    int freq_i = -1;
    if (changefreq != Py_None && PyUnicode_GET_LENGTH(changefreq) > 0) {
        if (d->flags & N_FIELDS && (freq_i = freq_index(changefreq)) >= 0) {
            freq = d->freq_words[freq_i];
            Py_INCREF(freq);
        } else {
            freq = PyDict_GetItemWithError(d->freqs, changefreq);
            if (freq != NULL) Py_INCREF(freq);
            else if (PyErr_Occurred()) goto done;
            else if ((freq = PyObject_CallOneArg(d->parse_changefreq, changefreq)) == NULL)
                goto done;
            if (freq == Py_None) {
                PyObject *cut = shorter(changefreq, 40);
                if (cut == NULL || call_problem(d, "bad-changefreq", PyUnicode_FromFormat(
                        "changefreq %R ignored", cut)) < 0) {
                    Py_XDECREF(cut);
                    goto done;
                }
                Py_DECREF(cut);
            } else {
                freq_i = freq_index(freq);
            }
        }
    } else {
        freq = Py_None;
        Py_INCREF(freq);
    }
    if (priority != Py_None && PyUnicode_GET_LENGTH(priority) > 0) {
        double v = (d->flags & N_FIELDS) ? priority_fast(priority) : -1.0;
        if (v >= 0.0) {
            prio = PyFloat_FromDouble(v);
            if (prio == NULL) goto done;
        } else {
            prio = PyDict_GetItemWithError(d->prios, priority);
            if (prio != NULL) Py_INCREF(prio);
            else if (PyErr_Occurred()) goto done;
            else if ((prio = PyObject_CallOneArg(d->parse_priority, priority)) == NULL)
                goto done;
            if (prio == Py_None) {
                PyObject *cut = shorter(priority, 40);
                if (cut == NULL || call_problem(d, "bad-priority", PyUnicode_FromFormat(
                        "priority %R ignored", cut)) < 0) {
                    Py_XDECREF(cut);
                    goto done;
                }
                Py_DECREF(cut);
            }
        }
    } else {
        prio = Py_None;
        Py_INCREF(prio);
    }
    int plain = 1;
    for (int i = S_ALTERNATES; i <= S_EXTRA; i++) plain &= f[i] == Py_None;
    int native = d->native_build && (d->flags & N_RECORD);
    int simple = f[S_VIDEOS] == Py_None && f[S_NEWS] == Py_None && f[S_EXTRA] == Py_None;
    if (native && simple) {  /* plain, or only alternates and images: all in C */
        PyObject *alts = NULL, *imgs = NULL;
        alts = PyObject_IsTrue(f[S_ALTERNATES]) ? alternates_of(d, f[S_ALTERNATES])
                                                : Py_NewRef(d->empty_tuple);
        if (alts != NULL)
            imgs = PyObject_IsTrue(f[S_IMAGES]) ? images_of(d, f[S_IMAGES])
                                                : Py_NewRef(d->empty_tuple);
        if (imgs != NULL) result = build_record(d, url, modified, freq, freq_i, prio, alts, imgs);
        Py_XDECREF(alts);
        Py_XDECREF(imgs);
    } else if (!plain) {
        result = PyObject_CallFunctionObjArgs(d->record, url, modified, freq, prio, entry, NULL);
    } else {
        PyObject *args[10] = {url, modified, freq, prio, d->base, d->empty_tuple, d->empty_tuple,
                              d->empty_tuple, Py_None, Py_None};
        result = PyObject_Vectorcall(d->build, args, 10, NULL);
    }
done:
    Py_XDECREF(url); Py_XDECREF(modified); Py_XDECREF(freq); Py_XDECREF(prio);
    return result;
}

static PyObject *drainer_call(Drainer *d, PyObject *Py_UNUSED(ignored)) {
    PyObject *pending = d->pending;
    Py_ssize_t n = PyList_GET_SIZE(pending);
    if (n == 0) Py_RETURN_NONE;
    PyObject *out = PyObject_GetAttr(d->emitter, d->str_out);
    PyObject *urls = PyObject_GetAttr(d->emitter, d->str_urls);
    if (out == NULL || urls == NULL) { Py_XDECREF(out); Py_XDECREF(urls); return NULL; }
    Py_ssize_t count = PyLong_AsSsize_t(urls);
    Py_DECREF(urls);
    int failed = count == -1 && PyErr_Occurred();
    for (Py_ssize_t i = 0; !failed && i < PyList_GET_SIZE(pending); i++) {
        PyObject *entry = PyList_GET_ITEM(pending, i);
        Py_INCREF(entry);
        if (PyTuple_Check(entry)) {  /* a child sitemap */
            PyObject *r = NULL;
            if (set_urls(d, count) == 0) r = PyObject_Call(d->sitemap, entry, NULL);
            if (r == NULL) failed = 1;
            else {
                Py_DECREF(r);
                PyObject *u = PyObject_GetAttr(d->emitter, d->str_urls);
                count = u ? PyLong_AsSsize_t(u) : -1;
                Py_XDECREF(u);
                failed = count == -1 && PyErr_Occurred();
            }
        } else {
            PyObject *rec = page(d, entry, &count);
            if (rec == NULL) failed = 1;
            else {
                if (rec != Py_None && PyList_Append(out, rec) < 0) failed = 1;
                Py_DECREF(rec);
            }
        }
        Py_DECREF(entry);
    }
    /* finally: the count is stored and pending emptied, as the reference does */
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    if (set_urls(d, count) < 0 || PyList_SetSlice(pending, 0, PyList_GET_SIZE(pending), NULL) < 0) {
        Py_XDECREF(exc_type); Py_XDECREF(exc_value); Py_XDECREF(exc_tb);
        Py_DECREF(out);
        return NULL;
    }
    PyErr_Restore(exc_type, exc_value, exc_tb);
    Py_DECREF(out);
    if (failed) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef drainer_methods[] = {
    {"drain", (PyCFunction)drainer_call, METH_NOARGS, "Turn the pending entries into records."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DrainerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_expatcore.Drainer",
    .tp_basicsize = sizeof(Drainer),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "_Emitter.drain in C.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)drainer_init,
    .tp_dealloc = (destructor)drainer_dealloc,
    .tp_traverse = (traverseproc)drainer_traverse,
    .tp_clear = (inquiry)drainer_clear,
    .tp_methods = drainer_methods,
};

/* ======================================================================================
   UrlSet: discovery/dedupe.py's table in C (the same keys, so the same answers).
   ====================================================================================== */

typedef struct {
    PyObject_HEAD
    uint64_t *table;
    Py_ssize_t mask, limit, count;
} UrlSet;

static int urlset_init(UrlSet *u, PyObject *args, PyObject *kwds) {
    if (!PyArg_ParseTuple(args, "") || (kwds && PyDict_GET_SIZE(kwds))) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "UrlSet() takes no arguments");
        return -1;
    }
    PyMem_Free(u->table);
    u->mask = 1023;
    u->limit = 1024 * 3 / 4;
    u->count = 0;
    u->table = PyMem_Calloc(1024, sizeof(uint64_t));
    if (u->table == NULL) { PyErr_NoMemory(); return -1; }
    return 0;
}

static void urlset_dealloc(UrlSet *u) {
    PyMem_Free(u->table);
    Py_TYPE(u)->tp_free((PyObject *)u);
}

static int urlset_grow(UrlSet *u) {
    Py_ssize_t size = (u->mask + 1) * 2;
    uint64_t *table = PyMem_Calloc((size_t)size, sizeof(uint64_t));
    if (table == NULL) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i <= u->mask; i++) {
        uint64_t key = u->table[i];
        if (!key) continue;
        Py_ssize_t j = (Py_ssize_t)(key & (uint64_t)(size - 1));
        while (table[j]) j = (j + 1) & (size - 1);
        table[j] = key;
    }
    PyMem_Free(u->table);
    u->table = table;
    u->mask = size - 1;
    u->limit = size * 3 / 4;
    return 0;
}

/* (hash(url) & (2**64 - 1)) or 1, as dedupe.py keys it */
static int url_key(PyObject *url, uint64_t *key) {
    Py_hash_t h = PyObject_Hash(url);
    if (h == -1 && PyErr_Occurred()) return -1;
    *key = (uint64_t)h ? (uint64_t)h : 1;
    return 0;
}

static PyObject *urlset_add(UrlSet *u, PyObject *url) {
    uint64_t key;
    if (url_key(url, &key) < 0) return NULL;
    Py_ssize_t i = (Py_ssize_t)(key & (uint64_t)u->mask);
    for (;;) {
        uint64_t slot = u->table[i];
        if (slot == 0) break;
        if (slot == key) Py_RETURN_FALSE;
        i = (i + 1) & u->mask;
    }
    u->table[i] = key;
    if (++u->count > u->limit && urlset_grow(u) < 0) return NULL;
    Py_RETURN_TRUE;
}

static int urlset_contains(UrlSet *u, PyObject *url) {
    if (!PyUnicode_Check(url)) return 0;
    uint64_t key;
    if (url_key(url, &key) < 0) return -1;
    for (Py_ssize_t i = (Py_ssize_t)(key & (uint64_t)u->mask);; i = (i + 1) & u->mask) {
        if (u->table[i] == 0) return 0;
        if (u->table[i] == key) return 1;
    }
}

static Py_ssize_t urlset_len(UrlSet *u) { return u->count; }

static PyObject *urlset_nbytes(UrlSet *u, void *Py_UNUSED(closure)) {
    return PyLong_FromSsize_t((u->mask + 1) * (Py_ssize_t)sizeof(uint64_t));
}

static PyMethodDef urlset_methods[] = {
    {"add", (PyCFunction)urlset_add, METH_O, "Add a URL; True if it was new."},
    {NULL, NULL, 0, NULL},
};
static PyGetSetDef urlset_getset[] = {
    {"nbytes", (getter)urlset_nbytes, NULL, "Memory held by the table.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
static PySequenceMethods urlset_as_sequence = {
    .sq_length = (lenfunc)urlset_len,
    .sq_contains = (objobjproc)urlset_contains,
};
static PyTypeObject UrlSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_expatcore.UrlSet",
    .tp_basicsize = sizeof(UrlSet),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "discovery.dedupe.UrlSet in C.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)urlset_init,
    .tp_dealloc = (destructor)urlset_dealloc,
    .tp_methods = urlset_methods,
    .tp_getset = urlset_getset,
    .tp_as_sequence = &urlset_as_sequence,
};

/* ======================================================================================
   JSON Lines of plain records (delivery/writers.py's shape, byte for byte); a record the
   C writer does not know how to write is written by the reference (json_line).
   ====================================================================================== */

typedef struct { char *p; Py_ssize_t len, cap; } Buf;

static int buf_grow(Buf *b, Py_ssize_t more) {
    if (b->len + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    char *p = PyMem_Realloc(b->p, (size_t)cap);
    if (p == NULL) { PyErr_NoMemory(); return -1; }
    b->p = p;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const char *s, Py_ssize_t n) {
    if (buf_grow(b, n) < 0) return -1;
    memcpy(b->p + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}
#define PUT(b, lit) buf_put((b), (lit), (Py_ssize_t)sizeof(lit) - 1)

static int put_utf8(Buf *b, Py_UCS4 ch) {
    char tmp[4];
    int n;
    if (ch < 0x80) { tmp[0] = (char)ch; n = 1; }
    else if (ch < 0x800) { tmp[0] = (char)(0xC0 | (ch >> 6)); tmp[1] = (char)(0x80 | (ch & 0x3F)); n = 2; }
    else if (ch < 0x10000) {
        tmp[0] = (char)(0xE0 | (ch >> 12)); tmp[1] = (char)(0x80 | ((ch >> 6) & 0x3F));
        tmp[2] = (char)(0x80 | (ch & 0x3F)); n = 3;
    } else {
        tmp[0] = (char)(0xF0 | (ch >> 18)); tmp[1] = (char)(0x80 | ((ch >> 12) & 0x3F));
        tmp[2] = (char)(0x80 | ((ch >> 6) & 0x3F)); tmp[3] = (char)(0x80 | (ch & 0x3F)); n = 4;
    }
    return buf_put(b, tmp, n);
}

/* json.dumps(s, ensure_ascii=False) with writers._escape_raw applied. */
static int put_json_str(Buf *b, PyObject *s) {
    if (PUT(b, "\"") < 0) return -1;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    if (kind == PyUnicode_1BYTE_KIND && PyUnicode_IS_ASCII(s)) {
        const char *p = data;
        Py_ssize_t start = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned char ch = (unsigned char)p[i];
            if (ch >= 0x20 && ch != '"' && ch != '\\' && ch != 0x7f) continue;
            if (buf_put(b, p + start, i - start) < 0) return -1;
            start = i + 1;
            char esc[8];
            const char *e = esc;
            int len = 2;
            switch (ch) {
            case '"': e = "\\\""; break;
            case '\\': e = "\\\\"; break;
            case '\n': e = "\\n"; break;
            case '\r': e = "\\r"; break;
            case '\t': e = "\\t"; break;
            case '\b': e = "\\b"; break;
            case '\f': e = "\\f"; break;
            default: snprintf(esc, sizeof esc, "\\u%04x", ch); len = 6; break;
            }
            if (buf_put(b, e, len) < 0) return -1;
        }
        if (buf_put(b, p + start, n - start) < 0) return -1;
        return PUT(b, "\"");
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        int r;
        switch (ch) {
        case '"': r = PUT(b, "\\\""); break;
        case '\\': r = PUT(b, "\\\\"); break;
        case '\n': r = PUT(b, "\\n"); break;
        case '\r': r = PUT(b, "\\r"); break;
        case '\t': r = PUT(b, "\\t"); break;
        case '\b': r = PUT(b, "\\b"); break;
        case '\f': r = PUT(b, "\\f"); break;
        default:
            if (ch < 0x20 || (ch >= 0x7f && ch <= 0x9f) || ch == 0x2028 || ch == 0x2029 ||
                (ch >= 0xD800 && ch <= 0xDFFF)) {
                char esc[8];
                snprintf(esc, sizeof esc, "\\u%04x", (unsigned)ch);
                r = buf_put(b, esc, 6);
            } else {
                r = put_utf8(b, ch);
            }
        }
        if (r < 0) return -1;
    }
    return PUT(b, "\"");
}

/* repr(k / 10**4) for 0 <= k <= 10**4: the decimal itself, trailing zeros trimmed. */
static int put_ten_thousandths(Buf *b, long k) {
    char out[8];
    int n = 0;
    out[n++] = (char)('0' + k / 10000);
    out[n++] = '.';
    long frac = k % 10000;
    char digits[4] = {(char)('0' + frac / 1000), (char)('0' + frac / 100 % 10),
                      (char)('0' + frac / 10 % 10), (char)('0' + frac % 10)};
    int last = 3;
    while (last > 0 && digits[last] == '0') last--;
    for (int i = 0; i <= last; i++) out[n++] = digits[i];
    return buf_put(b, out, n);
}

/* repr(round(x, 4)) for a score: exact decimal arithmetic where x*10**4 is not within
   a hair of a half (then the nearest integer is the correctly rounded one, and k/10**4
   is the double round() returns); dtoa, as round() itself does, otherwise. */
static int put_round4(Buf *b, double x) {
    if (x >= 0.0 && x <= 1.0 && !signbit(x)) {
        double y = x * 10000.0;
        double frac = y - floor(y);
        if (fabs(frac - 0.5) > 1e-6) return put_ten_thousandths(b, (long)nearbyint(y));
    }
    char *four = PyOS_double_to_string(x, 'f', 4, 0, NULL);
    if (four == NULL) return -1;
    double rounded = PyOS_string_to_double(four, NULL, NULL);
    PyMem_Free(four);
    if (rounded == -1.0 && PyErr_Occurred()) return -1;
    char *text = PyOS_double_to_string(rounded, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (text == NULL) return -1;
    int r = buf_put(b, text, (Py_ssize_t)strlen(text));
    PyMem_Free(text);
    return r;
}

static int put_repr_double(Buf *b, double v) {  /* repr(float) */
    if (v >= 0.0 && v <= 1.0 && !signbit(v)) {  /* the priorities sitemaps write: 0.0 .. 1.0 */
        double tenths = nearbyint(v * 10.0);
        if (tenths / 10.0 == v) return put_ten_thousandths(b, (long)tenths * 1000);
    }
    char *s = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (s == NULL) return -1;
    int r = buf_put(b, s, (Py_ssize_t)strlen(s));
    PyMem_Free(s);
    return r;
}

typedef struct {
    Py_ssize_t record[17], image[5], alternate[2];
    PyTypeObject *image_type, *alternate_type;
} Shapes;

#define AT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* Can the C writer write these extension tuples? (alternates and images of str fields) */
static int writable_ext(PyObject *alts, PyObject *imgs, const Shapes *sh) {
    if (!PyTuple_Check(alts) || !PyTuple_Check(imgs)) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(alts); i++) {
        PyObject *a = PyTuple_GET_ITEM(alts, i);
        if (Py_TYPE(a) != sh->alternate_type || !PyUnicode_CheckExact(AT(a, sh->alternate[0])) ||
            !PyUnicode_CheckExact(AT(a, sh->alternate[1])))
            return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(imgs); i++) {
        PyObject *img = PyTuple_GET_ITEM(imgs, i);
        if (Py_TYPE(img) != sh->image_type || !PyUnicode_CheckExact(AT(img, sh->image[0])))
            return 0;
        for (int k = 1; k < 5; k++) {
            PyObject *v = AT(img, sh->image[k]);
            if (v != Py_None && !(PyUnicode_CheckExact(v) || (PyTuple_Check(v) && !PyTuple_GET_SIZE(v))))
                return 0;
        }
    }
    return 1;
}

static int put_ext(Buf *b, PyObject *alts, PyObject *imgs, const Shapes *sh) {
    static const char *image_keys[5] = {"loc", "title", "caption", "geo_location", "license"};
    if (PyTuple_GET_SIZE(alts)) {
        if (PUT(b, ", \"alternates\": [") < 0) return -1;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(alts); i++) {
            PyObject *a = PyTuple_GET_ITEM(alts, i);
            if ((i && PUT(b, ", ") < 0) || PUT(b, "{\"hreflang\": ") < 0 ||
                put_json_str(b, AT(a, sh->alternate[0])) < 0 || PUT(b, ", \"url\": ") < 0 ||
                put_json_str(b, AT(a, sh->alternate[1])) < 0 || PUT(b, "}") < 0)
                return -1;
        }
        if (PUT(b, "]") < 0) return -1;
    }
    if (PyTuple_GET_SIZE(imgs)) {
        if (PUT(b, ", \"images\": [") < 0) return -1;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(imgs); i++) {
            PyObject *img = PyTuple_GET_ITEM(imgs, i);
            if ((i && PUT(b, ", ") < 0) || PUT(b, "{") < 0) return -1;
            int first = 1;
            for (int k = 0; k < 5; k++) {  /* _compact: None and () left out */
                PyObject *v = AT(img, sh->image[k]);
                if (!PyUnicode_Check(v)) continue;
                char key[24];
                snprintf(key, sizeof key, "%s\"%s\": ", first ? "" : ", ", image_keys[k]);
                first = 0;
                if (buf_put(b, key, (Py_ssize_t)strlen(key)) < 0 || put_json_str(b, v) < 0)
                    return -1;
            }
            if (PUT(b, "}") < 0) return -1;
        }
        if (PUT(b, "]") < 0) return -1;
    }
    return 0;
}

/* One record's line, or 0 when the reference must write it (nothing written then). */
static int put_record(Buf *b, PyObject *rec, const Shapes *sh) {
    const Py_ssize_t *off = sh->record;
#define F(i) (*(PyObject **)((char *)rec + off[i]))
    PyObject *url = F(0), *lastmod = F(1), *freq = F(2), *prio = F(3), *score = F(4);
    PyObject *sitemap = F(5), *revisit = F(10), *removed = F(11), *title = F(12);
    PyObject *mobile = F(13), *robots = F(15), *source = F(16);
    if (!(writable_ext(F(6), F(7), sh) && PyTuple_Check(F(8)) && PyTuple_GET_SIZE(F(8)) == 0 &&
          F(9) == Py_None && PyTuple_Check(F(14)) && PyTuple_GET_SIZE(F(14)) == 0))
        return 0;  /* videos, news, PageMaps: those nested shapes are the reference's */
    if (!PyUnicode_CheckExact(url) || !PyFloat_CheckExact(score) ||
        (prio != Py_None && !PyFloat_CheckExact(prio)) ||
        (revisit != Py_None && !PyFloat_CheckExact(revisit)))
        return 0;
    PyObject *texts[5] = {freq, sitemap, title, robots, source};
    for (int i = 0; i < 5; i++)
        if (texts[i] != Py_None && !PyUnicode_CheckExact(texts[i])) return 0;
    if ((removed != Py_True && removed != Py_False) || (mobile != Py_True && mobile != Py_False))
        return 0;
    double sc = PyFloat_AS_DOUBLE(score);
    double pr = prio == Py_None ? 0.0 : PyFloat_AS_DOUBLE(prio);
    double rv = revisit == Py_None ? 0.0 : PyFloat_AS_DOUBLE(revisit);
    if (!isfinite(sc) || !isfinite(pr) || !isfinite(rv) || fabs(rv) > 9e15) return 0;
    char date[40];
    if (lastmod != Py_None) {
        if (!PyDateTime_CheckExact(lastmod) ||
            PyDateTime_DATE_GET_TZINFO(lastmod) != PyDateTime_TimeZone_UTC)
            return 0;
        int us = PyDateTime_DATE_GET_MICROSECOND(lastmod);
        int n = snprintf(date, sizeof date, "%04d-%02d-%02dT%02d:%02d:%02d",
                         PyDateTime_GET_YEAR(lastmod), PyDateTime_GET_MONTH(lastmod),
                         PyDateTime_GET_DAY(lastmod), PyDateTime_DATE_GET_HOUR(lastmod),
                         PyDateTime_DATE_GET_MINUTE(lastmod), PyDateTime_DATE_GET_SECOND(lastmod));
        if (us) n += snprintf(date + n, sizeof date - (size_t)n, ".%06d", us);
        snprintf(date + n, sizeof date - (size_t)n, "Z");
    }
    Py_ssize_t mark = b->len;
    if (PUT(b, "{\"url\": ") < 0 || put_json_str(b, url) < 0 || PUT(b, ", \"lastmod\": ") < 0)
        goto fail;
    if (lastmod == Py_None ? PUT(b, "null") < 0
                           : (PUT(b, "\"") < 0 || buf_put(b, date, (Py_ssize_t)strlen(date)) < 0 ||
                              PUT(b, "\"") < 0))
        goto fail;
    if (PUT(b, ", \"changefreq\": ") < 0 ||
        (freq == Py_None ? PUT(b, "null") : put_json_str(b, freq)) < 0)
        goto fail;
    if (PUT(b, ", \"priority\": ") < 0 ||
        (prio == Py_None ? PUT(b, "null") : put_repr_double(b, pr)) < 0)
        goto fail;
    if (PUT(b, ", \"score\": ") < 0 || put_round4(b, sc) < 0) goto fail;
    if (PUT(b, ", \"sitemap\": ") < 0 ||
        (sitemap == Py_None ? PUT(b, "null") : put_json_str(b, sitemap)) < 0)
        goto fail;
    if (put_ext(b, F(6), F(7), sh) < 0) goto fail;
    if (title != Py_None && (PUT(b, ", \"title\": ") < 0 || put_json_str(b, title) < 0)) goto fail;
    if (mobile == Py_True && PUT(b, ", \"mobile\": true") < 0) goto fail;
    if (revisit != Py_None) {
        char num[32];
        /* round(revisit): an int, halves to even (the default rounding mode) */
        snprintf(num, sizeof num, ", \"revisit\": %lld", (long long)nearbyint(rv));
        if (buf_put(b, num, (Py_ssize_t)strlen(num)) < 0) goto fail;
    }
    if (removed == Py_True && PUT(b, ", \"removed\": true") < 0) goto fail;
    if (robots != Py_None && (PUT(b, ", \"robots\": ") < 0 || put_json_str(b, robots) < 0))
        goto fail;
    if (source != Py_None && (PUT(b, ", \"source\": ") < 0 || put_json_str(b, source) < 0))
        goto fail;
    if (PUT(b, "}\n") < 0) goto fail;
    return 1;
fail:
    b->len = mark;
    return -1;
#undef F
}

/* jsonl(records, UrlRecord, Image, Alternate, json_line) -> str: writers.jsonl_text's text. */
static PyObject *mod_jsonl(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *records, *type, *image, *alternate, *fallback;
    if (!PyArg_ParseTuple(args, "OO!O!O!O", &records, &PyType_Type, &type, &PyType_Type, &image,
                          &PyType_Type, &alternate, &fallback))
        return NULL;
    Shapes sh;
    if (slot_offsets(type, RECORD_SLOTS, 17, sh.record) < 0 ||
        slot_offsets(image, IMAGE_SLOTS, 5, sh.image) < 0 ||
        slot_offsets(alternate, ALTERNATE_SLOTS, 2, sh.alternate) < 0)
        return NULL;
    sh.image_type = (PyTypeObject *)image;
    sh.alternate_type = (PyTypeObject *)alternate;
    PyObject *seq = PySequence_Fast(records, "records must be a sequence");
    if (seq == NULL) return NULL;
    Buf b = {NULL, 0, 0};
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *rec = PySequence_Fast_GET_ITEM(seq, i);
        int done = Py_TYPE(rec) == (PyTypeObject *)type ? put_record(&b, rec, &sh) : 0;
        if (done < 0) goto fail;
        if (done == 0) {
            PyObject *line = PyObject_CallOneArg(fallback, rec);
            if (line == NULL) goto fail;
            Py_ssize_t size;
            const char *utf8 = PyUnicode_AsUTF8AndSize(line, &size);
            if (utf8 == NULL || buf_put(&b, utf8, size) < 0) { Py_DECREF(line); goto fail; }
            Py_DECREF(line);
        }
    }
    Py_DECREF(seq);
    PyObject *text = PyUnicode_DecodeUTF8(b.p ? b.p : "", b.len, "strict");
    PyMem_Free(b.p);
    return text;
fail:
    Py_DECREF(seq);
    PyMem_Free(b.p);
    return NULL;
}

/* ======================================================================================
   Text sitemaps: TextReader's line loop (parse/text.py) with its common line in C.
   ====================================================================================== */

static inline int re_space(unsigned char b) {  /* bytes regex \s */
    return b == ' ' || (b >= '\t' && b <= '\r');
}

/* text_lines(line, text_started, pending, batch, drain, data, start, end, started,
   max_line) -> started. For each match of text._LINE in data[start:end]: an ASCII line
   that, stripped, starts with http:// or https:// (any case) becomes a location entry
   here; any other line goes to ``line(raw)`` (the reference's TextReader._line). */
static PyObject *mod_text_lines(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *line_cb, *started_cb, *pending, *drain, *data;
    Py_ssize_t batch, start, end, max_line;
    int started;
    if (!PyArg_ParseTuple(args, "OOO!nOO!nnpn", &line_cb, &started_cb, &PyList_Type, &pending,
                          &batch, &drain, &PyBytes_Type, &data, &start, &end, &started,
                          &max_line))
        return NULL;
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(data);
    if (start < 0 || end > PyBytes_GET_SIZE(data) || start > end) {
        PyErr_SetString(PyExc_ValueError, "bad range");
        return NULL;
    }
    Py_ssize_t i = start;
    while (i < end) {
        while (i < end && re_space(p[i])) i++;  /* a match starts at a non-space byte */
        if (i >= end) break;
        Py_ssize_t j = i;
        while (j < end && p[j] != '\r' && p[j] != '\n') j++;
        const unsigned char *raw = p + i;
        Py_ssize_t n = j - i;
        i = j;
        int fast = n <= max_line * 4 && all_ascii((const char *)raw, n);
        Py_ssize_t a = 0, b = n;
        if (fast) {  /* strip(_SPACE) on ASCII: space, \t \n \r \f \v */
            while (a < b && re_space(raw[a])) a++;
            while (b > a && re_space(raw[b - 1])) b--;
            fast = (b - a >= 7 && strncasecmp((const char *)raw + a, "http://", 7) == 0) ||
                   (b - a >= 8 && strncasecmp((const char *)raw + a, "https://", 8) == 0);
        }
        if (!fast) {
            PyObject *bytes = PyBytes_FromStringAndSize((const char *)raw, n);
            PyObject *r = bytes ? PyObject_CallOneArg(line_cb, bytes) : NULL;
            Py_XDECREF(bytes);
            if (r == NULL) return NULL;
            Py_DECREF(r);
            /* the reference's _line may have started the text itself */
            continue;
        }
        if (!started) {
            started = 1;
            PyObject *r = PyObject_CallNoArgs(started_cb);
            if (r == NULL) return NULL;
            Py_DECREF(r);
        }
        PyObject *entry = new_entry();
        PyObject *text = entry ? ascii_str((const char *)raw + a, b - a) : NULL;
        if (text == NULL) { Py_XDECREF(entry); return NULL; }
        PyList_SetItem(entry, S_LOC, text);
        int rc = PyList_Append(pending, entry);
        Py_DECREF(entry);
        if (rc < 0) return NULL;
        if (PyList_GET_SIZE(pending) >= batch) {
            PyObject *r = PyObject_CallNoArgs(drain);
            if (r == NULL) return NULL;
            Py_DECREF(r);
        }
    }
    return PyBool_FromLong(started);
}

/* ======================================================================================
   Module functions: the fast paths alone (for differential tests) and the baselines.
   ====================================================================================== */

static PyObject *mod_url_normal(PyObject *m, PyObject *arg) {
    (void)m;
    if (!PyUnicode_Check(arg)) { PyErr_SetString(PyExc_TypeError, "str expected"); return NULL; }
    return PyBool_FromLong(PyUnicode_IS_ASCII(arg) &&
                           url_normal(PyUnicode_DATA(arg), PyUnicode_GET_LENGTH(arg)));
}

/* True when AmpFixer would hand ``data`` back unchanged with no CDATA section open: no
   CDATA section starts in it, and every '&' starts one of XML's five predefined entities. */
static PyObject *mod_amp_clean(PyObject *m, PyObject *arg) {
    (void)m;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const char *p = view.buf, *end = p + view.len;
    int clean = 1;
    for (const char *br = memchr(p, '[', (size_t)(end - p)); clean && br != NULL;
         br = memchr(br + 1, '[', (size_t)(end - br - 1))) {
        if (br - p >= 2 && br[-2] == '<' && br[-1] == '!') clean = 0;  /* maybe <![CDATA[ */
    }
    for (const char *amp = memchr(p, '&', (size_t)(end - p)); clean && amp != NULL;
         amp = memchr(amp + 1, '&', (size_t)(end - amp - 1))) {
        Py_ssize_t rest = end - amp - 1;
        const char *r = amp + 1;
        clean = (rest >= 4 && memcmp(r, "amp;", 4) == 0) || (rest >= 3 && memcmp(r, "lt;", 3) == 0) ||
                (rest >= 3 && memcmp(r, "gt;", 3) == 0) || (rest >= 5 && memcmp(r, "quot;", 5) == 0) ||
                (rest >= 5 && memcmp(r, "apos;", 5) == 0);
    }
    PyBuffer_Release(&view);
    return PyBool_FromLong(clean);
}

static PyObject *mod_lastmod(PyObject *m, PyObject *arg) {
    (void)m;
    if (!PyUnicode_Check(arg)) { PyErr_SetString(PyExc_TypeError, "str expected"); return NULL; }
    int ok = 0;
    long long us = 0;
    if (PyUnicode_IS_ASCII(arg)) us = lastmod_us(PyUnicode_DATA(arg), PyUnicode_GET_LENGTH(arg), &ok);
    if (!ok) Py_RETURN_NOTIMPLEMENTED;
    return datetime_utc(us);
}

/* Baselines: a parser with three C handlers that do nothing (or build each text as a str),
   fed the chunks of an iterable; returns the element events seen. */
typedef struct { long long events; int build; char buf[8192]; int len; long long strs; } Null;

static void XMLCALL null_start(void *ud, const XML_Char *n, const XML_Char **a) {
    (void)n; (void)a;
    Null *s = ud;
    s->events++;
    s->len = 0;
}
static void XMLCALL null_end(void *ud, const XML_Char *n) {
    (void)n;
    Null *s = ud;
    s->events++;
    if (s->build && s->len) {
        PyObject *u = PyUnicode_DecodeUTF8(s->buf, s->len, NULL);
        if (u == NULL) PyErr_Clear();
        Py_XDECREF(u);
        s->strs++;
    }
    s->len = 0;
}
static void XMLCALL null_chars(void *ud, const XML_Char *t, int len) {
    Null *s = ud;
    if (!s->build) return;
    if (s->len + len > (int)sizeof(s->buf)) len = (int)sizeof(s->buf) - s->len;
    memcpy(s->buf + s->len, t, (size_t)len);
    s->len += len;
}

static PyObject *mod_null_parse(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *chunks;
    int build = 0;
    if (!PyArg_ParseTuple(args, "O|p", &chunks, &build)) return NULL;
    Null state = {0, build, {0}, 0, 0};
    XML_Parser p = capi->ParserCreate_MM("utf-8", NULL, NULL);
    if (p == NULL) return PyErr_NoMemory();
    capi->SetUserData(p, &state);
    capi->SetElementHandler(p, null_start, null_end);
    capi->SetCharacterDataHandler(p, null_chars);
    PyObject *it = PyObject_GetIter(chunks), *chunk;
    if (it == NULL) { capi->ParserFree(p); return NULL; }
    int bad = 0;
    while (!bad && (chunk = PyIter_Next(it)) != NULL) {
        Py_buffer view;
        if (PyObject_GetBuffer(chunk, &view, PyBUF_SIMPLE) < 0) bad = 1;
        else {
            bad = capi->Parse(p, view.buf, (int)view.len, 0) == XML_STATUS_ERROR;
            PyBuffer_Release(&view);
        }
        Py_DECREF(chunk);
    }
    Py_DECREF(it);
    if (!bad && !PyErr_Occurred()) bad = capi->Parse(p, "", 0, 1) == XML_STATUS_ERROR;
    capi->ParserFree(p);
    if (PyErr_Occurred()) return NULL;
    return Py_BuildValue("LLi", state.events, state.strs, !bad);
}

static PyMethodDef module_methods[] = {
    {"url_normal", mod_url_normal, METH_O, "normalize._FAST_RE.fullmatch(s) and '/.' not in s"},
    {"lastmod", mod_lastmod, METH_O, "The C lastmod fast path: a UTC datetime or NotImplemented"},
    {"amp_clean", mod_amp_clean, METH_O, "AmpFixer would pass these bytes through unchanged"},
    {"null_parse", mod_null_parse, METH_VARARGS, "Baseline: expat with empty C handlers: (events, strs, well-formed)"},
    {"jsonl", mod_jsonl, METH_VARARGS, "JSON Lines of records (writers.jsonl_text's text)"},
    {"text_lines", mod_text_lines, METH_VARARGS, "TextReader's line loop, common lines in C"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_expatcore", "The compiled hot path of the sitemap parser (sitemap_reader.parse.native).",
    -1, module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__expatcore(void) {
    capi = PyCapsule_Import(PyExpat_CAPSULE_NAME, 0);
    if (capi == NULL) return NULL;
    if (strcmp(capi->magic, PyExpat_CAPI_MAGIC) != 0 ||
        (size_t)capi->size < offsetof(struct PyExpat_CAPI, SetHashSalt) + sizeof(void *)) {
        PyErr_SetString(PyExc_ImportError, "pyexpat's C API is not the one this was built for");
        return NULL;
    }
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL) return NULL;
    {   /* a random salt for expat's hash tables (pyexpat's comes from a private secret) */
        PyObject *os = PyImport_ImportModule("os");
        PyObject *bytes = os ? PyObject_CallMethod(os, "urandom", "i", (int)sizeof(hash_salt)) : NULL;
        Py_XDECREF(os);
        if (bytes == NULL) return NULL;
        memcpy(&hash_salt, PyBytes_AS_STRING(bytes), sizeof(hash_salt));
        Py_DECREF(bytes);
    }
    PyObject *pyexpat = PyImport_ImportModule("pyexpat");
    if (pyexpat == NULL) return NULL;
    ExpatError = PyObject_GetAttrString(pyexpat, "ExpatError");
    Py_DECREF(pyexpat);
    if (ExpatError == NULL) return NULL;
    tables_init();
    if (PyType_Ready(&CoreType) < 0 || PyType_Ready(&DrainerType) < 0 ||
        PyType_Ready(&UrlSetType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
    NeedsReference = PyErr_NewException("_expatcore.NeedsReference", NULL, NULL);
    if (NeedsReference == NULL) return NULL;
    Py_INCREF(NeedsReference);
    Py_INCREF(&CoreType);
    Py_INCREF(&DrainerType);
    Py_INCREF(&UrlSetType);
    if (PyModule_AddObject(m, "NeedsReference", NeedsReference) < 0 ||
        PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0 ||
        PyModule_AddObject(m, "Drainer", (PyObject *)&DrainerType) < 0 ||
        PyModule_AddObject(m, "UrlSet", (PyObject *)&UrlSetType) < 0 ||
        PyModule_AddIntConstant(m, "N_LOC", N_LOC) < 0 ||
        PyModule_AddIntConstant(m, "N_DATE", N_DATE) < 0 ||
        PyModule_AddIntConstant(m, "N_FIELDS", N_FIELDS) < 0 ||
        PyModule_AddIntConstant(m, "N_RECORD", N_RECORD) < 0 ||
        PyModule_AddIntConstant(m, "ENTRY_SIZE", ENTRY_SIZE) < 0 ||
        PyModule_AddIntConstant(m, "EXPAT_MAJOR", capi->MAJOR_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "EXPAT_MINOR", capi->MINOR_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
