/* template.c - parsing and rendering the {{...}} job-script templates.
 *
 * A template is parsed once into a flat array of nodes; a section node
 * knows the index of its closing node, so rendering is a loop over index
 * ranges with no tree to build or free. */
#include "scripts/template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum node_kind { N_TEXT, N_VAR, N_SECTION, N_INVERTED, N_END };

struct node {
    enum node_kind kind;
    char *text;         /* N_TEXT: the text; else the name (owned) */
    size_t len;         /* of text */
    int line, col;      /* where the tag starts, for errors */
    size_t end;         /* N_SECTION/N_INVERTED: index of the N_END */
};

struct template {
    char *file;
    struct node *nodes;
    size_t n, cap;
};

#define MAX_DEPTH 16
#define MAX_NAME 64

/* ---- parsing ---- */

/* 1-based line and column of offset off in text. */
static void position(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

static int add_node(struct template *t, enum node_kind kind, const char *s,
                    size_t len, struct err *err)
{
    struct node *nd;

    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        struct node *v = realloc(t->nodes, cap * sizeof *v);

        if (!v)
            return err_set(err, "%s: out of memory", t->file);
        t->nodes = v;
        t->cap = cap;
    }
    nd = &t->nodes[t->n];
    memset(nd, 0, sizeof *nd);
    nd->kind = kind;
    nd->text = strndup(s, len);
    nd->len = len;
    if (!nd->text)
        return err_set(err, "%s: out of memory", t->file);
    t->n++;
    return 0;
}

static int is_blank(const char *s, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (s[i] != ' ' && s[i] != '\t')
            return 0;
    return 1;
}

/* A section or comment tag alone on its line (only blanks around it)
 * takes the line: *text_end moves back to the line's start and *after
 * past its newline.  pos is where the current text run began: a tag
 * sharing its line with an earlier tag is not alone. */
static void take_line(const char *s, size_t pos, size_t open, size_t *text_end,
                      size_t *after)
{
    size_t ls = open, eol = *after;

    while (ls > 0 && s[ls - 1] != '\n')
        ls--;
    while (s[eol] && s[eol] != '\n')
        eol++;
    if (ls < pos || !is_blank(s, ls, open) || !is_blank(s, *after, eol))
        return;
    *text_end = ls;
    *after = eol + (s[eol] == '\n');
}

/* The name inside a tag: letters, digits, '_' and '-', or "." alone. */
static int check_name(const char *name, size_t len, enum node_kind kind,
                      const char *where, struct err *err)
{
    if (len == 1 && name[0] == '.' && kind == N_VAR)
        return 0;
    if (len == 0 || len > MAX_NAME)
        return err_set(err, "%s: a tag needs a name such as {{nodes}}", where);
    for (size_t i = 0; i < len; i++)
        if (!name[i] || !strchr("abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
                                name[i]))
            return err_set(err, "%s: bad tag name '%.*s' (letters, digits, "
                           "_ and - only)", where, (int)len, name);
    return 0;
}

struct parse_state {
    struct template *t;
    const char *s;
    size_t stack[MAX_DEPTH];
    int depth;
};

/* Balance sections: push an opening, match a closing against it. */
static int balance(struct parse_state *ps, enum node_kind kind,
                   const char *where, struct err *err)
{
    struct node *nodes = ps->t->nodes, *open, *nd = &nodes[ps->t->n - 1];

    if (kind == N_SECTION || kind == N_INVERTED) {
        if (ps->depth == MAX_DEPTH)
            return err_set(err, "%s: sections nested deeper than %d", where,
                           MAX_DEPTH);
        ps->stack[ps->depth++] = ps->t->n - 1;
        return 0;
    }
    if (ps->depth == 0)
        return err_set(err, "%s: {{/%s}} closes no section", where, nd->text);
    open = &nodes[ps->stack[--ps->depth]];
    if (strcmp(open->text, nd->text) != 0)
        return err_set(err, "%s: {{/%s}} does not close {{%c%s}} of line %d",
                       where, nd->text, open->kind == N_SECTION ? '#' : '^',
                       open->text, open->line);
    open->end = ps->t->n - 1;
    return 0;
}

/* One tag whose "{{" is at open and "}}" at close. */
static int parse_tag(struct parse_state *ps, size_t open, size_t close,
                     struct err *err)
{
    const char *s = ps->s, *name = s + open + 2;
    size_t len = close - open - 2;
    enum node_kind kind = N_VAR;
    char where[300];
    int line, col;

    position(s, open, &line, &col);
    snprintf(where, sizeof where, "%s:%d:%d", ps->t->file, line, col);
    while (len && (*name == ' ' || *name == '\t'))
        name++, len--;
    if (len && *name == '!')
        return 0;       /* a comment */
    if (len && strchr("#^/", *name)) {
        kind = *name == '#' ? N_SECTION : *name == '^' ? N_INVERTED : N_END;
        name++, len--;
    }
    while (len && (*name == ' ' || *name == '\t'))
        name++, len--;
    while (len && (name[len - 1] == ' ' || name[len - 1] == '\t'))
        len--;
    if (check_name(name, len, kind, where, err) < 0 ||
        add_node(ps->t, kind, name, len, err) < 0)
        return -1;
    ps->t->nodes[ps->t->n - 1].line = line;
    ps->t->nodes[ps->t->n - 1].col = col;
    return kind == N_VAR ? 0 : balance(ps, kind, where, err);
}

/* Text up to the next tag, then the tag; *pos moves past both. */
static int parse_step(struct parse_state *ps, size_t *pos, struct err *err)
{
    const char *s = ps->s, *o = strstr(s + *pos, "{{"), *c;
    size_t open, close, text_end, after;
    int line, col;

    if (!o) {
        size_t rest = strlen(s + *pos);

        open = *pos;
        *pos += rest;
        return add_node(ps->t, N_TEXT, s + open, rest, err);
    }
    open = (size_t)(o - s);
    c = strstr(o + 2, "}}");
    if (!c) {
        position(s, open, &line, &col);
        return err_set(err, "%s:%d:%d: '{{' is never closed by '}}'",
                       ps->t->file, line, col);
    }
    close = (size_t)(c - s);
    text_end = open;
    after = close + 2;
    if (strchr("#^/!", s[open + 2 + strspn(s + open + 2, " \t")]))
        take_line(s, *pos, open, &text_end, &after);
    if (text_end > *pos &&
        add_node(ps->t, N_TEXT, s + *pos, text_end - *pos, err) < 0)
        return -1;
    *pos = after;
    return parse_tag(ps, open, close, err);
}

struct template *template_parse(const char *text, const char *file,
                                struct err *err)
{
    struct parse_state ps = { .s = text };
    size_t pos = 0, len = strlen(text);

    ps.t = calloc(1, sizeof *ps.t);
    if (!ps.t || !(ps.t->file = strdup(file))) {
        err_set(err, "%s: out of memory", file);
        goto fail;
    }
    while (pos < len)
        if (parse_step(&ps, &pos, err) < 0)
            goto fail;
    if (ps.depth > 0) {
        struct node *open = &ps.t->nodes[ps.stack[ps.depth - 1]];

        err_set(err, "%s:%d:%d: {{%c%s}} is never closed by {{/%s}}", file,
                open->line, open->col, open->kind == N_SECTION ? '#' : '^',
                open->text, open->text);
        goto fail;
    }
    return ps.t;
fail:
    template_free(ps.t);
    return NULL;
}

void template_free(struct template *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->nodes[i].text);
    free(t->nodes);
    free(t->file);
    free(t);
}

/* ---- rendering ---- */

struct out {
    char *p;
    size_t len, cap;
};

struct render {
    const struct template *t;
    const struct tvar *vars;
    size_t nvars;
    struct out out;
    struct err *err;
};

static int put(struct render *r, const char *s, size_t len)
{
    struct out *o = &r->out;

    if (o->len + len >= TEMPLATE_MAX_OUTPUT)
        return err_set(r->err, "%s: the rendered text is over %d KiB",
                       r->t->file, TEMPLATE_MAX_OUTPUT >> 10);
    if (o->len + len + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        char *p;

        while (cap < o->len + len + 1)
            cap *= 2;
        p = realloc(o->p, cap);
        if (!p)
            return err_set(r->err, "%s: out of memory", r->t->file);
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, len);
    o->len += len;
    o->p[o->len] = '\0';
    return 0;
}

static const struct tvar *lookup(const struct render *r, const char *name)
{
    for (size_t i = 0; i < r->nvars; i++)
        if (strcmp(r->vars[i].name, name) == 0)
            return &r->vars[i];
    return NULL;
}

/* Every name the template uses exists, and {{.}} is inside a section. */
static int check_names(const struct render *r)
{
    int depth = 0;

    for (size_t i = 0; i < r->t->n; i++) {
        const struct node *nd = &r->t->nodes[i];

        depth += nd->kind == N_SECTION || nd->kind == N_INVERTED;
        depth -= nd->kind == N_END;
        if (nd->kind == N_TEXT || nd->kind == N_END)
            continue;
        if (strcmp(nd->text, ".") == 0 && depth == 0)
            return err_set(r->err, "%s:%d:%d: {{.}} outside a {{#list}} "
                           "section", r->t->file, nd->line, nd->col);
        if (strcmp(nd->text, ".") != 0 && !lookup(r, nd->text))
            return err_set(r->err, "%s:%d:%d: unknown name '%s' (man "
                           "dlrun-script lists them)", r->t->file, nd->line,
                           nd->col, nd->text);
    }
    return 0;
}

static int put_var(struct render *r, const struct tvar *v, const char *item)
{
    if (!v)
        return item ? put(r, item, strlen(item)) : 0;
    if (!v->items)
        return v->value ? put(r, v->value, strlen(v->value)) : 0;
    for (size_t i = 0; v->items[i]; i++)
        if ((i && put(r, " ", 1) < 0) ||
            put(r, v->items[i], strlen(v->items[i])) < 0)
            return -1;
    return 0;
}

static int is_empty(const struct tvar *v, const char *item)
{
    if (!v)
        return !item || !*item;
    if (v->items)
        return !v->items[0];
    return !v->value || !*v->value;
}

static int render_range(struct render *r, size_t from, size_t to,
                        const char *item);

/* A section: once per list item, or once for a non-empty scalar. */
static int render_section(struct render *r, const struct node *nd,
                          size_t i, const char *item)
{
    const struct tvar *v = strcmp(nd->text, ".") ? lookup(r, nd->text) : NULL;

    if (nd->kind == N_INVERTED)
        return is_empty(v, item) ? render_range(r, i + 1, nd->end, item) : 0;
    if (v && v->items) {
        for (size_t k = 0; v->items[k]; k++)
            if (render_range(r, i + 1, nd->end, v->items[k]) < 0)
                return -1;
        return 0;
    }
    /* in a scalar's section {{.}} is the scalar */
    return is_empty(v, item) ? 0 :
           render_range(r, i + 1, nd->end, v ? v->value : item);
}

static int render_range(struct render *r, size_t from, size_t to,
                        const char *item)
{
    for (size_t i = from; i < to; i++) {
        const struct node *nd = &r->t->nodes[i];
        int rc = 0;

        if (nd->kind == N_TEXT)
            rc = put(r, nd->text, nd->len);
        else if (nd->kind == N_VAR)
            rc = put_var(r, strcmp(nd->text, ".") ? lookup(r, nd->text) : NULL,
                         item);
        else if (nd->kind != N_END) {
            rc = render_section(r, nd, i, item);
            i = nd->end;
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

char *template_render(const struct template *t, const struct tvar *vars,
                      size_t nvars, struct err *err)
{
    struct render r = { .t = t, .vars = vars, .nvars = nvars, .err = err };

    if (check_names(&r) < 0 || put(&r, "", 0) < 0 ||
        render_range(&r, 0, t->n, NULL) < 0) {
        free(r.out.p);
        return NULL;
    }
    return r.out.p;
}
