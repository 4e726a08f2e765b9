// The Mozilla Readability floor of bench/web: fetches a page and prints
// the text (textContent) of the article Readability finds, on jsdom.
//
//	NODE_PATH=DIR/node_modules node bench/web/mozilla.js URL
const { JSDOM } = require('jsdom');
const { Readability } = require('@mozilla/readability');

(async () => {
  const url = process.argv[2];
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  const dom = new JSDOM(await res.text(), { url });
  const article = new Readability(dom.window.document).parse();
  process.stdout.write(article ? article.textContent : '');
})().catch((e) => { console.error(e); process.exit(1); });
