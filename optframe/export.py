r"""Write a model's matrix formulation to an MPS or a CPLEX LP file that any solver reads.

:func:`write_mps` writes a :class:`~optframe.model.MatrixProblem` (an LP, QP, MILP or MIQP) with
the sign of the model's own objective: a formulation built as the minimization of the negative
of a maximized dual (``objective_scale < 0``) is written as ``OBJSENSE MAX`` of the dual itself,
and the formulation's constant (``objective_offset``) goes to the objective row's RHS, so the
optimum another solver reads from the file is the model's optimum. :meth:`Model.write
<optframe.model.Model.write>` is the entry point.

The format is free MPS: ``ROWS`` (``N`` for the objective, ``E``/``L``/``G`` rows, a ranged row as
``G`` with its range in ``RANGES``), ``COLUMNS`` (integer columns between ``MARKER`` lines),
``RHS`` (the objective row's RHS is minus the objective's constant, the convention HiGHS, SCIP
and CPLEX read), ``RANGES``, ``BOUNDS`` (``FR``, ``MI``, ``PL``, ``LO``, ``UP``, ``FX``, ``BV`` is
never used) and ``QUADOBJ`` (the lower triangle of the Hessian :math:`P`, for the objective
:math:`\tfrac12 x^\top P x + c^\top x`).

:func:`write_lp` writes the same problem in CPLEX LP format, with the same objective sign and
constant: ``Minimize``/``Maximize``, the objective with its constant and the quadratic part as
``[ ... ] / 2``, ``Subject To`` (a ranged row as two rows, ``name_lo`` and ``name_hi``; a free row
is left out), ``Bounds``, ``General`` for integer columns, ``End``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import IO

import numpy as np
import scipy.sparse as sp

from optframe.errors import ModelError
from optframe.model import MatrixProblem

__all__ = ["write_lp", "write_mps"]


def _number(value: float) -> str:
    return repr(float(value))


def write_mps(
    problem: MatrixProblem,
    path: str | Path,
    *,
    scale: float = 1.0,
    offset: float = 0.0,
    name: str = "optframe",
) -> Path:
    r"""Write ``problem`` to ``path`` as free MPS; the file's objective is ``scale * f + offset``.

    Parameters
    ----------
    problem : MatrixProblem
        :math:`\min \tfrac12 x^\top P x + c^\top x + \text{offset}` under row and variable bounds.
    path : str or Path
        The file to write (overwritten).
    scale : float
        The formulation's ``objective_scale`` :math:`s \ne 0`: the file's objective is
        :math:`s f`, maximized when :math:`s < 0` (minimizing :math:`f` maximizes it).
    offset : float
        The formulation's ``objective_offset``, added to the written objective's constant.
    name : str
        The ``NAME`` line (no spaces).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ModelError
        If ``scale`` is 0 or not finite, or ``name`` holds whitespace.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, tempfile, pathlib
    >>> from optframe.export import write_mps
    >>> from optframe.model import MatrixProblem
    >>> lp = MatrixProblem(c=np.array([1.0, 2.0]), A=sp.csc_array([[1.0, 1.0]]),
    ...                    row_lower=np.array([1.0]), row_upper=np.array([np.inf]),
    ...                    lower=np.zeros(2), upper=np.full(2, np.inf))
    >>> out = write_mps(lp, pathlib.Path(tempfile.mkdtemp()) / "lp.mps")
    >>> "OBJSENSE" in out.read_text()
    True
    """
    if not (math.isfinite(scale) and scale != 0.0):
        raise ModelError(f"write_mps: scale must be a finite nonzero number; got {scale!r}")
    if not name or any(ch.isspace() for ch in name):
        raise ModelError(f"write_mps: the name must be one word; got {name!r}")
    path = Path(path)
    c = scale * np.asarray(problem.c, dtype=np.float64)
    constant = scale * float(problem.offset) + float(offset)
    P = None if problem.P is None else sp.csc_array(scale * problem.P)
    with path.open("w") as out:
        _write(out, problem, c, P, constant, "MAX" if scale < 0 else "MIN", name)
    return path


def _write(
    out: IO[str],
    problem: MatrixProblem,
    c: np.ndarray,
    P: sp.csc_array | None,
    constant: float,
    sense: str,
    name: str,
) -> None:
    m, n = problem.A.shape
    cols = [f"x{j}" for j in range(n)]
    rows = [f"r{i}" for i in range(m)]
    lo, hi = problem.row_lower, problem.row_upper
    out.write(f"NAME {name}\nOBJSENSE\n    {sense}\nROWS\n N obj\n")
    kinds = []
    for i in range(m):
        if lo[i] == hi[i]:
            kind = "E"
        elif math.isinf(lo[i]) and math.isinf(hi[i]):
            kind = "N"  # a free row: kept, it constrains nothing
        elif math.isinf(lo[i]):
            kind = "L"
        else:
            kind = "G"
        kinds.append(kind)
        out.write(f" {kind} {rows[i]}\n")
    out.write("COLUMNS\n")
    A = sp.csc_array(problem.A)
    integer = np.zeros(n, dtype=bool) if problem.integrality is None else problem.integrality
    in_marker = False
    for j in range(n):
        if bool(integer[j]) != in_marker:
            state = "INTORG" if integer[j] else "INTEND"
            out.write(f"    MARKER 'MARKER' '{state}'\n")
            in_marker = bool(integer[j])
        if c[j] != 0.0:
            out.write(f"    {cols[j]} obj {_number(c[j])}\n")
        for p in range(A.indptr[j], A.indptr[j + 1]):
            if A.data[p] != 0.0:
                out.write(f"    {cols[j]} {rows[A.indices[p]]} {_number(A.data[p])}\n")
        if c[j] == 0.0 and A.indptr[j] == A.indptr[j + 1]:
            out.write(f"    {cols[j]} obj 0.0\n")  # every column is declared
    if in_marker:
        out.write("    MARKER 'MARKER' 'INTEND'\n")
    out.write("RHS\n")
    if constant != 0.0:
        out.write(f"    rhs obj {_number(-constant)}\n")
    for i, kind in enumerate(kinds):
        value = hi[i] if kind == "L" else lo[i]
        if kind != "N" and value != 0.0:
            out.write(f"    rhs {rows[i]} {_number(value)}\n")
    ranged = [i for i, k in enumerate(kinds) if k == "G" and not math.isinf(hi[i])]
    if ranged:
        out.write("RANGES\n")
        for i in ranged:
            out.write(f"    rng {rows[i]} {_number(hi[i] - lo[i])}\n")
    out.write("BOUNDS\n")
    for j in range(n):
        low, up = float(problem.lower[j]), float(problem.upper[j])
        if low == up:
            out.write(f" FX bnd {cols[j]} {_number(low)}\n")
            continue
        if math.isinf(low) and math.isinf(up):
            out.write(f" FR bnd {cols[j]}\n")
            continue
        if math.isinf(low):
            out.write(f" MI bnd {cols[j]}\n")
        elif low != 0.0 or integer[j]:
            out.write(f" LO bnd {cols[j]} {_number(low)}\n")
        if not math.isinf(up):
            out.write(f" UP bnd {cols[j]} {_number(up)}\n")
        elif integer[j]:
            out.write(f" PL bnd {cols[j]}\n")
    if P is not None and P.nnz:
        out.write("QUADOBJ\n")
        lower = sp.tril(P, format="csc")
        for j in range(n):
            for p in range(lower.indptr[j], lower.indptr[j + 1]):
                if lower.data[p] != 0.0:
                    i = lower.indices[p]
                    out.write(f"    {cols[j]} {cols[i]} {_number(lower.data[p])}\n")
    out.write("ENDATA\n")


def write_lp(
    problem: MatrixProblem,
    path: str | Path,
    *,
    scale: float = 1.0,
    offset: float = 0.0,
    name: str = "optframe",
) -> Path:
    r"""Write ``problem`` to ``path`` in CPLEX LP format; its objective is ``scale * f + offset``.

    Parameters
    ----------
    problem : MatrixProblem
        :math:`\min \tfrac12 x^\top P x + c^\top x + \text{offset}` under row and variable bounds.
    path : str or Path
        The file to write (overwritten).
    scale : float
        The formulation's ``objective_scale`` :math:`s \ne 0`: the file's objective is
        :math:`s f`, maximized when :math:`s < 0` (minimizing :math:`f` maximizes it).
    offset : float
        The formulation's ``objective_offset``, added to the written objective's constant.
    name : str
        The problem's name, written as the first comment line (no spaces).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ModelError
        If ``scale`` is 0 or not finite, or ``name`` holds whitespace.

    Notes
    -----
    Columns are ``x0, x1, ...`` and rows ``r0, r1, ...`` as in :func:`write_mps`; a ranged row
    :math:`\ell_i \le a_i^\top x \le u_i` becomes ``ri_lo`` and ``ri_hi``, and a row free on both
    sides is not written. The quadratic part is :math:`[x^\top P x] / 2` with each off-diagonal
    pair once (``2 P_ij xi * xj``). A column that appears nowhere else is declared by a zero
    objective coefficient.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, tempfile, pathlib
    >>> from optframe.export import write_lp
    >>> from optframe.model import MatrixProblem
    >>> qp = MatrixProblem(c=np.array([1.0, 2.0]), A=sp.csc_array([[1.0, 1.0]]),
    ...                    row_lower=np.array([1.0]), row_upper=np.array([np.inf]),
    ...                    lower=np.zeros(2), upper=np.full(2, np.inf),
    ...                    P=sp.csc_array(np.eye(2)), offset=3.0)
    >>> out = write_lp(qp, pathlib.Path(tempfile.mkdtemp()) / "qp.lp")
    >>> print(out.read_text())
    \ optframe
    Minimize
     obj: + 1.0 x0 + 2.0 x1 + 3.0
      + [ + 1.0 x0 ^ 2 + 1.0 x1 ^ 2 ] / 2
    Subject To
     r0: + 1.0 x0 + 1.0 x1 >= 1.0
    Bounds
    End
    <BLANKLINE>
    """
    if not (math.isfinite(scale) and scale != 0.0):
        raise ModelError(f"write_lp: scale must be a finite nonzero number; got {scale!r}")
    if not name or any(ch.isspace() for ch in name):
        raise ModelError(f"write_lp: the name must be one word; got {name!r}")
    path = Path(path)
    c = scale * np.asarray(problem.c, dtype=np.float64)
    constant = scale * float(problem.offset) + float(offset)
    P = None if problem.P is None else sp.csc_array(scale * problem.P)
    with path.open("w") as out:
        _write_lp(out, problem, c, P, constant, "Maximize" if scale < 0 else "Minimize", name)
    return path


#: Terms per line of an LP file (the format limits a line to 510 characters).
_TERMS_PER_LINE = 6


def _linear(coefficients: np.ndarray, names: list[str]) -> list[str]:
    """``+ a x`` terms (zero coefficients left out)."""
    return [
        f"{'-' if a < 0 else '+'} {_number(abs(a))} {name}"
        for a, name in zip(coefficients, names, strict=True)
        if a != 0.0
    ]


def _lines(out: IO[str], head: str, terms: list[str], tail: str = "") -> None:
    """``head`` and ``terms``, a few per line, then ``tail`` (each line well below 510 chars)."""
    chunks = [terms[i : i + _TERMS_PER_LINE] for i in range(0, len(terms), _TERMS_PER_LINE)]
    chunks = chunks or [[]]
    for k, chunk in enumerate(chunks):
        text = (head if k == 0 else "  ") + " ".join(chunk)
        if k == len(chunks) - 1 and tail:
            text += (" " if chunk else "") + tail
        out.write(text.rstrip() + "\n")


def _write_lp(
    out: IO[str],
    problem: MatrixProblem,
    c: np.ndarray,
    P: sp.csc_array | None,
    constant: float,
    sense: str,
    name: str,
) -> None:
    m, n = problem.A.shape
    cols = [f"x{j}" for j in range(n)]
    A = sp.csc_array(problem.A)
    declared = np.diff(A.indptr) > 0
    if P is not None and P.nnz:
        declared |= np.diff(sp.csc_array(P).indptr) > 0
    objective = _linear(c, cols)
    objective += [f"+ 0.0 {cols[j]}" for j in np.flatnonzero((c == 0.0) & ~declared)]
    if constant != 0.0:
        objective.append(f"{'-' if constant < 0 else '+'} {_number(abs(constant))}")
    out.write(f"\\ {name}\n{sense}\n")
    _lines(out, " obj: ", objective)
    if P is not None and P.nnz:
        upper = sp.triu(P, format="coo")
        quadratic = []
        for i, j, value in zip(upper.row, upper.col, upper.data, strict=True):
            if value == 0.0:
                continue
            value = value if i == j else 2.0 * value  # x'Px counts each pair twice
            term = f"{cols[i]} ^ 2" if i == j else f"{cols[i]} * {cols[j]}"
            quadratic.append(f"{'-' if value < 0 else '+'} {_number(abs(value))} {term}")
        if quadratic:
            _lines(out, "  + [ ", quadratic, "] / 2")
    out.write("Subject To\n")
    R = sp.csr_array(problem.A)
    lo, hi = problem.row_lower, problem.row_upper
    for i in range(m):
        start, end = R.indptr[i], R.indptr[i + 1]
        row = _linear(R.data[start:end], [cols[j] for j in R.indices[start:end]]) or ["0 x0"]
        low, up = float(lo[i]), float(hi[i])
        if low == up:
            _lines(out, f" r{i}: ", row, f"= {_number(low)}")
        elif math.isinf(low) and math.isinf(up):
            continue  # a free row constrains nothing
        elif math.isinf(low):
            _lines(out, f" r{i}: ", row, f"<= {_number(up)}")
        elif math.isinf(up):
            _lines(out, f" r{i}: ", row, f">= {_number(low)}")
        else:
            _lines(out, f" r{i}_lo: ", row, f">= {_number(low)}")
            _lines(out, f" r{i}_hi: ", row, f"<= {_number(up)}")
    out.write("Bounds\n")
    for j in range(n):
        low, up = float(problem.lower[j]), float(problem.upper[j])
        if low == up:
            out.write(f" {cols[j]} = {_number(low)}\n")
        elif math.isinf(low) and math.isinf(up):
            out.write(f" {cols[j]} free\n")
        elif math.isinf(low):
            out.write(f" -inf <= {cols[j]} <= {_number(up)}\n")
        elif math.isinf(up):
            if low != 0.0:
                out.write(f" {cols[j]} >= {_number(low)}\n")
        else:
            out.write(f" {_number(low)} <= {cols[j]} <= {_number(up)}\n")
    integer = np.zeros(n, dtype=bool) if problem.integrality is None else problem.integrality
    if np.any(integer):
        out.write("General\n")
        _lines(out, " ", [cols[j] for j in np.flatnonzero(integer)])
    out.write("End\n")
