#include "test_util.h"

#include <math.h>
#include <stdio.h>

hymo_model *test_load_model(const char *file_name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", HYMO_DATA_DIR, file_name);
    hymo_model *model = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_file(path, &model, &err) != HYMO_OK) {
        fail_msg("loading %s: %s", path, err.message);
    }
    return model;
}

void test_assert_close(double a, double b, double tol, const char *sa, const char *sb,
                       const char *file, int line)
{
    if (!(fabs(a - b) <= tol)) {
        fprintf(stderr, "%s = %.17g, %s = %.17g, |diff| = %.3g > %.3g\n", sa, a, sb, b,
                fabs(a - b), tol);
        _fail(file, line);
    }
}
