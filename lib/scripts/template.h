/* template.h - the job-script templates: text with {{...}} tags.
 *
 * The syntax (documented in dlrun-script(1), TEMPLATES) executes nothing:
 *   {{name}}             the value of name (a list: its items joined by
 *                        one space)
 *   {{#name}}...{{/name}} the inside once per item of a list, or once when
 *                        a scalar is not empty; {{.}} is the item
 *   {{^name}}...{{/name}} the inside once when name is empty
 *   {{! text}}           a comment
 * A section or comment tag alone on its line takes the whole line with it.
 * Values are inserted as they are: whoever fills struct tvar makes them
 * safe (lib/scripts/jobscript.c quotes them).  Unknown names and unbalanced
 * sections are refused with the template's file:line:column. */
#ifndef DLRUN_TEMPLATE_H
#define DLRUN_TEMPLATE_H

#include <stddef.h>

#include "util/err.h"

/* A name a template can use.  Exactly one of value and items is used:
 * items (NULL-terminated) when it is a list, else value (NULL = empty).
 * Both borrowed. */
struct tvar {
    const char *name;
    const char *value;
    const char *const *items;
};

struct template;

/* Parse text (borrowed only during the call); file names it in errors.
 * Returns a new template (free with template_free) or NULL with err. */
struct template *template_parse(const char *text, const char *file,
                                struct err *err);

/* Render t with the nvars names in vars.  Returns the malloc'd text
 * (caller frees) or NULL with err: a name the template uses is not in
 * vars (even inside a section not taken), or the text grew past 1 MiB. */
char *template_render(const struct template *t, const struct tvar *vars,
                      size_t nvars, struct err *err);

void template_free(struct template *t);     /* NULL is fine */

#define TEMPLATE_MAX_OUTPUT (1 << 20)

#endif
