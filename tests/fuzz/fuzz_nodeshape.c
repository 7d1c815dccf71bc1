/* fuzz_nodeshape.c - libFuzzer target for nodeshape_parse (sites.yaml's
 * node: key).
 *
 * It never crashes, refuses with a message and leaves its output alone,
 * and what it accepts is within the documented bounds and makes an XML
 * document (the text is not loaded: that is hwloc's, and slow). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "place/nodeshape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err err = { "" };
    struct nodeshape n = { -7, -7, -7, -7 };
    char *s = malloc(size + 1), *xml;

    must(s != NULL);
    memcpy(s, data, size);
    s[size] = '\0';
    if (nodeshape_parse(s, &n, &err) < 0) {
        must(err.msg[0] && n.packages == -7 && n.gpus == -7);
    } else {
        must(n.packages >= 1 && n.packages <= 64 && n.cores >= 1 &&
             n.pus >= 1 && n.pus <= 8 && n.gpus >= 0 && n.gpus <= 64);
        must(n.packages * n.cores * n.pus <= NODESHAPE_MAX_PUS);
        must(n.gpus % n.packages == 0);
        xml = nodeshape_xml(&n);
        must(xml != NULL && strstr(xml, "</topology>") != NULL);
        free(xml);
    }
    free(s);
    return 0;
}
