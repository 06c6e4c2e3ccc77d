// opm view: the package filter, and the upgrade graph drawn with dagre.
// Catalog text only ever reaches the page through textContent and
// setAttribute: never through innerHTML.
"use strict";
(function () {
  var SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) {
      if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    }
    if (parent) parent.appendChild(e);
    return e;
  }

  function setQuery(key, value) {
    var u = new URL(window.location.href);
    if (value) u.searchParams.set(key, value); else u.searchParams.delete(key);
    window.history.replaceState(null, "", u.pathname + u.search + u.hash);
  }

  // ---- catalog page: filter the package rows as one types ----
  function initFilter() {
    var input = document.getElementById("filter");
    if (!input) return;
    var rows = Array.prototype.slice.call(document.querySelectorAll("table.packages tbody tr[data-search]"));
    var hay = rows.map(function (r) { return r.getAttribute("data-search").toLowerCase(); });
    var count = document.getElementById("count");
    function apply() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (r, i) {
        var ok = words.every(function (w) { return hay[i].indexOf(w) >= 0; });
        r.hidden = !ok;
        if (ok) shown++;
      });
      count.textContent = words.length ? shown + " of " + rows.length + " packages match" : "";
      setQuery("q", input.value.trim());
    }
    input.addEventListener("input", apply);
    input.form.addEventListener("submit", function (ev) { ev.preventDefault(); apply(); });
    if (input.value) apply();
  }

  // ---- the graph ----
  var NODE_H = 42, PAD = 24, MAX_W = 340;
  var measure = document.createElement("canvas").getContext("2d");

  function textWidth(s, font) {
    measure.font = font;
    return measure.measureText(s).width;
  }
  var NAME_FONT = "600 12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
  var VER_FONT = "11px ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace";

  function verLabel(n) {
    return (n.version || "no version") + (n.head ? "  · head" : "") + (n.blocks ? "  · blocks" : "");
  }

  function nodeWidth(n) {
    var w = Math.max(textWidth(n.name, NAME_FONT), textWidth(verLabel(n), VER_FONT));
    return Math.min(MAX_W, Math.max(96, Math.ceil(w + PAD)));
  }

  // truncate cuts s to fit w pixels, with an ellipsis.
  function truncate(s, w) {
    if (textWidth(s, NAME_FONT) <= w - PAD) return s;
    var lo = 1, hi = s.length;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (textWidth(s.slice(0, mid) + "…", NAME_FONT) <= w - PAD) lo = mid; else hi = mid - 1;
    }
    return s.slice(0, lo) + "…";
  }

  // pathSegment writes a name as one path segment, as the server does
  // (server.go): "." and ".." with "~2E" for each dot (browsers resolve
  // dot segments, escaped or not), a leading "~" as "~7E".
  function pathSegment(name) {
    if (name === "." || name === "..") return name.replace(/\./g, "~2E");
    if (name.charAt(0) === "~") name = "~7E" + name.slice(1);
    return encodeURIComponent(name);
  }

  function fetchJSON(url) {
    return fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error(j && j.error ? j.error : r.status + " " + r.statusText);
        return j;
      });
    });
  }

  function initGraph() {
    var box = document.getElementById("graph");
    if (!box) return;
    var status = document.getElementById("graph-status");
    var t0 = performance.now();
    var src = box.getAttribute("data-src");
    var pathSrc = box.getAttribute("data-path-src");
    Promise.all([fetchJSON(src), pathSrc ? fetchJSON(pathSrc) : Promise.resolve(null)]).then(function (res) {
      var t1 = performance.now();
      var g = res[0], path = res[1];
      var drawn = draw(box, g, path);
      var t2 = performance.now();
      var timing = { fetchMs: Math.round(t1 - t0), layoutMs: Math.round(drawn.layoutMs), drawMs: Math.round(t2 - t1 - drawn.layoutMs) };
      window.opmViewTiming = timing;
      box.setAttribute("data-layout-ms", String(timing.layoutMs));
      status.textContent = g.nodes.length + " nodes and " + g.edges.length + " edges drawn (data " + timing.fetchMs +
        " ms, layout " + timing.layoutMs + " ms, drawing " + timing.drawMs + " ms).";
      document.body.setAttribute("data-graph-ready", "1");
    }).catch(function (err) {
      box.textContent = "";
      var p = document.createElement("p");
      p.className = "callout err";
      p.textContent = "The graph could not be drawn: " + err.message;
      box.appendChild(p);
      document.body.setAttribute("data-graph-ready", "error");
    });
  }

  function draw(box, data, path) {
    var bundles = box.getAttribute("data-bundles") || "";
    var oldBundles = box.getAttribute("data-old-bundles") || bundles;
    var g = new dagre.graphlib.Graph({ multigraph: true });
    g.setGraph({ rankdir: "BT", nodesep: 26, ranksep: 46, edgesep: 12, marginx: 16, marginy: 16 });
    g.setDefaultEdgeLabel(function () { return {}; });
    var byName = {};
    data.nodes.forEach(function (n) {
      byName[n.name] = n;
      g.setNode(n.name, { width: nodeWidth(n), height: NODE_H });
    });
    data.edges.forEach(function (e, i) {
      if (e.layout && byName[e.from] && byName[e.to] && e.from !== e.to) g.setEdge(e.from, e.to, {}, "e" + i);
    });
    var tl = performance.now();
    dagre.layout(g);
    var layoutMs = performance.now() - tl;
    var gi = g.graph();
    var W = Math.max(gi.width || 0, 200), H = Math.max(gi.height || 0, 80);

    var onPath = {}, pathEdges = {}, start = null;
    if (path && path.paths) {
      path.paths.forEach(function (p) {
        if (p.from && p.from.name) start = p.from.name;
        p.steps.forEach(function (s) {
          onPath[s.from.name] = true;
          onPath[s.to.name] = true;
          pathEdges[s.from.name + "\u0000" + s.to.name] = true;
        });
      });
    }

    box.textContent = "";
    var svg = el("svg", { "class": "g sem-" + (data.semantics || "classic"), viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img" });
    var title = el("title", {}, svg);
    title.textContent = "Upgrade graph of " + data.package + ", " + data.channels.join(", ");
    var defs = el("defs", {}, svg);
    ["replaces", "skips", "skipRange", "path", "ignored"].forEach(function (k) {
      var m = el("marker", { id: "arrow-" + k, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, defs);
      el("path", { d: "M0,0 L10,5 L0,10 z", "class": "arrow " + k }, m);
    });
    var edgeLayer = el("g", { "class": "edges" }, svg);
    var nodeLayer = el("g", { "class": "nodes" }, svg);

    var byNode = {}, extra = 0;
    data.edges.forEach(function (e, i) {
      var a = g.node(e.from), b = g.node(e.to);
      if (!a || !b) return;
      var d;
      var ge = e.layout ? g.edge({ v: e.from, w: e.to, name: "e" + i }) : null;
      if (ge && ge.points && ge.points.length) {
        d = curve(ge.points);
      } else {
        // Drawn over the layout: a curve from the top of the older node
        // to the bottom of the newer one, bowed sideways by its span.
        var x1 = a.x, y1 = a.y - NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2;
        var bow = Math.min(160, 30 + Math.abs(y1 - y2) * 0.25) * (((i % 2) * 2) - 1);
        d = "M" + x1 + "," + y1 + " C" + (x1 + bow) + "," + (y1 - 40) + " " + (x2 + bow) + "," + (y2 + 40) + " " + x2 + "," + y2;
      }
      var cls = "edge " + e.kind + (e.classic ? "" : " no-classic") + (e.v1 ? "" : " no-v1") + (e.diff ? " diff-" + e.diff : "") + (e.layout ? "" : " extra");
      var onp = pathEdges[e.from + "\u0000" + e.to];
      if (onp) cls += " on-path";
      var p = el("path", { d: d, "class": cls, "data-from": e.from, "data-to": e.to, "data-kind": e.kind, "marker-end": "url(#arrow-" + (onp ? "path" : e.kind) + ")" }, edgeLayer);
      (byNode[e.from] = byNode[e.from] || []).push(p);
      (byNode[e.to] = byNode[e.to] || []).push(p);
      if (!e.layout) extra++;
      var t = el("title", {}, p);
      t.textContent = e.from + " → " + e.to + " (" + e.kind + (e.range ? " " + e.range : "") + ")" +
        (e.classic ? "" : "; OLM classic never follows it: its target is off the replaces chain") +
        (e.v1 ? "" : "; OLM v1 never follows it: its target is not newer");
    });

    data.nodes.forEach(function (n) {
      var pos = g.node(n.name);
      var w = pos.width, x = pos.x - w / 2, y = pos.y - NODE_H / 2;
      var base = n.diff === "removed" ? oldBundles : bundles;
      var cls = "node" + (n.head ? " head" : "") + (n.deprecated ? " deprecated" : "") + (n.skipped ? " skipped" : "") +
        (n.stranded ? " stranded" : "") + (n.bundle ? "" : " phantom") + (n.blocks ? " blocks" : "") +
        (n.diff ? " diff-" + n.diff : "") + (n.lost ? " lost" : "") + (onPath[n.name] ? " on-path" : "") + (n.name === start ? " start" : "");
      var a = n.bundle ? el("a", { href: base + pathSegment(n.name) }, nodeLayer) : nodeLayer;
      var grp = el("g", { "class": cls, transform: "translate(" + x + "," + y + ")", "data-name": n.name }, a);
      el("rect", { width: w, height: NODE_H, rx: 7, ry: 7 }, grp);
      var t1 = el("text", { x: w / 2, y: 17, "class": "name" }, grp);
      t1.textContent = truncate(n.name, w);
      var t2 = el("text", { x: w / 2, y: 33, "class": "ver" }, grp);
      t2.textContent = verLabel(n);
      var tip = el("title", {}, grp);
      var why = [];
      if (n.head) why.push("head of the channel");
      if (n.chain >= 0) why.push("on the replaces chain (head−" + n.chain + ")");
      if (n.skipped) why.push("skipped by another entry: OLM classic never upgrades to it");
      if (n.stranded) why.push("stranded: off the replaces chain");
      if (n.deprecated) why.push("deprecated");
      if (!n.bundle) why.push("no bundle in the catalog: only named by replaces or skips");
      if (n.blocks) why.push("its olm.maxOpenShiftVersion blocks OpenShift " + data.nextOpenShift);
      if (n.diff) why.push(n.diff);
      if (n.lost) why.push("lost its upgrade path: " + n.lost);
      tip.textContent = n.name + (n.version ? " (" + n.version + ")" : "") + (why.length ? "\n" + why.join("\n") : "");
    });
    // Hovering a node brings out its edges.
    Array.prototype.forEach.call(nodeLayer.querySelectorAll("g.node"), function (n) {
      var edges = byNode[n.getAttribute("data-name")] || [];
      n.addEventListener("mouseenter", function () { svg.classList.add("focus"); edges.forEach(function (p) { p.classList.add("hl"); }); });
      n.addEventListener("mouseleave", function () { svg.classList.remove("focus"); edges.forEach(function (p) { p.classList.remove("hl"); }); });
    });
    box.appendChild(svg);
    initToolbar(box, svg, data, W, H, extra);
    var focus = box.querySelector(".node.start") || box.querySelector(".node.head");
    if (focus && focus.scrollIntoView && box.scrollHeight > box.clientHeight) {
      var r = focus.getBoundingClientRect(), br = box.getBoundingClientRect();
      box.scrollTop += r.top - br.top - box.clientHeight / 3;
    }
    return { layoutMs: layoutMs };
  }

  function curve(pts) {
    var d = "M" + pts[0].x + "," + pts[0].y;
    if (pts.length === 2) return d + " L" + pts[1].x + "," + pts[1].y;
    for (var i = 1; i < pts.length - 1; i++) {
      var mx = (pts[i].x + pts[i + 1].x) / 2, my = (pts[i].y + pts[i + 1].y) / 2;
      d += " Q" + pts[i].x + "," + pts[i].y + " " + (i === pts.length - 2 ? pts[i + 1].x + "," + pts[i + 1].y : mx + "," + my);
    }
    return d;
  }

  function initToolbar(box, svg, data, W, H, extra) {
    var card = box.closest(".graph-card") || document;
    // Many skipRange edges (an entry covering every older one) hide the
    // graph: beyond twice the nodes, only the one of each entry that ranks
    // the layout is shown until asked.
    var all = card.querySelector("[data-extra]");
    if (all && extra > 0) {
      all.parentNode.hidden = false;
      all.parentNode.appendChild(document.createTextNode(" (" + extra + ")"));
      all.checked = extra <= 2 * data.nodes.length;
      svg.classList.toggle("hide-extra", !all.checked);
      all.addEventListener("change", function () { svg.classList.toggle("hide-extra", !all.checked); });
    }
    var scale = 1;
    function zoom(s) {
      scale = Math.max(0.1, Math.min(3, s));
      svg.setAttribute("width", String(Math.round(W * scale)));
      svg.setAttribute("height", String(Math.round(H * scale)));
    }
    function fit() { zoom(Math.min(1, (box.clientWidth - 8) / W)); }
    if (W > box.clientWidth) fit();
    Array.prototype.forEach.call(card.querySelectorAll("[data-zoom]"), function (b) {
      b.addEventListener("click", function () {
        var z = b.getAttribute("data-zoom");
        if (z === "fit") fit(); else zoom(scale * (z === "in" ? 1.25 : 0.8));
      });
    });
    var sem = data.semantics || "classic";
    function setSem(s) {
      sem = s;
      svg.classList.remove("sem-classic", "sem-v1");
      svg.classList.add("sem-" + s);
      Array.prototype.forEach.call(card.querySelectorAll("[data-sem]"), function (b) {
        b.setAttribute("aria-pressed", String(b.getAttribute("data-sem") === s));
      });
      var sel = document.querySelector(".pathform select[name=semantics]");
      if (sel && !document.querySelector(".pathres")) sel.value = s;
    }
    Array.prototype.forEach.call(card.querySelectorAll("[data-sem]"), function (b) {
      b.addEventListener("click", function () { setSem(b.getAttribute("data-sem")); setQuery("semantics", b.getAttribute("data-sem") === "classic" ? "" : b.getAttribute("data-sem")); });
    });
    setSem(sem);
    Array.prototype.forEach.call(card.querySelectorAll("[data-kind]"), function (cb) {
      cb.addEventListener("change", function () { svg.classList.toggle("hide-" + cb.getAttribute("data-kind"), !cb.checked); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    initFilter();
    initGraph();
  });
})();
