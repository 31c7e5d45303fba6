/* Render the math that pymdownx.arithmatex (generic mode) leaves in the page with the
 * vendored KaTeX. Material's instant navigation swaps page content without reloading,
 * so rendering subscribes to its document$ observable, which fires on every page.
 * A formula KaTeX cannot parse is shown as its source and reported on the console,
 * where the browser tests look for errors. */
(function () {
  "use strict";

  function renderMath(root) {
    root.querySelectorAll(".arithmatex").forEach(function (el) {
      if (el.querySelector(".katex")) return;
      var source = el.textContent.trim();
      var display = el.tagName === "DIV";
      // arithmatex wraps inline math in \( \) and display math in \[ \]
      var tex = source.replace(/^\\[([]/, "").replace(/\\[)\]]$/, "");
      // Assistive tech reads the MathML copy, but table-header checks only count text
      // they can see in the HTML, so a header holding only math gets readable HTML instead.
      var inHeader = el.closest("th") !== null;
      try {
        katex.render(tex, el, {
          displayMode: display,
          throwOnError: true,
          output: inHeader ? "html" : "htmlAndMathml"
        });
        if (inHeader) {
          el.querySelectorAll(".katex-html").forEach(function (html) {
            html.removeAttribute("aria-hidden");
          });
        }
      } catch (err) {
        el.classList.add("math-error");
        console.error("KaTeX could not render " + JSON.stringify(tex) + ": " + err.message);
      }
    });
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { renderMath(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { renderMath(document); });
  }
})();
