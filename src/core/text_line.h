/* hymo — formatting a message that must stay one line (an error naming its
 * file and field, a line of an FMU's log).  Internal header. */
#ifndef HYMO_TEXT_LINE_H
#define HYMO_TEXT_LINE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* vsnprintf into buf, then line breaks replaced by spaces. */
static inline void hymo_format_line_v(char *buf, size_t cap, const char *fmt, va_list ap)
{
    vsnprintf(buf, cap, fmt, ap);
    for (char *p = buf; *p; ++p)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

#endif
