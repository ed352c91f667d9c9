// Unit checks for extractPrimary on small hand-written pages, run in the same
// headless Chromium setup as the corpus harness (page JavaScript off, no
// network). extractIn also fails any test whose extraction mutated the page.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { bundle, extractIn, launchBrowser, newPageContext } from "../lib.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const haveChromium = existsSync(chromiumPath);
let browser;
let page;
let code;

before(async () => {
  if (!haveChromium) return;
  code = await bundle(resolve(here, "../../../extension/src/content/primary.ts"));
  browser = await launchBrowser();
  page = await (await newPageContext(browser)).newPage();
});
after(async () => {
  await browser?.close();
});

function run(t, html) {
  if (!haveChromium) {
    t.skip(`no Chromium at ${chromiumPath} (scripts/eval-extraction.sh installs it)`);
    return null;
  }
  return extractIn(page, code, html, t.name.replace(/\W+/g, "-"));
}

// Distinct sentences so every paragraph is recognisable in the output.
function para(topic, n = 3) {
  const s = [];
  for (let i = 1; i <= n; i++) {
    s.push(`The ${topic} study reports finding number ${i}, which the researchers describe in careful detail, with caveats, numbers and context.`);
  }
  return s.join(" ");
}

const chrome = `
  <header><nav><ul>
    <li><a href="/">Home</a></li><li><a href="/world">World news</a></li>
    <li><a href="/sport">Sport section</a></li><li><a href="/tech">Technology desk</a></li>
  </ul></nav></header>`;
const footer = `<footer><p>Copyright Example Media Group. All rights reserved.</p>
  <ul><li><a href="/about">About us</a></li><li><a href="/privacy">Privacy policy</a></li></ul></footer>`;

test("nav, footer, share bar and comments are excluded", async (t) => {
  const r = await run(
    t,
    `<!doctype html><html><head><title>Glacier melt</title></head><body>${chrome}
    <main><article id="story">
      <h1>Glacier melt speeds up</h1>
      <div class="share-tools"><a href="#">Share on Facebook</a> <a href="#">Share on Twitter</a></div>
      <p>${para("glacier")}</p>
      <figure><img src="a.jpg"><figcaption>A glacier seen from above, photo by an agency.</figcaption></figure>
      <p>${para("meltwater")}</p>
      <p>${para("sea level")}</p>
    </article>
    <section id="comments" class="comments"><h3>Comments</h3>
      <div class="comment"><p>First! This commenter thinks the whole thing is overblown nonsense.</p></div>
      <div class="comment"><p>Another reader disagrees strongly and links to a blog nobody reads.</p></div>
    </section></main>${footer}</body></html>`,
  );
  if (r === null) return;
  assert.match(r.text, /glacier study reports finding number 1/);
  assert.match(r.text, /sea level study reports finding number 3/);
  for (const noise of ["World news", "Share on Facebook", "commenter", "All rights reserved", "Privacy policy", "photo by an agency"]) {
    assert.ok(!r.text.includes(noise), `unexpected ${JSON.stringify(noise)} in:\n${r.text}`);
  }
  assert.equal(r.element, "article#story");
});

test("every section of a multi-section article is included, in order, as paragraphs", async (t) => {
  const sections = ["Background", "Method", "Results", "Outlook"]
    .map((h) => `<section><h2>${h}</h2><p>${para(h.toLowerCase(), 2)}</p><p>${para(`${h.toLowerCase()} follow-up`, 2)}</p></section>`)
    .join("");
  const r = await run(
    t,
    `<!doctype html><html><body>${chrome}<div class="content"><article class="post"><h1>Report</h1>${sections}</article>
    <aside class="sidebar"><h3>Most read</h3><ul><li><a href="/x">Ten things about cats</a></li><li><a href="/y">Why dogs bark at night</a></li></ul></aside>
    </div>${footer}</body></html>`,
  );
  if (r === null) return;
  const order = ["Background", "Method", "Results", "Outlook"].map((h) => r.text.indexOf(`\n${h}\n`));
  assert.ok(order.every((i) => i > 0), `missing a section heading:\n${r.text}`);
  assert.deepEqual([...order].sort((a, b) => a - b), order, "sections out of order");
  assert.match(r.text, /outlook follow-up study reports finding number 2/);
  // Paragraphs are separated by a blank line, not run together.
  assert.match(r.text, /context\.\n\nThe method follow-up study/);
  assert.ok(!r.text.includes("Ten things about cats"), r.text);
});

test("a list-heavy article keeps its list items and drops the related-links list", async (t) => {
  const items = Array.from(
    { length: 8 },
    (_, i) => `<li><strong>Tip ${i + 1}:</strong> pack item ${i + 1} of the checklist, because hikers who forgot it reported trouble on the trail and regretted it later.</li>`,
  ).join("");
  const r = await run(
    t,
    `<!doctype html><html><body>${chrome}<div id="main"><div class="entry-content">
      <p>${para("hiking", 2)}</p><ol>${items}</ol><p>${para("trail safety", 2)}</p>
      <div class="related-posts"><h4>You may also like</h4><ul>
        <li><a href="/a">Best boots of the year reviewed</a></li><li><a href="/b">Camping stoves compared side by side</a></li>
        <li><a href="/c">How to read a topographic map</a></li></ul></div>
    </div></div>${footer}</body></html>`,
  );
  if (r === null) return;
  for (let i = 1; i <= 8; i++) assert.ok(r.text.includes(`Tip ${i}: pack item ${i} of the checklist`), `tip ${i} missing:\n${r.text}`);
  assert.match(r.text, /trail safety study reports finding number 2/);
  assert.ok(!r.text.includes("Best boots"), r.text);
  assert.ok(!r.text.includes("You may also like"), r.text);
  assert.equal(r.element, "div.entry-content");
});

test("a page without an article yields no page chrome", async (t) => {
  const r = await run(t, `<!doctype html><html><body>${chrome}<p>Hi.</p>${footer}</body></html>`);
  if (r === null) return;
  // Whatever short text survives, the page chrome must not.
  assert.ok(!/World news|Privacy policy|All rights reserved/.test(r.text), r.text);
  assert.ok(r.text.length < 20, JSON.stringify(r));
});

test("metadata lines go in any covered language; a link or name inside a sentence stays", async (t) => {
  const r = await run(
    t,
    `<!doctype html><html lang="es"><body>${chrome}<article id="nota">
      <h1>El glaciar se derrite</h1>
      <p>Por Ana Ruiz Castillo</p>
      <p>Publicado: 20 de noviembre de 2019</p>
      <div class="compartir"><a href="#">Facebook</a> <a href="#">X</a></div>
      <p>${para("glaciar")}</p>
      <p><span>Ana Pérez | Agencia Sur | Archivo Gráfico</span></p>
      <p>https://www.example.es/noticias/glaciar-12345.html</p>
      <p>${para("deshielo")} More at <a href="https://example.org/report">https://example.org/report</a> today.</p>
      <p>Eugênio: <span>Por sua causa, Carlos.</span></p>
      <p>${para("nivel del mar")}</p>
      <div class="kommentare"><p>Ein Leser meint, dass das alles übertrieben sei und schreibt einen langen Kommentar dazu.</p>
        <p>Eine Leserin widerspricht und verweist auf einen Blog, den niemand liest.</p></div>
    </article>${footer}</body></html>`,
  );
  if (r === null) return;
  for (const noise of ["Ana Ruiz", "Publicado", "Facebook", "Agencia Sur", "glaciar-12345", "Ein Leser"]) {
    assert.ok(!r.text.includes(noise), `unexpected ${JSON.stringify(noise)} in:\n${r.text}`);
  }
  assert.match(r.text, /context\. More at https:\/\/example\.org\/report today\./);
  assert.match(r.text, /Eugênio: Por sua causa, Carlos\./);
  assert.match(r.text, /nivel del mar study reports finding number 3/);
});

test("the page's schema.org articleBody wins over a longer block elsewhere", async (t) => {
  const reviews = Array.from({ length: 8 }, (_, i) => `<p>${para(`reader review ${i}`, 2)}</p>`).join("");
  const r = await run(
    t,
    `<!doctype html><html><body>${chrome}<div itemscope itemtype="https://schema.org/NewsArticle">
      <h1>Bridge reopens</h1>
      <div itemprop="articleBody"><p>${para("bridge")}</p><p>${para("traffic")}</p></div></div>
      <div class="wall">${reviews}</div>${footer}</body></html>`,
  );
  if (r === null) return;
  assert.match(r.text, /^The bridge study reports finding number 1/);
  assert.match(r.text, /traffic study reports finding number 3/);
  assert.ok(!r.text.includes("reader review"), r.text);
});
