/* t_json.c - JSON strings: every byte that must be escaped is, the rest
 * passes as is (UTF-8 untouched), NULL is null. */
#include <stdio.h>
#include <stdlib.h>

#include "util/json.h"
#include "tap.h"

/* json_string(s) as a string (static). */
static const char *js(const char *s)
{
    static char out[256];
    FILE *f = fmemopen(out, sizeof out, "w");

    if (!f)
        return "(fmemopen failed)";
    json_string(f, s);
    fclose(f);
    return out;
}

int main(void)
{
    char ctl[32];

    is_str(js(NULL), "null", "NULL is null, unquoted");
    is_str(js(""), "\"\"", "empty string");
    is_str(js("rank 0"), "\"rank 0\"", "plain text quoted");
    is_str(js("say \"hi\""), "\"say \\\"hi\\\"\"", "quotes escaped");
    is_str(js("C:\\tmp"), "\"C:\\\\tmp\"", "backslash escaped");
    is_str(js("a\nb\rc\td"), "\"a\\nb\\rc\\td\"", "newline, CR, tab short forms");
    is_str(js("\x01\x1f"), "\"\\u0001\\u001f\"", "other controls as \\u00XX");
    is_str(js("\x7f"), "\"\x7f\"", "DEL is not a JSON control: as is");
    is_str(js("gr\xc3\xbc\xc3\x9f"), "\"gr\xc3\xbc\xc3\x9f\"", "UTF-8 bytes as is");
    is_str(js("</script>"), "\"</script>\"", "slash not escaped");
    for (int c = 1; c < 32; c++)
        ctl[c - 1] = (char)c;
    ctl[31] = '\0';
    /* every control byte escaped: no raw byte below 0x20 in the output */
    {
        const char *o = js(ctl);
        int raw = 0;
        for (const char *p = o; *p; p++)
            raw |= (unsigned char)*p < 0x20;
        ok(!raw, "no control byte survives unescaped");
    }
    return tap_done();
}
