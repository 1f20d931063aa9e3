/*
 * The Converge console: a single page with hash routes over converge-web's
 * JSON API (docs/web.md). No framework: the stack graph is an SVG drawn
 * here (a layered layout: a resource's column is the longest path to it
 * from a resource without dependencies).
 */
"use strict";

var TOKEN = sessionStorage.getItem("cvToken") || "";
var STATE_COLOURS = { init: "#c3c9d2", in_progress: "#f0ad4e", complete: "#3cb371", failed: "#d9534f" };
var timers = [];
var streams = [];

/* ---- helpers ---------------------------------------------------------- */

function esc(s) {
  return String(s === undefined || s === null ? "" : s).replace(/[&<>"']/g, function (c) {
    return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
  });
}

function api(path) {
  var headers = TOKEN ? { Authorization: "Bearer " + TOKEN } : {};
  return fetch(path, { headers: headers, cache: "no-store" }).then(function (r) {
    return r.json().then(function (doc) {
      if (!r.ok) throw new Error(doc.error || r.status + " " + r.statusText);
      return doc;
    });
  });
}

function withToken(path) {
  return TOKEN ? path + (path.indexOf("?") < 0 ? "?" : "&") + "token=" + encodeURIComponent(TOKEN) : path;
}

function enc(s) { return encodeURIComponent(s); }

function age(seconds) {
  if (!(seconds > 0)) return "-";
  if (seconds < 60) return seconds.toFixed(seconds < 10 ? 1 : 0) + "s";
  if (seconds < 3600) return Math.floor(seconds / 60) + "m" + Math.floor(seconds % 60) + "s";
  if (seconds < 86400) return Math.floor(seconds / 3600) + "h" + Math.floor((seconds % 3600) / 60) + "m";
  return Math.floor(seconds / 86400) + "d";
}

function badge(text, cls) { return '<span class="badge ' + esc(cls || text) + '">' + esc(text) + "</span>"; }

function stateOf(status) {
  if (/_IN_PROGRESS$/.test(status)) return "in_progress";
  if (/_FAILED$/.test(status)) return "failed";
  if (/_COMPLETE$/.test(status) && !/^INIT_/.test(status)) return "complete";
  return "init";
}

function bar(done, total) {
  var pct = total > 0 ? Math.min(100, (100 * done) / total) : 0;
  return '<div class="bar" title="' + done + "/" + total + '"><span style="width:' + pct + '%"></span></div>';
}

/* Runs fn now and every ms until the page changes. */
function every(ms, fn) {
  fn();
  timers.push(setInterval(fn, ms));
}

function main() { return document.getElementById("main"); }

function fail(where, e) {
  var el = document.getElementById(where) || main();
  el.innerHTML = '<p class="error">' + esc(e.message || e) + "</p>";
}

/* ---- stacks ----------------------------------------------------------- */

function pageStacks() {
  main().innerHTML =
    "<h1>Stacks</h1>" +
    '<div class="filters"><input id="f-name" placeholder="name (shell pattern)">' +
    '<select id="f-state"><option value="">any state</option><option>IN_PROGRESS</option>' +
    "<option>COMPLETE</option><option>FAILED</option></select></div>" +
    '<div id="stacks"></div>';
  var name = document.getElementById("f-name"), state = document.getElementById("f-state");
  function load() {
    var q = [];
    if (name.value) q.push("name=" + enc(name.value));
    if (state.value) q.push("status=" + enc(state.value));
    api("/api/stacks" + (q.length ? "?" + q.join("&") : "")).then(function (doc) {
      var rows = doc.stacks.map(function (s) {
        return '<tr data-stack="' + esc(s.name) + '"><td><a href="#/stack/' + enc(s.name) + '">' +
          esc(s.name) + "</a></td><td>" + badge(s.status, s.state) + "</td><td>" +
          bar(s.done, s.total) + '</td><td class="num">' + s.done + "/" + s.total +
          '</td><td class="num">' + age(s.age) + '</td><td class="muted">' + esc(s.reason) + "</td></tr>";
      });
      document.getElementById("stacks").innerHTML = rows.length
        ? "<table><tr><th>Name</th><th>Status</th><th style=\"width:160px\">Progress</th><th></th>" +
          "<th>Age</th><th>Reason</th></tr>" + rows.join("") + "</table>"
        : '<p class="muted">No stack matches.</p>';
    }).catch(function (e) { fail("stacks", e); });
  }
  name.oninput = load;
  state.onchange = load;
  every(2000, load);
}

/* ---- a stack: the graph ----------------------------------------------- */

/* Columns by longest path from the roots; rows in template order, then
   moved towards the mean row of their dependencies (one sweep). */
function layout(graph) {
  var deps = {}, index = {};
  graph.nodes.forEach(function (n, i) { deps[n.name] = []; index[n.name] = i; });
  graph.edges.forEach(function (e) { if (deps[e.to]) deps[e.to].push(e.from); });
  var depth = {};
  function depthOf(name, seen) {
    if (depth[name] !== undefined) return depth[name];
    if (seen[name]) return 0; /* a cycle: the template would be refused; draw anyway */
    seen[name] = true;
    var d = 0;
    deps[name].forEach(function (p) { d = Math.max(d, depthOf(p, seen) + 1); });
    return (depth[name] = d);
  }
  graph.nodes.forEach(function (n) { depthOf(n.name, {}); });
  var columns = [];
  graph.nodes.forEach(function (n) { (columns[depth[n.name]] = columns[depth[n.name]] || []).push(n.name); });
  var row = {};
  columns.forEach(function (col, c) {
    if (c > 0) {
      col.sort(function (a, b) {
        function mean(x) {
          var ps = deps[x].filter(function (p) { return row[p] !== undefined; });
          return ps.length ? ps.reduce(function (s, p) { return s + row[p]; }, 0) / ps.length : index[x];
        }
        return mean(a) - mean(b) || index[a] - index[b];
      });
    }
    col.forEach(function (name, r) { row[name] = r; });
  });
  return { depth: depth, row: row, columns: columns };
}

var NODE_W = 170, NODE_H = 40, COL_W = 230, ROW_H = 60, PAD = 20;

function drawGraph(el, graph) {
  var L = layout(graph), svgNS = "http://www.w3.org/2000/svg";
  var rows = Math.max(1, Math.max.apply(null, L.columns.map(function (c) { return c.length; }).concat([1])));
  var width = PAD * 2 + Math.max(1, L.columns.length) * COL_W - (COL_W - NODE_W);
  var height = PAD * 2 + rows * ROW_H - (ROW_H - NODE_H);
  function pos(name) {
    var col = L.columns[L.depth[name]], offset = ((rows - col.length) * ROW_H) / 2;
    return { x: PAD + L.depth[name] * COL_W, y: PAD + offset + L.row[name] * ROW_H };
  }
  var parts = ['<svg xmlns="' + svgNS + '" width="' + width + '" height="' + height + '" id="graph-svg">',
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" ' +
    'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#8a94a3"/></marker></defs>'];
  graph.edges.forEach(function (e) {
    var a = pos(e.from), b = pos(e.to);
    var x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2, mx = (x1 + x2) / 2;
    parts.push('<path class="edge" data-from="' + esc(e.from) + '" data-to="' + esc(e.to) + '" d="M' +
      x1 + "," + y1 + " C" + mx + "," + y1 + " " + mx + "," + y2 + " " + x2 + "," + y2 +
      '" marker-end="url(#arrow)"/>');
  });
  graph.nodes.forEach(function (n) {
    var p = pos(n.name), label = n.name.length > 24 ? n.name.slice(0, 23) + "…" : n.name;
    var type = n.type.length > 30 ? n.type.slice(0, 29) + "…" : n.type;
    parts.push('<g class="node" data-name="' + esc(n.name) + '" data-state="' + esc(n.state) +
      '" data-status="' + esc(n.status) + '" transform="translate(' + p.x + "," + p.y + ')">' +
      "<title>" + esc(n.name + ": " + n.status + (n.reason ? " — " + n.reason : "")) + "</title>" +
      '<rect width="' + NODE_W + '" height="' + NODE_H + '" fill="' + STATE_COLOURS[n.state] + '"/>' +
      '<text x="8" y="16">' + esc(label) + '</text><text class="type" x="8" y="31">' + esc(type) +
      "</text></g>");
  });
  parts.push("</svg>");
  el.innerHTML = parts.join("");
}

function legend() {
  return '<div class="legend">' + Object.keys(STATE_COLOURS).map(function (s) {
    return '<span style="--c:' + STATE_COLOURS[s] + '">' + s.replace("_", " ") + "</span>";
  }).join("") + "</div>";
}

function waitingHtml(w) {
  if (!w) return "";
  var lines = [];
  if (w.reason) lines.push("<li>" + esc(w.reason) + "</li>");
  (w.in_action || []).forEach(function (a) {
    lines.push("<li><b>" + esc(a.resource) + "</b> " + esc(a.action || "acting") +
      (a["for"] !== null && a["for"] !== undefined ? " for " + age(a["for"]) : "") + ": " +
      esc(a.reason) + ' <span class="muted">(waiting on ' + esc(a.waiting_on) + ")</span></li>");
  });
  (w.ready || []).forEach(function (r) {
    lines.push("<li><b>" + esc(r.resource) + "</b> ready: " + esc(r.reason) + "</li>");
  });
  if (w.blocked) lines.push("<li>" + w.blocked + " more wait for others to be done first</li>");
  return '<div class="card waiting"><b>Waiting' + (w.stalled ? " (stalled: no progress for " +
    age(w.idle) + ")" : "") + "</b><ul>" + lines.join("") + "</ul></div>";
}

function pageStack(name) {
  main().innerHTML =
    '<h1>Stack <span id="s-name">' + esc(name) + '</span> <span id="s-status"></span></h1>' +
    '<div id="s-summary" class="card"></div><h2>Dependency graph</h2>' + legend() +
    '<div id="graph"></div><div id="s-waiting"></div>' +
    '<div class="cols"><div><h2>Resources</h2><div id="s-resources"></div></div>' +
    '<div><h2>Outputs</h2><div id="s-outputs"></div><h2>Events</h2><div id="s-events"></div></div></div>';
  var last = "";
  function showGraph(doc) {
    document.getElementById("s-status").innerHTML = badge(doc.status, doc.state);
    drawGraph(document.getElementById("graph"), doc);
  }
  if (window.EventSource) {
    var es = new EventSource(withToken("/api/stacks/" + enc(name) + "/stream"));
    streams.push(es);
    es.addEventListener("graph", function (ev) { showGraph(JSON.parse(ev.data)); });
    es.addEventListener("gone", function () { es.close(); fail("graph", "the stack is gone"); });
  } else {
    every(1000, function () { api("/api/stacks/" + enc(name) + "/graph").then(showGraph); });
  }
  every(1500, function () {
    api("/api/stacks/" + enc(name)).then(function (s) {
      document.getElementById("s-summary").innerHTML = '<dl class="kv">' +
        "<dt>id</dt><dd>" + esc(s.id) + "</dd><dt>status</dt><dd>" + badge(s.status, s.state) +
        "</dd><dt>reason</dt><dd>" + esc(s.reason) + "</dd><dt>progress</dt><dd>" + s.done + "/" +
        s.total + " (traversal " + s.traversal + ")</dd><dt>updated</dt><dd>" +
        new Date(s.updated * 1000).toISOString() + "</dd>" +
        (s.parent ? "<dt>parent</dt><dd>" + esc(s.parent) + " (" + esc(s.parent_resource) + ")</dd>" : "") +
        "</dl>";
      document.getElementById("s-waiting").innerHTML = waitingHtml(s.waiting);
      var outs = Object.keys(s.outputs || {});
      document.getElementById("s-outputs").innerHTML = outs.length ? "<table>" + outs.map(function (k) {
        var v = s.outputs[k];
        return "<tr><th>" + esc(k) + "</th><td><pre>" + esc(typeof v === "string" ? v : JSON.stringify(v, null, 1)) +
          "</pre></td></tr>";
      }).join("") + "</table>" : '<p class="muted">none</p>';
    }).catch(function (e) { fail("s-summary", e); });
    api("/api/stacks/" + enc(name) + "/resources").then(function (doc) {
      document.getElementById("s-resources").innerHTML = "<table><tr><th>Name</th><th>Type</th>" +
        "<th>Status</th><th>Physical id</th></tr>" + doc.resources.map(function (r) {
          var link = r.type === "Converge::Service"
            ? ' <a href="#/service/' + enc(name) + "/" + enc(r.name) + '">service</a>' : "";
          return "<tr><td>" + esc(r.name) + link + "</td><td>" + esc(r.type) + "</td><td>" +
            badge(r.status, r.state) + '</td><td class="muted">' + esc(r.physical_id) + "</td></tr>";
        }).join("") + "</table>";
    }).catch(function (e) { fail("s-resources", e); });
  });
  var events = [], after = "";
  every(2000, function () {
    api("/api/stacks/" + enc(name) + "/events" + (after ? "?after=" + enc(after) : "")).then(function (doc) {
      if (!doc.events.length && last) return;
      last = "x";
      events = events.concat(doc.events).slice(-200);
      if (doc.events.length) after = doc.events[doc.events.length - 1].id;
      document.getElementById("s-events").innerHTML = "<table><tr><th>Time</th><th>Resource</th>" +
        "<th>Action</th><th>Reason</th></tr>" + events.slice().reverse().map(function (e) {
          return "<tr><td>" + new Date(e.time * 1000).toISOString().slice(11, 23) + "</td><td>" +
            esc(e.resource) + "</td><td>" + badge(e.action + " " + e.status, stateOf("X_" + e.status)) +
            '</td><td class="muted">' + esc(e.reason) + "</td></tr>";
        }).join("") + "</table>";
    }).catch(function (e) { fail("s-events", e); });
  });
}

/* ---- the cluster map -------------------------------------------------- */

function metricHtml(m) {
  var cap = m.capacity, pct = cap ? (100 * m.load) / cap : 0, cls = "";
  if (cap && m.load > cap) cls = "over";
  else if (cap && m.usable !== null && m.load > m.usable) cls = "high";
  var marker = cap && m.buffer > 0 ? '<i style="left:' + (100 * m.usable) / cap + '%" title="buffer: ' +
    Math.round(m.buffer * 100) + '% kept free"></i>' : "";
  return '<div class="metric" data-metric="' + esc(m.name) + '"><span>' + esc(m.name) + "</span>" +
    '<div class="bar"><span class="' + cls + '" style="width:' + Math.min(100, pct) + '%"></span>' + marker +
    "</div><span>" + (+m.load.toFixed(2)) + (cap !== null ? "/" + (+cap.toFixed(2)) : " (no cap.)") + "</span></div>";
}

function nodeHtml(n) {
  return '<div class="nodecard" data-node="' + esc(n.name) + '" data-status="' + esc(n.status) + '">' +
    '<span class="name">' + esc(n.name) + "</span> " + badge(n.status) +
    (n.admin !== "enabled" ? " " + badge(n.admin, "disabled") : "") +
    '<ul class="replicas">' + n.replicas.map(function (r) {
      return '<li data-replica="' + esc(r.name) + '">' + esc(r.name) + ' <span class="muted">' +
        esc(r.state || r.role || "") + "</span></li>";
    }).join("") + "</ul>" + n.metrics.map(metricHtml).join("") +
    (n.error ? '<div class="error">' + esc(n.error) + "</div>" : "") + "</div>";
}

function pageCluster() {
  main().innerHTML = '<h1>Cluster <span id="c-summary" class="muted"></span></h1><div id="c-map"></div>' +
    '<h2>Services</h2><div id="c-services"></div><h2>Health reports</h2><div id="c-health"></div>';
  every(1000, function () {
    api("/api/cluster").then(function (doc) {
      var s = doc.summary;
      document.getElementById("c-summary").textContent = s.nodes + " nodes: " + s.up + " up, " + s.down +
        " down, " + s.disabled + " disabled; " + s.replicas + " replicas";
      var uds = doc.upgrade_domains, fds = doc.fault_domains;
      var html = ['<div class="grid" style="grid-template-columns: 140px repeat(' + Math.max(1, uds.length) +
        ', minmax(220px, 1fr))"><div class="hdr">FD \\ UD</div>'];
      uds.forEach(function (u) { html.push('<div class="hdr">' + esc(u || "(none)") + "</div>"); });
      fds.forEach(function (f) {
        html.push('<div class="hdr">' + esc(f || "(none)") + "</div>");
        uds.forEach(function (u) {
          html.push('<div class="cell" data-fd="' + esc(f) + '" data-ud="' + esc(u) + '">' +
            doc.nodes.filter(function (n) { return n.fault_domain === f && n.upgrade_domain === u; })
              .map(nodeHtml).join("") + "</div>");
        });
      });
      html.push("</div>");
      document.getElementById("c-map").innerHTML = doc.nodes.length ? html.join("")
        : '<p class="muted">No nodes: no converge-agent has registered one.</p>';
      document.getElementById("c-health").innerHTML = doc.health.length ? "<table><tr><th>State</th>" +
        "<th>Source</th><th>Property</th><th>Description</th></tr>" + doc.health.map(function (h) {
          return "<tr><td>" + badge(h.state || h.healthState || "", h.state || h.healthState) + "</td><td>" +
            esc(h.source || h.sourceId) + "</td><td>" + esc(h.property) + '</td><td class="muted">' +
            esc(h.description) + "</td></tr>";
        }).join("") + "</table>" : '<p class="muted">No health reports.</p>';
      document.getElementById("c-services").innerHTML = doc.services.length ? "<table><tr><th>Stack</th>" +
        "<th>Service</th><th>State</th></tr>" + doc.services.map(function (v) {
          return "<tr><td>" + esc(v.stack_name) + '</td><td><a href="#/service/' + enc(v.stack_name) + "/" +
            enc(v.resource) + '">' + esc(v.resource) + "</a></td><td>" + esc(v.state) + "</td></tr>";
        }).join("") + "</table>" : '<p class="muted">No services.</p>';
    }).catch(function (e) { fail("c-map", e); });
  });
}

/* ---- a service -------------------------------------------------------- */

function eliminationHtml(seq) {
  if (!seq || !seq.length) return "";
  return "<ol>" + seq.map(function (s) {
    return "<li>" + esc(typeof s === "string" ? s : JSON.stringify(s)) + "</li>";
  }).join("") + "</ol>";
}

function pageService(stack, name) {
  main().innerHTML = '<h1>Service ' + esc(name) + ' <span class="muted">of stack <a href="#/stack/' +
    enc(stack) + '">' + esc(stack) + '</a></span></h1><div id="v-body"></div>';
  every(2000, function () {
    api("/api/services/" + enc(stack) + "/" + enc(name)).then(function (doc) {
      var x = doc.explain || {};
      var html = ["<h2>Replicas</h2><table><tr><th>#</th><th>Name</th><th>Node</th><th>Role</th>" +
        "<th>Status</th><th>Health</th><th>Restarts</th><th>Endpoint</th><th>Reason</th></tr>"];
      doc.replicas.forEach(function (r) {
        html.push("<tr><td>" + r.index + "</td><td>" + esc(r.name) + "</td><td>" + esc(r.node || "—") +
          "</td><td>" + esc(r.role) + "</td><td>" + esc(r.status) + "</td><td>" +
          (r.health ? badge(r.health) : "") + '</td><td class="num">' + esc(r.restarts) + "</td><td>" +
          esc(r.endpoint) + '</td><td class="muted">' + esc(r.reason) + "</td></tr>");
      });
      html.push("</table><h2>Placement explained</h2>");
      if (doc.explain_error) html.push('<p class="error">' + esc(doc.explain_error) + "</p>");
      html.push("<table><tr><th>#</th><th>Live node</th><th>The placement's choice</th><th>Why not elsewhere" +
        " (elimination sequence)</th></tr>");
      (x.replicas || []).forEach(function (r) {
        html.push("<tr><td>" + r.index + "</td><td>" + esc(r.node || "—") + "</td><td>" +
          esc(r.choice || "—") + (r.moves ? " (would move)" : "") + "</td><td>" +
          eliminationHtml(r.eliminationSequence) + "</td></tr>");
      });
      html.push("</table>");
      (x.unplaced || []).forEach(function (u) {
        html.push("<p><b>Replica " + u.index + " unplaced</b>" + eliminationHtml(u.eliminationSequence) + "</p>");
      });
      if (x.rejected) html.push('<p class="error">Rejected: ' + esc(JSON.stringify(x.rejected)) + "</p>");
      html.push("<h2>Rollout</h2>" + (doc.rollout ? "<pre>" + esc(JSON.stringify(doc.rollout, null, 2)) +
        "</pre>" : '<p class="muted">No rolling update yet.</p>'));
      document.getElementById("v-body").innerHTML = html.join("");
    }).catch(function (e) { fail("v-body", e); });
  });
}

/* ---- dead letters ----------------------------------------------------- */

function pageDead() {
  main().innerHTML = '<h1>Dead letters</h1><p class="muted">Messages the workers refused, from the ' +
    'Kafka topic converge.dead (read as <code>convergectl dead</code> reads it).</p><div id="d-body">' +
    '<p class="muted">Reading…</p></div>';
  api("/api/dead?limit=200").then(function (doc) {
    document.getElementById("d-body").innerHTML = doc.dead.length ? "<table><tr><th>Partition:offset</th>" +
      "<th>Reason</th><th>Bytes</th></tr>" + doc.dead.map(function (d) {
        return "<tr><td>" + d.partition + ":" + d.offset + "</td><td>" + esc(d.reason) + '</td><td class="num">' +
          d.original_len + "</td></tr>";
      }).join("") + "</table>" : '<p class="muted">No dead letters.</p>';
  }).catch(function (e) { fail("d-body", e); });
}

/* ---- routes ----------------------------------------------------------- */

function route() {
  timers.forEach(clearInterval);
  timers = [];
  streams.forEach(function (s) { s.close(); });
  streams = [];
  var parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  var page = parts[0] || "stacks";
  document.querySelectorAll("[data-nav]").forEach(function (a) {
    a.classList.toggle("active", a.getAttribute("data-nav") === page);
  });
  if (page === "stack" && parts[1]) pageStack(parts[1]);
  else if (page === "cluster") pageCluster();
  else if (page === "service" && parts[2]) pageService(parts[1], parts[2]);
  else if (page === "dead") pageDead();
  else pageStacks();
}

window.addEventListener("hashchange", route);
setInterval(function () { document.getElementById("clock").textContent = new Date().toISOString().slice(0, 19) + "Z"; }, 1000);
route();
