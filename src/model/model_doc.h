/* The model loader's YAML document (src/model/model_load.c composes it
 * from libyaml's events): the nodes of one document in one array, node
 * ids 1-based as in libyaml (0 = none), a node's fields named as in
 * libyaml's yaml_node_t but only those the loader reads: type, the
 * scalar's text (NUL-terminated), length and style, the items of a
 * sequence, the key/value id pairs of a mapping, and the line of its
 * start (0-based). */
#ifndef HYMO_MODEL_DOC_H
#define HYMO_MODEL_DOC_H

#include <stdint.h>

#include <yaml.h>

typedef struct {
    union {
        struct {
            yaml_char_t *value;
            uint32_t length;
            uint8_t style; /* yaml_scalar_style_t */
        } scalar;
        struct {
            struct {
                int *start, *top;
            } items;
        } sequence;
        struct {
            struct {
                yaml_node_pair_t *start, *top;
            } pairs;
        } mapping;
    } data;
    struct {
        uint32_t line;
    } start_mark;
    uint8_t type; /* yaml_node_type_t */
} hymo_ynode;

typedef struct {
    struct {
        hymo_ynode *start, *top, *end;
    } nodes;
} hymo_ydoc;

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
