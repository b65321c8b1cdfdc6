"""Data in row chunks on a Dask cluster: :class:`DaskDataset`, for data larger than one machine.

A :class:`DaskDataset` holds ``dask.array`` arrays chunked by rows: ``X`` (dense or scipy-sparse
chunks, all columns in each chunk), ``y`` and the sample weights with the same row chunks. It is
validated chunk by chunk on the cluster in use (the current ``distributed.Client``, or Dask's
local scheduler without one); an invalid chunk raises the same :class:`~optframe.errors.DataError`
as :class:`~optframe.data.Dataset`, naming the chunk and its row range. Nothing here gathers ``X``
onto the client: every pass is a map over the chunks whose small results are reduced.

Why a separate class rather than :class:`~optframe.data.Dataset` taking dask arrays: every
in-memory model evaluates whole-array NumPy expressions on ``Dataset.X``; a dask array there would
be gathered silently by the first ``np.asarray``. The chunked models
(:class:`optframe.models.EmpiricalRisk` given a ``DaskDataset``, and its declarations
:class:`optframe.models.DaskLADRegression`, :class:`optframe.models.DaskWeightedSVM`) take a
``DaskDataset`` and evaluate everything chunk by chunk, so an accidental gather cannot happen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.data.dataset import Dataset
from optframe.data.sparse import as_csr
from optframe.errors import DataError

if TYPE_CHECKING:
    import dask.array


def rows_text(lo: int, hi: int, index: int) -> str:
    """``"chunk 2 (rows 10000 to 14999)"``: where a chunk sits, for messages."""
    return f"chunk {index} (rows {lo} to {hi - 1})"


def _dense_or_csr(X: Any) -> NDArray[np.float64] | sp.csr_array:
    if sp.issparse(X):
        return as_csr(X)
    return np.asarray(X, dtype=np.float64)


def _check_chunk(
    X: Any, y: Any, w: Any, lo: int, has_y: bool
) -> tuple[str | None, bool, int, float]:
    """Validate one chunk; return ``(problem, sparse, positive weights, weight sum)``.

    ``problem`` names the first invalid entry by its global row (``lo`` + local row), or is
    ``None``.
    """
    sparse = sp.issparse(X)
    try:
        X = _dense_or_csr(X)
    except (TypeError, ValueError) as exc:
        return f"X could not be read as a numeric matrix: {exc}", sparse, 0, 0.0
    values = X.data if sparse else X
    if not np.all(np.isfinite(values)):
        if sparse:
            entry = int(np.flatnonzero(~np.isfinite(X.data))[0])
            row = int(np.searchsorted(X.indptr, entry, side="right") - 1)
            column = int(X.indices[entry])
        else:
            row, column = (int(v) for v in np.argwhere(~np.isfinite(X))[0])
        problem = (
            f"X contains NaN or inf (first at row {lo + row}, column {column}); "
            "impute or drop those entries first."
        )
        return problem, sparse, 0, 0.0
    n = X.shape[0]
    for what, v in (("y", y if has_y else None), ("sample_weight", w)):
        if v is None:
            continue
        try:
            v = np.asarray(v, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError) as exc:
            return f"{what} could not be read as numbers: {exc}", sparse, 0, 0.0
        if not np.all(np.isfinite(v)):
            i = int(np.flatnonzero(~np.isfinite(v))[0])
            return f"{what} contains NaN or inf (first at index {lo + i}).", sparse, 0, 0.0
    if w is None:
        return None, sparse, n, float(n)
    w = np.asarray(w, dtype=np.float64).reshape(-1)
    if np.any(w < 0):
        i = int(np.flatnonzero(w < 0)[0])
        return (
            f"sample_weight must be non-negative; entry {lo + i} is {w[i]}.",
            sparse,
            0,
            0.0,
        )
    return None, sparse, int(np.count_nonzero(w > 0)), float(w.sum())


@dataclass(frozen=True, eq=False)
class DaskDataset:
    """Samples, targets and weights as dask arrays chunked by rows, validated chunk by chunk.

    Parameters
    ----------
    X : dask.array.Array of shape (n, m)
        Features, chunked along rows only (each chunk holds all ``m`` columns); chunks may be
        NumPy arrays or scipy sparse matrices (all of one kind). Sparse chunks stay sparse.
    y : dask.array.Array of shape (n,), optional
        Targets, with the row chunks of ``X``.
    sample_weight : dask.array.Array of shape (n,), optional
        Non-negative weights, not all zero, with the row chunks of ``X``; ``None`` means ones.
    name : str
        A label used in tables and results.
    meta : dict
        Free-form provenance.
    persist : bool
        Keep the chunks in the cluster's memory (``dask.persist``) so that every pass reads them
        there instead of recomputing them from their source; a chunk lost with a worker is
        recomputed from its source.

    Raises
    ------
    DataError
        If an array is not a dask array, ``X`` is not 2-D or is chunked along its columns, a
        length or a row chunking disagrees with ``X``'s, or a chunk holds NaN or inf, a negative
        weight, or a mix of dense and sparse chunks; the message names the chunk and its rows.
        Also if every weight is zero.

    Notes
    -----
    :meth:`from_dataset` splits an in-memory :class:`~optframe.data.Dataset` into chunks (for
    tests and examples), :meth:`to_dataset` gathers everything back (for data that fit in
    memory), :func:`make_lad_dask` generates LAD data chunk by chunk on the workers.
    """

    X: dask.array.Array
    y: dask.array.Array | None = None
    sample_weight: dask.array.Array | None = None
    name: str = "data"
    meta: dict[str, Any] = field(default_factory=dict, repr=False)
    persist: bool = True
    _state: dict[str, Any] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        import dask
        import dask.array as da

        X = self.X
        if not isinstance(X, da.Array):
            raise DataError(
                f"DaskDataset takes dask arrays; X is a {type(X).__name__}. Use "
                "dask.array.from_array(X, chunks=(rows, -1)), or DaskDataset.from_dataset(data, "
                "chunk_rows) for an in-memory Dataset."
            )
        if X.ndim != 2:
            raise DataError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
        if any(np.isnan(c) for c in X.chunks[0]):
            raise DataError(
                "X has chunks of unknown size; call X.compute_chunk_sizes() (or give the sizes "
                "to dask.array.from_delayed) first."
            )
        if X.numblocks[1] != 1:
            raise DataError(
                f"X is chunked along its columns ({X.chunks[1]}); chunks must hold whole rows: "
                "use X.rechunk({1: -1})."
            )
        if X.shape[0] == 0:
            raise DataError("X has no rows.")
        arrays = {"y": self.y, "sample_weight": self.sample_weight}
        for what, v in arrays.items():
            if v is None:
                continue
            if not isinstance(v, da.Array):
                raise DataError(
                    f"DaskDataset takes dask arrays; {what} is a {type(v).__name__}. Use "
                    f"dask.array.from_array({what}, chunks=X.chunks[0])."
                )
            if v.ndim == 2 and v.shape[1] == 1:
                v = v[:, 0]
            if v.ndim != 1:
                raise DataError(f"{what} must be a 1-D array; got shape {v.shape}.")
            if v.shape[0] != X.shape[0]:
                raise DataError(f"{what} has {v.shape[0]} entries but X has {X.shape[0]} rows.")
            if v.chunks[0] != X.chunks[0]:
                raise DataError(
                    f"{what}'s chunks {_short(v.chunks[0])} do not match X's row chunks "
                    f"{_short(X.chunks[0])}; use {what}.rechunk(X.chunks[0])."
                )
            arrays[what] = v
        y, w = arrays["y"], arrays["sample_weight"]
        if self.persist:
            X, y, w = dask.persist(X, y, w)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "sample_weight", w)
        self._validate()

    # ------------------------------------------------------------------------------- chunks
    def _validate(self) -> None:
        import dask
        from dask import delayed

        has_y = self.y is not None
        checks = [
            delayed(_check_chunk, pure=True)(X, y, w, lo, has_y)
            for (X, y, w), (lo, _) in zip(self.parts(), self.row_ranges, strict=True)
        ]
        results = dask.compute(*checks)
        kinds = []
        for index, ((lo, hi), (problem, sparse, _, _)) in enumerate(
            zip(self.row_ranges, results, strict=True)
        ):
            if problem is not None:
                raise DataError(f"{problem} In {rows_text(lo, hi, index)} of {self.name!r}.")
            kinds.append(sparse)
        if any(kinds) and not all(kinds):
            index = kinds.index(not kinds[0])
            lo, hi = self.row_ranges[index]
            raise DataError(
                f"X's chunks mix dense and sparse blocks: {rows_text(lo, hi, index)} is "
                f"{'sparse' if kinds[index] else 'dense'}, chunk 0 is not; convert every chunk "
                "to one kind (X.map_blocks(scipy.sparse.csr_matrix) or .map_blocks(np.asarray))."
            )
        if not any(r[2] > 0 for r in results):
            raise DataError("sample_weight is zero everywhere; at least one sample must count.")
        self._state["sparse"] = bool(kinds[0])
        self._state["positive"] = np.array([r[2] for r in results], dtype=np.int64)

    @property
    def row_ranges(self) -> list[tuple[int, int]]:
        """``(lo, hi)`` of each chunk: its rows are ``lo, ..., hi - 1``."""
        sizes = np.asarray(self.X.chunks[0], dtype=np.int64)
        ends = np.cumsum(sizes)
        return [(int(e - s), int(e)) for s, e in zip(sizes, ends, strict=True)]

    @property
    def n_chunks(self) -> int:
        """Number of row chunks."""
        return int(self.X.numblocks[0])

    def parts(self) -> list[tuple[Any, Any, Any]]:
        """``(X, y, w)`` of each chunk as ``dask.delayed`` objects (``None`` when absent)."""
        X = list(self.X.to_delayed().ravel())
        y = [None] * len(X) if self.y is None else list(self.y.to_delayed().ravel())
        w = (
            [None] * len(X)
            if self.sample_weight is None
            else list(self.sample_weight.to_delayed().ravel())
        )
        return list(zip(X, y, w, strict=True))

    # ------------------------------------------------------------------------------- shape
    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])

    @property
    def is_sparse(self) -> bool:
        """Whether the chunks of ``X`` are scipy sparse matrices."""
        return bool(self._state["sparse"])

    @property
    def positive_per_chunk(self) -> NDArray[np.int64]:
        """The number of positive-weight samples in each chunk."""
        return self._state["positive"]

    @property
    def weights(self) -> dask.array.Array:
        """The sample weights as a dask array, ``None`` expanded to ones (lazily)."""
        if self.sample_weight is not None:
            return self.sample_weight
        import dask.array as da

        return da.ones(self.n_samples, chunks=(self.X.chunks[0],), dtype=np.float64)

    # ----------------------------------------------------------------------- conversions
    @classmethod
    def from_dataset(cls, data: Dataset, chunk_rows: int, *, persist: bool = True) -> DaskDataset:
        """Split an in-memory :class:`~optframe.data.Dataset` into chunks of ``chunk_rows`` rows.

        For tests, examples and comparisons: the chunks are the dataset's row slices (sparse
        stays sparse), so the chunked models solve exactly the in-memory problem.
        """
        import dask.array as da
        from dask import delayed

        if not isinstance(data, Dataset):
            raise DataError(f"from_dataset takes a Dataset; got {type(data).__name__}.")
        if int(chunk_rows) < 1:
            raise DataError(f"chunk_rows must be a positive integer; got {chunk_rows!r}.")
        n, step = data.n_samples, int(chunk_rows)
        starts = range(0, n, step)

        def rows(v: NDArray[np.float64] | None) -> Any:
            if v is None:
                return None
            return da.concatenate([da.from_array(v[lo : lo + step]) for lo in starts])

        if data.is_sparse:
            blocks = [data.X[lo : lo + step] for lo in starts]
            X = da.concatenate(
                [
                    da.from_delayed(delayed(b), shape=b.shape, dtype=np.float64, meta=b[:0])
                    for b in blocks
                ]
            )
        else:
            X = rows(np.asarray(data.X))
        return cls(
            X=X,
            y=rows(data.y),
            sample_weight=rows(data.sample_weight),
            name=data.name,
            meta=dict(data.meta),
            persist=persist,
        )

    def to_dataset(self) -> Dataset:
        """Gather every chunk into an in-memory :class:`~optframe.data.Dataset`.

        Only for data that fit on the client (comparisons, tests): this is the one method that
        brings ``X`` to the client.
        """
        import dask
        from dask import delayed

        parts = self.parts()
        blocks = dask.compute(*[delayed(_dense_or_csr)(X) for X, _, _ in parts])
        X = sp.vstack(blocks, format="csr") if self.is_sparse else np.vstack(blocks)
        y = None if self.y is None else np.asarray(self.y.compute(), dtype=np.float64)
        w = self.sample_weight
        w = None if w is None else np.asarray(w.compute(), dtype=np.float64)
        return Dataset(X=X, y=y, sample_weight=w, name=self.name, meta=dict(self.meta))

    def map_chunks(
        self,
        function: Callable[..., Any],
        *args: Any,
        per_chunk: Sequence[Sequence[Any]] = (),
    ) -> list[Any]:
        """``function(X, y, w, lo, *items, *args)`` on every chunk, computed, in chunk order.

        ``X`` arrives as a NumPy array or a CSR matrix, ``y`` and ``w`` as float arrays (``w``
        ones when the dataset has no weights, ``y`` ``None`` without targets), ``lo`` is the
        chunk's first row. ``items`` are the chunk's entries of each list in ``per_chunk``
        (delayed objects or values, one per chunk: a per-sample dask array's blocks, say). Use
        it for small per-chunk results (sums, counts); large ones belong in a persisted
        collection.
        """
        import dask

        return list(dask.compute(*self.chunk_tasks(function, *args, per_chunk=per_chunk)))

    def chunk_tasks(
        self,
        function: Callable[..., Any],
        *args: Any,
        per_chunk: Sequence[Sequence[Any]] = (),
    ) -> list[Any]:
        """The ``dask.delayed`` calls of :meth:`map_chunks`, not computed."""
        from dask import delayed

        items = list(zip(*per_chunk, strict=True)) if per_chunk else [()] * self.n_chunks
        return [
            delayed(_call_on_chunk, pure=True)(function, X, y, w, lo, (*extra, *args))
            for (X, y, w), (lo, _), extra in zip(self.parts(), self.row_ranges, items, strict=True)
        ]

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        return (
            f"DaskDataset(name={self.name!r}, n={self.n_samples}, m={self.n_features}, {kind}, "
            f"{self.n_chunks} chunks)"
        )


def chunk_arrays(X: Any, y: Any, w: Any) -> tuple[Any, Any, NDArray[np.float64]]:
    """One chunk as computing functions take it: float ``X`` (CSR if sparse), ``y``, ``w``."""
    X = _dense_or_csr(X)
    y = None if y is None else np.asarray(y, dtype=np.float64).reshape(-1)
    w = np.ones(X.shape[0]) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
    return X, y, w


def _call_on_chunk(
    function: Callable[..., Any], X: Any, y: Any, w: Any, lo: int, args: Sequence[Any]
) -> Any:
    X, y, w = chunk_arrays(X, y, w)
    return function(X, y, w, lo, *args)


def _short(sizes: Sequence[float]) -> str:
    shown = ", ".join(str(int(s)) if not np.isnan(s) else "nan" for s in sizes[:4])
    return f"({shown}{', ...' if len(sizes) > 4 else ''})"


# ------------------------------------------------------------------------------- generators
def lad_chunk(
    seed: int, index: int, rows: int, m: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Chunk ``index`` of :func:`make_lad_dask`'s data: ``(X, y)`` with ``rows`` rows.

    ``x ~ N(0, I_m)`` from the generator seeded ``[seed, 1, index]``, ``y = x beta + b + e``
    with standard Laplace noise ``e``; ``beta ~ N(0, I_m)`` and ``b ~ N(0, 1)`` come from
    ``[seed, 0]``, shared by every chunk (the distributions of
    :func:`~optframe.data.make_lad_set_a`).
    """
    coefficients = np.random.default_rng([seed, 0]).standard_normal(m + 1)
    rng = np.random.default_rng([seed, 1, index])
    X = rng.standard_normal((rows, m))
    y = X @ coefficients[:m] + coefficients[m] + rng.laplace(size=rows)
    return X, y


def make_lad_dask(n: int, m: int, chunk_rows: int, random_state: int = 0) -> DaskDataset:
    """LAD data generated chunk by chunk on the workers: never held whole anywhere.

    Parameters
    ----------
    n, m : int
        Rows and features (``n * m * 8`` bytes of ``X`` in all, spread over the workers).
    chunk_rows : int
        Rows per chunk (the last chunk holds the rest).
    random_state : int
        Seed; chunk ``i`` is :func:`lad_chunk` ``(random_state, i, rows, m)``, so the same data
        can be rebuilt in memory, chunk by chunk, for a comparison.

    Returns
    -------
    DaskDataset
        Persisted on the cluster in use; ``meta["coef"]`` and ``meta["intercept"]`` hold the truth.
    """
    import dask.array as da
    from dask import delayed

    if n < 1 or m < 1 or chunk_rows < 1:
        raise DataError(f"make_lad_dask needs n, m, chunk_rows >= 1; got {n}, {m}, {chunk_rows}.")
    seed = int(random_state)
    sizes = [min(chunk_rows, n - lo) for lo in range(0, n, chunk_rows)]
    X_parts, y_parts = [], []
    for index, rows in enumerate(sizes):
        pair = delayed(lad_chunk, pure=True, nout=2)(seed, index, rows, m)
        X_parts.append(da.from_delayed(pair[0], shape=(rows, m), dtype=np.float64))
        y_parts.append(da.from_delayed(pair[1], shape=(rows,), dtype=np.float64))
    coefficients = np.random.default_rng([seed, 0]).standard_normal(m + 1)
    return DaskDataset(
        X=da.concatenate(X_parts),
        y=da.concatenate(y_parts),
        name=f"lad_dask_{n}x{m}",
        meta={"coef": coefficients[:m], "intercept": float(coefficients[m]), "seed": seed},
    )
