/* The gradients lab's explorer (diagrams/explorer.py renders it).
 * The page shows the chapter's cell of the trace's grid; every cell, as the HTML of its
 * traced spans, is published in a script file the explorer names (data-shown-html-src,
 * loaded by shown-html.js). Every factor's curves are drawn already. This script loads the
 * file once, then only chooses: the sliders' positions name a cell and a depth, it puts that
 * cell's HTML in place of the shown one, copies the text it announces and writes beside each
 * slider from that cell, and moves the depth's mark on the curves to a position the drawing
 * lists for that depth. It does no arithmetic on any value. New spans are handed to the
 * provenance script by a "residual:content" event. The controls stay hidden until the cells
 * have loaded, so a reader whose file does not load keeps the page's own cell and table.
 * Material's instant navigation swaps pages without reloading, so it subscribes to document$,
 * which fires on every page. */
(function () {
  "use strict";

  function pick(root, selector) {
    return root.querySelector(selector);
  }

  function setUp(root) {
    if (root.hasAttribute("data-gf-ready")) return;
    var depth = pick(root, "input[name=depth]");
    var factor = pick(root, "input[name=factor]");
    var live = pick(root, ".gf-explorer__live");
    var place = pick(root, ".gf-explorer__cells");
    if (!depth || !factor || !live || !place) return;
    root.setAttribute("data-gf-ready", "loading");
    window.residualLoadShownHtml(root, function (shownHtml) {
      start(root, depth, factor, live, place, shownHtml);
    });
  }

  function start(root, depth, factor, live, place, shownHtml) {
    if (!document.contains(root)) return;  // the reader has moved on to another page
    root.setAttribute("data-gf-ready", "true");
    depth.value = depth.getAttribute("data-default");
    factor.value = factor.getAttribute("data-default");

    function show(announce) {
      var cellHtml = shownHtml.cells[factor.value + "-" + depth.value];
      var countsHtml = shownHtml.counts[depth.value];
      if (cellHtml === undefined || countsHtml === undefined) return;
      place.innerHTML = cellHtml + countsHtml;
      place.dispatchEvent(new CustomEvent("residual:content", { bubbles: true }));
      var cell = pick(place, ".gf-cell");
      var spans = cell.querySelectorAll(".gf-cell__summary .tv");
      factor.setAttribute("aria-valuetext", spans[0].textContent);
      depth.setAttribute("aria-valuetext", spans[1].textContent);
      pick(root, "output[for=gf-explorer-factor]").textContent = spans[0].textContent;
      pick(root, "output[for=gf-explorer-depth]").textContent = spans[1].textContent;
      root.querySelectorAll("svg.gf-curves").forEach(function (curves) {
        var chosen = curves.getAttribute("data-factor-index") === factor.value;
        curves.toggleAttribute("hidden", !chosen);
        if (chosen) {
          var x = JSON.parse(curves.getAttribute("data-x"))[depth.value];
          var mark = pick(curves, ".gf-curves__mark");
          mark.setAttribute("x1", x);
          mark.setAttribute("x2", x);
        }
      });
      if (announce) {
        live.textContent = pick(cell, ".gf-cell__summary").textContent;
      }
    }

    depth.addEventListener("input", function () { show(true); });
    factor.addEventListener("input", function () { show(true); });
    show(false);
    pick(root, ".gf-explorer__controls").hidden = false;
  }

  function setUpAll() {
    document.querySelectorAll("[data-gf-explorer]").forEach(setUp);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(setUpAll);
  } else {
    document.addEventListener("DOMContentLoaded", setUpAll);
  }
})();
