// The grading page's scoring: points and a comment per answer, kept in this browser's
// localStorage (per assignment and question; an answer's entry is keyed by a hash of its file
// and text, so a changed answer starts ungraded), exported as the scores CSV with each
// answer's digest (a score applies only to the answer it was given for). No network.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("page-data").textContent);
  var storeKey = "autograder-written/" + data.assignment + "/" + data.question;
  var answers = Array.prototype.slice.call(document.querySelectorAll("article.answer"));
  var saved = {};
  try { saved = JSON.parse(window.localStorage.getItem(storeKey)) || {}; } catch (e) { saved = {}; }

  // what the field holds is valid: empty (not graded yet), or 0 to the question's points in
  // its steps; text the number field cannot read ("1,5") is invalid, never taken as empty
  function valid(input) {
    var text = input.value.trim();
    if (input.validity && input.validity.badInput) { return false; }
    if (text === "") { return true; }
    var value = Number(text);
    if (!isFinite(value) || value < 0 || value > data.points) { return false; }
    var steps = value / data.step;
    return Math.abs(steps - Math.round(steps)) < 1e-9;
  }

  // A CSV cell as grades_csv.spreadsheet_safe writes it (a leading quote before what a
  // spreadsheet would take for a formula; numbers stay numbers), then RFC 4180 quoting.
  function cell(value) {
    var text = String(value);
    if (/^[=+\-@\t\r']/.test(text) && !/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) {
      text = "'" + text;
    }
    return /[",\r\n]/.test(text) ? "\"" + text.replace(/"/g, "\"\"") + "\"" : text;
  }

  function fields(article) {
    return { points: article.querySelector("input.points"),
             comment: article.querySelector("textarea.comment") };
  }

  function csv() {
    var rows = answers.map(function (article) {
      var f = fields(article);
      return [article.dataset.file, data.question, f.points.value.trim(), f.comment.value,
              article.dataset.answer];
    });
    rows.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; });
    return ["file,question,points,comment,answer"].concat(rows.map(function (r) {
      return r.map(cell).join(",");
    })).join("\n") + "\n";
  }

  function refresh() {
    var graded = 0, invalid = [];
    answers.forEach(function (article) {
      var text = fields(article).points.value.trim();
      var ok = valid(fields(article).points);
      article.classList.toggle("invalid", !ok);
      article.classList.toggle("graded", ok && text !== "");
      fields(article).points.setAttribute("aria-invalid", String(!ok));
      if (!ok) { invalid.push(article.dataset.label); }
      else if (text !== "") { graded += 1; }
    });
    document.getElementById("progress").textContent = graded + " of " + answers.length +
      " graded" + (invalid.length ? "; fix the points of " + invalid.join(", ") +
      " (0 to " + data.points + " in steps of " + data.step + ")" : "");
    document.getElementById("export").disabled = invalid.length > 0;
    document.getElementById("export-text").value = invalid.length ? "" : csv();
  }

  answers.forEach(function (article) {
    var f = fields(article), key = article.dataset.key;
    if (saved[key]) {
      f.points.value = saved[key].points || "";
      f.comment.value = saved[key].comment || "";
    }
    function changed() {
      if (f.points.value.trim() === "" && f.comment.value === "") { delete saved[key]; }
      else { saved[key] = { points: f.points.value.trim(), comment: f.comment.value }; }
      try { window.localStorage.setItem(storeKey, JSON.stringify(saved)); } catch (e) {
        document.getElementById("storage").textContent = "This browser did not keep the " +
          "scores (" + e.name + "): export before closing the page.";
      }
      refresh();
    }
    f.points.addEventListener("input", changed);
    f.comment.addEventListener("input", changed);
  });

  document.getElementById("export").addEventListener("click", function () {
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([csv()], { type: "text/csv" }));
    link.download = data.download;
    document.body.appendChild(link);
    link.click();
    link.remove();
  });
  refresh();
}());
