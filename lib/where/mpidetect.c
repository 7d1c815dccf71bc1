/* mpidetect.c - see mpidetect.h. */
#include "where/mpidetect.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/findprog.h"

#define SCRIPT_SCAN (64 * 1024)

/* Where the code of a line of Python (n bytes) ends: at a '#' outside
 * quotes, so that "# import horovod" in a comment does not count. */
static size_t code_end(const unsigned char *s, size_t n)
{
    unsigned char q = 0;

    for (size_t i = 0; i < n; i++) {
        if (q && s[i] == '\\')
            i++;
        else if (q && s[i] == q)
            q = 0;
        else if (!q && (s[i] == '\'' || s[i] == '"'))
            q = s[i];
        else if (!q && s[i] == '#')
            return i;
    }
    return n;
}

/* What a Python program's code is searched for: MPI's modules, or
 * TensorFlow (the one framework that reads TF_CONFIG). */
struct lookfor {
    const char *const *words;   /* NULL-terminated */
    const char *what;           /* for why: "MPI", "TensorFlow" */
};

static const char *const mpi_words[] = { "mpi4py", "horovod", "pyrannc",
                                         "libmpi", NULL };
static const char *const tf_words[] = { "tensorflow", NULL };
static const char *const hvd_words[] = { "horovod", NULL };
static const struct lookfor look_mpi = { mpi_words, "MPI" };
static const struct lookfor look_tf = { tf_words, "TensorFlow" };
static const struct lookfor look_hvd = { hvd_words, "Horovod" };

/* The first word of lf in the code (not the comments) of the first
 * SCRIPT_SCAN bytes, its line (from 1) into *line; NULL when none. */
static const char *python_word(const unsigned char *b, size_t n,
                               const struct lookfor *lf, size_t *line)
{
    const char *const *words = lf->words;
    size_t at = 0, no = 1;

    if (n > SCRIPT_SCAN)
        n = SCRIPT_SCAN;
    for (; at < n; no++) {
        const unsigned char *nl = memchr(b + at, '\n', n - at);
        size_t end = nl ? (size_t)(nl - b) : n, code = code_end(b + at, end - at);

        for (size_t w = 0; words[w]; w++)
            if (memmem(b + at, code, words[w], strlen(words[w]))) {
                *line = no;
                return words[w];
            }
        at = end + 1;
    }
    return NULL;
}

int mpidetect_python_text(const unsigned char *b, size_t n)
{
    size_t line;

    return python_word(b, n, &look_mpi, &line) != NULL;
}

/* Program header i of the file into *ph: 1, or 0 when it lies outside. */
static int phdr_at(const unsigned char *b, size_t n, const Elf64_Ehdr *eh,
                   unsigned i, Elf64_Phdr *ph)
{
    uint64_t at = eh->e_phoff + (uint64_t)i * eh->e_phentsize;

    if (at > n || n - at < sizeof *ph)
        return 0;
    memcpy(ph, b + at, sizeof *ph);
    return 1;
}

/* The file offset of virtual address addr (in a PT_LOAD), or 0. */
static uint64_t vaddr_to_offset(const unsigned char *b, size_t n,
                                const Elf64_Ehdr *eh, uint64_t addr)
{
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr ph;
        if (!phdr_at(b, n, eh, i, &ph))
            return 0;
        if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
            addr - ph.p_vaddr < ph.p_filesz)
            return addr - ph.p_vaddr + ph.p_offset;
    }
    return 0;
}

/* The PT_DYNAMIC segment's offset and size; 0 when there is none. */
static int find_dynamic(const unsigned char *b, size_t n, const Elf64_Ehdr *eh,
                        uint64_t *off, uint64_t *size)
{
    if (eh->e_phentsize < sizeof(Elf64_Phdr))
        return 0;
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr ph;
        if (!phdr_at(b, n, eh, i, &ph))
            return 0;
        if (ph.p_type == PT_DYNAMIC && ph.p_offset <= n &&
            ph.p_filesz <= n - ph.p_offset) {
            *off = ph.p_offset;
            *size = ph.p_filesz;
            return 1;
        }
    }
    return 0;
}

/* The library named at strtab + name (bounded by the file): 0 not
 * libmpi*, MPIDETECT_ABI_MPICH for MPICH's ABI (libmpich*, and the
 * libmpi*.so.12 of Intel MPI and MVAPICH: libmpi.so.12, libmpifort.so.12),
 * MPIDETECT_ABI_OTHER for another libmpi* (Open MPI's libmpi.so.40). */
static int needed_abi(const unsigned char *b, size_t n, uint64_t strtab,
                      uint64_t name)
{
    uint64_t at = strtab + name;
    const unsigned char *end;
    size_t left;

    if (at < strtab || at >= n || n - at < 6 || memcmp(b + at, "libmpi", 6))
        return 0;
    left = (size_t)(n - at);
    end = memchr(b + at, '\0', left);
    if (end)
        left = (size_t)(end - (b + at));
    if ((left >= 8 && memcmp(b + at, "libmpich", 8) == 0) ||
        (left >= 6 && memcmp(b + at + left - 6, ".so.12", 6) == 0))
        return MPIDETECT_ABI_MPICH;
    return MPIDETECT_ABI_OTHER;
}

/* The dynamic section's string table offset, 0 when none. */
static uint64_t dyn_strtab(const unsigned char *b, size_t n,
                           const Elf64_Ehdr *eh, uint64_t dyn, uint64_t dsize)
{
    for (uint64_t at = dyn; dsize - (at - dyn) >= sizeof(Elf64_Dyn);
         at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        memcpy(&d, b + at, sizeof d);
        if (d.d_tag == DT_NULL)
            break;
        if (d.d_tag == DT_STRTAB)
            return vaddr_to_offset(b, n, eh, d.d_un.d_ptr);
    }
    return 0;
}

/* The first libmpi* the ELF needs, as needed_abi says; 0 when none. */
static int elf_mpi_abi(const unsigned char *b, size_t n)
{
    Elf64_Ehdr eh;
    uint64_t dyn = 0, dsize = 0, strtab;

    if (n < sizeof eh || b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
        return 0;
    memcpy(&eh, b, sizeof eh);
    if (!find_dynamic(b, n, &eh, &dyn, &dsize))
        return 0;
    strtab = dyn_strtab(b, n, &eh, dyn, dsize);
    for (uint64_t at = dyn; strtab && dsize - (at - dyn) >= sizeof(Elf64_Dyn);
         at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        int abi;
        memcpy(&d, b + at, sizeof d);
        if (d.d_tag == DT_NULL)
            break;
        abi = d.d_tag == DT_NEEDED ? needed_abi(b, n, strtab, d.d_un.d_val) : 0;
        if (abi)
            return abi;
    }
    return 0;
}

static int elf_needs_mpi(const unsigned char *b, size_t n)
{
    return elf_mpi_abi(b, n) != 0;
}

int mpidetect_file_abi(const unsigned char *b, size_t n)
{
    return n >= 4 && memcmp(b, ELFMAG, SELFMAG) == 0 ? elf_mpi_abi(b, n) : 0;
}

int mpidetect_file(const unsigned char *b, size_t n)
{
    if (n >= 4 && memcmp(b, ELFMAG, SELFMAG) == 0)
        return elf_needs_mpi(b, n);
    if (n >= 2 && b[0] == '#' && b[1] == '!') {
        const unsigned char *nl = memchr(b, '\n', n);
        size_t line = nl ? (size_t)(nl - b) : n;
        if (memmem(b, line, "python", 6) && mpidetect_python_text(b, n))
            return 2;
    }
    return 0;
}

/* The reason into why (len bytes), when one is wanted (why not NULL). */
static void because(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void because(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (!why || !len)
        return;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

/* The reason when nothing of lf is seen in what runs. */
static void no_mpi(const char *what, const struct lookfor *lf, char *why,
                   size_t len)
{
    if (lf == &look_tf)
        because(why, len, "%s: no tensorflow in its code", what);
    else
        because(why, len, "%s: no MPI library linked, no mpi4py, horovod, "
                "pyrannc or libmpi in its code", what);
}

/* A #! line naming python, over the n bytes at b. */
static int python_script(const unsigned char *b, size_t n)
{
    const unsigned char *nl = n >= 2 && b[0] == '#' && b[1] == '!' ?
                              memchr(b, '\n', n) : NULL;

    return n >= 2 && b[0] == '#' && b[1] == '!' &&
           memmem(b, nl ? (size_t)(nl - b) : n, "python", 6) != NULL;
}

/* TensorFlow's test of test_bytes: Python code naming tensorflow, and
 * not horovod (Horovod's ranks read no TF_CONFIG). */
static int test_tf(const char *path, const unsigned char *b, size_t n,
                   int python, char *why, size_t len)
{
    size_t line = 0, hline = 0;
    const char *word = python || python_script(b, n) ?
                       python_word(b, n, &look_tf, &line) : NULL;

    if (word && python_word(b, n, &look_hvd, &hline)) {
        because(why, len, "%s names horovod on line %zu: Horovod's ranks "
                "read no TF_CONFIG", path, hline);
        return 0;
    }
    if (word)
        because(why, len, "%s names %s on line %zu", path, word, line);
    return word != NULL;
}

/* The n bytes of path, as a program (python 0) or Python text (1), for
 * lf: MPI's test is mpidetect_file's; TensorFlow's test_tf. */
static int test_bytes(const char *path, const unsigned char *b, size_t n,
                      int python, const struct lookfor *lf, char *why,
                      size_t len)
{
    size_t line = 0;
    int rc = lf == &look_tf ? test_tf(path, b, n, python, why, len) :
             python ? mpidetect_python_text(b, n) : mpidetect_file(b, n);
    const char *word = lf == &look_tf || (rc == 1 && !python) ? NULL :
                       python_word(b, n, lf, &line);

    if (lf == &look_tf)
        return rc;
    if (word)
        because(why, len, "%s names %s on line %zu", path, word, line);
    else if (rc)
        because(why, len, "%s links an MPI library (libmpi*)", path);
    return rc != 0;
}

/* Map path and test it (test_bytes); 0 when it cannot be read. */
static int test_path(const char *path, int python, const struct lookfor *lf,
                     char *why, size_t len)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
    void *m = MAP_FAILED;

    if (fd < 0)
        return 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    rc = test_bytes(path, m, (size_t)st.st_size, python, lf, why, len);
    munmap(m, (size_t)st.st_size);
    return rc;
}

/* python -m MODULE: a module of lf's (libmpi is no module). */
static int module_of(const char *mod, const struct lookfor *lf)
{
    for (size_t w = 0; lf->words[w]; w++)
        if (strcmp(lf->words[w], "libmpi") != 0 &&
            strncmp(mod, lf->words[w], strlen(lf->words[w])) == 0)
            return 1;
    return 0;
}

/* python [OPTIONS] (SCRIPT | -m MODULE | -c CODE) */
static int python_argv(char *const *argv, const struct lookfor *lf,
                       char *why, size_t len)
{
    for (int i = 1; argv[i]; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-m") == 0) {
            int rc = argv[i + 1] && module_of(argv[i + 1], lf);
            if (rc)
                because(why, len, "python -m %s", argv[i + 1]);
            return rc;
        }
        if (strcmp(a, "-c") == 0)
            return argv[i + 1] &&
                   test_bytes("python -c", (const void *)argv[i + 1],
                              strlen(argv[i + 1]), 1, lf, why, len);
        if (strcmp(a, "-W") == 0 || strcmp(a, "-X") == 0) {
            i++;
            continue;
        }
        if (a[0] != '-') {
            no_mpi(a, lf, why, len);
            return test_path(a, 1, lf, why, len);
        }
        if (!argv[i + 1])
            return 0;
    }
    return 0;
}

static int argv_why(char *const *argv, const char *path,
                    const struct lookfor *lf, char *why, size_t len)
{
    const char *base;
    char file[PATH_MAX];

    no_mpi(argv && argv[0] ? argv[0] : "?", lf, why, len);
    if (!argv || !argv[0])
        return 0;
    base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strncmp(base, "python", 6) == 0)
        return python_argv(argv, lf, why, len);
    if (find_program(argv[0], path, file, sizeof file) < 0)
        return 0;
    return test_path(file, 0, lf, why, len);
}

int mpidetect_argv_why(char *const *argv, const char *path, char *why,
                       size_t len)
{
    return argv_why(argv, path, &look_mpi, why, len);
}

int mpidetect_tf_argv_why(char *const *argv, const char *path, char *why,
                          size_t len)
{
    return argv_why(argv, path, &look_tf, why, len);
}

int mpidetect_argv_abi(char *const *argv, const char *path)
{
    char file[PATH_MAX];
    struct stat st;
    void *m = MAP_FAILED;
    int fd, abi = 0;

    if (!argv || !argv[0] || find_program(argv[0], path, file, sizeof file) < 0)
        return 0;
    fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    abi = mpidetect_file_abi(m, (size_t)st.st_size);
    munmap(m, (size_t)st.st_size);
    return abi;
}

int mpidetect_argv(char *const *argv, const char *path)
{
    return mpidetect_argv_why(argv, path, NULL, 0);
}

/* What maps lines said so far: a libmpi* (its name), and whether Open
 * MPI loaded a component (mca_*.so: MPI_Init ran). */
struct maps_scan {
    int mpi, ompi, mca;
    char lib[128];
};

static void scan_line(const char *line, size_t n, struct maps_scan *st)
{
    const char *slash = NULL, *base;
    size_t blen;

    for (size_t i = 0; i < n; i++)
        if (line[i] == '/')
            slash = line + i;
    if (!slash)
        return;
    base = slash + 1;
    blen = n - (size_t)(base - line);
    if (blen >= 4 && memcmp(base, "mca_", 4) == 0)
        st->mca = 1;
    if (st->mpi || blen < 6 || memcmp(base, "libmpi", 6) != 0)
        return;
    st->mpi = 1;
    st->ompi = blen >= 12 && memcmp(base, "libmpi.so.40", 12) == 0;
    snprintf(st->lib, sizeof st->lib, "%.*s", (int)blen, base);
}

static void scan_text(const char *b, size_t n, struct maps_scan *st)
{
    while (n > 0) {
        const char *nl = memchr(b, '\n', n);
        size_t line = nl ? (size_t)(nl - b) : n;

        scan_line(b, line, st);
        if (!nl)
            break;
        b += line + 1;
        n -= line + 1;
    }
}

/* Open MPI's libmpi is linked into programs that never call MPI_Init (a
 * PyTorch built with its MPI backend): only its components show that
 * MPI_Init ran.  Other MPIs load none: their library is the sign. */
static int scan_result(const struct maps_scan *st, char *lib, size_t len)
{
    if (!st->mpi || (st->ompi && !st->mca))
        return 0;
    if (len)
        snprintf(lib, len, "%s", st->lib);
    return 1;
}

int mpidetect_maps_text(const char *b, size_t n, char *lib, size_t len)
{
    struct maps_scan st = { 0 };

    scan_text(b, n, &st);
    return scan_result(&st, lib, len);
}

/* /proc/PID/maps, read whole (it has no size to stat); 0 / 1 as above. */
static int pid_maps_mpi(pid_t pid, char *lib, size_t len)
{
    struct maps_scan st = { 0 };
    char path[64], buf[65536];
    size_t keep = 0;
    ssize_t got;
    int fd;

    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    /* chunk by chunk; a line cut at a chunk's end is carried over */
    while ((got = read(fd, buf + keep, sizeof buf - keep)) > 0) {
        size_t n = keep + (size_t)got;
        const char *last = memrchr(buf, '\n', n);
        size_t whole = last ? (size_t)(last - buf) + 1 : n;

        scan_text(buf, whole, &st);
        keep = n - whole;
        memmove(buf, buf + whole, keep);
    }
    close(fd);
    scan_text(buf, keep, &st);
    return scan_result(&st, lib, len);
}

/* pid's children (/proc/PID/task/PID/children) into kids; how many. */
static int children_of(pid_t pid, pid_t *kids, int max)
{
    char path[96];
    FILE *f;
    int n = 0, k;

    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid,
             (int)pid);
    f = fopen(path, "re");
    if (!f)
        return 0;
    while (n < max && fscanf(f, "%d", &k) == 1)
        kids[n++] = (pid_t)k;
    fclose(f);
    return n;
}

int mpidetect_pid(pid_t pid, char *lib, size_t len)
{
    pid_t q[64];
    int head = 0, tail = 1, level_end = 1, depth = 0;

    q[0] = pid;
    while (head < tail) {
        if (pid_maps_mpi(q[head], lib, len))
            return 1;
        if (depth < 4)
            tail += children_of(q[head], q + tail, 64 - tail);
        if (++head == level_end) {
            depth++;
            level_end = tail;
        }
    }
    return 0;
}
