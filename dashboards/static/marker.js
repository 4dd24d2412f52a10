(function () {
  function mark() {
    var imgs = document.images, ok = 0;
    for (var i = 0; i < imgs.length; i++) {
      var loaded = imgs[i].complete && imgs[i].naturalWidth > 0;
      imgs[i].setAttribute("data-loaded", loaded ? "true" : "false");
      if (loaded) { ok++; }
    }
    document.body.setAttribute("data-images", ok + "/" + imgs.length);
    var root = document.documentElement;
    document.body.setAttribute("data-overflow", String(Math.max(0, root.scrollWidth - root.clientWidth)));
    document.body.setAttribute("data-broken", broken().join("|"));
  }
  // the words of the tables' cells (letters only) that the layout splits over two lines
  function broken() {
    var out = [], cells = document.querySelectorAll("td, th");
    for (var i = 0; i < cells.length; i++) {
      var walk = document.createTreeWalker(cells[i], NodeFilter.SHOW_TEXT), node;
      while ((node = walk.nextNode())) {
        var re = /[A-Za-z]{2,}/g, m;
        while ((m = re.exec(node.data))) {
          var r = document.createRange();
          r.setStart(node, m.index);
          r.setEnd(node, m.index + m[0].length);
          var lines = {}, rects = r.getClientRects(), n = 0;
          for (var k = 0; k < rects.length; k++) {
            var top = Math.round(rects[k].top);
            if (rects[k].width > 0 && !lines[top]) { lines[top] = 1; n++; }
          }
          if (n > 1) { out.push(m[0]); }
        }
      }
    }
    return out;
  }
  if (document.readyState === "complete") { mark(); } else { window.addEventListener("load", mark); }
})();
