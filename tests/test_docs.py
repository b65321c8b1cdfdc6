"""The documentation site builds in strict mode, and what its pages say is what the code does.

* ``mkdocs build --strict`` succeeds and prints no warning (broken links and anchors included).
* Every ``python`` block of a page runs, in order, in one namespace per page.
* The LaTeX between ``$...$`` and ``$$...$$`` reaches the HTML unchanged (Markdown would
  otherwise eat backslashes and underscores before MathJax sees them).
* The parameter tables of the model and driver pages list exactly the classes' parameters.
* The tutorial's model is the code of ``examples/own_model_quantile.py``.
"""

import dataclasses
import html
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
# Pages written with the code; docs/results (benchmark reports) and the design notes are prose.
PAGES = sorted(
    p.relative_to(DOCS).as_posix()
    for p in DOCS.rglob("*.md")
    if not p.relative_to(DOCS).as_posix().startswith("results/") and p.name != "design-notes.md"
)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _text(page: str) -> str:
    return (DOCS / page).read_text()


def _prose(page: str) -> str:
    """The page without fenced code blocks and inline code spans."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", _text(page)))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return out


def test_strict_build_has_every_page(site):
    for page in PAGES:
        built = site / page.replace(".md", "/index.html").replace("index/index.html", "index.html")
        assert built.exists(), page
    assert (site / "results" / "dvi" / "index.html").exists()


@pytest.mark.parametrize("page", PAGES)
def test_math_reaches_the_html_unchanged(site, page):
    prose = _prose(page)
    display = re.findall(r"\$\$(.+?)\$\$", prose, re.S)
    inline = re.findall(
        r"(?<!\$)\$([^$\n]+?)\$(?!\$)", re.sub(r"\$\$.+?\$\$", "", prose, flags=re.S)
    )
    built = site / page.replace(".md", "/index.html").replace("index/index.html", "index.html")
    text = html.unescape(built.read_text())
    for formula in display:
        assert f"$${formula}$$" in text, formula
    for formula in inline:
        assert f"${formula}$" in text, formula


@pytest.mark.parametrize("page", [p for p in PAGES if "```python" in _text(p)])
def test_code_blocks_run(page, capsys):
    from optframe import registry

    registry.load_plugins()
    models = dict(registry._MODELS)  # the tutorial registers its model: undo it afterwards
    namespace: dict = {"__name__": f"docs.{page}"}
    try:
        for language, code in FENCE.findall(_text(page)):
            if language == "python":
                exec(compile(code, f"docs/{page}", "exec"), namespace)
    finally:
        registry._MODELS.clear()
        registry._MODELS.update(models)
    assert capsys.readouterr().out  # every page's example prints what it shows


def _documented(page: str) -> dict[str, str]:
    """Name -> default cell of the tables under the "## Parameters" heading of a page."""
    rows: dict[str, str] = {}
    for section in re.split(r"^## ", _text(page), flags=re.M):
        if section.startswith("Parameters"):
            rows |= dict(re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", section, re.M))
    return rows


def _check_default(page: str, name: str, cell: str, default, factory) -> None:
    where = f"{page}: {name}"
    if cell == "required":
        assert default is inspect.Parameter.empty, where
    elif factory is not None:
        assert cell == f"`{type(factory()).__name__}()`", where
    else:
        assert re.fullmatch(r"`[^`]+`", cell), where
        assert eval(cell.strip("`")) == default, f"{where}: {cell} != {default!r}"


def test_parameter_tables_match_the_code():
    from optframe import drivers as d
    from optframe import models as m
    from optframe import solve_path

    pages = {
        "models/lad.md": [m.LADRegression],
        "models/weighted_svm.md": [m.WeightedSVM],
        "models/s3vm.md": [m.SemiSupervisedSVM],
        "models/pu_learning.md": [m.PULearning],
        "models/knowledge_svm.md": [m.KnowledgeBasedSVM, m.KnowledgeSet],
        "models/l2svm.md": [m.L2SVM],
        "models/regularized_lad.md": [m.RegularizedLAD],
        "drivers/direct.md": [d.Direct],
        "drivers/aid.md": [d.AggregateDisaggregate],
        "drivers/smo.md": [d.SMO],
        "drivers/frank_wolfe.md": [d.FrankWolfe],
        "drivers/cvm.md": [d.CoreVectorMachine],
        "drivers/admm.md": [d.ADMM, d.ADMMThenIPM],
        "drivers/dcd.md": [d.DCD],
    }
    assert {p for p in PAGES if p.startswith(("models/", "drivers/"))} == {
        *pages,
        "drivers/screening.md",
    }
    for page, classes in pages.items():
        documented = _documented(page)
        fields = {f.name: f for c in classes for f in dataclasses.fields(c) if f.init}
        assert set(documented) == set(fields), page
        for name, f in fields.items():
            factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
            default = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
            _check_default(page, name, documented[name], default, factory)
    documented = _documented("drivers/screening.md")
    signature = inspect.signature(solve_path).parameters
    assert set(documented) == set(signature)
    for name, parameter in signature.items():
        _check_default("drivers/screening.md", name, documented[name], parameter.default, None)


def test_tutorial_model_is_the_example():
    example = (REPO / "examples" / "own_model_quantile.py").read_text()
    model = example.split("# --8<-- [start:model]\n", 1)[1].split("# --8<-- [end:model]", 1)[0]
    blocks = [code for language, code in FENCE.findall(_text("tutorial-own-model.md"))]
    assert model.strip() in [block.strip() for block in blocks]
