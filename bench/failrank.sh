#!/bin/sh
# One rank of the fail-fast benchmark (bench.py runs it under each launcher).
#   failrank.sh STAMPFILE SLEEPER
# Rank 1 sleeps 0.5 s, writes the wall-clock time (s.ns) to STAMPFILE just
# before it exits 3; every other rank becomes SLEEPER 60, a symlink to
# sleep whose path carries the benchmark's marker, so that a process left
# behind by the launcher can be found by its command line afterwards.
# The rank comes from RANK (dlrun, torchrun) or OMPI_COMM_WORLD_RANK (mpirun).
r=${RANK:-${OMPI_COMM_WORLD_RANK:-}}
if [ "$r" = 1 ]; then
    sleep 0.5
    date +%s.%N > "$1"
    exit 3
fi
exec "$2" 60
