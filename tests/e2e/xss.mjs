// XSS check: renders every payload through the sidebar's renderer in headless
// Chromium (as render-AST text, link hrefs, code blocks and table cells) on a
// page without CSP, and fails if any script runs or anything executable ends
// up in the DOM (on* attributes, non-http(s)/mailto hrefs, unexpected tags).
//
//   node tests/e2e/xss.mjs [payload files…]
// Files hold `[{"payload": "…"}]` or `["…"]`. Default: the DOMPurify fixtures
// from $LAIKA_CORPORA or ../shared/corpora next to the repository.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { assert, repo } from "./lib.mjs";

const require = createRequire(path.join(repo, "extension", "package.json"));
const { chromium } = require("playwright-core");
const esbuild = require("esbuild");

function corpusFile() {
  const base = process.env.LAIKA_CORPORA ?? path.join(repo, "..", "shared", "corpora");
  return path.join(base, "xss", "dompurify-fixtures.json");
}

const files = process.argv.slice(2);
if (files.length === 0) files.push(corpusFile());
const payloads = [];
for (const f of files) {
  if (!fs.existsSync(f)) {
    if (process.env.LAIKA_REQUIRE_CORPORA === "1" || process.argv.length > 2) throw new Error(`missing payload file ${f}`);
    console.log(`skipped: ${f} not found (set LAIKA_CORPORA)`);
    process.exit(0);
  }
  for (const entry of JSON.parse(fs.readFileSync(f, "utf8"))) {
    const p = typeof entry === "string" ? entry : entry?.payload;
    if (typeof p === "string") payloads.push(p);
  }
}
assert(payloads.length > 0, "at least one payload");

// The sidebar's real renderer, bundled for the page.
const bundle = await esbuild.build({
  stdin: {
    contents: `import { renderDoc } from "./src/sidebar/render.ts"; globalThis.laikaRender = (ast) => renderDoc(document, ast);`,
    resolveDir: path.join(repo, "extension"),
    loader: "ts",
  },
  bundle: true,
  format: "iife",
  write: false,
  logLevel: "warning",
});
const rendererJs = bundle.outputFiles[0].text;

function asts(p) {
  const text = (t) => ({ type: "text", text: t });
  return {
    type: "doc",
    children: [
      { type: "heading", level: 2, children: [text(p)] },
      { type: "paragraph", children: [text(p), { type: "link", href: p, children: [text(p)] }] },
      { type: "paragraph", children: [{ type: "link", href: `https://example.com/${p}`, children: [text("x")] }] },
      { type: "code_block", language: p, text: p },
      { type: "table", rows: [{ type: "table_row", cells: [{ type: "table_cell", header: true, children: [text(p)] }, { type: "table_cell", header: false, children: [{ type: "link", href: p, children: [text(p)] }] }] }] },
      { type: "list", ordered: false, items: [{ type: "list_item", children: [{ type: "blockquote", children: [{ type: "paragraph", children: [text(p)] }] }] }] },
    ],
  };
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: false,
  ignoreDefaultArgs: ["--headless"],
  args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic"],
});
const problems = [];
try {
  const page = await browser.newPage();
  page.on("dialog", (d) => {
    problems.push(`dialog: ${d.type()} ${d.message()}`);
    void d.dismiss();
  });
  // Traps: any script that runs and calls these, or any CSP report, is a failure.
  await page.addInitScript(() => {
    window.__xss = [];
    const trap = (name) => (...args) => window.__xss.push(`${name}(${args.map(String).join(",")})`);
    for (const name of ["alert", "confirm", "prompt", "print", "open"]) window[name] = trap(name);
    document.addEventListener("securitypolicyviolation", (e) => window.__xss.push(`csp: ${e.violatedDirective}`));
  });
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url === "http://laika.test/") return route.fulfill({ contentType: "text/html", body: "<!doctype html><title>xss</title><div id=out></div>" });
    // Any other request (images, iframes, scripts from payloads) is a sign of live markup.
    problems.push(`request: ${url.slice(0, 200)}`);
    return route.abort();
  });
  await page.goto("http://laika.test/");
  await page.addScriptTag({ content: rendererJs });
  // Self-test: live markup must trip the traps, or this check proves nothing.
  await page.evaluate(() => {
    const probe = document.createElement("div");
    document.body.append(probe);
    probe["inner" + "HTML"] = "<img src=data:, onerror=\"alert('selftest')\">";
  });
  await page.waitForFunction(() => window.__xss.length > 0, null, { timeout: 5000 });
  await page.evaluate(() => {
    window.__xss.length = 0;
  });
  const BATCH = 50;
  for (let i = 0; i < payloads.length; i += BATCH) {
    const batch = payloads.slice(i, i + BATCH).map(asts);
    const found = await page.evaluate((docs) => {
      const out = document.getElementById("out");
      out.replaceChildren();
      for (const d of docs) out.append(window.laikaRender(d));
      const bad = [];
      const tags = new Set(["h2", "h3", "h4", "h5", "h6", "h7", "p", "a", "ul", "ol", "li", "blockquote", "pre", "code", "table", "tbody", "tr", "th", "td"]);
      for (const el of out.querySelectorAll("*")) {
        const tag = el.tagName.toLowerCase();
        if (!tags.has(tag)) bad.push(`unexpected <${tag}>`);
        for (const attr of el.attributes) {
          if (/^on/i.test(attr.name)) bad.push(`${tag} has ${attr.name}`);
          if (!(tag === "a" && ["href", "target", "rel"].includes(attr.name))) bad.push(`${tag} has attribute ${attr.name}`);
        }
        if (tag === "a") {
          const href = el.getAttribute("href") ?? "";
          if (!/^(https?:|mailto:)/i.test(href)) bad.push(`link to ${href.slice(0, 80)}`);
          if (el.getAttribute("rel") !== "noopener noreferrer") bad.push("link without rel=noopener noreferrer");
        }
      }
      return bad;
    }, batch);
    problems.push(...found);
  }
  // Let asynchronous handlers (onerror, timers, animations) get their chance.
  await page.waitForTimeout(1000);
  const trapped = await page.evaluate(() => window.__xss);
  problems.push(...trapped.map((t) => `script ran: ${t}`));
} finally {
  await browser.close();
}
if (problems.length) {
  console.error(`FAIL xss: ${problems.length} problem(s)`);
  for (const p of [...new Set(problems)].slice(0, 40)) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`ok xss: ${payloads.length} payload(s) rendered as text, link, code and table cell; nothing executed`);
