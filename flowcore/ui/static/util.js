// What every page shares: fetching the API, formatting, small DOM helpers, dialogs.

export async function api(path) {
  const response = await fetch(path, { credentials: "same-origin" });
  if (!response.ok) {
    let text = `${response.status} ${response.statusText}`;
    try { text = (await response.json()).error || text; } catch (_) { /* not JSON */ }
    throw new Error(text);
  }
  return response.json();
}

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";

export function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) if (child) node.append(child);
  return node;
}

// NiFi's byte units: "24 bytes", "1.5 KB".
export function bytes(size) {
  if (size === null || size === undefined) return "";
  if (size < 1024) return `${size} bytes`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = size / 1024;
  for (const unit of units) {
    if (value < 1024 || unit === "TB") return `${value.toFixed(2)} ${unit}`;
    value /= 1024;
  }
  return `${size} bytes`;
}

export function count(n) {
  return (n || 0).toLocaleString("en-US");
}

// NiFi's durations in listings: HH:MM:SS.mmm
export function duration(ms) {
  const total = Math.max(0, Math.floor(ms || 0));
  const h = Math.floor(total / 3600000);
  const m = Math.floor((total % 3600000) / 60000);
  const s = Math.floor((total % 60000) / 1000);
  const pad = (v, n = 2) => String(v).padStart(n, "0");
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(total % 1000, 3)}`;
}

export function time(ms) {
  if (!ms) return "";
  return new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC");
}

export function openDialog(title, body, { second = false, wide = false } = {}) {
  const dialog = document.getElementById(second ? "dialog2" : "dialog");
  const holder = document.getElementById(second ? "dialog2-body" : "dialog-body");
  dialog.classList.toggle("wide", wide);
  holder.replaceChildren(
    el("div", { class: "dialog-title" }, el("span", { text: title }),
      el("button", { class: "close", title: "close", onclick: () => dialog.close() }, "\u00d7")),
    body,
  );
  if (!dialog.open) dialog.showModal();
  return dialog;
}

export function tabs(entries) {
  // entries: [[label, () => Node]]; the first is shown.
  const bar = el("div", { class: "tabs" });
  const body = el("div", { class: "tab-body" });
  const buttons = entries.map(([label, make], index) => {
    const button = el("button", {
      type: "button",
      class: index === 0 ? "tab active" : "tab",
      onclick: () => {
        buttons.forEach((b) => b.classList.remove("active"));
        button.classList.add("active");
        body.replaceChildren(make());
      },
    }, label);
    return button;
  });
  bar.append(...buttons);
  body.append(entries[0][1]());
  return el("div", { class: "tabbed" }, bar, body);
}

export function attributeTable(attributes, previous) {
  const rows = Object.keys(attributes).sort().map((name) => {
    const value = attributes[name];
    const before = previous ? previous[name] : undefined;
    const changed = previous && before !== value;
    return el("tr", { class: changed ? "changed" : null },
      el("td", { class: "name" }, name),
      el("td", { class: "value" }, value),
      previous ? el("td", { class: "value previous" }, before === undefined ? "(not set)" : before) : null);
  });
  const head = el("tr", {}, el("th", {}, "Attribute"), el("th", {}, previous ? "Value after" : "Value"),
    previous ? el("th", {}, "Value before") : null);
  return el("table", { class: "grid attributes" }, el("thead", {}, head), el("tbody", {}, rows));
}

// A write to the API (JSON, which a page of another site cannot send without CORS's preflight).
export async function send(method, path, body = {}) {
  const response = await fetch(path, {
    method, credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  let answer = {};
  try { answer = await response.json(); } catch (_) { /* no body */ }
  if (!response.ok) throw new Error(answer.error || `${response.status} ${response.statusText}`);
  return answer;
}
