/* What "a number" is in the model files, the CSV import, the system files,
 * the FMU's parameters and the command line: one parser, hymo_parse_number
 * (strtod's syntax over the whole string, finite), with the few variants
 * the readers document as flags. */
#ifndef HYMO_NUMBER_H
#define HYMO_NUMBER_H

#include <stddef.h>

enum {
    /* only digits, '.', '+', '-', 'e', 'E' (no white space, hex, inf or
     * nan): the model file's plain scalars */
    HYMO_NUMBER_DECIMAL = 1,
    /* white space may follow the number (and a string of white space
     * alone is strtod's 0: the sensors' and the CSV import's readers) */
    HYMO_NUMBER_TRAILING_SPACE = 2,
    /* a value out of double's range (strtod's ERANGE: overflow or
     * underflow) is not a number */
    HYMO_NUMBER_RANGE = 4,
    /* inf and nan are numbers too */
    HYMO_NUMBER_NONFINITE = 8
};

/* 1 and the value in *out if s (not NULL, not empty) is a number with the
 * given flags; else 0 and *out untouched. */
int hymo_parse_number(const char *s, unsigned flags, double *out);

/* The length of the number at the start of s (strtod's longest prefix; 0:
 * none), for a number followed by a unit ("90 deg"). */
size_t hymo_number_length(const char *s);

#endif
