/* Provenance on tap and keyboard focus, and citation previews. Every traced number is a `.tv`
 * element whose data-trace names its trace record, whose data-what says in words what it is
 * (written by the build from the trace's schema), and whose data-exact holds the stored value
 * when the element shows it rounded (else its text is the stored value). This makes each one
 * focusable and shows those words above "record = stored value" in a small popover when it is
 * hovered, tapped,
 * clicked or focused (or Enter is pressed on it); Escape, a tap elsewhere or
 * moving focus away closes it. The keyboard reaches the numbers of one paragraph, list item,
 * table or figure (a group) with one Tab stop, and moves among them with the arrow keys,
 * Home and End (a roving tab index: the number last focused is the group's stop); a table's
 * links join its numbers, so passing a table is one Tab. A citation (`.citation-ref`, a link
 * to the page's References)
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
    box.textContent = "";
    var what = el.getAttribute("data-what");
    if (what) {
      var words = document.createElement("span");
      words.className = "tv-what";
      words.textContent = what;
      box.appendChild(words);
    }
    var source = document.createElement("span");
    source.className = what ? "tv-source" : "";
    source.textContent = text;
    box.appendChild(source);
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

  var GROUP = "table, figure, p, li, dd, dt, summary, h1, h2, h3, h4, h5, h6";
  // What a group's single Tab stop moves among: its traced numbers, and a table's links.
  var MEMBERS = ".md-typeset .tv, .md-typeset table a[href]";

  function groupOf(el) {
    return el.matches("table a[href]") ? el.closest("table")
      : el.closest(GROUP) || el.parentElement;
  }

  // The members of el's group, in reading order (not those of a group inside it).
  function members(el) {
    var group = groupOf(el);
    return Array.prototype.filter.call(group.querySelectorAll(MEMBERS), function (other) {
      return groupOf(other) === group;
    });
  }

  // el joins its group's roving tab index: the group's stop if it has none yet.
  function joinGroup(el, stops) {
    var group = groupOf(el);
    el.setAttribute("tabindex", stops.has(group) ? "-1" : "0");
    stops.add(group);
    el.addEventListener("focus", function () {
      members(el).forEach(function (other) {
        other.setAttribute("tabindex", other === el ? "0" : "-1");
      });
    });
  }

  // Focus moves to another number of the group, which becomes the group's Tab stop.
  function rove(el, event) {
    var all = members(el), at = all.indexOf(el);
    var to = {ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1, ArrowUp: at - 1,
              Home: 0, End: all.length - 1}[event.key];
    if (to === undefined || to < 0 || to >= all.length || to === at) return;
    event.preventDefault();
    all[to].focus();
  }

  function enhance(root) {
    var stops = new Set();  // the groups whose Tab stop is given
    root.querySelectorAll(".md-typeset .tv[tabindex], .md-typeset table a[data-roving]")
        .forEach(function (el) {
      if (el.getAttribute("tabindex") === "0") stops.add(groupOf(el));
    });
    root.querySelectorAll(".md-typeset .tv").forEach(function (el) {
      if (el.hasAttribute("data-provenance")) return;
      var stored = el.hasAttribute("data-exact") ? el.getAttribute("data-exact")
        : el.textContent;
      el.setAttribute("data-provenance", el.getAttribute("data-trace") + " = " + stored);
      joinGroup(el, stops);
      el.addEventListener("mouseenter", function () { show(el); });
      el.addEventListener("mouseleave", function () { if (current === el) hide(); });
      el.addEventListener("focus", function () { show(el); });
      el.addEventListener("blur", function () { if (current === el) hide(); });
      el.addEventListener("click", function (event) { event.stopPropagation(); show(el); });
      el.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); show(el); }
        else rove(el, event);
      });
    });
    root.querySelectorAll(".md-typeset table a[href]").forEach(function (el) {
      if (el.hasAttribute("data-roving")) return;
      el.setAttribute("data-roving", "");
      joinGroup(el, stops);
      el.addEventListener("keydown", function (event) { rove(el, event); });
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
