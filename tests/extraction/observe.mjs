#!/usr/bin/env node
// Writes the observation the extension's content script builds for each
// page: what the host is sent for a turn on it.
//
// usage: node observe.mjs PAGES_DIR OUT_DIR [COUNT]
//
// Loads the first COUNT (default all) <id>.html.gz of PAGES_DIR, in name
// order, into headless Chromium with page JavaScript off and nothing else
// fetched (lib.mjs), runs buildObservation (extension/src/content/observe.ts)
// and writes OUT_DIR/<id>.json. The host's prompt-size report
// (`cargo run --release --example prompt_size -- OUT_DIR`) reads them.
import { readFile, readdir, writeFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { bundle, launchBrowser, newPageContext, loadIn } from "./lib.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const [pagesDir, outDir, count] = process.argv.slice(2);
if (!pagesDir || !outDir) {
  console.error("usage: node observe.mjs PAGES_DIR OUT_DIR [COUNT]");
  process.exit(2);
}
const code = await bundle(join(here, "observe-entry.ts"));
const files = (await readdir(pagesDir))
  .filter((f) => f.endsWith(".html.gz"))
  .sort()
  .slice(0, count ? Number(count) : undefined);
await mkdir(outDir, { recursive: true });
const browser = await launchBrowser();
const context = await newPageContext(browser);
const page = await context.newPage();
let written = 0;
for (const f of files) {
  const id = f.slice(0, -".html.gz".length);
  const html = gunzipSync(await readFile(join(pagesDir, f))).toString("utf8");
  try {
    await loadIn(page, html, id);
    const observation = await page.evaluate(`(() => { ${code}; return LaikaPrimary.observe(document); })()`);
    await writeFile(join(outDir, `${id}.json`), JSON.stringify(observation));
    written++;
  } catch (e) {
    console.error(`${id}: ${String(e).split("\n")[0]}`);
  }
}
await browser.close();
console.log(`${written} observations in ${outDir}`);
