// The hitless view: the network drawn with Cytoscape.js, rates, drops, TCP flows and the timeline with
// uPlot on one time axis. Live: frames from the server's WebSocket as the run goes; replay: the whole
// run at once, shown up to the slider's time. Times on the page are seconds since status.t0.
"use strict";

const params = new URLSearchParams(location.search);
const token = params.get("token");
const runParam = params.get("run");
const query = runParam ? `?run=${encodeURIComponent(runParam)}` : "";
const authHeaders = token ? { "X-Hitless-Token": token } : {};
const MAX_SAMPLES = 7200;
const MAX_PLOTTED_LINKS = 6;
const CHART_HEIGHT = 150;
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
  "#7f7f7f", "#bcbd22"];

// Everything the page knows; window.hitlessView lets a test read what is drawn.
const S = {
  status: null, graph: null, cy: null, samples: [], spans: new Map(), ocs: [], flows: {},
  plotted: new Set(), autoPlot: true, charts: {}, chartKeys: {}, now: null, end: 0, dropped: 0,
};
window.hitlessView = S;

const $ = (id) => document.getElementById(id);
const rel = (t) => t - S.status.t0;

async function api(path, body) {
  const init = body === undefined ? { headers: authHeaders }
    : { method: "POST", headers: { ...authHeaders, "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, init);
  const data = await r.json().catch(() => ({}));
  if (!r.ok) {
    const d = data.detail;
    throw new Error(Array.isArray(d) ? d.map((x) => x.msg.replace(/^Value error, /, "")).join("; ") : (d || r.statusText));
  }
  return data;
}

// -- the network -------------------------------------------------------------------------------------

function drawGraph() {
  const g = S.graph;
  const top = Math.min(...g.nodes.map((n) => n.rank));
  const elements = [
    ...g.nodes.map((n) => ({ data: { id: n.id, label: n.id, kind: n.kind, rank: n.rank } })),
    ...g.edges.map((e) => ({ data: { id: e.id, source: e.source, target: e.target, kind: e.kind, label: "" } })),
  ];
  S.cy = cytoscape({
    container: $("graph"),
    elements,
    layout: { name: "breadthfirst", roots: g.nodes.filter((n) => n.rank === top).map((n) => n.id),
      spacingFactor: 1.0, padding: 20, animate: false },
    style: [
      { selector: "node", style: { label: "data(label)", "text-valign": "center", "font-size": 11, color: "#fff",
        width: 34, height: 26, "background-color": "#3465a4", shape: "round-rectangle" } },
      { selector: "node[kind='host']", style: { "background-color": "#888a85", shape: "ellipse", width: 26 } },
      { selector: "node[kind='ocs']", style: { "background-color": "#c17d11", shape: "hexagon", width: 46, height: 34 } },
      { selector: "node.shadow", style: { "border-width": 4, "border-color": "#7b3fe4" } },
      { selector: "edge", style: { width: 2, "line-color": "#9aa3ad", label: "data(label)", "font-size": 9,
        "text-rotation": "autorotate", "text-background-color": "#fff", "text-background-opacity": 0.8,
        "curve-style": "bezier" } },
      { selector: "edge[kind='fibre']", style: { "line-color": "#4e9a06" } },
      { selector: "edge[kind='fibre'].dark", style: { "line-color": "#cc3333", "line-style": "dashed" } },
      { selector: "edge[kind='circuit']", style: { "line-style": "dashed", "line-color": "#aab", opacity: 0.35,
        "curve-style": "unbundled-bezier", "control-point-distances": "data(bend)", "control-point-weights": 0.5 } },
      { selector: "edge[kind='circuit'].lit", style: { "line-style": "solid", "line-color": "#f0a000", width: 4,
        opacity: 1 } },
      { selector: "edge.plotted", style: { "underlay-color": "#1f77b4", "underlay-opacity": 0.25, "underlay-padding": 4 } },
    ],
  });
  // circuits arc below the row of ToRs they join (away from the OCS), so they never cross a switch
  S.cy.edges("[kind='circuit']").forEach((e) => {
    const dx = e.target().position("x") - e.source().position("x");
    e.data("bend", Math.sign(dx || 1) * (30 + 0.18 * Math.abs(dx)));
  });
  S.cy.on("tap", "edge[kind!='circuit']", (ev) => {
    const id = ev.target.id();
    S.autoPlot = false;
    if (S.plotted.has(id)) S.plotted.delete(id); else S.plotted.add(id);
    render();
  });
}

function stateAt(list, t) {
  // the last item at or before t (lists are in time order)
  let found = null;
  for (const x of list) { if (rel(x.t) <= t) found = x; else break; }
  return found;
}

function updateNetwork(t) {
  const g = S.graph;
  const sample = stateAt(S.samples, t);
  const ocs = stateAt(S.ocs, t);
  const lit = new Set((ocs ? ocs.lit : []).map(([a, b]) => `${Math.min(a, b)}=${Math.max(a, b)}`));
  const dark = new Set(ocs ? ocs.dark : []);
  const fibreDark = new Set(Object.entries(g.fibres).filter(([p]) => dark.has(Number(p))).map(([, id]) => id));
  S.cy.batch(() => {
    for (const e of g.edges) {
      const el = S.cy.getElementById(e.id);
      if (e.kind === "circuit") {
        el.toggleClass("lit", lit.has(`${e.ocs_ports[0]}=${e.ocs_ports[1]}`));
        continue;
      }
      el.toggleClass("dark", fibreDark.has(e.id));
      el.toggleClass("plotted", S.plotted.has(e.id));
      const r = sample && sample.links[e.id];
      el.data("label", r ? `${r.forward.toFixed(1)} / ${r.back.toFixed(1)}${r.drops ? ` ✕${r.drops}` : ""}` : "");
    }
  });
  const versions = (sample && sample.versions) || {};
  const shadowAt = new Set();
  const rows = g.routes.map((r) => {
    const v = (versions[r.switch] || {})[r.path];
    if (v === 1) shadowAt.add(r.switch);
    const rides = v === undefined ? "?" : (v === 1 ? "shadow" : "active");
    return `<tr><td>${r.switch}</td><td>${r.path}</td><td>${r.hosts.join(" ")}</td><td class="${rides}">${rides}</td></tr>`;
  });
  $("routes").tBodies[0].innerHTML = rows.join("");
  S.cy.nodes("[kind='switch']").forEach((n) => n.toggleClass("shadow", shadowAt.has(n.id())));
  const circuits = g.edges.filter((e) => e.kind === "circuit").map((e) => {
    const on = lit.has(`${e.ocs_ports[0]}=${e.ocs_ports[1]}`);
    return `<li class="${on ? "lit" : "dark"}">${e.source}:${e.source_port} &harr; ${e.target}:${e.target_port} ` +
      `(OCS ${e.ocs_ports[0]}-${e.ocs_ports[1]}) ${on ? "lit" : "dark"}</li>`;
  });
  $("circuits").innerHTML = circuits.join("");
  const switches = g.nodes.filter((n) => n.kind === "switch").length;
  $("summary").textContent = `${switches} switches · ${lit.size} circuits lit · ${dark.size} OCS ports dark`;
  $("summary").dataset.switches = switches;
  $("summary").dataset.lit = lit.size;
}

// -- charts ------------------------------------------------------------------------------------------

function xRange() {
  return [0, Math.max(1, S.end)];  // every chart on one axis: from the page's t0 to the last record
}

function chart(name, title, series, height = CHART_HEIGHT, extra = {}) {
  const key = JSON.stringify(series.map((s) => s.label)) + height;
  if (S.charts[name] && S.chartKeys[name] === key) return S.charts[name];
  if (S.charts[name]) S.charts[name].destroy();
  const el = $(name);
  const opts = {
    title, width: el.clientWidth || 800, height,
    cursor: { sync: { key: "hitless" } },
    scales: { x: { time: false, auto: false, range: () => xRange() } },
    axes: [{ label: "s" }, {}],
    series: [{ label: "s", value: (u, v) => (v == null ? "-" : v.toFixed(2)) }, ...series],
    ...extra,
  };
  S.charts[name] = new uPlot(opts, [[], ...series.map(() => [])], el);
  S.chartKeys[name] = key;
  return S.charts[name];
}

function upTo(list, t) {
  return list.filter((x) => rel(x.t) <= t);
}

function plotRates(t) {
  const samples = upTo(S.samples, t);
  if (S.autoPlot) {
    const peak = new Map();
    for (const s of S.samples) {
      for (const [id, r] of Object.entries(s.links)) {
        const e = S.graph.edges.find((x) => x.id === id);
        if (e && e.kind === "link" && S.graph.nodes.find((n) => n.id === e.source && n.kind === "host")) continue;
        peak.set(id, Math.max(peak.get(id) || 0, r.forward, r.back));
      }
    }
    S.plotted = new Set([...peak.entries()].filter(([, v]) => v > 0.05).sort((a, b) => b[1] - a[1])
      .slice(0, MAX_PLOTTED_LINKS).map(([id]) => id));
  }
  const ids = [...S.plotted].sort();
  const series = ids.flatMap((id, i) => [
    { label: `${id} →`, stroke: COLORS[i % COLORS.length], width: 1.5, points: { show: false } },
    { label: `${id} ←`, stroke: COLORS[i % COLORS.length], width: 1, dash: [4, 3], points: { show: false } },
  ]);
  const u = chart("rates", "", series);
  u.setData([samples.map((s) => rel(s.t)),
    ...ids.flatMap((id) => [samples.map((s) => (s.links[id] ? s.links[id].forward : null)),
      samples.map((s) => (s.links[id] ? s.links[id].back : null))])]);
  const d = chart("drops", "", [{ label: "queue drops", stroke: "#cc3333", width: 1.5, points: { show: false } }], 110);
  d.setData([samples.map((s) => rel(s.t)), samples.map((s) => Object.values(s.links).reduce((a, r) => a + r.drops, 0))]);
}

function plotFlows(t) {
  const flows = Object.keys(S.flows).sort();
  $("no-flows").hidden = flows.length > 0;
  const metrics = [["flow-rate", "rate_mbit", "Mbit/s"], ["flow-rtt", "rtt_ms", "RTT ms"],
    ["flow-cwnd", "cwnd", "cwnd segments"], ["flow-retrans", "retrans", "retransmissions"]];
  for (const [name, field, title] of metrics) {
    $(name).hidden = flows.length === 0;
    if (!flows.length) continue;
    const points = flows.map((f) => upTo(S.flows[f], t));
    const xs = [...new Set(points.flat().map((p) => rel(p.t)))].sort((a, b) => a - b);
    const index = new Map(xs.map((x, i) => [x, i]));
    const ys = points.map((pts) => {
      const y = new Array(xs.length).fill(null);
      for (const p of pts) y[index.get(rel(p.t))] = p[field];
      return y;
    });
    const series = flows.map((f, i) => ({ label: `${f} ${title}`, stroke: COLORS[i % COLORS.length], width: 1.5,
      spanGaps: true, points: { show: false } }));
    chart(name, "", series, 120).setData([xs, ...ys]);
  }
}

// The timeline: one row per procedure, step, dark fibre and kind of instant, drawn as uPlot series
// whose value is the row's index while its span lasts (null elsewhere), on the rates' time axis.
function rowOf(span) {
  if (span.kind === "probe") return "probes";
  if (span.kind === "step" || span.kind === "failed" && span.lane === "steps") return `step ${span.label}`;
  if (span.kind === "procedure" || span.lane === "procedure") return `procedure ${span.label.split(" ")[0]}`;
  if (span.kind === "dark") return span.lane;
  if (span.kind === "ocs") return "OCS command";
  return "controller";
}

function plotTimeline(t) {
  const spans = [...S.spans.values()].filter((s) => rel(s.t) <= t).sort((a, b) => a.t - b.t);
  const rows = [];
  for (const s of spans) if (!rows.includes(rowOf(s))) rows.push(rowOf(s));
  const instant = (s) => s.t_end == null && !s.open;
  const end = (s) => (s.open || s.t_end == null ? t : Math.min(rel(s.t_end), t));
  const xsSet = new Set([0]);
  for (const s of spans) {
    xsSet.add(rel(s.t));
    if (!instant(s)) { xsSet.add(end(s)); xsSet.add(end(s) + 1e-6); }
  }
  const xs = [...xsSet].sort((a, b) => a - b);
  const ys = rows.map(() => new Array(xs.length).fill(null));
  for (const s of spans) {
    const r = rows.indexOf(rowOf(s));
    const a = rel(s.t);
    xs.forEach((x, i) => {
      if (instant(s) ? x === a : x >= a && x <= end(s)) ys[r][i] = r;
    });
  }
  const series = rows.map((row, i) => {
    const isInstant = spans.some((s) => rowOf(s) === row && instant(s));
    return { label: row, stroke: row.startsWith("dark") ? "#cc3333" : COLORS[i % COLORS.length], width: 8,
      ...(isInstant ? { paths: () => null, points: { show: true, size: 9 } } : { points: { show: false } }) };
  });
  const height = 60 + 22 * Math.max(rows.length, 1);
  const u = chart("timeline", "", series, height, {
    scales: { x: { time: false, auto: false, range: () => xRange() }, y: { auto: false, range: [-0.5, Math.max(rows.length, 1) - 0.5] } },
    axes: [{ label: "s" }, { size: 170, splits: () => rows.map((_, i) => i), values: (u2, splits) => splits.map((i) => rows[i] || "") }],
    legend: { show: true },
  });
  u.setData([xs, ...ys]);
  $("timeline").dataset.rows = JSON.stringify(rows);
  const last = spans.filter((s) => s.kind === "procedure").pop();
  const steps = last ? spans.filter((s) => s.lane === "steps" && s.kind !== "probe" && s.t >= last.t) : [];
  $("steps").tBodies[0].innerHTML = steps.map((s) => `<tr><td>${s.label}</td><td>${rel(s.t).toFixed(3)}</td>` +
    `<td>${s.t_end == null ? "…" : ((s.t_end - s.t) * 1000).toFixed(1)}</td></tr>`).join("");
}

// -- frames, rendering, replay -----------------------------------------------------------------------

function absorb(frame) {
  for (const s of frame.samples) S.samples.push(s);
  if (S.samples.length > MAX_SAMPLES) S.samples.splice(0, S.samples.length - MAX_SAMPLES);
  for (const s of frame.spans) S.spans.set(s.id, s);
  for (const o of frame.ocs) S.ocs.push(o);
  for (const [flow, pts] of Object.entries(frame.flows)) (S.flows[flow] = S.flows[flow] || []).push(...pts);
  S.dropped += frame.dropped;
  const times = [...frame.samples, ...frame.spans, ...frame.ocs].map((x) => Math.max(x.t, x.t_end || 0));
  for (const pts of Object.values(frame.flows)) times.push(...pts.map((p) => p.t));
  if (times.length) S.end = Math.max(S.end, rel(Math.max(...times)));
  if (S.status.mode === "replay") $("slider").max = S.end.toFixed(2);  // the slider reaches what arrived
}

// Live, the page draws at most twice a second (frames come four times a second): on the testbed's
// own cores a browser drawing every frame took 15% of a core (view/README.md). A hidden tab draws nothing.
const LIVE_RENDER_MS = 500;
let pending = false;
let lastRender = 0;
function scheduleRender() {
  if (pending) return;
  pending = true;
  const wait = S.status.mode === "live" ? Math.max(0, lastRender + LIVE_RENDER_MS - performance.now()) : 0;
  setTimeout(() => requestAnimationFrame(() => { pending = false; lastRender = performance.now(); render(); }), wait);
}
document.addEventListener("visibilitychange", () => { if (!document.hidden) scheduleRender(); });

function render() {
  if (!S.graph) return;
  const t = S.now === null ? S.end : S.now;
  updateNetwork(t);
  plotTimeline(t);
  plotRates(t);
  plotFlows(t);
  if (S.status.mode === "replay") {
    $("now").textContent = `${t.toFixed(2)} s of ${S.end.toFixed(2)} s`;
  }
}

function connect() {
  const sep = query ? "&" : "?";
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/frames${query}` +
    (token ? `${sep}token=${encodeURIComponent(token)}` : "");
  const ws = new WebSocket(url);
  const badge = $("connection");
  ws.onopen = () => { badge.textContent = S.status.mode === "live" ? "live" : "loaded"; badge.className = "badge ok"; };
  ws.onmessage = (m) => { absorb(JSON.parse(m.data)); scheduleRender(); };
  ws.onclose = (ev) => {
    badge.textContent = ev.reason || "disconnected";
    badge.className = "badge bad";
    if (S.status.mode === "live") setTimeout(connect, 2000);
  };
}

function setupReplay() {
  if (S.status.mode !== "replay") return;
  $("replay").hidden = false;
  S.now = 0;
  const picker = $("run");
  $("run-picker").hidden = S.status.runs.length < 2;
  picker.innerHTML = S.status.runs.map((r) => `<option${r === S.status.run ? " selected" : ""}>${r}</option>`).join("");
  picker.onchange = () => { location.search = `?run=${encodeURIComponent(picker.value)}${token ? `&token=${token}` : ""}`; };
  $("slider").oninput = (ev) => { S.now = Number(ev.target.value); render(); };
  let timer = null;
  $("play").onclick = () => {
    if (timer) { clearInterval(timer); timer = null; return; }
    if (S.now >= S.end) S.now = 0;
    timer = setInterval(() => {
      S.now = Math.min(S.end, S.now + 0.1);
      $("slider").value = S.now;
      render();
      if (S.now >= S.end) { clearInterval(timer); timer = null; }
    }, 100);
  };
}

function setupControls() {
  if (!S.status.control) return;
  $("controls").hidden = false;
  $("procedure").innerHTML = S.status.procedures.map((p) => `<option>${p}</option>`).join("");
  $("maps").innerHTML = Object.keys(S.graph.circuit_maps).map((m) => `<option value="${m}">`).join("") +
    '<option value="none">';
  const result = $("action-result");
  const act = async (question, path, body) => {
    if (!window.confirm(question)) return;
    result.className = "";
    result.textContent = "running…";
    try {
      const r = await api(path, body);
      result.textContent = r.line;
      result.className = r.ok ? "" : "error";
    } catch (err) {
      result.textContent = err.message;
      result.className = "error";
    }
  };
  $("procedure-form").onsubmit = (ev) => {
    ev.preventDefault();
    const body = { procedure: $("procedure").value, circuits: $("procedure-circuits").value.trim(),
      hold_s: Number($("hold").value) };
    act(`Run ${body.procedure} to circuits ${body.circuits}?`, "/api/procedure", body);
  };
  $("circuits-form").onsubmit = (ev) => {
    ev.preventDefault();
    const circuits = $("set-circuits").value.trim();
    act(`Set the OCS's circuits to ${circuits} (tables untouched)?`, "/api/circuits", { circuits });
  };
}

async function main() {
  try {
    S.status = await api(`/api/status${query}`);
    S.graph = await api(`/api/graph${query}`);
  } catch (err) {
    $("connection").textContent = err.message;
    $("connection").className = "badge bad";
    return;
  }
  $("mode").textContent = S.status.mode;
  $("source").textContent = S.status.run ? `${S.status.source} / ${S.status.run}` : S.status.source;
  drawGraph();
  setupControls();
  setupReplay();
  render();
  connect();
  window.addEventListener("resize", () => { for (const k of Object.keys(S.charts)) S.charts[k].setSize({ width: $(k).clientWidth, height: S.charts[k].height }); });
}

main();
