/* What "a number" is (number.h). */
#include "number.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* The common short decimals ("2", "-0.04", "2.0e-5") without strtod: the
 * whole string is [+-]digits[.digits][(e|E)[+-]digits] with a significand m
 * of at most 2^53 and a power of ten e of at most 22 either way, so m and
 * 10^|e| are exact doubles and one multiplication or division rounds the
 * same as strtod's correctly rounded result.  0 when s is anything else
 * (strtod decides). */
static int exact_decimal(const char *s, double *out)
{
    static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *p = s;
    const int neg = *p == '-';
    if (*p == '-' || *p == '+') p++;
    unsigned long long m = 0;
    int digits = 0, scale = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (digits >= 19) return 0;
        m = 10 * m + (unsigned)(*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits++, scale--) {
            if (digits >= 19) return 0;
            m = 10 * m + (unsigned)(*p - '0');
        }
    }
    if (digits == 0) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        const int eneg = *p == '-';
        if (*p == '-' || *p == '+') p++;
        int e = 0, ed = 0;
        for (; *p >= '0' && *p <= '9'; p++, ed++) {
            if (ed >= 4) return 0;
            e = 10 * e + (*p - '0');
        }
        if (ed == 0) return 0;
        scale += eneg ? -e : e;
    }
    if (*p || m > (1ULL << 53) || scale > 22 || scale < -22) return 0;
    double v = (double)m;
    v = scale >= 0 ? v * p10[scale] : v / p10[-scale];
    *out = neg ? -v : v;
    return 1;
}

int hymo_parse_number(const char *s, unsigned flags, double *out)
{
    if (!s || !*s) return 0;
    if (exact_decimal(s, out)) return 1;
    if (flags & HYMO_NUMBER_DECIMAL)
        for (const char *p = s; *p; p++)
            if (!(isdigit((unsigned char)*p) || *p == '.' || *p == '-' || *p == '+' || *p == 'e' || *p == 'E'))
                return 0;
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (flags & HYMO_NUMBER_TRAILING_SPACE)
        while (isspace((unsigned char)*end)) end++;
    if (end == s || *end) return 0;
    if ((flags & HYMO_NUMBER_RANGE) && errno == ERANGE) return 0;
    if (!(flags & HYMO_NUMBER_NONFINITE) && !isfinite(v)) return 0;
    *out = v;
    return 1;
}

size_t hymo_number_length(const char *s)
{
    char *end = NULL;
    (void)strtod(s, &end);
    return (size_t)(end - s);
}
