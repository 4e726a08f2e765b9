// The canvas page: it follows its canvas's state (server-sent events) and
// draws the presented page and the A2UI surfaces from the standard catalog.
// Everything the agent sends is set as text or attributes, never as HTML.
"use strict";

const local = {}; // surfaceId -> {rev, data}: the data model as the user edits it
let shown = "";   // the view last drawn, so an unchanged view is not reloaded

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// Data model paths (JSON Pointer); a relative path is read against the
// template item it is drawn for.
function abs(path, scope) {
  if (path.startsWith("/")) return path;
  return (scope === "/" ? "" : scope) + "/" + path;
}
function keys(path) {
  return path.split("/").slice(1).filter((k) => k !== "").map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
}
function get(data, path) {
  let v = data;
  for (const k of keys(path)) {
    if (v === null || typeof v !== "object") return undefined;
    v = v[k];
  }
  return v;
}
function set(sf, path, value) {
  const ks = keys(path);
  if (ks.length === 0) { local[sf].data = value; return; }
  let v = local[sf].data;
  for (const k of ks.slice(0, -1)) {
    if (v[k] === null || typeof v[k] !== "object") v[k] = {};
    v = v[k];
  }
  v[ks[ks.length - 1]] = value;
}
function isBinding(v) { return v !== null && typeof v === "object" && !Array.isArray(v) && typeof v.path === "string"; }
function value(ctx, v) {
  if (isBinding(v)) return get(local[ctx.sf].data, abs(v.path, ctx.scope));
  if (v !== null && typeof v === "object" && !Array.isArray(v)) return undefined; // a function call: not evaluated
  return v;
}
function text(ctx, v) {
  const x = value(ctx, v);
  if (x === undefined || x === null) return "";
  return typeof x === "object" ? JSON.stringify(x) : String(x);
}
function bind(ctx, v, fn) {
  if (isBinding(v)) fn(abs(v.path, ctx.scope));
}

function children(ctx, list) {
  const out = [];
  if (Array.isArray(list)) {
    for (const id of list) out.push(draw(ctx, id));
  } else if (list && typeof list === "object") {
    const base = abs(list.path, ctx.scope);
    const items = get(local[ctx.sf].data, base);
    const ks = Array.isArray(items) ? items.map((_, i) => String(i)) : (items && typeof items === "object" ? Object.keys(items) : []);
    for (const k of ks) out.push(draw({ ...ctx, scope: base + "/" + k }, list.componentId));
  }
  return out;
}

function field(labelText, input) {
  const l = el("label", "a2-field");
  if (labelText !== "") l.append(el("span", "", labelText));
  l.append(input);
  return l;
}

const flex = { start: "flex-start", end: "flex-end", center: "center", stretch: "stretch", spaceBetween: "space-between", spaceAround: "space-around", spaceEvenly: "space-evenly" };

const components = {
  Text(ctx, c) {
    const tag = /^h[1-5]$/.test(c.variant || "") ? c.variant : "p";
    return el(tag, "a2-text " + (c.variant || "body"), text(ctx, c.text));
  },
  Image(ctx, c) {
    const img = el("img", "a2-image " + (c.variant || ""));
    img.setAttribute("src", text(ctx, c.url));
    img.setAttribute("alt", text(ctx, c.description));
    if (c.fit) img.style.objectFit = c.fit === "scaleDown" ? "scale-down" : c.fit;
    return img;
  },
  Icon(ctx, c) { return el("span", "a2-icon", text(ctx, c.name)); },
  Video(ctx, c) { const v = el("video"); v.controls = true; v.setAttribute("src", text(ctx, c.url)); return v; },
  AudioPlayer(ctx, c) {
    const a = el("audio"); a.controls = true; a.setAttribute("src", text(ctx, c.url));
    a.setAttribute("aria-label", text(ctx, c.description));
    return a;
  },
  Row(ctx, c) { return box("a2-row", ctx, c); },
  Column(ctx, c) { return box("a2-column", ctx, c); },
  List(ctx, c) {
    const e = el("div", "a2-list " + (c.direction || "vertical"));
    e.setAttribute("role", "list");
    for (const ch of children(ctx, c.children)) { ch.setAttribute("role", "listitem"); e.append(ch); }
    if (c.align) e.style.alignItems = flex[c.align];
    return e;
  },
  Card(ctx, c) { const e = el("div", "a2-card"); e.append(draw(ctx, c.child)); return e; },
  Divider(ctx, c) { return el("hr", "a2-divider " + (c.axis || "horizontal")); },
  Tabs(ctx, c) {
    const e = el("div", "a2-tabs"), bar = el("div"), panel = el("div");
    bar.setAttribute("role", "tablist");
    panel.setAttribute("role", "tabpanel");
    const select = (i) => {
      bar.querySelectorAll("[role=tab]").forEach((b, j) => b.setAttribute("aria-selected", String(i === j)));
      panel.replaceChildren(draw(ctx, c.tabs[i].child));
    };
    c.tabs.forEach((t, i) => {
      const b = el("button", "", text(ctx, t.title));
      b.setAttribute("role", "tab");
      b.type = "button";
      b.addEventListener("click", () => select(i));
      bar.append(b);
    });
    e.append(bar, panel);
    select(0);
    return e;
  },
  Modal(ctx, c) {
    const e = el("div", "a2-modal-host"), dlg = el("dialog", "a2-modal"), close = el("button", "a2-button", "Close");
    close.type = "button";
    close.addEventListener("click", () => dlg.close());
    dlg.append(draw(ctx, c.content), close);
    const trigger = draw(ctx, c.trigger);
    trigger.addEventListener("click", () => dlg.showModal(), true);
    e.append(trigger, dlg);
    return e;
  },
  Button(ctx, c) {
    const b = el("button", "a2-button " + (c.variant || "default"));
    b.type = "button";
    b.append(draw(ctx, c.child));
    const ev = c.action && c.action.event;
    if (ev) b.addEventListener("click", () => act(ctx, c, ev, b));
    return b;
  },
  TextField(ctx, c) {
    const long = c.variant === "longText";
    const input = el(long ? "textarea" : "input");
    if (!long) input.type = { number: "number", obscured: "password", date: "date" }[c.variant] || "text";
    input.value = text(ctx, c.value);
    bind(ctx, c.value, (p) => input.addEventListener("input", () => set(ctx.sf, p, input.value)));
    if (c.validationRegexp) {
      input.addEventListener("change", () => input.setCustomValidity(new RegExp(c.validationRegexp).test(input.value) ? "" : "Invalid value"));
    }
    return field(text(ctx, c.label), input);
  },
  CheckBox(ctx, c) {
    const l = el("label", "a2-check"), input = el("input");
    input.type = "checkbox";
    input.checked = value(ctx, c.value) === true;
    bind(ctx, c.value, (p) => input.addEventListener("change", () => { set(ctx.sf, p, input.checked); redraw(); }));
    l.append(input, el("span", "", text(ctx, c.label)));
    return l;
  },
  Slider(ctx, c) {
    const input = el("input");
    input.type = "range";
    input.min = String(c.min ?? 0);
    input.max = String(c.max ?? 100);
    input.value = String(value(ctx, c.value) ?? 0);
    bind(ctx, c.value, (p) => input.addEventListener("change", () => { set(ctx.sf, p, Number(input.value)); redraw(); }));
    return field(text(ctx, c.label), input);
  },
  DateTimeInput(ctx, c) {
    const input = el("input");
    input.type = c.enableDate && c.enableTime ? "datetime-local" : c.enableTime ? "time" : "date";
    input.value = text(ctx, c.value);
    bind(ctx, c.value, (p) => input.addEventListener("change", () => set(ctx.sf, p, input.value)));
    return field(text(ctx, c.label), input);
  },
  ChoicePicker(ctx, c) {
    const multi = c.variant === "multipleSelection";
    const chosen = value(ctx, c.value);
    const now = Array.isArray(chosen) ? chosen.slice() : [];
    const group = el("fieldset", "a2-field");
    if (c.label !== undefined) group.append(el("legend", "", text(ctx, c.label)));
    const name = "choice-" + ctx.sf + "-" + c.id;
    for (const o of c.options || []) {
      const l = el("label", "a2-check"), input = el("input");
      input.type = multi ? "checkbox" : "radio";
      input.name = name;
      input.checked = now.includes(o.value);
      bind(ctx, c.value, (p) => input.addEventListener("change", () => {
        const next = multi ? (input.checked ? now.concat([o.value]) : now.filter((v) => v !== o.value)) : [o.value];
        set(ctx.sf, p, next);
        redraw();
      }));
      l.append(input, el("span", "", text(ctx, o.label)));
      group.append(l);
    }
    return group;
  },
};

function box(cls, ctx, c) {
  const e = el("div", cls);
  for (const ch of children(ctx, c.children)) e.append(ch);
  if (c.justify) e.style.justifyContent = flex[c.justify];
  if (c.align) e.style.alignItems = flex[c.align];
  return e;
}

// draw draws component id of the surface ctx.sf.
function draw(ctx, id) {
  const c = ctx.components[id];
  if (!c) return el("span", "a2-error", "(missing component " + id + ")");
  if (ctx.depth > 64 || ctx.path.includes(id)) return el("span", "a2-error", "(component " + id + " contains itself)");
  const fn = components[c.component];
  if (!fn) return el("span", "a2-error", "(unknown component " + c.component + ")");
  const e = fn({ ...ctx, depth: ctx.depth + 1, path: ctx.path.concat([id]) }, c);
  e.dataset.id = id;
  if (c.weight !== undefined) e.style.flexGrow = String(c.weight);
  if (c.accessibility && c.accessibility.label !== undefined) e.setAttribute("aria-label", text(ctx, c.accessibility.label));
  return e;
}

async function act(ctx, c, ev, button) {
  const context = {};
  for (const [k, v] of Object.entries(ev.context || {})) context[k] = value(ctx, v) ?? null;
  button.setAttribute("aria-busy", "true");
  try {
    const r = await fetch("action", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ surfaceId: ctx.sf, sourceComponentId: c.id, name: ev.name, context }),
    });
    button.dataset.sent = r.ok ? "yes" : "failed";
  } finally {
    button.removeAttribute("aria-busy");
  }
}

let state = null;

function redraw() {
  const root = document.getElementById("surfaces");
  const out = [];
  for (const s of state.surfaces) {
    if (!local[s.id] || local[s.id].rev !== s.dataRev) local[s.id] = { rev: s.dataRev, data: structuredClone(s.data) };
    if (!s.ready || !s.components[s.root]) continue;
    const sec = el("section", "surface");
    sec.dataset.surface = s.id;
    sec.setAttribute("aria-label", "surface " + s.id);
    sec.append(draw({ sf: s.id, scope: "/", components: s.components, depth: 0, path: [] }, s.root));
    out.push(sec);
  }
  for (const id of Object.keys(local)) if (!state.surfaces.some((s) => s.id === id)) delete local[id];
  root.replaceChildren(...out);
  drawView(state.view);
  document.getElementById("empty").hidden = out.length > 0 || (state.view.kind !== "" && !state.view.hidden);
  document.body.dataset.rev = String(state.rev);
}

function drawView(v) {
  const box = document.getElementById("view");
  box.hidden = v.kind === "" || v.hidden;
  const key = v.kind + " " + v.rev;
  if (box.hidden || key === shown) return;
  shown = key;
  const f = el("iframe");
  f.title = "presented page";
  if (v.kind === "html") f.setAttribute("src", "view?rev=" + v.rev);
  if (v.kind === "file") f.setAttribute("src", "files/" + encodeURIComponent(v.file) + "?rev=" + v.rev);
  if (v.kind === "url") {
    // A page of this host's own origin gets no access to it.
    const same = new URL(v.url, location.href).origin === location.origin;
    f.setAttribute("sandbox", "allow-scripts allow-forms allow-popups" + (same ? "" : " allow-same-origin"));
    f.setAttribute("src", v.url);
  }
  box.replaceChildren(f);
}

async function runEval(req) {
  let answer;
  try {
    let v = (0, eval)(req.js);
    if (v && typeof v.then === "function") v = await v;
    answer = { id: req.id, value: typeof v === "string" ? v : JSON.stringify(v) ?? String(v) };
  } catch (e) {
    answer = { id: req.id, error: String(e && e.message ? e.message : e) };
  }
  await fetch("eval", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(answer) });
}

document.addEventListener("DOMContentLoaded", () => {
  // The state as the page was served, drawn before the page's load event
  // (a snapshot waits for it); the stream brings it again and every change.
  state = JSON.parse(document.getElementById("state").textContent);
  redraw();
  const live = document.getElementById("live");
  const events = new EventSource("events");
  events.addEventListener("state", (e) => { state = JSON.parse(e.data); redraw(); });
  events.addEventListener("eval", (e) => runEval(JSON.parse(e.data)));
  events.addEventListener("open", () => { live.dataset.live = "on"; });
  events.addEventListener("error", () => { live.dataset.live = "off"; });
});
