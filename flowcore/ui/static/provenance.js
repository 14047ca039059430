// Provenance: NiFi's search form and results table, event details (attributes before and
// after, content in and out with the viewer) and the lineage graph, grown by expanding
// FlowFiles. The lineage's layout is Graphviz's, computed by the API.

import { api, send, el, svg, bytes, time, openDialog, tabs, attributeTable } from "./util.js";
import { contentViewer } from "./viewer.js";

const TYPES = ["CREATE", "RECEIVE", "FETCH", "SEND", "UPLOAD", "REMOTE_INVOCATION", "DOWNLOAD", "DROP",
  "EXPIRE", "FORK", "JOIN", "CLONE", "CONTENT_MODIFIED", "ATTRIBUTES_MODIFIED", "ROUTE", "ADDINFO", "REPLAY", "UNKNOWN"];

export function setUpProvenance() {
  const form = document.getElementById("prov-form");
  const select = form.elements.type;
  TYPES.forEach((t) => select.append(el("option", { value: t }, t)));
  form.addEventListener("submit", (e) => { e.preventDefault(); search(); });
}

export async function search() {
  const form = document.getElementById("prov-form");
  const params = new URLSearchParams();
  for (const name of ["component", "type", "uuid", "filename", "attribute", "limit"]) {
    const value = form.elements[name].value.trim();
    if (value) params.set(name, value);
  }
  for (const name of ["start", "end"]) {
    const value = form.elements[name].value;
    if (value) params.set(name, String(new Date(value).getTime()));
  }
  const summary = document.getElementById("prov-summary");
  const body = document.querySelector("#prov-results tbody");
  summary.textContent = "Searching\u2026";
  try {
    const { events } = await api(`/api/provenance?${params}`);
    summary.textContent = `Displaying ${events.length} event(s)`;
    body.replaceChildren(...events.map((e) => el("tr", { class: "event-row", "data-event": e.event_id },
      el("td", {}, el("button", { class: "info", title: "view details", onclick: () => showEvent(e.event_id) }, "i")),
      el("td", {}, time(e.event_time)), el("td", {}, e.event_type), el("td", { class: "mono" }, e.flowfile_uuid),
      el("td", {}, e.attributes.filename || ""), el("td", {}, bytes(e.file_size)),
      el("td", {}, e.component_name || e.component_id), el("td", {}, e.component_type),
      el("td", {}, el("button", { class: "lineage", title: "show lineage", onclick: () => showLineage(e.flowfile_uuid) }, "Lineage")))));
  } catch (error) {
    summary.textContent = error.message;
    body.replaceChildren();
  }
}

export async function showEvent(eventId, { second = false } = {}) {
  const e = await api(`/api/provenance/${eventId}`);
  const contentTab = () => {
    const holder = el("div", { class: "content-io" });
    for (const which of ["input", "output"]) {
      const claim = which === "input" ? e.previous_content_claim : e.content_claim;
      const size = which === "input" ? e.previous_file_size : e.file_size;
      const available = e.content_available[which];
      const slot = el("div", { class: "content-slot" });
      holder.append(el("h4", {}, which === "input" ? "Input claim" : "Output claim"),
        el("p", { class: "mono muted" }, claim || "(none)"),
        claim && available
          ? el("button", { class: `view-${which}`, onclick: async () => slot.replaceChildren(await contentViewer(`/api/content/${e.event_id}/${which}`, { filename: e.attributes.filename, mime: e.attributes["mime.type"], size })) }, `View ${which}`)
          : el("p", { class: "muted" }, claim ? "The content is no longer held (archive aged off)" : ""),
        slot);
    }
    return holder;
  };
  const replayed = el("span", { class: "replay-result muted" });
  const replay = el("div", { class: "actions" },
    el("button", { id: "replay", title: "flowcore provenance replay: the FlowFile back in its queue, as it was before this event", onclick: async () => {
      try { replayed.textContent = (await send("POST", `/api/provenance/${e.event_id}/replay`, {})).message; } catch (error) { replayed.textContent = error.message; }
    } }, "Replay"), replayed);
  openDialog(`Provenance Event ${e.event_id}`, el("div", {}, replay, tabs([
    ["Details", () => el("dl", { class: "pairs" }, [
      ["Time", time(e.event_time)], ["Event Duration", e.event_duration >= 0 ? `${e.event_duration} ms` : "No value set"],
      ["Lineage Duration", `${Math.max(0, e.event_time - e.lineage_start_date)} ms`], ["Type", e.event_type],
      ["FlowFile UUID", e.flowfile_uuid], ["File Size", bytes(e.file_size)], ["Component Id", e.component_id],
      ["Component Name", e.component_name], ["Component Type", e.component_type],
      ["Relationship", e.relationship || ""], ["Details", e.details || ""], ["Transit URI", e.transit_uri || ""],
      ["Parent FlowFiles", e.parent_uuids.join(", ")], ["Child FlowFiles", e.child_uuids.join(", ")],
    ].flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]))],
    ["Attributes", () => attributeTable(e.attributes, e.previous_attributes)],
    ["Content", contentTab],
  ])), { second, wide: true });
}

export async function showLineage(uuid) {
  const expanded = new Set();
  const holder = el("div", { class: "lineage-holder" }, "Computing lineage\u2026");
  openDialog(`Lineage of FlowFile ${uuid}`, holder, { wide: true });
  const draw = async () => {
    const doc = await api(`/api/lineage/${encodeURIComponent(uuid)}?expand=${[...expanded].join(",")}`);
    const picture = svg("svg", { id: "lineage", width: doc.width, height: doc.height, viewBox: `0 0 ${doc.width} ${doc.height}` });
    const at = new Map(doc.nodes.map((n) => [n.id, n]));
    picture.append(svg("defs", {}, svg("marker", { id: "lineage-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M0 0 L10 5 L0 10 z" }))));
    for (const edge of doc.edges) {
      const a = at.get(edge.source), b = at.get(edge.target);
      const shorten = b.kind === "event" ? 16 : 12;
      const len = Math.hypot(b.x - a.x, b.y - a.y) || 1;
      picture.append(svg("line", { x1: a.x, y1: a.y, x2: b.x - ((b.x - a.x) / len) * shorten, y2: b.y - ((b.y - a.y) / len) * shorten, class: "lineage-edge", "marker-end": "url(#lineage-arrow)" }));
    }
    for (const node of doc.nodes) {
      if (node.kind === "event") {
        picture.append(svg("g", { class: "lineage-event", "data-event": node.event_id, transform: `translate(${node.x},${node.y})`, onclick: () => showEvent(node.event_id, { second: true }) },
          svg("rect", { x: -68, y: -16, width: 136, height: 32, rx: 4 }),
          svg("text", { y: -2, "text-anchor": "middle", text: node.event_type }),
          svg("text", { y: 11, "text-anchor": "middle", class: "small", text: node.component || "" }),
          svg("title", { text: `event ${node.event_id}: ${node.event_type} by ${node.component} at ${time(node.time)}` })));
      } else {
        const cls = `lineage-flowfile${node.marked ? " marked" : ""}${node.more ? " more" : ""}`;
        picture.append(svg("g", { class: cls, "data-uuid": node.id, transform: `translate(${node.x},${node.y})`,
          onclick: () => { if (node.more) { expanded.add(node.id); draw(); } } },
        svg("circle", { r: 11 }), svg("text", { y: 4, "text-anchor": "middle", text: node.more ? "+" : "" }),
        svg("title", { text: `FlowFile ${node.id}${node.more ? "\nclick to expand its parents and children" : ""}` })));
      }
    }
    holder.replaceChildren(el("p", { class: "muted" }, `${doc.nodes.filter((n) => n.kind === "event").length} event(s) shown; a FlowFile marked + has more: click it to expand its parents and children; click an event for its details.`), picture);
  };
  try { await draw(); } catch (error) { holder.replaceChildren(el("p", { class: "error" }, error.message)); }
}
