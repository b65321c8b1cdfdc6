"""The catalog against the benchmark folder's MANIFEST.tsv and README.md."""

import csv
import os
import re
from pathlib import Path

import pytest

from optframe.data.catalog import (
    CATALOG,
    FORMATS,
    TASKS,
    UNAVAILABLE,
    get_entry,
    raw_github_url,
    resolve_name,
)
from optframe.data.load import file_sha256
from optframe.errors import DataError


def test_benchmark_folder_is_present():
    relative = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
    env = os.environ.get("OPTFRAME_DATA")
    found = [p for p in (relative, Path(env) if env else None) if p and p.is_dir()]
    assert found, f"{relative} is missing and OPTFRAME_DATA does not name a folder"
    assert (found[0] / "MANIFEST.tsv").is_file()


def _manifest(data_root):
    with open(data_root / "MANIFEST.tsv", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _files_by_path():
    return {f.path: f for e in CATALOG.values() if not e.packaged for f in e.files.values()}


def test_every_manifest_file_is_in_the_catalog_with_its_checksum_and_url(data_root):
    files = _files_by_path()
    rows = _manifest(data_root)
    assert len(rows) == 61
    for row in rows:
        assert row["file"] in files, f"{row['file']} is not in the catalog"
        f = files[row["file"]]
        assert f.sha256 == row["sha256"]
        assert f.url == raw_github_url(row["repo"], row["commit"], row["path"])
        assert f.url.startswith("https://raw.githubusercontent.com/")
    assert set(files) == {row["file"] for row in rows}


def test_shared_files_match_their_sha256(data_root):
    for path, f in _files_by_path().items():
        assert file_sha256(data_root / path) == f.sha256, path


def test_readme_folders_and_names_are_covered(data_root):
    readme = (data_root / "README.md").read_text()
    folders = re.search(r"in 17 folders:\s*`([^`]*)`", readme).group(1).split()
    used = {f.split("/")[0] for f in _files_by_path()}
    assert set(folders) == used
    names = [
        "a1a",
        "a5a",
        "a8a",
        "a9a",
        "w8a",
        "ijcnn1",
        "mushrooms",
        "usps",
        "skin_nonskin",
        "svmguide1",
        "svmguide3",
        "reuters",
        "news20",
        "abalone",
        "colon-cancer",
        "ALLAML",
        "leukemia",
        "colon",
        "arcene",
        "madelon",
        "Prostate-GE",
        "BASEHOCK",
        "PCMAC",
        "RELATHE",
        "digit1",
        "usps_ssl",
        "coil2",
        "bci",
        "g241c",
        "g241d",
        "text",
        "coil",
        "secstr",
        "breast_cancer",
        "diabetes_sklearn",
        "digits",
        "wine",
        "iris",
    ]
    for name in names:
        assert name in CATALOG, name
    for path in (data_root / "pmlb").glob("*.tsv.gz"):
        assert path.name.removesuffix(".tsv.gz") in CATALOG


@pytest.mark.parametrize(
    ("alias", "target"),
    [
        ("cadata", "537_houses"),
        ("houses", "537_houses"),
        ("cpusmall", "227_cpu_small"),
        ("cpu_act", "197_cpu_act"),
        ("computer", "197_cpu_act"),
        ("pima_indians_diabetes", "pima"),
        ("heart", "heart_statlog"),
        ("wdbc", "breast_cancer_wisconsin"),
        ("magic04", "magic"),
        ("kdd99", "kddcup"),
        ("g241n", "g241d"),
        ("reuters_lasvm", "reuters"),
        ("news20_multiclass", "news20"),
        ("abalone_scale", "abalone"),
        ("COLON_CANCER", "colon-cancer"),
        ("prostate-ge", "Prostate-GE"),
        ("skin", "skin_nonskin"),
    ],
)
def test_aliases(alias, target):
    assert get_entry(alias).name == target


def test_test_file_names_select_the_test_split():
    assert resolve_name("a9a.t") == (CATALOG["a9a"], "test")
    assert resolve_name("ijcnn1.t") == (CATALOG["ijcnn1"], "test")
    assert resolve_name("a9a") == (CATALOG["a9a"], None)


def test_unknown_name_suggests_close_matches():
    with pytest.raises(DataError, match=r"Unknown data set 'a9x'.*Did you mean 'a9a'"):
        get_entry("a9x")
    with pytest.raises(DataError, match="Did you mean 'mushrooms'"):
        get_entry("mushrooms2")
    with pytest.raises(DataError, match="Unknown data set"):
        get_entry("zzzzzz")


def test_unavailable_sets_name_their_stand_in():
    for name in UNAVAILABLE:
        with pytest.raises(DataError, match="not available"):
            get_entry(name)
    with pytest.raises(DataError, match="reuters"):
        get_entry("rcv1")


def test_entries_are_well_formed():
    for entry in CATALOG.values():
        assert entry.task in TASKS
        assert "train" in entry.splits
        for f in entry.files.values():
            assert f.format in FORMATS
            assert f.n > 0
            assert f.m > 0
            assert f.url
            if not entry.packaged:
                assert f.sha256 is not None
                assert len(f.sha256) == 64
        if entry.label_task == "binary":
            assert entry.classes is not None
            assert len(entry.classes) == 2
            assert entry.classes[0] < entry.classes[1]
        if entry.task == "regression":
            assert entry.classes is None


def test_cache_names_keep_the_upstream_compression():
    a9a = CATALOG["a9a"]
    assert a9a.files["test"].cache_path == "a9a/adult.tst.bz2"
    assert a9a.files["train"].cache_path == "a9a/a9a"
    assert CATALOG["537_houses"].files["train"].cache_path == "pmlb/537_houses.tsv.gz"
    colon = CATALOG["colon-cancer"].files["train"]
    assert colon.url.endswith("colon-cancer.jld")
    assert colon.cache_path == "colon-cancer/colon-cancer.bz2"


def test_suggestions_name_the_close_alias_and_its_data_set():
    with pytest.raises(DataError, match=r"Did you mean 'cpusmall' \(227_cpu_small\)\?"):
        resolve_name("cpusmal")


def test_diabetes_is_ambiguous_and_names_both():
    with pytest.raises(DataError) as caught:
        resolve_name("diabetes")
    text = str(caught.value)
    assert "'pima'" in text
    assert "'diabetes_sklearn'" in text
    assert resolve_name("diabetes_sklearn")[0].name == "diabetes_sklearn"
    assert resolve_name("pima")[0].name == "pima"
