"""HTML reports over a warehouse: chart helpers (``charts``) and page assembly (``build``)."""
