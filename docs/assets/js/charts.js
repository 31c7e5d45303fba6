/* The labs' charts. A page holds each chart's phone-width drawing; on a screen as wide as
 * Material's tablet layout or wider, this puts the chart's wide drawing in its place, from
 * the script file the figure names (shown-html.js), and puts the phone-width one back if the
 * screen narrows again. A chart's fold of plotted values is filled, when it first opens, with
 * the chart's table of traced values from the file the fold names; the provenance script is
 * told of the new values ("residual:content"). Drawings and tables are the build's own
 * (diagrams/plots.py, diagrams/charts.py): nothing is drawn or computed here. Without
 * JavaScript every screen shows the phone-width drawing and the fold links to the raw trace.
 * Material's instant navigation swaps pages without reloading, so it subscribes to document$. */
(function () {
  "use strict";

  var wide = window.matchMedia("(min-width: 45em)");
  var narrowHtml = new WeakMap();  // a chart's drawing place → its phone-width HTML

  function draw(figure) {
    var place = figure.querySelector(".chart-drawing");
    if (!place) return;
    if (!narrowHtml.has(place)) narrowHtml.set(place, place.innerHTML);
    if (!wide.matches) {
      if (place.getAttribute("data-drawn") === "wide") {
        place.innerHTML = narrowHtml.get(place);
        place.removeAttribute("data-drawn");
      }
      return;
    }
    window.residualLoadShownHtml(figure, function (fragments) {
      var html = fragments.wide && fragments.wide[figure.id];
      if (html === undefined || !wide.matches || !document.contains(place)) return;
      place.innerHTML = html;
      place.setAttribute("data-drawn", "wide");
    });
  }

  function fill(details) {
    if (!details.open || details.hasAttribute("data-filled")) return;
    var figure = details.closest("figure.residual-chart");
    var place = details.querySelector(".md-typeset__table");
    if (!figure || !place) return;
    window.residualLoadShownHtml(details, function (fragments) {
      var html = fragments.values && fragments.values[figure.id];
      if (html === undefined || details.hasAttribute("data-filled")) return;
      place.innerHTML = html;
      details.setAttribute("data-filled", "");
      place.dispatchEvent(new CustomEvent("residual:content", { bubbles: true }));
    });
  }

  function drawAll() {
    document.querySelectorAll("figure.residual-chart[data-shown-html]").forEach(draw);
    document.querySelectorAll("details.chart-values[data-shown-html]").forEach(fill);
  }

  wide.addEventListener("change", drawAll);
  // A fold's toggle does not bubble; it is seen on its way down.
  document.addEventListener("toggle", function (event) {
    if (event.target.matches && event.target.matches("details.chart-values")) {
      fill(event.target);
    }
  }, true);
  if (typeof document$ !== "undefined") {
    document$.subscribe(drawAll);
  } else {
    document.addEventListener("DOMContentLoaded", drawAll);
  }
})();
