#!/usr/bin/env node
// Scoring harness for extension/src/content/primary.ts.
//
// usage: node run.mjs [--baseline] PAGES_DIR OUT_JSON
//
// Bundles the extractor into an IIFE, loads every <id>.html.gz of PAGES_DIR
// into headless Chromium with page JavaScript disabled and every network
// request except the page itself aborted, calls extractPrimary(document) and
// writes {id: {articleBody}} to OUT_JSON. --baseline runs plain Readability
// (its textContent) through the same pipeline, for comparison.
import { readFile, readdir, writeFile, mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { bundle, launchBrowser, newPageContext, extractIn } from "./lib.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const baseline = args.includes("--baseline");
const [pagesDir, outJson] = args.filter((a) => a !== "--baseline");
if (!pagesDir || !outJson) {
  console.error("usage: node run.mjs [--baseline] PAGES_DIR OUT_JSON");
  process.exit(2);
}

const entry = baseline ? join(here, "baseline.ts") : resolve(here, "../../extension/src/content/primary.ts");
const code = await bundle(entry);
const files = (await readdir(pagesDir)).filter((f) => f.endsWith(".html.gz")).sort();
if (files.length === 0) {
  console.error(`no *.html.gz in ${pagesDir}`);
  process.exit(1);
}

const started = Date.now();
const browser = await launchBrowser();
const context = await newPageContext(browser);
const results = {};
const slow = [];
let failures = 0;
const queue = [...files];
// Two workers: the machine has two cores and Chromium's renderer does most work.
async function worker() {
  const page = await context.newPage();
  for (let f = queue.shift(); f !== undefined; f = queue.shift()) {
    const id = f.slice(0, -".html.gz".length);
    const html = gunzipSync(await readFile(join(pagesDir, f))).toString("utf8");
    const t0 = Date.now();
    try {
      const r = await extractIn(page, code, html, id);
      results[id] = { articleBody: r.text };
      if (process.env.EXTRACT_DEBUG) console.error(`${id} -> ${r.element} (${r.text.length} chars)`);
    } catch (e) {
      failures++;
      results[id] = { articleBody: "" };
      console.error(`${id}: ${String(e).split("\n")[0]}`);
    }
    const ms = Date.now() - t0;
    if (ms > 3000) slow.push(`${id} ${ms}ms`);
  }
  await page.close();
}
await Promise.all([worker(), worker()]);
await browser.close();

await mkdir(dirname(resolve(outJson)), { recursive: true });
await writeFile(outJson, JSON.stringify(results, null, 1));
const secs = ((Date.now() - started) / 1000).toFixed(1);
console.log(`extracted ${files.length} pages in ${secs}s (${failures} failed) -> ${outJson}`);
if (slow.length > 0) console.log(`slow pages: ${slow.join(", ")}`);
process.exit(failures > 0 ? 1 : 0);
