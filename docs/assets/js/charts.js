/* The labs' charts. A page holds each chart's phone-width drawing; on a screen as wide as
 * Material's tablet layout or wider, this puts the chart's wide drawing in its place, from
 * the script file the figure names (shown-html.js), and puts the phone-width one back if the
 * screen narrows again (a chart's fold of plotted values is filled by shown-html.js). Both
 * drawings are the build's own (diagrams/plots.py): nothing is drawn here. Without
 * JavaScript every screen shows the phone-width drawing.
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

  function drawAll() {
    document.querySelectorAll("figure.residual-chart[data-shown-html]").forEach(draw);
  }

  wide.addEventListener("change", drawAll);
  if (typeof document$ !== "undefined") {
    document$.subscribe(drawAll);
  } else {
    document.addEventListener("DOMContentLoaded", drawAll);
  }
})();
