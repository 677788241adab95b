/* What "a number" is (src/core/number.h): each flag of hymo_parse_number
 * on the strings where the readers differ (the model file's plain
 * scalars: decimal only; the sensors' and the CSV import's fields: white
 * space after the number; the CSV import: inf and nan; everything but the
 * sensors and the FMU options: no overflow or underflow); short decimals
 * give strtod's value bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "number.h"

enum { DEC = HYMO_NUMBER_DECIMAL, WS = HYMO_NUMBER_TRAILING_SPACE, RNG = HYMO_NUMBER_RANGE, NF = HYMO_NUMBER_NONFINITE };

/* the readers' flags */
static const unsigned readers[] = {DEC | RNG, WS, WS | RNG | NF, RNG, 0};
#define N_READERS (sizeof readers / sizeof readers[0])

typedef struct {
    const char *s;
    int ok[N_READERS]; /* accepted by reader r */
    double v;          /* the value where accepted (NAN: a NaN) */
} case_t;

static const case_t cases[] = {
    {"1.5", {1, 1, 1, 1, 1}, 1.5},
    {"+2e3", {1, 1, 1, 1, 1}, 2000.0},
    {"-0.25E-1", {1, 1, 1, 1, 1}, -0.025},
    {" 1.5", {0, 1, 1, 1, 1}, 1.5},
    {"1.5 ", {0, 1, 1, 0, 0}, 1.5},
    {"1.5\t\n", {0, 1, 1, 0, 0}, 1.5},
    {"0x10", {0, 1, 1, 1, 1}, 16.0},
    {"inf", {0, 0, 1, 0, 0}, INFINITY},
    {"nan", {0, 0, 1, 0, 0}, NAN},
    {"1e400", {0, 0, 0, 0, 0}, 0.0},
    {"1e-400", {0, 1, 0, 0, 1}, 0.0},
    {"", {0, 0, 0, 0, 0}, 0.0},
    {" ", {0, 1, 1, 0, 0}, 0.0}, /* white space alone: strtod's 0 where white space may follow */
    {" \t", {0, 1, 1, 0, 0}, 0.0},
    {" x", {0, 0, 0, 0, 0}, 0.0},
    {"abc", {0, 0, 0, 0, 0}, 0.0},
    {"1.5x", {0, 0, 0, 0, 0}, 0.0},
    {"1,5", {0, 0, 0, 0, 0}, 0.0},
    {"e5", {0, 0, 0, 0, 0}, 0.0},
};

static void test_flags(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (size_t r = 0; r < N_READERS; ++r) {
            double v = 42.0;
            const int ok = hymo_parse_number(cases[c].s, readers[r], &v);
            if (ok != cases[c].ok[r]) fail_msg("'%s' with flags %u: %d, expected %d", cases[c].s, readers[r], ok, cases[c].ok[r]);
            if (!ok) {
                assert_true(v == 42.0); /* untouched */
                continue;
            }
            if (isnan(cases[c].v))
                assert_true(isnan(v));
            else
                assert_true(v == cases[c].v);
        }
    double v;
    assert_int_equal(hymo_parse_number(NULL, 0, &v), 0);
}

/* Short decimals (read without strtod) against strtod, bit for bit: random
 * significands of 1 to 20 digits with a point anywhere, exponents from -30
 * to 30, signs, leading zeros, the edges 2^53 and 1e22. */
static void same_as_strtod(const char *s)
{
    double v = 42.0;
    char *end = NULL;
    const double w = strtod(s, &end);
    const int ok = hymo_parse_number(s, DEC, &v);
    if (!ok) fail_msg("'%s' not read", s);
    if (memcmp(&v, &w, sizeof v) != 0) fail_msg("'%s': %.17g, strtod %.17g", s, v, w);
}

static void test_strtod(void **state)
{
    (void)state;
    static const char *edges[] = {"0", "-0", "+0", "-0.0e5", "9007199254740992", "9007199254740993",
                                  "9007199254740991e22", "1e22", "1e23", "1e-22", "123456789012345678e-22",
                                  "0.1", "0.3", "5.", ".5", "007", "1.7976931348623157e308", "4.9e-324",
                                  "2.2250738585072014e-308", "0.000000000000000000001"};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; ++i) same_as_strtod(edges[i]);
    unsigned long long x = 88172645463325252ULL;
    for (int k = 0; k < 2000000; ++k) {
        char s[64];
        size_t n = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (x & 1) s[n++] = (x & 2) ? '-' : '+';
        const int nd = 1 + (int)((x >> 2) % 20), point = (int)((x >> 8) % (unsigned)(nd + 2)) - 1;
        unsigned long long y = x;
        for (int d = 0; d < nd; ++d) {
            if (d == point) s[n++] = '.';
            y = y * 6364136223846793005ULL + 1442695040888963407ULL;
            s[n++] = (char)('0' + (y >> 33) % 10);
        }
        if ((x >> 16) & 1) n += (size_t)snprintf(s + n, sizeof s - n, "%c%d", (x >> 17) & 1 ? 'e' : 'E', (int)((x >> 20) % 61) - 30);
        s[n] = '\0';
        same_as_strtod(s);
    }
}

static void test_length(void **state)
{
    (void)state;
    assert_int_equal(hymo_number_length("90 deg"), 2);
    assert_int_equal(hymo_number_length("-1.5e2rad"), 6);
    assert_int_equal(hymo_number_length("deg"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_length),
        cmocka_unit_test(test_strtod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
