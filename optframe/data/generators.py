"""Seeded synthetic data from the papers the framework reproduces, plus small generic generators.

Every generator takes ``random_state`` (an int seed, a :class:`numpy.random.Generator`, or
``None`` for fresh entropy) and returns :class:`~optframe.data.Dataset` objects whose ``meta``
records ``task``, ``generator``, the parameters and, where there is one, the true model. The same
seed always gives the same data. Classification labels are ``{-1.0, +1.0}``.

Paper references are to the implementation notes in ``shared/notes``: ``aid.md`` (AID: LAD, SVM,
S3VM), ``dvi.md`` (DVI screening) and ``hipad.md`` (HIPAD, knowledge-based SVM).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.data.dataset import Dataset
from optframe.errors import DataError

__all__ = [
    "make_classification_svm",
    "make_knowledge_data",
    "make_lad_set_a",
    "make_regression_lad",
    "make_svm_aid",
    "make_toy",
    "make_two_gaussians",
]

RandomState = int | np.random.Generator | None

#: DVI Toy1..Toy3 class-mean offsets mu (dvi.md section 4.3).
TOY_MU: dict[int, float] = {1: 1.5, 2: 0.75, 3: 0.5}


def _rng(random_state: RandomState) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is not None and not isinstance(random_state, int | np.integer):
        raise DataError(
            f"random_state must be an int, a numpy Generator or None; got {random_state!r}."
        )
    return np.random.default_rng(random_state)


def _positive(name: str, **values: Any) -> None:
    for key, value in values.items():
        if not isinstance(value, int | np.integer) or value < 1:
            raise DataError(f"{name}: {key} must be a positive integer, got {value!r}.")


def _seed_meta(random_state: RandomState) -> Any:
    return random_state if isinstance(random_state, int | np.integer | None) else "Generator"


def _balanced_labels(n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``n // 2`` positives and ``n - n // 2`` negatives in random order."""
    y = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    return rng.permutation(y)


def _unit_vector(m: int, rng: np.random.Generator) -> NDArray[np.float64]:
    u = rng.standard_normal(m)
    return u / np.linalg.norm(u)


def _noise(kind: str, size: int, scale: float, rng: np.random.Generator) -> NDArray[np.float64]:
    if kind == "laplace":
        return rng.laplace(0.0, scale, size)
    if kind == "gaussian":
        return rng.normal(0.0, scale, size)
    if kind == "cauchy":
        return scale * rng.standard_cauchy(size)
    raise DataError(f"noise must be 'laplace', 'gaussian' or 'cauchy'; got {kind!r}.")


def make_regression_lad(
    n: int = 200,
    m: int = 5,
    noise: Literal["laplace", "gaussian", "cauchy"] = "laplace",
    random_state: RandomState = None,
    *,
    noise_scale: float = 1.0,
    intercept: bool = True,
) -> Dataset:
    """Linear regression data with heavy-tailed noise, for LAD tests and demos.

    ``X ~ N(0, I)``, ``beta ~ N(0, I)``, ``b ~ N(0, 1)`` (0 when ``intercept=False``) and
    ``y = X beta + b + e`` with ``e`` drawn from ``noise``.

    Parameters
    ----------
    n, m : int
        Rows and features.
    noise : {"laplace", "gaussian", "cauchy"}
        Distribution of ``e``: Laplace (the LAD maximum-likelihood case), Gaussian, or Cauchy
        (no mean; LAD stays consistent, least squares does not).
    random_state : int, numpy.random.Generator or None
        Seed.
    noise_scale : float
        Scale of ``e`` (Laplace ``b``, Gaussian ``sigma``, Cauchy ``gamma``).
    intercept : bool
        Whether the true model has an intercept. ``X`` never holds a column of ones.

    Returns
    -------
    Dataset
        ``X`` of shape (n, m), ``y`` of shape (n,); ``meta["coef"]`` and ``meta["intercept"]``
        hold the true ``beta`` and ``b``.
    """
    _positive("make_regression_lad", n=n, m=m)
    rng = _rng(random_state)
    X = rng.standard_normal((n, m))
    beta = rng.standard_normal(m)
    b = float(rng.standard_normal()) if intercept else 0.0
    y = X @ beta + b + _noise(noise, n, noise_scale, rng)
    meta = {
        "task": "regression",
        "generator": "make_regression_lad",
        "params": {
            "n": n,
            "m": m,
            "noise": noise,
            "noise_scale": noise_scale,
            "intercept": intercept,
            "random_state": _seed_meta(random_state),
        },
        "coef": beta,
        "intercept": b,
        "label_map": None,
    }
    return Dataset(X=X, y=y, name=f"lad_{noise}_{n}x{m}", meta=meta)


def make_lad_set_a(n: int, m: int, random_state: RandomState = None) -> Dataset:
    """AID's LAD "Set A" style data: Gaussian features, Laplace noise, an intercept.

    The paper (aid.md section 5.2) only says Set A is "randomly generated" with
    ``n in {2, 4, 8, 16} x 10^5`` and ``m in {10, 100, 500, 800}``; the distributions are not
    given. This follows the report's documented decision (aid.md section 8, item 6, and the check
    in section 9): ``x ~ N(0, 1)``, ``beta ~ N(0, 1)``, an intercept ``b ~ N(0, 1)``, and
    standard Laplace noise, ``y = X beta + b + e``. Fit LAD with an intercept; ``X`` has no
    column of ones.

    Parameters
    ----------
    n, m : int
        Rows and features (the paper's grid is above; use smaller values in tests).
    random_state : int, numpy.random.Generator or None
        Seed.

    Returns
    -------
    Dataset
        ``X`` (n, m) dense, ``y`` (n,); ``meta["coef"]``, ``meta["intercept"]`` hold the truth.
    """
    ds = make_regression_lad(n, m, "laplace", random_state, noise_scale=1.0, intercept=True)
    meta = dict(ds.meta, generator="make_lad_set_a", reference="aid.md 5.2, 8.6, 9")
    meta["params"] = {"n": n, "m": m, "random_state": _seed_meta(random_state)}
    return Dataset(X=ds.X, y=ds.y, name=f"lad_set_a_{n}x{m}", meta=meta)


def make_svm_aid(
    n: int, m: int, random_state: RandomState = None, *, noise: float = 0.5
) -> Dataset:
    """AID's synthetic SVM data: Gaussian features, labels from a noisy linear rule.

    The paper's SVM sets are samples of proprietary (IBM) or sparse (RCV1) data that are not
    available; the implementation report checked AID on "Gaussian x, labels from a noisy linear
    rule" (aid.md section 9). Concretely: ``x ~ N(0, I_m)``, a random unit normal ``w`` and
    ``y = sign(x . w + e)`` with ``e ~ N(0, noise^2)`` (``sign(0) = +1``). With the default noise
    about 15 % of the labels disagree with the noiseless rule, so the data are not separable.

    Parameters
    ----------
    n, m : int
        Rows and features (the paper's Set 1 uses n in 3..15 x 10^4, m in 10..90).
    random_state : int, numpy.random.Generator or None
        Seed.
    noise : float
        Standard deviation of the margin noise ``e`` (0 gives separable data).

    Returns
    -------
    Dataset
        ``X`` (n, m) dense, ``y`` in {-1, +1}; ``meta["coef"]`` is the true unit normal ``w``.
    """
    _positive("make_svm_aid", n=n, m=m)
    if noise < 0:
        raise DataError(f"make_svm_aid: noise must be >= 0, got {noise}.")
    rng = _rng(random_state)
    X = rng.standard_normal((n, m))
    w = _unit_vector(m, rng)
    margin = X @ w + noise * rng.standard_normal(n)
    y = np.where(margin >= 0, 1.0, -1.0)
    meta = {
        "task": "binary",
        "generator": "make_svm_aid",
        "reference": "aid.md 9",
        "params": {"n": n, "m": m, "noise": noise, "random_state": _seed_meta(random_state)},
        "coef": w,
        "intercept": 0.0,
        "label_map": None,
    }
    return Dataset(X=X, y=y, name=f"svm_aid_{n}x{m}", meta=meta)


def make_toy(
    which: int = 1, random_state: RandomState = None, *, n_per_class: int = 1000
) -> Dataset:
    """DVI's 2-D toy sets Toy1, Toy2 and Toy3.

    As in dvi.md section 4.3: two classes of 1000 points each; class ``+1`` is drawn from
    ``N((mu, mu), 0.75^2 I_2)`` and class ``-1`` from ``N((-mu, -mu), 0.75^2 I_2)``, with
    ``mu = 1.5, 0.75, 0.5`` for Toy1, Toy2, Toy3 (more overlap as ``mu`` shrinks). The paper gives
    no seed. Rows are shuffled.

    Parameters
    ----------
    which : {1, 2, 3}
        Which toy set.
    random_state : int, numpy.random.Generator or None
        Seed.
    n_per_class : int
        Points per class (the paper: 1000).

    Returns
    -------
    Dataset
        ``X`` (2 n_per_class, 2), ``y`` in {-1, +1}; ``meta["mu"]`` is the class offset.
    """
    if which not in TOY_MU:
        raise DataError(f"make_toy: which must be 1, 2 or 3 (Toy1..Toy3), got {which!r}.")
    _positive("make_toy", n_per_class=n_per_class)
    rng = _rng(random_state)
    mu = TOY_MU[which]
    y = np.repeat([1.0, -1.0], n_per_class)
    X = y[:, None] * mu + 0.75 * rng.standard_normal((2 * n_per_class, 2))
    order = rng.permutation(2 * n_per_class)
    meta = {
        "task": "binary",
        "generator": "make_toy",
        "reference": "dvi.md 4.3",
        "params": {
            "which": which,
            "n_per_class": n_per_class,
            "random_state": _seed_meta(random_state),
        },
        "mu": mu,
        "sigma": 0.75,
        "label_map": None,
    }
    return Dataset(X=X[order], y=y[order], name=f"toy{which}", meta=meta)


def make_two_gaussians(
    n: int = 1500, m: int = 241, distance: float = 2.5, random_state: RandomState = None
) -> Dataset:
    """g241c-style data: two unit-variance isotropic Gaussians whose means are ``distance`` apart.

    Chapelle, Schölkopf and Zien's g241c (SSL book, ch. 21) has 1500 points in 241 dimensions,
    750 per class, drawn from two isotropic unit-variance Gaussians whose centres are 2.5 apart
    in a random direction, so the cluster assumption holds. Here the means are
    ``+-(distance / 2) u`` for a random unit vector ``u``; ``n // 2`` points are positive. The
    substitute for the benchmark suggested in aid.md section 6.1 when the real files are absent
    (the real g241c is ``load_dataset("g241c")``).

    Parameters
    ----------
    n, m : int
        Points and dimensions.
    distance : float
        Distance between the two means.
    random_state : int, numpy.random.Generator or None
        Seed.

    Returns
    -------
    Dataset
        ``X`` (n, m) dense, ``y`` in {-1, +1}; ``meta["direction"]`` is ``u``.
    """
    _positive("make_two_gaussians", n=n, m=m)
    if distance < 0:
        raise DataError(f"make_two_gaussians: distance must be >= 0, got {distance}.")
    rng = _rng(random_state)
    u = _unit_vector(m, rng)
    y = _balanced_labels(n, rng)
    X = rng.standard_normal((n, m)) + (y * distance / 2)[:, None] * u
    meta = {
        "task": "binary",
        "generator": "make_two_gaussians",
        "reference": "Chapelle et al. (2006) g241c; aid.md 6.1",
        "params": {"n": n, "m": m, "distance": distance, "random_state": _seed_meta(random_state)},
        "direction": u,
        "label_map": None,
    }
    return Dataset(X=X, y=y, name=f"two_gaussians_{n}x{m}", meta=meta)


def make_classification_svm(
    n: int = 200,
    m: int = 5,
    separation: float = 2.0,
    random_state: RandomState = None,
    *,
    flip: float = 0.0,
) -> Dataset:
    """Two Gaussian classes for SVM tests and demos.

    ``x = y (separation / 2) u + z`` with ``z ~ N(0, I_m)``, a random unit direction ``u`` and
    balanced labels; then a fraction ``flip`` of the labels is flipped at random. Large
    ``separation`` (about 6 or more) gives nearly separable data; 0 gives pure noise.

    Parameters
    ----------
    n, m : int
        Rows and features.
    separation : float
        Distance between the class means.
    random_state : int, numpy.random.Generator or None
        Seed.
    flip : float
        Fraction of labels flipped after sampling, in [0, 1].

    Returns
    -------
    Dataset
        ``X`` (n, m) dense, ``y`` in {-1, +1}; ``meta["direction"]`` is ``u`` and
        ``meta["flipped"]`` the indices of flipped labels.
    """
    _positive("make_classification_svm", n=n, m=m)
    if separation < 0 or not 0 <= flip <= 1:
        raise DataError("make_classification_svm: need separation >= 0 and 0 <= flip <= 1.")
    rng = _rng(random_state)
    u = _unit_vector(m, rng)
    y = _balanced_labels(n, rng)
    X = rng.standard_normal((n, m)) + (y * separation / 2)[:, None] * u
    flipped = np.sort(rng.choice(n, size=round(flip * n), replace=False))
    y[flipped] *= -1
    meta = {
        "task": "binary",
        "generator": "make_classification_svm",
        "params": {
            "n": n,
            "m": m,
            "separation": separation,
            "flip": flip,
            "random_state": _seed_meta(random_state),
        },
        "direction": u,
        "flipped": flipped,
        "label_map": None,
    }
    return Dataset(X=X, y=y, name=f"svm_gauss_{n}x{m}", meta=meta)


_KNOWLEDGE_MU_POS = (2.0, 0.5, -0.2, -1.0)
_KNOWLEDGE_MU_NEG = (-2.0, -0.5, 0.2, 1.0)


def make_knowledge_data(
    n_train: int = 200,
    n_test: int = 400,
    m: int = 10_000,
    random_state: RandomState = None,
    *,
    block_size: int = 50,
    noise_fraction: float | None = None,
    interpretation: Literal["A", "B"] = "A",
) -> tuple[Dataset, Dataset]:
    """HIPAD's synthetic knowledge data (ksvm-s-10k / ksvm-s-50k), train and test sets.

    Follows hipad.md section 5.2. Four feature blocks K1..K4 of ``block_size`` (L = 50)
    columns each carry the signal: given the class, block ``j`` is ``N(mu_j 1, Sigma)`` with
    ``Sigma`` = 1 on the diagonal and 0.8 off it, ``mu+ = (2, 0.5, -0.2, -1)`` and
    ``mu- = (-2, -0.5, 0.2, 1)``. Training rows carry only K2 and K3; test rows carry all four.
    A fraction of the remaining entries of every row is standard Gaussian noise; all other
    entries are 0. Paper sizes: ksvm-s-10k is ``n_train=200, n_test=400, m=10_000`` (the
    defaults); ksvm-s-50k is ``n_train=500, n_test=1000, m=50_000``.

    Decisions where the paper is silent (hipad.md sections 5.2 and 8, item 11):

    * block layout ``[noise | K1 | K2 | K3 | K4 | noise]``, the blocks contiguous and centred:
      K1 starts at column ``(m - 4 L) // 2``;
    * classes balanced (``n // 2`` positives) and shuffled;
    * one noise fraction for the whole call, drawn uniformly from [0.05, 0.10] unless
      ``noise_fraction`` is given; each row gets ``round(fraction * r)`` noise entries at random
      among its ``r`` remaining columns;
    * interpretation ``"A"`` (default): K1 and K4 are exactly zero in training rows;
      ``"B"``: they count as "remaining" entries and receive sparse noise like the rest.

    The knowledge, in KSVM notation (k1 = k2 = 1), is: ``mean_K1(x) >= 4 => x in A+``, written
    ``B x <= d`` with ``B = -(1/L)`` on K1 (0 elsewhere) and ``d = -4``; and
    ``mean_K4(x) >= 3 => x in A-``, written ``D x <= g`` with ``D = -(1/L)`` on K4 and
    ``g = -3``.

    Parameters
    ----------
    n_train, n_test : int
        Rows of the two sets.
    m : int
        Features; at least ``4 * block_size``.
    random_state : int, numpy.random.Generator or None
        Seed.
    block_size : int
        L, the width of each block.
    noise_fraction : float, optional
        Fraction of the remaining entries that are noise; drawn from U[0.05, 0.10] if ``None``.
    interpretation : {"A", "B"}
        Whether training K1/K4 are zero (A) or sparse noise (B).

    Returns
    -------
    train, test : Dataset
        ``X`` sparse CSR of shape (n, m), ``y`` in {-1, +1}. Both carry the same
        ``meta["knowledge"]``: a list of two dicts ``{"B": ndarray (1, m), "d": ndarray (1,),
        "label": +1.0}`` (the ``B x <= d => +1`` set) and ``{"B": D, "d": g, "label": -1.0}``,
        plus ``meta["blocks"]`` (the column ranges of K1..K4 as ``(start, stop)`` pairs) and
        ``meta["noise_fraction"]``.
    """
    _positive("make_knowledge_data", n_train=n_train, n_test=n_test, m=m, block_size=block_size)
    L = block_size
    if m < 4 * L:
        raise DataError(f"make_knowledge_data: m={m} is smaller than the 4 blocks (4 x {L}).")
    if interpretation not in ("A", "B"):
        raise DataError(f"interpretation must be 'A' or 'B', got {interpretation!r}.")
    rng = _rng(random_state)
    if noise_fraction is None:
        noise_fraction = float(rng.uniform(0.05, 0.10))
    if not 0 <= noise_fraction <= 1:
        raise DataError(f"noise_fraction must be in [0, 1], got {noise_fraction}.")
    start = (m - 4 * L) // 2
    blocks = [(start + j * L, start + (j + 1) * L) for j in range(4)]

    B = np.zeros((1, m))
    B[0, blocks[0][0] : blocks[0][1]] = -1.0 / L
    D = np.zeros((1, m))
    D[0, blocks[3][0] : blocks[3][1]] = -1.0 / L
    knowledge = [
        {"B": B, "d": np.array([-4.0]), "label": 1.0, "rule": "mean_K1(x) >= 4 => +1"},
        {"B": D, "d": np.array([-3.0]), "label": -1.0, "rule": "mean_K4(x) >= 3 => -1"},
    ]

    def sample(n: int, present: tuple[int, ...]) -> tuple[sp.csr_array, NDArray[np.float64]]:
        y = _balanced_labels(n, rng)
        mu = np.where(y[:, None] > 0, _KNOWLEDGE_MU_POS, _KNOWLEDGE_MU_NEG)  # (n, 4)
        signal_cols = np.concatenate([np.arange(*blocks[j]) for j in present])
        # Equicorrelated blocks: sqrt(0.8) * shared factor + sqrt(0.2) * own noise.
        shared = rng.standard_normal((n, len(present)))
        own = rng.standard_normal((n, len(present), L))
        vals = (
            mu[:, list(present)][:, :, None]
            + np.sqrt(0.8) * shared[:, :, None]
            + np.sqrt(0.2) * own
        )
        occupied = signal_cols
        if interpretation == "A":
            occupied = np.arange(blocks[0][0], blocks[3][1])  # absent blocks stay exactly zero
        remaining = np.setdiff1d(np.arange(m), occupied)
        k = round(noise_fraction * remaining.size)
        rows, cols, data = [], [], []
        for i in range(n):
            noise_cols = remaining[rng.choice(remaining.size, size=k, replace=False)]
            c = np.concatenate([signal_cols, noise_cols])
            rows.append(np.full(c.size, i))
            cols.append(c)
            data.append(np.concatenate([vals[i].ravel(), rng.standard_normal(k)]))
        X = sp.csr_array(
            (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(n, m)
        )
        X.sort_indices()
        return X, y

    X_tr, y_tr = sample(n_train, (1, 2))
    X_te, y_te = sample(n_test, (0, 1, 2, 3))
    params = {
        "n_train": n_train,
        "n_test": n_test,
        "m": m,
        "block_size": L,
        "interpretation": interpretation,
        "random_state": _seed_meta(random_state),
    }
    common = {
        "task": "binary",
        "generator": "make_knowledge_data",
        "reference": "hipad.md 5.2",
        "params": params,
        "knowledge": knowledge,
        "blocks": blocks,
        "noise_fraction": noise_fraction,
        "label_map": None,
    }
    name = f"ksvm_s_{m}"
    train = Dataset(X=X_tr, y=y_tr, name=name, meta=dict(common, split="train"))
    test = Dataset(X=X_te, y=y_te, name=name, meta=dict(common, split="test"))
    return train, test
