// Shared pieces of the extraction harness and unit checks: bundling the
// extractor and running it inside an isolated headless Chromium page.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));

/** Bundle a module exporting extractPrimary into an IIFE defining `LaikaPrimary`. */
export async function bundle(entry) {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "iife",
    globalName: "LaikaPrimary",
    target: "chrome110",
    platform: "browser",
    // The extension's own node_modules may not exist in this checkout; resolve
    // bare imports from the harness's install as a fallback.
    nodePaths: [join(here, "node_modules")],
    logLevel: "warning",
  });
  return out.outputFiles[0].text;
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    args: [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
    ],
  });
}

// Fixed origin for the loaded page; nothing listens there, every request is
// answered or aborted by page.route below.
const ORIGIN = "http://127.0.0.1:9";

/** A context where page scripts are off and nothing but the page itself loads. */
export async function newPageContext(browser) {
  const context = await browser.newContext({ javaScriptEnabled: false, serviceWorkers: "block" });
  await context.route("**/*", (route) => {
    const url = route.request().url();
    const html = pending.get(url);
    if (html !== undefined && route.request().resourceType() === "document") {
      return route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: html });
    }
    return route.abort();
  });
  return context;
}

const pending = new Map();

/** Loads `html` into `page` as the page `id`, scripts off, nothing else fetched. */
export async function loadIn(page, html, id) {
  const url = `${ORIGIN}/pages/${encodeURIComponent(id)}.html`;
  pending.set(url, html);
  try {
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: 30000 });
  } finally {
    pending.delete(url);
  }
}

/**
 * Runs the bundled extractor on the page `page` holds (with `options`, if
 * given) and returns its text plus a short description of the chosen element
 * (elements do not cross the boundary). Also checks that extraction left the
 * live DOM unchanged.
 */
export async function runIn(page, code, options) {
  const args = options === undefined ? "document" : `document, ${JSON.stringify(options)}`;
  // Evaluate as a string: it runs in the page's main world even with page
  // JavaScript disabled, which is what a content script sees.
  const expr = `(() => {
    ${code}
    const before = document.documentElement.outerHTML;
    const r = LaikaPrimary.extractPrimary(${args});
    const el = r.element;
    const desc = el ? el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
      (typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\\s+/).join(".") : "") : null;
    return { text: r.text, element: desc, mutated: document.documentElement.outerHTML !== before,
             elementText: el ? (el.textContent || "").length : 0 };
  })()`;
  const r = await page.evaluate(expr);
  if (r.mutated) throw new Error("extractPrimary mutated the live page");
  return r;
}

/** `loadIn` then `runIn` with the extractor's default options. */
export async function extractIn(page, code, html, id) {
  await loadIn(page, html, id);
  return runIn(page, code);
}
