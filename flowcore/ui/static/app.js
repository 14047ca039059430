// The page: loads the flow, draws the canvas, follows the run's status over server-sent
// events, and switches between the canvas, provenance and the bulletin board.

import { api, el, time, count, bytes } from "./util.js";
import { drawCanvas, updateCanvas, setWindow } from "./canvas.js";
import { showProcessor, showConnection, listQueue } from "./panel.js";
import { setUpProvenance } from "./provenance.js";
import { setUpEditing, configureProcessor, configureConnection, deleteConnection, moveTo, createConnection } from "./editor.js";
import { showServices } from "./services.js";

const app = { flow: null, status: null, bulletins: [] };

function showView(name) {
  for (const view of document.querySelectorAll(".view")) view.hidden = view.id !== `view-${name}`;
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.view === name);
  if (name === "bulletins") loadBulletins();
}

async function loadBulletins() {
  app.bulletins = await api("/api/bulletins?limit=200");
  document.querySelector("#bulletin-board tbody").replaceChildren(...app.bulletins.slice().reverse().map((b) =>
    el("tr", {}, el("td", {}, time(b.time)), el("td", {}, b.level), el("td", {}, b.component_name), el("td", {}, b.message))));
}

function showStatus(status) {
  app.status = status;
  updateCanvas(status);
  const run = status.run || {};
  const badge = document.getElementById("run-state");
  if (status.live) {
    badge.textContent = `running (pid ${run.pid}, ${run.runner}${run.continuous ? ", continuous" : ""}, micro-batch ${(status.micro_batch || {}).number || 0})`;
    badge.className = "run-state live";
  } else if (run.ended) {
    badge.textContent = `not running: last run ended ${time(run.ended)}`;
    badge.className = "run-state";
  } else if (status.updated) {
    badge.textContent = "not running";
    badge.className = "run-state";
  } else {
    badge.textContent = "no run yet";
    badge.className = "run-state";
  }
  document.getElementById("updated").textContent = status.updated ? `status of ${time(status.updated)}` : "";
  const queued = Object.values(status.connections);
  document.getElementById("totals").textContent =
    `${count(queued.reduce((a, c) => a + c.queued_count, 0))} queued (${bytes(queued.reduce((a, c) => a + c.queued_bytes, 0))})`;
}

function configureButton(onclick) {
  const head = document.querySelector("#panel .panel-head");
  if (app.flow.editable && head) head.after(el("div", { class: "actions" }, el("button", { id: "configure", onclick }, "Configure")));
}

function select(what) {
  app.selected = what;
  if (what.component) {
    showProcessor(what.component, app.status, app.bulletins);
    if (what.component.kind === "processor") configureButton(() => configureProcessor(what.component));
  } else if (what.connection) {
    showConnection(what.connection, app.flow, app.status);
    configureButton(() => configureConnection(what.connection));
    const actions = document.querySelector("#panel .actions");
    if (app.flow.editable && actions) {
      actions.append(el("button", { id: "delete-connection-panel", title: "delete this connection (the Delete key too)", onclick: () => deleteConnection(what.connection) }, "Delete"));
    }
    if (what.listQueue && what.connection.durable) listQueue(what.connection, app.flow);
  }
}

const handlers = {
  onSelect: select,
  onMove: (item, to) => moveTo(item, to),
  onConnect: (source, target) => createConnection(source, target),
  onEnter: () => { document.getElementById("panel").hidden = true; app.selected = null; },
};

// After an edit: the flow as the server now holds it, drawn again.
async function reload() {
  app.flow = await api("/api/flow");
  document.getElementById("panel").hidden = true;
  app.selected = null;
  drawCanvas(app.flow, handlers);
  if (app.status) updateCanvas(app.status);
}

function follow() {
  const source = new EventSource("/api/events");
  source.addEventListener("status", (e) => showStatus(JSON.parse(e.data)));
  source.onerror = () => { document.getElementById("updated").textContent = "status stream lost; retrying\u2026"; };
}

async function main() {
  const [flow, status, bulletins] = await Promise.all(
    [api("/api/flow"), api("/api/status"), api("/api/bulletins?limit=200")]);
  performance.mark("flowcore:data");
  app.flow = flow;
  app.bulletins = bulletins;
  document.getElementById("flow-name").textContent = app.flow.name + (app.flow.read_only ? " (from the repository's record)" : "");
  document.title = `${app.flow.name} \u00b7 flowcore`;
  drawCanvas(app.flow, handlers);
  performance.mark("flowcore:drawn");
  showStatus(status);
  performance.mark("flowcore:status");
  setUpProvenance();
  await setUpEditing(app, reload);
  document.getElementById("window").onchange = (e) => setWindow(e.target.value);
  document.getElementById("services").onclick = () => showServices(app);
  document.getElementById("services").hidden = app.flow.read_only;
  window.addEventListener("keydown", (e) => {
    const typing = e.target.closest && e.target.closest("input, textarea, select");
    const open = [...document.querySelectorAll("dialog")].some((d) => d.open);
    if ((e.key === "Delete" || e.key === "Backspace") && !typing && !open && app.flow.editable && app.selected && app.selected.connection) {
      e.preventDefault();
      deleteConnection(app.selected.connection);
    }
  });
  window.addEventListener("hashchange", () => showView(location.hash.slice(1) || "canvas"));
  showView(location.hash.slice(1) || "canvas");
  follow();
  document.body.dataset.ready = "1";
}

main().catch((error) => {
  document.body.prepend(el("p", { class: "error banner" }, `flowcore ui: ${error.message}`));
});
