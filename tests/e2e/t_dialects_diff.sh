#!/bin/sh
# t_dialects_diff.sh - the differential test of the dialects: command lines
# from torchrun's and Open MPI's documentation, Horovod's docs and the seeds
# (../shared/seeds: blog posts with horovodrun and mpirun lines) run with the
# real tool (Debian's torchrun 1.13 through bench/torchrun-wrapper.py,
# Open MPI's mpirun) and with dlrun in its place; every rank's variables
# and the job's outcome must agree.  Lines for a tool that is not installed
# here (horovodrun; MPICH's mpiexec.hydra where Debian's mpich is not) are
# compared with the mpirun line that means the same.  Lines dlrun refuses
# must exit 2 with one line naming the dlrun way.
#
# Differences by design, not compared: MASTER_ADDR (torchrun: localhost,
# dlrun: 127.0.0.1), OMP_NUM_THREADS (torchrun: 1, dlrun: the rank's CPUs),
# TORCHELASTIC_USE_AGENT_STORE (True under torchrun's static rendezvous,
# whose agent serves the store; dlrun has no agent store), a random
# TORCHELASTIC_RUN_ID (--standalone: compared as "uuid"), the exit code of
# a failed job beyond failed or not (torchrun exits 1, dlrun with the
# failing rank's code).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3     # Debian's, with torch
[ -x "$PY" ] && "$PY" -c 'import torch.distributed.run' 2>/dev/null ||
    skip "skip: $PY has no torch.distributed.run"
command -v mpirun >/dev/null 2>&1 || skip "skip: Open MPI's mpirun not installed"
TORCHRUN="$PY $TOP/bench/torchrun-wrapper.py"
export PYTHON_EXEC=$PY  # dlrun's Python for torchrun lines (torchrun's own override)
root=""
[ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
unset SLURM_JOB_ID SLURM_STEP_ID PMIX_NAMESPACE OMPI_COMM_WORLD_RANK PMI_RANK \
    PMI_SIZE PMI_FD PMI_PORT MPI_LOCALRANKID MPI_LOCALNRANKS \
    PBS_NODEFILE LSB_MCPU_HOSTS NQSV_MPIOPTS OMP_NUM_THREADS \
    NCCL_ASYNC_ERROR_HANDLING TORCH_NCCL_ASYNC_ERROR_HANDLING
cd "$TMP" || exit 1
mkdir -p w
printf 'localhost slots=2\n' >hf
ln -s "$DLRUN" mpirun
ln -s "$DLRUN" horovodrun

# The probe: each rank writes what it was given to $PROBE_OUT/rank.N, the
# facts under one name whichever tool gave them.
cat >probe.py <<'EOF'
import json, os, sys
e = os.environ
def pick(*names):
    for n in names:
        if n in e:
            return e[n]
    return None
rec = {
    "rank": pick("OMPI_COMM_WORLD_RANK", "PMI_RANK", "RANK"),
    "size": pick("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "WORLD_SIZE"),
    "local_rank": pick("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "LOCAL_RANK"),
    "local_size": pick("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "LOCAL_WORLD_SIZE"),
    "cwd": os.getcwd(), "argv": sys.argv[1:],
}
if e.get("PROBE_PMI"):
    rec["pmi"] = [e.get(k) for k in ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
                                     "MPI_LOCALNRANKS")] == [rec["rank"], rec["size"],
                                     rec["local_rank"], rec["local_size"]]
if e.get("PROBE_HOST"):
    # the host name the rank was placed on, as given (Hydra's proxy's)
    rec["host"] = pick("MPIR_CVAR_CH3_INTERFACE_HOSTNAME", "HOROVOD_HOSTNAME")
if "HOROVOD_RANK" in e and "OMPI_COMM_WORLD_RANK" not in e:
    rec["hvd"] = [e["HOROVOD_RANK"], e["HOROVOD_SIZE"], e["HOROVOD_LOCAL_RANK"],
                  e["HOROVOD_LOCAL_SIZE"]]
for k in ("FOO", "BAR", "NCCL_DEBUG", "OMPI_MCA_pml", "OMPI_MCA_btl"):
    rec[k] = e.get(k)
if e.get("PROBE_TORCH"):
    for k in ("GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE",
              "ROLE_NAME", "TORCHELASTIC_RESTART_COUNT",
              "TORCHELASTIC_MAX_RESTARTS", "NCCL_ASYNC_ERROR_HANDLING"):
        rec[k] = e.get(k)
    rid = e.get("TORCHELASTIC_RUN_ID", "")
    rec["run_id"] = "uuid" if len(rid) == 36 and rid.count("-") == 4 else rid
    rec["error_file"] = "TORCHELASTIC_ERROR_FILE" in e
if e.get("HOROVOD_RANK") and "hvd" in rec:
    rec["rank"], rec["size"] = rec["hvd"][0], rec["hvd"][1]
    rec["local_rank"], rec["local_size"] = rec["hvd"][2], rec["hvd"][3]
    del rec["hvd"]
with open(os.path.join(e["PROBE_OUT"], "rank.%s" % rec["rank"]), "w") as f:
    json.dump(rec, f, sort_keys=True)
    f.write("\n")
fail = [a for a in sys.argv[1:] if a.startswith("--fail=")]
if fail and rec["rank"] == fail[0][7:]:
    # fail once every rank has written (fail-fast would end them first)
    import time
    for _ in range(600):
        if len(os.listdir(e["PROBE_OUT"])) >= int(rec["size"]):
            break
        time.sleep(0.1)
    sys.exit(3)
EOF
cp probe.py w/probe.py

# The references' results are kept for make check's second pass (the
# sanitizer build's e2e): the real torchrun, mpirun and Hydra answer the same
# on this machine both times, and running them is this test's costlier half.
# Kept in the build folder, keyed by this file (the probe is in it) and by
# the reference's command.
REFS=$TOP/build/e2e-reference/$(cksum <"$E2E/t_dialects_diff.sh" | cut -d' ' -f1)

# run_one NAME CMD...: the job's outcome (ok/failed) then every rank's record
run_one() {
    out=$TMP/out.$1; shift
    rm -rf "$out"; mkdir -p "$out"
    PROBE_OUT=$out timeout 300 "$@" >"$out.log" 2>&1
    rc=$?
    { [ $rc -eq 0 ] && echo ok || echo failed; cat "$out"/rank.* 2>/dev/null; } |
        sed "s|$TMP|TMP|g"
}

# with_port CMD: CMD with each @P@ a port of fixed_port's (one per call)
with_port() { printf "%s\n" "$1" | sed "s/@P@/$(fixed_port)/g"; }

# same WHAT "REF CMD" "DLRUN CMD": both run, results must be equal; @P@ in
# either is a port free now.  A reference that failed and could not listen
# (EADDRINUSE: a neighbour took the port, or torchrun's own pick of an
# ephemeral one) runs again on another port, twice at most: the reference
# is the yardstick, not under test.  (A run that went well may say
# EADDRINUSE too: torchrun's second agent on one c10d endpoint.)
n=0
same() {
    n=$((n + 1))
    key=$REFS/$(printf '%s' "$2" | cksum | cut -d' ' -f1)
    if [ -f "$key" ]; then
        want=$(cat "$key")
    else
        for _ in 1 2 3; do
            want=$(eval "run_one ref$n $(with_port "$2")")
            case $want in failed*) ;; *) break ;; esac
            grep -qE 'EADDRINUSE|Address already in use' "$TMP/out.ref$n.log" || break
            echo "  (the reference found its port taken: again on another)"
        done
    fi
    got=$(eval "run_one dl$n $(with_port "$3")")
    case $want in ok*|failed*) ;; *) fail "$1: the reference did not run"; return ;; esac
    if [ "$(printf '%s\n' "$want" | wc -l)" -lt 2 ]; then
        fail "$1: the reference started no rank"; sed 's/^/  | /' "$TMP/out.ref$n.log"; return
    fi
    [ -f "$key" ] || { mkdir -p "$REFS" && printf '%s\n' "$want" >"$key.$$" && mv "$key.$$" "$key"; }
    expect_eq "$1" "$got" "$want" || sed 's/^/  dlrun: /' "$TMP/out.dl$n.log"
}

# The real torchrun's --standalone always listens on port 29400: one
# reference run at a time on this machine (another checkout's test run
# may be at the same line; dlrun itself takes a free port).
REF_LOCK="flock /tmp/dlrun-torchrun-29400.lock"
# torchrun: the same arguments after "torchrun" and after "dlrun"
torch() {
    what=$1; shift
    same "torchrun $what" "env PROBE_TORCH=1 $REF_LOCK $TORCHRUN $*" "env PROBE_TORCH=1 $DLRUN $*"
}
# torchrun 1.13 knows only underscores; newer ones take hyphens too
torch_hyphen() {
    what=$1 ref=$2 dl=$3
    same "torchrun $what" "env PROBE_TORCH=1 $REF_LOCK $TORCHRUN $ref" "env PROBE_TORCH=1 $DLRUN $dl"
}
# mpirun: the same arguments after "mpirun"/"dlrun" (and a link named mpirun)
mpi() {
    what=$1; shift
    same "mpirun $what" "mpirun $root $*" "$DLRUN $root $*"
}
mpi_link() {
    what=$1; shift
    same "mpirun $what (dlrun as mpirun)" "mpirun $root $*" "./mpirun $root $*"
}

# --- torchrun's documentation (torch.distributed.run, "Usage") ---
torch "--standalone --nproc_per_node=2" --standalone --nproc_per_node=2 probe.py a b
torch_hyphen "--nproc-per-node 2 --max-restarts 1 (torch 2's hyphens)" \
    "--standalone --nproc_per_node 2 --max_restarts 1 probe.py" \
    "--standalone --nproc-per-node 2 --max-restarts 1 probe.py"
torch "--nnodes=1 --nproc_per_node=2 (static, one node)" --nnodes=1 --nproc_per_node=2 --master_port=@P@ probe.py x
torch "--rdzv_backend=c10d --rdzv_endpoint (one node)" --nnodes=1:1 --nproc_per_node=2 --rdzv_id=job1 --rdzv_backend=c10d --rdzv_endpoint=localhost:@P@ probe.py
torch "--role --max_restarts --monitor_interval" --standalone --nproc_per_node=1 --role trainer --max_restarts=3 --monitor_interval=1 probe.py
torch "-m (module)" --standalone --nproc_per_node=2 -m probe m
torch "--no_python" --standalone --nproc_per_node=1 --no_python $PY probe.py np
torch "--run_path" --standalone --nproc_per_node=1 --run_path probe.py rp
torch "--log_dir --tee 3" --standalone --nproc_per_node=2 --log_dir logs --tee 3 probe.py
torch "--redirects 3" --standalone --nproc_per_node=2 --redirects 3 probe.py
torch "--start_method=spawn" --standalone --nproc_per_node=2 --start_method=spawn probe.py
torch "a failing rank" --standalone --nproc_per_node=2 probe.py --fail=1


# one launcher per node by hand: two on this host, node ranks 0 and 1 (@NR@
# in the line), each pair meeting at a port free now (@P@)
cat >two.sh <<'EOF'
l=""; while [ "$1" != "--" ]; do l="$l $1"; shift; done; shift
a0=""; a1=""
for w in "$@"; do a0="$a0 $(echo "$w" | sed s/@NR@/0/)"; a1="$a1 $(echo "$w" | sed s/@NR@/1/)"; done
$l $a0 & p0=$!
$l $a1 & p1=$!
# one that failed leaves its partner 60 s, not the partner's own timeout: a
# node rank 0 that could not listen leaves node rank 1 waiting for nobody
while kill -0 $p0 2>/dev/null && kill -0 $p1 2>/dev/null; do sleep 0.2; done
if kill -0 $p0 2>/dev/null; then first=$p1 other=$p0; else first=$p0 other=$p1; fi
wait $first; rf=$?
if [ $rf -ne 0 ]; then
    for _ in $(seq 300); do kill -0 $other 2>/dev/null || break; sleep 0.2; done
    kill $other 2>/dev/null
fi
wait $other; ro=$?
[ $rf -eq 0 ] && [ $ro -eq 0 ]
EOF
torch2() {
    what=$1; shift
    same "torchrun $what (two by hand)" \
        "env PROBE_TORCH=1 sh two.sh $TORCHRUN -- $*" \
        "env PROBE_TORCH=1 sh two.sh $DLRUN -- $*"
}
torch2 "static, 2 nodes" --nnodes=2 --node_rank=@NR@ --master_addr=127.0.0.1 --master_port=@P@ --nproc_per_node=2 probe.py
torch2 "rendezvous c10d, 2 nodes" --nnodes=2 --nproc_per_node=1 --rdzv_id=100 --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:@P@ probe.py
torch2 "static, a failing rank" --nnodes=2 --node_rank=@NR@ --master_addr=127.0.0.1 --master_port=@P@ --nproc_per_node=1 probe.py --fail=1
# elastic with a host list: the list's nodes are the allocation, the job
# runs on at most MAX of them and shrinks to MIN after node faults
# (t_shrink_local.sh); torchrun has no host list to compare with
mkdir -p "$TMP/el"
expect_rc "torchrun elastic 1:4 with a host list: runs on its one node" 0 env PROBE_TORCH=1 PROBE_OUT="$TMP/el" "$DLRUN" -H localhost:2 --nnodes=1:4 --nproc_per_node=1 --rdzv_id=100 --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:29400 probe.py
expect_grep "  one rank, a world of 1" '"size": "1"' "$TMP/el/rank.0"
expect_eq "  nothing said" "$(cat "$TMP/err")" ""
# a line dlrun refuses: elastic on this host alone, outside dlrun run
expect_rc "torchrun elastic 1:4, dlrun plan on this host alone: refused" 2 "$DLRUN" plan --nnodes=1:4 --nproc_per_node=1 --rdzv_id=100 --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:29400 probe.py
expect_grep "  names the dlrun ways" "only in an allocation (a scheduler's job, -H, --hostfile) or with one dlrun per node started by hand" "$TMP/err"
expect_eq "  one line" "$(wc -l <"$TMP/err")" 1

# --- Open MPI's mpirun (its man page, Horovod's docs/mpirun.rst, the seeds) ---
mpi "-np 2" -np 2 $PY probe.py a
mpi "-n 2 -x FOO=bar -x BAR" -n 2 -x FOO=bar -x BAR $PY probe.py
mpi "Horovod's mpirun line" -np 2 -bind-to none -map-by slot -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH -x PATH -mca pml ob1 -mca btl ^openib $PY probe.py
mpi "-H localhost:2 -npernode 2" -H localhost:2 -npernode 2 $PY probe.py
mpi "-host localhost:2 -np 2" -host localhost:2 -np 2 $PY probe.py
mpi "-hostfile" -hostfile hf $PY probe.py
mpi "-machinefile -np 1" -machinefile hf -np 1 $PY probe.py
mpi "-wdir" -np 2 -wdir "$TMP/w" $PY probe.py
mpi "--mca btl self -map-by slot -bind-to core -rank-by slot" -np 2 --mca btl self -map-by slot -bind-to core -rank-by slot $PY probe.py
mpi "-np 3 -oversubscribe" -np 3 -oversubscribe $PY probe.py
mpi "-tag-output -report-bindings" -np 2 -tag-output -report-bindings $PY probe.py
mpi "--map-by ppr:2:node" --map-by ppr:2:node -H localhost:2 $PY probe.py
# without -np mpirun starts N on each core, hardware thread or socket
mpi "--map-by ppr:1:core, no -np" --map-by ppr:1:core --bind-to core $PY probe.py
mpi "--map-by ppr:1:hwthread, no -np" --map-by ppr:1:hwthread $PY probe.py
mpi "--map-by ppr:1:socket, no -np" --map-by ppr:1:socket $PY probe.py
mpi "a failing rank" -np 2 $PY probe.py --fail=1
mpi_link "-N 2 -H localhost:2" -N 2 -H localhost:2 $PY probe.py
mpi_link "no -np: every slot (the seeds' Slurm line)" -bind-to none -map-by slot -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH -x PATH -mca pml ob1 $PY probe.py
mpi "MPMD: two programs in one world" -np 1 $PY probe.py A : -np 1 $PY w/probe.py B

# --- horovodrun (the seeds, Horovod's docs) against mpirun's meaning ---
same "horovodrun -np 2 -H localhost:2" "mpirun $root -np 2 -H localhost:2 $PY probe.py" \
    "./horovodrun -np 2 -H localhost:2 $PY probe.py"
same "horovodrun -np 2 (dlrun in its place)" "mpirun $root -np 2 $PY probe.py" \
    "$DLRUN -np 2 $PY probe.py"
same "horovodrun --network-interface --start-timeout --verbose" \
    "mpirun $root -np 2 -H localhost:2 $PY probe.py" \
    "$DLRUN -np 2 -H localhost:2 --network-interface lo --start-timeout 30 --verbose $PY probe.py"
expect_rc "horovodrun –np 4 (a typographic dash, from a seed)" 2 "$DLRUN" –np 4 -H localhost:4 $PY probe.py
expect_grep "  says so" "type it as -np" "$TMP/err"

# --- MPICH's mpiexec (Hydra): the real mpiexec.hydra from Debian's mpich
# (called by its own name: mpirun/mpiexec stay Open MPI's), else mpirun's
# meaning.  Hydra would reach 127.0.0.1 by ssh: the reference runs with
# -launcher fork (every "host" here), dlrun starts both names here itself.
# Hydra sets PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS for any
# program; dlrun sets them only where it serves the PMI wire (--mpi=pmi1,
# or auto for an MPICH program), so the probe compares rank, size and local
# layout under either name, and the host name each rank was placed on.
printf 'localhost:2\n127.0.0.1:2\n' >hfh
HYDRA="env PROBE_HOST=1 mpiexec.hydra -launcher fork"
hydra() {
    what=$1; shift
    same "Hydra $what" "$HYDRA $*" "env PROBE_HOST=1 $DLRUN $*"
}
if command -v mpiexec.hydra >/dev/null 2>&1; then
    hydra "-n 2 -ppn 2 -hosts localhost -genv FOO bar" -n 2 -ppn 2 -hosts localhost -genv FOO bar $PY probe.py
    hydra "-n 4 -ppn 2 -hosts localhost,127.0.0.1" -n 4 -ppn 2 -hosts localhost,127.0.0.1 $PY probe.py
    hydra "-n 3 -hosts localhost:2,127.0.0.1:2" -n 3 -hosts localhost:2,127.0.0.1:2 $PY probe.py
    # more ranks than slots: Hydra deals them round the hosts again
    hydra "-n 4 -hosts localhost,127.0.0.1 (one slot each: round again)" -n 4 -hosts localhost,127.0.0.1 $PY probe.py
    hydra "-n 6 -ppn 2 -hosts localhost,127.0.0.1 (blocks of 2, round again)" -n 6 -ppn 2 -hosts localhost,127.0.0.1 $PY probe.py
    hydra "-f (host:n lines), no -n: every slot" -f hfh $PY probe.py
    hydra "-f -n 2 -env FOO a" -f hfh -n 2 -env FOO a $PY probe.py
    # (Hydra takes one of -genvlist, -genvall, -genvnone; under -launcher
    # fork every rank inherits mpiexec's environment whichever)
    same "Hydra -genvlist" "env BAR=b $HYDRA -n 2 -genvlist BAR $PY probe.py" \
        "env BAR=b PROBE_HOST=1 $DLRUN -n 2 -genvlist BAR $PY probe.py"
    same "Hydra -genvall -envlist" "env BAR=b $HYDRA -genvall -n 2 -envlist BAR $PY probe.py" \
        "env BAR=b PROBE_HOST=1 $DLRUN -genvall -n 2 -envlist BAR $PY probe.py"
    same "Hydra -envall" "env BAR=b $HYDRA -n 2 -envall $PY probe.py" \
        "env BAR=b PROBE_HOST=1 $DLRUN -n 2 -envall $PY probe.py"
    hydra "-wdir" -n 2 -wdir "$TMP/w" $PY probe.py
    hydra "MPMD with -genv: two programs in one world" -genv FOO g -n 1 $PY probe.py A : -n 2 $PY w/probe.py B
    hydra "a failing rank" -n 2 $PY probe.py --fail=1
    same "Hydra -n 4 -ppn 2 -hosts a,b and dlrun --mpi=pmi1: PMI_RANK, PMI_SIZE, MPI_LOCAL* as Hydra sets them" \
        "env PROBE_PMI=1 $HYDRA -n 4 -ppn 2 -hosts localhost,127.0.0.1 $PY probe.py" \
        "env PROBE_HOST=1 PROBE_PMI=1 $DLRUN -n 4 -ppn 2 -hosts localhost,127.0.0.1 --mpi=pmi1 $PY probe.py"
    # -l: every line "[RANK] " (the order between ranks is not defined)
    expect_rc "Hydra -l (the reference)" 0 mpiexec.hydra -launcher fork -n 2 -l sh -c 'echo hi'
    ref=$(sort "$TMP/out")
    expect_rc "dlrun -l" 0 "$DLRUN" -n 2 -l sh -c 'echo hi'
    expect_eq "  the same lines" "$(sort "$TMP/out")" "$ref"
    # an MPICH program (Debian's MPICH 4.0) in one world under both
    if command -v mpicc.mpich >/dev/null 2>&1 &&
        mpicc.mpich -O2 -o mpich_hello "$E2E/mpi_hello.c"; then
        expect_rc "Hydra -n 4 -ppn 4 -hosts localhost -genv an MPICH program (the reference)" 0 \
            timeout 120 mpiexec.hydra -launcher fork -n 4 -ppn 4 -hosts localhost -genv FOO bar ./mpich_hello
        ref=$(sort "$TMP/out")
        expect_rc "dlrun -n 4 -ppn 4 -hosts localhost -genv (dlrun serves the PMI wire)" 0 \
            timeout 120 "$DLRUN" -n 4 -ppn 4 -hosts localhost -genv FOO bar ./mpich_hello
        expect_eq "  the same lines: one world of 4" "$(sort "$TMP/out")" "$ref"
        expect_rc "Hydra -n 4 -ppn 2 -hosts a,b an MPICH program (the reference)" 0 \
            timeout 120 mpiexec.hydra -launcher fork -n 4 -ppn 2 -hosts localhost,127.0.0.1 ./mpich_hello
        ref=$(sort "$TMP/out")
        expect_rc "dlrun -n 4 -ppn 2 -hosts a,b (PMI through the agents)" 0 \
            timeout 120 "$DLRUN" -n 4 -ppn 2 -hosts localhost,127.0.0.1 ./mpich_hello
        expect_eq "  the same lines: one world of 4" "$(sort "$TMP/out")" "$ref"
    fi
else
    echo "# mpiexec.hydra not installed (Debian's mpich): Hydra lines against mpirun's meaning"
    same "Hydra -n 2 -ppn 2 -hosts -genv" "mpirun $root -np 2 -npernode 2 -H localhost:2 -x FOO=bar $PY probe.py" \
        "$DLRUN -n 2 -ppn 2 -hosts localhost -genv FOO bar $PY probe.py"
    same "Hydra -f -env -genvlist" "env BAR=b mpirun $root -hostfile hf -x FOO=a -x BAR $PY probe.py" \
        "env BAR=b $DLRUN -f hf -env FOO a -genvlist BAR $PY probe.py"
fi
# Hydra lines dlrun does not run as Hydra would: refused in one line
expect_rc "Hydra -env before the first of two programs: refused" 2 \
    "$DLRUN" -n 1 -env FOO a $PY probe.py : -n 1 $PY probe.py
expect_grep "  names -genv and env(1)" "^dlrun: -env with several programs (MPMD): under Hydra it is the first part's alone" "$TMP/err"
one_line
expect_rc "Hydra -env in the second part: refused (was run as the program)" 2 \
    "$DLRUN" -n 1 $PY probe.py : -n 1 -env FOO b $PY probe.py
expect_grep "  says where options go" "^dlrun: MPMD part 2: -env: dlrun takes only -np N before a part's program" "$TMP/err"
one_line
# dlrun's own --hosts keeps the slots (as mpirun's -H): refused
expect_rc "dlrun --hosts a,b -n 4 (one slot a host): refused" 2 \
    "$DLRUN" -n 4 --hosts localhost,127.0.0.1 $PY probe.py
one_line
expect_rc "Hydra -genvnone (dlrun always passes the environment): refused" 2 \
    "$DLRUN" -n 1 -genvnone $PY probe.py
one_line

done_testing
