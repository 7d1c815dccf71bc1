#!/bin/sh
# demo.sh DLRUN - what `make demo` runs: the plan for this machine, then a
# small job of 4 ranks that each print what dlrun told them.
set -eu
dlrun=${1:-build/dlrun}
echo "== $dlrun check"
"$dlrun" check
echo
echo "== $dlrun plan -np 4 --oversubscribe"
"$dlrun" plan -np 4 --oversubscribe
echo
echo "== $dlrun -np 4 --oversubscribe sh -c 'echo rank \$RANK ...'"
"$dlrun" -np 4 --oversubscribe sh -c \
    'echo "rank $RANK of $WORLD_SIZE (local $LOCAL_RANK of $LOCAL_WORLD_SIZE) on $(hostname), rendezvous $MASTER_ADDR:$MASTER_PORT"'
