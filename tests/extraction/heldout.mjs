#!/usr/bin/env node
// Held-out evaluation of the extractor's choices (extension/src/content/
// primary/options.ts): runs every option set of GRID on every page of
// PAGES_DIR (one page load, one extraction per option set) and writes one
// prediction file per option set to OUT_DIR, named by its key. heldout.py
// then chooses the option set on some sites and scores it on the others.
//
// usage: node heldout.mjs PAGES_DIR OUT_DIR
import { readFile, readdir, writeFile, mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { bundle, launchBrowser, loadIn, newPageContext, runIn } from "./lib.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const [pagesDir, outDir] = process.argv.slice(2);
if (!pagesDir || !outDir) {
  console.error("usage: node heldout.mjs PAGES_DIR OUT_DIR");
  process.exit(2);
}

// Around the defaults, wide enough that a fold could prefer another value.
const GRID = [];
for (const markedBody of [false, true]) {
  for (const shareGuard of [0.2, 0.3, 0.45]) {
    for (const linkDensity of [0.35, 0.5, 0.65]) GRID.push({ shareGuard, linkDensity, markedBody });
  }
}
const key = (o) => `share${o.shareGuard}-link${o.linkDensity}${o.markedBody ? "-marked" : ""}`;

const code = await bundle(resolve(here, "../../extension/src/content/primary.ts"));
const files = (await readdir(pagesDir)).filter((f) => f.endsWith(".html.gz")).sort();
const results = Object.fromEntries(GRID.map((o) => [key(o), {}]));
const browser = await launchBrowser();
const context = await newPageContext(browser);
const queue = [...files];
let failures = 0;
async function worker() {
  const page = await context.newPage();
  for (let f = queue.shift(); f !== undefined; f = queue.shift()) {
    const id = f.slice(0, -".html.gz".length);
    try {
      await loadIn(page, gunzipSync(await readFile(join(pagesDir, f))).toString("utf8"), id);
      for (const o of GRID) results[key(o)][id] = { articleBody: (await runIn(page, code, o)).text };
    } catch (e) {
      failures++;
      console.error(`${id}: ${String(e).split("\n")[0]}`);
    }
  }
  await page.close();
}
await Promise.all([worker(), worker()]);
await browser.close();
await mkdir(outDir, { recursive: true });
for (const [k, preds] of Object.entries(results)) await writeFile(join(outDir, `${k}.json`), JSON.stringify(preds));
console.log(`${GRID.length} option sets x ${files.length} pages (${failures} failed) -> ${outDir}`);
process.exit(failures > 0 ? 1 : 0);
