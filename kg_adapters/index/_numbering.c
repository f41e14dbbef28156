/* The traversal index collector's hot path in C (kg_adapters/index/numbering.py is the Python fallback):
   the table and the module here, the chunk splits in _numbering_split.c.

   Numbering: an exact hash table of IRI bytes -> int32 number, in order of first sight (what a
   defaultdict(itertools.count().__next__) gives), with its keys kept in blocks of bytes: about a fifth
   of a Python dict's memory per IRI and no Python object per IRI.

   split_numbered(data, entities, relations): finds the IRI-to-IRI lines of an N-Triples chunk exactly as
   kg_adapters/index/iri_lines.split_iri_lines does (a single space or tab between terms and before the '.', the
   Freebase dump's layout; exactly three '>', no backslash), numbers
   them in the order TripleCollector's Python path does (the lines with IRIs of at most WIDEST_IRI bytes
   first, subjects before objects; then the longer ones alike) and returns (count, heads, relations, tails,
   rest): the numbers as native int32 bytes and the other lines as the Python path hands them on. */

#include "_numbering.h"

#define BLOCK_BYTES (1 << 20)
#define MOST_NUMBERS 0x7fffffff

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
uint64_t kga_hash_bytes(const char *p, size_t n) {
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
Py_ssize_t kga_find_or_add_hashed(Numbering *self, const char *p, size_t n, uint64_t h, int add) {
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
    return kga_find_or_add_hashed(self, p, n, kga_hash_bytes(p, n), add);
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
    size_t total = 0, end = self->count; /* both passes over the same keys */
    for (size_t i = (size_t)start; i < end; i++) {
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
    for (size_t i = (size_t)start; i < end; i++) {
        if (self->entries[i].size)
            memcpy(at, self->entries[i].data, self->entries[i].size);
        at += self->entries[i].size;
        *at++ = '\n';
    }
    return joined;
}

#define NUMBERS_EXPECTED "strings_at(numbers): numbers are native int32 (array('i'), numpy int32 or their bytes)"

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
    if (PyObject_GetBuffer(arg, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_SetString(PyExc_TypeError, NUMBERS_EXPECTED);
        return NULL;
    }
    PyObject *list = NULL;
    if (!int32_buffer(&view)) {
        PyErr_SetString(PyExc_TypeError, NUMBERS_EXPECTED);
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

PyTypeObject kga_NumberingType = {
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

static PyMethodDef module_methods[] = {
    {"split_numbered", kga_split_numbered, METH_VARARGS,
     "split_numbered(data, entities, relations) -> (count, heads, relations, tails, rest): the IRI-to-IRI lines "
     "of N-Triples data numbered (int32 bytes), and the other lines."},
    {"split_literals", kga_split_literals, METH_VARARGS,
     "split_literals(text, entities, relations, decide) -> (nodes, relations, rows, rest): the lines "
     "build._SIMPLE_LITERAL matches whose suffix decide(suffix) accepts, numbered, as (entity, relation, value, "
     "tag) rows, and the other lines."},
    {"sorted_ids", kga_sorted_ids, METH_VARARGS,
     "sorted_ids(table, strip, skip) -> (order, ids, offsets, duplicate): the numbers in their ids' bytes order (an "
     "id: the IRI, without its first skip bytes where strip[number] is 1), the ids joined in that order, where each "
     "ends (int64, a 0 first), and the first place in the order whose id the next one repeats (-1: none)."},
    {"suffixes", kga_suffixes, METH_VARARGS,
     "suffixes(table, prefix) -> (numbers, rests): the numbers (int32) of the IRIs that start with prefix and what "
     "follows it, decoded (UTF-8)."},
    {"csr", kga_csr, METH_VARARGS,
     "csr(heads, relations, tails, entity_rank, relation_rank, entities, width, itemsize) -> (out_rel, out_other, "
     "out_start, in_rel, in_other, in_start): the distinct edges ranked and sorted by (head, relation, tail) and "
     "by (tail, relation, head): relation columns of itemsize bytes, other ends int32, starts int64."},
    {"sort_int64", kga_sort_int64, METH_O,
     "sort_int64(values): sorts a writable native int64 buffer (a numpy int64 array) in place, as numpy sorts it."},
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
    if (PyType_Ready(&kga_NumberingType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (!module)
        return NULL;
    Py_INCREF(&kga_NumberingType);
    if (PyModule_AddObject(module, "Numbering", (PyObject *)&kga_NumberingType) < 0) {
        Py_DECREF(&kga_NumberingType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
