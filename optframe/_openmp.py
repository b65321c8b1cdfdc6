"""OpenMP's idle threads sleep rather than spin, unless the user chose (``OMP_WAIT_POLICY``).

numba runs optframe's parallel kernels (SMO's kernel sums, the working sets' gradient updates)
on GNU OpenMP's thread pool. Between two parallel regions, by default, its threads spin for a
while before they sleep. On a machine where another process holds a core, the spinning thread
takes time from optframe's serial work in between (SMO's working-set subproblems): the RBF SVM
on a9a by SMO's working sets, beside a process busy on one of two cores, took 2.04 to 2.10 s at
two threads against 1.94 to 1.97 s at one; with ``OMP_WAIT_POLICY=PASSIVE``, 1.78 to 1.82 s
at two, and on a quiet machine 1.21 to 1.24 s against 1.18 to 1.21 s. libgomp reads the
variable when it loads, which optframe's import does not do: importing this module first
(``optframe/__init__``) sets it when it is unset, for this process and the ones it starts.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
