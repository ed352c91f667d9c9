// E2E: "Summarize this page" in headless Chromium with the real extension and
// the real host (builtin runtime). Checks that the summary renders, that every
// verified citation highlights a real element of the page containing the
// quote, and that the turn is in the host's SQLite history.
import fs from "node:fs";
import path from "node:path";
import { artifacts, assert, launch, norm, openSidebar, openTab, serve } from "./lib.mjs";

const server = await serve();
const browser = await launch();
try {
  const { context } = browser;
  const page = await openTab(context, `${server.base}/article.html`);
  const sidebar = await openSidebar(context);
  const runtime = await sidebar.textContent("#runtime");
  assert(/offline|builtin|extractive/i.test(runtime ?? ""), `runtime label shown (got ${runtime})`);

  await sidebar.click("#summarize");
  await sidebar.waitForSelector(".turn .answer p, .turn .error", { timeout: 30_000 });
  const error = await sidebar.$(".turn .error");
  assert(!error, `no error (got ${error ? await error.textContent() : ""}); host log: ${browser.hostLog()}`);
  await sidebar.waitForFunction(() => document.querySelector(".turn .progress")?.hidden === true, null, { timeout: 30_000 });
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(answer.length > 40, `summary has content (${answer})`);
  assert(/night train|sleeper|ÖBB/i.test(answer), `summary is about the page (${answer})`);
  assert(!/reader@example\.com/.test(answer), "form values never reach the answer");

  const buttons = await sidebar.$$(".citation:not(.unverified)");
  assert(buttons.length > 0, "the summary has verified citations");
  for (const [i, btn] of buttons.slice(0, 4).entries()) {
    const title = (await btn.getAttribute("title")) ?? "";
    const quote = norm((/^Show “(.*)” on the page$/s.exec(title)?.[1] ?? "").replace(/…$/, ""));
    assert(quote.length > 0, `citation ${i + 1} says what it shows (${title})`);
    await btn.click();
    const handle = await page.waitForSelector("[data-laika-highlighted]", { timeout: 10_000 });
    const text = norm(await handle.textContent());
    assert(text.toLowerCase().includes(quote.slice(0, 60).toLowerCase()), `citation ${i + 1} points at an element containing "${quote}" (got "${text.slice(0, 200)}")`);
    const tag = await handle.evaluate((el) => el.tagName.toLowerCase());
    assert(tag !== "body" && tag !== "html", `citation ${i + 1} points at a specific element (got ${tag})`);
    // The quoted words themselves are marked (selected), not the whole element around them.
    const marked = norm(await page.evaluate(() => window.getSelection()?.toString() ?? ""));
    assert(marked.toLowerCase().startsWith(quote.slice(0, 40).toLowerCase()) && marked.length <= text.length, `citation ${i + 1} marks the quoted words ("${marked.slice(0, 120)}" for "${quote.slice(0, 60)}")`);
    await page.waitForSelector("[data-laika-highlighted]", { state: "detached", timeout: 10_000 });
  }

  fs.mkdirSync(artifacts, { recursive: true });
  await sidebar.setViewportSize({ width: 420, height: 900 });
  await sidebar.screenshot({ path: path.join(artifacts, "sidebar-summary.png"), fullPage: true });

  // The turn is in the host's history (same data dir, read with the CLI).
  const list = browser.history("list");
  const conversations = Array.isArray(list) ? list : (list.conversations ?? []);
  assert(conversations.length === 1, `one conversation stored (got ${JSON.stringify(list)})`);
  const conv = conversations[0];
  assert(/Night trains/.test(JSON.stringify(conv)), `conversation is about the page (${JSON.stringify(conv)})`);
  const shown = JSON.stringify(browser.history("show", conv.id ?? conv.conversation_id));
  assert(/Summarize this page/.test(shown) && /"ok"/.test(shown), `turn stored with status ok (${shown.slice(0, 400)})`);
  assert(!shown.includes("reader@example.com"), "form values are not stored");
  console.log(`ok summarize: ${buttons.length} verified citation(s) resolved to page elements; history has the turn`);
} finally {
  await browser.close();
  await server.close();
}
