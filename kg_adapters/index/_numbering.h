/* What the two sources of the _numbering extension share (_numbering.c: the table and the module;
   _numbering_split.c: the chunk splits that number lines through it; _numbering_order.c: the index write's sorts). */
#ifndef KGA_NUMBERING_H
#define KGA_NUMBERING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define WIDEST_IRI 128

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

extern PyTypeObject kga_NumberingType;

/* The keyed hash of p[:n] (SipHash-1-3, keyed per process). */
uint64_t kga_hash_bytes(const char *p, size_t n);

/* The number of key p[:n] whose hash is h; when absent, -1 (add == 0) or a new number (add != 0); -2 with an
   error set. */
Py_ssize_t kga_find_or_add_hashed(Numbering *self, const char *p, size_t n, uint64_t h, int add);

PyObject *kga_split_numbered(PyObject *module, PyObject *args);
PyObject *kga_split_literals(PyObject *module, PyObject *args);
PyObject *kga_sorted_ids(PyObject *module, PyObject *args);
PyObject *kga_suffixes(PyObject *module, PyObject *args);
PyObject *kga_csr(PyObject *module, PyObject *args);
PyObject *kga_sort_int64(PyObject *module, PyObject *arg);

#endif
