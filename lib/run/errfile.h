/* errfile.h - the error file a rank writes when it fails: torch's @record
 * (torch.distributed.elastic.multiprocessing.errors) puts the exception
 * into TORCHELASTIC_ERROR_FILE as JSON,
 *   {"message": {"message": "ValueError: bad", "extraInfo":
 *                {"py_callstack": "...", "timestamp": "1700000000"}}}
 * and dlrun's failure line shows it, as torchrun's summary does. */
#ifndef DLRUN_ERRFILE_H
#define DLRUN_ERRFILE_H

#include <stddef.h>

struct errfile {
    char message[512];  /* the exception, first line, "" when none */
    long timestamp;     /* seconds since the epoch, 0 when none */
};

/* Parse len bytes of text (untrusted: any bytes) into out.  0, or -1 when
 * it holds no message. */
int errfile_parse(const char *text, size_t len, struct errfile *out);

/* A message an agent put into the broker for a rank on its node (len
 * bytes at val, untrusted: anyone with the job's token may write it) into
 * out->message: 1 to sizeof message - 1 bytes, control bytes shown as '?'
 * so that it stays one line.  0, or -1 when the length is out of range. */
int errfile_from_wire(const void *val, size_t len, struct errfile *out);

/* Read the file at path (its first 64 KiB) and parse it.  0, or -1 when
 * it is missing, unreadable or holds no message. */
int errfile_read(const char *path, struct errfile *out);

#endif
