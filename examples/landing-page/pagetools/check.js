// The checks validate_page runs in the page at one viewport; opts says
// which. It returns what it measured, for the handler to judge.
async (opts) => {
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const out = {width: innerWidth, scrollWidth: document.documentElement.scrollWidth};
  if (opts.responsive) {
    out.overflowing = [];
    if (out.scrollWidth > innerWidth) {
      for (const el of document.body.querySelectorAll("*")) {
        if (el.getBoundingClientRect().right > innerWidth + 1 && out.overflowing.length < 5) {
          out.overflowing.push(describe(el));
        }
      }
    }
    out.viewportMeta = document.querySelector('meta[name="viewport"]') !== null;
    out.unsizedImages = [...document.images]
      .filter((img) => !img.hasAttribute("width") || !img.hasAttribute("height"))
      .map((img) => describe(img) + (img.getAttribute("src") ? " (" + img.getAttribute("src") + ")" : ""))
      .slice(0, 10);
  }
  if (opts.performance) {
    const entries = [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")];
    out.bytes = entries.reduce((n, e) => n + (e.encodedBodySize || e.transferSize || 0), 0);
    out.requests = entries.length;
  }
  if (opts.axe) {
    const r = await axe.run(document, {resultTypes: ["violations"]});
    out.violations = r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    }));
  }
  return out;
}
