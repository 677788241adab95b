/* The model loader's YAML document (src/model/model_load.c composes it
 * from libyaml's events): the nodes of one document in one array, node
 * ids 1-based as in libyaml (0 = none).  A node keeps only what the loader
 * reads, in 16 bytes: its type, the line of its start (0-based), and a
 * scalar's text (NUL-terminated), length and style, or a sequence's item
 * ids, or a mapping's key/value id pairs, with their count (n; an empty
 * collection's array is NULL). */
#ifndef HYMO_MODEL_DOC_H
#define HYMO_MODEL_DOC_H

#include <stdint.h>

#include <yaml.h>

/* The largest scalar length or collection count a node holds (n's width);
 * the composer refuses a larger one. */
#define HYMO_YNODE_N_MAX ((1u << 27) - 1u)

typedef struct {
    union {
        yaml_char_t *value;      /* scalar */
        int *items;              /* sequence */
        yaml_node_pair_t *pairs; /* mapping */
    } data;
    uint32_t line;
    unsigned type : 2;  /* yaml_node_type_t */
    unsigned style : 3; /* yaml_scalar_style_t (scalars) */
    unsigned n : 27;    /* a scalar's length, a sequence's items, a mapping's pairs */
} hymo_ynode;

typedef struct {
    struct {
        hymo_ynode *start, *top, *end;
    } nodes;
} hymo_ydoc;

/* One past the last item of sequence n, one past the last pair of mapping n. */
static inline int *hymo_ynode_items_end(const hymo_ynode *n) { return n->n ? n->data.items + n->n : n->data.items; }
static inline yaml_node_pair_t *hymo_ynode_pairs_end(const hymo_ynode *n)
{
    return n->n ? n->data.pairs + n->n : n->data.pairs;
}

/* Node `id` (1-based) of the document, or NULL. */
static inline hymo_ynode *hymo_ydoc_node(const hymo_ydoc *d, int id)
{
    return id > 0 && d->nodes.start && d->nodes.start + id <= d->nodes.top ? d->nodes.start + id - 1 : NULL;
}

/* The document's root (its first node), or NULL when it is empty. */
static inline hymo_ynode *hymo_ydoc_root(const hymo_ydoc *d)
{
    return d->nodes.start && d->nodes.top > d->nodes.start ? d->nodes.start : NULL;
}

#endif
