"""The lessons under docs/lessons: their code runs, and their figures are drawn from real runs.

* every ``python`` block of a lesson runs, in order, in one namespace, and prints what it shows;
* the numpy SMO of the SVM lesson is the code that draws the figure;
* ``docs/lessons/figures.py`` draws the three figures from runs on OPTFRAME_DATA, as small PNGs,
  into a temporary folder; the committed figures exist, are small, and each lesson shows its own;
* the lessons' claims hold on those runs (weak duality at perturbed points, AID's exact last
  aggregated problem, the numpy SMO's dual value against the driver's).
"""

from __future__ import annotations

import importlib.util
import re
import struct
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
LESSONS = REPO / "docs" / "lessons"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
PAGES = {"lad_duality.md": "lad_duality.png", "svm_smo.md": "svm_smo.png",
         "aid_clusters.md": "aid_clusters.png"}  # fmt: skip
MAX_BYTES = 100_000


def _figures():
    spec = importlib.util.spec_from_file_location("lesson_figures", LESSONS / "figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("page", sorted(PAGES))
def test_lesson_code_runs_and_prints(page, capsys):
    namespace: dict = {"__name__": f"docs.lessons.{page}"}
    blocks = [code for language, code in FENCE.findall((LESSONS / page).read_text())
              if language == "python"]  # fmt: skip
    assert blocks
    for code in blocks:
        exec(compile(code, f"docs/lessons/{page}", "exec"), namespace)
        assert capsys.readouterr().out, "every block prints what it shows"
    if page == "lad_duality.md":
        assert namespace["near"].value <= namespace["result"].objective
        assert namespace["result"].certificate.value == namespace["result"].bound
    if page == "svm_smo.md":
        ours = namespace["alpha"].sum() - 0.5 * np.sum((namespace["Z"].T @ namespace["alpha"]) ** 2)
        assert ours <= namespace["result"].objective
        assert ours == pytest.approx(namespace["result"].bound, rel=1e-4)
    if page == "aid_clusters.md":
        records = namespace["records"]
        assert records[-1].extras["split"] == 0
        assert namespace["result"].objective == pytest.approx(
            namespace["direct"].objective, rel=1e-9
        )


def test_the_lessons_smo_is_the_figures():
    source = (LESSONS / "figures.py").read_text()
    page = (LESSONS / "svm_smo.md").read_text()
    for name in ("svm_data", "smo_pairs"):
        start = source.index(f"def {name}(")
        end = source.index("\ndef ", start + 1)
        assert source[start:end].strip() in page, name


def test_figures_are_drawn_small_from_real_runs(tmp_path, capsys):
    drawn = _figures().main(["--out", str(tmp_path)])
    assert sorted(path.name for path in drawn) == sorted(PAGES.values())
    for path in drawn:
        width, height = _png_size(path)
        assert (width, height) == (600, 240)
        assert 5_000 < path.stat().st_size < MAX_BYTES, path
    assert "KB" in capsys.readouterr().out


def test_one_figure_by_name(tmp_path):
    drawn = _figures().main(["--out", str(tmp_path), "lad_duality"])
    assert [path.name for path in drawn] == ["lad_duality.png"]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_committed_figures_are_shown_and_small(page):
    figure = LESSONS / PAGES[page]
    text = (LESSONS / page).read_text()
    assert f"]({PAGES[page]})" in text
    assert "docs/lessons/figures.py" in text
    assert figure.stat().st_size < MAX_BYTES
    assert _png_size(figure) == (600, 240)


def test_lessons_are_in_the_navigation():
    nav = (REPO / "mkdocs.yml").read_text()
    for page in PAGES:
        assert f"lessons/{page}" in nav
