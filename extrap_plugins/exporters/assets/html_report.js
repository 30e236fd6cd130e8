// The extrap-plugins report: renders the JSON document in #report-data.
// No network, no libraries.  The table draws only the rows in view, so it
// stays fast for tens of thousands of call paths.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const C = {};
  data.columns.forEach(function (name, i) { C[name] = i; });
  const rows = data.rows;
  const ROW_HEIGHT = 26;
  const OVERSCAN = 12;
  const SEP = "->";

  // ------------------------------------------------------------ formatting
  function num(v) {
    if (v === null || v === undefined) return "n/a";
    if (v === 0) return "0";
    const a = Math.abs(v);
    if (a >= 1e5 || a < 1e-3) return v.toExponential(3).replace(/\.?0+e/, "e");
    return String(parseFloat(v.toPrecision(4)));
  }
  function pct(v) { return v === null || v === undefined ? "n/a" : (100 * v).toFixed(1) + "%"; }
  function point(p) {
    if (!p) return "";
    return Object.keys(p).map(function (k) { return k + "=" + String(p[k]); }).join(", ");
  }
  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  function colour(category) { return data.categories[category][1]; }

  const hasTarget = data.settings.target !== null;
  // what "now" and "target" are, in the headers as in the text export: the value at the largest measured point
  const atLargest = data.settings.largest ? "at " + point(data.settings.largest) : "at the largest point";
  const atTarget = hasTarget ? "at " + point(data.settings.target) : "at target";
  const columns = [
    {key: "callpath", label: "call path", text: function (r) { return r[C.callpath]; }, value: function (r) { return r[C.callpath]; }, numeric: false},
    {key: "metric", label: "metric", text: function (r) { return data.metrics[r[C.metric]]; }, value: function (r) { return data.metrics[r[C.metric]]; }, numeric: false},
    {key: "model", label: "model", text: function (r) { return r[C.model]; }, value: function (r) { return r[C.model]; }, numeric: false},
    {key: "growth", label: "growth", text: function (r) { return r[C.growth]; }, value: function (r) { return r[C.degree]; }, numeric: true},
    {key: "ar2", label: "adj. R²", text: function (r) { return r[C.ar2] === null ? "n/a" : r[C.ar2].toFixed(4); }, value: function (r) { return r[C.ar2]; }, numeric: true},
    {key: "smape", label: "SMAPE", text: function (r) { return r[C.smape] === null ? "n/a" : r[C.smape].toFixed(2) + "%"; }, value: function (r) { return r[C.smape]; }, numeric: true},
    {key: "now", label: "value " + atLargest, text: function (r) { return num(r[C.now]); }, value: function (r) { return r[C.now]; }, numeric: true},
    {key: "target", label: "value " + atTarget, text: function (r) { return num(r[C.target]); }, value: function (r) { return r[C.target]; }, numeric: true},
    {key: "interval", label: data.level + " interval", text: function (r) { return r[C.low] === null ? "n/a" : num(r[C.low]) + " … " + num(r[C.high]); }, value: function (r) { return r[C.low] === null ? null : r[C.high] - r[C.low]; }, numeric: true},
    {key: "share_now", label: "share of root " + atLargest, text: function (r) { return pct(r[C.root_now]); }, value: function (r) { return r[C.root_now]; }, numeric: true},
    {key: "share_target", label: "share of root " + atTarget, text: function (r) { return pct(r[C.root_target]); }, value: function (r) { return r[C.root_target]; }, numeric: true},
    {key: "validation", label: "held-out error", text: function (r) { return r[C.validation] === null ? "n/a" : (100 * r[C.validation]).toFixed(1) + "%"; }, value: function (r) { return r[C.validation]; }, numeric: true},
    {key: "warnings", label: "warnings", text: function (r) { return r[C.warnings]; }, value: function (r) { return r[C.warnings]; }, numeric: false},
  ].filter(function (c) { return hasTarget || (c.key !== "target" && c.key !== "interval" && c.key !== "share_target"); })
   .filter(function (c) { return c.key !== "validation" || data.rows.some(function (r) { return r[C.validation] !== null; }); });

  // --------------------------------------------------------------- summary
  const list = document.getElementById("summary-list");
  data.summary.forEach(function (item) {
    list.appendChild(el("dt", null, item[0]));
    list.appendChild(el("dd", null, item[1]));
  });
  const legend = document.getElementById("legend");
  legend.appendChild(el("span", {"class": "legend-title"}, "growth class:"));
  data.categories.forEach(function (c) {
    const item = el("span", {"class": "legend-item"});
    const swatch = el("span", {"class": "swatch"});
    swatch.style.background = c[1];
    item.appendChild(swatch);
    item.appendChild(document.createTextNode(c[0]));
    legend.appendChild(item);
  });

  // ----------------------------------------------------------------- table
  const header = document.getElementById("header");
  const tbody = document.getElementById("rows");
  const scroller = document.getElementById("scroller");
  const filterInput = document.getElementById("filter");
  const metricFilter = document.getElementById("metric-filter");
  const growthFilter = document.getElementById("growth-filter");
  const count = document.getElementById("count");
  let view = rows.map(function (_, i) { return i; });  // positions in rows, filtered and sorted
  let sortKey = null, sortDescending = true, selected = -1;

  columns.forEach(function (c) {
    const th = el("th", {"data-key": c.key, "class": "col-" + c.key, "title": "sort by " + c.label}, c.label);
    th.addEventListener("click", function () { sortBy(c.key); });
    header.appendChild(th);
  });
  metricFilter.appendChild(el("option", {value: ""}, "all metrics"));
  data.metrics.forEach(function (m, i) { metricFilter.appendChild(el("option", {value: String(i)}, m)); });
  growthFilter.appendChild(el("option", {value: ""}, "all growth classes"));
  data.categories.forEach(function (c, i) { growthFilter.appendChild(el("option", {value: String(i)}, c[0])); });

  function compare(column, descending) {
    return function (a, b) {
      const va = column.value(rows[a]), vb = column.value(rows[b]);
      const na = va === null || va === "" || (typeof va === "number" && isNaN(va));
      const nb = vb === null || vb === "" || (typeof vb === "number" && isNaN(vb));
      if (na || nb) return na === nb ? a - b : (na ? 1 : -1);  // missing values last, either way
      let result = column.numeric ? va - vb : String(va).localeCompare(String(vb));
      if (descending) result = -result;
      return result || a - b;
    };
  }

  function sortBy(key) {
    const column = columns.find(function (c) { return c.key === key; });
    if (sortKey === key) sortDescending = !sortDescending;
    else { sortKey = key; sortDescending = column.numeric; }
    header.querySelectorAll("th").forEach(function (th) {
      th.classList.remove("sorted-asc", "sorted-desc");
      if (th.getAttribute("data-key") === key) th.classList.add(sortDescending ? "sorted-desc" : "sorted-asc");
    });
    applyView();
  }

  function applyView() {
    const text = filterInput.value.trim();
    let test = null;
    if (text.length > 2 && text[0] === "/" && text[text.length - 1] === "/") {
      try { const re = new RegExp(text.slice(1, -1), "i"); test = function (s) { return re.test(s); }; } catch (e) { test = null; }
    }
    if (test === null && text) { const lower = text.toLowerCase(); test = function (s) { return s.toLowerCase().indexOf(lower) >= 0; }; }
    const metric = metricFilter.value === "" ? -1 : Number(metricFilter.value);
    const growth = growthFilter.value === "" ? -1 : Number(growthFilter.value);
    view = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (metric >= 0 && r[C.metric] !== metric) continue;
      if (growth >= 0 && r[C.category] !== growth) continue;
      if (test && !test(r[C.callpath])) continue;
      view.push(i);
    }
    if (sortKey !== null) {
      const column = columns.find(function (c) { return c.key === sortKey; });
      view.sort(compare(column, sortDescending));
    }
    count.textContent = view.length === rows.length ? rows.length + " rows" : view.length + " of " + rows.length + " rows";
    scroller.scrollTop = 0;
    renderRows();
  }

  let pending = false;
  function renderRows() {
    pending = false;
    const height = Math.max(scroller.clientHeight, 600);  // the box may still be growing to its max-height
    const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(view.length, Math.ceil((scroller.scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
    const fragment = document.createDocumentFragment();
    const top = el("tr", {"class": "spacer"});
    top.style.height = (first * ROW_HEIGHT) + "px";
    fragment.appendChild(top);
    for (let k = first; k < last; k++) {
      const i = view[k], r = rows[i];
      const tr = el("tr", {"data-row": String(i)});
      if (i === selected) tr.classList.add("selected");
      columns.forEach(function (c) {
        const td = el("td", {"class": "col-" + c.key}, c.text(r));
        if (c.key === "growth") td.style.color = colour(r[C.category]);
        if (c.key === "callpath" || c.key === "model" || c.key === "growth" || c.key === "warnings") td.title = c.text(r);
        if (c.key === "share_now" || c.key === "share_target") {
          const parent = c.key === "share_now" ? r[C.parent_now] : r[C.parent_target];
          td.title = "share of the root; of the parent: " + pct(parent);
        }
        tr.appendChild(td);
      });
      fragment.appendChild(tr);
    }
    const bottom = el("tr", {"class": "spacer"});
    bottom.style.height = ((view.length - last) * ROW_HEIGHT) + "px";
    fragment.appendChild(bottom);
    tbody.replaceChildren(fragment);
  }
  scroller.addEventListener("scroll", function () {
    if (!pending) { pending = true; window.requestAnimationFrame(renderRows); }
  });
  tbody.addEventListener("click", function (event) {
    const tr = event.target.closest("tr[data-row]");
    if (tr) select(Number(tr.getAttribute("data-row")));
  });
  filterInput.addEventListener("input", applyView);
  metricFilter.addEventListener("change", applyView);
  growthFilter.addEventListener("change", applyView);

  // ---------------------------------------------------------------- detail
  const detail = document.getElementById("detail");
  function select(i) {
    selected = i;
    tbody.querySelectorAll("tr.selected").forEach(function (tr) { tr.classList.remove("selected"); });
    const tr = tbody.querySelector('tr[data-row="' + i + '"]');
    if (tr) tr.classList.add("selected");
    const r = rows[i];
    detail.replaceChildren();
    detail.setAttribute("data-row", String(i));
    const about = el("div", {"class": "about"});
    about.appendChild(el("h3", null, r[C.callpath]));
    about.appendChild(el("p", {"class": "metric"}, data.metrics[r[C.metric]]));
    const facts = el("dl");
    function fact(label, text, category) {
      facts.appendChild(el("dt", null, label));
      const dd = el("dd", null, text);
      if (category !== undefined) dd.style.color = colour(category);
      facts.appendChild(dd);
    }
    fact("model", r[C.model]);
    fact("growth", r[C.growth] + " (" + data.categories[r[C.category]][0] + ")", r[C.category]);
    fact("adj. R² / SMAPE", (r[C.ar2] === null ? "n/a" : r[C.ar2].toFixed(4)) + " / " + (r[C.smape] === null ? "n/a" : r[C.smape].toFixed(2) + "%"));
    fact("at " + point(data.settings.largest), num(r[C.now]) + " (share of parent " + pct(r[C.parent_now]) + ", of root " + pct(r[C.root_now]) + ")");
    if (hasTarget) {
      fact("at " + point(data.settings.target), num(r[C.target]) + " (share of parent " + pct(r[C.parent_target]) + ", of root " + pct(r[C.root_target]) + ")");
      fact(data.level + " interval", r[C.low] === null ? "n/a" : num(r[C.low]) + " … " + num(r[C.high]));
    }
    if (r[C.warnings]) fact("warnings", r[C.warnings]);
    about.appendChild(facts);
    detail.appendChild(about);
    const svg = data.plots[String(i)];
    const figure = el("figure", {"class": "plot"});
    if (svg) {
      figure.innerHTML = svg;  // made by the exporter (matplotlib), not by the input
    } else {
      const curve = r[C["function"]] ? sketch(r) : null;
      if (curve) figure.appendChild(curve);
      const why = data.plot_note ? "No plot for this row: " + data.plot_note + "." :
        "No plot for this row: static plots exist for the first " + Object.keys(data.plots).length +
        " rows of the ranking (" + (data.settings.sort || "model order") + "). Raise --plot-top for more.";
      figure.appendChild(el("p", {"class": "hint"}, why + (curve ? " Above: the model curve, drawn here." : "")));
    }
    detail.appendChild(figure);
  }

  // A model curve drawn in the page (no measurements) for rows without a static plot.
  function evaluate(fn, x) {
    let value = fn[0] || 0;
    fn[1].forEach(function (t) {
      let product = t[0] || 0;
      for (let k = 0; k < x.length; k++) {
        if (t[1][2 * k]) product *= Math.pow(x[k], t[1][2 * k]);
        if (t[1][2 * k + 1]) product *= Math.pow(Math.log2(x[k]), t[1][2 * k + 1]);
      }
      value += product;
    });
    return typeof fn[2] === "number" ? Math.max(value, fn[2]) : value;  // a time or a count: never below 0
  }
  function sketch(r) {
    const params = data.parameters, fn = r[C["function"]];
    if (!params.length) return null;
    const ranges = data.ranges || {}, target = data.settings.target, largest = data.settings.largest;
    // from the measured range to the target, on whichever side of it the target lies
    const x0 = Math.min(target ? target[params[0]] : Infinity, ranges[params[0]] ? ranges[params[0]][0] : 1);
    const x1 = Math.max(target ? target[params[0]] : 0, ranges[params[0]] ? ranges[params[0]][1] : 64);
    if (!(x0 > 0) || !(x1 > x0)) return null;
    const fixed = params.map(function (p) { return target ? target[p] : (largest ? largest[p] : 1); });
    const xs = [], ys = [];
    for (let k = 0; k <= 120; k++) {
      const x = x0 * Math.pow(x1 / x0, k / 120);
      const point = fixed.slice(); point[0] = x;
      const y = evaluate(fn, point);
      if (isFinite(y)) { xs.push(x); ys.push(y); }
    }
    if (xs.length < 2) return null;
    let y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    if (y1 === y0) { y0 -= 1; y1 += 1; }
    const W = 640, H = 360, L = 70, R = 16, T = 20, B = 44;
    const sx = function (x) { return L + (W - L - R) * Math.log(x / x0) / Math.log(x1 / x0); };
    const sy = function (y) { return H - B - (H - T - B) * (y - y0) / (y1 - y0); };
    const NS = "http://www.w3.org/2000/svg";
    function node(tag, attrs, text) {
      const n = document.createElementNS(NS, tag);
      Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); });
      if (text !== undefined) n.textContent = text;
      return n;
    }
    const svg = node("svg", {viewBox: "0 0 " + W + " " + H, "class": "sketch", role: "img"});
    svg.appendChild(node("rect", {x: L, y: T, width: W - L - R, height: H - T - B, fill: "none", stroke: "#999"}));
    for (let k = 0; k <= 4; k++) {
      const y = y0 + (y1 - y0) * k / 4;
      svg.appendChild(node("text", {x: L - 6, y: sy(y) + 4, "text-anchor": "end", "font-size": 11}, num(y)));
    }
    for (let x = Math.pow(2, Math.ceil(Math.log2(x0))); x <= x1 * 1.0001; x *= Math.max(2, Math.pow(2, Math.ceil(Math.log2(x1 / x0) / 8)))) {
      svg.appendChild(node("text", {x: sx(x), y: H - B + 16, "text-anchor": "middle", "font-size": 11}, num(x)));
    }
    svg.appendChild(node("text", {x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle", "font-size": 12}, params[0]));
    const path = xs.map(function (x, k) { return (k ? "L" : "M") + sx(x).toFixed(1) + "," + sy(ys[k]).toFixed(1); }).join("");
    svg.appendChild(node("path", {d: path, fill: "none", stroke: colour(r[C.category]), "stroke-width": 2}));
    if (target && r[C.target] !== null) {
      svg.appendChild(node("circle", {cx: sx(target[params[0]]), cy: sy(r[C.target]), r: 5, fill: "crimson"}));
    }
    svg.appendChild(node("text", {x: L + 6, y: T + 14, "font-size": 12}, r[C.callpath] + " [" + data.metrics[r[C.metric]] + "]" +
      (params.length > 1 ? "  (" + params.slice(1).map(function (p, k) { return p + "=" + fixed[k + 1]; }).join(", ") + ")" : "")));
    return svg;
  }

  // ------------------------------------------------------------------ tree
  const treeRoot = document.getElementById("tree");
  const treeMetric = document.getElementById("tree-metric");
  data.metrics.forEach(function (m, i) { treeMetric.appendChild(el("option", {value: String(i)}, m)); });
  function buildTree() {
    const root = {children: new Map(), path: ""};
    const byKey = new Map();
    rows.forEach(function (r, i) { byKey.set(r[C.callpath] + "\u0000" + r[C.metric], i); });
    const seen = new Set();
    rows.forEach(function (r) {
      if (seen.has(r[C.callpath])) return;
      seen.add(r[C.callpath]);
      const parts = r[C.callpath].split(SEP);
      let node = root, path = "";
      parts.forEach(function (part, depth) {
        path = depth === 0 ? part : path + SEP + part;
        if (!node.children.has(part)) node.children.set(part, {name: part, path: path, children: new Map()});
        node = node.children.get(part);
      });
    });
    return {root: root, byKey: byKey};
  }
  const tree = buildTree();

  function treeNode(node, metric) {
    const li = el("li");
    const line = el("div", {"class": "node", "data-path": node.path});
    const toggle = el("span", {"class": "toggle"}, node.children.size ? "▸" : "·");
    line.appendChild(toggle);
    const i = tree.byKey.get(node.path + "\u0000" + metric);
    const label = el("span", {"class": "label"}, node.name);
    if (i !== undefined) {
      const r = rows[i];
      const badge = el("span", {"class": "badge"}, r[C.growth]);
      badge.style.background = colour(r[C.category]);
      line.appendChild(badge);
      label.style.color = colour(r[C.category]);
      label.title = r[C.model];
      line.appendChild(label);
      const share = hasTarget ? r[C.parent_target] : r[C.parent_now];
      if (share !== null) line.appendChild(el("span", {"class": "share"}, pct(share) + " of parent" + (hasTarget ? " at target" : "")));
      label.addEventListener("click", function () { select(i); detail.scrollIntoView({block: "nearest"}); });
    } else {
      line.appendChild(label);
    }
    li.appendChild(line);
    if (node.children.size) {
      li.classList.add("collapsed");
      toggle.addEventListener("click", function () { setOpen(li, node, metric, li.classList.contains("collapsed")); });
    }
    li._node = node;
    return li;
  }
  function setOpen(li, node, metric, open) {
    if (open && !li._built) {
      const ul = el("ul");
      node.children.forEach(function (child) { ul.appendChild(treeNode(child, metric)); });
      li.appendChild(ul);
      li._built = true;
    }
    li.classList.toggle("collapsed", !open);
    const toggle = li.querySelector(":scope > .node > .toggle");
    if (toggle) toggle.textContent = open ? "▾" : "▸";
  }
  function renderTree() {
    const metric = Number(treeMetric.value || 0);
    treeRoot.replaceChildren();
    tree.root.children.forEach(function (child) {
      const li = treeNode(child, metric);
      treeRoot.appendChild(li);
      if (child.children.size) setOpen(li, child, metric, true);
    });
  }
  treeMetric.addEventListener("change", renderTree);
  document.getElementById("expand-all").addEventListener("click", function () {
    const metric = Number(treeMetric.value || 0);
    let opened = 0;
    (function open(items) {
      items.forEach(function (li) {
        if (opened > 20000 || !li._node || !li._node.children.size) return;
        setOpen(li, li._node, metric, true);
        opened += 1;
        open(li.querySelectorAll(":scope > ul > li"));
      });
    })(treeRoot.querySelectorAll(":scope > li"));
  });
  document.getElementById("collapse-all").addEventListener("click", renderTree);

  // ------------------------------------------------------------------ start
  applyView();
  renderTree();
  if (window.performance && performance.mark) performance.mark("report-ready");
  window.__reportReady = true;
})();
