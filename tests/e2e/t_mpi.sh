#!/bin/sh
# t_mpi.sh - MPI programs on one node without mpirun: dlrun hosts a PMIx
# server (--mpi=auto finds MPI programs), Open MPI 4.1's MPI_Init joins one
# world, an mpi4py all-reduce works, a rank that aborts or exits ends the
# job with its code, output is tagged per rank, restarts get a fresh
# namespace, and non-MPI programs and per-task mode get no server.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
command -v mpicc >/dev/null 2>&1 || skip "skip: mpicc not installed (libopenmpi-dev)"
"$DLRUN" check | grep -q 'PMIx hosting: *yes' || skip "skip: dlrun built without PMIx"
mpicc -O2 -o "$TMP/mpi_hello" "$E2E/mpi_hello.c" || { fail "mpicc"; done_testing; }
HELLO=$TMP/mpi_hello
# the server's directory goes under TMPDIR: it must be gone afterwards
# (Open MPI's singletons and mpirun leave their session directories there)
mkdir "$TMP/tmpdir"
TMPDIR=$TMP/tmpdir
export TMPDIR
# 4 ranks on however many cores this machine has
NP="-np 4 --oversubscribe"

expect_rc "dlrun -np 4 -l mpi_hello (auto: an ELF that needs libmpi)" 0 \
    within 600 "$DLRUN" $NP -l "$HELLO"
expect_eq "  4 ranks in one world of 4, tagged" \
    "$(grep -c '^\[\([0-3]\)\] hello \1 of 4 on ' "$TMP/out")" 4 || sed 's/^/  | /' "$TMP/out" "$TMP/err"
expect_eq "  the all-reduce summed every rank" "$(grep -c '^\[[0-3]\] rank [0-3]: sum 6 (expected 6)$' "$TMP/out")" 4

expect_rc "mpi4py all-reduce: dlrun -np 4 python3 mpi_allreduce.py" 0 \
    within 600 "$DLRUN" $NP "$PY" "$E2E/mpi_allreduce.py"
expect_eq "  4 ranks agree" "$(grep -c '^rank [0-3] of 4 on .*: sum 6 ok$' "$TMP/out")" 4 ||
    sed 's/^/  | /' "$TMP/out" "$TMP/err"

expect_rc "rank 2 calls MPI_Abort(7): the job ends with 7" 7 \
    within 600 "$DLRUN" $NP "$HELLO" abort 2 7
expect_grep "  dlrun names rank 2 and its code" "rank 2 (host [^,]*, pid [0-9]*) exited with code 7" "$TMP/err"
expect_rc "rank 1 exits 3 after MPI_Init: the job ends with 3" 3 \
    within 600 "$DLRUN" $NP "$HELLO" exit 1 3
expect_grep "  dlrun names rank 1 and its code" "rank 1 (host [^,]*, pid [0-9]*) exited with code 3; stopped 3 other ranks" "$TMP/err"

# each singleton in a TMPDIR of its own: two Open MPI singletons starting
# at once share ompi.HOST.UID under one TMPDIR, and one's cleanup can pull
# it from under the other's mkdir (orte_session_dir failed)
expect_rc "--mpi=none: no server" 0 within 600 "$DLRUN" -np 2 --mpi=none sh -c \
    'TMPDIR=$TMPDIR/singleton.$RANK; mkdir -p "$TMPDIR"; export TMPDIR; exec "$0"' "$HELLO"
expect_eq "  so each rank is a world of its own (Open MPI's singleton)" \
    "$(grep -c '^hello 0 of 1 on ' "$TMP/out")" 2

expect_rc "auto, a program that is not MPI: no PMIx variables" 0 \
    "$DLRUN" -np 2 sh -c 'echo "pmix=${PMIX_RANK:-none} ompi=${OMPI_MCA_schizo:-none}"'
expect_eq "  none for either rank" "$(grep -c '^pmix=none ompi=none$' "$TMP/out")" 2
# a comment is no import; -v says what auto decided and why
printf 'import os  # not horovod\n# import horovod\nprint("pmix=%%s" %% os.environ.get("PMIX_RANK", "none"))\n' \
    >"$TMP/commented.py"
expect_rc "auto, horovod only in comments: not MPI" 0 "$DLRUN" -v -np 2 "$PY" "$TMP/commented.py"
expect_eq "  no PMIx variables" "$(grep -c '^pmix=none$' "$TMP/out")" 2
expect_grep "  -v says why" "mpi=auto: no PMIx server: .*commented.py: no MPI library linked" "$TMP/err"
expect_rc "--mpi=pmix for a wrapper script: the server's variables" 0 \
    "$DLRUN" -np 2 --mpi=pmix sh -c 'echo "pmix=$PMIX_RANK of $PMIX_NAMESPACE ompi=$OMPI_MCA_schizo"'
expect_eq "  each rank its own PMIX_RANK, one namespace" \
    "$(sed -n 's/^pmix=\([01]\) of \(dlrun\.[^ ]*\.0\) ompi=^orte$/\2/p' "$TMP/out" | sort | uniq -c | awk '{ print $1 }')" 2

# a restart (--max-restarts) registers a new namespace: rank 1 fails once
cat >"$TMP/once.sh" <<EOS
if [ "\$TORCHELASTIC_RESTART_COUNT" = 0 ] && [ "\$RANK" = 1 ]; then
    exec "$HELLO" exit 1 3
fi
exec "$HELLO"
EOS
expect_rc "--max-restarts 1 --mpi=pmix: the second attempt succeeds" 0 \
    within 600 "$DLRUN" -np 2 --max-restarts 1 --mpi=pmix sh "$TMP/once.sh"
# rank 1 flushed its lines before it failed; rank 0's first attempt may be
# stopped (fail-fast) before its own flush, so only its second one is sure
expect_eq "  both attempts a world of 2" \
    "$(grep -c '^hello 1 of 2 on ' "$TMP/out") $(grep -c '^hello 0 of 2 on ' "$TMP/out" | sed 's/^[12]$/1 or 2/') $(grep -vc '^hello [01] of 2 on \|^rank ' "$TMP/out")" \
    "2 1 or 2 0" || sed 's/^/  | /' "$TMP/out" "$TMP/err"

expect_rc "--mpi=bogus: usage error" 2 "$DLRUN" --mpi=bogus true
expect_grep "  says what is expected" "expected auto, pmix, pmi1, pmi2, none or srun" "$TMP/err"
expect_rc "--mpi=srun outside Slurm: usage error" 2 env -u SLURM_JOB_ID "$DLRUN" -np 2 --mpi=srun true
expect_grep "  says where it works" "inside a Slurm allocation" "$TMP/err"

# per-task mode under mpirun: mpirun's PMIx serves the ranks, dlrun execs
if command -v mpirun >/dev/null 2>&1; then
    expect_rc "mpirun -np 2 dlrun mpi_hello: dlrun hosts nothing" 0 \
        within 600 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        mpirun --oversubscribe -np 2 "$DLRUN" "$HELLO"
    expect_eq "  one world of 2" "$(grep -c '^hello [01] of 2 on ' "$TMP/out")" 2 ||
        sed 's/^/  | /' "$TMP/out" "$TMP/err"
fi
expect_eq "no PMIx server directory left in TMPDIR" \
    "$(ls "$TMP/tmpdir" | grep '^dlrun-pmix')" ""
done_testing
