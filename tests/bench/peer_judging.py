"""A method's record beside a perturbed solution's, judged by the peers suite's success rule."""

from optframe.bench.suites import peers


def judged(job, method, good, bad):
    """``[good, perturbed]`` records of ``job`` after :func:`peers.complete`."""
    records = [
        {"job": job, "data": "tiny", "method": method, **good},
        {"job": job, "data": "tiny", "method": "perturbed", "status": "done", "seconds": 1.0,
         **bad},
    ]  # fmt: skip
    peers.complete(records)
    return records
