/* nodeshape.c - a node described in one line, and as hwloc XML (see
 * nodeshape.h). */
#include "place/nodeshape.h"
#include "util/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct word {
    const char *name;
    int min, max;
};

/* The order of the fields of struct nodeshape's filler below. */
static const struct word words[] = {
    { "package", 1, 64 }, { "socket", 1, 64 }, { "core", 1, 1024 },
    { "pu", 1, 8 }, { "gpu", 0, 64 },
};
#define NWORDS (sizeof words / sizeof words[0])

/* One NAME:COUNT word of len bytes at s into val[]; seen[] catches
 * repeats (package and socket are one). */
static int parse_word(const char *s, size_t len, int val[NWORDS],
                      int seen[NWORDS], struct err *err)
{
    const char *colon = memchr(s, ':', len);
    size_t i, nlen = colon ? (size_t)(colon - s) : len;
    long v = 0;

    for (i = 0; i < NWORDS; i++)
        if (strlen(words[i].name) == nlen && !strncmp(s, words[i].name, nlen))
            break;
    if (i == NWORDS)
        return err_set(err, "node '%.*s': unknown word (package:N, core:N, "
                       "pu:N, gpu:N)", (int)(len > 40 ? 40 : len), s);
    if (!colon || colon + 1 == s + len || len - nlen - 1 > 5)
        return err_set(err, "node '%.*s': expected %s:COUNT", (int)len, s,
                       words[i].name);
    for (const char *p = colon + 1; p < s + len; p++) {
        if (*p < '0' || *p > '9')
            return err_set(err, "node '%.*s': the count is not a number",
                           (int)len, s);
        v = v * 10 + (*p - '0');
    }
    if (v < words[i].min || v > words[i].max)
        return err_set(err, "node '%.*s': %s from %d to %d", (int)len, s,
                       words[i].name, words[i].min, words[i].max);
    if (i == 1)
        i = 0;      /* socket is package */
    if (seen[i]++)
        return err_set(err, "node: %s given twice", words[i].name);
    val[i] = (int)v;
    return 0;
}

/* The counts together make a node dlrun can plan on. */
static int check_shape(const struct nodeshape *n, int core_seen,
                       struct err *err)
{
    if (!core_seen)
        return err_set(err, "node: no core:N (cores of each socket), e.g. "
                       "\"package:2 core:38 gpu:8\"");
    if (n->packages * n->cores * n->pus > NODESHAPE_MAX_PUS)
        return err_set(err, "node: %d hardware threads; at most %d (give an "
                       "hwloc XML file as topology:)",
                       n->packages * n->cores * n->pus, NODESHAPE_MAX_PUS);
    if (n->gpus % n->packages)
        return err_set(err, "node: %d GPUs do not spread evenly over %d "
                       "sockets (give an hwloc XML file as topology:)",
                       n->gpus, n->packages);
    return 0;
}

int nodeshape_parse(const char *s, struct nodeshape *out, struct err *err)
{
    int val[NWORDS] = { 1, 1, 0, 1, 0 }, seen[NWORDS] = { 0 };
    struct nodeshape n;

    for (;;) {
        size_t len;

        s += strspn(s, " \t");
        if (!*s)
            break;
        len = strcspn(s, " \t");
        if (parse_word(s, len, val, seen, err) < 0)
            return -1;
        s += len;
    }
    n.packages = val[0];
    n.cores = val[2];
    n.pus = val[3];
    n.gpus = val[4];
    if (check_shape(&n, seen[2], err) < 0)
        return -1;
    *out = n;
    return 0;
}

void nodeshape_describe(const struct nodeshape *n, char *buf, size_t len)
{
    char pu[32] = "";

    if (n->pus > 1)
        snprintf(pu, sizeof pu, " x %d threads", n->pus);
    snprintf(buf, len, "%d socket%s x %d cores%s, %d GPU%s", n->packages,
             n->packages == 1 ? "" : "s", n->cores, pu, n->gpus,
             n->gpus == 1 ? "" : "s");
}

/* ---- XML ---- */

/* An hwloc bitmap of bits lo..hi: 32-bit words, the highest first. */
static void put_bitmap(FILE *f, const char *attr, int lo, int hi)
{
    fprintf(f, " %s=\"", attr);
    for (int w = hi / 32; w >= 0; w--) {
        unsigned long bits = 0;

        for (int b = 0; b < 32; b++)
            if (w * 32 + b >= lo && w * 32 + b <= hi)
                bits |= 1UL << b;
        fprintf(f, "0x%08lx%s", bits, w ? "," : "");
    }
    fputc('"', f);
}

/* cpuset, complete_cpuset, nodeset and complete_nodeset of an object. */
static void put_sets(FILE *f, int lo, int hi, int node_lo, int node_hi)
{
    put_bitmap(f, "cpuset", lo, hi);
    put_bitmap(f, "complete_cpuset", lo, hi);
    put_bitmap(f, "nodeset", node_lo, node_hi);
    put_bitmap(f, "complete_nodeset", node_lo, node_hi);
}

/* GPU g of the node (bus 0x10 + 8 g) under a host bridge of its own. */
static void put_gpu(FILE *f, int g, int *gp)
{
    int bus = 0x10 + 8 * g;

    fprintf(f, "      <object type=\"Bridge\" gp_index=\"%d\" bridge_type="
            "\"0-1\" depth=\"0\" bridge_pci=\"0000:[%02x-%02x]\">\n", (*gp)++,
            bus, bus);
    fprintf(f, "        <object type=\"PCIDev\" gp_index=\"%d\" pci_busid="
            "\"0000:%02x:00.0\" pci_type=\"0302 [10de:1db5] [10de:1249] a1\""
            "/>\n      </object>\n", (*gp)++, bus);
}

static void put_package(FILE *f, const struct nodeshape *n, int p, int *gp)
{
    int per = n->cores * n->pus, lo = p * per, hi = lo + per - 1;
    int gpp = n->gpus / n->packages;

    fprintf(f, "    <object type=\"Package\" os_index=\"%d\"", p);
    put_sets(f, lo, hi, p, p);
    fprintf(f, " gp_index=\"%d\">\n      <object type=\"NUMANode\" "
            "os_index=\"%d\"", (*gp)++, p);
    put_sets(f, lo, hi, p, p);
    fprintf(f, " gp_index=\"%d\" local_memory=\"68719476736\"/>\n", (*gp)++);
    for (int c = 0; c < n->cores; c++) {
        int first = lo + c * n->pus;

        fprintf(f, "      <object type=\"Core\" os_index=\"%d\"", c);
        put_sets(f, first, first + n->pus - 1, p, p);
        fprintf(f, " gp_index=\"%d\">\n", (*gp)++);
        for (int t = first; t < first + n->pus; t++) {
            fprintf(f, "        <object type=\"PU\" os_index=\"%d\"", t);
            put_sets(f, t, t, p, p);
            fprintf(f, " gp_index=\"%d\"/>\n", (*gp)++);
        }
        fprintf(f, "      </object>\n");
    }
    for (int g = p * gpp; g < (p + 1) * gpp; g++)
        put_gpu(f, g, gp);
    fprintf(f, "    </object>\n");
}

char *nodeshape_xml(const struct nodeshape *n)
{
    int all = n->packages * n->cores * n->pus - 1, gp = 2;
    struct membuf b;
    FILE *f = membuf_open(&b);

    if (!f)
        return NULL;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE "
            "topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">\n"
            "  <object type=\"Machine\" os_index=\"0\"");
    put_sets(f, 0, all, 0, n->packages - 1);
    put_bitmap(f, "allowed_cpuset", 0, all);
    put_bitmap(f, "allowed_nodeset", 0, n->packages - 1);
    fprintf(f, " gp_index=\"1\">\n    <info name=\"Backend\" value=\"dlrun "
            "node:\"/>\n");
    for (int p = 0; p < n->packages; p++)
        put_package(f, n, p, &gp);
    fprintf(f, "  </object>\n</topology>\n");
    return membuf_close(&b);
}
