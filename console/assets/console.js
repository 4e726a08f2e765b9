// Live rows for the Toolbelt console: a table with data-events gets the
// rows its server-sent events carry (event "row": a <tr> whose id says
// which call it is), replacing the row of the same call or at the top.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const table = document.querySelector("table[data-events]");
  const status = document.getElementById("live-status");
  if (!table || !window.EventSource) return;
  const body = table.tBodies[0];
  const events = new EventSource(table.dataset.events);
  events.addEventListener("row", (e) => {
    const t = document.createElement("template");
    t.innerHTML = e.data.trim();
    const row = t.content.firstElementChild;
    const old = document.getElementById(row.id);
    if (old) old.replaceWith(row); else body.prepend(row);
    const none = document.getElementById("no-calls");
    if (none) none.remove();
  });
  events.addEventListener("open", () => { if (status) status.dataset.live = "on"; });
  events.addEventListener("error", () => { if (status) status.dataset.live = "off"; });
});
