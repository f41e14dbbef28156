/* The chunk splits of the _numbering extension (see _numbering.c): the IRI-to-IRI lines and the simple literal
   lines of an N-Triples chunk found and numbered through the tables, in the order the Python path numbers. */

#include "_numbering.h"

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
                ahead->hash = kga_hash_bytes(key->p, key->n);
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
            number = kga_find_or_add_hashed(table, keys[i].p, keys[i].n, ahead->hash, 1);
            if (number < 0)
                return -1;
        }
        out[i] = (int32_t)number;
    }
    return 0;
}

/* The keys number_keys is handed at once: its buffers stay this size whatever the chunk's (a Key or a pending
   literal line per line would be a transient as large as the chunk again). */
#define KEY_WINDOW 65536

/* Numbers the subjects (objects == 0) or the objects of lines into out[], the relations too with the
   subjects, KEY_WINDOW lines at a time; keys: room for KEY_WINDOW keys. */
static int number_column(Numbering *entities, Numbering *relations, const char *text, const Lines *lines, int objects,
                         int32_t *out, int32_t *relation_out, Key *keys) {
    for (Py_ssize_t first = 0; first < lines->count; first += KEY_WINDOW) {
        Py_ssize_t size = lines->count - first < KEY_WINDOW ? lines->count - first : KEY_WINDOW;
        const Line *window = lines->lines + first;
        for (Py_ssize_t i = 0; i < size; i++)
            keys[i] = objects ? (Key){text + window[i].gt2 + 3, (size_t)(window[i].gt3 - window[i].gt2 - 3)}
                              : (Key){text + window[i].start + 1, (size_t)(window[i].gt1 - window[i].start - 1)};
        if (number_keys(entities, keys, size, out + first) < 0)
            return -1;
        if (objects)
            continue;
        for (Py_ssize_t i = 0; i < size; i++)
            keys[i] = (Key){text + window[i].gt1 + 3, (size_t)(window[i].gt2 - window[i].gt1 - 3)};
        if (number_keys(relations, keys, size, relation_out + first) < 0)
            return -1;
    }
    return 0;
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

PyObject *kga_split_numbered(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer buffer;
    Numbering *entities, *relations;
    if (!PyArg_ParseTuple(args, "y*O!O!:split_numbered", &buffer, &kga_NumberingType, &entities, &kga_NumberingType,
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
    keys = PyMem_RawMalloc(KEY_WINDOW * sizeof(Key));
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
            !(PyTuple_Check(found) && PyTuple_GET_SIZE(found) == 2 && PyLong_Check(PyTuple_GET_ITEM(found, 0)))) {
            PyErr_SetString(PyExc_TypeError, "decide(suffix) must return (tag number, check or None) or None");
            Py_CLEAR(found);
        }
        if (found && PyDict_SetItem(decisions, suffix, found) < 0)
            Py_CLEAR(found);
    }
    Py_DECREF(suffix);
    return found;
}

/* An accepted literal line of split_literals, numbered with the next KEY_WINDOW - 1 (or the chunk's last). */
typedef struct {
    Key subject, relation;
} Pending;

/* A growing array of 4-byte numbers (the accepted rows' tags and value lengths). */
typedef struct {
    uint32_t *items;
    Py_ssize_t count, capacity;
} Column;

static int column_add(Column *column, uint32_t item) {
    if (column->count == column->capacity) {
        Py_ssize_t capacity = column->capacity ? column->capacity * 2 : KEY_WINDOW;
        uint32_t *grown = PyMem_RawRealloc(column->items, (size_t)capacity * sizeof(uint32_t));
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        column->items = grown;
        column->capacity = capacity;
    }
    column->items[column->count++] = item;
    return 0;
}

/* The tag number of a decision (decision_of checked that it is an int): -1 with an error set when it is not a
   non-negative int32. */
static long tag_number(PyObject *decision) {
    long number = PyLong_AsLong(PyTuple_GET_ITEM(decision, 0));
    if (number == -1 && PyErr_Occurred())
        return -1;
    if (number < 0 || number > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "decide(suffix): a tag number is a non-negative int32");
        return -1;
    }
    return number;
}

/* The accepted literal lines so far: pending[:count] not numbered yet; nodes[:numbered] and rels[:numbered]
   the numbers of those that are. */
typedef struct {
    Pending *pending;
    Key *keys; /* room for KEY_WINDOW */
    Py_ssize_t count;
    int32_t *nodes, *rels;
    Py_ssize_t numbered, capacity;
} Accepted;

/* Numbers the pending lines (their subjects, then their predicates: each table in line order, as the Python path
   numbers) and empties them. 0, or -1 with an error set. */
static int number_pending(Numbering *entities, Numbering *relations, Accepted *accepted) {
    Py_ssize_t count = accepted->count;
    if (accepted->numbered + count > accepted->capacity) {
        Py_ssize_t capacity = accepted->capacity ? accepted->capacity : KEY_WINDOW;
        while (capacity < accepted->numbered + count)
            capacity *= 2;
        int32_t *nodes = PyMem_RawRealloc(accepted->nodes, (size_t)capacity * 4);
        if (nodes)
            accepted->nodes = nodes;
        int32_t *rels = PyMem_RawRealloc(accepted->rels, (size_t)capacity * 4);
        if (rels)
            accepted->rels = rels;
        if (!nodes || !rels) {
            PyErr_NoMemory();
            return -1;
        }
        accepted->capacity = capacity;
    }
    int32_t *nodes = accepted->nodes + accepted->numbered, *rels = accepted->rels + accepted->numbered;
    for (Py_ssize_t i = 0; i < count; i++)
        accepted->keys[i] = accepted->pending[i].subject;
    if (number_keys(entities, accepted->keys, count, nodes) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < count; i++)
        accepted->keys[i] = accepted->pending[i].relation;
    if (number_keys(relations, accepted->keys, count, rels) < 0)
        return -1;
    accepted->numbered += count;
    accepted->count = 0;
    return 0;
}

PyObject *kga_split_literals(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer buffer;
    Numbering *entities, *relations;
    PyObject *decide;
    if (!PyArg_ParseTuple(args, "y*O!O!O:split_literals", &buffer, &kga_NumberingType, &entities, &kga_NumberingType,
                          &relations, &decide))
        return NULL;
    const char *text = buffer.buf;
    Py_ssize_t size = buffer.len, kept_size = 0, refused_size = 0;
    char *kept = PyMem_RawMalloc((size_t)size + 1), *refused = PyMem_RawMalloc((size_t)size * 2 + 1);
    char *values = PyMem_RawMalloc((size_t)size + 1); /* the accepted values, one after the other */
    Py_ssize_t values_size = 0;
    Accepted accepted = {PyMem_RawMalloc(KEY_WINDOW * sizeof(Pending)), PyMem_RawMalloc(KEY_WINDOW * sizeof(Key)), 0,
                         NULL, NULL, 0, 0};
    Column tags = {0}, lengths = {0};
    PyObject *decisions = PyDict_New(), *result = NULL, *last_decision = NULL;
    PyObject *node_bytes = NULL, *rel_bytes = NULL, *tag_bytes = NULL, *length_bytes = NULL, *value_bytes = NULL;
    PyObject *rest = NULL;
    const char *last_suffix = NULL;
    Py_ssize_t last_suffix_size = 0;
    long last_tag = 0;
    if (!kept || !refused || !values || !accepted.pending || !accepted.keys) {
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
                if (decision != Py_None && (last_tag = tag_number(decision)) < 0)
                    goto done;
                last_decision = decision;
                last_suffix = text + spans[6];
                last_suffix_size = suffix_size;
            }
        }
        int taken = matched && decision != Py_None;
        if (taken && PyTuple_GET_ITEM(decision, 1) != Py_None) {
            PyObject *value = PyBytes_FromStringAndSize(text + spans[4], spans[5] - spans[4]);
            if (!value)
                goto done;
            PyObject *verdict = PyObject_CallOneArg(PyTuple_GET_ITEM(decision, 1), value);
            Py_DECREF(value);
            int ok = verdict ? PyObject_IsTrue(verdict) : -1;
            Py_XDECREF(verdict);
            if (ok < 0)
                goto done;
            taken = ok;
        }
        if (taken) {
            Py_ssize_t value_size = spans[5] - spans[4];
            if (value_size > (Py_ssize_t)UINT32_MAX) {
                PyErr_SetString(PyExc_ValueError, "a literal value of 4 GiB or more cannot be indexed");
                goto done;
            }
            if ((accepted.count == KEY_WINDOW && number_pending(entities, relations, &accepted) < 0) ||
                column_add(&tags, (uint32_t)last_tag) < 0 || column_add(&lengths, (uint32_t)value_size) < 0)
                goto done;
            memcpy(values + values_size, text + spans[4], (size_t)value_size); /* within the text: fits */
            values_size += value_size;
            accepted.pending[accepted.count++] = (Pending){{text + spans[0], (size_t)(spans[1] - spans[0])},
                                                           {text + spans[2], (size_t)(spans[3] - spans[2])}};
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
    if (number_pending(entities, relations, &accepted) < 0)
        goto done;
    node_bytes = PyBytes_FromStringAndSize((const char *)accepted.nodes, accepted.numbered * 4);
    rel_bytes = PyBytes_FromStringAndSize((const char *)accepted.rels, accepted.numbered * 4);
    tag_bytes = PyBytes_FromStringAndSize((const char *)tags.items, tags.count * 4);
    length_bytes = PyBytes_FromStringAndSize((const char *)lengths.items, lengths.count * 4);
    value_bytes = PyBytes_FromStringAndSize(values, values_size);
    if (!node_bytes || !rel_bytes || !tag_bytes || !length_bytes || !value_bytes)
        goto done;
    rest = PyBytes_FromStringAndSize(NULL, kept_size + refused_size);
    if (!rest)
        goto done;
    memcpy(PyBytes_AS_STRING(rest), kept, (size_t)kept_size);
    memcpy(PyBytes_AS_STRING(rest) + kept_size, refused, (size_t)refused_size);
    result = PyTuple_Pack(6, node_bytes, rel_bytes, tag_bytes, length_bytes, value_bytes, rest);
done:
    PyMem_RawFree(accepted.pending);
    PyMem_RawFree(accepted.keys);
    PyMem_RawFree(accepted.nodes);
    PyMem_RawFree(accepted.rels);
    PyMem_RawFree(kept);
    PyMem_RawFree(refused);
    PyMem_RawFree(values);
    PyMem_RawFree(tags.items);
    PyMem_RawFree(lengths.items);
    Py_XDECREF(decisions);
    Py_XDECREF(node_bytes);
    Py_XDECREF(rel_bytes);
    Py_XDECREF(tag_bytes);
    Py_XDECREF(length_bytes);
    Py_XDECREF(value_bytes);
    Py_XDECREF(rest);
    PyBuffer_Release(&buffer);
    return result;
}

