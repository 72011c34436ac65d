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

  // Sortable columns: click a header; numbers sort as numbers, empty cells last. A header under a group heading
  // names its body column (data-col).
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th:not(.group-head)");
    heads.forEach(function (th, index) {
      var button = th.querySelector("button");
      if (!button) return;
      var column = th.hasAttribute("data-col") ? parseInt(th.getAttribute("data-col"), 10) : index;
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

  // The grid: a group shows its headline score; "+ more" shows (and hides) the group's other scores.
  function openGroup(table, group, open) {
    table.querySelectorAll('.extra[data-group="' + group + '"]').forEach(function (cell) { cell.hidden = !open; });
    var head = table.querySelector('.group-head[data-group="' + group + '"]');
    head.colSpan = parseInt(head.getAttribute(open ? "data-all" : "data-shown"), 10);
    var more = head.querySelector("button.more");
    if (more) {
      more.setAttribute("aria-expanded", open ? "true" : "false");
      more.textContent = open ? "− fewer" : "+ " + (head.getAttribute("data-all") - head.getAttribute("data-shown")) + " more";
    }
  }
  document.querySelectorAll("table.matrix").forEach(function (table) {
    table.querySelectorAll("button.more").forEach(function (more) {
      more.addEventListener("click", function () {
        openGroup(table, more.getAttribute("data-group"), more.getAttribute("aria-expanded") !== "true");
      });
    });
    var all = document.getElementById("all-scores");
    if (all) {
      all.addEventListener("click", function () {
        table.querySelectorAll(".group-head").forEach(function (head) { openGroup(table, head.getAttribute("data-group"), true); });
      });
    }
  });

  // The index's boards: one tab each; the address (#board-N) says which is open, so links and reloads land on it.
  var tabs = Array.prototype.slice.call(document.querySelectorAll('.tabs [role="tab"]'));
  if (tabs.length) {
    var select = function (id, focus) {
      var found = tabs.some(function (tab) { return tab.getAttribute("aria-controls") === id; });
      if (!found) id = tabs[0].getAttribute("aria-controls");
      tabs.forEach(function (tab) {
        var on = tab.getAttribute("aria-controls") === id;
        tab.setAttribute("aria-selected", on ? "true" : "false");
        tab.tabIndex = on ? 0 : -1;
        document.getElementById(tab.getAttribute("aria-controls")).hidden = !on;
        if (on && focus) tab.focus();
      });
      return found;
    };
    tabs.forEach(function (tab, k) {
      tab.addEventListener("click", function (event) {
        event.preventDefault();
        select(tab.getAttribute("aria-controls"));
        history.replaceState(null, "", "#" + tab.getAttribute("aria-controls"));
      });
      tab.addEventListener("keydown", function (event) {
        var step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
        if (!step) return;
        event.preventDefault();
        var next = tabs[(k + step + tabs.length) % tabs.length];
        select(next.getAttribute("aria-controls"), true);
        history.replaceState(null, "", "#" + next.getAttribute("aria-controls"));
      });
    });
    var fromHash = function () {
      if (select(location.hash.slice(1))) document.getElementById("leaderboard").scrollIntoView();
    };
    window.addEventListener("hashchange", fromHash);
    if (!select(location.hash.slice(1))) select("");
  }

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
