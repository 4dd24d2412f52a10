(function () {
  function key(cell) {
    var v = cell.getAttribute("data-v");
    return v === null ? cell.textContent.trim() : v;
  }
  function sortBy(table, col, th) {
    var numeric = th.getAttribute("data-sort") === "num";
    var was = th.getAttribute("aria-sort");
    var dir = was ? (was === "descending" ? 1 : -1) : (numeric ? -1 : 1);
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", dir < 0 ? "descending" : "ascending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      if (x === "" || y === "") { return x === y ? 0 : (x === "" ? 1 : -1); }
      if (numeric) { return (parseFloat(x) - parseFloat(y)) * dir; }
      return x.localeCompare(y) * dir;
    });
    for (var r = 0; r < rows.length; r++) { body.appendChild(rows[r]); }
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () { sortBy(table, col, th); });
    });
  });
  var filter = document.getElementById("filter");
  if (filter) {
    filter.addEventListener("input", function () {
      var text = filter.value.toLowerCase();
      var rows = document.querySelectorAll("table.directory tbody tr");
      Array.prototype.forEach.call(rows, function (row) {
        row.style.display = key(row.cells[0]).toLowerCase().indexOf(text) >= 0 ? "" : "none";
      });
    });
  }
})();
