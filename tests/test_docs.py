"""The documentation site builds in strict mode, reads offline, and says what the code does.

* ``mkdocs build --strict`` succeeds and prints no warning (broken links and anchors included).
* Every ``python`` block of a page runs, in order, in one namespace per page.
* The LaTeX between ``$...$`` and ``$$...$$`` is MathML in the HTML (``docs/hooks/offline.py``),
  code is coloured by Pygments at build time, and no page loads anything from another host.
* In a headless Chromium with the network off (Debian's ``chromium`` and ``chromium-driver``,
  driven by ``selenium``), every page shows laid-out math in the shipped math font, coloured code,
  and tables that stay inside the text column.
* The parameter tables of the model and driver pages list exactly the classes' parameters.
* The tutorial's model is the code of ``examples/own_model_quantile.py``.
"""

import dataclasses
import functools
import html
import http.server
import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
import threading
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
    for path in site.rglob("*/index.html"):  # the theme's scrollspy cannot select such an id
        assert not re.search(r'<h\d id="\d', path.read_text()), (
            f"{path}: heading starts with a digit"
        )


def _built(site: Path, page: str) -> Path:
    return site / page.replace(".md", "/index.html").replace("index/index.html", "index.html")


def _formulas(page: str) -> tuple[list[str], list[str]]:
    """The display and the inline formulas of a page's Markdown source."""
    prose = _prose(page)
    display = re.findall(r"\$\$(.+?)\$\$", prose, re.S)
    inline = re.findall(  # a formula may wrap onto the next line of its paragraph
        r"(?<!\$)\$((?:[^$\n]|\n(?!\n))+?)\$(?!\$)",
        re.sub(r"\$\$.+?\$\$", "", prose, flags=re.S),
    )
    return display, inline


@functools.cache
def _hook():
    """docs/hooks/offline.py, the MkDocs hook that renders LaTeX to MathML."""
    spec = importlib.util.spec_from_file_location(
        "docs_hook_offline", DOCS / "hooks" / "offline.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _outside_code(text: str) -> str:
    """A built page without its code, math, scripts and tags: what a reader sees as prose."""
    for tag in ("pre", "code", "math", "script", "style"):
        text = re.sub(rf"<{tag}\b.*?</{tag}>", "", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


ALL_PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", ALL_PAGES)
def test_math_is_mathml_in_the_html(site, page):
    display, inline = _formulas(page)
    text = _built(site, page).read_text()
    for formula in display:
        assert f'<div class="math">{_hook().to_mathml(formula, True)}</div>' in text, formula
    for formula in inline:
        assert _hook().to_mathml(formula) in text, formula
    assert text.count("<math ") == len(display) + len(inline)
    prose = _outside_code(text)
    assert "arithmatex" not in text
    assert not re.search(r"\$|\\[(\[]|\\[A-Za-z]{2,}", prose), page


def test_every_formula_converts():
    """latex2mathml reads every formula: no LaTeX command is left as text in the MathML."""
    for page in ALL_PAGES:
        display, inline = _formulas(page)
        for formula in display + inline:
            mathml = _hook().to_mathml(formula, formula in display)
            assert 'mathvariant="bold"' not in mathml, formula  # browsers ignore it
            assert "<mo><mrow>" not in mathml, formula


def test_site_loads_nothing_from_another_host(site):
    for path in site.rglob("*.html"):
        text = path.read_text()
        assert not re.search(r"<script[^>]+src=\"(https?:)?//", text), path
        assert not re.search(
            r"<link[^>]+href=\"(https?:)?//[^\"]*\"[^>]*>",
            text.replace('<link rel="canonical"', ""),
        ), path
    for path in site.rglob("*.css"):
        assert not re.search(r"url\(\s*['\"]?(https?:)?//|@import", path.read_text()), path
    assert (site / "fonts" / "STIXTwoMath-Regular.ttf").stat().st_size > 100_000


def test_code_is_highlighted_at_build_time(site):
    text = _built(site, "models/lad.md").read_text()
    assert '<div class="highlight"><pre>' in text
    assert '<span class="kn">import</span>' in text
    assert ".highlight .k " in (site / "css" / "pygments.css").read_text()
    assert "hljs" not in text


# In the browser: what a reader of the built site sees, with every host but the site's refused.
# Chromium and ChromeDriver are Debian's packages chromium and chromium-driver (README, Tests).
_OFFLINE = [
    "--headless=new",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--window-size=1000,900",
    "--proxy-server=127.0.0.1:9",  # nothing listens there: every remote request fails
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
# Per page: how the math, the code and the tables came out; computed in the page.
_LOOK = """
const done = arguments[arguments.length - 1];
document.fonts.ready.then(() => {
  const prose = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode;
    if (!node.parentElement.closest("pre, code, math, script, style")) prose.push(node.data);
  }
  const box = (e) => e.getBoundingClientRect();
  const maths = [...document.querySelectorAll("math")];
  const keyword = document.querySelector(".highlight .k, .highlight .kn");
  const column = document.querySelector("[role=main]");
  done({
    maths: maths.length,
    laidOut: maths.filter((m) => getComputedStyle(m).display.includes("math")).length,
    fractions: [...document.querySelectorAll("mfrac")].map(
      (f) => box(f.children[0]).bottom <= box(f.children[1]).top + 1),
    font: [...document.fonts].some(
      (f) => f.family.includes("STIX Two Math") && f.status === "loaded"),
    prose: prose.join(" "),
    code: document.querySelectorAll(".highlight").length,
    keywordColour: keyword && getComputedStyle(keyword).color,
    codeColour: keyword && getComputedStyle(keyword.closest("pre")).color,
    pageWidth: document.documentElement.scrollWidth,
    windowWidth: window.innerWidth,
    tables: [...document.querySelectorAll("table")].map(
      (t) => box(t).right <= box(column).right + 1),
    code_boxes: [...document.querySelectorAll("pre")].map(
      (p) => p.scrollWidth <= p.clientWidth || getComputedStyle(p).overflowX === "auto"),
    resources: performance.getEntriesByType("resource").map((r) => [r.name, r.responseStatus]),
  });
});
"""


@pytest.fixture(scope="module")
def browser(site):
    """A headless Chromium that reaches only a local server of the built site; yields its URL."""
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        pytest.fail(
            "the docs' browser test needs Debian's chromium and chromium-driver "
            "(apt-get install chromium chromium-driver; see the README's test set-up)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in _OFFLINE:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(chromedriver))
    driver.set_script_timeout(30)
    try:
        yield driver, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        driver.quit()
        server.shutdown()


def test_browser_is_offline(browser):
    from selenium.common.exceptions import WebDriverException

    driver, _ = browser
    with pytest.raises(WebDriverException, match="net::ERR_"):
        driver.get("https://www.mkdocs.org/")


@pytest.mark.parametrize("page", ALL_PAGES)
def test_browser_shows_the_page_offline(browser, page):
    driver, url = browser
    path = page.removesuffix(".md").removesuffix("index")
    driver.get(url + (path if path.endswith("/") or not path else path + "/"))
    look = driver.execute_async_script(_LOOK)
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    for name, status in look["resources"]:
        assert name.startswith(url), name
        assert status == 200, (name, status)
    display, inline = _formulas(page)
    assert look["maths"] == len(display) + len(inline)
    assert look["laidOut"] == look["maths"]  # Chromium lays the MathML out as math
    assert all(look["fractions"])  # numerators above denominators
    assert look["font"] or not look["maths"]  # the shipped STIX Two Math was loaded and used
    assert not re.search(r"\$|\\[(\[]|\\[A-Za-z]{2,}", look["prose"]), look["prose"][:2000]
    if "```" in _text(page):
        assert look["code"]
    if look["keywordColour"]:
        assert look["keywordColour"] != look["codeColour"]  # Pygments' colours reached the page
    assert look["pageWidth"] <= look["windowWidth"]  # nothing runs past the window...
    assert all(look["tables"])  # ...and every table stays in the text column (it may scroll)
    assert all(look["code_boxes"])  # a long line of code scrolls inside its box


@pytest.mark.parametrize("page", [p for p in PAGES if "```python" in _text(p)])
def test_code_blocks_run(page, capsys):
    from optframe import registry

    registry.load_plugins()
    # the tutorial registers its model, the how-to its back-end: undo both afterwards
    models = dict(registry._MODELS)
    backends = {name: list(group) for name, group in registry._BACKENDS.items()}
    namespace: dict = {"__name__": f"docs.{page}"}
    try:
        for language, code in FENCE.findall(_text(page)):
            if language == "python":
                exec(compile(code, f"docs/{page}", "exec"), namespace)
    finally:
        registry._MODELS.clear()
        registry._MODELS.update(models)
        registry._BACKENDS.clear()
        registry._BACKENDS.update(backends)
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
    from optframe.data import DaskDataset

    pages = {
        "models/lad.md": [m.LADRegression],
        "models/empirical_risk.md": [m.EmpiricalRisk],
        "models/weighted_svm.md": [m.WeightedSVM],
        "models/s3vm.md": [m.SemiSupervisedSVM],
        "models/pu_learning.md": [m.PULearning],
        "models/knowledge_svm.md": [m.KnowledgeBasedSVM, m.KnowledgeSet],
        "models/l2svm.md": [m.L2SVM],
        "models/regularized_lad.md": [m.RegularizedLAD],
        "drivers/direct.md": [d.Direct],
        "drivers/aid.md": [d.AggregateDisaggregate],
        "drivers/aid_dask.md": [
            DaskDataset,
            m.DaskLADRegression,
            m.DaskQuantileRegression,
            m.DaskWeightedSVM,
        ],
        "drivers/smo.md": [d.SMO],
        "drivers/frank_wolfe.md": [d.FrankWolfe],
        "drivers/cvm.md": [d.CoreVectorMachine],
        "drivers/admm.md": [d.ADMM, d.ADMMThenIPM],
        "drivers/dcd.md": [d.DCD],
        "drivers/cd.md": [d.CoordinateDescent],
        "drivers/newton.md": [d.PrimalNewton],
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


# The docs describe the project as it is: no account of the order in which it was built ("in
# session 3", "round 2", "issue 5"), and no path outside the repository (a record under someone's
# /work/runs/ is not there for a reader; the commands that write records say where they go).
HISTORY = re.compile(
    r"\bsessions?\b|\brounds? (?:\d+|one|two|three|four|five)\b"
    r"|\b(?:this|last|previous|earlier|next|first|second|third) round\b|\bissues? #?\d+\b",
    re.I,
)
OUTSIDE = re.compile(r"(?<![\w.~:/\])-])/(?:work|tmp|home|root|mnt|opt|srv|var|usr|Users)/\S*")


@pytest.mark.parametrize("path", ["README.md", *(f"docs/{page}" for page in ALL_PAGES)])
def test_docs_speak_of_the_project_as_it_is(path):
    lines = (REPO / path).read_text().splitlines()
    history = [f"{path}:{i}: {line}" for i, line in enumerate(lines, 1) if HISTORY.search(line)]
    outside = [f"{path}:{i}: {line}" for i, line in enumerate(lines, 1) if OUTSIDE.search(line)]
    assert not history, "\n".join(history)
    assert not outside, "\n".join(outside)
