/* t_errfile.c - reading torch's error file (TORCHELASTIC_ERROR_FILE). */
#include <stdio.h>
#include <string.h>

#include "run/errfile.h"
#include "tap.h"

static void parses(const char *json, const char *msg, long ts)
{
    struct errfile e;
    int rc = errfile_parse(json, strlen(json), &e);

    ok(rc == 0, json);
    is_str(e.message, msg, "  its message");
    is_int(e.timestamp, ts, "  its timestamp");
}

static void refuses(const char *json)
{
    struct errfile e;

    ok(errfile_parse(json, strlen(json), &e) == -1 && !e.message[0], json);
}

int main(void)
{
    /* what torch 1.13's record_exception writes (json.dump) */
    parses("{\"message\": {\"message\": \"ValueError: bad batch 7\", "
           "\"extraInfo\": {\"py_callstack\": \"Traceback (most recent call "
           "last):\\n  File \\\"x.py\\\"\\nValueError: bad\\n\", "
           "\"timestamp\": \"1700000123\"}}}", "ValueError: bad batch 7",
           1700000123);
    /* the string form and a number timestamp */
    parses("{\"message\":\"RuntimeError: NCCL\",\"timestamp\":42}",
           "RuntimeError: NCCL", 42);
    /* escapes: quotes, a newline ends the line, \u00e9 in UTF-8 */
    parses("{\"message\":{\"message\":\"KeyError: \\\"caf\\u00e9\\\"\\nmore\"}}",
           "KeyError: \"caf\xc3\xa9\"", 0);
    /* keys elsewhere do not confuse it */
    parses("{\"extraInfo\":{\"py_callstack\":\"message: no\"},"
           "\"message\":{\"message\":\"E: x\"}}", "E: x", 0);
    refuses("");
    refuses("{}");
    refuses("{\"message\": {\"extraInfo\": {}}}");
    refuses("{\"message\": \"");
    refuses("\"message\":");
    refuses("garbage \\ \" \\u12");
    {
        char big[2000];
        struct errfile e;

        memset(big, 'a', sizeof big);
        memcpy(big, "{\"message\":\"", 12);
        ok(errfile_parse(big, sizeof big, &e) == 0 &&
           strlen(e.message) == sizeof e.message - 1, "a long message is cut");
    }
    {
        struct errfile e;
        ok(errfile_read("/nonexistent/x.json", &e) == -1, "missing file: -1");
    }
    return tap_done();
}
