/* mpidetect.h - does a command line run an MPI program?  For --mpi=auto:
 * dlrun hosts a PMIx server only for those (its start costs a few ms).
 *
 *  - an ELF executable whose DT_NEEDED names a libmpi* (Open MPI's
 *    libmpi.so.40, MPICH's libmpich.so.12, libmpi_cxx...);
 *  - a script (#! line naming python) or `python SCRIPT` whose first
 *    64 KiB mention mpi4py, horovod, pyrannc (RaNNC) or libmpi (ctypes)
 *    in their code: a comment ("# import horovod") does not count;
 *    `python -m mpi4py`, `python -c CODE` with the same words.
 * A program that loads MPI some other way (through a module of its own,
 * dlopen, a shell wrapper) is not seen here: at run time
 * mpidetect_pid() finds the libmpi its ranks map, and the launch stops
 * them with a line naming --mpi=pmix rather than letting each rank be an
 * MPI job of its own.
 */
#ifndef DLRUN_MPIDETECT_H
#define DLRUN_MPIDETECT_H

#include <stddef.h>
#include <sys/types.h>

/* 1 when argv (NULL-terminated, argv[0] searched in path as execvp
 * would; path may be NULL) runs an MPI program, else 0 (also when the
 * files cannot be read: the launch reports that itself). */
int mpidetect_argv(char *const *argv, const char *path);

/* The same, with why it decided into why (len bytes; NULL: not wanted),
 * for -v: "train.py names horovod on line 3", "./a.out links an MPI
 * library (libmpi*)", "PROG: no MPI library linked, ...".  Comments
 * (from a '#' outside quotes) never count. */
int mpidetect_argv_why(char *const *argv, const char *path, char *why,
                       size_t len);

/* Does argv run TensorFlow, the one framework that reads TF_CONFIG?  1
 * when it is Python (python SCRIPT, a #! python script, python -c CODE,
 * python -m tensorflow...) whose code (not its comments, first 64 KiB)
 * names tensorflow, else 0; why as for mpidetect_argv_why ("train.py
 * names tensorflow on line 2"); code that also names horovod is not
 * (Horovod's ranks read no TF_CONFIG).  A program that imports it through
 * a module of its own is not seen: --tf-config says so by hand. */
int mpidetect_tf_argv_why(char *const *argv, const char *path, char *why,
                          size_t len);

/* The same test on the n bytes of a whole file (mapped or read): 1 when
 * it is an ELF that needs libmpi*, 2 when it is a #! python script that
 * mentions mpi4py or horovod, else 0.  Any bytes are safe. */
int mpidetect_file(const unsigned char *b, size_t n);

/* Which MPI an ELF program links, for --mpi=auto: MPICH's ABI (libmpich*,
 * or the libmpi.so.12 of Intel MPI and MVAPICH: the simple PMI wire) or
 * another libmpi* (Open MPI's libmpi.so.40: PMIx). */
enum { MPIDETECT_ABI_OTHER = 1, MPIDETECT_ABI_MPICH = 2 };

/* The ABI of the first libmpi* the n bytes of an ELF file need, else 0
 * (not ELF, no MPI linked).  Any bytes are safe. */
int mpidetect_file_abi(const unsigned char *b, size_t n);

/* The same for argv[0] searched in path as execvp would (a script or
 * python is 0: what its interpreter loads is not known before it runs). */
int mpidetect_argv_abi(char *const *argv, const char *path);

/* 1 when the n bytes of Python text mention mpi4py, horovod, pyrannc or
 * libmpi. */
int mpidetect_python_text(const unsigned char *b, size_t n);

/* 1 when process pid or one of its descendants (4 levels, 64 processes:
 * a shell wrapper's python) has initialized MPI, as /proc/PID/maps shows
 * it (mpidetect_maps_text), with the library's file name copied into lib
 * (len bytes); 0 when none has or /proc cannot be read. */
int mpidetect_pid(pid_t pid, char *lib, size_t len);

/* 1 when the n bytes of a /proc/PID/maps text show MPI initialized: a
 * libmpi* (libmpich*, Intel's libmpi.so.12) mapped, and for Open MPI's
 * libmpi.so.40, which programs link without calling MPI_Init (PyTorch
 * with its MPI backend), one of its mca_* components too.  The library's
 * file name goes into lib (len bytes).  Any bytes are safe. */
int mpidetect_maps_text(const char *b, size_t n, char *lib, size_t len);

#endif
