# errfile_fail.py - rank 1 writes its TORCHELASTIC_ERROR_FILE (as torch's
# @record does) and exits 3; the others wait to be stopped.
import json, os, sys, time
if os.environ["RANK"] == "1":
    with open(os.environ["TORCHELASTIC_ERROR_FILE"], "w") as f:
        json.dump({"message": {"message": "ValueError: bad shard 7", "extraInfo": {"py_callstack": "x", "timestamp": str(int(time.time()))}}}, f)
    sys.exit(3)
time.sleep(30)
