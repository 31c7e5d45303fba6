/* HTML a page's script shows in place of the page's own (diagrams/shown_html.py writes it):
 * an element names a script file (data-shown-html-src, relative to the page) that files an
 * object of HTML fragments under a name (data-shown-html) in window.residualShownHtml.
 * residualLoadShownHtml(element, ready) loads that file once, however many elements name it,
 * and calls ready(fragments) when it has; never if it does not load. A script and not a
 * fetched JSON file, so that a site read from the file system loads it too. A fold that names
 * one fragment (data-shown-html-fragment="GROUP/KEY") gets it in place of its
 * .shown-html__place when it first opens, and the provenance script is told of the new
 * values ("residual:content"); until then the place says where else to read it. */
(function () {
  "use strict";

  var waiting = {};  // file address → the callbacks waiting for it

  window.residualLoadShownHtml = function (element, ready) {
    var name = element.getAttribute("data-shown-html");
    var shown = window.residualShownHtml || {};
    if (shown[name]) { ready(shown[name]); return; }
    var script = document.createElement("script");
    script.src = element.getAttribute("data-shown-html-src");
    if (waiting[script.src]) { waiting[script.src].push([name, ready]); return; }
    waiting[script.src] = [[name, ready]];
    script.addEventListener("load", function () {
      var callbacks = waiting[script.src];
      delete waiting[script.src];
      callbacks.forEach(function (call) {
        var fragments = (window.residualShownHtml || {})[call[0]];
        if (fragments) call[1](fragments);
      });
    });
    script.addEventListener("error", function () { delete waiting[script.src]; });
    document.head.appendChild(script);
  };

  function fill(fold) {
    if (!fold.open || fold.hasAttribute("data-filled")) return;
    var place = fold.querySelector(".shown-html__place");
    var which = (fold.getAttribute("data-shown-html-fragment") || "").split("/");
    if (!place || which.length !== 2) return;
    window.residualLoadShownHtml(fold, function (fragments) {
      var html = fragments[which[0]] && fragments[which[0]][which[1]];
      if (html === undefined || fold.hasAttribute("data-filled")) return;
      place.outerHTML = html;
      fold.setAttribute("data-filled", "");
      fold.dispatchEvent(new CustomEvent("residual:content", { bubbles: true }));
    });
  }

  function fillOpen() {
    document.querySelectorAll("details[data-shown-html-fragment]").forEach(fill);
  }

  // A fold's toggle does not bubble; it is seen on its way down.
  document.addEventListener("toggle", function (event) {
    if (event.target.matches && event.target.matches("details[data-shown-html-fragment]")) {
      fill(event.target);
    }
  }, true);
  if (typeof document$ !== "undefined") {
    document$.subscribe(fillOpen);
  } else {
    document.addEventListener("DOMContentLoaded", fillOpen);
  }
})();
