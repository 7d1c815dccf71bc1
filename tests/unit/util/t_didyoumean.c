/* t_didyoumean.c - a mistyped subcommand is told apart from a program. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/didyoumean.h"
#include "tap.h"

static const char *const names[] = { "run", "env", "plan", "check", "status",
                                     "hosts", "broker", "kv", "script",
                                     "submit" };
#define N (sizeof names / sizeof names[0])

int main(void)
{
    char dir[] = "/tmp/t_didyoumean.XXXXXX", prog[64], here[64];
    int fd;

    if (!mkdtemp(dir) || chdir(dir) < 0)
        return ok(0, "a folder to work in"), tap_done();
    snprintf(prog, sizeof prog, "%s/bin", dir);
    snprintf(here, sizeof here, "%s/sttus", dir);
    mkdir(prog, 0700);
    snprintf(prog, sizeof prog, "%s/bin/chek", dir);
    if ((fd = open(prog, O_CREAT | O_WRONLY, 0700)) >= 0)
        close(fd);
    if ((fd = open(here, O_CREAT | O_WRONLY, 0600)) >= 0)
        close(fd);
    snprintf(prog, sizeof prog, "%s/bin", dir);

    is_str(didyoumean_subcommand("plna", names, N, prog), "plan",
           "plna: two letters swapped");
    is_str(didyoumean_subcommand("stauts", names, N, prog), "status",
           "stauts: two letters swapped");
    is_str(didyoumean_subcommand("sript", names, N, prog), "script",
           "sript: one letter left out");
    is_str(didyoumean_subcommand("ev", names, N, prog), "env",
           "ev: short words, one edit");
    ok(!didyoumean_subcommand("chek", names, N, prog),
       "chek is a program on the path: run it");
    ok(!didyoumean_subcommand("sttus", names, N, prog),
       "sttus is a file in this folder: run it");
    ok(!didyoumean_subcommand("python", names, N, prog),
       "python: close to nothing");
    ok(!didyoumean_subcommand("ls", names, N, prog),
       "ls: two edits from kv, too many for 2 letters");
    ok(!didyoumean_subcommand("./plna", names, N, prog),
       "a path is the program");
    ok(!didyoumean_subcommand("-np", names, N, prog), "an option");
    ok(!didyoumean_subcommand("", names, N, prog), "an empty word");
    unlink(here);
    snprintf(here, sizeof here, "%s/bin/chek", dir);
    unlink(here);
    rmdir(prog);
    rmdir(dir);
    return tap_done();
}
