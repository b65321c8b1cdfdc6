"""``python -m optframe.bench.child ADDRESS PARENT``: serve cells for one runner process.

Started by :class:`optframe.bench.runner._Child` for cells with a time limit. It connects back
to ``ADDRESS`` (authenticated with the key in ``OPTFRAME_CHILD_KEY``), runs each cell it
receives, sends back the record, and exits when the parent closes the connection or dies. It
ignores SIGINT: Ctrl-C reaches every process of the terminal's group, and the runner, which
handles it, ends the child.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Client


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def main(address: str, parent: int) -> None:
    """Serve cells until the connection closes or the parent process is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # also set by the runner before the start
    from optframe.bench.runner import run_here

    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    key = bytes.fromhex(os.environ.pop("OPTFRAME_CHILD_KEY"))
    with Client(address, family="AF_UNIX", authkey=key) as connection:
        while True:
            try:
                suite_name, params, threads = connection.recv()
            except EOFError:
                return
            record = run_here(suite_name, params, threads)
            try:
                connection.send(record)
            except OSError:  # the parent is gone
                return


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
