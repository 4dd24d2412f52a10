"""The report's pages as HTML, one module per page: ``overview`` (index.html: what needs attention, then the
overview), ``players`` (players.html and every player-<id>.html), ``quality``, ``audit``, ``collusion``,
``information`` and ``deals``; and ``replay``, one hand's replay as a page of its own (``xuezhan replay --html``,
the dispute and case packs), outside the report.

Each page has two homes, kept apart on purpose: its data in :mod:`dashboards` (``dashboards/<page>.py``: the
``prep_*`` frames, tested against hand-counted warehouses, and the charts), its HTML here
(``dashboards/pages/<page>.py``). A page module runs no query and draws no chart: its ``body(...)`` is a function
of the page's values (a screen's result, the prepared frames, the charts :mod:`dashboards.site` drew) that returns
the page's body, section by section, written with the one HTML layer of :mod:`dashboards.html` (escaping, links,
cells, tables, figures, the page shell). So every page's markup is in one package, on one layer, and
:mod:`dashboards.site` only opens the warehouse, runs each screen once and writes the pages.
"""
