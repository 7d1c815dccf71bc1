#!/usr/bin/python3
"""torchrun, with one fix so that Debian 12's torch 1.13 runs on Python 3.11.

    /usr/bin/python3 bench/torchrun-wrapper.py [torchrun arguments...]

Why: torch 1.13's Std.from_str (torch/distributed/elastic/multiprocessing/
api.py) turns "0".."3" into a Std member with

    def to_std(v):
        v = int(v)
        for s in Std:
            if s == v:
                return s

Std is an IntFlag (NONE=0, OUT=1, ERR=2, ALL=3).  From Python 3.11 on,
iterating a Flag yields only its single-bit members (OUT, ERR), so "0"
(torchrun's default for --redirects and --tee) and "3" give None, and
to_map() then fails with AttributeError: 'NoneType' object has no
attribute 'get' before any worker starts.

The fix: the same function with to_std(v) = Std(int(v)), which gives every
member 0..3 on every Python.  The input checks (the two regular
expressions) are torch's own, unchanged.  It is applied only when the bug is
there (from_str("0") is None), and the wrapper says on stderr whether it
patched.  Everything else is torchrun itself (torch.distributed.run.main).
"""
import re
import sys

from torch.distributed.elastic.multiprocessing import api


def _from_str(cls, vm):
    def to_std(v):
        return cls(int(v))      # the one change: was a loop over `for s in Std`

    if re.match(api._VALUE_REGEX, vm):
        return to_std(vm)
    elif re.match(api._MAPPING_REGEX, vm):
        d = {}
        for m in vm.split(","):
            i, v = m.split(":")
            d[int(i)] = to_std(v)
        return d
    else:
        raise ValueError(
            f"{vm} does not match: <{api._VALUE_REGEX}> or <{api._MAPPING_REGEX}>"
        )


if api.Std.from_str("0") is None:
    api.Std.from_str = classmethod(_from_str)
    print("torchrun-wrapper: patched torch's Std.from_str for Python 3.11 "
          "(Flag iteration skips NONE/ALL)", file=sys.stderr)
else:
    print("torchrun-wrapper: Std.from_str works here, not patched",
          file=sys.stderr)

from torch.distributed.run import main  # noqa: E402

if __name__ == "__main__":
    sys.argv[0] = "torchrun"
    sys.exit(main())
