/* What "a number" is (src/core/number.h): each flag of hymo_parse_number
 * on the strings where the readers differ (the model file's plain
 * scalars: decimal only; the sensors' and the CSV import's fields: white
 * space after the number; the CSV import: inf and nan; everything but the
 * sensors and the FMU options: no overflow or underflow). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
