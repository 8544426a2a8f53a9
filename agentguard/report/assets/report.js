// agentguard HTML report: renders each trace's timeline when it is opened, so a page
// of 500 traces stays light; sorting and filtering of the score table. No network.
(function () {
  "use strict";
  var node = document.getElementById("report-data");
  if (!node) return;
  var data = JSON.parse(node.textContent);
  var constraints = data.constraints || [];
  var FIRST = 300, LAST = 100; // long traces: first and last calls, then "show all"
  var WORDS = { s: "satisfied", v: "violated", h: "pending (holds if the run ended here)",
                p: "pending (ending here would violate it)",
                "-": "not judged (the spec names no dialogue event)" };
  var SPEAKERS = { user: "user says", assistant: "assistant says" };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function resultTable(t) {
    var table = el("table", "results");
    var head = table.createTHead().insertRow();
    ["constraint", "layer", "weight", "result", "detail"].forEach(function (h) {
      head.appendChild(el("th", h === "weight" ? "num" : "", h));
    });
    var body = table.createTBody();
    constraints.forEach(function (c, i) {
      var row = body.insertRow();
      row.appendChild(el("td", "mono", c.name));
      row.appendChild(el("td", "", c.layer || "-"));
      row.appendChild(el("td", "num", String(c.weight)));
      var ok = t.passed[i];
      row.appendChild(el("td", ok ? "pass verdict-pass" : "fail verdict-fail", ok ? "pass" : "FAIL"));
      row.appendChild(el("td", "", t.details[i]));
    });
    return table;
  }

  function violationBox(v, steps) {
    var box = el("div", "violation");
    box.appendChild(el("span", "name", v[0]));
    var where = v[1] === null ? " violated at the end of the run"
      : " violated by call #" + steps[v[1]][5] + " " + steps[v[1]][0];
    box.appendChild(el("span", "", where));
    if (v[2]) box.appendChild(el("div", "hint", v[2]));
    else box.appendChild(el("div", "muted", v[1] === null
      ? "no repair hint (the monitor found no calls that would satisfy it)"
      : "no repair hint (the monitor found no earlier calls that would make this call compliant)"));
    return box;
  }

  function cellFor(code, prev) {
    var td = el("td", "cell");
    if (code === "-") { td.className += " unjudged"; return td; }
    var i = el("i", code);
    if (code !== prev && (code === "s" || code === "v")) {
      i.className += " chg";
      i.textContent = code === "s" ? "✓" : "✗";
    }
    td.appendChild(i);
    return td;
  }

  function timelineRows(tbody, t, from, to) {
    var byPos = {};
    t.violations.forEach(function (v) {
      if (v[1] !== null) (byPos[v[1]] = byPos[v[1]] || []).push(v);
    });
    for (var p = from; p < to; p++) {
      var s = t.steps[p];
      var said = SPEAKERS[s[4]];  // a dialogue event: a message row, not a call
      var row = tbody.insertRow();
      row.className = "step" + (said ? " msg msg-" + s[4] : "") + (s[3] ? " err" : "") +
        (byPos[p] ? " row-viol" : "");
      // the number verify_trace gives the position ("call #4" in a detail); none for
      // a message the spec does not judge
      row.appendChild(el("td", "pos", s[5] === null ? "" : String(s[5])));
      var tool = el("td", "tool", said || s[0]);
      if (said) tool.title = s[0];
      if (s[3]) tool.title = "the tool returned an error";
      row.appendChild(tool);
      constraints.forEach(function (c) {
        var codes = t.codes[c.name] || "";
        var td = cellFor(codes.charAt(p), p > 0 ? codes.charAt(p - 1) : "");
        td.title = c.name + (s[5] === null ? " at this message" : " after call " + s[5]) +
          ": " + (WORDS[codes.charAt(p)] || "?");
        row.appendChild(td);
      });
      var args = el("td", "args", s[1]);
      if (s[2]) args.title = "result: " + s[2];
      row.appendChild(args);
      (byPos[p] || []).forEach(function (v) {
        var hint = tbody.insertRow();
        hint.className = "hint-row";
        hint.appendChild(el("td", "", ""));
        var td = el("td", "");
        td.colSpan = constraints.length + 2;
        td.appendChild(el("span", "fail", "✗ " + v[0]));
        td.appendChild(document.createTextNode(v[2] ? " — repair hint: " + v[2] : " is violated from here on"));
        hint.appendChild(td);
      });
    }
  }

  function timeline(t) {
    var wrap = el("div", "timeline-wrap");
    var table = el("table", "timeline");
    var head = table.createTHead().insertRow();
    head.appendChild(el("th", "", "#"));
    head.appendChild(el("th", "", "call"));
    constraints.forEach(function (c) {
      var th = el("th", "c", c.name);
      th.title = c.name;
      head.appendChild(th);
    });
    head.appendChild(el("th", "", "arguments"));
    var tbody = table.createTBody();
    var n = t.steps.length;
    if (n <= FIRST + LAST + 50) {
      timelineRows(tbody, t, 0, n);
    } else {
      timelineRows(tbody, t, 0, FIRST);
      var gap = tbody.insertRow();
      var td = el("td", "");
      td.colSpan = constraints.length + 3;
      var more = el("button", "", "show all " + n + " rows (" + (n - FIRST - LAST) + " hidden)");
      more.addEventListener("click", function () {
        tbody.textContent = "";
        timelineRows(tbody, t, 0, n);
        endRow(tbody, t);
      });
      td.appendChild(more);
      gap.appendChild(td);
      timelineRows(tbody, t, n - LAST, n);
    }
    endRow(tbody, t);
    wrap.appendChild(table);
    return wrap;
  }

  function endRow(tbody, t) {
    var row = tbody.insertRow();
    row.className = "end";
    row.appendChild(el("td", "pos", ""));
    row.appendChild(el("td", "tool", "end"));
    constraints.forEach(function (c, i) {
      var td = cellFor(t.passed[i] ? "s" : "v", "");
      td.title = c.name + " on the whole run: " + (t.passed[i] ? "satisfied" : "violated");
      row.appendChild(td);
    });
    row.appendChild(el("td", "args", "final verdicts (verify_trace)"));
  }

  function legend() {
    var box = el("div", "legend-row");
    [["s", "satisfied for good"], ["v", "violated for good"], ["h", "pending, holds if the run ended here"],
     ["p", "pending, ending here would violate it"]].forEach(function (k) {
      var span = el("span", "");
      var sw = el("i", "");
      sw.style.background = getComputedStyle(document.documentElement)
        .getPropertyValue({ s: "--ok", v: "--bad", h: "--ok-mid", p: "--pend" }[k[0]]);
      span.appendChild(sw);
      span.appendChild(document.createTextNode(k[1]));
      box.appendChild(span);
    });
    return box;
  }

  function render(details) {
    if (details.dataset.rendered) return;
    var t = data.traces[Number(details.dataset.index)];
    var body = details.querySelector(".trace-body");
    if (t.violations.length) {
      body.appendChild(el("h3", "", "Violations"));
      t.violations.forEach(function (v) { body.appendChild(violationBox(v, t.steps)); });
    }
    (t.tool_problems || []).forEach(function (p) {
      body.appendChild(el("div", "violation tool-problem", "tool declaration: " + p));
    });
    body.appendChild(el("h3", "", "Constraints"));
    body.appendChild(resultTable(t));
    body.appendChild(el("h3", "", "Timeline: the verdict of every constraint after each call"));
    if (t.note) body.appendChild(el("p", "note", t.note));
    if (!t.steps.length) {
      body.appendChild(el("p", "note", "The trace has no calls."));
    } else {
      body.appendChild(legend());
      body.appendChild(timeline(t));
    }
    details.dataset.rendered = "1";
  }

  var all = Array.prototype.slice.call(document.querySelectorAll("details.trace"));
  all.forEach(function (d) {
    d.addEventListener("toggle", function () { if (d.open) render(d); });
    if (d.open) render(d);
  });

  function setAll(open) {
    all.forEach(function (d) { if (!d.classList.contains("hidden")) d.open = open; });
  }
  var expand = document.getElementById("expand-all");
  var collapse = document.getElementById("collapse-all");
  if (expand) expand.addEventListener("click", function () { setAll(true); });
  if (collapse) collapse.addEventListener("click", function () { setAll(false); });

  // score table: filter by text, failing only; rows link to the traces below
  var search = document.getElementById("filter");
  var failing = document.getElementById("failing-only");
  function applyFilter() {
    var q = (search && search.value || "").toLowerCase();
    var onlyBad = failing && failing.checked;
    document.querySelectorAll("#scores tbody tr").forEach(function (row) {
      var hide = (q && row.textContent.toLowerCase().indexOf(q) < 0) ||
        (onlyBad && row.dataset.passed === "1");
      row.classList.toggle("hidden", !!hide);
      var d = document.getElementById(row.dataset.target);
      if (d) d.classList.toggle("hidden", !!hide);
    });
  }
  if (search) search.addEventListener("input", applyFilter);
  if (failing) failing.addEventListener("change", applyFilter);

  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].dataset.sort || a.cells[col].textContent;
          var y = b.cells[col].dataset.sort || b.cells[col].textContent;
          var nx = parseFloat(x), ny = parseFloat(y);
          var cmp = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
          return asc ? cmp : -cmp;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  document.querySelectorAll("#scores a[href^='#t']").forEach(function (a) {
    a.addEventListener("click", function () {
      var d = document.getElementById(a.getAttribute("href").slice(1));
      if (d) d.open = true;
    });
  });
  document.documentElement.dataset.ready = "1";
})();
