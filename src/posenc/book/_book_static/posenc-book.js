/* posenc book: a figure too wide to read on a narrow screen scrolls sideways inside its box
   (.posenc-figure-box, see posenc-book.css and posenc.sphinxext). While a box scrolls it gets
   a visible hint below it, a keyboard stop (arrow keys scroll it) and a name for screen readers. */
(function () {
  "use strict";
  var HINT = "Scroll the figure sideways to see all of it.";
  function update(box) {
    var scrolls = box.scrollWidth > box.clientWidth + 1, hint = box.nextElementSibling;
    if (!hint || !hint.classList.contains("posenc-scroll-hint")) {
      hint = document.createElement("p");
      hint.className = "posenc-scroll-hint";
      hint.textContent = "\u2194 " + HINT;
      box.insertAdjacentElement("afterend", hint);
    }
    box.classList.toggle("posenc-scrolls", scrolls);
    if (scrolls) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", "Figure; " + HINT);
    } else {
      box.removeAttribute("tabindex");
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
    }
  }
  function start() {
    var boxes = document.querySelectorAll(".posenc-figure-box");
    if (!boxes.length) return;
    var observer = window.ResizeObserver ? new ResizeObserver(function (entries) {
      entries.forEach(function (e) { update(e.target); });
    }) : null;
    boxes.forEach(function (box) {
      update(box);
      if (observer) observer.observe(box);
      box.querySelectorAll("img,canvas").forEach(function (el) {
        if (observer) observer.observe(el); // the explorer's canvas replaces its still image
        el.addEventListener("load", function () { update(box); });
      });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
