/* The traversal index collector's hot path in C (kg_adapters/index/numbering.py is the Python fallback).

   Numbering: an exact hash table of IRI bytes -> int32 number, in order of first sight (what a
   defaultdict(itertools.count().__next__) gives), with its keys kept in blocks of bytes: about a fifth
   of a Python dict's memory per IRI and no Python object per IRI.

   split_numbered(data, entities, relations): finds the IRI-to-IRI lines of an N-Triples chunk exactly as
   kg_adapters/index/iri_lines.split_iri_lines does (a single space or tab between terms and before the '.', the
   Freebase dump's layout; exactly three '>', no backslash), numbers
   them in the order TripleCollector's Python path does (the lines with IRIs of at most WIDEST_IRI bytes
   first, subjects before objects; then the longer ones alike) and returns (count, heads, relations, tails,
   rest): the numbers as native int32 bytes and the other lines as the Python path hands them on. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define WIDEST_IRI 128
#define BLOCK_BYTES (1 << 20)
#define MOST_NUMBERS 0x7fffffff

typedef struct {
    const char *data;
    uint32_t size;
    uint32_t hash; /* the low half of the key's hash: its place in the table */
} Entry;

typedef struct Block {
    struct Block *next;
    size_t used, capacity;
    char data[];
} Block;

typedef struct {
    PyObject_HEAD
    uint64_t *slots; /* 0: empty; else (high half of the hash << 32) | (number + 1) */
    size_t mask;     /* slots - 1 (a power of two) */
    Entry *entries;  /* by number */
    size_t count, entries_capacity;
    Block *blocks;   /* the keys' bytes, newest block first */
    size_t block_bytes;
} Numbering;

static uint64_t hash_key0, hash_key1; /* SipHash's key: random per process (os.urandom at import) */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                                       \
    do {                                                                                                               \
        v0 += v1;                                                                                                      \
        v1 = ROTL(v1, 13);                                                                                             \
        v1 ^= v0;                                                                                                      \
        v0 = ROTL(v0, 32);                                                                                             \
        v2 += v3;                                                                                                      \
        v3 = ROTL(v3, 16);                                                                                             \
        v3 ^= v2;                                                                                                      \
        v0 += v3;                                                                                                      \
        v3 = ROTL(v3, 21);                                                                                             \
        v3 ^= v0;                                                                                                      \
        v2 += v1;                                                                                                      \
        v1 = ROTL(v1, 17);                                                                                             \
        v1 ^= v2;                                                                                                      \
        v2 = ROTL(v2, 32);                                                                                             \
    } while (0)

/* SipHash-1-3 (what CPython's own str and bytes hash uses) keyed per process: input cannot be made to
   collide without the key, so no chunk can turn the table's probes quadratic. */
static inline uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t v0 = hash_key0 ^ 0x736f6d6570736575ULL, v1 = hash_key1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = hash_key0 ^ 0x6c7967656e657261ULL, v3 = hash_key1 ^ 0x7465646279746573ULL;
    uint64_t b = (uint64_t)n << 56, m;
    while (n >= 8) {
        memcpy(&m, p, 8);
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
        p += 8;
        n -= 8;
    }
    for (size_t i = 0; i < n; i++)
        b |= (uint64_t)(unsigned char)p[i] << (8 * i);
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static void numbering_free_all(Numbering *self) {
    PyMem_RawFree(self->slots);
    PyMem_RawFree(self->entries);
    Block *block = self->blocks;
    while (block) {
        Block *next = block->next;
        PyMem_RawFree(block);
        block = next;
    }
    self->slots = NULL;
    self->entries = NULL;
    self->blocks = NULL;
    self->count = self->entries_capacity = self->block_bytes = 0;
    self->mask = 0;
}

static int numbering_init_table(Numbering *self) {
    size_t slots = 1024;
    self->slots = PyMem_RawCalloc(slots, sizeof(uint64_t));
    self->entries = PyMem_RawMalloc(512 * sizeof(Entry));
    if (!self->slots || !self->entries) {
        numbering_free_all(self);
        PyErr_NoMemory();
        return -1;
    }
    self->mask = slots - 1;
    self->entries_capacity = 512;
    return 0;
}

static PyObject *Numbering_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    if (PyTuple_GET_SIZE(args) || (kwargs && PyDict_GET_SIZE(kwargs))) {
        PyErr_SetString(PyExc_TypeError, "Numbering() takes no arguments");
        return NULL;
    }
    Numbering *self = (Numbering *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    if (numbering_init_table(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void Numbering_dealloc(Numbering *self) {
    numbering_free_all(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static const char *store_key(Numbering *self, const char *p, size_t n) {
    Block *block = self->blocks;
    if (!block || block->capacity - block->used < n) {
        /* blocks double from 4 KiB to BLOCK_BYTES: a small table (the relations') stays small */
        size_t capacity = self->block_bytes < 4096 ? 4096 : self->block_bytes;
        if (capacity > BLOCK_BYTES)
            capacity = BLOCK_BYTES;
        /* a key longer than a quarter of that gets a block of its own, linked behind the newest one,
           whose free bytes stay in use */
        int own = n > capacity / 4 && self->blocks;
        if (own || capacity < n)
            capacity = n;
        block = PyMem_RawMalloc(sizeof(Block) + capacity);
        if (!block)
            return NULL;
        block->used = 0;
        block->capacity = capacity;
        if (own) {
            block->next = self->blocks->next;
            self->blocks->next = block;
        } else {
            block->next = self->blocks;
            self->blocks = block;
        }
        self->block_bytes += sizeof(Block) + capacity;
    }
    char *at = block->data + block->used;
    if (n)
        memcpy(at, p, n);
    block->used += n;
    return at;
}

static int grow_slots(Numbering *self) {
    size_t old_size = self->mask + 1, size = old_size * 2, mask = size - 1;
    uint64_t *slots = PyMem_RawCalloc(size, sizeof(uint64_t));
    if (!slots)
        return -1;
    for (size_t i = 0; i < old_size; i++) {
        uint64_t slot = self->slots[i];
        if (!slot)
            continue;
        size_t at = self->entries[(uint32_t)slot - 1].hash & mask;
        while (slots[at])
            at = (at + 1) & mask;
        slots[at] = slot;
    }
    PyMem_RawFree(self->slots);
    self->slots = slots;
    self->mask = mask;
    return 0;
}

/* The number of key p[:n] whose hash is h; when absent, -1 (add == 0) or a new number (add != 0); -2 with an
   error set. */
static Py_ssize_t find_or_add_hashed(Numbering *self, const char *p, size_t n, uint64_t h, int add) {
    uint32_t low = (uint32_t)h;
    uint64_t high = h & 0xffffffff00000000ULL;
    size_t mask = self->mask, at = low & mask;
    uint64_t slot;
    while ((slot = self->slots[at]) != 0) {
        if ((slot & 0xffffffff00000000ULL) == high) {
            const Entry *entry = &self->entries[(uint32_t)slot - 1];
            if (entry->size == n && memcmp(entry->data, p, n) == 0)
                return (Py_ssize_t)((uint32_t)slot - 1);
        }
        at = (at + 1) & mask;
    }
    if (!add)
        return -1;
    if ((self->count + 1) * 2 > mask + 1) { /* grown before the key is numbered: a failure numbers nothing */
        if (grow_slots(self) < 0) {
            PyErr_NoMemory();
            return -2;
        }
        mask = self->mask;
        at = low & mask;
        while (self->slots[at])
            at = (at + 1) & mask;
    }
    if (self->count >= MOST_NUMBERS) {
        PyErr_SetString(PyExc_OverflowError, "an IRI numbering holds at most 2**31 - 1 IRIs");
        return -2;
    }
    if (n > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "an IRI longer than 4 GiB");
        return -2;
    }
    if (self->count == self->entries_capacity) {
        size_t capacity = self->entries_capacity * 2;
        Entry *entries = PyMem_RawRealloc(self->entries, capacity * sizeof(Entry));
        if (!entries) {
            PyErr_NoMemory();
            return -2;
        }
        self->entries = entries;
        self->entries_capacity = capacity;
    }
    const char *stored = store_key(self, p, n);
    if (!stored) {
        PyErr_NoMemory();
        return -2;
    }
    size_t number = self->count++;
    self->entries[number] = (Entry){stored, (uint32_t)n, low};
    self->slots[at] = high | (uint64_t)(number + 1);
    return (Py_ssize_t)number;
}

static inline Py_ssize_t find_or_add(Numbering *self, const char *p, size_t n, int add) {
    return find_or_add_hashed(self, p, n, hash_bytes(p, n), add);
}

static int key_of(PyObject *key, const char **p, Py_ssize_t *n) {
    if (!PyBytes_Check(key)) {
        PyErr_Format(PyExc_TypeError, "an IRI numbering is keyed by bytes, not %.100s", Py_TYPE(key)->tp_name);
        return -1;
    }
    *p = PyBytes_AS_STRING(key);
    *n = PyBytes_GET_SIZE(key);
    return 0;
}

static Py_ssize_t Numbering_length(Numbering *self) { return (Py_ssize_t)self->count; }

static PyObject *Numbering_subscript(Numbering *self, PyObject *key) {
    const char *p;
    Py_ssize_t n;
    if (key_of(key, &p, &n) < 0)
        return NULL;
    Py_ssize_t number = find_or_add(self, p, (size_t)n, 1);
    return number < 0 ? NULL : PyLong_FromSsize_t(number);
}

static PyObject *Numbering_get(Numbering *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get(iri, default=None)");
        return NULL;
    }
    const char *p;
    Py_ssize_t n;
    if (key_of(args[0], &p, &n) < 0)
        return NULL;
    Py_ssize_t number = find_or_add(self, p, (size_t)n, 0);
    if (number == -2)
        return NULL;
    if (number == -1) {
        PyObject *fallback = nargs == 2 ? args[1] : Py_None;
        Py_INCREF(fallback);
        return fallback;
    }
    return PyLong_FromSsize_t(number);
}

static PyObject *keys_from(Numbering *self, Py_ssize_t start, int with_numbers) {
    if (start < 0)
        start = 0;
    Py_ssize_t count = (Py_ssize_t)self->count, size = start < count ? count - start : 0;
    PyObject *list = PyList_New(size);
    if (!list)
        return NULL;
    for (Py_ssize_t i = 0; i < size; i++) {
        const Entry *entry = &self->entries[start + i];
        PyObject *item = PyBytes_FromStringAndSize(entry->data, entry->size);
        if (item && with_numbers) {
            PyObject *pair = Py_BuildValue("(Nn)", item, start + i);
            item = pair;
        }
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *Numbering_keys(Numbering *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_ssize_t start = 0;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "keys_from(start=0)");
        return NULL;
    }
    if (nargs == 1 && (start = PyLong_AsSsize_t(args[0])) == -1 && PyErr_Occurred())
        return NULL;
    return keys_from(self, start, 0);
}

static const Entry *sorting; /* the entries order() compares (qsort has no context argument; the GIL is held) */

static int compare_keys(const void *a, const void *b) {
    const Entry *x = &sorting[*(const int32_t *)a], *y = &sorting[*(const int32_t *)b];
    int found = memcmp(x->data, y->data, x->size < y->size ? x->size : y->size);
    return found ? found : (x->size > y->size) - (x->size < y->size); /* bytes order: a prefix first */
}

static PyObject *Numbering_order(Numbering *self, PyObject *Py_UNUSED(ignored)) {
    PyObject *order = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)self->count * 4);
    if (!order)
        return NULL;
    int32_t *numbers = (int32_t *)PyBytes_AS_STRING(order);
    for (size_t i = 0; i < self->count; i++)
        numbers[i] = (int32_t)i;
    sorting = self->entries;
    qsort(numbers, self->count, sizeof(int32_t), compare_keys);
    sorting = NULL;
    return order;
}

static PyObject *Numbering_longest_run(Numbering *self, PyObject *Py_UNUSED(ignored)) {
    size_t longest = 0, run = 0;
    for (size_t i = 0; i <= self->mask; i++) {
        run = self->slots[i] ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    return PyLong_FromSize_t(longest);
}

static PyObject *Numbering_key_at(Numbering *self, PyObject *arg) {
    Py_ssize_t number = PyLong_AsSsize_t(arg);
    if (number == -1 && PyErr_Occurred())
        return NULL;
    if (number < 0 || (size_t)number >= self->count) {
        PyErr_SetString(PyExc_IndexError, "no IRI has this number");
        return NULL;
    }
    return PyBytes_FromStringAndSize(self->entries[number].data, self->entries[number].size);
}

static PyObject *Numbering_strings(Numbering *self, PyObject *Py_UNUSED(ignored)) {
    PyObject *list = PyList_New((Py_ssize_t)self->count);
    if (!list)
        return NULL;
    for (size_t i = 0; i < self->count; i++) {
        PyObject *item = PyUnicode_DecodeUTF8(self->entries[i].data, self->entries[i].size, NULL);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyObject *Numbering_lines_from(Numbering *self, PyObject *arg) {
    Py_ssize_t start = PyLong_AsSsize_t(arg);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    if (start < 0) {
        PyErr_SetString(PyExc_ValueError, "lines_from(start): start must be at least 0");
        return NULL;
    }
    size_t total = 0;
    for (size_t i = (size_t)start; i < self->count; i++) {
        if (self->entries[i].size >= (size_t)PY_SSIZE_T_MAX - total) {
            PyErr_SetString(PyExc_OverflowError, "the IRIs are too long to join");
            return NULL;
        }
        total += self->entries[i].size + 1;
    }
    PyObject *joined = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (!joined)
        return NULL;
    char *at = PyBytes_AS_STRING(joined);
    for (size_t i = (size_t)start; i < self->count; i++) {
        if (self->entries[i].size)
            memcpy(at, self->entries[i].data, self->entries[i].size);
        at += self->entries[i].size;
        *at++ = '\n';
    }
    return joined;
}

/* Whether a buffer holds native int32 numbers: items of 4 bytes in native order ('i', or 'l' where a long
   has 4 bytes), or plain bytes of a length divisible by 4 (int32 numbers written out). */
static int int32_buffer(const Py_buffer *view) {
    const char *format = view->format ? view->format : "B";
    if (view->len % 4)
        return 0;
    if (view->itemsize == 1)
        return strcmp(format, "B") == 0 || strcmp(format, "b") == 0 || strcmp(format, "c") == 0;
    if (view->itemsize != 4)
        return 0;
    if (*format == '@' || *format == '=')
        format++;
#if PY_LITTLE_ENDIAN
    else if (*format == '<')
        format++;
#else
    else if (*format == '>' || *format == '!')
        format++;
#endif
    return strcmp(format, "i") == 0 || strcmp(format, "l") == 0;
}

static PyObject *Numbering_strings_at(Numbering *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    PyObject *list = NULL;
    if (!int32_buffer(&view)) {
        PyErr_SetString(PyExc_TypeError, "strings_at(numbers): numbers are native int32 (array('i'), numpy int32 or "
                                         "their bytes)");
        goto done;
    }
    Py_ssize_t count = view.len / 4;
    list = PyList_New(count);
    if (!list)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t number;
        memcpy(&number, (const char *)view.buf + 4 * i, 4);
        if (number < 0 || (size_t)number >= self->count) {
            PyErr_SetString(PyExc_IndexError, "no IRI has this number");
            Py_CLEAR(list);
            goto done;
        }
        PyObject *item = PyUnicode_DecodeUTF8(self->entries[number].data, (Py_ssize_t)self->entries[number].size, NULL);
        if (!item) {
            Py_CLEAR(list);
            goto done;
        }
        PyList_SET_ITEM(list, i, item);
    }
done:
    PyBuffer_Release(&view);
    return list;
}

static PyObject *Numbering_items(Numbering *self, PyObject *Py_UNUSED(ignored)) { return keys_from(self, 0, 1); }

static PyObject *Numbering_iter(Numbering *self) {
    PyObject *keys = keys_from(self, 0, 0);
    if (!keys)
        return NULL;
    PyObject *iterator = PyObject_GetIter(keys);
    Py_DECREF(keys);
    return iterator;
}

static PyObject *Numbering_nbytes(Numbering *self, PyObject *Py_UNUSED(ignored)) {
    size_t total = sizeof(Numbering) + (self->mask + 1) * sizeof(uint64_t) + self->entries_capacity * sizeof(Entry) +
                   self->block_bytes;
    return PyLong_FromSize_t(total);
}

static PyMethodDef Numbering_methods[] = {
    {"get", (PyCFunction)(void (*)(void))Numbering_get, METH_FASTCALL,
     "get(iri, default=None): the IRI's number, or default when it has none (numbers nothing)."},
    {"keys_from", (PyCFunction)(void (*)(void))Numbering_keys, METH_FASTCALL,
     "keys_from(start=0): the IRIs numbered start and on, in number order."},
    {"items", (PyCFunction)Numbering_items, METH_NOARGS, "items(): (IRI, number) pairs in number order."},
    {"order", (PyCFunction)Numbering_order, METH_NOARGS, "order(): the numbers in their IRIs' bytes order (int32)."},
    {"key_at", (PyCFunction)Numbering_key_at, METH_O, "key_at(number): the IRI numbered so."},
    {"longest_run", (PyCFunction)Numbering_longest_run, METH_NOARGS,
     "longest_run(): the longest run of filled slots (what a lookup may probe at worst)."},
    {"strings", (PyCFunction)Numbering_strings, METH_NOARGS, "strings(): the IRIs decoded (UTF-8), in number order."},
    {"lines_from", (PyCFunction)Numbering_lines_from, METH_O,
     "lines_from(start): the IRIs numbered start and on, each followed by a line break, as one bytes (no object per "
     "IRI: what the spool logs)."},
    {"strings_at", (PyCFunction)Numbering_strings_at, METH_O,
     "strings_at(numbers): the IRIs of numbers (a buffer of native int32: array('i'), numpy int32) decoded (UTF-8), "
     "in that order (no bytes object per IRI)."},
    {"nbytes", (PyCFunction)Numbering_nbytes, METH_NOARGS, "nbytes(): the memory the table holds, in bytes."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods Numbering_mapping = {
    (lenfunc)Numbering_length,
    (binaryfunc)Numbering_subscript,
    NULL,
};

static PyTypeObject NumberingType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kg_adapters.index._numbering.Numbering",
    .tp_basicsize = sizeof(Numbering),
    .tp_dealloc = (destructor)Numbering_dealloc,
    .tp_as_mapping = &Numbering_mapping,
    .tp_iter = (getiterfunc)Numbering_iter,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "IRI bytes -> int32 number in order of first sight; numbering[iri] numbers an IRI not seen yet.",
    .tp_methods = Numbering_methods,
    .tp_new = Numbering_new,
};

/* -- split_numbered ------------------------------------------------------------------------------ */

typedef struct {
    Py_ssize_t start, gt1, gt2, gt3; /* the line's first byte and its three '>' */
} Line;

typedef struct {
    Line *lines;
    Py_ssize_t count, capacity;
} Lines;

static int lines_add(Lines *lines, Line line) {
    if (lines->count == lines->capacity) {
        Py_ssize_t capacity = lines->capacity ? lines->capacity * 2 : 4096;
        Line *grown = PyMem_RawRealloc(lines->lines, (size_t)capacity * sizeof(Line));
        if (!grown)
            return -1;
        lines->lines = grown;
        lines->capacity = capacity;
    }
    lines->lines[lines->count++] = line;
    return 0;
}

typedef struct {
    const char *p;
    size_t n;
} Key;

/* How far ahead number_keys works on the keys to come: it hashes a key and fetches its first slot HASH_AHEAD
   keys before numbering it, reads that slot and fetches the entry it names ENTRY_AHEAD keys before, and
   fetches that entry's bytes BYTES_AHEAD keys before: the table's three memory reads of several keys are
   under way at once instead of one after the other (a lookup is bound by memory latency, not work). */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif
#define HASH_AHEAD 16
#define ENTRY_AHEAD 8
#define BYTES_AHEAD 4
#define AHEAD_RING 32 /* a power of two above HASH_AHEAD */

typedef struct {
    uint64_t hash;
    Py_ssize_t probed; /* the number the first slot with the hash's tag holds, or -1 */
    int repeat;        /* the same bytes as the key before: not looked up again */
} Ahead;

/* Numbers keys[0:count] into out[] in order, as table[key] each would (first sight numbers), a key equal to
   the one before it (a subject repeated on consecutive lines) without a lookup. 0, or -1 with an error set
   (the keys before the failing one numbered). */
static int number_keys(Numbering *table, const Key *keys, Py_ssize_t count, int32_t *out) {
    Ahead ring[AHEAD_RING];
    Py_ssize_t number = 0;
    for (Py_ssize_t i = -HASH_AHEAD; i < count; i++) {
        Py_ssize_t j = i + HASH_AHEAD;
        if (j < count) {
            Ahead *ahead = &ring[j & (AHEAD_RING - 1)];
            const Key *key = &keys[j];
            ahead->repeat = j > 0 && keys[j - 1].n == key->n && memcmp(keys[j - 1].p, key->p, key->n) == 0;
            ahead->probed = -1;
            if (!ahead->repeat) {
                ahead->hash = hash_bytes(key->p, key->n);
                PREFETCH(&table->slots[(uint32_t)ahead->hash & table->mask]);
            }
        }
        j = i + ENTRY_AHEAD;
        if (j >= 0 && j < count) { /* the slot is cached by now (or the table grew since: only a hint) */
            Ahead *ahead = &ring[j & (AHEAD_RING - 1)];
            if (!ahead->repeat) {
                uint64_t high = ahead->hash & 0xffffffff00000000ULL, slot;
                size_t mask = table->mask, at = (uint32_t)ahead->hash & mask;
                while ((slot = table->slots[at]) != 0) {
                    if ((slot & 0xffffffff00000000ULL) == high) {
                        ahead->probed = (Py_ssize_t)((uint32_t)slot - 1);
                        PREFETCH(&table->entries[ahead->probed]);
                        break;
                    }
                    at = (at + 1) & mask;
                }
            }
        }
        j = i + BYTES_AHEAD;
        if (j >= 0 && j < count) {
            const Ahead *ahead = &ring[j & (AHEAD_RING - 1)];
            if (ahead->probed >= 0 && (size_t)ahead->probed < table->count) /* a slot names a numbered entry */
                PREFETCH(table->entries[ahead->probed].data);
        }
        if (i < 0)
            continue;
        const Ahead *ahead = &ring[i & (AHEAD_RING - 1)];
        if (!ahead->repeat) {
            number = find_or_add_hashed(table, keys[i].p, keys[i].n, ahead->hash, 1);
            if (number < 0)
                return -1;
        }
        out[i] = (int32_t)number;
    }
    return 0;
}

/* Numbers the subjects (objects == 0) or the objects of lines into out[], the relations too with the
   subjects; keys: room for lines->count keys. */
static int number_column(Numbering *entities, Numbering *relations, const char *text, const Lines *lines, int objects,
                         int32_t *out, int32_t *relation_out, Key *keys) {
    for (Py_ssize_t i = 0; i < lines->count; i++) {
        const Line *line = &lines->lines[i];
        keys[i] = objects ? (Key){text + line->gt2 + 3, (size_t)(line->gt3 - line->gt2 - 3)}
                          : (Key){text + line->start + 1, (size_t)(line->gt1 - line->start - 1)};
    }
    if (number_keys(entities, keys, lines->count, out) < 0)
        return -1;
    if (objects)
        return 0;
    for (Py_ssize_t i = 0; i < lines->count; i++) {
        const Line *line = &lines->lines[i];
        keys[i] = (Key){text + line->gt1 + 3, (size_t)(line->gt2 - line->gt1 - 3)};
    }
    return number_keys(relations, keys, lines->count, relation_out);
}

/* What separates the terms of a line the splits read: one space, or one tab (the Freebase dump's layout). */
#define SEPARATOR(c) ((c) == ' ' || (c) == '\t')

/* 1: a short IRI-to-IRI line, 2: a long one, 0: another line; the three '>' into *line. */
static int classify(const char *text, Py_ssize_t start, Py_ssize_t end, const char *backslash, Line *line) {
    Py_ssize_t size = end - start;
    if (size < 10 || backslash < text + end)
        return 0;
    const char *p = text + start, *stop = text + end;
    const char *g1 = memchr(p, '>', size);
    if (!g1)
        return 0;
    const char *g2 = memchr(g1 + 1, '>', stop - g1 - 1);
    if (!g2)
        return 0;
    const char *g3 = memchr(g2 + 1, '>', stop - g2 - 1);
    if (!g3 || g3 != stop - 3 || p[0] != '<' || !SEPARATOR(stop[-2]) || stop[-1] != '.')
        return 0;
    if (!SEPARATOR(g1[1]) || g1[2] != '<' || !SEPARATOR(g2[1]) || g2[2] != '<')
        return 0;
    line->start = start;
    line->gt1 = g1 - text;
    line->gt2 = g2 - text;
    line->gt3 = g3 - text;
    Py_ssize_t widest = line->gt1 - start;
    if (line->gt2 - line->gt1 > widest)
        widest = line->gt2 - line->gt1;
    if (line->gt3 - line->gt2 > widest)
        widest = line->gt3 - line->gt2;
    return widest - 3 <= WIDEST_IRI ? 1 : 2;
}

static PyObject *split_numbered(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer buffer;
    Numbering *entities, *relations;
    if (!PyArg_ParseTuple(args, "y*O!O!:split_numbered", &buffer, &NumberingType, &entities, &NumberingType,
                          &relations))
        return NULL;
    const char *text = buffer.buf;
    Py_ssize_t size = buffer.len;
    Lines short_lines = {0}, long_lines = {0};
    char *rest = NULL;
    Key *keys = NULL;
    Py_ssize_t rest_size = 0;
    PyObject *heads = NULL, *rels = NULL, *tails = NULL, *rest_bytes = NULL, *result = NULL;

    rest = PyMem_RawMalloc((size_t)size + 1);
    if (!rest) {
        PyErr_NoMemory();
        goto done;
    }
    const char *backslash = memchr(text, '\\', (size_t)size);
    if (!backslash)
        backslash = text + size;
    Py_ssize_t start = 0;
    for (;;) {
        const char *newline = memchr(text + start, '\n', (size_t)(size - start));
        Py_ssize_t end = newline ? newline - text : size;
        if (backslash < text + start) {
            backslash = memchr(text + start, '\\', (size_t)(size - start));
            if (!backslash)
                backslash = text + size;
        }
        Line line;
        int kind = classify(text, start, end, backslash, &line);
        if (kind && lines_add(kind == 1 ? &short_lines : &long_lines, line) < 0) {
            PyErr_NoMemory();
            goto done;
        }
        if (!kind) { /* the other lines, each with a line break after it */
            memcpy(rest + rest_size, text + start, (size_t)(end - start));
            rest_size += end - start;
            rest[rest_size++] = '\n';
        }
        if (!newline)
            break;
        start = end + 1;
    }
    Py_ssize_t count = short_lines.count + long_lines.count;
    heads = PyBytes_FromStringAndSize(NULL, count * 4);
    rels = PyBytes_FromStringAndSize(NULL, count * 4);
    tails = PyBytes_FromStringAndSize(NULL, count * 4);
    if (!heads || !rels || !tails)
        goto done;
    int32_t *head_out = (int32_t *)PyBytes_AS_STRING(heads), *rel_out = (int32_t *)PyBytes_AS_STRING(rels),
            *tail_out = (int32_t *)PyBytes_AS_STRING(tails);
    Py_ssize_t offset = short_lines.count;
    keys = PyMem_RawMalloc((size_t)(count ? count : 1) * sizeof(Key));
    if (!keys) {
        PyErr_NoMemory();
        goto done;
    }
    if (number_column(entities, relations, text, &short_lines, 0, head_out, rel_out, keys) < 0 ||
        number_column(entities, relations, text, &short_lines, 1, tail_out, NULL, keys) < 0 ||
        number_column(entities, relations, text, &long_lines, 0, head_out + offset, rel_out + offset, keys) < 0 ||
        number_column(entities, relations, text, &long_lines, 1, tail_out + offset, NULL, keys) < 0)
        goto done;
    /* as the Python path: a line break per long line (what its regular expression's split leaves), then
       the other lines */
    rest_bytes = PyBytes_FromStringAndSize(NULL, long_lines.count + rest_size);
    if (!rest_bytes)
        goto done;
    memset(PyBytes_AS_STRING(rest_bytes), '\n', (size_t)long_lines.count);
    if (rest_size)
        memcpy(PyBytes_AS_STRING(rest_bytes) + long_lines.count, rest, (size_t)rest_size);
    result = Py_BuildValue("(nOOOO)", count, heads, rels, tails, rest_bytes);
done:
    PyMem_RawFree(rest);
    PyMem_RawFree(keys);
    PyMem_RawFree(short_lines.lines);
    PyMem_RawFree(long_lines.lines);
    Py_XDECREF(heads);
    Py_XDECREF(rels);
    Py_XDECREF(tails);
    Py_XDECREF(rest_bytes);
    PyBuffer_Release(&buffer);
    return result;
}

/* -- split_literals ------------------------------------------------------------------------------ */

/* Whether text[at:end] (one line) reads <s> <p> "v"SUFFIX . as build._SIMPLE_LITERAL matches it (its
   groups exclude every byte that would let a match end elsewhere, so one forward scan decides); the
   spans into *spans: subject, predicate, value, suffix as (start, end) pairs. */
static int literal_line(const char *text, Py_ssize_t at, Py_ssize_t end, Py_ssize_t *spans) {
    Py_ssize_t i = at;
    for (int iri = 0; iri < 2; iri++) {
        if (i >= end || text[i] != '<')
            return 0;
        spans[2 * iri] = ++i;
        while (i < end && text[i] != '<' && text[i] != '>' && text[i] != '\\')
            i++;
        if (i >= end || text[i] != '>')
            return 0;
        spans[2 * iri + 1] = i++;
        if (i >= end || !SEPARATOR(text[i]))
            return 0;
        i++;
    }
    if (i >= end || text[i] != '"')
        return 0;
    spans[4] = ++i;
    while (i < end && text[i] != '"' && text[i] != '\\' && text[i] != '\r')
        i++;
    if (i >= end || text[i] != '"')
        return 0;
    spans[5] = i++;
    spans[6] = i;
    if (i < end && text[i] == '@') { /* @[a-zA-Z]+(-[a-zA-Z0-9]+)* */
        Py_ssize_t letters = ++i;
        while (i < end && ((text[i] | 0x20) >= 'a' && (text[i] | 0x20) <= 'z'))
            i++;
        if (i == letters)
            return 0;
        while (i + 1 < end && text[i] == '-' && Py_ISALNUM(text[i + 1])) {
            i += 2;
            while (i < end && Py_ISALNUM(text[i]))
                i++;
        }
    } else if (i + 2 < end && text[i] == '^' && text[i + 1] == '^' && text[i + 2] == '<') { /* ^^<[^<>\\\n]*> */
        i += 3;
        while (i < end && text[i] != '<' && text[i] != '>' && text[i] != '\\')
            i++;
        if (i >= end || text[i] != '>')
            return 0;
        i++;
    }
    spans[7] = i;
    return i + 2 == end && SEPARATOR(text[i]) && text[i + 1] == '.';
}

/* The decision for a suffix: (tag, check or None) or None (the parser reads the line), from decide(suffix),
   kept per call in decisions. A new reference, or NULL with an error set. */
static PyObject *decision_of(PyObject *decisions, PyObject *decide, const char *p, Py_ssize_t n) {
    PyObject *suffix = PyBytes_FromStringAndSize(p, n);
    if (!suffix)
        return NULL;
    PyObject *found = PyDict_GetItemWithError(decisions, suffix);
    if (found) {
        Py_INCREF(found);
    } else if (!PyErr_Occurred()) {
        found = PyObject_CallOneArg(decide, suffix);
        if (found && found != Py_None &&
            !(PyTuple_Check(found) && PyTuple_GET_SIZE(found) == 2 && PyBytes_Check(PyTuple_GET_ITEM(found, 0)))) {
            PyErr_SetString(PyExc_TypeError, "decide(suffix) must return (tag bytes, check or None) or None");
            Py_CLEAR(found);
        }
        if (found && PyDict_SetItem(decisions, suffix, found) < 0)
            Py_CLEAR(found);
    }
    Py_DECREF(suffix);
    return found;
}

/* An accepted literal line of split_literals, numbered once the chunk is read. */
typedef struct {
    Key subject, relation;
    PyObject *value; /* a reference */
    PyObject *tag;   /* borrowed from its decision, which the call's decisions hold */
} Pending;

static PyObject *split_literals(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer buffer;
    Numbering *entities, *relations;
    PyObject *decide;
    if (!PyArg_ParseTuple(args, "y*O!O!O:split_literals", &buffer, &NumberingType, &entities, &NumberingType,
                          &relations, &decide))
        return NULL;
    const char *text = buffer.buf;
    Py_ssize_t size = buffer.len, kept_size = 0, refused_size = 0, count = 0, capacity = 0;
    char *kept = PyMem_RawMalloc((size_t)size + 1), *refused = PyMem_RawMalloc((size_t)size * 2 + 1);
    Pending *pending = NULL;
    Key *keys = NULL;
    int32_t *nodes = NULL, *rels = NULL;
    PyObject *rows = NULL, *decisions = PyDict_New(), *result = NULL, *last_decision = NULL;
    PyObject *node_bytes = NULL, *rel_bytes = NULL, *rest = NULL;
    const char *last_suffix = NULL;
    Py_ssize_t last_suffix_size = 0;
    if (!kept || !refused) {
        PyErr_NoMemory();
        goto done;
    }
    if (!decisions)
        goto done;
    Py_ssize_t start = 0;
    for (;;) {
        const char *newline = memchr(text + start, '\n', (size_t)(size - start));
        Py_ssize_t end = newline ? newline - text : size, spans[8];
        int matched = literal_line(text, start, end, spans);
        PyObject *decision = NULL;
        if (matched) {
            Py_ssize_t suffix_size = spans[7] - spans[6];
            if (last_decision && suffix_size == last_suffix_size &&
                memcmp(text + spans[6], last_suffix, (size_t)suffix_size) == 0) {
                decision = last_decision;
            } else {
                decision = decision_of(decisions, decide, text + spans[6], suffix_size);
                if (!decision)
                    goto done;
                Py_DECREF(decision); /* decisions holds it */
                last_decision = decision;
                last_suffix = text + spans[6];
                last_suffix_size = suffix_size;
            }
        }
        int accepted = matched && decision != Py_None;
        PyObject *value = NULL;
        if (accepted) {
            value = PyBytes_FromStringAndSize(text + spans[4], spans[5] - spans[4]);
            if (!value)
                goto done;
            PyObject *check = PyTuple_GET_ITEM(decision, 1);
            if (check != Py_None) {
                PyObject *verdict = PyObject_CallOneArg(check, value);
                int ok = verdict ? PyObject_IsTrue(verdict) : -1;
                Py_XDECREF(verdict);
                if (ok < 0) {
                    Py_DECREF(value);
                    goto done;
                }
                if (!ok) {
                    Py_CLEAR(value);
                    accepted = 0;
                }
            }
        }
        if (accepted) {
            if (count == capacity) {
                Py_ssize_t grown_capacity = capacity ? capacity * 2 : 4096;
                Pending *grown = (size_t)grown_capacity > PY_SSIZE_T_MAX / sizeof(Pending)
                                     ? NULL
                                     : PyMem_RawRealloc(pending, (size_t)grown_capacity * sizeof(Pending));
                if (!grown) {
                    Py_DECREF(value);
                    PyErr_NoMemory();
                    goto done;
                }
                pending = grown;
                capacity = grown_capacity;
            }
            pending[count++] = (Pending){{text + spans[0], (size_t)(spans[1] - spans[0])},
                                         {text + spans[2], (size_t)(spans[3] - spans[2])},
                                         value,
                                         PyTuple_GET_ITEM(decision, 0)};
        } else if (matched) { /* as the Python path: the line left empty, then appended at the end after a break */
            refused[refused_size++] = '\n';
            memcpy(refused + refused_size, text + start, (size_t)(end - start));
            refused_size += end - start;
        }
        if (!matched) {
            memcpy(kept + kept_size, text + start, (size_t)(end - start));
            kept_size += end - start;
        }
        if (!newline)
            break;
        kept[kept_size++] = '\n';
        start = end + 1;
    }
    /* the accepted lines' subjects, then their predicates, numbered in line order (each table's own order is
       what the Python path gives: first sight, line by line) */
    node_bytes = PyBytes_FromStringAndSize(NULL, count * 4);
    rel_bytes = PyBytes_FromStringAndSize(NULL, count * 4);
    keys = PyMem_RawMalloc((size_t)(count ? count : 1) * sizeof(Key));
    if (!node_bytes || !rel_bytes)
        goto done;
    if (!keys) {
        PyErr_NoMemory();
        goto done;
    }
    nodes = (int32_t *)PyBytes_AS_STRING(node_bytes);
    rels = (int32_t *)PyBytes_AS_STRING(rel_bytes);
    for (Py_ssize_t i = 0; i < count; i++)
        keys[i] = pending[i].subject;
    if (number_keys(entities, keys, count, nodes) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++)
        keys[i] = pending[i].relation;
    if (number_keys(relations, keys, count, rels) < 0)
        goto done;
    rows = PyList_New(count);
    if (!rows)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *row = Py_BuildValue("(iiNO)", nodes[i], rels[i], pending[i].value, pending[i].tag);
        pending[i].value = NULL; /* N: the row took it, or it was released */
        if (!row)
            goto done;
        PyList_SET_ITEM(rows, i, row);
    }
    rest = PyBytes_FromStringAndSize(NULL, kept_size + refused_size);
    if (!rest)
        goto done;
    memcpy(PyBytes_AS_STRING(rest), kept, (size_t)kept_size);
    memcpy(PyBytes_AS_STRING(rest) + kept_size, refused, (size_t)refused_size);
    result = PyTuple_Pack(4, node_bytes, rel_bytes, rows, rest);
done:
    for (Py_ssize_t i = 0; i < count; i++)
        Py_XDECREF(pending[i].value);
    PyMem_RawFree(pending);
    PyMem_RawFree(keys);
    PyMem_RawFree(kept);
    PyMem_RawFree(refused);
    Py_XDECREF(rows);
    Py_XDECREF(decisions);
    Py_XDECREF(node_bytes);
    Py_XDECREF(rel_bytes);
    Py_XDECREF(rest);
    PyBuffer_Release(&buffer);
    return result;
}

static PyMethodDef module_methods[] = {
    {"split_numbered", split_numbered, METH_VARARGS,
     "split_numbered(data, entities, relations) -> (count, heads, relations, tails, rest): the IRI-to-IRI lines "
     "of N-Triples data numbered (int32 bytes), and the other lines."},
    {"split_literals", split_literals, METH_VARARGS,
     "split_literals(text, entities, relations, decide) -> (nodes, relations, rows, rest): the lines "
     "build._SIMPLE_LITERAL matches whose suffix decide(suffix) accepts, numbered, as (entity, relation, value, "
     "tag) rows, and the other lines."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_numbering", "The traversal index collector's numbering in C.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__numbering(void) {
    /* the hash's key: 16 random bytes from the operating system */
    PyObject *os = PyImport_ImportModule("os");
    PyObject *key = os ? PyObject_CallMethod(os, "urandom", "i", 16) : NULL;
    Py_XDECREF(os);
    if (!key)
        return NULL;
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) != 16) {
        Py_DECREF(key);
        PyErr_SetString(PyExc_RuntimeError, "os.urandom(16) did not give 16 bytes");
        return NULL;
    }
    memcpy(&hash_key0, PyBytes_AS_STRING(key), 8);
    memcpy(&hash_key1, PyBytes_AS_STRING(key) + 8, 8);
    Py_DECREF(key);
    if (PyType_Ready(&NumberingType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (!module)
        return NULL;
    Py_INCREF(&NumberingType);
    if (PyModule_AddObject(module, "Numbering", (PyObject *)&NumberingType) < 0) {
        Py_DECREF(&NumberingType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
