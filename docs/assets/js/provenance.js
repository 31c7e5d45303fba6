/* Provenance on tap and keyboard focus, and citation previews. Every traced number is a `.tv`
 * element whose data-trace names its trace record, and whose data-exact holds the stored value
 * when the element shows it rounded (else its text is the stored value). This makes each one
 * focusable and shows "record = stored value" in a small popover when it is hovered, tapped,
 * clicked or focused (or Enter is pressed on it); Escape, a tap elsewhere or
 * moving focus away closes it. A citation (`.citation-ref`, a link to the page's References)
 * or a reference to a figure, table or equation (`.element-ref`) shows its entry or the
 * element's caption in the same popover on hover and focus; a first tap shows it, a second
 * follows the link. The text is the element's own attributes or text, or the caption's
 * text: nothing is computed here. */
(function () {
  "use strict";

  var popover = null;
  var current = null;

  function ensurePopover() {
    if (popover && document.body.contains(popover)) return popover;
    popover = document.createElement("div");
    popover.id = "tv-popover";
    popover.className = "tv-popover";
    popover.setAttribute("role", "tooltip");
    popover.hidden = true;
    document.body.appendChild(popover);
    return popover;
  }

  function show(el) {
    var box = ensurePopover();
    var text = el.getAttribute("data-provenance") || el.getAttribute("data-preview") ||
      captionOf(el);
    if (!text) return;
    if (current && current !== el) current.removeAttribute("aria-describedby");
    current = el;
    box.textContent = text;
    box.hidden = false;
    el.setAttribute("aria-describedby", box.id);
    var rect = el.getBoundingClientRect();
    var left = Math.max(8, Math.min(rect.left + window.scrollX,
                                    window.scrollX + document.documentElement.clientWidth
                                    - box.offsetWidth - 8));
    box.style.left = left + "px";
    box.style.top = (rect.bottom + window.scrollY + 6) + "px";
  }

  // A reference to a figure, table or equation previews what the page captions it with.
  function captionOf(el) {
    var target = el.hash && document.getElementById(el.hash.slice(1));
    var caption = target && (target.matches(".table-caption") ? target
      : target.querySelector("figcaption, caption, .element-number"));
    return caption ? caption.textContent.replace(/\s+/g, " ").trim() : "";
  }

  function hide() {
    if (popover) popover.hidden = true;
    if (current) current.removeAttribute("aria-describedby");
    current = null;
  }

  function enhance(root) {
    root.querySelectorAll(".md-typeset .tv").forEach(function (el) {
      if (el.hasAttribute("data-provenance")) return;
      var stored = el.hasAttribute("data-exact") ? el.getAttribute("data-exact")
        : el.textContent;
      el.setAttribute("data-provenance", el.getAttribute("data-trace") + " = " + stored);
      el.setAttribute("tabindex", "0");
      el.addEventListener("mouseenter", function () { show(el); });
      el.addEventListener("mouseleave", function () { if (current === el) hide(); });
      el.addEventListener("focus", function () { show(el); });
      el.addEventListener("blur", function () { if (current === el) hide(); });
      el.addEventListener("click", function (event) { event.stopPropagation(); show(el); });
      el.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); show(el); }
      });
    });
  }

  function enhancePreviews(root) {
    root.querySelectorAll(".md-typeset .citation-ref, .md-typeset .element-ref")
        .forEach(function (el) {
      if (el.hasAttribute("data-previewed")) return;
      el.setAttribute("data-previewed", "");
      // A tap focuses the link before its click: whether the preview was open is read
      // at the touch itself.
      var firstTap = false;
      el.addEventListener("pointerdown", function (event) {
        firstTap = event.pointerType === "touch" && current !== el;
      });
      el.addEventListener("mouseenter", function () { show(el); });
      el.addEventListener("mouseleave", function () { if (current === el) hide(); });
      el.addEventListener("focus", function () { show(el); });
      el.addEventListener("blur", function () { if (current === el) hide(); });
      el.addEventListener("click", function (event) {
        event.stopPropagation();
        if (firstTap) { event.preventDefault(); show(el); }
        firstTap = false;
      });
    });
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") hide();
  });
  document.addEventListener("click", function () { hide(); });
  // Another script that puts traced spans on the page (the explorer) says so.
  document.addEventListener("residual:content", function (event) { enhance(event.target); });

  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { hide(); enhance(document); enhancePreviews(document); });
  } else {
    document.addEventListener("DOMContentLoaded", function () {
      enhance(document);
      enhancePreviews(document);
    });
  }
})();
