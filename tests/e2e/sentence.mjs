// E2E: a citation marks the quoted sentence, not the article around it. The
// page's article is one long text block (no paragraphs, as some sites write
// it); the scripted model quotes one sentence from its middle. Clicking the
// citation selects exactly those words, scrolled into view, and never
// outlines the whole block. Screens at 360, 420 and 800 px, light and dark.
import fs from "node:fs";
import path from "node:path";
import { assert, esc, launch, modelOutput, norm, openSidebar, openTab, screenMatrix, serveRoutes } from "./lib.mjs";

const QUOTE = "The harbour tunnel will open in March 2031 at a cost of 812 million kroner.";
const filler = (n) => Array.from({ length: n }, (_, i) => `Line ${i}: the council discussed the schools, the roads and the parks at length.`).join(" ");
const block = `${filler(60)} ${QUOTE} ${filler(60)}`;
const site = await serveRoutes((url) =>
  url.pathname === "/block.html"
    ? { body: `<!doctype html><html lang="en"><head><title>${esc("Council news")}</title></head><body><main><article><h1>Council news</h1><div class="story">${esc(block)}</div></article></main></body></html>` }
    : null,
);
const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-sentence-"));
const scriptPath = path.join(tmp, "script.json");
fs.writeFileSync(scriptPath, JSON.stringify([modelOutput({ title: "Tunnel", text: "The tunnel opens in 2031.", citations: [{ doc_id: "doc:web:summary", quote: QUOTE }] })]));
const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath });

try {
  const { context } = browser;
  const page = await openTab(context, `${site.base}/block.html`);
  const sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 800 });
  const welcome = await sidebar.$("#welcome button:text('Got it')");
  if (welcome) await welcome.click();
  await sidebar.fill("#question", "When does the tunnel open?");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 30_000 });
  const citation = await sidebar.waitForSelector(".turn .citation:not(.unverified)", { timeout: 10_000 });
  await citation.click();
  const marked = await page.waitForSelector("[data-laika-highlighted]", { timeout: 10_000 });
  const seen = await page.evaluate(() => {
    const el = document.querySelector("[data-laika-highlighted]");
    return {
      selected: window.getSelection()?.toString() ?? "",
      block: el?.textContent?.length ?? 0,
      outline: el instanceof HTMLElement ? el.style.outline : "",
    };
  });
  assert(norm(seen.selected) === QUOTE, `the quoted sentence is selected, nothing more ("${seen.selected.slice(0, 200)}")`);
  assert(seen.block > 10 * QUOTE.length, `in a block far longer than the sentence (${seen.block} chars)`);
  assert(!seen.outline, `the block is not outlined (${seen.outline})`);
  // Scrolled smoothly to the sentence.
  await page.waitForFunction(() => {
    const s = window.getSelection();
    if (!s || !s.rangeCount) return false;
    const r = s.getRangeAt(0).getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight;
  }, null, { timeout: 5_000 });
  assert(await marked.evaluate((e) => e.classList.contains("story")), "the marked element is the block the sentence is in");
  const shots = await screenMatrix(sidebar, "sentence-citation", ".turn .answer-actions");
  console.log(`ok sentence: the quoted sentence selected in a ${seen.block}-char block, not outlined; ${shots} screens`);
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  throw e;
} finally {
  await browser.close();
  await site.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
