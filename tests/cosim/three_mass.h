/* Seed 004's linear test model, shared by the tests of the master
 * (test_stability.c, test_iterate.c, test_master_checkpoint.c): a
 * three-mass oscillator ground-k1-m1-k2-m2-k3-m3-k4-ground, a damper
 * beside every spring, all masses 1 kg, split at the spring k3 into
 * system I (m1, m2; input x3, v3; output x2, v2) and system II (m3; input
 * x2, v2; output x3, v3); each side evaluates the coupling spring itself. */
#ifndef HYMO_TEST_THREE_MASS_H
#define HYMO_TEST_THREE_MASS_H

#include "hymo/linear.h"

#define K 1.0e4 /* N/m */
#define C 20.0  /* N s/m: modal damping ratios ~0.04-0.14 */

/* system I: x = (x1, v1, x2, v2), u = (x3, v3), y = (x2, v2) */
static const double AI[16] = {0, 1, 0, 0,                 /* */
                              -2 * K, -2 * C, K, C,       /* m1 = 1 */
                              0, 0, 0, 1,                 /* */
                              K, C, -2 * K, -2 * C};      /* m2 = 1, k3/c3 to the input */
static const double BI[8] = {0, 0, 0, 0, 0, 0, K, C};
static const double CI[8] = {0, 0, 1, 0, 0, 0, 0, 1};
/* system II: x = (x3, v3), u = (x2, v2), y = (x3, v3) */
static const double AII[4] = {0, 1, -2 * K, -2 * C}; /* m3 = 1, k3 + k4 */
static const double BII[4] = {0, 0, K, C};
static const double CII[4] = {1, 0, 0, 1};

/* I's outputs drive II's inputs and the other way round */
static const hymo_link LINKS[4] = {{0, 0, 1, 0}, {0, 1, 1, 1}, {1, 0, 0, 0}, {1, 1, 0, 1}};
/* a start away from rest */
static const double X0I[4] = {1e-3, 0.0, -2e-3, 0.1}, X0II[2] = {5e-4, -0.05};

#endif
