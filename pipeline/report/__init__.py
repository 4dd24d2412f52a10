"""Helpers for HTML reports: ``charts`` (fonts, labels, figure → PNG), ``numbers`` (numbers as labels, without
matplotlib), ``svg`` (small inline figures), ``names`` (file names from ids), ``staging`` (a folder written whole).
A library: the dashboards and the site that assembles them (:mod:`dashboards.site`) use it; it knows nothing of them."""
