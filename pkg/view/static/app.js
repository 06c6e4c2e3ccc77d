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

    // The path's steps: every edge a drawn path takes is shown, whatever
    // the filters hide and whether or not the graph's data has it.
    var onPath = {}, pathEdges = {}, steps = [], start = null;
    if (path && path.paths) {
      path.paths.forEach(function (p) {
        if (p.from && p.from.name) start = p.from.name;
        p.steps.forEach(function (s) {
          onPath[s.from.name] = true;
          onPath[s.to.name] = true;
          pathEdges[s.from.name + "\u0000" + s.to.name] = true;
          steps.push(s);
        });
      });
    }
    // skipRange edges into each entry: one is drawn (the one that ranks
    // the layout), the others on demand.
    var ranges = {};
    data.edges.forEach(function (e) {
      if (e.kind === "skipRange") ranges[e.to] = (ranges[e.to] || 0) + 1;
    });

    box.textContent = "";
    var svg = el("svg", { "class": "g sem-" + (data.semantics || "classic"), role: "img" });
    var title = el("title", {}, svg);
    title.textContent = "Upgrade graph of " + data.package + ", " + data.channels.join(", ");
    var defs = el("defs", {}, svg);
    ["replaces", "skips", "skipRange", "path", "ignored"].forEach(function (k) {
      var m = el("marker", { id: "arrow-" + k, viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, defs);
      el("path", { d: "M0,0 L10,5 L0,10 z", "class": "arrow " + k }, m);
    });
    var edgeLayer = el("g", { "class": "edges" }, svg);
    var labelLayer = el("g", { "class": "labels" }, svg);
    var nodeLayer = el("g", { "class": "nodes" }, svg);

    var byNode = {}, extra = 0, drawn = {}, bundled = [];
    function over(a, b, i) {
      // Drawn over the layout: a curve from the top of the older node to
      // the bottom of the newer one, bowed sideways by its span.
      var x1 = a.x, y1 = a.y - NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2;
      var bow = Math.min(160, 30 + Math.abs(y1 - y2) * 0.25) * (((i % 2) * 2) - 1);
      return "M" + x1 + "," + y1 + " C" + (x1 + bow) + "," + (y1 - 40) + " " + (x2 + bow) + "," + (y2 + 40) + " " + x2 + "," + y2;
    }
    function addEdge(e, d, cls, tip) {
      var onp = pathEdges[e.from + "\u0000" + e.to];
      if (onp) cls += " on-path";
      var p = el("path", { d: d, "class": cls, "data-from": e.from, "data-to": e.to, "data-kind": e.kind, "marker-end": "url(#arrow-" + (onp ? "path" : e.kind) + ")" }, edgeLayer);
      (byNode[e.from] = byNode[e.from] || []).push(p);
      (byNode[e.to] = byNode[e.to] || []).push(p);
      drawn[e.from + "\u0000" + e.to] = true;
      el("title", {}, p).textContent = tip;
      return p;
    }
    data.edges.forEach(function (e, i) {
      var a = g.node(e.from), b = g.node(e.to);
      if (!a || !b) return;
      var ge = e.layout ? g.edge({ v: e.from, w: e.to, name: "e" + i }) : null;
      var d = ge && ge.points && ge.points.length ? curve(ge.points) : over(a, b, i);
      var cls = "edge " + e.kind + (e.classic ? "" : " no-classic") + (e.v1 ? "" : " no-v1") + (e.diff ? " diff-" + e.diff : "") + (e.layout ? "" : " extra");
      var n = e.kind === "skipRange" ? ranges[e.to] : 0;
      if (e.layout && n > 1) cls += " bundle";
      if (!e.layout) extra++;
      var p = addEdge(e, d, cls, e.from + " → " + e.to + " (" + e.kind + (e.range ? " " + e.range : "") + ")" +
        (e.layout && n > 1 ? "; the range covers " + n + " versions: click to show every edge" : "") +
        (e.classic ? "" : "; OLM classic never follows it: its target is off the replaces chain") +
        (e.v1 ? "" : "; OLM v1 never follows it: its target is not newer"));
      if (e.layout && n > 1) bundled.push({ path: p, edge: e, n: n });
    });
    steps.forEach(function (s, i) {
      var a = g.node(s.from.name), b = g.node(s.to.name);
      if (!a || !b || drawn[s.from.name + "\u0000" + s.to.name]) return;
      var kind = s.edges && s.edges.length ? s.edges[0].kind : "replaces";
      addEdge({ from: s.from.name, to: s.to.name, kind: kind }, over(a, b, i), "edge " + kind + " extra", s.from.name + " → " + s.to.name + " (" + kind + ", a step of the path)");
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

    // A bundled skipRange edge says how many versions its range covers;
    // clicking it (or its count) shows or hides the others.
    bundled.forEach(function (b) {
      var others = Array.prototype.filter.call(edgeLayer.querySelectorAll("path.edge.extra.skipRange"), function (p) {
        return p.getAttribute("data-to") === b.edge.to;
      });
      var mid = b.path.getPointAtLength(b.path.getTotalLength() / 2);
      var lab = el("g", { "class": "rlabel", "data-to": b.edge.to, transform: "translate(" + mid.x + "," + mid.y + ")" }, labelLayer);
      var txt = "×" + b.n;
      el("rect", { x: -(txt.length * 3.6 + 6), y: -9, width: txt.length * 7.2 + 12, height: 18, rx: 9, ry: 9 }, lab);
      el("text", { x: 0, y: 4 }, lab).textContent = txt;
      el("title", {}, lab).textContent = "skipRange " + (b.edge.range || "") + " of " + b.edge.to + ": " + b.n + " versions; click to show or hide their edges";
      function toggle() {
        var open = !lab.classList.contains("expanded");
        lab.classList.toggle("expanded", open);
        others.forEach(function (p) { p.classList.toggle("expanded", open); });
      }
      lab.addEventListener("click", toggle);
      b.path.addEventListener("click", toggle);
    });

    // The drawing's extent is that of everything drawn: dagre routes some
    // edges beyond the nodes, and curves drawn over the layout bow
    // sideways. Measured before anything is hidden.
    var bb = svg.getBBox(), pad = 12;
    var X = Math.floor(bb.x - pad), Y = Math.floor(bb.y - pad);
    var W = Math.max(Math.ceil(bb.width + 2 * pad), 200), H = Math.max(Math.ceil(bb.height + 2 * pad), 80);
    svg.setAttribute("viewBox", X + " " + Y + " " + W + " " + H);
    svg.setAttribute("width", String(W));
    svg.setAttribute("height", String(H));
    // In an overview (a graph zoomed out to fit), node texts are too small
    // to read: each node gets a label of its version at a readable size,
    // where there is room for it. Most telling first: the path's start,
    // the path, the head, then the channel's order.
    var marks = data.nodes.map(function (n, i) {
      var pos = g.node(n.name);
      var rank = n.name === start ? 0 : onPath[n.name] ? 1 : n.head ? 2 : 3;
      return { x: pos.x, y: pos.y, w: pos.width, text: n.version || n.name, rank: rank, i: i,
        cls: "olabel" + (rank < 3 ? " key" : "") + (n.diff ? " diff-" + n.diff : "") + (n.lost ? " lost" : "") };
    }).sort(function (a, b) { return a.rank - b.rank || a.i - b.i; });
    // A path page opens on the path: the extent of its nodes.
    var focus = null;
    Object.keys(onPath).forEach(function (name) {
      var n = g.node(name);
      if (!n) return;
      var r = { x1: n.x - n.width / 2, y1: n.y - NODE_H / 2, x2: n.x + n.width / 2, y2: n.y + NODE_H / 2 };
      focus = focus ? { x1: Math.min(focus.x1, r.x1), y1: Math.min(focus.y1, r.y1), x2: Math.max(focus.x2, r.x2), y2: Math.max(focus.y2, r.y2) } : r;
    });
    initToolbar(box, svg, data, { X: X, Y: Y, W: W, H: H }, focus, extra, marks);
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

  function initToolbar(box, svg, data, ext, focus, extra, marks) {
    var X = ext.X, Y = ext.Y, W = ext.W, H = ext.H;
    var card = box.closest(".graph-card") || document;
    // skipRange edges beyond the one of each entry that ranks the layout
    // are bundled into it until asked for: all at once here, or one
    // range at a time by clicking its count.
    var all = card.querySelector("[data-extra]");
    if (all && extra > 0) {
      all.parentNode.hidden = false;
      all.parentNode.appendChild(document.createTextNode(" (" + extra + ")"));
      all.checked = false;
      svg.classList.add("hide-extra");
      all.addEventListener("change", function () { svg.classList.toggle("hide-extra", !all.checked); });
    }

    // Zoom: fitted to the box when the graph is larger than it, else
    // 100 %; the URL keeps the zoom (zoom=fit, or a scale and the point
    // at the centre) so that a view can be linked. vx is the viewBox's
    // left: an overview narrower than the box widens its viewBox to the
    // box, room for its labels.
    var status = document.getElementById("graph-zoom");
    var scale = 1, vx = X, fitted = false;
    var OVERVIEW = 0.6, LABEL_PX = 11, LABEL_FONT = "600 11px system-ui, sans-serif";
    var olayer = el("g", { "class": "olabels" }, svg);
    function maxHeight() {
      var mh = parseFloat(getComputedStyle(box).maxHeight);
      return isNaN(mh) ? window.innerHeight * 0.78 : mh;
    }
    function fitScale(w, h) { return Math.min(1, (box.clientWidth - 4) / (w || W), (maxHeight() - 4) / (h || H)); }
    function setScale(s) {
      scale = Math.max(0.02, Math.min(3, s));
      var over = scale < OVERVIEW;
      var vw = over ? Math.max(W, (box.clientWidth - 4) / scale) : W;
      vx = X - (vw - W) / 2;
      svg.setAttribute("viewBox", vx + " " + Y + " " + vw + " " + H);
      svg.setAttribute("width", String(Math.round(vw * scale)));
      svg.setAttribute("height", String(Math.round(H * scale)));
      box.classList.toggle("overview", over);
      label(over ? vw : 0);
      if (status) status.textContent = Math.round(scale * 100) + " %" + (over ? " · click the graph to zoom in there" : "");
    }
    // label writes the overview's labels, LABEL_PX high on the screen, each
    // beside its node (right, left, below or above) where it overlaps no
    // node and no other label and stays inside the viewBox (vw wide).
    function label(vw) {
      olayer.textContent = "";
      if (!vw) return;
      var u = 1 / scale, h = (LABEL_PX + 3) * u, gap = 4 * u, placed = [];
      var nodes = marks.map(function (m) { return { x1: m.x - m.w / 2, y1: m.y - NODE_H / 2, x2: m.x + m.w / 2, y2: m.y + NODE_H / 2 }; });
      function free(r) {
        if (r.x1 < vx || r.x2 > vx + vw || r.y1 < Y || r.y2 > Y + H) return false;
        function clear(o) { return r.x2 <= o.x1 || r.x1 >= o.x2 || r.y2 <= o.y1 || r.y1 >= o.y2; }
        return nodes.every(clear) && placed.every(clear);
      }
      marks.forEach(function (m) {
        var w = textWidth(m.text, LABEL_FONT) * u, top = m.y - NODE_H / 2, bottom = m.y + NODE_H / 2;
        var spots = [
          { x1: m.x + m.w / 2 + gap, y1: m.y - h / 2 },
          { x1: m.x - m.w / 2 - gap - w, y1: m.y - h / 2 },
          { x1: m.x - w / 2, y1: bottom + gap },
          { x1: m.x - w / 2, y1: top - gap - h }
        ];
        for (var i = 0; i < spots.length; i++) {
          var r = { x1: spots[i].x1, y1: spots[i].y1, x2: spots[i].x1 + w, y2: spots[i].y1 + h };
          if (!free(r)) continue;
          placed.push(r);
          var t = el("text", { x: r.x1, y: r.y2 - 3.5 * u, "class": m.cls, "font-size": LABEL_PX * u, "stroke-width": 3 * u }, olayer);
          t.textContent = m.text;
          return;
        }
      });
    }
    // centre returns the point of the graph at the box's centre.
    function centre() {
      var r = svg.getBoundingClientRect(), br = box.getBoundingClientRect();
      return { x: vx + (br.left + box.clientWidth / 2 - r.left) / scale, y: Y + (br.top + box.clientHeight / 2 - r.top) / scale };
    }
    function show(pt) {
      var r = svg.getBoundingClientRect(), br = box.getBoundingClientRect();
      box.scrollLeft += (r.left + (pt.x - vx) * scale) - (br.left + box.clientWidth / 2);
      box.scrollTop += (r.top + (pt.y - Y) * scale) - (br.top + box.clientHeight / 2);
    }
    function remember(fit) {
      if (fit) { setQuery("zoom", "fit"); setQuery("at", ""); return; }
      var c = centre();
      setQuery("zoom", String(Math.round(scale * 100) / 100));
      setQuery("at", Math.round(c.x) + "," + Math.round(c.y));
    }
    function zoomTo(s, pt) {
      pt = pt || centre();
      fitted = false;
      setScale(Math.round(s * 100) / 100); // as the URL keeps it
      show(pt);
      remember(false);
    }
    var q = new URL(window.location.href).searchParams;
    var z = q.get("zoom"), at = (q.get("at") || "").split(",").map(Number);
    if (!z && focus) {
      setScale(fitScale(focus.x2 - focus.x1 + 160, focus.y2 - focus.y1 + 80));
      show({ x: (focus.x1 + focus.x2) / 2, y: (focus.y1 + focus.y2) / 2 });
    } else if (z === "fit" || (!z && (W > box.clientWidth || H > maxHeight()))) {
      fitted = true;
      setScale(fitScale());
    } else if (z && !isNaN(Number(z))) {
      setScale(Number(z));
      if (at.length === 2 && !isNaN(at[0]) && !isNaN(at[1])) show({ x: at[0], y: at[1] });
    } else {
      setScale(1);
    }
    // A fitted graph stays fitted when the window changes size.
    window.addEventListener("resize", function () { if (fitted) setScale(fitScale()); });
    Array.prototype.forEach.call(card.querySelectorAll("[data-zoom]"), function (b) {
      b.addEventListener("click", function () {
        var k = b.getAttribute("data-zoom");
        if (k === "fit") { fitted = true; setScale(fitScale()); remember(true); } else zoomTo(scale * (k === "in" ? 1.25 : 0.8));
      });
    });
    // In an overview, a click on the graph (not on a bundle) zooms to
    // 100 % there.
    svg.addEventListener("click", function (ev) {
      if (scale >= OVERVIEW || (ev.target.closest && ev.target.closest("a, .rlabel, .edge.bundle"))) return;
      var r = svg.getBoundingClientRect();
      zoomTo(1, { x: vx + (ev.clientX - r.left) / scale, y: Y + (ev.clientY - r.top) / scale });
    });
    var timer = 0;
    box.addEventListener("scroll", function () {
      if (new URL(window.location.href).searchParams.get("zoom") === "fit" && box.scrollTop === 0 && box.scrollLeft === 0) return;
      clearTimeout(timer);
      timer = setTimeout(function () { if (new URL(window.location.href).searchParams.get("zoom")) remember(false); }, 300);
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
