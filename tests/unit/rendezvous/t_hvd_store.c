/* t_hvd_store.c - the Gloo rendezvous store: values by scope and key,
 * horovodrun's finalize (a declared scope empties once every rank
 * deleted its key, an ad hoc scope loses single keys), the budget. */
#include <stdlib.h>
#include <string.h>

#include "rendezvous/hvd_store.h"
#include "tap.h"

static int has(const struct hvd_store *s, const char *scope, const char *key,
               const char *want)
{
    size_t len;
    const char *v = hvd_store_get(s, scope, key, &len);

    if (!want)
        return v == NULL;
    return v && len == strlen(want) && memcmp(v, want, len) == 0;
}

static void test_put_get(void)
{
    struct err err = { "" };
    struct hvd_store *s = hvd_store_create(1 << 20, &err);
    char key[32];

    ok(s != NULL, "create");
    ok(has(s, "global", "0", NULL), "a missing key is NULL (404)");
    hvd_store_put(s, "global", "0", "addr0", 5, &err);
    hvd_store_put(s, "global_", "0", "other", 5, &err);
    ok(has(s, "global", "0", "addr0") && has(s, "global_", "0", "other"),
       "scopes keep keys apart");
    hvd_store_put(s, "global", "0", "new", 3, &err);
    ok(has(s, "global", "0", "new"), "a PUT replaces");
    hvd_store_put(s, "x", "empty", "", 0, &err);
    ok(has(s, "x", "empty", ""), "an empty value is a value");
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "rank_%d", i);
        hvd_store_put(s, "many", key, key, strlen(key), &err);
    }
    ok(has(s, "many", "rank_0", "rank_0") && has(s, "many", "rank_999", "rank_999"),
       "1000 keys (the table grows)");
    is_int(hvd_store_count(s), 1003, "count");
    hvd_store_destroy(s);
}

static void test_finalize(void)
{
    struct err err = { "" };
    struct hvd_store *s = hvd_store_create(1 << 20, &err);
    size_t empty;

    empty = hvd_store_bytes(s);
    hvd_store_scope_size(s, "cross_0", 3, &err);
    for (int i = 0; i < 3; i++) {
        char k[8];
        snprintf(k, sizeof k, "%d", i);
        hvd_store_put(s, "cross_0", k, "a", 1, &err);
    }
    hvd_store_delete(s, "cross_0", "0");
    hvd_store_delete(s, "cross_0", "0");
    hvd_store_delete(s, "cross_0", "1");
    ok(has(s, "cross_0", "2", "a") && has(s, "cross_0", "0", "a"),
       "a declared scope keeps its keys until all ranks finished "
       "(a retried DELETE counts once)");
    hvd_store_delete(s, "cross_0", "2");
    ok(has(s, "cross_0", "0", NULL) && has(s, "cross_0", "2", NULL),
       "the last rank's DELETE empties the scope");
    is_int(hvd_store_count(s), 0, "no marks left");
    hvd_store_put(s, "global_", "0", "a", 1, &err);
    hvd_store_put(s, "global_", "1", "b", 1, &err);
    hvd_store_delete(s, "global_", "0");
    ok(has(s, "global_", "0", NULL) && has(s, "global_", "1", "b"),
       "an ad hoc scope loses only the key deleted");
    hvd_store_delete(s, "global_", "1");
    hvd_store_delete(s, "nowhere", "1");
    hvd_store_put(s, "adhoc", "k", "v", 1, &err);
    hvd_store_clear(s);
    ok(has(s, "adhoc", "k", NULL), "clear drops values");
    is_int(hvd_store_bytes(s), empty + 64 + strlen("cross_0") + 1,
           "only the declared scope's record is left");
    hvd_store_destroy(s);
}

static void test_budget(void)
{
    struct err err = { "" };
    struct hvd_store *s = hvd_store_create(1000, &err);
    char big[900] = { 0 };
    size_t before;

    is_int(hvd_store_put(s, "g", "a", big, 700, &err), 0, "within budget");
    before = hvd_store_bytes(s);
    is_int(hvd_store_put(s, "h", "b", big, 300, &err), -1, "over budget fails");
    ok(strstr(err.msg, "full") != NULL, "... saying the store is full");
    is_int(hvd_store_bytes(s), before, "... and the store is unchanged");
    is_int(hvd_store_put(s, "g", "a", big, 800, &err), 0,
           "replacing counts the old value as freed");
    ok(hvd_store_bytes(s) <= 1000, "never above the budget");
    hvd_store_destroy(s);
    hvd_store_destroy(NULL);
}

int main(void)
{
    test_put_get();
    test_finalize();
    test_budget();
    return tap_done();
}
