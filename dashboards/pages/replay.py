"""One hand's replay as a page of its own (``xuezhan replay --html``, and the page of each dispute pack): the text
of :func:`pipeline.audit.replay.replay_text`, each line of an issue or of a payment coloured by its mark, then the
hand's session findings. Not a page of the report: no navigation and its own stylesheet
(``dashboards/static/replay.css``), written with the report's HTML layer (:func:`dashboards.html.esc`). It draws no
chart, and nothing it imports loads matplotlib: ``replay --html`` stays as light as the text replay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dashboards.html import esc, static_text
from pipeline.audit.replay import Engine, replay_text, session_line
from pipeline.text import printable
from pipeline.validate import Validation

STYLE = "\n" + static_text("replay.css")
# a replay line's mark (its first character after the indent) → its class in STYLE; "»!" is "worse"
LINE_CLASS = {"!": "error", "?": "warning", "+": "missing", "-": "extra", "=": "same", "»": "review"}
REVIEW_KEY = (
    '<span class="review">» a decision, ranked among the options</span>'
    '<span class="worse">»! a clearly better option was there</span>'
)


def replay_html(
    record: Mapping[str, Any],
    validation: Validation,
    session: Sequence[tuple[str, str, str]] = (),
    *,
    review: bool = False,
    yardstick: Engine | None = None,
) -> str:
    """The replay as a page of its own: the same text (:func:`pipeline.audit.replay.replay_text`, with its
    ``review`` and ``yardstick``), each line of an issue, a payment or a reviewed decision marked by its kind, then
    the hand's ``session`` findings (code, severity, message: the checks across the hands of its session, from a
    warehouse). Every string of the record is escaped."""
    lines = []
    for line in replay_text(record, validation, review=review, yardstick=yardstick).split("\n"):
        kind = LINE_CLASS.get(line.lstrip()[:1]) if line.startswith(" ") else None
        if kind == "review" and line.lstrip().startswith("»!"):
            kind = "worse"
        text = esc(line)
        lines.append(f'<span class="{kind}">{text}</span>' if kind else text)
    for code, severity, message in session:
        kind = "error" if severity == "error" else "warning"
        lines.append(f'<span class="{kind}">{esc(session_line(code, severity, message))}</span>')
    title = esc(printable(validation.hand_id or record.get("hand_id")))
    errors = sum(i.severity == "error" for i in validation.issues) + sum(s == "error" for _, s, _ in session)
    return (
        f'<!doctype html>\n<html lang="zh"><head><meta charset="utf-8"><title>hand {title} · xuezhan</title>'
        f"<style>{STYLE}</style></head>\n"
        f'<body data-errors="{errors}"><h1>hand {title}</h1>\n'
        '<p class="key"><span class="error">! error</span><span class="warning">? warning</span>'
        '<span class="same">= claimed as computed</span><span class="missing">+ computed, not claimed</span>'
        '<span class="extra">- claimed, not computed</span>' + (REVIEW_KEY if review else "") + "</p>\n"
        f"<pre>{chr(10).join(lines)}</pre>\n</body></html>\n"
    )
