"""Extra report sections: the built-in ones for trajectory and metric checks, and those other plugins add.

Plugins add sections by implementing the hook ``pytest_nlgeval_report_sections(results)`` (see
:mod:`pytest_nlgeval.hookspecs`). Inside pytest the hook is called through pytest's plugin manager, so
``conftest.py`` files and ``pytest11`` plugins both take part. Outside pytest (``nlgeval report``),
:func:`collect_sections` builds a pluggy plugin manager with the project's hook specifications, loads the
installed ``pytest11`` entry points (unless ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set) and any modules named
with ``-p MODULE``, and calls the same hook. A section may say ``"replaces": "<built-in id>"`` to take the
place of a built-in section (e.g. a richer trajectory plot replacing ``nlgeval-trajectories``).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from markupsafe import Markup, escape

from pytest_nlgeval.report.charts import line_chart, scale_chart
from pytest_nlgeval.report.view import CheckRow, ReportView

__all__ = [
    "Section",
    "builtin_sections",
    "collect_sections",
    "normalise_sections",
    "render_details",
    "TRAJECTORY_SECTION",
    "METRIC_SECTION",
    "JUDGED_SECTION",
    "SAMPLES_SECTION",
]

TRAJECTORY_SECTION = "nlgeval-trajectories"
METRIC_SECTION = "nlgeval-metrics"
JUDGED_SECTION = "nlgeval-judged"
SAMPLES_SECTION = "nlgeval-samples"
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]*$")


@dataclass(frozen=True)
class Section:
    """One block of the report below the built-in tables: an anchor id, a title and self-contained HTML."""

    id: str
    title: str
    html: Markup
    replaces: str | None = None


def normalise_sections(returned: Iterable[Any], *, source: str = "pytest_nlgeval_report_sections") -> list[Section]:
    """Check what hook implementations returned (a list per implementation) and turn it into Sections.

    ``html`` given as a plain ``str`` is escaped (shown as text), never trusted: only ``markupsafe.Markup``
    is inserted as HTML.
    """
    sections: list[Section] = []
    for batch in returned:
        if batch is None:
            continue
        if isinstance(batch, Mapping):
            batch = [batch]
        for item in batch:
            if not isinstance(item, Mapping):
                raise TypeError(f"{source} returned {type(item).__name__}; expected a mapping with id, title, html")
            ident, title, html = item.get("id"), item.get("title"), item.get("html")
            if not isinstance(ident, str) or not _ID.match(ident):
                raise ValueError(
                    f"{source}: section id {ident!r} must be a string of letters, digits, '-', '_'"
                    " starting with a letter (it becomes the page anchor)"
                )
            if not isinstance(title, str) or not title:
                raise ValueError(f"{source}: section {ident!r} needs a non-empty string 'title'")
            if html is None:
                raise ValueError(f"{source}: section {ident!r} has no 'html'")
            markup = html if isinstance(html, Markup) else escape(str(html))
            replaces = item.get("replaces")
            sections.append(Section(ident, title, markup, replaces if isinstance(replaces, str) else None))
    seen: set[str] = set()
    for section in sections:
        if section.id in seen:
            raise ValueError(f"{source}: two sections have the id {section.id!r}; ids must be unique")
        seen.add(section.id)
    return sections


def _plugin_manager():
    """A pluggy manager that, like pytest's, takes unmarked ``pytest_nlgeval_*`` functions as hook impls."""
    import pluggy

    from pytest_nlgeval import hookspecs

    class SectionPluginManager(pluggy.PluginManager):
        def parse_hookimpl_opts(self, plugin, name):
            opts = super().parse_hookimpl_opts(plugin, name)
            if opts is None and name.startswith("pytest_nlgeval_") and callable(getattr(plugin, name, None)):
                return {}  # pluggy fills in the defaults (no tryfirst/trylast/wrapper)
            return opts

    manager = SectionPluginManager("pytest")  # the project name of pytest.hookspec, which hookspecs.py uses
    manager.add_hookspecs(hookspecs)
    return manager


def collect_sections(
    results: Mapping[str, Any],
    *,
    plugins: Sequence[str] = (),
    autoload: bool | None = None,
    hook: Callable[..., list] | None = None,
) -> list[Section]:
    """Call ``pytest_nlgeval_report_sections`` outside (or, with ``hook``, inside) pytest.

    ``plugins`` are importable module names (like pytest's ``-p``); ``autoload`` defaults to loading the
    ``pytest11`` entry points unless ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set. A plugin that fails to import
    is skipped with a warning naming it, so one broken plugin does not cost the whole report.

    >>> sections = collect_sections(results, plugins=["my_sections"])  # doctest: +SKIP
    """
    if hook is not None:
        return normalise_sections(hook(results=results))
    manager = _plugin_manager()
    if autoload is None:
        autoload = not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    if autoload:
        from importlib.metadata import entry_points

        for entry in entry_points(group="pytest11"):
            if manager.get_plugin(entry.name) is not None:
                continue
            try:
                module = entry.load()
            except Exception as exc:  # a broken third-party plugin must not cost the report
                warnings.warn(
                    f"report sections: skipping pytest plugin {entry.name!r} ({entry.value}): {exc}", stacklevel=2
                )
                continue
            if manager.is_registered(module):
                continue
            manager.register(module, name=entry.name)
    for name in plugins:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ImportError(f"cannot import report plugin module {name!r}: {exc}; is it on PYTHONPATH?") from exc
        if not manager.is_registered(module):
            manager.register(module, name=name)
    return normalise_sections(manager.hook.pytest_nlgeval_report_sections(results=results))


# ---- generic rendering of ``details`` ---------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_series(value: Any) -> bool:
    # three points at least: a pair of numbers is a range or a scale ([1, 5]), not a line
    return isinstance(value, list) and len(value) >= 3 and all(_is_number(v) for v in value)


def _scalar(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def render_details(details: Mapping[str, Any], *, skip: Sequence[str] = (), depth: int = 0) -> Markup:
    """Any ``details`` mapping as HTML: scalars as a definition list, tables for lists of objects, charts
    for numeric series, and indented JSON for the rest. Everything is escaped.
    """
    parts = ['<dl class="details">']
    for key in sorted(k for k in details if k not in skip):
        value = details[key]
        parts.append(f"<dt>{escape(key)}</dt><dd>")
        if _is_series(value):
            parts.append(line_chart([(str(key), [float(v) for v in value])], title=str(key), width=420, height=130))
        elif isinstance(value, Mapping) and value and depth < 2:
            parts.append(render_details(value, depth=depth + 1))
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value) and len(value) <= 200:
            columns = sorted({c for row in value for c in row})
            parts.append(
                '<table class="inner"><thead><tr>'
                + "".join(f"<th>{escape(c)}</th>" for c in columns)
                + "</tr></thead><tbody>"
            )
            for row in value:
                parts.append("<tr>" + "".join(f"<td>{escape(_scalar(row.get(c, '')))}</td>" for c in columns) + "</tr>")
            parts.append("</tbody></table>")
        elif isinstance(value, (str, int, float, bool)) or value is None:
            text = _scalar(value)
            if len(text) > 600:
                parts.append(
                    f'<details class="long"><summary>{escape(text[:200])}… ({len(text)} characters)'
                    f'</summary><pre class="text">{escape(text)}</pre></details>'
                )
            else:
                parts.append(f'<span class="value">{escape(text)}</span>')
        else:
            parts.append(
                '<pre class="json">'
                f"{escape(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str))}"
                "</pre>"
            )
        parts.append("</dd>")
    parts.append("</dl>")
    return Markup("".join(parts))


# ---- built-in sections ------------------------------------------------------------------------------------

_LOW = ("low", "lo", "lower", "min", "p05", "p5", "q05")
_HIGH = ("high", "hi", "upper", "max", "p95", "q95")
_MIDDLE = ("median", "mid", "p50", "q50")


def _series_in(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], list[float]]]:
    found: list[tuple[tuple[str, ...], list[float]]] = []
    if _is_series(value):
        found.append((path, [float(v) for v in value]))
    elif isinstance(value, Mapping) and len(path) < 4:
        for key in sorted(value, key=str):
            found.extend(_series_in(value[key], path + (str(key),)))
    return found


def trajectory_charts(details: Mapping[str, Any]) -> list[Markup]:
    """One line chart per signal found in a trajectory check's details.

    A numeric list is a series; two sibling lists named low/high (lo/hi, lower/upper, p05/p95) form a band
    and are drawn behind the series of the same signal (the name of the mapping that holds them).
    """
    signals: dict[str, dict[str, Any]] = {}
    series = _series_in({k: v for k, v in details.items() if k != "inputs"})
    bands: dict[tuple[str, ...], dict[str, list[float]]] = {}
    for path, values in series:
        last = path[-1].lower() if path else ""
        if last in _LOW or last in _HIGH:
            bands.setdefault(path[:-1], {})["low" if last in _LOW else "high"] = values
        elif last in _MIDDLE and len(path) >= 2:
            # a band's median is a reference line of the band's signal, not a signal of its own
            signals.setdefault(path[-2], {"series": [], "band": None})["series"].append((f"reference {last}", values))
        else:
            signal = path[-1] if path else "series"
            label = "/".join(p for p in path[:-1] if p not in ("trajectory", "trajectories", "signals")) or signal
            signals.setdefault(signal, {"series": [], "band": None})["series"].append(
                (label if label != signal else signal, values)
            )
    for path, band in bands.items():
        if "low" not in band or "high" not in band:
            continue
        signal = next((p for p in reversed(path) if p in signals), path[-1] if path else "band")
        signals.setdefault(signal, {"series": [], "band": None})["band"] = (band["low"], band["high"])
    charts = []
    for signal in sorted(signals):
        spec = signals[signal]
        charts.append(
            line_chart(
                spec["series"],
                band=spec["band"],
                band_label=f"{signal}: reference band",
                title=signal,
                x_label="prefix length (tokens)",
            )
        )
    return charts


def _judged_distribution(details: Mapping[str, Any], score: float | None) -> str:
    """The judge's probability over its scale as bars (the mean over samples that were read from a
    distribution); empty for a judge that only wrote its answer."""
    scale = details.get("scale")
    if not (isinstance(scale, list) and len(scale) == 2 and all(isinstance(v, int) for v in scale)):
        return ""
    if not 1 <= scale[1] - scale[0] <= 20:
        return ""
    read = [
        s["distribution"]
        for s in details.get("samples") or []
        if isinstance(s, Mapping) and isinstance(s.get("distribution"), Mapping)
    ]
    if not read:
        return ""
    mean: dict[str, float] = {}
    for distribution in read:
        for point, p in distribution.items():
            if _is_number(p):
                mean[str(point)] = mean.get(str(point), 0.0) + float(p) / len(read)
    title = f"the judge's probability over {scale[0]}-{scale[1]}" + (
        f" (mean of {len(read)} samples)" if len(read) > 1 else ""
    )
    return str(scale_chart(mean, (scale[0], scale[1]), score=score, title=title))


def _card_class(row: CheckRow) -> str:
    """The CSS class of a check's card and badge: ``pass``, ``fail`` (a failed check, or a strict xfail test's
    check that passed), ``xfailed`` or ``xpassed`` (neutral: not counted as failures)."""
    return {"failed": "fail", "xpassed-strict": "fail", "xfailed": "xfailed", "xpassed": "xpassed"}.get(
        row.status, "pass"
    )


def _threshold(row: CheckRow) -> str:
    """``operator threshold`` with the threshold at most four decimals; the raw value when it is no number."""
    threshold = row.check.get("threshold")
    if threshold is None or row.threshold is not None:
        return row.threshold_text
    return f"{row.check.get('operator') or ''} {_scalar(threshold)}".strip()


def builtin_sections(view: ReportView) -> list[Section]:
    """Sections for trajectory checks (plots of their signals) and metric checks (their details as cards)."""
    sections = []
    trajectories = view.rows_of_kind("trajectory")
    if trajectories:
        parts = []
        for row in trajectories:
            status = _card_class(row)
            score = "n/a" if row.score is None else f"{row.score:.4f}"
            parts.append(
                f'<div class="card {status}"><h3>{escape(row.check["nodeid"])} · {escape(row.check["name"])}'
                f' <span class="badge {status}">{escape(row.status)}</span></h3>'
                f'<p class="muted">score {escape(score)} {escape(_threshold(row))}</p>'
            )
            charts = trajectory_charts(row.details)
            parts.extend(str(c) for c in charts)
            rest = {k: v for k, v in row.details.items() if not _series_in(v) and k != "inputs"}
            if rest:
                parts.append(str(render_details(rest)))
            parts.append("</div>")
        sections.append(Section(TRAJECTORY_SECTION, "Trajectories", Markup("".join(parts))))
    metrics = view.rows_of_kind("metric")
    if metrics:
        parts, seen = [], set()
        for row in metrics:
            name = row.check["name"]
            if name in seen:
                continue  # one card per metric: the card describes the metric, not the case
            seen.add(name)
            same = [r for r in metrics if r.check["name"] == name]
            passed = sum(1 for r in same if r.passed)
            parts.append(
                f'<div class="card"><h3>{escape(name)}</h3><p class="muted">{len(same)} checks, '
                f"{passed} passed</p>{render_details(row.details, skip=('inputs',))}</div>"
            )
        sections.append(Section(METRIC_SECTION, "Induced metrics", Markup("".join(parts))))
    judged = view.rows_of_kind("judged")
    if judged:
        parts = []
        for row in judged:
            d, status = row.details, _card_class(row)
            score = "n/a" if row.score is None else f"{row.score:.3f}"
            scale = d.get("scale") or ["?", "?"]
            samples = d.get("samples") or []
            spread = f", spread {d['spread']:.3f} over {len(samples)} samples" if len(samples) > 1 else ""
            parts.append(
                f'<div class="card {status}"><h3>{escape(row.check["nodeid"])} · {escape(row.check["name"])} '
                f'<span class="badge {status}">{escape(row.status)}</span></h3>'
                f'<p class="muted">score {escape(score)} on {escape(_scalar(scale[0]))}-{escape(_scalar(scale[-1]))} '
                f'({escape(str(d.get("method", "")))}{escape(spread)}) {escape(_threshold(row))} '
                f'· judge {escape(str(d.get("model", "")))}</p>'
                f'<p><b>Criterion:</b> {escape(str(d.get("criterion", "")))}</p>'
                f'<p><b>Rationale:</b> {escape(str(d.get("rationale") or "(none given)"))}</p>'
                f"{_judged_distribution(d, row.score)}"
                f'{render_details(d, skip=("criterion", "rationale", "model", "method", "scale", "spread"))}</div>'
            )
        sections.append(Section(JUDGED_SECTION, "Judged checks", Markup("".join(parts))))
    sampled = [row for row in view.rows if isinstance(row.details.get("samples"), Mapping)]
    if sampled:
        head = (
            "<table><thead><tr><th>check</th><th>samples of</th><th>n</th><th>distinct outputs</th>"
            "<th>min</th><th>mean</th><th>max</th><th>sd</th><th>result</th></tr></thead><tbody>"
        )
        body = []
        for row in sampled:
            sp = row.details["samples"]

            def num(key, sp=sp):
                value = sp.get(key)
                return "-" if not isinstance(value, (int, float)) else f"{value:.3f}"

            body.append(
                f"<tr><td>{escape(row.check['nodeid'])} · {escape(row.check['name'])}</td>"
                f"<td>{escape(str(sp.get('of', '')))}</td><td>{escape(_scalar(sp.get('n')))}</td>"
                f"<td>{escape(_scalar(sp.get('distinct')))}</td><td>{num('min')}</td><td>{num('mean')}</td>"
                f"<td>{num('max')}</td><td>{num('sd')}</td><td>{escape(row.status)}</td></tr>"
            )
        sections.append(Section(SAMPLES_SECTION, "Repeated samples", Markup(head + "".join(body) + "</tbody></table>")))
    return sections
