/* The per-group ledger of cslint.runtime in C: the same class as
 * cslint/runtime/ledger.py's PyLedger (which documents the protocol), with
 * the same results, at a few hundred nanoseconds per collective.
 *
 * Per call: look through the runtime's own frames, key the call site by
 * (op, code object, instruction offset) of `depth` frames, find its index in
 * an open-addressing table (the Python resolver builds the CallPath on a
 * miss), fold (site digest, sequence number) into the window digest, decide
 * whether the call is checked, and write a record into a ring.  No Python
 * object is built on the hot path except the record's reference to the
 * payload's type.
 *
 * Code objects and op strings in the tables are held by strong references,
 * so their addresses cannot be reused by other objects while they are keys.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define MAX_DEPTH 4
#define ROLE_SYMMETRIC 0
#define ROLE_RECEIVES 1
#define ROLE_LAZY 2
#define ROLE_SENDS 3
#define STAMP_LEN 10
static const unsigned char STAMP_MAGIC[2] = {0xc5, 0x1b};

static inline uint64_t
mix64(uint64_t h, uint64_t x)
{
    return h ^ (x + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2));
}

static inline uint64_t
ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static inline int
frame_lasti(PyFrameObject *f)
{
#if PY_VERSION_HEX >= 0x030B0000
    return PyFrame_GetLasti(f);
#else
    return f->f_lasti;
#endif
}

/* Wall time of a record: the coarse clock (a few ms resolution, a third of the cost of
 * CLOCK_REALTIME) is enough for the watchdog's seconds; `order` gives the exact order. */
static inline double
wall_now(void)
{
    struct timespec ts;
#ifdef CLOCK_REALTIME_COARSE
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
#else
    clock_gettime(CLOCK_REALTIME, &ts);
#endif
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Order of records across the ledgers of this process. */
static int64_t record_order = 0;

typedef struct {
    PyObject *code; /* strong; NULL = empty slot */
    int skip;
} SkipEntry;

typedef struct {
    uint64_t hash;
    PyObject *op;                /* strong; NULL = empty slot */
    PyObject *code[MAX_DEPTH];   /* strong */
    int lasti[MAX_DEPTH];
    int n;
    int site;
} SiteEntry;

typedef struct {
    int site;
    int role;
    int64_t seq;
    int64_t order;
    double t;
    PyObject *ptype; /* strong; NULL = unused slot */
} Rec;

typedef struct {
    PyObject_HEAD
    PyObject *group;
    PyObject *resolver;
    PyObject *skip;
    PyObject *on_mismatch;
    int depth;
    int64_t carry_every;
    int64_t check_every;
    /* protocol state */
    int64_t seq;
    uint64_t digest;
    int64_t window;
    int64_t window_start;
    int owed;
    int last_site;
    int in_flight;
    /* look-through cache */
    SkipEntry *skips;
    Py_ssize_t skips_cap, skips_len;
    /* call sites */
    SiteEntry *sites;
    Py_ssize_t sites_cap, sites_len;
    PyObject *paths;     /* list: site index -> CallPath */
    uint64_t *digests;   /* site index -> CallPath.digest */
    int *successor;      /* site index -> site that followed it last time, -1 */
    Py_ssize_t info_cap;
    /* records */
    Rec *ring;
    Py_ssize_t ring_cap, ring_len, ring_next;
} Ledger;

typedef struct {
    PyObject_HEAD
    Ledger *ledger;
    PyObject *inner;
    PyObject *op;
    vectorcallfunc vectorcall;
} FastAllgather;

static PyTypeObject LedgerType;
static PyTypeObject FastAllgatherType;
static PyTypeObject FastUnstampedType;
static PyObject *FastAllgather_vectorcall(PyObject *, PyObject *const *, size_t, PyObject *);
static PyObject *FastUnstamped_vectorcall(PyObject *, PyObject *const *, size_t, PyObject *);

/* A collective that cannot carry a stamp (a reduction, a buffer collective), entered in a ledger:
 * when the ledger checks the call, `exchange(ledger)` compares the stamps first. */
typedef struct {
    PyObject_HEAD
    Ledger *ledger;
    PyObject *inner;
    PyObject *op;
    PyObject *exchange; /* callable(ledger) or None */
    vectorcallfunc vectorcall;
} FastUnstamped;

/* ------------------------------------------------------------ look-through */

static int
skips_grow(Ledger *L)
{
    Py_ssize_t cap = L->skips_cap ? L->skips_cap * 2 : 64;
    SkipEntry *tab = PyMem_Calloc((size_t)cap, sizeof(SkipEntry));
    if (tab == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < L->skips_cap; i++) {
        SkipEntry *e = &L->skips[i];
        if (e->code == NULL)
            continue;
        Py_ssize_t j = (Py_ssize_t)(ptr_hash(e->code) & (uint64_t)(cap - 1));
        while (tab[j].code != NULL)
            j = (j + 1) & (cap - 1);
        tab[j] = *e;
    }
    PyMem_Free(L->skips);
    L->skips = tab;
    L->skips_cap = cap;
    return 0;
}

/* 1: frames running `code` are the runtime's own; 0: user code; -1: error */
static int
skipped(Ledger *L, PyObject *code)
{
    if (L->skips_cap) {
        Py_ssize_t j = (Py_ssize_t)(ptr_hash(code) & (uint64_t)(L->skips_cap - 1));
        while (L->skips[j].code != NULL) {
            if (L->skips[j].code == code)
                return L->skips[j].skip;
            j = (j + 1) & (L->skips_cap - 1);
        }
    }
    PyObject *res = PyObject_CallOneArg(L->skip, code);
    if (res == NULL)
        return -1;
    int skip = PyObject_IsTrue(res);
    Py_DECREF(res);
    if (skip < 0)
        return -1;
    if ((L->skips_len + 1) * 2 > L->skips_cap && skips_grow(L) < 0)
        return -1;
    Py_ssize_t j = (Py_ssize_t)(ptr_hash(code) & (uint64_t)(L->skips_cap - 1));
    while (L->skips[j].code != NULL)
        j = (j + 1) & (L->skips_cap - 1);
    Py_INCREF(code);
    L->skips[j].code = code;
    L->skips[j].skip = skip;
    L->skips_len++;
    return skip;
}

/* ------------------------------------------------------------ call sites */

static int
site_equal(const SiteEntry *a, const SiteEntry *b)
{
    if (a->hash != b->hash || a->op != b->op || a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->code[i] != b->code[i] || a->lasti[i] != b->lasti[i])
            return 0;
    return 1;
}

static int
sites_grow(Ledger *L)
{
    Py_ssize_t cap = L->sites_cap ? L->sites_cap * 2 : 64;
    SiteEntry *tab = PyMem_Calloc((size_t)cap, sizeof(SiteEntry));
    if (tab == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < L->sites_cap; i++) {
        SiteEntry *e = &L->sites[i];
        if (e->op == NULL)
            continue;
        Py_ssize_t j = (Py_ssize_t)(e->hash & (uint64_t)(cap - 1));
        while (tab[j].op != NULL)
            j = (j + 1) & (cap - 1);
        tab[j] = *e;
    }
    PyMem_Free(L->sites);
    L->sites = tab;
    L->sites_cap = cap;
    return 0;
}

/* Register a new call site: resolve its CallPath, give it the next index. */
static int
site_add(Ledger *L, const SiteEntry *key, PyFrameObject *frame)
{
    PyObject *path = PyObject_CallFunctionObjArgs(L->resolver, frame ? (PyObject *)frame : Py_None, key->op, NULL);
    if (path == NULL)
        return -1;
    PyObject *digest_obj = PyObject_GetAttrString(path, "digest");
    if (digest_obj == NULL) {
        Py_DECREF(path);
        return -1;
    }
    uint64_t digest = (uint64_t)PyLong_AsUnsignedLongLongMask(digest_obj);
    Py_DECREF(digest_obj);
    if (PyErr_Occurred()) {
        Py_DECREF(path);
        return -1;
    }
    Py_ssize_t index = PyList_GET_SIZE(L->paths);
    if (index >= INT32_MAX) {
        Py_DECREF(path);
        PyErr_SetString(PyExc_OverflowError, "too many call sites");
        return -1;
    }
    if (index >= L->info_cap) {
        Py_ssize_t cap = L->info_cap ? L->info_cap * 2 : 32;
        uint64_t *d = PyMem_Realloc(L->digests, (size_t)cap * sizeof(uint64_t));
        if (d == NULL) {
            Py_DECREF(path);
            PyErr_NoMemory();
            return -1;
        }
        L->digests = d;
        int *s = PyMem_Realloc(L->successor, (size_t)cap * sizeof(int));
        if (s == NULL) {
            Py_DECREF(path);
            PyErr_NoMemory();
            return -1;
        }
        L->successor = s;
        L->info_cap = cap;
    }
    if ((L->sites_len + 1) * 2 > L->sites_cap && sites_grow(L) < 0) {
        Py_DECREF(path);
        return -1;
    }
    if (PyList_Append(L->paths, path) < 0) {
        Py_DECREF(path);
        return -1;
    }
    Py_DECREF(path);
    L->digests[index] = digest;
    L->successor[index] = -1;
    Py_ssize_t j = (Py_ssize_t)(key->hash & (uint64_t)(L->sites_cap - 1));
    while (L->sites[j].op != NULL)
        j = (j + 1) & (L->sites_cap - 1);
    SiteEntry *e = &L->sites[j];
    *e = *key;
    Py_INCREF(e->op);
    for (int i = 0; i < e->n; i++)
        Py_INCREF(e->code[i]);
    e->site = (int)index;
    L->sites_len++;
    return (int)index;
}

/* The site index of the collective `op` called from the innermost frame outside the runtime. */
static int
locate(Ledger *L, PyObject *op)
{
    PyFrameObject *frame = PyThreadState_GetFrame(PyThreadState_Get()); /* strong or NULL */
    while (frame != NULL) {
        PyCodeObject *code = PyFrame_GetCode(frame);
        int skip = skipped(L, (PyObject *)code);
        Py_DECREF(code);
        if (skip < 0) {
            Py_DECREF(frame);
            return -1;
        }
        if (!skip)
            break;
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    SiteEntry key;
    memset(&key, 0, sizeof(key));
    key.op = op;
    uint64_t h = 1469598103934665603ULL ^ ptr_hash(op);
    PyFrameObject *walk = frame;
    Py_XINCREF(walk);
    while (walk != NULL && key.n < L->depth) {
        PyCodeObject *code = PyFrame_GetCode(walk); /* strong until the end of this function */
        int lasti = frame_lasti(walk);
        key.code[key.n] = (PyObject *)code;
        key.lasti[key.n] = lasti;
        h = (h ^ ptr_hash(code)) * 1099511628211ULL;
        h = (h ^ (uint64_t)(uint32_t)lasti) * 1099511628211ULL;
        key.n++;
        PyFrameObject *back = PyFrame_GetBack(walk);
        Py_DECREF(walk);
        walk = back;
    }
    Py_XDECREF(walk);
    key.hash = h;
    int site = -1;
    if (L->sites_cap) {
        Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)(L->sites_cap - 1));
        while (L->sites[j].op != NULL) {
            if (site_equal(&L->sites[j], &key)) {
                site = L->sites[j].site;
                break;
            }
            j = (j + 1) & (L->sites_cap - 1);
        }
    }
    if (site < 0)
        site = site_add(L, &key, frame);
    for (int i = 0; i < key.n; i++)
        Py_DECREF(key.code[i]);
    Py_XDECREF(frame);
    return site;
}

/* ------------------------------------------------------------ protocol */

static int
enter_impl(Ledger *L, PyObject *op, PyObject *payload, int role, int *check)
{
    int site = locate(L, op);
    if (site < 0)
        return -1;
    int64_t seq = L->seq++;
    L->digest = mix64(mix64(L->digest, L->digests[site]), (uint64_t)seq);
    L->window++;
    int previous = L->last_site;
    int suspicious = previous < 0 || L->successor[previous] != site;
    if (previous >= 0)
        L->successor[previous] = site;
    L->last_site = site;
    int rooted = role == ROLE_RECEIVES || role == ROLE_SENDS;
    int64_t limit = role == ROLE_LAZY ? L->check_every : L->carry_every;
    *check = suspicious || L->window >= limit || (L->owed && !rooted);
    if (rooted)
        L->owed = 1;
    Rec *r = &L->ring[L->ring_next];
    PyObject *old = r->ptype;
    r->ptype = (PyObject *)Py_TYPE(payload ? payload : Py_None);
    Py_INCREF(r->ptype);
    r->site = site;
    r->role = role;
    r->seq = seq;
    r->t = wall_now();
    r->order = record_order++;
    L->ring_next = (L->ring_next + 1) % L->ring_cap;
    if (L->ring_len < L->ring_cap)
        L->ring_len++;
    L->in_flight = 1;
    Py_XDECREF(old);
    return 0;
}

static void
fill_stamp(const Ledger *L, unsigned char *out)
{
    out[0] = STAMP_MAGIC[0];
    out[1] = STAMP_MAGIC[1];
    uint64_t d = L->digest;
    for (int i = 0; i < 8; i++) {
        out[2 + i] = (unsigned char)(d & 0xff);
        d >>= 8;
    }
}

static PyObject *
make_stamp(const Ledger *L)
{
    PyObject *stamp = PyBytes_FromStringAndSize(NULL, STAMP_LEN);
    if (stamp != NULL)
        fill_stamp(L, (unsigned char *)PyBytes_AS_STRING(stamp));
    return stamp;
}

static inline int
is_stamped(PyObject *item)
{
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2)
        return 0;
    PyObject *head = PyTuple_GET_ITEM(item, 0);
    if (!PyBytes_CheckExact(head) || PyBytes_GET_SIZE(head) != STAMP_LEN)
        return 0;
    const char *s = PyBytes_AS_STRING(head);
    return (unsigned char)s[0] == STAMP_MAGIC[0] && (unsigned char)s[1] == STAMP_MAGIC[1];
}

static void
reset_window(Ledger *L)
{
    L->digest = 0;
    L->window = 0;
    L->window_start = L->seq;
    L->owed = 0;
}

/* Check received items and strip their stamps; new reference (or NULL with an exception). */
static PyObject *
unwrap_impl(Ledger *L, PyObject *received, int checked, int symmetric)
{
    PyObject *list;
    if (PyList_CheckExact(received)) {
        list = received;
        Py_INCREF(list);
    }
    else {
        list = PySequence_List(received);
        if (list == NULL)
            return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (checked) {
        unsigned char mine[STAMP_LEN];
        fill_stamp(L, mine);
        PyObject *out = PyList_New(n);
        if (out == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = PyList_GET_ITEM(list, i);
            if (!is_stamped(item) || memcmp(PyBytes_AS_STRING(PyTuple_GET_ITEM(item, 0)), mine, STAMP_LEN) != 0) {
                Py_DECREF(out);
                goto mismatch;
            }
            PyObject *payload = PyTuple_GET_ITEM(item, 1);
            Py_INCREF(payload);
            PyList_SET_ITEM(out, i, payload);
        }
        Py_DECREF(list);
        if (symmetric)
            reset_window(L);
        return out;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (is_stamped(PyList_GET_ITEM(list, i)))
            goto mismatch;
    return list;

mismatch:;
    PyObject *res = PyObject_CallFunctionObjArgs(L->on_mismatch, (PyObject *)L, list, checked ? Py_True : Py_False,
                                                 symmetric ? Py_True : Py_False, NULL);
    Py_DECREF(list);
    if (res != NULL && symmetric)
        reset_window(L);
    return res;
}

/* ------------------------------------------------------------ Ledger type */

static int
Ledger_traverse(Ledger *L, visitproc visit, void *arg)
{
    Py_VISIT(L->group);
    Py_VISIT(L->resolver);
    Py_VISIT(L->skip);
    Py_VISIT(L->on_mismatch);
    Py_VISIT(L->paths);
    for (Py_ssize_t i = 0; i < L->ring_cap; i++)
        Py_VISIT(L->ring[i].ptype);
    return 0;
}

static int
Ledger_clear(Ledger *L)
{
    Py_CLEAR(L->resolver);
    Py_CLEAR(L->skip);
    Py_CLEAR(L->on_mismatch);
    Py_CLEAR(L->paths);
    return 0;
}

static void
Ledger_dealloc(Ledger *L)
{
    PyObject_GC_UnTrack(L);
    Ledger_clear(L);
    Py_CLEAR(L->group);
    for (Py_ssize_t i = 0; i < L->skips_cap; i++)
        Py_XDECREF(L->skips[i].code);
    for (Py_ssize_t i = 0; i < L->sites_cap; i++) {
        SiteEntry *e = &L->sites[i];
        if (e->op == NULL)
            continue;
        Py_DECREF(e->op);
        for (int k = 0; k < e->n; k++)
            Py_DECREF(e->code[k]);
    }
    for (Py_ssize_t i = 0; i < L->ring_cap; i++)
        Py_XDECREF(L->ring[i].ptype);
    PyMem_Free(L->skips);
    PyMem_Free(L->sites);
    PyMem_Free(L->digests);
    PyMem_Free(L->successor);
    PyMem_Free(L->ring);
    Py_TYPE(L)->tp_free((PyObject *)L);
}

static int
Ledger_init(Ledger *L, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"group", "resolver", "skip", "on_mismatch", "depth", "history", "carry_every",
                             "check_every", NULL};
    PyObject *group, *resolver, *skip, *on_mismatch;
    int depth = 2;
    Py_ssize_t history = 64, carry_every = 16, check_every = 64;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UOOO|$innn", kwlist, &group, &resolver, &skip, &on_mismatch,
                                     &depth, &history, &carry_every, &check_every))
        return -1;
    if (L->ring != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Ledger is already initialised");
        return -1;
    }
    if (depth > MAX_DEPTH) {
        PyErr_Format(PyExc_ValueError, "depth %d: this ledger keys at most %d frames (use PyLedger)", depth,
                     MAX_DEPTH);
        return -1;
    }
    L->depth = depth < 1 ? 1 : depth;
    L->carry_every = carry_every < 1 ? 1 : carry_every;
    L->check_every = check_every < 1 ? 1 : check_every;
    L->ring_cap = history < 1 ? 1 : history;
    L->ring = PyMem_Calloc((size_t)L->ring_cap, sizeof(Rec));
    if (L->ring == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    L->paths = PyList_New(0);
    if (L->paths == NULL)
        return -1;
    Py_INCREF(group);
    L->group = group;
    Py_INCREF(resolver);
    L->resolver = resolver;
    Py_INCREF(skip);
    L->skip = skip;
    Py_INCREF(on_mismatch);
    L->on_mismatch = on_mismatch;
    L->last_site = -1;
    return 0;
}

static int
role_arg(PyObject *obj, int *role)
{
    long value = PyLong_AsLong(obj);
    if (value == -1 && PyErr_Occurred())
        return -1;
    if (value < ROLE_SYMMETRIC || value > ROLE_SENDS) {
        PyErr_Format(PyExc_ValueError, "unknown role %ld", value);
        return -1;
    }
    *role = (int)value;
    return 0;
}

static PyObject *
Ledger_enter(Ledger *L, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames)) {
        PyErr_SetString(PyExc_TypeError, "enter(op, payload=None, role=SYMMETRIC) takes positional arguments");
        return NULL;
    }
    if (nargs < 1 || nargs > 3 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "enter(op: str, payload=None, role=SYMMETRIC)");
        return NULL;
    }
    if (L->resolver == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the ledger was cleared");
        return NULL;
    }
    int role = ROLE_SYMMETRIC, check = 0;
    if (nargs == 3 && role_arg(args[2], &role) < 0)
        return NULL;
    if (enter_impl(L, args[0], nargs >= 2 ? args[1] : Py_None, role, &check) < 0)
        return NULL;
    return PyBool_FromLong(check);
}

static PyObject *
Ledger_stamp(Ledger *L, PyObject *Py_UNUSED(ignored))
{
    return make_stamp(L);
}

static PyObject *
Ledger_reset(Ledger *L, PyObject *Py_UNUSED(ignored))
{
    reset_window(L);
    Py_RETURN_NONE;
}

static PyObject *
Ledger_leave(Ledger *L, PyObject *Py_UNUSED(ignored))
{
    L->in_flight = 0;
    Py_RETURN_NONE;
}

static PyObject *
Ledger_unwrap(Ledger *L, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "unwrap(received, checked, symmetric)");
        return NULL;
    }
    int checked = PyObject_IsTrue(args[1]);
    int symmetric = PyObject_IsTrue(args[2]);
    if (checked < 0 || symmetric < 0)
        return NULL;
    return unwrap_impl(L, args[0], checked, symmetric);
}

static PyObject *
record_tuple(Ledger *L, const Rec *r)
{
    PyObject *path = PyList_GET_ITEM(L->paths, r->site);
    return Py_BuildValue("(OLOdiL)", path, (long long)r->seq, r->ptype, r->t, r->role, (long long)r->order);
}

static PyObject *
Ledger_current(Ledger *L, PyObject *Py_UNUSED(ignored))
{
    if (!L->in_flight || L->ring_len == 0)
        Py_RETURN_NONE;
    Py_ssize_t last = (L->ring_next - 1 + L->ring_cap) % L->ring_cap;
    return record_tuple(L, &L->ring[last]);
}

static PyObject *
Ledger_records(Ledger *L, PyObject *Py_UNUSED(ignored))
{
    PyObject *out = PyList_New(L->ring_len);
    if (out == NULL)
        return NULL;
    Py_ssize_t first = (L->ring_next - L->ring_len + L->ring_cap) % L->ring_cap;
    for (Py_ssize_t i = 0; i < L->ring_len; i++) {
        PyObject *rec = record_tuple(L, &L->ring[(first + i) % L->ring_cap]);
        if (rec == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, rec);
    }
    return out;
}

static PyObject *
Ledger_allgather(Ledger *L, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyCallable_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "allgather(inner: callable, op: str)");
        return NULL;
    }
    FastAllgather *fa = PyObject_GC_New(FastAllgather, &FastAllgatherType);
    if (fa == NULL)
        return NULL;
    Py_INCREF(L);
    fa->ledger = L;
    Py_INCREF(args[0]);
    fa->inner = args[0];
    Py_INCREF(args[1]);
    fa->op = args[1];
    fa->vectorcall = FastAllgather_vectorcall;
    PyObject_GC_Track(fa);
    return (PyObject *)fa;
}

static PyObject *
Ledger_unstamped(Ledger *L, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyCallable_Check(args[0]) || !PyUnicode_Check(args[1]) ||
        (args[2] != Py_None && !PyCallable_Check(args[2]))) {
        PyErr_SetString(PyExc_TypeError, "unstamped(inner: callable, op: str, exchange: callable | None)");
        return NULL;
    }
    FastUnstamped *fu = PyObject_GC_New(FastUnstamped, &FastUnstampedType);
    if (fu == NULL)
        return NULL;
    Py_INCREF(L);
    fu->ledger = L;
    Py_INCREF(args[0]);
    fu->inner = args[0];
    Py_INCREF(args[1]);
    fu->op = args[1];
    Py_INCREF(args[2]);
    fu->exchange = args[2];
    fu->vectorcall = FastUnstamped_vectorcall;
    PyObject_GC_Track(fu);
    return (PyObject *)fu;
}

static PyMethodDef Ledger_methods[] = {
    {"enter", (PyCFunction)(void (*)(void))Ledger_enter, METH_FASTCALL | METH_KEYWORDS,
     "enter(op, payload=None, role=SYMMETRIC) -> bool: record entry into a collective; whether it is checked"},
    {"stamp", (PyCFunction)Ledger_stamp, METH_NOARGS, "the stamp of the window up to the current collective"},
    {"reset", (PyCFunction)Ledger_reset, METH_NOARGS, "start a new window (every rank agreed)"},
    {"leave", (PyCFunction)Ledger_leave, METH_NOARGS, "the current collective returned"},
    {"unwrap", (PyCFunction)(void (*)(void))Ledger_unwrap, METH_FASTCALL,
     "unwrap(received, checked, symmetric) -> list: check received items and strip their stamps"},
    {"current", (PyCFunction)Ledger_current, METH_NOARGS, "the record of the collective in flight, or None"},
    {"records", (PyCFunction)Ledger_records, METH_NOARGS, "the last `history` records, oldest first"},
    {"allgather", (PyCFunction)(void (*)(void))Ledger_allgather, METH_FASTCALL,
     "allgather(inner, op): an object allgather with the whole check in C"},
    {"unstamped", (PyCFunction)(void (*)(void))Ledger_unstamped, METH_FASTCALL,
     "unstamped(inner, op, exchange): a collective that cannot carry a stamp; exchange(ledger) checks it"},
    {NULL, NULL, 0, NULL},
};

static PyObject *
Ledger_get_seq(Ledger *L, void *Py_UNUSED(c))
{
    return PyLong_FromLongLong(L->seq);
}

static PyObject *
Ledger_get_window(Ledger *L, void *Py_UNUSED(c))
{
    return PyLong_FromLongLong(L->window);
}

static PyObject *
Ledger_get_window_start(Ledger *L, void *Py_UNUSED(c))
{
    return PyLong_FromLongLong(L->window_start);
}

static PyObject *
Ledger_get_digest(Ledger *L, void *Py_UNUSED(c))
{
    return PyLong_FromUnsignedLongLong(L->digest);
}

static PyObject *
Ledger_get_owed(Ledger *L, void *Py_UNUSED(c))
{
    return PyBool_FromLong(L->owed);
}

static PyObject *
Ledger_get_group(Ledger *L, void *Py_UNUSED(c))
{
    Py_INCREF(L->group);
    return L->group;
}

static PyObject *
Ledger_get_history_limit(Ledger *L, void *Py_UNUSED(c))
{
    return PyLong_FromSsize_t(L->ring_cap);
}

static PyObject *
Ledger_get_depth(Ledger *L, void *Py_UNUSED(c))
{
    return PyLong_FromLong(L->depth);
}

static PyObject *
Ledger_get_carry_every(Ledger *L, void *Py_UNUSED(c))
{
    return PyLong_FromLongLong(L->carry_every);
}

static PyObject *
Ledger_get_check_every(Ledger *L, void *Py_UNUSED(c))
{
    return PyLong_FromLongLong(L->check_every);
}

static PyGetSetDef Ledger_getset[] = {
    {"group", (getter)Ledger_get_group, NULL, "group label", NULL},
    {"seq", (getter)Ledger_get_seq, NULL, "next sequence number", NULL},
    {"window", (getter)Ledger_get_window, NULL, "collectives since the window started", NULL},
    {"window_start", (getter)Ledger_get_window_start, NULL, "sequence number that started the window", NULL},
    {"digest", (getter)Ledger_get_digest, NULL, "window digest", NULL},
    {"owed", (getter)Ledger_get_owed, NULL, "a rooted collective waits for a check", NULL},
    {"history_limit", (getter)Ledger_get_history_limit, NULL, "records kept", NULL},
    {"depth", (getter)Ledger_get_depth, NULL, "frames in a call site key", NULL},
    {"carry_every", (getter)Ledger_get_carry_every, NULL, "object collectives between sampled checks", NULL},
    {"check_every", (getter)Ledger_get_check_every, NULL, "other collectives between sampled checks", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LedgerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cslint.runtime._ledger.Ledger",
    .tp_doc = "The per-group ledger of cslint.runtime (see cslint.runtime.ledger.PyLedger).",
    .tp_basicsize = sizeof(Ledger),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Ledger_init,
    .tp_dealloc = (destructor)Ledger_dealloc,
    .tp_traverse = (traverseproc)Ledger_traverse,
    .tp_clear = (inquiry)Ledger_clear,
    .tp_methods = Ledger_methods,
    .tp_getset = Ledger_getset,
};

/* ------------------------------------------------------------ FastAllgather */

static PyObject *
FastAllgather_vectorcall(PyObject *self_, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastAllgather *self = (FastAllgather *)self_;
    Ledger *L = self->ledger;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs == 0 && nkw == 1) {
        /* the object passed by keyword (comm.allgather(sendobj=x)): pass it on positionally */
        nargs = 1;
        nkw = 0;
        kwnames = NULL;
        nargsf = 1;
    }
    if (nargs < 1) {
        PyErr_Format(PyExc_TypeError, "%U() takes the object to gather", self->op);
        return NULL;
    }
    if (L->resolver == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the ledger was cleared");
        return NULL;
    }
    int check = 0;
    if (enter_impl(L, self->op, args[0], ROLE_SYMMETRIC, &check) < 0)
        return NULL;
    PyObject *received;
    if (check) {
        PyObject *stamp = make_stamp(L);
        if (stamp == NULL) {
            L->in_flight = 0;
            return NULL;
        }
        PyObject *wire = PyTuple_Pack(2, stamp, args[0]);
        Py_DECREF(stamp);
        if (wire == NULL) {
            L->in_flight = 0;
            return NULL;
        }
        PyObject *small[8];
        PyObject **buf = small;
        Py_ssize_t total = nargs + nkw;
        if (total > 8) {
            buf = PyMem_Malloc((size_t)total * sizeof(PyObject *));
            if (buf == NULL) {
                Py_DECREF(wire);
                L->in_flight = 0;
                return PyErr_NoMemory();
            }
        }
        buf[0] = wire;
        for (Py_ssize_t i = 1; i < total; i++)
            buf[i] = args[i];
        received = PyObject_Vectorcall(self->inner, buf, (size_t)nargs, kwnames);
        if (buf != small)
            PyMem_Free(buf);
        Py_DECREF(wire);
    }
    else {
        received = PyObject_Vectorcall(self->inner, args, nargsf, kwnames);
    }
    if (received == NULL) {
        L->in_flight = 0;
        return NULL;
    }
    PyObject *out = unwrap_impl(L, received, check, 1);
    Py_DECREF(received);
    L->in_flight = 0;
    return out;
}

static int
FastAllgather_traverse(FastAllgather *self, visitproc visit, void *arg)
{
    Py_VISIT(self->ledger);
    Py_VISIT(self->inner);
    Py_VISIT(self->op);
    return 0;
}

static int
FastAllgather_clear(FastAllgather *self)
{
    Py_CLEAR(self->ledger);
    Py_CLEAR(self->inner);
    Py_CLEAR(self->op);
    return 0;
}

static void
FastAllgather_dealloc(FastAllgather *self)
{
    PyObject_GC_UnTrack(self);
    FastAllgather_clear(self);
    PyObject_GC_Del(self);
}

static PyObject *
FastAllgather_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    FastAllgather *fa = (FastAllgather *)self;
    if (fa->ledger == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the allgather was cleared");
        return NULL;
    }
    return PyVectorcall_Call(self, args, kwargs);
}

static PyObject *
FastAllgather_get_name(FastAllgather *self, void *Py_UNUSED(c))
{
    Py_INCREF(self->op);
    return self->op;
}

static PyGetSetDef FastAllgather_getset[] = {
    {"__name__", (getter)FastAllgather_get_name, NULL, "the collective's name", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FastAllgatherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cslint.runtime._ledger.FastAllgather",
    .tp_doc = "An object allgather entered in a ledger (see Ledger.allgather).",
    .tp_basicsize = sizeof(FastAllgather),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(FastAllgather, vectorcall),
    .tp_call = FastAllgather_call,
    .tp_dealloc = (destructor)FastAllgather_dealloc,
    .tp_traverse = (traverseproc)FastAllgather_traverse,
    .tp_clear = (inquiry)FastAllgather_clear,
    .tp_getset = FastAllgather_getset,
};

/* ------------------------------------------------------------ FastUnstamped */

static PyObject *
FastUnstamped_vectorcall(PyObject *self_, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastUnstamped *self = (FastUnstamped *)self_;
    Ledger *L = self->ledger;
    if (L == NULL || L->resolver == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the ledger was cleared");
        return NULL;
    }
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int check = 0;
    if (enter_impl(L, self->op, nargs ? args[0] : Py_None, ROLE_LAZY, &check) < 0)
        return NULL;
    if (check && self->exchange != Py_None) {
        PyObject *res = PyObject_CallOneArg(self->exchange, (PyObject *)L);
        if (res == NULL) {
            L->in_flight = 0;
            return NULL;
        }
        Py_DECREF(res);
    }
    PyObject *out = PyObject_Vectorcall(self->inner, args, nargsf, kwnames);
    L->in_flight = 0;
    return out;
}

static int
FastUnstamped_traverse(FastUnstamped *self, visitproc visit, void *arg)
{
    Py_VISIT(self->ledger);
    Py_VISIT(self->inner);
    Py_VISIT(self->op);
    Py_VISIT(self->exchange);
    return 0;
}

static int
FastUnstamped_clear(FastUnstamped *self)
{
    Py_CLEAR(self->ledger);
    Py_CLEAR(self->inner);
    Py_CLEAR(self->op);
    Py_CLEAR(self->exchange);
    return 0;
}

static void
FastUnstamped_dealloc(FastUnstamped *self)
{
    PyObject_GC_UnTrack(self);
    FastUnstamped_clear(self);
    PyObject_GC_Del(self);
}

static PyObject *
FastUnstamped_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    if (((FastUnstamped *)self)->ledger == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the collective was cleared");
        return NULL;
    }
    return PyVectorcall_Call(self, args, kwargs);
}

static PyObject *
FastUnstamped_get_name(FastUnstamped *self, void *Py_UNUSED(c))
{
    Py_INCREF(self->op);
    return self->op;
}

static PyGetSetDef FastUnstamped_getset[] = {
    {"__name__", (getter)FastUnstamped_get_name, NULL, "the collective's name", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FastUnstampedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cslint.runtime._ledger.FastUnstamped",
    .tp_doc = "A collective that cannot carry a stamp, entered in a ledger (see Ledger.unstamped).",
    .tp_basicsize = sizeof(FastUnstamped),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(FastUnstamped, vectorcall),
    .tp_call = FastUnstamped_call,
    .tp_dealloc = (destructor)FastUnstamped_dealloc,
    .tp_traverse = (traverseproc)FastUnstamped_traverse,
    .tp_clear = (inquiry)FastUnstamped_clear,
    .tp_getset = FastUnstamped_getset,
};

/* ------------------------------------------------------------ module */

static struct PyModuleDef ledger_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cslint.runtime._ledger",
    .m_doc = "C implementation of cslint.runtime.ledger.PyLedger.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__ledger(void)
{
    if (PyType_Ready(&LedgerType) < 0 || PyType_Ready(&FastAllgatherType) < 0 ||
        PyType_Ready(&FastUnstampedType) < 0)
        return NULL;
    PyObject *impl = PyUnicode_FromString("c");
    PyObject *depth = PyLong_FromLong(MAX_DEPTH);
    if (impl == NULL || depth == NULL || PyDict_SetItemString(LedgerType.tp_dict, "implementation", impl) < 0 ||
        PyDict_SetItemString(LedgerType.tp_dict, "max_depth", depth) < 0) {
        Py_XDECREF(impl);
        Py_XDECREF(depth);
        return NULL;
    }
    Py_DECREF(impl);
    Py_DECREF(depth);
    PyType_Modified(&LedgerType);
    PyObject *m = PyModule_Create(&ledger_module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&LedgerType);
    if (PyModule_AddObject(m, "Ledger", (PyObject *)&LedgerType) < 0) {
        Py_DECREF(&LedgerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
