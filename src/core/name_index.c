/* A name -> index table (name_index.h). */
#include "name_index.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SEP '\x1f'
#define CHUNK 65536 /* bytes of key text per arena block (longer keys: a block of their own) */

static uint32_t hash2(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)a; *p; ++p) h = (h ^ *p) * 1099511628211ULL;
    if (b) {
        h = (h ^ (unsigned char)SEP) * 1099511628211ULL;
        for (const unsigned char *p = (const unsigned char *)b; *p; ++p) h = (h ^ *p) * 1099511628211ULL;
    }
    return (uint32_t)(h ^ (h >> 29)); /* the low bits, which pick the slot, see the high ones */
}

/* key equals a (b NULL) or a SEP b */
static int equal2(const char *key, const char *a, const char *b)
{
    const size_t la = strlen(a);
    if (strncmp(key, a, la) != 0) return 0;
    if (!b) return key[la] == '\0';
    return key[la] == SEP && strcmp(key + la + 1, b) == 0;
}

void hymo_name_index_init(hymo_name_index *ix) { memset(ix, 0, sizeof *ix); }

void hymo_name_index_free(hymo_name_index *ix)
{
    while (ix->blocks) {
        char *next;
        memcpy(&next, ix->blocks, sizeof next);
        free(ix->blocks);
        ix->blocks = next;
    }
    free(ix->slots);
    memset(ix, 0, sizeof *ix);
}

/* The slot of (a, b): its own, or the empty one where it would go. */
static size_t slot_of(const hymo_name_index *ix, const char *a, const char *b, uint32_t h)
{
    size_t i = (size_t)h & (ix->cap - 1);
    while (ix->slots[i].key && (ix->slots[i].hash != h || !equal2(ix->slots[i].key, a, b))) i = (i + 1) & (ix->cap - 1);
    return i;
}

static int grow(hymo_name_index *ix)
{
    const size_t cap = ix->cap ? 2 * ix->cap : 64;
    hymo_name_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return 0;
    for (size_t i = 0; i < ix->cap; ++i) {
        if (!ix->slots[i].key) continue;
        size_t j = (size_t)ix->slots[i].hash & (cap - 1);
        while (slots[j].key) j = (j + 1) & (cap - 1);
        slots[j] = ix->slots[i];
    }
    free(ix->slots);
    ix->slots = slots, ix->cap = cap;
    return 1;
}

/* n bytes of key text from the arena (blocks chained through their first
 * pointer), NULL when out of memory. */
static char *key_space(hymo_name_index *ix, size_t n)
{
    if (n > ix->room) {
        const size_t size = sizeof(char *) + (n > CHUNK ? n : CHUNK);
        char *block = malloc(size);
        if (!block) return NULL;
        memcpy(block, &ix->blocks, sizeof ix->blocks);
        ix->blocks = block;
        ix->next = block + sizeof(char *);
        ix->room = size - sizeof(char *);
    }
    char *k = ix->next;
    ix->next += n;
    ix->room -= n;
    return k;
}

int hymo_name_index_put2(hymo_name_index *ix, const char *a, const char *b, int val)
{
    if (2 * (ix->n + 1) > ix->cap && !grow(ix)) return -2;
    const uint32_t h = hash2(a, b);
    const size_t i = slot_of(ix, a, b, h);
    if (ix->slots[i].key) return ix->slots[i].val;
    const size_t la = strlen(a), lb = b ? strlen(b) + 1 : 0;
    char *k = key_space(ix, la + lb + 1);
    if (!k) return -2;
    memcpy(k, a, la);
    if (b) {
        k[la] = SEP;
        memcpy(k + la + 1, b, lb);
    } else {
        k[la] = '\0';
    }
    ix->slots[i] = (hymo_name_slot){.hash = h, .key = k, .val = val};
    ix->n++;
    return -1;
}

int hymo_name_index_get2(const hymo_name_index *ix, const char *a, const char *b)
{
    if (!ix->cap) return -1;
    const uint32_t h = hash2(a, b);
    const size_t i = slot_of(ix, a, b, h);
    return ix->slots[i].key ? ix->slots[i].val : -1;
}

int hymo_name_index_put(hymo_name_index *ix, const char *key, int val) { return hymo_name_index_put2(ix, key, NULL, val); }
int hymo_name_index_get(const hymo_name_index *ix, const char *key) { return hymo_name_index_get2(ix, key, NULL); }
