/* HTML a page's script shows in place of the page's own (diagrams/shown_html.py writes it):
 * an element names a script file (data-shown-html-src, relative to the page) that files an
 * object of HTML fragments under a name (data-shown-html) in window.residualShownHtml.
 * residualLoadShownHtml(element, ready) loads that file once, however many elements name it,
 * and calls ready(fragments) when it has; never if it does not load. A script and not a
 * fetched JSON file, so that a site read from the file system loads it too. */
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
})();
