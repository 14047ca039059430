// The content viewer, as NiFi's: original, formatted (JSON and XML pretty-printed, CSV as a
// table) and hex, with a download link. The API sends the first 4 MB for viewing. Avro and
// Parquet are read by the server (`?records=1`) and shown as a table of records, with the
// NiFi record types in its header, and as formatted JSON (NiFi's Avro view).

import { el, bytes } from "./util.js";

const HEX_LIMIT = 64 * 1024; // bytes shown in hex (the download has all)

function decode(data) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch (_) {
    return null;
  }
}

function prettyXml(text) {
  const doc = new DOMParser().parseFromString(text, "application/xml");
  if (doc.getElementsByTagName("parsererror").length) return null;
  const lines = [];
  const walk = (node, depth) => {
    const pad = "  ".repeat(depth);
    if (node.nodeType === Node.TEXT_NODE) {
      const t = node.textContent.trim();
      if (t) lines.push(pad + t);
      return;
    }
    if (node.nodeType === Node.COMMENT_NODE) { lines.push(`${pad}<!--${node.textContent}-->`); return; }
    if (node.nodeType !== Node.ELEMENT_NODE) return;
    const attrs = Array.from(node.attributes).map((a) => ` ${a.name}="${a.value}"`).join("");
    const kids = Array.from(node.childNodes).filter(
      (c) => c.nodeType !== Node.TEXT_NODE || c.textContent.trim());
    if (!kids.length) { lines.push(`${pad}<${node.nodeName}${attrs}/>`); return; }
    if (kids.length === 1 && kids[0].nodeType === Node.TEXT_NODE) {
      lines.push(`${pad}<${node.nodeName}${attrs}>${kids[0].textContent.trim()}</${node.nodeName}>`);
      return;
    }
    lines.push(`${pad}<${node.nodeName}${attrs}>`);
    kids.forEach((c) => walk(c, depth + 1));
    lines.push(`${pad}</${node.nodeName}>`);
  };
  walk(doc.documentElement, 0);
  return lines.join("\n");
}

function splitCsvLine(line) {
  const cells = [];
  let cell = "", quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') { cell += '"'; i++; }
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") { cells.push(cell); cell = ""; }
    else cell += ch;
  }
  cells.push(cell);
  return cells;
}

function csvTable(text) {
  const lines = text.split(/\r?\n/).filter((l) => l.length);
  if (lines.length < 1) return null;
  const rows = lines.slice(0, 1000).map(splitCsvLine);
  const width = rows[0].length;
  if (width < 2 || rows.some((r) => r.length !== width)) return null;
  return el("table", { class: "grid csv" },
    el("thead", {}, el("tr", {}, rows[0].map((c) => el("th", {}, c)))),
    el("tbody", {}, rows.slice(1).map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))));
}

function hexDump(data) {
  const shown = data.subarray(0, HEX_LIMIT);
  const lines = [];
  for (let offset = 0; offset < shown.length; offset += 16) {
    const chunk = shown.subarray(offset, offset + 16);
    const hex = Array.from(chunk, (b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(chunk, (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  if (data.length > HEX_LIMIT) lines.push(`... ${bytes(data.length - HEX_LIMIT)} more`);
  return lines.join("\n");
}

const AVRO_TYPES = ["avro/binary", "application/avro-binary", "application/avro+binary", "application/avro"];
const PARQUET_TYPES = ["application/parquet", "application/vnd.apache.parquet", "application/x-parquet"];

// "Avro" or "Parquet" when the content is one (its magic, else its mime.type), or null.
function recordKind(data, mime) {
  const head = String.fromCharCode(...data.subarray(0, 4));
  if (head === "Obj\x01") return "Avro";
  if (head === "PAR1") return "Parquet";
  const media = (mime || "").split(";")[0].trim().toLowerCase();
  if (AVRO_TYPES.includes(media)) return "Avro";
  if (PARQUET_TYPES.includes(media)) return "Parquet";
  return null;
}

function recordTable(view) {
  const cell = (value) => el("td", {}, value === null ? el("em", { class: "muted" }, "null") : value);
  return el("div", { class: "records", style: "max-height: 55vh; overflow: auto" },
    el("table", { class: "grid records" },
      el("thead", {}, el("tr", {}, view.columns.map((c) =>
        el("th", { title: c.type }, c.name, el("br"), el("span", { class: "muted type" }, c.type))))),
      el("tbody", {}, view.rows.map((r) => el("tr", {}, r.map(cell))))));
}

// The record modes for Avro or Parquet content: [value, label, render] entries, and the
// viewer's one line about them (what is not shown, or why nothing is).
async function recordModes(url, kind) {
  let view;
  try {
    const response = await fetch(`${url}${url.includes("?") ? "&" : "?"}records=1`, { credentials: "same-origin" });
    view = await response.json();
    if (!response.ok) return [[], view.error || response.statusText];
  } catch (error) {
    return [[], `the ${kind} records could not be read: ${error.message}`];
  }
  if (!view.columns.length) return [[], view.message];
  return [[
    ["records", `formatted (${kind} records)`, () => recordTable(view)],
    ["json", `formatted (${kind} as JSON)`, () => el("pre", { class: "content" }, view.json)],
  ], view.message];
}

// What "formatted" shows for this content: [kind, Node] or null when it is plain text.
function formatted(text, filename, mime) {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[") || /json/.test(mime || "")) {
    try { return ["JSON", el("pre", { class: "content" }, JSON.stringify(JSON.parse(text), null, 2))]; }
    catch (_) { /* JSON lines, or not JSON */ }
  }
  if (trimmed.startsWith("<")) {
    const xml = prettyXml(text);
    if (xml !== null) return ["XML", el("pre", { class: "content" }, xml)];
  }
  if (/\.csv$/i.test(filename || "") || /csv/.test(mime || "") || text.includes(",")) {
    const table = csvTable(text);
    if (table) return ["CSV", table];
  }
  return null;
}

export async function contentViewer(url, { filename = "", mime = "", size = null } = {}) {
  const holder = el("div", { class: "viewer" }, "Loading content\u2026");
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) {
    let text = response.statusText;
    try { text = (await response.json()).error; } catch (_) { /* not JSON */ }
    holder.replaceChildren(el("p", { class: "error" }, text));
    return holder;
  }
  const data = new Uint8Array(await response.arrayBuffer());
  const text = decode(data);
  const modes = [];
  const kind = recordKind(data, mime);
  let note = null;
  if (kind !== null) {
    const [recordViews, line] = await recordModes(url, kind);
    modes.push(...recordViews);
    if (line) note = el("p", { class: recordViews.length ? "muted record-note" : "error record-note" }, line);
  }
  if (text !== null) {
    const pretty = formatted(text, filename, mime);
    modes.push(["formatted", pretty ? `formatted (${pretty[0]})` : "formatted (text)",
      () => (pretty ? pretty[1] : el("pre", { class: "content" }, text))]);
    modes.push(["original", "original", () => el("pre", { class: "content" }, text)]);
  }
  modes.push(["hex", "hex", () => el("pre", { class: "content hex" }, hexDump(data))]);
  const body = el("div", { class: "viewer-body" });
  const select = el("select", {
    class: "view-as",
    onchange: () => body.replaceChildren(modes.find((m) => m[0] === select.value)[2]()),
  }, modes.map(([value, label]) => el("option", { value }, label)));
  const download = el("a", { href: `${url}${url.includes("?") ? "&" : "?"}download=1`, class: "button", download: filename || "content" }, "Download");
  const shown = size !== null && size > data.length ? ` (first ${bytes(data.length)} of ${bytes(size)})` : ` (${bytes(data.length)})`;
  holder.replaceChildren(
    el("div", { class: "viewer-bar" }, el("label", {}, "View as ", select), el("span", { class: "muted" }, shown), download),
    note, body);
  body.append(modes[0][2]());
  return holder;
}
