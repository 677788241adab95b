/* What "a number" is (number.h). */
#include "number.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

int hymo_parse_number(const char *s, unsigned flags, double *out)
{
    if (!s || !*s) return 0;
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
