#!/bin/sh
# t_dialects.sh - the command lines of torchrun, mpirun, mpiexec (Hydra) and
# horovodrun given to dlrun: each runs as the tool would, or is refused with
# one line naming the dlrun way; none exits 0 having done the wrong thing.
. "$(dirname "$0")/lib.sh"
CLEAN="-u SLURM_JOB_ID -u SLURM_STEP_ID -u PMIX_NAMESPACE -u OMPI_COMM_WORLD_RANK
    -u PMI_RANK -u PBS_NODEFILE -u LSB_MCPU_HOSTS -u NQSV_MPIOPTS -u OMP_NUM_THREADS"
clean_env() { env $CLEAN "$@"; }
ranks() { sort | tr '\n' ' '; }
one_line() { expect_eq "  one line" "$(wc -l <"$TMP/err")" 1; }
cd "$TMP" || exit 1

# --- single-dash words are words: -host is not -h ---
out=$(clean_env "$DLRUN" -host localhost:2 sh -c 'echo $RANK/$WORLD_SIZE' | ranks)
expect_eq "-host localhost:2 runs 2 ranks" "$out" "0/2 1/2 "
printf 'localhost slots=2\n' >hf
out=$(clean_env "$DLRUN" -hostfile hf sh -c 'echo $RANK/$WORLD_SIZE' | ranks)
expect_eq "-hostfile hf runs 2 ranks" "$out" "0/2 1/2 "
out=$(clean_env "$DLRUN" -machinefile hf -np 1 sh -c 'echo $RANK/$WORLD_SIZE')
expect_eq "-machinefile hf -np 1" "$out" "0/1"
out=$(clean_env "$DLRUN" -hosts localhost -np 1 sh -c 'echo $RANK/$WORLD_SIZE')
expect_eq "-hosts localhost (Hydra)" "$out" "0/1"
expect_rc "-hostfile missing file" 2 clean_env "$DLRUN" -hostfile nosuch true
one_line
expect_rc "-hfoo is not help" 2 clean_env "$DLRUN" -hfoo true
expect_grep "  says unknown option" "unknown option '-hfoo'" "$TMP/err"
expect_rc "-h prints help" 0 clean_env "$DLRUN" run -h
expect_grep "  the usage" "usage: dlrun" "$TMP/out"
expect_rc "--help prints help" 0 clean_env "$DLRUN" run --help

# --- --wdir (and mpirun's -wdir) on one node ---
mkdir -p "$TMP/w"
out=$(clean_env "$DLRUN" -np 2 --wdir "$TMP/w" pwd | sort -u)
expect_eq "--wdir: ranks run there" "$out" "$TMP/w"
out=$(clean_env "$DLRUN" -np 1 -wdir "$TMP/w" --output-dir logs pwd)
expect_eq "-wdir (mpirun)" "$out" "$TMP/w"
expect_eq "  --output-dir stays relative to dlrun's folder" \
    "$(cat "$TMP/logs/rank.0/stdout" 2>/dev/null)" "$TMP/w"
expect_rc "--wdir /nonexistent refused" 2 clean_env "$DLRUN" --wdir /nonexistent true
expect_grep "  names it" "/nonexistent" "$TMP/err"
one_line

# --- MPMD (mpirun's PROG : PROG) ---
expect_rc "MPMD refused" 2 clean_env "$DLRUN" -np 1 ./a A : -np 1 ./b B
expect_grep "  names the dlrun way" "picks its part by RANK" "$TMP/err"
one_line

done_testing
