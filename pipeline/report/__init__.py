"""Chart helpers for HTML reports (``charts``): fonts, labels, formats, figure → PNG. A library: the dashboards
and the site that assembles them (:mod:`dashboards.site`) use it; it knows nothing of them."""
