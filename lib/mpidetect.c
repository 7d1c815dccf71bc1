/* mpidetect.c - see mpidetect.h. */
#include "mpidetect.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"

#define SCRIPT_SCAN (64 * 1024)

int mpidetect_python_text(const unsigned char *b, size_t n)
{
    if (n > SCRIPT_SCAN)
        n = SCRIPT_SCAN;
    return memmem(b, n, "mpi4py", 6) != NULL ||
           memmem(b, n, "horovod", 7) != NULL;
}

/* The file offset of virtual address addr (in a PT_LOAD), or 0. */
static uint64_t vaddr_to_offset(const unsigned char *b, size_t n,
                                const Elf64_Ehdr *eh, uint64_t addr)
{
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        Elf64_Phdr ph;
        uint64_t at = eh->e_phoff + (uint64_t)i * eh->e_phentsize;
        if (at > n || n - at < sizeof ph)
            return 0;
        memcpy(&ph, b + at, sizeof ph);
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
        uint64_t at = eh->e_phoff + (uint64_t)i * eh->e_phentsize;
        if (at > n || n - at < sizeof ph)
            return 0;
        memcpy(&ph, b + at, sizeof ph);
        if (ph.p_type == PT_DYNAMIC && ph.p_offset <= n &&
            ph.p_filesz <= n - ph.p_offset) {
            *off = ph.p_offset;
            *size = ph.p_filesz;
            return 1;
        }
    }
    return 0;
}

/* Does the string at strtab + name (bounded by the file) start with
 * "libmpi"? */
static int needed_is_mpi(const unsigned char *b, size_t n, uint64_t strtab,
                         uint64_t name)
{
    uint64_t at = strtab + name;

    return at >= strtab && at < n && n - at >= 6 &&
           memcmp(b + at, "libmpi", 6) == 0;
}

static int elf_needs_mpi(const unsigned char *b, size_t n)
{
    Elf64_Ehdr eh;
    uint64_t dyn = 0, dsize = 0, strtab = 0;

    if (n < sizeof eh || b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
        return 0;
    memcpy(&eh, b, sizeof eh);
    if (!find_dynamic(b, n, &eh, &dyn, &dsize))
        return 0;
    for (uint64_t at = dyn; dsize - (at - dyn) >= sizeof(Elf64_Dyn);
         at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        memcpy(&d, b + at, sizeof d);
        if (d.d_tag == DT_NULL)
            break;
        if (d.d_tag == DT_STRTAB)
            strtab = vaddr_to_offset(b, n, &eh, d.d_un.d_ptr);
    }
    for (uint64_t at = dyn; strtab && dsize - (at - dyn) >= sizeof(Elf64_Dyn);
         at += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        memcpy(&d, b + at, sizeof d);
        if (d.d_tag == DT_NULL)
            break;
        if (d.d_tag == DT_NEEDED && needed_is_mpi(b, n, strtab, d.d_un.d_val))
            return 1;
    }
    return 0;
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

/* Map path and test it: mode 0 = mpidetect_file, 1 = Python text. */
static int test_path(const char *path, int python)
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
    rc = python ? mpidetect_python_text(m, (size_t)st.st_size)
                : mpidetect_file(m, (size_t)st.st_size);
    munmap(m, (size_t)st.st_size);
    return rc != 0;
}

/* python [OPTIONS] (SCRIPT | -m MODULE | -c CODE) */
static int python_argv(char *const *argv)
{
    for (int i = 1; argv[i]; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-m") == 0)
            return argv[i + 1] && (strncmp(argv[i + 1], "mpi4py", 6) == 0 ||
                                   strncmp(argv[i + 1], "horovod", 7) == 0);
        if (strcmp(a, "-c") == 0)
            return argv[i + 1] &&
                   mpidetect_python_text((const void *)argv[i + 1],
                                         strlen(argv[i + 1]));
        if (strcmp(a, "-W") == 0 || strcmp(a, "-X") == 0) {
            i++;
            continue;
        }
        if (a[0] != '-')
            return test_path(a, 1);
        if (!argv[i + 1])
            return 0;
    }
    return 0;
}

int mpidetect_argv(char *const *argv, const char *path)
{
    const char *base;
    char file[PATH_MAX];

    if (!argv || !argv[0])
        return 0;
    base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strncmp(base, "python", 6) == 0)
        return python_argv(argv);
    if (proc_find_program(argv[0], path, file, sizeof file) < 0)
        return 0;
    return test_path(file, 0);
}
