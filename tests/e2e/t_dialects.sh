#!/bin/sh
# t_dialects.sh - the command lines of torchrun, mpirun, mpiexec (Hydra) and
# horovodrun given to dlrun: each runs as the tool would, or is refused with
# one line naming the dlrun way; none exits 0 having done the wrong thing.
. "$(dirname "$0")/lib.sh"
CLEAN="$NO_SCHED -u OMP_NUM_THREADS"
ranks() { sort | tr '\n' ' '; }
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

# --- MPMD (mpirun's PROG : PROG): several programs in one world ---
out=$(clean_env "$DLRUN" -np 1 sh -c 'echo a $RANK/$WORLD_SIZE $0' "A'1" : -np 2 sh -c 'echo b $RANK/$WORLD_SIZE $0' B | sort | tr '\n' '|')
expect_eq "MPMD: ranks numbered in the order of the parts" "$out" "a 0/3 A'1|b 1/3 B|b 2/3 B|"
expect_rc "MPMD: a part's exit code" 5 clean_env "$DLRUN" -np 1 true : -np 1 sh -c 'exit 5'
expect_rc "MPMD: a part without -np" 2 clean_env "$DLRUN" -np 1 ./a A : ./b B
expect_grep "  says so" "MPMD part 2: start it with -np N" "$TMP/err"
one_line
expect_rc "MPMD: no -np at all" 2 clean_env "$DLRUN" ./a : ./b
one_line
if command -v mpicc >/dev/null 2>&1 && mpicc -o "$TMP/hello" "$E2E/mpi_hello.c" 2>/dev/null; then
    cp "$TMP/hello" "$TMP/hello2"
    out=$(clean_env "$DLRUN" -np 1 "$TMP/hello" : -np 1 "$TMP/hello2" | grep '^hello' | sed 's/ on .*//' | sort | tr '\n' '|')
    expect_eq "MPMD: two MPI programs in one world" "$out" "hello 0 of 2|hello 1 of 2|"
fi

# --- Open MPI's mpirun, MPICH's mpiexec (Hydra), horovodrun ---
out=$(clean_env FOO=a "$DLRUN" -np 2 -npernode 2 -H localhost:2 -x FOO -x BAR=b -mca btl self --mca pml ob1 -map-by slot -bind-to none -rank-by slot -tag-output -oversubscribe --allow-run-as-root sh -c 'echo $RANK $FOO $BAR $OMPI_MCA_btl $OMPI_MCA_pml' | sort | tr '\n' '|')
expect_eq "mpirun's single-dash words, -x, -mca K V" "$out" "[0] 0 a b self ob1|[1] 1 a b self ob1|"
expect_rc "-report-bindings" 0 clean_env "$DLRUN" -np 1 -report-bindings true
expect_grep "  reports" "rank 0 host" "$TMP/err"
expect_rc "-rank-by core: refused, names the dlrun way" 2 clean_env "$DLRUN" -np 1 -rank-by core true
expect_grep "  names --rank-by slot" "rank-by slot" "$TMP/err"
out=$(clean_env "$DLRUN" plan -H a:2,b:2 --map-by ppr:1:node | grep -c '^[0-9]')
expect_eq "--map-by ppr:1:node: one rank per node" "$out" 2
ln -s "$DLRUN" mpirun
out=$(clean_env ./mpirun plan -N 1 -H a:2,b:2 | grep -c '^[0-9]')
expect_eq "a link named mpirun: -N is ranks per node" "$out" 2
out=$(clean_env "$DLRUN" plan -N 1 -H a:2,b:2 | grep -c '^[0-9]')
expect_eq "dlrun's -N: nodes" "$out" 2
out=$(clean_env "$DLRUN" plan -N 1 -H a:2,b:2 | grep -c '^[0-9].* b ')
expect_eq "  (the first node only)" "$out" 0
out=$(clean_env "$DLRUN" -ppn 2 -hosts localhost -genv A B -genvall -env C=D -genvlist HOME -l sh -c 'echo $A $C ${HOME:+home}' | sort | tr '\n' '|')
expect_eq "Hydra's -ppn -hosts -genv -env -genvlist -l" "$out" "[0] B D home|[1] B D home|"
out=$(clean_env "$DLRUN" -f hf -n 2 sh -c 'echo $RANK' | sort | tr '\n' ' ')
expect_eq "Hydra's -f hostfile -n 2" "$out" "0 1 "
ln -s "$DLRUN" horovodrun
out=$(clean_env ./horovodrun -np 2 -H localhost:2 --network-interface lo --start-timeout 30 --verbose sh -c 'echo $HOROVOD_RANK $NCCL_SOCKET_IFNAME' | sort | tr '\n' '|')
expect_eq "horovodrun's -np -H --network-interface --start-timeout --verbose" "$out" "0 lo|1 lo|"
expect_rc "horovodrun's --mpi (a flag)" 0 clean_env ./horovodrun -np 1 --mpi true
expect_rc "dlrun's --mpi none (a value)" 0 clean_env "$DLRUN" -np 1 --mpi none true
expect_rc "mpirun's --display-map" 2 clean_env "$DLRUN" -np 1 --display-map true
expect_grep "  names dlrun plan" "dlrun plan" "$TMP/err"
one_line
expect_rc "horovodrun -cb" 2 clean_env ./horovodrun -cb
expect_grep "  names dlrun check" "dlrun check" "$TMP/err"

# --- the program: hints, not bare errors ---
printf 'print(1)\n' >t.py
expect_rc "t.py not in PATH" 127 clean_env "$DLRUN" -np 1 t.py
expect_grep "  hints python3" "run it as python3 t.py" "$TMP/err"
one_line
expect_rc "./t.py not executable" 126 clean_env "$DLRUN" -np 1 ./t.py
expect_grep "  hints python3" "run it as python3 ./t.py" "$TMP/err"
printf '#!/bin/sh\necho hi\n' >x.sh && chmod +x x.sh
expect_rc "x.sh here, not in PATH" 127 clean_env "$DLRUN" -np 1 x.sh
expect_grep "  hints ./" "run it as ./x.sh" "$TMP/err"
expect_rc "a typographic dash (–np)" 2 clean_env "$DLRUN" –np 1 true
expect_grep "  says so" "type it as -np" "$TMP/err"
one_line

# --- plan takes a run's line ---
out=$(clean_env "$DLRUN" plan -np 1 --nproc-per-node 1 show.py a | grep '^program:')
expect_eq "plan shows the program a run would start" "$out" "program:    ${PYTHON_EXEC:-python3} -u show.py a"

# --- torchrun's lines ---
PY=/usr/bin/python3     # Debian's, with torch
export PYTHON_EXEC=$PY  # torchrun's own override of its interpreter
cat >show.py <<'EOF2'
import os, sys
print(os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ["LOCAL_RANK"],
      os.path.basename(sys.argv[0]), " ".join(sys.argv[1:]))
EOF2
out=$(clean_env "$DLRUN" --nproc_per_node=2 --standalone show.py a b | sort | tr '\n' '|')
expect_eq "--nproc_per_node=2 --standalone show.py: Python runs it" "$out" "0 2 0 show.py a b|1 2 1 show.py a b|"
out=$(clean_env "$DLRUN" --nnodes 1 --nproc-per-node 1 --max-restarts 0 --monitor-interval 5 --rdzv-backend c10d --rdzv-endpoint localhost:29400 --rdzv-id job7 --role trainer --start-method spawn --local-addr 127.0.0.1 show.py x)
expect_eq "--nnodes 1 with --rdzv-* on one node" "$out" "0 1 0 show.py x"
mkdir -p pkg && printf 'import os\nprint("module", os.environ["RANK"])\n' >pkg/mod.py
out=$(clean_env "$DLRUN" --nproc-per-node 1 -m pkg.mod)
expect_eq "-m pkg.mod: python -m" "$out" "module 0"
printf '#!/bin/sh\necho sh $RANK\n' >run.sh && chmod +x run.sh
out=$(clean_env "$DLRUN" --nproc-per-node 1 --no-python ./run.sh)
expect_eq "--no-python ./run.sh: exec as given" "$out" "sh 0"
out=$(clean_env "$DLRUN" env --nproc-per-node 1 show.py e)
expect_eq "dlrun env with a torchrun line: Python runs it" "$out" "0 1 0 show.py e"
out=$(clean_env "$DLRUN" --nproc-per-node 1 --run-path show.py r)
expect_eq "--run-path show.py" "$out" "0 1 0 show.py r"
expect_rc "-m with --no-python refused" 2 clean_env "$DLRUN" -m --no-python x
one_line
ln -s "$DLRUN" torchrun
out=$(clean_env ./torchrun --nproc-per-node 2 show.py | sort | tr '\n' '|')
expect_eq "a link named torchrun" "$out" "0 2 0 show.py |1 2 1 show.py |"
out=$(clean_env "$DLRUN" plan --nproc-per-node cpu --standalone show.py | grep -c '^[0-9]')
expect_eq "--nproc-per-node cpu: one rank per CPU" "$out" "$(nproc)"
if [ ! -d /proc/driver/nvidia ]; then
    expect_rc "--nproc-per-node gpu without a GPU" 2 env CUDA_VISIBLE_DEVICES= "$DLRUN" --nproc-per-node gpu show.py
    one_line
fi
expect_rc "--nnodes 1:4 (elastic) without c10d refused" 2 clean_env "$DLRUN" --nnodes 1:4 --nproc-per-node 1 show.py
expect_grep "  names the dlrun way" "(elastic) needs --rdzv-backend c10d" "$TMP/err"
one_line
# one dlrun per node by hand runs (t_torch_nodes_local.sh); plan cannot show it
expect_rc "static multi-node by hand: plan refuses" 2 clean_env "$DLRUN" plan --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port 29500 --nproc-per-node 1 show.py
expect_grep "  names --node-rank" "torchrun's --node-rank/--master-addr .*only dlrun run" "$TMP/err"
one_line
expect_rc "--node-rank with a host list" 2 clean_env "$DLRUN" plan --nnodes 2 --node-rank 1 -H a,b --nproc-per-node 1 show.py
expect_grep "  says why" "would start every node's ranks" "$TMP/err"
one_line
expect_rc "rendezvous multi-node by hand: plan refuses" 2 clean_env "$DLRUN" plan --nnodes=2 --nproc_per_node=1 --rdzv_id=100 --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:29400 show.py
expect_grep "  names --rdzv-endpoint" "torchrun's --rdzv-endpoint/--rdzv-id" "$TMP/err"
expect_rc "a typo" 2 clean_env "$DLRUN" --nproc-per-nod 2 show.py
expect_grep "  did you mean" "did you mean --nproc-per-node?" "$TMP/err"
one_line
expect_rc "--redirects with a bad value" 2 clean_env "$DLRUN" --redirects 7 show.py
one_line

# --log-dir/--tee: the per-rank files of --output-dir
clean_env "$DLRUN" --nproc-per-node 2 --log-dir logs2 --tee 3 show.py >/dev/null
expect_eq "--log-dir: rank 1's stdout" "$(cat logs2/rank.1/stdout)" "1 2 1 show.py "
out=$(clean_env "$DLRUN" --nproc-per-node 2 --log-dir logs3 --redirects 3 show.py)
expect_eq "--redirects 3 --log-dir: nothing on the console" "$out" ""
expect_eq "  the files" "$(cat logs3/rank.0/stdout)" "0 2 0 show.py "

# --- the environment torchrun gives ---
envline() { clean_env "$@" "$DLRUN" -np 1 sh -c 'echo "$TORCHELASTIC_RUN_ID|$ROLE_NAME|$ROLE_RANK|$ROLE_WORLD_SIZE|$TORCHELASTIC_USE_AGENT_STORE|$TORCH_NCCL_ASYNC_ERROR_HANDLING|$NCCL_ASYNC_ERROR_HANDLING|${TORCHELASTIC_ERROR_FILE:+file}"'; }
expect_eq "torchrun's variables" "$(envline)" "none|default|0|1|False|1|1|file"
expect_eq "  the user's NCCL_ASYNC_ERROR_HANDLING for both names" \
    "$(envline NCCL_ASYNC_ERROR_HANDLING=0)" "none|default|0|1|False|0|0|file"
out=$(clean_env "$DLRUN" --rdzv-id job9 --role trainer -np 1 sh -c 'echo $TORCHELASTIC_RUN_ID $ROLE_NAME')
expect_eq "  --rdzv-id, --role" "$out" "job9 trainer"
out=$(clean_env "$DLRUN" -np 2 --oversubscribe --bind-to core sh -c 'echo $OMP_NUM_THREADS/$(nproc)' | sort -u)
expect_eq "OMP_NUM_THREADS: the CPUs the rank is bound to" "${out%/*}" "${out#*/}"
out=$(clean_env OMP_NUM_THREADS=3 "$DLRUN" -np 1 sh -c 'echo $OMP_NUM_THREADS')
expect_eq "  the user's OMP_NUM_THREADS stays" "$out" 3
out=$(clean_env taskset -c 0-1 "$DLRUN" -np 1 --bind-to none sh -c 'echo $OMP_NUM_THREADS' 2>/dev/null)
[ "$(nproc)" -ge 2 ] && expect_eq "  unbound: this host's CPUs shared by its ranks" "$out" 2
# several nodes (the agents run here: DLRUN_RELAY_SIM_MS, as t_agents.sh)
out=$(clean_env DLRUN_RELAY_SIM_MS=0 "$DLRUN" --master-addr 127.0.0.1 --iface lo --bind-to none --gpu-bind none -H 'sim[1-2]:1' --role trainer --rdzv-id job5 sh -c 'echo $RANK $ROLE_NAME $TORCHELASTIC_RUN_ID $ROLE_WORLD_SIZE' | sort | tr '\n' '|')
expect_eq "--role, --rdzv-id on every node" "$out" "0 trainer job5 2|1 trainer job5 2|"
cat >fail.py <<'EOF2'
import os
from torch.distributed.elastic.multiprocessing.errors import record
@record
def main():
    if os.environ["RANK"] == "1":
        raise ValueError("bad batch 7")
main()
EOF2
mkdir -p tmpd
expect_rc "a rank raises under @record" 1 clean_env TMPDIR="$TMP/tmpd" "$DLRUN" --nproc-per-node 2 fail.py
expect_grep "  the failure line" "rank 1 (host .*) exited with code 1" "$TMP/err"
expect_grep "  the root cause" "rank 1's root cause (its TORCHELASTIC_ERROR_FILE): ValueError: bad batch 7" "$TMP/err"
expect_eq "  the error files go with the job" "$(ls tmpd | wc -l)" 0

done_testing
