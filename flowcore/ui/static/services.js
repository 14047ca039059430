// NiFi's "Controller Services" tab of the group shown: name, type, bundle, state, scope and
// the components that reference each service; on an editable flow each one's Configure dialog
// (Settings, Properties: a sensitive one an empty password field that keeps its value when
// left empty). Sensitive values never come from the server: it sends "Sensitive value set".

import { api, send, el, openDialog, tabs } from "./util.js";
import { currentGroup } from "./canvas.js";
import { showProblems } from "./editor.js";

const SENSITIVE = "Sensitive value set";

export async function showServices(app) {
  const group = currentGroup();
  const answer = await api(`/api/services?group=${encodeURIComponent(group)}`);
  const names = new Map(app.flow.process_groups.map((g) => [g.id, g.name]));
  const rows = answer.services.map((s) => el("tr", { class: "service-row", "data-id": s.id },
    el("td", {}, s.name), el("td", {}, s.type), el("td", { class: "muted" }, `${s.bundle.artifact || ""} ${s.bundle.version || ""}`),
    el("td", {}, s.state), el("td", {}, s.inherited ? s.scope : "this group"),
    el("td", {}, s.referencing_components.map((c) => c.name).join(", ") || el("span", { class: "muted" }, "none")),
    el("td", {}, answer.editable ? el("button", { class: "configure-service", title: "configure", onclick: () => configureService(app, s) }, "Configure") : null)));
  openDialog(`Controller Services: ${group ? names.get(group) : app.flow.name}`, el("div", {},
    answer.services.length ? null : el("p", { class: "muted" }, "No controller services"),
    el("table", { class: "grid", id: "services-table" },
      el("thead", {}, el("tr", {}, ["Name", "Type", "Bundle", "State", "Scope", "Referencing Components", ""].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)),
    answer.editable ? null : el("p", { class: "muted" }, "Read-only: a Python flow's services as its conversion writes them.")), { wide: true });
}

function configureService(app, service) {
  const settings = el("form", { class: "configure settings" },
    el("label", { class: "field" }, el("span", {}, "Name"), el("input", { name: "name", value: service.name, "data-initial": service.name })),
    el("label", { class: "field" }, el("span", {}, "State"),
      el("select", { name: "state", "data-initial": service.state }, ["ENABLED", "DISABLED"].map((v) => el("option", { value: v, selected: v === service.state }, v)))),
    el("label", { class: "field" }, el("span", {}, "Comments"), el("textarea", { name: "comments", "data-initial": service.comments }, service.comments)));
  const properties = el("form", { class: "configure properties" },
    el("table", { class: "grid" }, el("tbody", {}, service.properties.map((p) => el("tr", {},
      el("td", {}, p.display_name, p.dynamic ? " (dynamic)" : ""),
      el("td", {}, p.sensitive
        ? el("input", { name: p.name, type: "password", value: "", "data-initial": "", "data-property": "1", autocomplete: "off", placeholder: p.value === SENSITIVE ? SENSITIVE : "No value set" })
        : el("input", { name: p.name, value: p.value ?? "", "data-initial": p.value ?? "", "data-property": "1", placeholder: p.value === null ? "No value set" : "" })))))));
  const apply = async () => {
    const body = {};
    for (const node of settings.querySelectorAll("[name]")) if (node.value !== node.dataset.initial) body[node.name] = node.value;
    const props = {};
    for (const node of properties.querySelectorAll("input[data-property]")) {
      if (node.value !== node.dataset.initial) props[node.name] = node.value === "" && node.type !== "password" ? null : node.value;
    }
    if (Object.keys(props).length) body.properties = props;
    try {
      const answer = await send("PUT", `/api/services/${encodeURIComponent(service.id)}`, body);
      showProblems(answer.problems || [], answer.dirty);
      app.flow.dirty = answer.dirty;
      await showServices(app);
    } catch (error) {
      showProblems([error.message], true);
    }
  };
  openDialog(`Configure Controller Service: ${service.name} (${service.type})`, el("div", {},
    tabs([["Settings", () => settings], ["Properties", () => properties]]),
    el("div", { class: "actions" },
      el("button", { id: "apply-service", class: "primary", onclick: apply }, "Apply"),
      el("button", { onclick: () => showServices(app) }, "Cancel"))), { wide: true });
}
