/* A name -> index table (open addressing, FNV-1a): the model loader's
 * lookups of bodies, joints, points, nodes and elements by name in
 * expected constant time.  Keys are copied into blocks the table owns;
 * each slot (16 bytes) keeps the low 32 bits of its key's hash, so a probe
 * compares text only on equal hashes. */
#ifndef HYMO_NAME_INDEX_H
#define HYMO_NAME_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *key; /* NULL: empty */
    uint32_t hash;
    int val;
} hymo_name_slot;

typedef struct {
    hymo_name_slot *slots; /* cap slots: a probe reads one slot's cache line */
    size_t cap, n;
    char *blocks; /* the key text blocks, chained */
    char *next;   /* free space in the newest block */
    size_t room;
} hymo_name_index;

/* An empty table (no allocation until the first put). */
void hymo_name_index_init(hymo_name_index *ix);
void hymo_name_index_free(hymo_name_index *ix);
/* Adds key -> val.  Returns -1 when added, the value already stored when
 * the key is there (the table unchanged), -2 when out of memory. */
int hymo_name_index_put(hymo_name_index *ix, const char *key, int val);
/* The value of key, -1 when absent. */
int hymo_name_index_get(const hymo_name_index *ix, const char *key);
/* The same for the key "a\x1fb" (two names), without building it. */
int hymo_name_index_get2(const hymo_name_index *ix, const char *a, const char *b);
int hymo_name_index_put2(hymo_name_index *ix, const char *a, const char *b, int val);

#endif
