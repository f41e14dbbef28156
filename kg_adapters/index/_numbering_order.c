/* The traversal index write's sorts in C (kg_adapters/index/build.py has the Python path, with the same results):

   sorted_ids(table, strip, skip): the entity ids of a Numbering's IRIs (each IRI, or its bytes after the first
   `skip` where strip[number] is 1: the profile's namespace cut off) in their bytes order, which is the order of
   their text (UTF-8 keeps code point order), and the ids in that order as one blob with their offsets;
   suffixes(table, prefix): the IRIs that start with prefix, what follows it decoded (what a profile checks);
   csr(heads, relations, tails, entity_rank, relation_rank, entities, width, itemsize): both directions of the
   edges, ranked, sorted and without repeats, a counting sort by node then a sort of each node's edges. */

#include "_numbering.h"

/* -- sorting unsigned 64-bit values (a node's edges) ---------------------------------------------- */

static void insertion_u64(uint64_t *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        uint64_t value = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > value) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = value;
    }
}

static void sift_u64(uint64_t *a, size_t root, size_t n) {
    uint64_t value = a[root];
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            break;
        if (child + 1 < n && a[child + 1] > a[child])
            child++;
        if (a[child] <= value)
            break;
        a[root] = a[child];
        root = child;
    }
    a[root] = value;
}

static void heapsort_u64(uint64_t *a, size_t n) {
    for (size_t i = n / 2; i-- > 0;)
        sift_u64(a, i, n);
    for (size_t end = n; end-- > 1;) {
        uint64_t top = a[0];
        a[0] = a[end];
        a[end] = top;
        sift_u64(a, 0, end);
    }
}

#define SWAP_U64(x, y)                                                                                                 \
    do {                                                                                                               \
        uint64_t swapped = (x);                                                                                        \
        (x) = (y);                                                                                                     \
        (y) = swapped;                                                                                                 \
    } while (0)

/* Introsort: quicksort (Hoare's partition around the median of three, put in the middle), heapsort past a depth
   (no input makes it quadratic), insertion sort for short ranges. */
static void sort_u64(uint64_t *a, size_t n) {
    int depth = 0;
    for (size_t size = n; size > 1; size >>= 1)
        depth += 2;
    while (n > 24) {
        if (depth-- == 0) {
            heapsort_u64(a, n);
            return;
        }
        size_t mid = (n - 1) / 2;
        if (a[mid] < a[0])
            SWAP_U64(a[mid], a[0]);
        if (a[n - 1] < a[0])
            SWAP_U64(a[n - 1], a[0]);
        if (a[n - 1] < a[mid])
            SWAP_U64(a[n - 1], a[mid]);
        uint64_t pivot = a[mid];
        size_t i = 0, j = n - 1;
        for (;;) { /* a[0] <= pivot <= a[n - 1] stop both scans inside the range */
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i >= j)
                break;
            SWAP_U64(a[i], a[j]);
            i++;
            j--;
        }
        size_t left = i > j ? i : j + 1; /* a[0:left] <= pivot <= a[left:n], both parts shorter than n */
        if (left == 0 || left >= n)
            left = mid + 1;
        if (left < n - left) {
            sort_u64(a, left);
            a += left;
            n -= left;
        } else {
            sort_u64(a + left, n - left);
            n = left;
        }
    }
    insertion_u64(a, n);
}

/* -- sorted_ids --------------------------------------------------------------------------------------- */

typedef struct {
    uint64_t prefix; /* the id's 8 bytes after the ids' common prefix, big-endian, zero-padded */
    uint32_t number;
    uint32_t unused;
} Ranked;

typedef struct {
    const Entry *entries;
    const unsigned char *strip;
    size_t skip;
} Ids;

static inline const char *id_data(const Ids *ids, uint32_t number, size_t *size) {
    const Entry *entry = &ids->entries[number];
    size_t cut = ids->strip[number] ? ids->skip : 0;
    *size = entry->size - cut;
    return entry->data + cut;
}

/* Bytes order, a prefix first (what Python's bytes and, for UTF-8, str comparisons give). */
static int compare_ids(const Ids *ids, const Ranked *x, const Ranked *y) {
    if (x->prefix != y->prefix)
        return x->prefix < y->prefix ? -1 : 1;
    size_t xn, yn;
    const char *xp = id_data(ids, x->number, &xn), *yp = id_data(ids, y->number, &yn);
    int found = memcmp(xp, yp, xn < yn ? xn : yn);
    return found ? found : (xn > yn) - (xn < yn);
}

/* A stable merge sort by compare_ids (the runs of ids that share their 8-byte prefix); tmp holds n / 2 + 1. */
static void merge_sort_ids(const Ids *ids, Ranked *a, Ranked *tmp, size_t n) {
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            Ranked value = a[i];
            size_t j = i;
            while (j > 0 && compare_ids(ids, &a[j - 1], &value) > 0) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = value;
        }
        return;
    }
    size_t half = n / 2;
    merge_sort_ids(ids, a, tmp, half);
    merge_sort_ids(ids, a + half, tmp, n - half);
    if (compare_ids(ids, &a[half - 1], &a[half]) <= 0)
        return;
    memcpy(tmp, a, half * sizeof(Ranked));
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n)
        a[k++] = compare_ids(ids, &a[j], &tmp[i]) < 0 ? a[j++] : tmp[i++];
    while (i < half)
        a[k++] = tmp[i++];
}

/* Sorts items by prefix (a stable LSD radix sort, a byte at a time, skipping bytes all prefixes share), then each
   run of equal prefixes by the whole ids. */
static void sort_ranked(const Ids *ids, Ranked *items, Ranked *tmp, size_t n) {
    size_t counts[256];
    for (int shift = 0; shift < 64; shift += 8) {
        memset(counts, 0, sizeof(counts));
        for (size_t i = 0; i < n; i++)
            counts[(items[i].prefix >> shift) & 0xff]++;
        if (n == 0 || counts[(items[0].prefix >> shift) & 0xff] == n)
            continue;
        size_t at = 0;
        for (int b = 0; b < 256; b++) {
            size_t count = counts[b];
            counts[b] = at;
            at += count;
        }
        for (size_t i = 0; i < n; i++)
            tmp[counts[(items[i].prefix >> shift) & 0xff]++] = items[i];
        memcpy(items, tmp, n * sizeof(Ranked));
    }
    for (size_t lo = 0; lo < n;) {
        size_t hi = lo + 1;
        while (hi < n && items[hi].prefix == items[lo].prefix)
            hi++;
        if (hi - lo > 1)
            merge_sort_ids(ids, items + lo, tmp, hi - lo);
        lo = hi;
    }
}

PyObject *kga_sorted_ids(PyObject *module, PyObject *args) {
    Numbering *table;
    Py_buffer strip;
    Py_ssize_t skip;
    if (!PyArg_ParseTuple(args, "O!y*n:sorted_ids", &kga_NumberingType, &table, &strip, &skip))
        return NULL;
    PyObject *result = NULL, *order = NULL, *blob = NULL, *offsets = NULL;
    Ranked *items = NULL, *tmp = NULL;
    size_t n = table->count;
    Ids ids = {table->entries, strip.buf, (size_t)(skip < 0 ? 0 : skip)};
    if (skip < 0 || (size_t)strip.len != n) {
        PyErr_SetString(PyExc_ValueError, "sorted_ids(table, strip, skip): one strip byte per IRI, skip >= 0");
        goto done;
    }
    size_t common = SIZE_MAX, total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids.strip[i] > 1 || (ids.strip[i] && table->entries[i].size < ids.skip)) {
            PyErr_SetString(PyExc_ValueError, "sorted_ids: a strip byte is 0 or 1, and only IRIs of skip bytes or more");
            goto done;
        }
        size_t size, first_size;
        const char *data = id_data(&ids, (uint32_t)i, &size), *first = id_data(&ids, 0, &first_size);
        size_t shared = 0, most = size < first_size ? size : first_size;
        most = most < common ? most : common;
        while (shared < most && data[shared] == first[shared])
            shared++;
        common = shared;
        total += size;
    }
    if (total > (size_t)PY_SSIZE_T_MAX || n > (size_t)PY_SSIZE_T_MAX / 8 - 1) {
        PyErr_SetString(PyExc_OverflowError, "sorted_ids: the ids are too long to join");
        goto done;
    }
    items = PyMem_RawMalloc((n ? n : 1) * sizeof(Ranked));
    tmp = PyMem_RawMalloc((n ? n : 1) * sizeof(Ranked));
    order = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 4));
    offsets = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((n + 1) * 8));
    blob = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (!items || !tmp) {
        PyErr_NoMemory();
        goto done;
    }
    if (!order || !offsets || !blob)
        goto done;
    for (size_t i = 0; i < n; i++) {
        size_t size;
        const unsigned char *data = (const unsigned char *)id_data(&ids, (uint32_t)i, &size);
        uint64_t prefix = 0;
        for (size_t b = 0; b < 8; b++)
            prefix = (prefix << 8) | (common + b < size ? data[common + b] : 0);
        items[i] = (Ranked){prefix, (uint32_t)i, 0};
    }
    sort_ranked(&ids, items, tmp, n);
    Py_ssize_t duplicate = -1;
    int32_t *numbers = (int32_t *)PyBytes_AS_STRING(order);
    char *at = PyBytes_AS_STRING(blob);
    int64_t *ends = (int64_t *)PyBytes_AS_STRING(offsets), end = 0;
    ends[0] = 0;
    for (size_t k = 0; k < n; k++) {
        size_t size;
        const char *data = id_data(&ids, items[k].number, &size);
        if (duplicate < 0 && k > 0 && compare_ids(&ids, &items[k - 1], &items[k]) == 0)
            duplicate = (Py_ssize_t)k - 1;
        numbers[k] = (int32_t)items[k].number;
        if (size)
            memcpy(at, data, size);
        at += size;
        end += (int64_t)size;
        ends[k + 1] = end;
    }
    result = Py_BuildValue("(OOOn)", order, blob, offsets, duplicate);
done:
    PyMem_RawFree(items);
    PyMem_RawFree(tmp);
    Py_XDECREF(order);
    Py_XDECREF(blob);
    Py_XDECREF(offsets);
    PyBuffer_Release(&strip);
    return result;
}

PyObject *kga_suffixes(PyObject *module, PyObject *args) {
    Numbering *table;
    const char *prefix;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "O!y#:suffixes", &kga_NumberingType, &table, &prefix, &size))
        return NULL;
    size_t n = table->count, found = 0, plen = (size_t)size;
    for (size_t i = 0; i < n; i++) {
        const Entry *entry = &table->entries[i];
        found += entry->size >= plen && memcmp(entry->data, prefix, plen) == 0;
    }
    PyObject *numbers = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(found * 4));
    PyObject *rests = numbers ? PyList_New((Py_ssize_t)found) : NULL;
    if (!rests) {
        Py_XDECREF(numbers);
        return NULL;
    }
    int32_t *out = (int32_t *)PyBytes_AS_STRING(numbers);
    size_t k = 0;
    for (size_t i = 0; i < n && k < found; i++) {
        const Entry *entry = &table->entries[i];
        if (entry->size < plen || memcmp(entry->data, prefix, plen) != 0)
            continue;
        PyObject *rest = PyUnicode_DecodeUTF8(entry->data + plen, (Py_ssize_t)(entry->size - plen), NULL);
        if (!rest) {
            Py_DECREF(numbers);
            Py_DECREF(rests);
            return NULL;
        }
        out[k] = (int32_t)i;
        PyList_SET_ITEM(rests, (Py_ssize_t)k, rest);
        k++;
    }
    return Py_BuildValue("(NN)", numbers, rests);
}

/* -- csr ---------------------------------------------------------------------------------------------- */

static inline void put_relation(char *column, size_t at, int itemsize, uint32_t relation) {
    if (itemsize == 1)
        ((uint8_t *)column)[at] = (uint8_t)relation;
    else if (itemsize == 2)
        ((uint16_t *)column)[at] = (uint16_t)relation;
    else
        ((int32_t *)column)[at] = (int32_t)relation;
}

static inline uint32_t get_relation(const char *column, size_t at, int itemsize) {
    if (itemsize == 1)
        return ((const uint8_t *)column)[at];
    if (itemsize == 2)
        return ((const uint16_t *)column)[at];
    return (uint32_t)((const int32_t *)column)[at];
}

/* Counts edges per head, scatters (relation << 32 | tail) into buffer by head, sorts each head's run and drops
   repeats; starts[h] becomes where head h's distinct edges begin (starts[entities]: their count). -1 for a number
   out of range. (No Python object touched: run without the GIL.) */
static int out_edges(const int32_t *heads, const int32_t *rels, const int32_t *tails, size_t n, const int64_t *erank,
                     size_t erank_size, const int64_t *rrank, size_t rrank_size, size_t entities, size_t width,
                     uint64_t *buffer, int64_t *starts) {
    for (size_t i = 0; i < n; i++) {
        int32_t h = heads[i], r = rels[i], t = tails[i];
        if (h < 0 || (size_t)h >= erank_size || t < 0 || (size_t)t >= erank_size || r < 0 || (size_t)r >= rrank_size)
            return -1;
        int64_t hr = erank[h], tr = erank[t], rr = rrank[r];
        if (hr < 0 || (uint64_t)hr >= entities || tr < 0 || (uint64_t)tr >= entities || rr < 0 || (uint64_t)rr >= width)
            return -1;
        starts[hr + 1]++;
    }
    for (size_t h = 0; h < entities; h++)
        starts[h + 1] += starts[h];
    for (size_t i = 0; i < n; i++) { /* starts[h] moves to head h's end, the next one's start */
        int64_t hr = erank[heads[i]];
        buffer[starts[hr]++] = (uint64_t)rrank[rels[i]] << 32 | (uint64_t)erank[tails[i]];
    }
    size_t written = 0, lo = 0;
    for (size_t h = 0; h < entities; h++) { /* head h's edges: buffer[lo:starts[h]], moved down to written */
        size_t hi = (size_t)starts[h];
        starts[h] = (int64_t)written;
        sort_u64(buffer + lo, hi - lo);
        for (size_t k = lo; k < hi; k++)
            if (k == lo || buffer[k] != buffer[k - 1])
                buffer[written++] = buffer[k];
        lo = hi;
    }
    starts[entities] = (int64_t)written;
    return 0;
}

/* The incoming direction of the distinct outgoing edges: per tail, (relation, head) sorted. (No GIL.) */
static void in_edges(const int64_t *out_start, const char *out_rel, const int32_t *out_other, size_t entities,
                     int itemsize, uint64_t *buffer, int64_t *starts, char *in_rel, int32_t *in_other) {
    size_t m = (size_t)out_start[entities];
    for (size_t k = 0; k < m; k++)
        starts[out_other[k] + 1]++;
    for (size_t t = 0; t < entities; t++)
        starts[t + 1] += starts[t];
    for (size_t h = 0; h < entities; h++)
        for (size_t k = (size_t)out_start[h]; k < (size_t)out_start[h + 1]; k++)
            buffer[starts[out_other[k]]++] = (uint64_t)get_relation(out_rel, k, itemsize) << 32 | (uint64_t)h;
    size_t lo = 0;
    for (size_t t = 0; t < entities; t++) { /* tail t's edges: buffer[lo:starts[t]] */
        size_t hi = (size_t)starts[t];
        starts[t] = (int64_t)lo;
        sort_u64(buffer + lo, hi - lo);
        for (size_t k = lo; k < hi; k++) {
            put_relation(in_rel, k, itemsize, (uint32_t)(buffer[k] >> 32));
            in_other[k] = (int32_t)(uint32_t)buffer[k];
        }
        lo = hi;
    }
    starts[entities] = (int64_t)m;
}

static int aligned(const Py_buffer *view, size_t size) {
    return view->len % (Py_ssize_t)size == 0 && (uintptr_t)view->buf % size == 0;
}

PyObject *kga_csr(PyObject *module, PyObject *args) {
    Py_buffer heads, rels, tails, erank, rrank;
    Py_ssize_t entities, width, itemsize;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*nnn:csr", &heads, &rels, &tails, &erank, &rrank, &entities, &width,
                          &itemsize))
        return NULL;
    PyObject *result = NULL, *out_rel = NULL, *out_other = NULL, *out_start = NULL;
    PyObject *in_rel = NULL, *in_other = NULL, *in_start = NULL;
    uint64_t *buffer = NULL;
    int failed = 0;
    if (!aligned(&heads, 4) || !aligned(&rels, 4) || !aligned(&tails, 4) || heads.len != rels.len ||
        heads.len != tails.len || !aligned(&erank, 8) || !aligned(&rrank, 8) || entities < 1 ||
        entities > (Py_ssize_t)1 << 31 || width < 1 || width > (Py_ssize_t)1 << 31 ||
        (itemsize != 1 && itemsize != 2 && itemsize != 4) || (itemsize < 4 && width > (Py_ssize_t)1 << (8 * itemsize))) {
        PyErr_SetString(PyExc_ValueError, "csr: heads, relations, tails: aligned int32 of one length; ranks: aligned "
                                          "int64; 1 <= entities, width <= 2**31; itemsize 1, 2 or 4 holding width");
        goto done;
    }
    size_t n = (size_t)heads.len / 4, e = (size_t)entities;
    buffer = PyMem_RawMalloc((n ? n : 1) * sizeof(uint64_t));
    if (!buffer) {
        PyErr_NoMemory();
        goto done;
    }
    out_start = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((e + 1) * 8));
    in_start = out_start ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((e + 1) * 8)) : NULL;
    if (!in_start)
        goto done;
    int64_t *outs = (int64_t *)PyBytes_AS_STRING(out_start), *ins = (int64_t *)PyBytes_AS_STRING(in_start);
    memset(outs, 0, (e + 1) * 8);
    memset(ins, 0, (e + 1) * 8);
    Py_BEGIN_ALLOW_THREADS;
    failed = out_edges(heads.buf, rels.buf, tails.buf, n, erank.buf, (size_t)erank.len / 8, rrank.buf,
                       (size_t)rrank.len / 8, e, (size_t)width, buffer, outs);
    Py_END_ALLOW_THREADS;
    if (failed) {
        PyErr_SetString(PyExc_ValueError, "csr: a number or rank out of range");
        goto done;
    }
    size_t m = (size_t)outs[e];
    out_rel = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * (size_t)itemsize));
    out_other = out_rel ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * 4)) : NULL;
    in_rel = out_other ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * (size_t)itemsize)) : NULL;
    in_other = in_rel ? PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * 4)) : NULL;
    if (!in_other)
        goto done;
    char *orel = PyBytes_AS_STRING(out_rel), *irel = PyBytes_AS_STRING(in_rel);
    int32_t *oother = (int32_t *)PyBytes_AS_STRING(out_other), *iother = (int32_t *)PyBytes_AS_STRING(in_other);
    Py_BEGIN_ALLOW_THREADS;
    for (size_t k = 0; k < m; k++) {
        put_relation(orel, k, (int)itemsize, (uint32_t)(buffer[k] >> 32));
        oother[k] = (int32_t)(uint32_t)buffer[k];
    }
    in_edges(outs, orel, oother, e, (int)itemsize, buffer, ins, irel, iother);
    Py_END_ALLOW_THREADS;
    result = Py_BuildValue("(OOOOOO)", out_rel, out_other, out_start, in_rel, in_other, in_start);
done:
    PyMem_RawFree(buffer);
    Py_XDECREF(out_rel);
    Py_XDECREF(out_other);
    Py_XDECREF(out_start);
    Py_XDECREF(in_rel);
    Py_XDECREF(in_other);
    Py_XDECREF(in_start);
    PyBuffer_Release(&heads);
    PyBuffer_Release(&rels);
    PyBuffer_Release(&tails);
    PyBuffer_Release(&erank);
    PyBuffer_Release(&rrank);
    return result;
}

/* -- sort_int64 --------------------------------------------------------------------------------------- */

/* Sorts values[0:n] (int64, as unsigned with the sign bit flipped: signed order) by an LSD radix sort, a byte at a
   time, skipping the bytes every value shares; tmp holds n. (No GIL.) */
static void radix_int64(uint64_t *values, uint64_t *tmp, size_t n) {
    static const uint64_t sign = (uint64_t)1 << 63;
    size_t counts[8][256];
    memset(counts, 0, sizeof(counts));
    for (size_t i = 0; i < n; i++) {
        uint64_t value = values[i] ^ sign;
        for (int b = 0; b < 8; b++)
            counts[b][(value >> (8 * b)) & 0xff]++;
    }
    uint64_t *from = values, *to = tmp;
    for (int b = 0; b < 8; b++) {
        if (counts[b][((from[0] ^ sign) >> (8 * b)) & 0xff] == n)
            continue; /* every value has this byte */
        size_t at = 0;
        for (int digit = 0; digit < 256; digit++) {
            size_t count = counts[b][digit];
            counts[b][digit] = at;
            at += count;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t value = from[i];
            to[counts[b][((value ^ sign) >> (8 * b)) & 0xff]++] = value;
        }
        uint64_t *swapped = from;
        from = to;
        to = swapped;
    }
    if (from != values)
        memcpy(values, from, n * sizeof(uint64_t));
}

PyObject *kga_sort_int64(PyObject *module, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    PyObject *result = NULL;
    const char *format = view.format ? view.format : "B";
    if (*format == '@' || *format == '=' || *format == '<')
        format++;
    if (view.itemsize != 8 || (strcmp(format, "q") != 0 && strcmp(format, "l") != 0) || !aligned(&view, 8) ||
        !PY_LITTLE_ENDIAN) {
        PyErr_SetString(PyExc_TypeError, "sort_int64(values): a writable, aligned, C-contiguous native int64 buffer");
        goto done;
    }
    size_t n = (size_t)view.len / 8;
    if (n > 1) {
        uint64_t *tmp = PyMem_RawMalloc(n * sizeof(uint64_t));
        if (!tmp) {
            PyErr_NoMemory();
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS;
        radix_int64(view.buf, tmp, n);
        Py_END_ALLOW_THREADS;
        PyMem_RawFree(tmp);
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&view);
    return result;
}
