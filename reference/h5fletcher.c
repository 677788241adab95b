/* The Fletcher-32 checksum of HDF5's Fletcher32 filter (h5util.h). */
#include "h5util.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define FOLD(x) (((x) & 0xffffu) + ((x) >> 16))

/* The sums of one block of m words (m <= 360): A = sum of w_k and
 * W = sum of (m - k) w_k, k = 0..m-1, modulo 2^32 (HDF5's sums are 32-bit;
 * a block of 360 words never exceeds them, and the ring arithmetic makes
 * the order of the additions irrelevant). */
static void block_sums(const unsigned char *p, size_t m, uint32_t *a_out, uint32_t *w_out)
{
    uint32_t a = 0, w = 0;
    size_t k = 0;
#ifdef __SSE2__
    const size_t m8 = m & ~(size_t)7;
    if (m8 > 0) {
        /* lanes j = 0..7 of 8 words per step: after n steps
         * A_j = sum_i w_{i,j}, B_j = sum_i (n - 1 - i) w_{i,j}, so that
         * sum_k (8n - k) w_k = 8 sum_j B_j + sum_j (8 - j) A_j */
        const __m128i zero = _mm_setzero_si128();
        __m128i alo = zero, ahi = zero, blo = zero, bhi = zero;
        for (; k < m8; k += 8) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 2 * k));
            v = _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8)); /* big-endian words */
            blo = _mm_add_epi32(blo, alo);
            bhi = _mm_add_epi32(bhi, ahi);
            alo = _mm_add_epi32(alo, _mm_unpacklo_epi16(v, zero));
            ahi = _mm_add_epi32(ahi, _mm_unpackhi_epi16(v, zero));
        }
        uint32_t la[8], lb[8];
        _mm_storeu_si128((__m128i *)(void *)la, alo);
        _mm_storeu_si128((__m128i *)(void *)(la + 4), ahi);
        _mm_storeu_si128((__m128i *)(void *)lb, blo);
        _mm_storeu_si128((__m128i *)(void *)(lb + 4), bhi);
        uint32_t sa = 0, sb = 0, sw = 0;
        for (int j = 0; j < 8; ++j) sa += la[j], sb += lb[j], sw += (uint32_t)(8 - j) * la[j];
        a = sa;
        w = 8u * sb + sw; /* relative to the m8 words */
    }
#endif
    /* the remaining words, one at a time: with K words done,
     * W_{K+1} = W_K + A_{K+1} */
    for (; k < m; ++k) {
        a += (uint32_t)p[2 * k] << 8 | p[2 * k + 1];
        w += a;
    }
    *a_out = a;
    *w_out = w;
}

uint32_t hymo_fletcher32(const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t words = n / 2;
    uint32_t sum1 = 0, sum2 = 0;
    while (words > 0) {
        const size_t m = words > 360 ? 360 : words;
        uint32_t a, w;
        block_sums(p, m, &a, &w);
        /* word by word: sum1 += w_k, sum2 += sum1 */
        sum2 += (uint32_t)m * sum1 + w;
        sum1 += a;
        sum1 = FOLD(sum1);
        sum2 = FOLD(sum2);
        p += 2 * m;
        words -= m;
    }
    if (n % 2) {
        sum1 += (uint32_t)p[0] << 8;
        sum2 += sum1;
        sum1 = FOLD(sum1);
        sum2 = FOLD(sum2);
    }
    sum1 = FOLD(sum1);
    sum2 = FOLD(sum2);
    return sum2 << 16 | sum1;
}

