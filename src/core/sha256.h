/* SHA-256 of data given in pieces (sha256.c): init, update any number of
 * times, final_hex; the digest equals hymo_sha256_hex of the pieces joined. */
#ifndef HYMO_SHA256_H
#define HYMO_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t n;             /* bytes so far */
    unsigned char part[64]; /* the last, incomplete block */
    size_t fill;
} hymo_sha256;

void hymo_sha256_init(hymo_sha256 *s);
void hymo_sha256_update(hymo_sha256 *s, const void *data, size_t len);
void hymo_sha256_final_hex(hymo_sha256 *s, char out[65]);

#endif
