// hallubench viewer: sortable tables, item search, sentence breakdowns, sample filters. No dependencies.
(function () {
  "use strict";
  var root = document.body.getAttribute("data-root") || "";

  function text(tag, content, cls) {
    var el = document.createElement(tag);
    el.textContent = content;
    if (cls) el.className = cls;
    return el;
  }

  // Phones: the nav opens and closes behind the menu button.
  var toggle = document.querySelector(".menu-toggle");
  if (toggle) {
    toggle.addEventListener("click", function () {
      var open = toggle.parentNode.classList.toggle("open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  // Sortable columns: click a header; numbers sort as numbers, empty cells last.
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, column) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var numeric = th.getAttribute("data-type") === "number";
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[column].getAttribute("data-sort"), y = b.cells[column].getAttribute("data-sort");
          if (x === "" || y === "") return (x === "") - (y === "");
          var order = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });

  // Search over every item of every board (assets/items.js).
  var input = document.getElementById("search"), list = document.getElementById("search-results");
  if (input && list) {
    input.addEventListener("input", function () {
      var query = input.value.trim().toLowerCase();
      list.textContent = "";
      if (!query) { list.hidden = true; return; }
      var found = (window.HALLUBENCH_ITEMS || []).filter(function (item) {
        return item.id.toLowerCase().indexOf(query) >= 0 || item.text.toLowerCase().indexOf(query) >= 0;
      }).slice(0, 30);
      found.forEach(function (item) {
        var li = document.createElement("li"), a = text("a", item.id);
        a.href = root + item.href;
        li.appendChild(a);
        li.appendChild(text("small", item.board + (item.text ? " · " + item.text.slice(0, 90) : "")));
        list.appendChild(li);
      });
      if (!found.length) list.appendChild(text("li", "no item matches"));
      list.hidden = false;
    });
  }

  // Sentence scores (embedded JSON: sources once, then per model and sentence [CrossCheck, RefCheck, [per source]]):
  // a tooltip on hover, each evidence model's judgment on click.
  var data = document.getElementById("evidence-data");
  if (data) {
    var evidence = JSON.parse(data.textContent);
    var fixed = function (value) { return value === null ? "–" : value.toFixed(3); };
    document.querySelectorAll(".response").forEach(function (article) {
      var rows = evidence.models[article.getAttribute("data-model")] || [];
      var panel = article.querySelector(".breakdown");
      article.querySelectorAll(".sentence").forEach(function (span) {
        var row = rows[parseInt(span.getAttribute("data-index"), 10)];
        if (!row) return;
        span.addEventListener("mouseenter", function () {
          if (span.title) return;
          span.title = "CrossCheck " + fixed(row[0]) + (row[1] === null ? "" : " · RefCheck " + fixed(row[1])) +
            evidence.sources.map(function (name, k) { return "\n" + name + ": " + fixed(row[2][k]); }).join("");
        });
        function show() {
          article.querySelectorAll(".sentence.selected").forEach(function (s) { s.classList.remove("selected"); });
          span.classList.add("selected");
          panel.textContent = "";
          panel.appendChild(text("p", "CrossCheck " + fixed(row[0]) + (row[1] === null ? "" : ", RefCheck " + fixed(row[1])) +
            " for “" + span.textContent + "”. Each evidence model's mean judgment (0: its passages support the sentence):"));
          var table = document.createElement("table");
          evidence.sources.forEach(function (name, k) {
            if (row[2][k] === null) return;
            var tr = table.insertRow();
            tr.appendChild(text("td", name));
            tr.appendChild(text("td", fixed(row[2][k])));
          });
          if (!table.rows.length) panel.appendChild(text("p", "This ranking did not record per-evidence scores."));
          else panel.appendChild(table);
          panel.hidden = false;
        }
        span.addEventListener("click", show);
        span.addEventListener("keydown", function (event) {
          if (event.key === "Enter" || event.key === " ") { event.preventDefault(); show(); }
        });
      });
    });
  }

  // Run pages: filter samples by task, and to those scored wrong or unreadable, or that failed.
  var task = document.getElementById("task-filter"), flagged = document.getElementById("flagged-filter");
  if (task && flagged) {
    var count = document.getElementById("shown-count");
    var filter = function () {
      var shown = 0;
      document.querySelectorAll("tr.sample").forEach(function (row) {
        var bad = row.getAttribute("data-status") !== "ok" || row.getAttribute("data-verdict") === "wrong";
        var keep = (!task.value || row.getAttribute("data-task") === task.value) && (!flagged.checked || bad);
        row.hidden = !keep;
        shown += keep ? 1 : 0;
      });
      count.textContent = shown + " shown";
    };
    task.addEventListener("change", filter);
    flagged.addEventListener("change", filter);
    filter();
  }

  // Index: show only the rows (of every board and table) whose model name holds the filter text.
  var models = document.getElementById("model-filter");
  if (models) {
    var modelCount = document.getElementById("model-count");
    models.addEventListener("input", function () {
      var query = models.value.trim().toLowerCase(), names = {};
      document.querySelectorAll("table.filterable tbody tr[data-model]").forEach(function (row) {
        var name = row.getAttribute("data-model");
        row.hidden = query !== "" && name.toLowerCase().indexOf(query) < 0;
        if (!row.hidden) names[name] = true;
      });
      modelCount.textContent = query ? Object.keys(names).length + " models shown" : "";
    });
  }
})();
