/* fuzz_template.c - job-script templates: any text is rendered or
 * refused with a message, never a crash, and the output stays under its
 * cap; the first byte picks which names exist. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scripts/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const items[] = { "a", "b c", "'q'", NULL };
static const char *const none[] = { NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tvar vars[] = {
        { "nodes", "2", NULL }, { "empty", "", NULL },
        { "unset", NULL, NULL }, { "list", NULL, items },
        { "nolist", NULL, none }, { "env", NULL, items },
    };
    char *text = malloc(size + 1), *out;
    struct err err = { "" };
    struct template *t;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';      /* a NUL inside ends the text, as for files */
    t = template_parse(text, "fuzz.in", &err);
    if (!t && !err.msg[0])
        abort();
    out = t ? template_render(t, vars, size ? (data[0] % 6) + 1 : 6, &err)
            : NULL;
    if (t && !out && !err.msg[0])
        abort();
    if (out && strlen(out) >= TEMPLATE_MAX_OUTPUT)
        abort();
    free(out);
    template_free(t);
    free(text);
    return 0;
}
