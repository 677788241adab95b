/* The "RTOL[,ATOL]" options through hymo_cosim_option (one parser,
 * hymo_cosim_tol_pair_parse, with per-option bounds and messages):
 * --iterate-tol (RTOL > 0, ATOL >= 0, a message per bad part) and
 * --tol-energy (RTOL >= 0, ATOL > 0 J, one message for any bad part).
 * Every case: the return value, the two tolerances afterwards (unchanged
 * on error; ATOL kept when the value has no comma) and the message. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "hymo/cosim.h"

#define TE " is not RTOL,ATOL (relative tolerance >= 0, absolute tolerance in J > 0)"

typedef struct {
    const char *name, *value;
    int ret;
    double rtol, atol; /* afterwards (start: 0.5, 0.25) */
    const char *message; /* NULL: none */
} tol_case;

static const tol_case cases[] = {
    {"--iterate-tol", "1e-6", 1, 1e-6, 0.25, NULL},
    {"--iterate-tol", "1e-6,1e-9", 1, 1e-6, 1e-9, NULL},
    {"--iterate-tol", "1e-6,0", 1, 1e-6, 0.0, NULL},
    {"--iterate-tol", "0", -1, 0.5, 0.25, "--iterate-tol: '0' must be positive"},
    {"--iterate-tol", "-1,1", -1, 0.5, 0.25, "--iterate-tol: '-1' must be positive"},
    {"--iterate-tol", "", -1, 0.5, 0.25, "--iterate-tol: '' is not a number"},
    {"--iterate-tol", "1,", -1, 0.5, 0.25, "--iterate-tol: '' is not a number"},
    {"--iterate-tol", "1e-6,-1", -1, 0.5, 0.25, "--iterate-tol: '-1' must be >= 0 and finite (0: not checked)"},
    {"--iterate-tol", "1e-2,1e-3,5", -1, 0.5, 0.25, "--iterate-tol: '1e-3,5' is not a number"},
    {"--iterate-tol", "11111111111111111111111111111111111111111111111111111111111111111,1", -1, 0.5, 0.25,
     "--iterate-tol: '11111111111111111111111111111111111111111111111111111111111111111,1' is not RTOL[,ATOL]"},
    {"--tol-energy", "1e-3", 1, 1e-3, 0.25, NULL},
    {"--tol-energy", "1e-3,1e-6", 1, 1e-3, 1e-6, NULL},
    {"--tol-energy", "0,1e-6", 1, 0.0, 1e-6, NULL},
    {"--tol-energy", "-1,1", -1, 0.5, 0.25, "--tol-energy: '-1,1'" TE},
    {"--tol-energy", "1,0", -1, 0.5, 0.25, "--tol-energy: '1,0'" TE},
    {"--tol-energy", "1e-3,x", -1, 0.5, 0.25, "--tol-energy: '1e-3,x'" TE},
    {"--tol-energy", ",1", -1, 0.5, 0.25, "--tol-energy: ',1'" TE},
    {"--tol-energy", "1,", -1, 0.5, 0.25, "--tol-energy: '1,'" TE},
    {"--tol-energy", "1,1,1", -1, 0.5, 0.25, "--tol-energy: '1,1,1'" TE},
    {"--tol-energy", "11111111111111111111111111111111111111111111111111111111111111111,1", -1, 0.5, 0.25,
     "--tol-energy: '11111111111111111111111111111111111111111111111111111111111111111,1'" TE},
};

static void test_tol_pairs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const tol_case *c = &cases[i];
        hymo_cosim_options o;
        memset(&o, 0, sizeof o);
        const int energy = !strcmp(c->name, "--tol-energy");
        double *r = energy ? &o.tol_energy_rel : &o.iterate_rtol, *a = energy ? &o.tol_energy_abs : &o.iterate_atol;
        *r = 0.5, *a = 0.25;
        hymo_error err = {0};
        const int ret = hymo_cosim_option(c->name, c->value, &o, &err);
        print_message("%s %s -> %d %s\n", c->name, c->value, ret, ret < 0 ? err.message : "");
        assert_int_equal(ret, c->ret);
        assert_true(*r == c->rtol);
        assert_true(*a == c->atol);
        if (c->message) assert_string_equal(err.message, c->message);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_tol_pairs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
