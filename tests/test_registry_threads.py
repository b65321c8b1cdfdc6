"""The registry's lazy loading is thread-safe on first use (issue 15).

Before the fix, two threads calling ``optframe.solve`` at once in a fresh process saw a
half-filled registry and failed most of the time with ``UnknownBackend: no back-end named
'clarabel'``. Each run below is a fresh interpreter, so the first lookups really race.
"""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import threading

    import numpy as np

    import optframe as of
    from optframe.data import Dataset

    barrier = threading.Barrier(6)
    errors = []
    statuses = []


    def work(seed):
        try:
            from optframe.models import WeightedSVM

            rng = np.random.default_rng(seed)
            X = rng.normal(size=(20, 2))
            y = np.where(X[:, 0] > 0, 1.0, -1.0)
            model = WeightedSVM(Dataset(X=X, y=y), C=1.0)
            barrier.wait()
            statuses.append(of.solve(model, backend="clarabel").status.name)
        except Exception as error:  # report every failure, whatever its type
            errors.append(repr(error))


    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(statuses) == 6, statuses
    print("ok", sorted(set(statuses)))
    """
)


def test_first_use_from_several_threads_at_once():
    for _ in range(4):
        run = subprocess.run(
            [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, run.stderr[-3000:]
        assert run.stdout.startswith("ok"), run.stdout


def test_a_lookup_during_loading_does_not_deadlock():
    # A plugin that looks something up while it is being imported (re-entrant call in the
    # loading thread) must neither deadlock nor see the registry as loaded forever after.
    script = textwrap.dedent(
        """
        from optframe import registry

        calls = []
        real = registry.importlib.import_module


        def import_module(name):
            calls.append(name)
            registry.backends()  # re-entrant lookup from inside the load
            return real(name)


        registry.importlib.import_module = import_module
        known = registry.backends()
        assert "clarabel" in known, known
        assert calls == ["optframe.solvers", "optframe.models", "optframe.drivers"], calls
        print("ok")
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]
