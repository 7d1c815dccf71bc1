/* json.h - writing JSON strings (the rest of our JSON is printf). */
#ifndef DLRUN_JSON_H
#define DLRUN_JSON_H

#include <stdio.h>

/* Write s as a quoted, escaped JSON string (NULL writes null). */
void json_string(FILE *f, const char *s);

#endif
