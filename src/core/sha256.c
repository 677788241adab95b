/* hymo — SHA-256 (FIPS 180-4 §6.2), used to fingerprint model files.
 * Blocks go through the x86 SHA extensions when the processor has them
 * (checked once with cpuid), otherwise through the portable rounds below;
 * both give the same digest. */
#include "hymo/reference.h"
#include "sha256.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HYMO_SHA_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

static const uint32_t sha256_k[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u,
    0xab1c5ed5u, 0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu,
    0x9bdc06a7u, 0xc19bf174u, 0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu,
    0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau, 0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u,
    0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu,
    0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u, 0xa2bfe8a1u, 0xa81a664bu,
    0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u, 0x19a4c116u,
    0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u,
    0xc67178f2u};

static uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32u - n)); }

/* Processes one 64-byte block into the hash state h[8]. */
static void sha256_block(uint32_t h[8], const unsigned char *block)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++) {
        w[t] = ((uint32_t)block[4 * t] << 24) | ((uint32_t)block[4 * t + 1] << 16) |
               ((uint32_t)block[4 * t + 2] << 8) | (uint32_t)block[4 * t + 3];
    }
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = hh + S1 + ch + sha256_k[t] + w[t];
        uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + maj;
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

#ifdef HYMO_SHA_X86
/* n blocks through the SHA extensions (sha256rnds2 works on the state as
 * ABEF / CDGH halves). */
__attribute__((target("sha,sse4.1,ssse3"))) static void sha256_blocks_x86(uint32_t h[8],
                                                                           const unsigned char *p,
                                                                           size_t n)
{
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)(const void *)&h[0]);
    __m128i s1 = _mm_loadu_si128((const __m128i *)(const void *)&h[4]);
    tmp = _mm_shuffle_epi32(tmp, 0xB1);      /* CDAB */
    s1 = _mm_shuffle_epi32(s1, 0x1B);        /* EFGH */
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8); /* ABEF */
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);     /* CDGH */
    for (; n > 0; n--, p += 64) {
        const __m128i abef = s0, cdgh = s1;
        __m128i m[4];
        for (int g = 0; g < 16; g++) {
            if (g < 4) {
                m[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * g)), mask);
            } else {
                __m128i w = _mm_sha256msg1_epu32(m[g & 3], m[(g + 1) & 3]);
                w = _mm_add_epi32(w, _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4));
                m[g & 3] = _mm_sha256msg2_epu32(w, m[(g + 3) & 3]);
            }
            __m128i msg = _mm_add_epi32(m[g & 3], _mm_loadu_si128((const __m128i *)(const void *)&sha256_k[4 * g]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
            msg = _mm_shuffle_epi32(msg, 0x0E);
            s0 = _mm_sha256rnds2_epu32(s0, s1, msg);
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    tmp = _mm_shuffle_epi32(s0, 0x1B);    /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);     /* DCHG */
    s0 = _mm_blend_epi16(tmp, s1, 0xF0);  /* DCBA */
    s1 = _mm_alignr_epi8(s1, tmp, 8);     /* ABEF */
    _mm_storeu_si128((__m128i *)(void *)&h[0], s0);
    _mm_storeu_si128((__m128i *)(void *)&h[4], s1);
}

/* 1 when the processor has the SHA extensions with SSSE3 and SSE4.1. */
static int have_sha_x86(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c & (1u << 9)) || !(c & (1u << 19))) return 0; /* SSSE3, SSE4.1 */
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b >> 29) & 1u; /* SHA */
}
#endif

/* n consecutive blocks into h. */
static void sha256_blocks(uint32_t h[8], const unsigned char *p, size_t n)
{
#ifdef HYMO_SHA_X86
    static atomic_int sha_x86 = -1; /* -1: not yet asked */
    int use = atomic_load_explicit(&sha_x86, memory_order_relaxed);
    if (use < 0) {
        use = have_sha_x86();
        atomic_store_explicit(&sha_x86, use, memory_order_relaxed);
    }
    if (use) {
        sha256_blocks_x86(h, p, n);
        return;
    }
#endif
    for (; n > 0; n--, p += 64) sha256_block(h, p);
}

void hymo_sha256_init(hymo_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                   0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
    memcpy(s->h, h0, sizeof h0);
    s->n = 0;
    s->fill = 0;
}

void hymo_sha256_update(hymo_sha256 *s, const void *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    s->n += len;
    if (s->fill) { /* complete the block begun */
        size_t k = 64 - s->fill < len ? 64 - s->fill : len;
        memcpy(s->part + s->fill, p, k);
        s->fill += k, p += k, len -= k;
        if (s->fill < 64) return;
        sha256_blocks(s->h, s->part, 1);
        s->fill = 0;
    }
    sha256_blocks(s->h, p, len / 64);
    p += len / 64 * 64;
    len %= 64;
    memcpy(s->part, p, len);
    s->fill = len;
}

void hymo_sha256_final_hex(hymo_sha256 *s, char out[65])
{
    /* Padding: 0x80, zeros, 64-bit big-endian message length in bits. */
    unsigned char tail[128];
    memset(tail, 0, sizeof tail);
    const size_t rest = s->fill;
    if (rest > 0) memcpy(tail, s->part, rest);
    tail[rest] = 0x80;
    size_t tail_len = (rest + 1 + 8 <= 64) ? 64 : 128;
    uint64_t bits = s->n * 8u;
    for (int i = 0; i < 8; i++) {
        tail[tail_len - 1 - (size_t)i] = (unsigned char)(bits >> (8 * i));
    }
    sha256_blocks(s->h, tail, tail_len / 64);

    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 4; j++) {
            unsigned byte = (s->h[i] >> (24 - 8 * j)) & 0xffu;
            out[8 * i + 2 * j] = hex[byte >> 4];
            out[8 * i + 2 * j + 1] = hex[byte & 0xfu];
        }
    }
    out[64] = '\0';
}

void hymo_sha256_hex(const void *data, size_t len, char out[65])
{
    hymo_sha256 s;
    hymo_sha256_init(&s);
    hymo_sha256_update(&s, data, len);
    hymo_sha256_final_hex(&s, out);
}
