// E2E: the History screen with the real host and its SQLite store.
// Two conversations on two pages, then: the list shows titles, pages and
// readable dates (no ISO strings); search shows the matching words
// highlighted (no "[object Object]"); a saved answer renders as a list (no
// literal "- "); Continue reopens the chat and a follow-up joins the same
// conversation; Export gives Markdown, HTML and JSON files; Delete can be
// undone, and without Undo the host really deletes. axe-core in each state.
import fs from "node:fs";
import { assert, checkA11y, launch, norm, openSidebar, serve, shot } from "./lib.mjs";

const pages = await serve();
const browser = await launch();
try {
  const { context } = browser;
  const article = await context.newPage();
  await article.goto(`${pages.base}/article.html`);
  const sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 800 });
  const ask = async (text, n) => {
    await sidebar.fill("#question", text);
    await sidebar.press("#question", "Enter");
    await sidebar.waitForFunction((k) => document.querySelectorAll(".turn .answer-actions").length === k, n, { timeout: 30_000 });
  };
  await sidebar.click("#summarize");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 30_000 });
  await sidebar.click("#new-chat");
  const shop = await context.newPage();
  await shop.goto(`${pages.base}/shop.html`);
  await shop.bringToFront();
  await ask("What does it cost?", 1);

  await sidebar.click("#nav-history");
  await sidebar.waitForSelector("#history-list .history-item");
  const rows = await sidebar.$$eval("#history-list .history-item", (els) => els.map((e) => e.innerText));
  assert(rows.length === 2, `two conversations listed (${rows})`);
  for (const r of rows) {
    assert(!/\d{4}-\d{2}-\d{2}T/.test(r), `no raw ISO date (${r})`);
    assert(/ago|now|second|minute/.test(r), `a readable relative date (${r})`);
    assert(/127\.0\.0\.1:\d+\/(article|shop)\.html/.test(r), `the page is named (${r})`);
  }
  assert(new Set(rows).size === 2, "the rows are distinguishable");
  await checkA11y(sidebar, "history list");

  // Search: the matching words are highlighted.
  await sidebar.fill("#history-search", "night");
  await sidebar.press("#history-search", "Enter");
  await sidebar.waitForSelector("#history-list mark");
  const hit = norm(await sidebar.textContent("#history-list li"));
  const marked = await sidebar.$$eval("#history-list mark", (els) => els.map((e) => e.textContent.toLowerCase()));
  assert(!hit.includes("[object Object]") && !/^[0-9a-f]{8}-/.test(hit), `a readable hit (${hit})`);
  assert(marked.length > 0 && marked.every((m) => m.includes("night")), `the matching words are marked (${marked})`);
  await checkA11y(sidebar, "history search");
  await shot(sidebar, "history-search");

  // Detail: the saved answer is rendered, not Markdown-ish text.
  await sidebar.click("#history-list .history-item");
  await sidebar.waitForSelector("#history-detail .answer");
  const detail = await sidebar.$$eval("#history-detail .answer", (els) => els.map((e) => e.innerText).join("\n"));
  assert(!/^\s*- /m.test(detail), `no literal dashes (${detail.slice(0, 200)})`);
  assert((await sidebar.$$("#history-detail .answer li")).length > 0, "the summary's points are list items");
  await checkA11y(sidebar, "history detail");

  // Export, three formats.
  const exported = {};
  for (const format of ["Markdown", "HTML", "JSON"]) {
    const [download] = await Promise.all([sidebar.waitForEvent("download"), sidebar.click(`#history-detail button:text("Export ${format}")`)]);
    exported[format] = fs.readFileSync(await download.path(), "utf8");
    assert(/\.(md|html|json)$/.test(download.suggestedFilename()), `a file name (${download.suggestedFilename()})`);
  }
  assert(/^# .*Night trains/m.test(exported.Markdown) && /^## Summarize this page/m.test(exported.Markdown) && /^- /m.test(exported.Markdown), `Markdown export (${exported.Markdown.slice(0, 300)})`);
  // The summary's [n] markers are listed as sources, each quote with its page.
  const markers = (exported.Markdown.match(/\[(\d+)\]/g) ?? []).length;
  assert(markers > 0 && /^Sources:$/m.test(exported.Markdown) && /^1\. “.+” — \[.+\]\(http/m.test(exported.Markdown), `the Markdown lists the sources its markers count (${exported.Markdown.slice(-600)})`);
  assert(/<html/i.test(exported.HTML) && /Summarize this page/.test(exported.HTML), "HTML export");
  assert(!/web\.(summarize|answer)|\d{4}-\d\d-\d\dT\d\d:\d\d/.test(exported.HTML), "the HTML export speaks people's words: no task id, no raw timestamp");
  assert(JSON.parse(exported.JSON).conversation.turns.length === 1, "JSON export");

  // Continue: the chat shows the old turn and a follow-up joins the conversation.
  await sidebar.click('#history-detail button:text("Continue this conversation")');
  await sidebar.waitForSelector("#view-chat:not([hidden]) .turn.past");
  await article.bringToFront();
  await ask("Who runs the most night trains?", 1);
  const listed = browser.history("list");
  const convs = Array.isArray(listed) ? listed : listed.conversations;
  const night = convs.find((c) => /Night trains/.test(c.title ?? ""));
  assert(convs.length === 2 && night?.turns === 2, `the follow-up joined the old conversation (${JSON.stringify(convs)})`);

  // Delete, undo, delete for real.
  await sidebar.click("#nav-history");
  await sidebar.waitForSelector("#history-list .history-item");
  await sidebar.click(`#history-list li[data-conversation="${night.id}"] .history-item`);
  await sidebar.click('#history-detail button:text("Delete")');
  await sidebar.waitForSelector("#history-toast:not([hidden]) button:text('Undo')");
  assert(!(await sidebar.$(`#history-list li[data-conversation="${night.id}"]`)), "the row goes at once");
  await checkA11y(sidebar, "history deleted with undo");
  await shot(sidebar, "history-undo");
  await sidebar.click("#history-toast button:text('Undo')");
  await sidebar.waitForSelector(`#history-list li[data-conversation="${night.id}"]`);
  await new Promise((r) => setTimeout(r, 9000));
  assert((Array.isArray(browser.history("list")) ? browser.history("list") : browser.history("list").conversations).length === 2, "undo kept it");
  await sidebar.click('#history-detail button:text("Delete")');
  await sidebar.waitForSelector("#history-toast[hidden]", { state: "attached", timeout: 15_000 });
  await new Promise((r) => setTimeout(r, 500));
  const after = browser.history("list");
  const left = Array.isArray(after) ? after : after.conversations;
  assert(left.length === 1 && left[0].id !== night.id, `deleted for real after the undo time (${JSON.stringify(left)})`);
  console.log("ok history: readable list, highlighted search, rendered answers, export md/html/json, continue, delete with undo");
} finally {
  await browser.close();
  await pages.close();
}
