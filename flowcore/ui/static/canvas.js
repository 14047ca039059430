// The canvas: processors as NiFi's boxes, ports, funnels, process groups (double-click to
// enter one; the breadcrumb leads back), connections with their queues and a back-pressure
// bar, stages (flowcore's plan) as frames; pan, zoom and fit. Positions come from the API
// (NiFi's own in each group, or Graphviz's layout): nothing is laid out here. On an editable
// flow a box is dragged to move it and its connector (the arrow on its right edge) is dragged
// onto another box to connect them, as on NiFi's canvas.

import { svg, el, count, bytes } from "./util.js";

const LABEL_W = 240;
const state = {
  scale: 1, x: 40, y: 40, flow: null, status: null, mids: new Map(), group: "", window: "five",
  handlers: {}, drawnGroup: null,
};
const refs = { processors: new Map(), connections: new Map() };

function centre(c) {
  return { x: c.position.x + c.size.width / 2, y: c.position.y + c.size.height / 2 };
}

// Where the line from a's centre towards b leaves a's box.
function border(c, towards) {
  const m = centre(c);
  const dx = towards.x - m.x, dy = towards.y - m.y;
  if (!dx && !dy) return m;
  const hw = c.size.width / 2, hh = c.size.height / 2;
  const t = Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity);
  return { x: m.x + dx * t, y: m.y + dy * t };
}

function stateIcon(value) {
  return { RUNNING: "\u25b6", STOPPED: "\u25a0", DISABLED: "\u2298", INVALID: "\u26a0" }[value] || "\u25a0";
}

function processorBox(c) {
  const { x, y } = c.position;
  const { width: w, height: h } = c.size;
  const g = svg("g", { class: `processor state-${c.state.toLowerCase()}`, "data-id": c.id, transform: `translate(${x},${y})` });
  if (c.kind === "input_port" || c.kind === "output_port") {
    g.setAttribute("class", `port ${c.kind}`);
    g.append(svg("rect", { width: w, height: h, class: "port-body" }),
      svg("text", { x: 14, y: h / 2 + 6, class: "port-icon", text: c.kind === "input_port" ? "\u21e5" : "\u21a6" }),
      svg("text", { x: 40, y: h / 2 + 5, class: "name", text: shortName(c.name) }),
      svg("title", { text: `${c.kind === "input_port" ? "Input" : "Output"} Port ${c.name}` }));
    return { g, texts: {} };
  }
  if (c.kind === "funnel") {
    g.setAttribute("class", "funnel");
    g.append(svg("rect", { width: w, height: h, rx: 6, class: "funnel-body" }),
      svg("path", { d: `M10 12 L${w - 10} 12 L${w / 2 + 5} ${h - 12} L${w / 2 - 5} ${h - 12} Z`, class: "funnel-icon" }),
      svg("title", { text: c.name }));
    return { g, texts: {} };
  }
  const stat = (label, row) => {
    const yy = 58 + row * 17;
    const value = svg("text", { x: 92, y: yy, class: `stat-value stat-${label.toLowerCase().replace(/[^a-z]/g, "")}` });
    return [svg("text", { x: 10, y: yy, class: "stat-label", text: label }), value, null, value];
  };
  const rows = [stat("In", 0), stat("Read/Write", 1), stat("Out", 2), stat("Tasks/Time", 3)];
  const stateText = svg("text", { x: 14, y: 30, class: "run-icon", text: stateIcon(c.state) });
  g.append(
    svg("rect", { width: w, height: h, class: "box" }),
    svg("rect", { width: w, height: 40, class: "box-head" }),
    svg("rect", { x: 0, y: 0, width: 4, height: h, class: "box-edge" }),
    stateText,
    svg("text", { x: 40, y: 18, class: "name", text: shortName(c.name) }),
    svg("text", { x: 40, y: 33, class: "type", text: c.type + (c.source ? "  (source)" : "") }),
    ...rows.map((r) => r.slice(0, 2)).flat(),
    svg("title", { text: `${c.name} (${c.type}): ${c.state}${c.validation_errors.length ? "\n" + c.validation_errors.join("\n") : ""}` }),
  );
  if (c.validation_errors.length) {
    g.append(svg("text", { x: w - 12, y: 24, class: "invalid-mark", "text-anchor": "end", text: "\u26a0" }));
  }
  g.append(svg("text", { x: w - 10, y: h - 8, class: "stat-window", "text-anchor": "end", text: "" }));
  return { g, texts: { g, state: stateText, in: rows[0][3], rw: rows[1][3], out: rows[2][3], tasks: rows[3][3], window: g.lastChild } };
}

// A component's name on its group's canvas: the group path (Ingest/...) is the breadcrumb's.
function shortName(name) {
  return name.includes("/") ? name.slice(name.lastIndexOf("/") + 1) : name;
}

// A child process group as NiFi draws it: a larger box with its name and what it holds.
function groupBox(group, flow) {
  const { x, y } = group.position;
  const { width: w, height: h } = group.size;
  const inside = new Set([group.id]);
  for (const other of flow.process_groups) if (inside.has(other.parent)) inside.add(other.id);
  const members = flow.components.filter((c) => inside.has(c.group));
  const processors = members.filter((c) => c.kind === "processor").length;
  const ports = members.filter((c) => c.kind.endsWith("_port") && c.group === group.id);
  const g = svg("g", { class: "process-group", "data-id": group.id, transform: `translate(${x},${y})` },
    svg("rect", { width: w, height: h, class: "group-body" }),
    svg("rect", { width: w, height: 40, class: "box-head" }),
    svg("text", { x: 14, y: 26, class: "name", text: group.name }),
    svg("text", { x: 14, y: 66, class: "stat-label", text: `${processors} processor${processors === 1 ? "" : "s"}` }),
    svg("text", { x: 14, y: 84, class: "stat-label", text: `${ports.filter((p) => p.kind === "input_port").length} input, ${ports.filter((p) => p.kind === "output_port").length} output ports` }),
    svg("text", { x: 14, y: h - 12, class: "stat-window", text: "double-click to enter" }),
    svg("title", { text: `Process Group ${group.name}` }));
  return g;
}

// What a connection end is on the canvas of the current group: the component itself, or the
// child group box that holds it (a child's port), or nothing (another group's).
function endOnCanvas(id, flow, byId, groups) {
  const c = byId.get(id);
  if (!c) return null;
  if (c.group === state.group) return c;
  let group = c.group;
  while (group && groups.has(group)) {
    const g = groups.get(group);
    if (g.parent === state.group) return g;
    group = g.parent;
  }
  return null;
}

// Where a connection's label sits: the middle of the line (beside it for parallel ones), or
// right of a box for a self-loop.
function labelPoint(connection, index, siblings, ends) {
  const [a, b] = ends.get(connection.id);
  if (a === b) return { x: a.position.x + a.size.width + 150, y: centre(a).y };
  const ca = centre(a), cb = centre(b);
  const dx = cb.x - ca.x, dy = cb.y - ca.y, len = Math.hypot(dx, dy) || 1;
  const bend = (index - (siblings - 1) / 2) * 70;
  return { x: (ca.x + cb.x) / 2 - (dy / len) * bend, y: (ca.y + cb.y) / 2 + (dx / len) * bend };
}

// Labels that would overlap are pushed apart sideways (fan-outs from one box meet there).
function separate(points, height) {
  const list = [...points.values()];
  for (let pass = 0; pass < 8; pass++) {
    let moved = false;
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const p = list[i], q = list[j];
        const overlapX = LABEL_W + 12 - Math.abs(p.x - q.x);
        if (overlapX > 0 && Math.abs(p.y - q.y) < height) {
          const sign = p.x <= q.x ? -1 : 1;
          p.x += (sign * overlapX) / 2;
          q.x -= (sign * overlapX) / 2;
          moved = true;
        }
      }
    }
    if (!moved) return;
  }
}

function connectionShape(connection, mid, ends) {
  const [a, b] = ends.get(connection.id);
  const g = svg("g", { class: `connection ${connection.durable ? "durable" : "pipelined"}`, "data-id": connection.id });
  let path;
  if (a === b) {
    const m = centre(a);
    const top = a.position.y;
    path = `M${a.position.x + a.size.width} ${m.y - 30} C ${mid.x} ${top - 60}, ${mid.x} ${top + a.size.height + 60}, ${a.position.x + a.size.width} ${m.y + 30}`;
  } else {
    const from = border(a, mid), to = border(b, mid);
    path = `M${from.x} ${from.y} L${mid.x} ${mid.y} L${to.x} ${to.y}`;
  }
  const relationships = connection.relationships.join(", ");
  const lines = [connection.name, relationships].filter(Boolean);
  const h = 20 + lines.length * 15 + 26;
  const label = svg("g", { class: "connection-label", transform: `translate(${mid.x - LABEL_W / 2},${mid.y - h / 2})` });
  const queued = svg("text", { x: 10, y: 20 + lines.length * 15, class: "queued" });
  const fill = svg("rect", { x: 10, y: h - 14, width: 0, height: 6, class: "bp-fill" });
  label.append(
    svg("rect", { width: LABEL_W, height: h, class: "label-box" }),
    ...lines.map((line, i) => svg("text", { x: 10, y: 16 + i * 15, class: i === lines.length - 1 ? "rel" : "cname", text: line })),
    queued,
    svg("rect", { x: 10, y: h - 14, width: LABEL_W - 20, height: 6, class: "bp-track" }),
    fill,
    svg("title", { text: `${relationships}\n${connection.durable ? "durable queue: " + connection.durable_reasons.join(", ") : "pipelined (FlowFiles pass by reference inside one task)"}` }),
  );
  g.append(svg("path", { d: path, class: "line", "marker-end": "url(#arrow)" }), label);
  return { g, texts: { queued, fill } };
}

function stageFrames(flow, byId) {
  const layer = svg("g", { id: "stage-layer", class: "stages" });
  for (const stage of flow.stages) {
    const members = stage.members.map((m) => byId.get(m)).filter((c) => c && c.group === state.group);
    if (!members.length) continue;
    const x0 = Math.min(...members.map((c) => c.position.x)) - 24;
    const y0 = Math.min(...members.map((c) => c.position.y)) - 34;
    const x1 = Math.max(...members.map((c) => c.position.x + c.size.width)) + 24;
    const y1 = Math.max(...members.map((c) => c.position.y + c.size.height)) + 20;
    layer.append(svg("g", { class: "stage", "data-id": stage.id },
      svg("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 12 }),
      svg("text", { x: x0 + 12, y: y0 + 18, text: `${stage.id}${stage.inputs.length ? "" : " (sources)"}` })));
  }
  return layer;
}

function applyTransform() {
  document.getElementById("viewport").setAttribute("transform", `translate(${state.x},${state.y}) scale(${state.scale})`);
}

// What the current group's canvas shows: its components and child groups (boxes).
function shown() {
  const flow = state.flow;
  return [
    ...flow.components.filter((c) => c.group === state.group),
    ...flow.process_groups.filter((g) => g.parent === state.group),
  ];
}

// The drawing's extent, from the positions (no layout read: getBBox would lay out every text).
function extent() {
  const xs = [], ys = [];
  for (const c of shown()) {
    xs.push(c.position.x - 30, c.position.x + c.size.width + 30);
    ys.push(c.position.y - 40, c.position.y + c.size.height + 30);
  }
  for (const mid of state.mids.values()) {
    xs.push(mid.x - LABEL_W / 2, mid.x + LABEL_W / 2);
    ys.push(mid.y - 40, mid.y + 40);
  }
  if (!xs.length) return { x: 0, y: 0, width: 0, height: 0 };
  const x = Math.min(...xs), y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

export function fit() {
  const box = extent();
  const area = document.getElementById("canvas").getBoundingClientRect();
  if (!box.width || !area.width) return;
  state.scale = Math.min(2, Math.max(0.02, Math.min((area.width - 60) / box.width, (area.height - 60) / box.height)));
  state.x = (area.width - box.width * state.scale) / 2 - box.x * state.scale;
  state.y = (area.height - box.height * state.scale) / 2 - box.y * state.scale;
  applyTransform();
}

function zoomAt(factor, cx, cy) {
  const next = Math.min(4, Math.max(0.05, state.scale * factor));
  state.x = cx - ((cx - state.x) * next) / state.scale;
  state.y = cy - ((cy - state.y) * next) / state.scale;
  state.scale = next;
  applyTransform();
}

// A pointer's place in the drawing's coordinates (those of the positions).
function toDrawing(e) {
  const r = document.getElementById("canvas").getBoundingClientRect();
  return { x: (e.clientX - r.left - state.x) / state.scale, y: (e.clientY - r.top - state.y) / state.scale };
}

// What is being dragged: the canvas (pan), a box (move) or a connector (a new connection).
let drag = null;

function enablePanZoom(canvas) {
  canvas.addEventListener("mousedown", (e) => {
    if (e.button !== 0) return;
    const connector = e.target.closest(".connector");
    const box = e.target.closest(".processor, .funnel, .port, .process-group");
    if (connector && box) {
      const item = itemOf(box);
      const line = svg("path", { class: "new-connection", d: "" });
      document.getElementById("viewport").append(line);
      drag = { kind: "connect", item, line };
      e.preventDefault();
    } else if (box) {
      if (!state.flow.editable) return;
      const item = itemOf(box);
      const at = toDrawing(e);
      drag = { kind: "move", item, box, dx: at.x - item.position.x, dy: at.y - item.position.y, moved: false };
    } else if (!e.target.closest(".connection-label")) {
      drag = { kind: "pan", x: e.clientX - state.x, y: e.clientY - state.y };
      canvas.classList.add("panning");
    }
  });
  window.addEventListener("mousemove", (e) => {
    if (!drag) return;
    if (drag.kind === "pan") {
      state.x = e.clientX - drag.x;
      state.y = e.clientY - drag.y;
      applyTransform();
    } else if (drag.kind === "move") {
      const at = toDrawing(e);
      const x = Math.round(at.x - drag.dx), y = Math.round(at.y - drag.dy);
      if (Math.abs(x - drag.item.position.x) + Math.abs(y - drag.item.position.y) > 3) drag.moved = true;
      if (drag.moved) {
        drag.to = { x, y };
        drag.box.setAttribute("transform", `translate(${x},${y})`);
      }
    } else {
      const at = toDrawing(e);
      const from = centre(drag.item);
      drag.line.setAttribute("d", `M${from.x} ${from.y} L${at.x} ${at.y}`);
    }
  });
  window.addEventListener("mouseup", (e) => {
    const done = drag;
    drag = null;
    canvas.classList.remove("panning");
    if (!done) return;
    if (done.kind === "move" && done.moved) {
      state.suppressClick = true;
      setTimeout(() => { state.suppressClick = false; }, 0);
      if (state.handlers.onMove) state.handlers.onMove(done.item, done.to);
    } else if (done.kind === "connect") {
      done.line.remove();
      const target = document.elementFromPoint(e.clientX, e.clientY);
      const box = target && target.closest("#canvas .processor, #canvas .funnel, #canvas .port, #canvas .process-group");
      if (box && state.handlers.onConnect) state.handlers.onConnect(done.item, itemOf(box));
    }
  });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = canvas.getBoundingClientRect();
    zoomAt(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  document.getElementById("fit").onclick = fit;
  document.getElementById("zoom-in").onclick = () => { const r = canvas.getBoundingClientRect(); zoomAt(1.25, r.width / 2, r.height / 2); };
  document.getElementById("zoom-out").onclick = () => { const r = canvas.getBoundingClientRect(); zoomAt(0.8, r.width / 2, r.height / 2); };
}

// The component or group a drawn box stands for.
function itemOf(box) {
  const id = box.dataset.id;
  if (box.classList.contains("process-group")) {
    return { ...state.flow.process_groups.find((g) => g.id === id), kind: "group" };
  }
  return state.flow.components.find((c) => c.id === id);
}

// The breadcrumb: the flow, then each group down to the one shown; a click goes back up.
function breadcrumb(flow) {
  const holder = document.getElementById("breadcrumb");
  if (!holder) return;
  const groups = new Map(flow.process_groups.map((g) => [g.id, g]));
  const path = [];
  for (let id = state.group; id && groups.has(id); id = groups.get(id).parent) path.unshift(groups.get(id));
  const crumbs = [el("a", { href: "#canvas", "data-group": "", onclick: (e) => { e.preventDefault(); enterGroup(""); } }, flow.name)];
  for (const g of path) {
    crumbs.push(" \u203a ", el("a", { href: "#canvas", "data-group": g.id, onclick: (e) => { e.preventDefault(); enterGroup(g.id); } }, g.name));
  }
  holder.replaceChildren(...crumbs);
}

export function currentGroup() {
  return state.group;
}

// The centre of what the window shows, in the drawing's coordinates (where a new box goes).
export function viewCentre() {
  const r = document.getElementById("canvas").getBoundingClientRect();
  return { x: Math.round((r.width / 2 - state.x) / state.scale - 176), y: Math.round((r.height / 2 - state.y) / state.scale - 64) };
}

export function enterGroup(id) {
  state.group = id;
  if (state.handlers.onEnter) state.handlers.onEnter(id);
  drawCanvas(state.flow, state.handlers);
  if (state.status) updateCanvas(state.status);
}

// Draw the current group's canvas. handlers: onSelect({component} | {connection}),
// and on an editable flow onMove(item, {x, y}) and onConnect(source, target).
export function drawCanvas(flow, handlers) {
  state.flow = flow;
  state.handlers = handlers;
  const groups = new Map(flow.process_groups.map((g) => [g.id, g]));
  if (state.group && !groups.has(state.group)) state.group = "";
  const canvas = document.getElementById("canvas");
  canvas.classList.toggle("editable", Boolean(flow.editable));
  const viewport = document.getElementById("viewport");
  const byId = new Map(flow.components.map((c) => [c.id, c]));
  const defs = svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" },
    svg("path", { d: "M0 0 L10 5 L0 10 z", class: "arrow" })));
  const stages = stageFrames(flow, byId);
  stages.style.display = document.getElementById("stages").checked ? "" : "none";
  const lines = svg("g", { class: "connections" });
  const boxes = svg("g", { class: "components" });
  const ends = new Map();
  for (const c of flow.connections) {
    if ((c.group || "") !== state.group) continue;
    const a = endOnCanvas(c.source, flow, byId, groups), b = endOnCanvas(c.destination, flow, byId, groups);
    if (a && b) ends.set(c.id, [a, b]);
  }
  const pairs = new Map();
  for (const c of flow.connections) {
    if (!ends.has(c.id)) continue;
    const [a, b] = ends.get(c.id);
    const key = [a.id, b.id].sort().join("\u0000");
    pairs.set(key, [...(pairs.get(key) || []), c]);
  }
  const mids = new Map();
  for (const group of pairs.values()) {
    group.forEach((connection, index) => mids.set(connection.id, labelPoint(connection, index, group.length, ends)));
  }
  separate(mids, 70);
  state.mids = mids;
  refs.connections.clear();
  refs.processors.clear();
  for (const connection of flow.connections) {
    if (!ends.has(connection.id)) continue;
    const shape = connectionShape(connection, mids.get(connection.id), ends);
    shape.g.querySelector(".connection-label").addEventListener("click", () => handlers.onSelect({ connection }));
    shape.g.addEventListener("contextmenu", (e) => { e.preventDefault(); handlers.onSelect({ connection, listQueue: true }); });
    refs.connections.set(connection.id, shape.texts);
    lines.append(shape.g);
  }
  const connector = (w, h) => svg("g", { class: "connector" },
    svg("circle", { cx: w - 14, cy: h / 2, r: 11 }), svg("path", { d: `M${w - 20} ${h / 2} L${w - 8} ${h / 2} M${w - 12} ${h / 2 - 4} L${w - 8} ${h / 2} L${w - 12} ${h / 2 + 4}` }),
    svg("title", { text: "drag onto another component to connect" }));
  for (const group of flow.process_groups.filter((g) => g.parent === state.group)) {
    const box = groupBox(group, flow);
    box.addEventListener("dblclick", () => enterGroup(group.id));
    if (flow.editable) box.append(connector(group.size.width, group.size.height));
    boxes.append(box);
  }
  for (const c of flow.components) {
    if (c.group !== state.group) continue;
    const box = processorBox(c);
    box.g.addEventListener("click", () => { if (!state.suppressClick) handlers.onSelect({ component: c }); });
    if (flow.editable) box.g.append(connector(c.size.width, c.size.height));
    refs.processors.set(c.id, box.texts);
    boxes.append(box.g);
  }
  viewport.replaceChildren(defs, stages, boxes, lines);  // labels above boxes, as NiFi draws them
  document.getElementById("stages").onchange = (e) => {
    document.getElementById("stage-layer").style.display = e.target.checked ? "" : "none";
  };
  breadcrumb(flow);
  if (!canvas.dataset.ready) { enablePanZoom(canvas); canvas.dataset.ready = "1"; }
  if (state.drawnGroup !== state.group) fit();  // an edit redraws where the user looks
  state.drawnGroup = state.group;
}

// Which counts the boxes show: NiFi's last five minutes ("five") or this run's ("run").
export function setWindow(which) {
  state.window = which;
  if (state.status) updateCanvas(state.status);
}

export function updateCanvas(status) {
  state.status = status;
  const five = state.window === "five";
  for (const [id, texts] of refs.processors) {
    const s = status.processors[id];
    if (!s || !texts.in) continue;
    const w = (five && s.window) || null;
    if (w) {
      texts.in.textContent = `${count(w.in_count)} (${bytes(w.in_bytes)})`;
      texts.rw.textContent = `${bytes(w.read_bytes)} / ${bytes(w.written_bytes)}`;
      texts.out.textContent = `${count(w.out_count)} (${bytes(w.out_bytes)})`;
      texts.tasks.textContent = `${count(w.tasks)} / ${w.tasks_duration}`;
      texts.window.textContent = "5 min";
    } else {
      texts.in.textContent = `${count(s.in_count)} (${bytes(s.in_bytes)})`;
      texts.rw.textContent = s.read_bytes === undefined ? "\u2013" : `${bytes(s.read_bytes)} / ${bytes(s.written_bytes)}`;
      texts.out.textContent = `${count(s.out_count)} (${bytes(s.out_bytes)})`;
      texts.tasks.textContent = `${count(s.tasks)} / ${s.tasks_duration}`;
      texts.window.textContent = "this run";
    }
    texts.state.textContent = stateIcon(s.state);
    const wanted = `processor state-${s.state.toLowerCase()}`;
    if (texts.g.getAttribute("class") !== wanted) texts.g.setAttribute("class", wanted);
  }
  for (const [id, texts] of refs.connections) {
    const s = status.connections[id];
    if (!s) continue;
    texts.queued.textContent = `Queued ${count(s.queued_count)} (${bytes(s.queued_bytes)})`;
    const track = LABEL_W - 20;
    texts.fill.setAttribute("width", String((track * s.back_pressure_fill) / 100));
    texts.fill.setAttribute("class", `bp-fill ${s.back_pressure_fill >= 100 || s.over_back_pressure ? "full" : s.back_pressure_fill >= 60 ? "high" : ""}`);
  }
}
