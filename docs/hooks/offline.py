r"""MkDocs hook: render at build time what a browser would otherwise fetch from the network.

* Math. ``pymdownx.arithmatex`` (generic mode) keeps the LaTeX written between ``$...$`` and
  ``$$...$$`` away from Markdown and wraps it as ``<span class="arithmatex">\(...\)</span>`` or
  ``<div class="arithmatex">\[...\]</div>``; this hook replaces each wrapper by MathML made by
  ``latex2mathml`` (with the few fixes below), which every current browser lays out natively.
  The site loads no script for math, and a formula that ``latex2mathml`` cannot read fails the
  build instead of shipping raw.
* Math font. Browsers lay MathML out well only with an OpenType MATH font, which many systems
  lack; the hook copies STIX Two Math (SIL Open Font License 1.1), as shipped inside the
  ``ziamath`` package, to ``fonts/`` and ``css/extra.css`` gives it to ``math`` elements.
* Code. ``pymdownx.highlight`` colours code with Pygments during the build; the hook writes the
  matching stylesheet, ``css/pygments.css``, from the installed Pygments.

Listed under ``hooks:`` in ``mkdocs.yml``. ``tests/test_docs.py`` checks the built HTML, and looks
at every page in a headless Chromium with the network off.
"""

from __future__ import annotations

import html
import importlib.util
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from latex2mathml.converter import convert
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from pygments.formatters import HtmlFormatter

PYGMENTS_CSS = "css/pygments.css"
PYGMENTS_STYLE = "friendly"
MATH_FONT = "fonts/STIXTwoMath-Regular.ttf"  # the name css/extra.css loads
# Found without importing ziamath, which would load the font to draw SVG.
MATH_FONT_SOURCE = (
    Path(importlib.util.find_spec("ziamath").origin).parent / "fonts" / "STIXTwoMath-Regular.ttf"
)

MATHML = "http://www.w3.org/1998/Math/MathML"
ET.register_namespace("", MATHML)

# What arithmatex (generic mode) leaves in the HTML: the LaTeX, HTML-escaped, inside \( \) or \[ \].
_INLINE = re.compile(r'<span class="arithmatex">\\\((.*?)\\\)</span>', re.S)
_DISPLAY = re.compile(r'<div class="arithmatex">\\\[(.*?)\\\]</div>', re.S)
# LaTeX that latex2mathml does not know or sets badly, spelled with what it handles: \arg; an
# upright letter \mathrm{d} (it would come out italic); the bars \lvert x\rvert, which would
# otherwise get the spacing of a relation on one side.
_BAR_SIZE = r"(?<!\\left)(?<!\\right)(?<!\\bigl)(?<!\\bigr)(?<!\\Bigl)(?<!\\Bigr)"
_REWRITE = [
    (re.compile(r"\\arg(?![A-Za-z])"), r"\\operatorname{arg}"),
    (re.compile(r"\\mathrm\{([A-Za-z])\}"), r"\\text{\1}"),
    (re.compile(_BAR_SIZE + r"\\(lvert|lVert)(?![A-Za-z])"), r"\\mathopen{\\\1}"),
    (re.compile(_BAR_SIZE + r"\\(rvert|rVert)(?![A-Za-z])"), r"\\mathclose{\\\1}"),
]
# Operators whose limits go under them in display style (\min_x, \max_\theta, ...).
_LIMITS = re.compile(r"(arg\s*)?(min|max|sup|inf|lim)")
_MI = f"{{{MATHML}}}mi"
_UNDER = {"msub": "munder", "msup": "mover", "msubsup": "munderover"}


def _tag(element: ET.Element) -> str:
    return element.tag.rpartition("}")[2]


def _bold(text: str) -> str:
    """Mathematical bold letters and digits (browsers ignore ``mathvariant="bold"``)."""
    return "".join(
        chr(0x1D7CE + ord(c) - ord("0"))
        if c.isdigit()
        else chr(0x1D400 + ord(c) - ord("A"))
        if "A" <= c <= "Z"
        else chr(0x1D41A + ord(c) - ord("a"))
        if "a" <= c <= "z"
        else c
        for c in text
    )


def _fix(math: ET.Element) -> None:
    r"""Repair what latex2mathml emits for browsers.

    Nested ``mo`` (from \mathrel, \mathopen) become one ``mo``; a name set as an operator
    (\operatorname{sign}) becomes an ``mi``; ``mathvariant="bold"``, which browsers ignore, becomes
    bold code points; the upright letters of ``\mathrm{clip}`` become one ``mi``; and ``\min_x``,
    ``\max_x``, ... put their limits under the operator in display style.
    """
    for element in math.iter():
        if _tag(element) == "mo" and len(element):
            element.text = "".join(element.itertext())
            element[:] = []
        name = element.text or ""
        if _tag(element) == "mo" and re.fullmatch(r"[A-Za-z]{2,}", name):
            element.tag = element.tag if _LIMITS.fullmatch(name) or name == "arg" else _MI
        if element.get("mathvariant") == "bold":
            element.text = _bold(element.text or "")
            del element.attrib["mathvariant"]
        if (
            _tag(element) == "mrow"
            and len(element) > 1
            and all(_tag(c) == "mi" and c.get("mathvariant") == "normal" for c in element)
        ):
            element.tag = _MI
            element.text = "".join(c.text or "" for c in element)
            element[:] = []
    for element in math.iter():
        base = element[0] if len(element) else None
        if (
            _tag(element) in _UNDER
            and base is not None
            and _tag(base) == "mo"
            and _LIMITS.fullmatch(base.text or "")
        ):
            element.tag = f"{{{MATHML}}}{_UNDER[_tag(element)]}"
            base.set("movablelimits", "true")


def to_mathml(latex: str, display: bool = False) -> str:
    """The MathML element for one LaTeX formula (raises ``ValueError`` if a command is unknown)."""
    source = latex
    for pattern, replacement in _REWRITE:
        latex = pattern.sub(replacement, latex)
    math = ET.fromstring(convert(latex.strip(), display="block" if display else "inline"))
    _fix(math)
    for element in math.iter():
        command = re.search(r"\\[A-Za-z]+", element.text or "")
        if command and _tag(element) != "mtext":
            raise ValueError(f"latex2mathml cannot read {command.group(0)} in {source!r}")
    return ET.tostring(math, encoding="unicode")


def render_math(content: str) -> str:
    """Replace every arithmatex wrapper in a page's HTML by MathML."""

    def display(match: re.Match) -> str:
        return f'<div class="math">{to_mathml(html.unescape(match.group(1)), True)}</div>'

    def inline(match: re.Match) -> str:
        return to_mathml(html.unescape(match.group(1)))

    return _INLINE.sub(inline, _DISPLAY.sub(display, content))


def on_page_content(html_text, page, config, files):  # noqa: D103 (MkDocs hook)
    try:
        return render_math(html_text)
    except ValueError as error:
        raise PluginError(f"{page.file.src_uri}: {error}") from error


def on_files(files, config):  # noqa: D103 (MkDocs hook)
    css = HtmlFormatter(style=PYGMENTS_STYLE).get_style_defs(".highlight")
    files.append(File.generated(config, PYGMENTS_CSS, content=css))
    files.append(File.generated(config, MATH_FONT, abs_src_path=str(MATH_FONT_SOURCE)))
    return files
