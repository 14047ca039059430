// Configure and save (NiFi-JSON flows), run control and the palette: NiFi's Configure dialog
// (Settings, Scheduling, Properties, Relationships), a connection's queue settings, the
// toolbar's Save / Discard, Add processor, and Run / Stop. Edits are held by the server until
// Save writes the flow definition; every answer lists the flow's problems, all of them.

import { api, send, el, openDialog, tabs } from "./util.js";
import { currentGroup, viewCentre } from "./canvas.js";

const SENSITIVE = "Sensitive value set";
let context = { app: null, reload: null };

function field(label, input) {
  return el("label", { class: "field" }, el("span", {}, label), input);
}

function input(name, value, attributes = {}) {
  return el("input", { name, value: value ?? "", "data-initial": value ?? "", ...attributes });
}

function changed(form) {
  const out = {};
  for (const node of form.querySelectorAll("input[name], select[name], textarea[name]")) {
    if (node.type === "checkbox") continue;
    if (node.value !== node.dataset.initial) out[node.name] = node.value;
  }
  return out;
}

export function showProblems(problems, dirty) {
  const holder = document.getElementById("edit-problems");
  if (!holder) return;
  holder.replaceChildren(...problems.map((p) => el("li", {}, p)));
  holder.hidden = problems.length === 0;
  const mark = document.getElementById("dirty");
  if (mark) mark.textContent = dirty ? "unsaved changes" : "";
}

async function apply(method, path, body, onDone) {
  try {
    const answer = await send(method, path, body);
    await context.reload();
    showProblems(answer.problems || [], answer.dirty);  // after the redraw: the page is settled
    if (onDone) onDone(answer);
    return answer;
  } catch (error) {
    showProblems([error.message], true);
    return null;
  }
}

// What a processor's connection can reach, as NiFi's canvas offers it: the components of its
// own group (not that group's input ports, which only feed it) and the input ports of its
// child groups ("group › port"); another group's components are not on its canvas.
function reachable(flow, component) {
  const here = component.group || "";
  const children = new Map((flow.process_groups || []).filter((g) => (g.parent || "") === here).map((g) => [g.id, g]));
  const own = flow.components.filter((c) => (c.group || "") === here && c.id !== component.id && c.kind !== "input_port")
    .map((c) => [c, shortName(c.name)]);
  const ports = flow.components.filter((c) => c.kind === "input_port" && children.has(c.group))
    .map((c) => [c, `${children.get(c.group).name} \u203a ${shortName(c.name)}`]);
  return [...own, ...ports];
}

export function configureProcessor(component) {
  const flow = context.app.flow;
  const settings = el("form", { class: "configure settings" },
    field("Name", input("name", component.name)),
    field("Enabled", el("select", { name: "state", "data-initial": component.state === "DISABLED" ? "DISABLED" : "ENABLED" },
      ["ENABLED", "DISABLED"].map((v) => el("option", { value: v, selected: (component.state === "DISABLED") === (v === "DISABLED") }, v)))),
    field("Comments", el("textarea", { name: "comments", "data-initial": component.comments || "" }, component.comments || "")));
  const s = component.scheduling;
  const scheduling = el("form", { class: "configure scheduling" },
    field("Scheduling Strategy", input("schedulingStrategy", s.scheduling_strategy)),
    field("Run Schedule", input("schedulingPeriod", s.run_schedule)),
    field("Concurrent Tasks", input("concurrentlySchedulableTaskCount", String(s.concurrent_tasks), { type: "number", min: 1 })),
    field("Penalty Duration", input("penaltyDuration", s.penalty_duration || "30 sec")),
    field("Yield Duration", input("yieldDuration", s.yield_duration || "1 sec")));
  const properties = el("form", { class: "configure properties" },
    el("table", { class: "grid" }, el("tbody", {}, component.properties.map((p) => el("tr", {},
      el("td", { class: p.required ? "required" : "" }, p.name, p.dynamic ? " (dynamic)" : ""),
      el("td", {}, p.sensitive
        ? input(p.name, "", { type: "password", placeholder: p.value === SENSITIVE ? SENSITIVE : "No value set", "data-property": "1", autocomplete: "off" })
        : input(p.name, p.value, { "data-property": "1", placeholder: p.value === null ? "No value set" : "" })))))),
    el("div", { class: "add-property" }, input("new-property", "", { placeholder: "new property name", "data-skip": "1" }),
      input("new-value", "", { placeholder: "value", "data-skip": "1" })));
  const relationships = el("form", { class: "configure relationships" },
    (component.relationships || []).map((r) => el("label", { class: "field" },
      el("input", { type: "checkbox", name: r.name, checked: r.auto_terminate, disabled: r.connected }),
      ` ${r.name}`, r.connected ? el("span", { class: "muted" }, " (connected)") : " auto-terminate")),
    el("h4", {}, "Connect to"),
    el("select", { name: "connect-to", "data-skip": "1" }, el("option", { value: "" }, "\u2013"),
      reachable(flow, component).map(([c, label]) => el("option", { value: c.id }, label))),
    el("button", { type: "button", class: "connect", onclick: () => {
      const target = relationships.querySelector("select[name='connect-to']").value;
      const chosen = [...relationships.querySelectorAll("input[type=checkbox]")].filter((b) => b.checked && !b.disabled).map((b) => b.name);
      if (target) apply("POST", "/api/connections", { source: component.id, destination: target, relationships: chosen.length ? chosen : [component.relationships[0].name] }, () => document.getElementById("dialog").close());
    } }, "Connect (checked relationships)"));
  const save = async () => {
    const body = {};
    const first = changed(settings);
    if ("name" in first) body.name = first.name;
    if ("comments" in first) body.comments = first.comments;
    if ("state" in first) body.state = first.state;
    for (const [key, value] of Object.entries(changed(scheduling))) {
      body[key] = key === "concurrentlySchedulableTaskCount" ? Number(value) : value;
    }
    const props = {};
    for (const node of properties.querySelectorAll("input[data-property]")) {
      if (node.value !== node.dataset.initial) props[node.name] = node.value === "" && node.type !== "password" ? null : node.value;
    }
    const name = properties.querySelector("input[name='new-property']").value;
    if (name) props[name] = properties.querySelector("input[name='new-value']").value;
    if (Object.keys(props).length) body.properties = props;
    const terminated = [...relationships.querySelectorAll("input[type=checkbox]")].filter((b) => b.checked && !b.disabled).map((b) => b.name);
    const before = (component.relationships || []).filter((r) => r.auto_terminate).map((r) => r.name);
    if (terminated.sort().join() !== before.sort().join()) body.autoTerminatedRelationships = terminated;
    const answer = await apply("PUT", `/api/processors/${encodeURIComponent(component.id)}`, body);
    if (answer) document.getElementById("dialog").close();
  };
  openDialog(`Configure Processor: ${component.name} (${component.type})`, el("div", {},
    tabs([["Settings", () => settings], ["Scheduling", () => scheduling], ["Properties", () => properties], ["Relationships", () => relationships]]),
    el("div", { class: "actions" },
      el("button", { id: "apply", class: "primary", onclick: save }, "Apply"),
      el("button", { id: "delete-processor", onclick: async () => {
        if (await apply("DELETE", `/api/processors/${encodeURIComponent(component.id)}`, {})) document.getElementById("dialog").close();
      } }, "Delete"),
      el("button", { onclick: () => document.getElementById("dialog").close() }, "Cancel"))), { wide: true });
}

export function configureConnection(connection) {
  const form = el("form", { class: "configure connection" },
    field("Name", input("name", connection.name || "")),
    field("FlowFile Expiration", input("flowFileExpiration", connection.flowfile_expiration)),
    field("Back Pressure Object Threshold", input("backPressureObjectThreshold", String(connection.back_pressure_object_threshold), { type: "number", min: 0 })),
    field("Back Pressure Data Size Threshold", input("backPressureDataSizeThreshold", connection.back_pressure_data_size_threshold)),
    field("Prioritizers (comma separated)", input("prioritizers", connection.prioritizers.join(", "))));
  const save = async () => {
    const body = changed(form);
    if ("backPressureObjectThreshold" in body) body.backPressureObjectThreshold = Number(body.backPressureObjectThreshold);
    if ("prioritizers" in body) body.prioritizers = body.prioritizers.split(",").map((p) => p.trim()).filter(Boolean);
    if (await apply("PUT", `/api/connections/${encodeURIComponent(connection.id)}`, body)) document.getElementById("dialog").close();
  };
  openDialog("Configure Connection", el("div", {}, form, el("div", { class: "actions" },
    el("button", { class: "primary", onclick: save }, "Apply"),
    el("button", { id: "delete-connection", onclick: async () => {
      if (await apply("DELETE", `/api/connections/${encodeURIComponent(connection.id)}`, {})) document.getElementById("dialog").close();
    } }, "Delete"))));
}

export async function deleteConnection(connection) {
  return apply("DELETE", `/api/connections/${encodeURIComponent(connection.id)}`, {});
}

// A box dropped at a new place: NiFi's position, in its group's coordinates.
export async function moveTo(item, to) {
  return apply("PUT", `/api/positions/${encodeURIComponent(item.id)}`, to);
}

function shortName(name) {
  return name.includes("/") ? name.slice(name.lastIndexOf("/") + 1) : name;
}

// The ports a connection to or from a child group's box may use (NiFi asks which one).
function groupPorts(group, kind) {
  return context.app.flow.components.filter((c) => c.group === group.id && c.kind === kind);
}

// NiFi's "Create Connection": the source's relationships to choose (a processor's), the
// child group's port when an end is a group box, a name; Add sends it.
export function createConnection(source, target) {
  const ports = (item, kind) => {
    if (item.kind !== "group") return null;
    const choices = groupPorts(item, kind);
    return el("select", { name: kind === "input_port" ? "to-port" : "from-port" },
      choices.map((p) => el("option", { value: p.id }, shortName(p.name))));
  };
  const fromPort = ports(source, "output_port");
  const toPort = ports(target, "input_port");
  if ((fromPort && !fromPort.options.length) || (toPort && !toPort.options.length)) {
    showProblems([`${(fromPort ? source : target).name} has no ${fromPort ? "output" : "input"} port to connect: add one in the group first`], true);
    return;
  }
  const relationships = source.kind === "processor" ? source.relationships || [] : [];
  const form = el("form", { class: "configure create-connection" },
    field("From", fromPort ? el("span", {}, `${source.name} › `, fromPort) : el("span", {}, shortName(source.name))),
    field("To", toPort ? el("span", {}, `${target.name} › `, toPort) : el("span", {}, shortName(target.name))),
    field("Name", input("name", "")),
    relationships.length ? el("h4", {}, "For relationships") : null,
    relationships.map((r) => el("label", { class: "field" },
      el("input", { type: "checkbox", name: r.name, class: "relationship", checked: relationships.length === 1 }), ` ${r.name}`,
      r.connected ? el("span", { class: "muted" }, " (connected already)") : null)));
  const add = async () => {
    const chosen = [...form.querySelectorAll("input.relationship")].filter((b) => b.checked).map((b) => b.name);
    if (relationships.length && !chosen.length) {
      showProblems(["choose at least one relationship for the connection"], true);
      return;
    }
    const body = {
      source: fromPort ? fromPort.value : source.id,
      destination: toPort ? toPort.value : target.id,
      relationships: chosen,
      name: form.querySelector("input[name='name']").value,
    };
    if (await apply("POST", "/api/connections", body)) document.getElementById("dialog").close();
  };
  openDialog("Create Connection", el("div", {}, form, el("div", { class: "actions" },
    el("button", { id: "add-connection", class: "primary", onclick: add }, "Add"),
    el("button", { onclick: () => document.getElementById("dialog").close() }, "Cancel"))));
}

function showRun(state) {
  const line = document.getElementById("run-control-state");
  if (!line) return;
  const last = state.output.length ? ` \u00b7 ${state.output[state.output.length - 1]}` : "";
  line.textContent = state.running
    ? `${state.stopping ? "stopping" : "running"} (${state.mode}, pid ${state.pid})${last}`
    : state.pid ? `last run exited ${state.exit_status}${last}` : "";
  document.getElementById("run-stop").disabled = !state.running;
  document.getElementById("run-once").disabled = state.running;
  document.getElementById("run-continuous").disabled = state.running;
}

async function pollRun() {
  const state = await api("/api/run");
  showRun(state);
  if (state.running) setTimeout(pollRun, 1000);
}

async function runAction(method, path, body) {
  try { showRun(await send(method, path, body)); setTimeout(pollRun, 500); } catch (error) {
    document.getElementById("run-control-state").textContent = error.message;
  }
}

export async function setUpEditing(app, reload) {
  context = { app, reload };
  const tools = document.getElementById("edit-tools");
  const runs = el("span", { class: "run-control" },
    el("button", { id: "run-once", title: "flowcore run FLOW (a batch run)", onclick: () => runAction("POST", "/api/run", {}) }, "Run once"),
    el("button", { id: "run-continuous", title: "flowcore run FLOW --continuous", onclick: () => runAction("POST", "/api/run", { continuous: true }) }, "Start"),
    el("button", { id: "run-stop", title: "stop after the current micro-batch", disabled: true, onclick: () => runAction("POST", "/api/run/stop", {}) }, "Stop"),
    el("span", { id: "run-control-state", class: "muted" }));
  if (app.flow.read_only) { tools.replaceChildren(); return; }
  if (!app.flow.editable) {
    tools.replaceChildren(runs, el("a", { id: "convert", href: "/api/flow/convert", download: "", title: "flowcore convert --to nifi: edit the downloaded file with flowcore ui" }, "Convert to a flow definition"));
  } else {
    const palette = await api("/api/palette");
    const select = el("select", { id: "palette" }, palette.types.map((t) => el("option", { value: t }, t)));
    tools.replaceChildren(runs,
      el("span", { class: "palette" }, select, el("button", { id: "add-processor", onclick: () => apply("POST", "/api/processors", { type: select.value, group: currentGroup(), position: viewCentre() }) }, "Add processor")),
      el("button", { id: "save-flow", class: "primary", onclick: () => apply("POST", "/api/flow/save", {}) }, "Save"),
      el("button", { id: "discard-flow", onclick: () => apply("POST", "/api/flow/discard", {}) }, "Discard"),
      el("span", { id: "dirty", class: "dirty" }));
    showProblems(app.flow.problems || [], app.flow.dirty);
  }
  showRun(await api("/api/run"));
}
