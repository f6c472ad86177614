/* posenc: answers in the page (see posenc.book.answer_forms). Each prediction exercise's form lets the
   reader commit to an answer, then says whether it was right and opens the solution below it.
   Everything happens here, offline: the answer key is in the form's data-answer attribute. */
(function () {
  "use strict";

  function parseNumber(text) {
    // "52,000", "52 000", "5.2e4" and "52_000" all read as 52000
    var cleaned = String(text).trim().replace(/[\s,_\u00a0\u202f]/g, "");
    if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(cleaned)) return null;
    return Number(cleaned);
  }

  function openSolution(form) {
    var solution = form.nextElementSibling;
    while (solution && !solution.classList.contains("solution")) solution = solution.nextElementSibling;
    if (!solution) return null;
    if (solution.classList.contains("toggle-hidden")) {
      var button = solution.querySelector(".toggle-button");
      if (button) button.click();
    }
    return solution;
  }

  function judge(form, answer) {
    if (answer.kind === "choices") {
      var picked = form.querySelector("input[type=radio]:checked");
      if (!picked) return { missing: "Choose one of the answers first." };
      var choice = answer.choices[Number(picked.value)];
      var correct = answer.choices.filter(function (c) { return c.correct; })[0];
      return {
        right: choice.correct,
        feedback: choice.feedback,
        answer: choice.correct ? "" : "The answer: " + correct.text + ".",
      };
    }
    var field = form.querySelector("input[type=text]");
    var value = parseNumber(field.value);
    if (value === null) return { missing: "Enter a number first (for example 1200 or 1.2e3)." };
    var right = Math.abs(value - answer.value) <= answer.tolerance;
    return { right: right, feedback: right ? answer.right : answer.wrong, answer: "" };
  }

  function check(form, answer) {
    var result = form.querySelector(".posenc-answer-result");
    var verdict = judge(form, answer);
    form.classList.remove("posenc-answer-right", "posenc-answer-wrong");
    if (verdict.missing) {
      result.textContent = verdict.missing;
      return;
    }
    form.classList.add(verdict.right ? "posenc-answer-right" : "posenc-answer-wrong");
    var solution = openSolution(form);
    result.textContent = "";
    var head = document.createElement("strong");
    head.textContent = verdict.right ? "Right." : "Not quite.";
    result.appendChild(head);
    var text = " " + verdict.feedback + (verdict.answer ? " " + verdict.answer : "");
    result.appendChild(document.createTextNode(text + (solution ? " The solution is open below. " : "")));
    if (solution && solution.id) {
      var link = document.createElement("a");
      link.href = "#" + solution.id;
      link.textContent = "Go to the solution";
      result.appendChild(link);
    }
  }

  function init() {
    document.querySelectorAll("form.posenc-answer").forEach(function (form) {
      var answer;
      try {
        answer = JSON.parse(form.dataset.answer);
      } catch (error) {
        return; // a broken key: leave the form hidden, the solution still opens by hand
      }
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        check(form, answer);
      });
      form.hidden = false;
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
