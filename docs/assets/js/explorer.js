/* The gradients lab's explorer (diagrams/explorer.py renders it).
 * Every value it shows is already in the page as a traced span, one section per cell of the
 * trace's grid, and every factor's curves are drawn already; this script only chooses which
 * section and which drawing are visible. It does no arithmetic on any value: the sliders'
 * positions select a section by its data attributes, the text it announces and writes beside
 * each slider is copied from that section, and the depth's mark on the curves moves to a
 * position the drawing lists for that depth. Material's instant navigation swaps pages without
 * reloading, so it subscribes to document$, which fires on every page. */
(function () {
  "use strict";

  function pick(root, selector) {
    return root.querySelector(selector);
  }

  function setUp(root) {
    if (root.getAttribute("data-gf-ready") === "true") return;
    var depth = pick(root, "input[name=depth]");
    var factor = pick(root, "input[name=factor]");
    var live = pick(root, ".gf-explorer__live");
    if (!depth || !factor || !live) return;
    root.setAttribute("data-gf-ready", "true");
    depth.value = depth.getAttribute("data-default");
    factor.value = factor.getAttribute("data-default");

    function show(announce) {
      var cell = pick(root, '.gf-cell[data-factor-index="' + factor.value +
        '"][data-depth="' + depth.value + '"]');
      var counts = pick(root, '.gf-counts[data-depth="' + depth.value + '"]');
      if (!cell || !counts) return;
      root.querySelectorAll(".gf-cell:not([hidden]), .gf-counts:not([hidden])")
        .forEach(function (shown) {
          if (shown !== cell && shown !== counts) shown.hidden = true;
        });
      cell.hidden = false;
      counts.hidden = false;
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
