"""One self-contained HTML page: what memlab-report and memlab-fleet write.

Everything the page shows is in the file: the style sheet is inline, the pictures are inline SVG (matplotlib's,
its text drawn as paths: no font is fetched), there is no script and no link to anything outside the file, so it
opens from a file:// URL, from a ticket's attachment or offline, and looks the same everywhere. The print style
keeps the verdict colours, sets the tables in full width and keeps a row, a picture and a heading with what follows
on one sheet.

The verdict colours are plot_check's, so the page and the PNGs speak one language.
"""

from __future__ import annotations

import html
import io
import re
from itertools import count

from .plot_check import COLOURS

_ids = count()

# Light tints of the verdict colours for table cells (the text stays black and readable, on paper too).
TINTS = {"pass": "#e3f1dc", "warn": "#fbefc8", "fail": "#f6d5d1", "sibling": "#eadcf1", "busy": "#fde2c4",
         "interrupted": "#fde2c4", "no_reference": "#e6e8e8", "skip": "#f2f2f2", "not judged": "#e6e8e8"}

CSS = """
:root { --pass: %(pass)s; --warn: %(warn)s; --fail: %(fail)s; --sibling: %(sibling)s; --grey: %(no_reference)s; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif; color: #1d1d1d;
       margin: 0 auto; padding: 18px 24px 40px; max-width: 1400px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 6px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 3px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p { margin: 6px 0; }
code, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
.sub { color: #555; }
.verdict { border-radius: 6px; padding: 14px 18px; margin: 8px 0 12px; border-left: 10px solid var(--grey);
           background: #f5f5f5; }
.verdict.pass { border-color: var(--pass); background: %(t_pass)s; }
.verdict.warn { border-color: var(--warn); background: %(t_warn)s; }
.verdict.fail { border-color: var(--fail); background: %(t_fail)s; }
.verdict.busy, .verdict.interrupted { border-color: #e67e22; background: %(t_busy)s; }
.verdict h1 { font-size: 22px; }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 13px; }
th, td { border: 1px solid #d4d4d4; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.v-pass { background: %(t_pass)s; } td.v-warn { background: %(t_warn)s; } td.v-fail { background: %(t_fail)s; }
td.v-sibling { background: %(t_sibling)s; } td.v-busy, td.v-interrupted { background: %(t_busy)s; }
td.v-skip { background: %(t_skip)s; color: #777; } td.v-no_reference { background: %(t_no_reference)s; }
td.v-none { background: #fafafa; color: #aaa; }
.tag { font-size: 11px; font-weight: 700; text-transform: uppercase; margin-left: 4px; }
.tag.fail { color: var(--fail); } .tag.warn { color: #9a6b00; } .tag.sibling { color: var(--sibling); }
.tag.busy, .tag.interrupted { color: #b35900; }
.grid td { white-space: nowrap; padding: 3px 6px; }
.grid th { font-weight: 600; white-space: nowrap; }
.scroll { overflow-x: auto; }
.figure { margin: 8px 0 14px; }
.figure svg { max-width: 100%%; height: auto; display: block; }
.caption { font-size: 12.5px; color: #444; margin: 2px 0 0; }
.note { background: #f7f7f7; border: 1px solid #e2e2e2; border-radius: 4px; padding: 6px 10px; font-size: 13px; }
footer { margin-top: 30px; font-size: 12px; color: #666; border-top: 1px solid #ddd; padding-top: 6px; }
@page { size: A4 landscape; margin: 12mm; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  h2 { break-after: avoid; page-break-after: avoid; }
  tr, .figure, .verdict { break-inside: avoid; page-break-inside: avoid; }
  .scroll { overflow: visible; }
  table { font-size: 10px; }
}
""" % {**COLOURS, **{f"t_{k}": v for k, v in TINTS.items()}}


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def page(title: str, body: str) -> str:
    """The whole document: no script, no external reference; `body` is HTML already escaped."""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            # No fetch at all: the page is the file. A policy that allows nothing outside it makes a stray link in
            # a picture or a note fail loudly in the browser test instead of reaching the network.
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def table(header: list[str], rows: list[list], num: set[int] = frozenset(), cls: str = "",
          row_attrs: list[str] | None = None) -> str:
    """A table; each cell is text (escaped here) or a ('raw', html, css class) tuple; `num`: right-aligned columns."""
    out = [f"<table class=\"{cls}\">" if cls else "<table>", "<thead><tr>"]
    for i, h in enumerate(header):
        inner = h[1] if isinstance(h, tuple) else esc(h)
        out.append(f"<th class=\"num\">{inner}</th>" if i in num else f"<th>{inner}</th>")
    out.append("</tr></thead><tbody>")
    for j, r in enumerate(rows):
        attrs = f" {row_attrs[j]}" if row_attrs and row_attrs[j] else ""
        out.append(f"<tr{attrs}>")
        for i, c in enumerate(r):
            if isinstance(c, tuple):
                _, inner, klass = c
                klass = " ".join(x for x in (klass, "num" if i in num else "") if x)
                out.append(f"<td class=\"{klass}\">{inner}</td>" if klass else f"<td>{inner}</td>")
            else:
                out.append(f"<td class=\"num\">{esc(c)}</td>" if i in num else f"<td>{esc(c)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def raw(inner: str, klass: str = "") -> tuple:
    """A table cell of HTML already escaped."""
    return ("raw", inner, klass)


def tag(verdict: str) -> str:
    """A verdict in words beside a value (for print in black and white, and for readers who do not see colour)."""
    return "" if verdict == "pass" else f"<span class=\"tag {esc(verdict)}\">{esc(verdict.replace('_', ' '))}</span>"


def svg_inline(svg_text: str) -> str:
    """matplotlib's SVG document as an element for the page: no XML prolog, DOCTYPE or metadata (a date that would
    change every page); its ids prefixed so that several pictures on one page never share one (matplotlib's glyph
    and clip-path ids repeat from picture to picture)."""
    s = re.sub(r"<\?xml[^>]*\?>\s*", "", svg_text)
    s = re.sub(r"<!DOCTYPE[^>]*>\s*", "", s)
    s = re.sub(r"<metadata>.*?</metadata>\s*", "", s, flags=re.S)
    prefix = f"f{next(_ids)}-"
    s = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', s)
    s = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', s)
    s = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", s)
    return s.strip()


def svg_of(fig) -> str:
    """A matplotlib figure as inline SVG (closed afterwards)."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return svg_inline(buf.getvalue())


def figure(svg: str, caption: str = "", name: str = "") -> str:
    attr = f" data-figure=\"{esc(name)}\"" if name else ""
    cap = f"<p class=\"caption\">{esc(caption)}</p>" if caption else ""
    return f"<div class=\"figure\"{attr}>{svg}{cap}</div>"


def fmt(v, digits: int = 4) -> str:
    """A number as a reader wants it: 2929.5, 141.2, 0.0521; '-' for none."""
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    a = abs(v)
    if a >= 1000:
        return f"{v:.1f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.{digits}g}"


def pct(x: float | None, signed: bool = True) -> str:
    if x is None:
        return "-"
    return f"{100 * x:+.1f}%" if signed else f"{100 * x:.1f}%"
