// The side panel (a processor's configuration and status, a connection's settings), NiFi's
// "List queue" table, and the FlowFile dialog with its content viewer.

import { api, el, bytes, count, duration, time, openDialog, tabs, attributeTable } from "./util.js";
import { contentViewer } from "./viewer.js";

function table(headers, rows) {
  return el("table", { class: "grid" },
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))));
}

function pairs(entries) {
  return el("dl", { class: "pairs" }, entries.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v ?? "")]));
}

export function showProcessor(component, status, bulletins) {
  const panel = document.getElementById("panel");
  const s = (status && status.processors[component.id]) || {};
  const mine = bulletins.filter((b) => b.component_name === component.name || b.component_id === component.id);
  const body = tabs([
    ["Properties", () => table(["Property", "Value"], component.properties.map((p) => [
      el("span", { class: p.required ? "required" : "" }, p.name, p.dynamic ? " (dynamic)" : ""),
      p.value === null ? el("span", { class: "muted" }, "No value set") : el("span", { class: p.sensitive ? "sensitive" : "" }, p.value),
    ]))],
    ["Scheduling", () => pairs([
      ["Scheduling Strategy", component.scheduling.scheduling_strategy],
      ["Run Schedule", component.scheduling.run_schedule],
      ["Concurrent Tasks", component.scheduling.concurrent_tasks],
      ["Penalty Duration", component.scheduling.penalty_duration || "engine default (30 sec)"],
      ["Yield Duration", component.scheduling.yield_duration || "engine default (1 sec)"],
    ])],
    ["Relationships", () => table(["Relationship", "Connected", "Auto-terminate", "FlowFiles (this run)"],
      (component.relationships || []).map((r) => {
        const sent = (s.relationships || {})[r.name] || [0, 0];
        return [r.name, r.connected ? "yes" : "", r.auto_terminate ? "yes" : "", `${count(sent[0])} (${bytes(sent[1])})`];
      }))],
    ["Status", () => {
      const w = s.window || {};
      const five = (status && status.five_minutes) || {};
      const since = five.complete ? "5 min" : five.start ? `since ${time(five.start)}` : "5 min";
      return el("div", {},
        pairs([["Run state", s.state || component.state], ["Stage", component.stage || ""]]),
        el("table", { class: "grid stats", id: "processor-stats" },
          el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", {}, `Last ${since}`), el("th", {}, "This run"))),
          el("tbody", {},
            el("tr", {}, el("td", {}, "In"), el("td", {}, `${count(w.in_count)} (${bytes(w.in_bytes || 0)})`), el("td", {}, `${count(s.in_count)} (${bytes(s.in_bytes || 0)})`)),
            el("tr", {}, el("td", {}, "Read"), el("td", {}, bytes(w.read_bytes || 0)), el("td", {}, "\u2013")),
            el("tr", {}, el("td", {}, "Written"), el("td", {}, bytes(w.written_bytes || 0)), el("td", {}, "\u2013")),
            el("tr", {}, el("td", {}, "Out"), el("td", {}, `${count(w.out_count)} (${bytes(w.out_bytes || 0)})`), el("td", {}, `${count(s.out_count)} (${bytes(s.out_bytes || 0)})`)),
            el("tr", {}, el("td", {}, "Tasks (stage runs)"), el("td", {}, count(w.tasks)), el("td", {}, count(s.tasks))),
            el("tr", {}, el("td", {}, "Time"), el("td", {}, w.tasks_duration || "\u2013"), el("td", {}, s.tasks_duration || "\u2013")))),
        el("p", { class: "muted" }, "The 5-minute window is this run's counts now less five minutes ago; Read and Written are summed from the window's provenance events. Time is the time this processor's tasks ran, its own share of its stage's (HH:MM:SS.mmm)."));
    }],
    ["Bulletins", () => (mine.length
      ? table(["Time", "Level", "Message"], mine.map((b) => [time(b.time), b.level, b.message]))
      : el("p", { class: "muted" }, "No bulletins"))],
  ]);
  panel.replaceChildren(
    el("div", { class: "panel-head" },
      el("div", {}, el("div", { class: "panel-title" }, component.name), el("div", { class: "muted" }, `${component.type} \u00b7 ${s.state || component.state}`)),
      el("button", { class: "close", onclick: () => { panel.hidden = true; } }, "\u00d7")),
    el("ul", { class: "problems" }, component.validation_errors.map((p) => el("li", {}, p))),
    body);
  panel.hidden = false;
}

export function showConnection(connection, flow, status) {
  const panel = document.getElementById("panel");
  const names = new Map(flow.components.map((c) => [c.id, c.name]));
  const s = (status && status.connections[connection.id]) || {};
  panel.replaceChildren(
    el("div", { class: "panel-head" },
      el("div", {}, el("div", { class: "panel-title" }, connection.name || connection.relationships.join(", ")),
        el("div", { class: "muted" }, `${names.get(connection.source)} \u2192 ${names.get(connection.destination)}`)),
      el("button", { class: "close", onclick: () => { panel.hidden = true; } }, "\u00d7")),
    el("div", { class: "actions" },
      el("button", { id: "list-queue", onclick: () => listQueue(connection, flow), disabled: !connection.durable }, "List queue"),
      connection.durable ? null : el("span", { class: "muted" }, " pipelined: FlowFiles never wait here")),
    pairs([
      ["Relationships", connection.relationships.join(", ")],
      ["Queued", `${count(s.queued_count)} (${bytes(s.queued_bytes || 0)})`],
      ["Penalized / in bins", `${count(s.penalized)} / ${count(s.in_bins)}`],
      ["Carried (this run)", `${count(s.carried_count)} (${bytes(s.carried_bytes || 0)})`],
      ["Durable", connection.durable ? `yes: ${connection.durable_reasons.join(", ")}` : "no (pipelined)"],
      ["Back Pressure Object Threshold", count(connection.back_pressure_object_threshold)],
      ["Back Pressure Data Size Threshold", connection.back_pressure_data_size_threshold],
      ["Back pressure fill", `${s.back_pressure_fill ?? 0} %`],
      ["FlowFile Expiration", connection.flowfile_expiration],
      ["Prioritizers", connection.prioritizers.join(", ") || "FIFO (default)"],
      ["Load Balance Strategy", connection.load_balance_strategy],
    ]));
  panel.hidden = false;
}

export async function listQueue(connection, flow, offset = 0) {
  const names = new Map(flow.components.map((c) => [c.id, c.name]));
  const title = `${connection.relationships.join(", ")} (${names.get(connection.source)} \u2192 ${names.get(connection.destination)})`;
  const holder = el("div", { class: "queue-listing" }, "Listing\u2026");
  openDialog(`Queue: ${title}`, holder, { wide: true });
  const page = await api(`/api/connections/${encodeURIComponent(connection.id)}/flowfiles?offset=${offset}&limit=100`);
  const rows = page.flowfiles.map((f) => el("tr", { class: "flowfile-row", "data-uuid": f.uuid },
    el("td", {}, el("button", { class: "info", title: "view details", onclick: () => showFlowFile(f.uuid) }, "i")),
    el("td", {}, f.position), el("td", { class: "mono" }, f.uuid), el("td", {}, f.filename),
    el("td", {}, bytes(f.size)), el("td", {}, duration(f.queued_duration_ms)),
    el("td", {}, duration(f.lineage_duration_ms)), el("td", {}, f.penalized ? "Yes" : "No")));
  const shown = page.flowfiles.length;
  holder.replaceChildren(
    el("p", { class: "summary" }, `Displaying ${count(shown)} of ${count(page.total_flowfiles)} (${bytes(page.total_bytes)})`,
      offset > 0 ? el("button", { onclick: () => listQueue(connection, flow, Math.max(0, offset - 100)) }, "Previous") : null,
      offset + shown < page.total_flowfiles ? el("button", { onclick: () => listQueue(connection, flow, offset + 100) }, "Next") : null),
    el("table", { class: "grid", id: "queue-table" },
      el("thead", {}, el("tr", {}, ["", "Position", "UUID", "Filename", "File Size", "Queued Duration", "Lineage Duration", "Penalized"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)));
}

export async function showFlowFile(uuid) {
  const flowfile = await api(`/api/flowfiles/${encodeURIComponent(uuid)}`);
  const url = `/api/flowfiles/${encodeURIComponent(uuid)}/content`;
  const details = () => el("div", {},
    pairs([
      ["UUID", flowfile.uuid], ["Filename", flowfile.filename], ["File Size", bytes(flowfile.size)],
      ["Queue", flowfile.queue], ["Entry Date", time(flowfile.entry_date)],
      ["Lineage Start Date", time(flowfile.lineage_start_date)],
      ["Penalized", flowfile.penalty_expiration > Date.now() ? `until ${time(flowfile.penalty_expiration)}` : "No"],
      ["Content Claim", flowfile.content_claim || "(no content)"],
    ]));
  const content = () => {
    const slot = el("div", { class: "content-slot" });
    contentViewer(url, { filename: flowfile.filename, mime: flowfile.attributes["mime.type"], size: flowfile.size })
      .then((node) => slot.replaceChildren(node));
    return slot;
  };
  openDialog(`FlowFile ${flowfile.filename}`, tabs([
    ["Details", details],
    ["Attributes", () => attributeTable(flowfile.attributes)],
    ["Content", content],
  ]), { second: true, wide: true });
}
