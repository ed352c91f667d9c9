// E2E: work across pages. Three loopback pages open in tabs are added to a
// collection from the sidebar's collections panel; a question only the
// second page answers is asked over the collection (the citation names that
// page and opens it scrolled to the quote); the scripted model then runs the comparison transform
// (per-source progress events, one source's model call fails and is
// reported while the others make the table); the artifact is exported as
// Markdown through a download.
import fs from "node:fs";
import path from "node:path";
import { assert, esc, eventTrace, hostEvents, launch, modelOutput, norm, points, serveRoutes, sidebarWithCollection } from "./lib.mjs";

const PAGES = {
  "/one.html": ["Station guide", "Night trains leave from the central station at nine in the evening."],
  "/two.html": ["Luggage rules", "Each passenger may bring two suitcases and one folding bicycle on board."],
  "/three.html": ["Dining car", "The dining car serves hot soup and bread until midnight."],
};
const site = await serveRoutes((url) => {
  const p = PAGES[url.pathname];
  if (!p) return null;
  // Page two's answer is far down: opening its citation must scroll to it.
  const gap = url.pathname === "/two.html" ? '<div style="height:4000px"></div>' : "";
  return { body: `<!doctype html><title>${esc(p[0])}</title><main><h1>${esc(p[0])}</h1>${gap}<p>${esc(p[1])}</p></main>` };
});

const scriptDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-script-"));
const scriptPath = path.join(scriptDir, "script.json");
fs.writeFileSync(
  scriptPath,
  JSON.stringify([
    // Turn 1: the answer, quoting the second page (its doc id is corrected by the host).
    modelOutput({
      text: "Two suitcases and one folding bicycle.",
      citations: [{ doc_id: "doc:src:unknown", quote: "Each passenger may bring two suitcases" }],
    }),
    // Turn 2: the comparison transform, then its three map steps (the second fails), then the answer.
    modelOutput({
      title: "Comparing",
      text: "I will compare the sources.",
      toolCalls: [{ name: "transform.run", arguments: { collectionId: "{{collection_id}}", type: "comparison" } }],
    }),
    points("Night trains leave from the central station.", "Departure is at nine."),
    { error: { code: "RUNTIME_TIMEOUT", message: "the model did not answer in time" } },
    points("The dining car serves hot soup.", "It closes at midnight."),
    modelOutput({ title: "Done", text: "The comparison table is saved as an artifact." }),
  ]),
);

const browser = await launch(
  { LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath },
  { config: "[limits]\ntransform_concurrency = 1\n" },
);
try {
  const { context } = browser;
  // The three tabs, in order; the first makes a new collection.
  const sidebar = await sidebarWithCollection(context, site.base, PAGES);
  const selected = await sidebar.$eval("#collection-select", (s) => s.selectedOptions[0]?.textContent ?? "");
  assert(/\(3\)$/.test(selected), `the collection holds three pages (${selected})`);

  // A question only the second page answers.
  await sidebar.fill("#question", "How many suitcases may I bring?");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn .citation-source", { timeout: 30_000 });
  const source = sidebar.locator(".turn .citation-source").first();
  const named = norm(await source.textContent());
  assert(named.includes("Luggage rules"), `the citation names the second page (${named})`);
  const href = await source.getAttribute("href");
  // The quote as a text fragment: the browser scrolls to it and highlights it.
  assert(
    href === `${site.base}/two.html#:~:text=Each%20passenger%20may%20bring%20two%20suitcases`,
    `the citation links to the quote on it (${href})`,
  );
  const [opened] = await Promise.all([context.waitForEvent("page"), source.click()]);
  await opened.waitForLoadState("load");
  assert(opened.url().startsWith(`${site.base}/two.html`), `the citation opens the page (${opened.url()})`);
  // The browser acted on the text fragment: the quote, 4000 px down, is in view.
  await opened.waitForFunction(() => window.scrollY > 2000, null, { timeout: 10_000 }).catch(() => undefined);
  const scrolled = await opened.evaluate(() => window.scrollY);
  assert(scrolled > 2000, `the opened page is scrolled to the quote (scrollY ${scrolled})`);
  await opened.close();
  await sidebar.waitForSelector(".turn[data-stop-reason]", { timeout: 30_000 });

  // The comparison transform, run by the model's tool call.
  await sidebar.fill("#question", "Compare the sources in a table");
  await sidebar.click("#send");
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn[data-stop-reason]").length === 2, null, { timeout: 60_000 });
  const events = await hostEvents(sidebar);
  const reads = events.filter((e) => e.type === "operation" && e.action === "read");
  const trace = eventTrace(events);
  assert(reads.filter((e) => e.status === "start").length === 3, `a start per source (${trace})`);
  assert(reads.filter((e) => e.status === "success").length === 2, `two sources read (${trace})`);
  const failedRead = reads.find((e) => e.status === "error");
  assert(failedRead && /RUNTIME_TIMEOUT/.test(failedRead.message ?? ""), `the failing source is reported (${JSON.stringify(failedRead)})`);
  const result = events.find((e) => e.type === "tool_result" && e.name === "transform.run");
  assert(result?.status === "ok", `the transform succeeded (${JSON.stringify(result)})`);
  assert(result.result.sourcesRead === 2 && result.result.sourcesFailed.length === 1, `two read, one failed (${JSON.stringify(result.result)})`);

  // The artifact, exported as Markdown.
  await sidebar.click("#collections summary");
  await sidebar.click("#collections summary");
  await sidebar.waitForSelector("#artifact-list li button", { timeout: 20_000 });
  await sidebar.selectOption("#artifact-format", "markdown");
  const [download] = await Promise.all([
    sidebar.waitForEvent("download", { timeout: 20_000 }),
    sidebar.locator("#artifact-list li button", { hasText: "Download" }).first().click(),
  ]);
  const file = await download.path();
  const markdown = fs.readFileSync(file, "utf8");
  assert(download.suggestedFilename().endsWith(".md"), `a Markdown file (${download.suggestedFilename()})`);
  assert(markdown.includes("| Source | Main point | Other points | Figures |"), `the table is in the export:\n${markdown}`);
  assert(markdown.includes("Night trains leave from the central station."), `the first source's point is in it:\n${markdown}`);
  assert(/Luggage rules.*RUNTIME\\?_TIMEOUT/s.test(markdown), `the failed source is listed:\n${markdown}`);
  await sidebar.locator("#artifact-list li button", { hasText: "Open" }).first().click();
  await sidebar.waitForSelector("#artifact-view table", { timeout: 20_000 });
  const shown = norm(await sidebar.textContent("#artifact-view"));
  assert(shown.includes("Night trains leave from the central station."), `the artifact opens in the sidebar (${shown})`);
  console.log("ok collections: three tabs added, cited answer opens page two, comparison with one failed source, Markdown export");
} finally {
  await browser.close();
  await site.close();
  fs.rmSync(scriptDir, { recursive: true, force: true });
}
