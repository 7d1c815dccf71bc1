/* t_mpidetect.c - --mpi=auto's test: ELF executables built here in
 * memory (DT_NEEDED libmpi.so.40, libmpich.so.12, only libc), every
 * truncation of one, scripts and python command lines on disk, and the
 * real /bin/true. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "where/mpidetect.h"
#include "tap.h"

#define VADDR 0x400000

/* A minimal ELF64: header, PT_LOAD (the whole file at VADDR), PT_DYNAMIC
 * with DT_NEEDED for each name, DT_STRTAB, DT_NULL; then the strings.
 * Returns its size in buf. */
static size_t make_elf(unsigned char *buf, size_t cap,
                       const char *const *needed)
{
    Elf64_Ehdr eh = { 0 };
    Elf64_Phdr ph[2] = { { 0 } };
    Elf64_Dyn dyn[8];
    size_t nd = 0, dyn_off = sizeof eh + sizeof ph, str_off, at = 1;
    char strtab[256] = "";

    for (const char *const *n = needed; *n; n++) {
        dyn[nd].d_tag = DT_NEEDED;
        dyn[nd++].d_un.d_val = at;
        memcpy(strtab + at, *n, strlen(*n) + 1);
        at += strlen(*n) + 1;
    }
    str_off = dyn_off + (nd + 2) * sizeof *dyn;
    dyn[nd].d_tag = DT_STRTAB;
    dyn[nd++].d_un.d_ptr = VADDR + str_off;
    dyn[nd].d_tag = DT_NULL;
    dyn[nd++].d_un.d_val = 0;
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_phoff = sizeof eh;
    eh.e_phentsize = sizeof *ph;
    eh.e_phnum = 2;
    ph[0].p_type = PT_LOAD;
    ph[0].p_vaddr = VADDR;
    ph[0].p_filesz = str_off + at;
    ph[1].p_type = PT_DYNAMIC;
    ph[1].p_offset = dyn_off;
    ph[1].p_filesz = nd * sizeof *dyn;
    if (str_off + at > cap)
        return 0;
    memcpy(buf, &eh, sizeof eh);
    memcpy(buf + sizeof eh, ph, sizeof ph);
    memcpy(buf + dyn_off, dyn, nd * sizeof *dyn);
    memcpy(buf + str_off, strtab, at);
    return str_off + at;
}

static void test_elf(void)
{
    static const char *const ompi[] = { "libc.so.6", "libmpi.so.40", NULL };
    static const char *const mpich[] = { "libmpich.so.12", NULL };
    static const char *const impi[] = { "libmpifort.so.12", "libmpi.so.12",
                                        NULL };
    static const char *const plain[] = { "libc.so.6", "libm.so.6", NULL };
    unsigned char buf[4096];
    size_t n = make_elf(buf, sizeof buf, ompi);
    int wrong = 0;

    is_int(mpidetect_file(buf, n), 1, "ELF needing libmpi.so.40: MPI");
    is_int(mpidetect_file_abi(buf, n), MPIDETECT_ABI_OTHER,
           "  not MPICH's ABI (Open MPI's: PMIx)");
    /* the name is last: a cut keeps "libmpi" whole in the last 7 sizes */
    for (size_t cut = 0; cut < n; cut++)
        wrong += mpidetect_file(buf, cut) != (cut >= n - 7 ? 1 : 0);
    is_int(wrong, 0, "  every truncation: MPI only while \"libmpi\" is whole");
    n = make_elf(buf, sizeof buf, mpich);
    is_int(mpidetect_file(buf, n), 1, "ELF needing libmpich.so.12: MPI");
    is_int(mpidetect_file_abi(buf, n), MPIDETECT_ABI_MPICH,
           "  MPICH's ABI (the simple PMI wire)");
    n = make_elf(buf, sizeof buf, impi);
    is_int(mpidetect_file_abi(buf, n), MPIDETECT_ABI_MPICH,
           "libmpi.so.12 (Intel MPI, MVAPICH): MPICH's ABI");
    n = make_elf(buf, sizeof buf, plain);
    is_int(mpidetect_file(buf, n), 0, "ELF needing libc and libm: not MPI");
    is_int(mpidetect_file_abi(buf, n), 0, "  no ABI");
    buf[EI_CLASS] = ELFCLASS32;
    is_int(mpidetect_file(buf, n), 0, "32-bit ELF: not looked into");
}

static void test_text(void)
{
    static const char py[] = "#!/usr/bin/env python3\nfrom mpi4py import MPI\n";
    static const char hvd[] = "#!/usr/bin/python3 -u\nimport horovod.torch\n";
    static const char sh[] = "#!/bin/sh\n# mpi4py\n";
    static const char torch[] = "#!/usr/bin/python3\nimport torch\n";

    is_int(mpidetect_file((const void *)py, strlen(py)), 2,
           "#! python script importing mpi4py: MPI");
    is_int(mpidetect_file((const void *)hvd, strlen(hvd)), 2,
           "#! python script importing horovod: MPI");
    is_int(mpidetect_file((const void *)sh, strlen(sh)), 0,
           "a shell script mentioning mpi4py: not MPI");
    is_int(mpidetect_file((const void *)torch, strlen(torch)), 0,
           "a torch script: not MPI");
    is_int(mpidetect_file((const void *)"#!", 2), 0, "just '#!': not MPI");
}

static void write_file(const char *path, const char *text, int mode)
{
    FILE *f = fopen(path, "w");

    if (f) {
        fputs(text, f);
        fclose(f);
    }
    chmod(path, (mode_t)mode);
}

static void test_argv(void)
{
    char dir[] = "/tmp/t_mpidetect.XXXXXX", mpi[128], plain[128], path[300];

    if (!mkdtemp(dir))
        return;
    snprintf(mpi, sizeof mpi, "%s/train_mpi.py", dir);
    snprintf(plain, sizeof plain, "%s/train.py", dir);
    write_file(mpi, "import os\nfrom mpi4py import MPI\n", 0644);
    write_file(plain, "import torch\n", 0755);
    is_int(mpidetect_argv((char *[]){ "python3", mpi, NULL }, NULL), 1,
           "python3 SCRIPT (mpi4py, no #!): MPI");
    is_int(mpidetect_argv((char *[]){ "/usr/bin/python3", "-u", "-W",
                                      "ignore", mpi, "--lr", "1", NULL },
                          NULL), 1, "python3 -u -W ignore SCRIPT: MPI");
    is_int(mpidetect_argv((char *[]){ "python3", plain, NULL }, NULL), 0,
           "python3 torch SCRIPT: not MPI");
    is_int(mpidetect_argv((char *[]){ "python3", "-m", "mpi4py", plain, NULL },
                          NULL), 1, "python3 -m mpi4py SCRIPT: MPI");
    is_int(mpidetect_argv((char *[]){ "python3", "-c",
                                      "import horovod.torch as hvd", NULL },
                          NULL), 1, "python3 -c 'import horovod...': MPI");
    is_int(mpidetect_argv((char *[]){ "python3", NULL }, NULL), 0,
           "python3 alone: not MPI");
    is_int(mpidetect_argv((char *[]){ "true", NULL }, "/usr/bin:/bin"), 0,
           "true (found in PATH, an ELF without libmpi): not MPI");
    is_int(mpidetect_argv((char *[]){ "no-such-program-here", NULL },
                          "/usr/bin:/bin"), 0, "a program not found: not MPI");
    is_int(mpidetect_argv((char *[]){ dir, NULL }, NULL), 0,
           "a directory: not MPI");
    write_file(mpi, "#!/usr/bin/python3\nfrom mpi4py import MPI\n", 0755);
    snprintf(path, sizeof path, "/nonexistent:%s", dir);
    is_int(mpidetect_argv((char *[]){ "train_mpi.py", NULL }, path), 1,
           "an executable #! python script found in PATH: MPI");
    unlink(mpi);
    unlink(plain);
    rmdir(dir);
}

/* The words of programs that load MPI without mpi4py or horovod. */
static void test_more_words(void)
{
    static const char rannc[] = "import pyrannc\nmodel = pyrannc.RaNNCModule(m, o)\n";
    static const char cdll[] = "import ctypes\nctypes.CDLL('libmpi.so.40')\n";

    ok(mpidetect_python_text((const void *)rannc, strlen(rannc)),
       "RaNNC (pyrannc): MPI");
    ok(mpidetect_python_text((const void *)cdll, strlen(cdll)),
       "ctypes.CDLL of libmpi: MPI");
}

/* Comments do not count (a '#' in a string is no comment); -v's reason
 * names the file, the word and its line, or what was looked for. */
static void test_comments_and_why(void)
{
    static const char commented[] = "import torch\n# import horovod\n"
        "x = 1  # like horovod does\n";
    static const char quoted[] = "s = 'a # b'; import horovod\n";
    static const char esc[] = "s = \"\\\"#\"; from mpi4py import MPI\n";
    char dir[] = "/tmp/t_mpidetect.XXXXXX", f[128], why[160];

    ok(!mpidetect_python_text((const void *)commented, strlen(commented)),
       "'# import horovod' in comments: not MPI");
    ok(mpidetect_python_text((const void *)quoted, strlen(quoted)),
       "a '#' inside quotes starts no comment");
    ok(mpidetect_python_text((const void *)esc, strlen(esc)),
       "an escaped quote does not end the string");
    if (!mkdtemp(dir))
        return;
    snprintf(f, sizeof f, "%s/train.py", dir);
    write_file(f, commented, 0644);
    is_int(mpidetect_argv_why((char *[]){ "python3", f, NULL }, NULL, why,
                              sizeof why), 0, "a script with horovod in comments only");
    ok(strstr(why, "train.py: no MPI library linked, no mpi4py, horovod") != NULL,
       why);
    write_file(f, "import os\n\nimport horovod.torch as hvd\n", 0644);
    is_int(mpidetect_argv_why((char *[]){ "python3", f, NULL }, NULL, why,
                              sizeof why), 1, "a script importing horovod");
    ok(strstr(why, "train.py names horovod on line 3") != NULL, why);
    is_int(mpidetect_argv_why((char *[]){ "python3", "-m", "mpi4py", f, NULL },
                              NULL, why, sizeof why), 1, "python -m mpi4py");
    is_str(why, "python -m mpi4py", "  the reason");
    unlink(f);
    rmdir(dir);
}

/* TensorFlow (TF_CONFIG's reader): Python code naming tensorflow, not
 * its comments, not a shell script, not an ELF. */
static void test_tf(void)
{
    char dir[] = "/tmp/t_mpidetect.XXXXXX", f[128], sh[128], why[160];
    char path[300];

    if (!mkdtemp(dir))
        return;
    snprintf(f, sizeof f, "%s/train_tf.py", dir);
    snprintf(sh, sizeof sh, "%s/run.sh", dir);
    write_file(f, "import os\nimport tensorflow as tf\n", 0755);
    write_file(sh, "#!/bin/sh\n# tensorflow\npython3 -c 'import tensorflow'\n", 0755);
    is_int(mpidetect_tf_argv_why((char *[]){ "python3", f, NULL }, NULL, why,
                                 sizeof why), 1, "python3 SCRIPT importing tensorflow: TF");
    ok(strstr(why, "train_tf.py names tensorflow on line 2") != NULL, why);
    is_int(mpidetect_argv((char *[]){ "python3", f, NULL }, NULL), 0,
           "  and no MPI");
    is_int(mpidetect_tf_argv_why((char *[]){ "python3", "-m", "tensorflow.x",
                                             NULL }, NULL, why, sizeof why), 1,
           "python3 -m tensorflow...: TF");
    is_int(mpidetect_tf_argv_why((char *[]){ "python3", "-c",
                                             "import tensorflow as tf", NULL },
                                 NULL, why, sizeof why), 1, "python3 -c CODE: TF");
    is_int(mpidetect_tf_argv_why((char *[]){ sh, NULL }, NULL, why, sizeof why), 0,
           "a shell script naming tensorflow: not seen (--tf-config)");
    is_int(mpidetect_tf_argv_why((char *[]){ "true", NULL }, "/usr/bin:/bin",
                                 why, sizeof why), 0, "an ELF: not TF");
    write_file(f, "#!/usr/bin/env python3\nimport torch  # not tensorflow\n", 0755);
    is_int(mpidetect_tf_argv_why((char *[]){ "python3", f, NULL }, NULL, why,
                                 sizeof why), 0, "tensorflow in a comment: not TF");
    ok(strstr(why, "train_tf.py: no tensorflow in its code") != NULL, why);
    write_file(f, "import tensorflow as tf\nimport horovod.tensorflow as hvd\n", 0644);
    is_int(mpidetect_tf_argv_why((char *[]){ "python3", f, NULL }, NULL, why,
                                 sizeof why), 0, "TensorFlow under Horovod: no TF_CONFIG");
    ok(strstr(why, "names horovod on line 2: Horovod's ranks read no TF_CONFIG") != NULL, why);
    is_int(mpidetect_argv((char *[]){ "python3", f, NULL }, NULL), 1, "  (it is MPI)");
    write_file(f, "#!/usr/bin/env python3\nimport tensorflow\n", 0755);
    snprintf(path, sizeof path, "/nonexistent:%s", dir);
    is_int(mpidetect_tf_argv_why((char *[]){ "train_tf.py", NULL }, path, why,
                                 sizeof why), 1, "a #! python script in PATH: TF");
    is_int(mpidetect_tf_argv_why((char *[]){ NULL }, NULL, why, sizeof why), 0,
           "no program: not TF");
    unlink(f);
    unlink(sh);
    rmdir(dir);
}

/* /proc/PID/maps lines: a libmpi* file is MPI, its name is given. */
static void test_maps(void)
{
    static const char mpi[] =
        "55d0c0000000-55d0c0001000 r--p 00000000 08:01 123 /usr/bin/python3.11\n"
        "7f00aa000000-7f00aa100000 r-xp 00000000 08:01 456 "
        "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4\n[heap]\n"
        "7f00ab000000-7f00ab100000 r-xp 00000000 08:01 789 "
        "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_pml_ob1.so\n";
    static const char linked[] =
        "7f00aa000000-7f00aa100000 r-xp 00000000 08:01 456 "
        "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4\n"
        "7f00ac000000 r-xp 0 08:01 1 /usr/lib/libtorch_cpu.so\n";
    static const char mpich[] = "7f0 r-xp 0 0:0 1 /opt/mpich/lib/libmpich.so.12";
    static const char none[] =
        "7f00 r-xp 0 0:0 1 /usr/lib/libtorch.so\n"
        "7f01 rw-p 0 0:0 0 \n7f02 r--p 0 0:0 1 /tmp/libmpi/notes.txt\n";
    char lib[64] = "";

    ok(mpidetect_maps_text(mpi, strlen(mpi), lib, sizeof lib) &&
       strcmp(lib, "libmpi.so.40.30.4") == 0, "maps with Open MPI's libmpi and a component: MPI_Init ran");
    ok(!mpidetect_maps_text(linked, strlen(linked), lib, sizeof lib),
       "Open MPI's libmpi linked but no component loaded (no MPI_Init): not MPI");
    ok(mpidetect_maps_text(mpich, strlen(mpich), lib, sizeof lib) &&
       strcmp(lib, "libmpich.so.12") == 0, "maps with MPICH, no last newline");
    ok(!mpidetect_maps_text(none, strlen(none), lib, sizeof lib),
       "libtorch, anonymous memory, a folder named libmpi: not MPI");
    ok(!mpidetect_pid(getpid(), lib, sizeof lib), "this test maps no libmpi");
    ok(!mpidetect_pid(-1, lib, sizeof lib), "no such process: 0");
}

int main(void)
{
    test_elf();
    test_text();
    test_more_words();
    test_comments_and_why();
    test_maps();
    test_argv();
    test_tf();
    return tap_done();
}
