// E2E: a summary that would need many model calls asks first. A long page
// with a small context window (the scripted runtime, each call 150 ms):
// the sidebar shows the estimate card ("about N parts, N model calls. Read
// it all?") before any call, and nothing about reading until the user
// chose; Cancel ends the turn plainly (no error, the composer free); Read
// it all reads the parts, several at a time, with progress, and only then
// says the page was read; the next card knows the time from the earlier
// calls; Stop while reading says "Stopped", never "CANCELLED"; Read the
// start only answers in one call and says how much of the page it read.
// Screens of the card before and after each choice at 360, 420 and 800 px,
// light and dark; axe clean.
import fs from "node:fs";
import path from "node:path";
import { assert, checkA11y, esc, hostEvents, launch, modelOutput, openSidebar, screenMatrix, serveRoutes, shot } from "./lib.mjs";

const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-confirm-"));
const scriptPath = path.join(tmp, "script.json");
const point = "The committee reviewed the harbour tunnel request and deferred it.";
fs.writeFileSync(scriptPath, JSON.stringify(Array.from({ length: 600 }, () => ({ output: modelOutput({ title: "Minutes", text: point }), delay_ms: 150 }))));

const paragraphs = Array.from(
  { length: 900 },
  (_, i) => `<p>Item ${i}. The committee reviewed request ${(i * 7) % 1000} on the harbour, the schools and the roads, and deferred it to the next session of the council.</p>`,
).join("\n");
const site = await serveRoutes((url) =>
  url.pathname === "/minutes.html"
    ? { body: `<!doctype html><html lang="en"><head><title>${esc("Council minutes")}</title></head><body><main><article><h1>Council minutes</h1>${paragraphs}</article></main></body></html>` }
    : null,
);
const browser = await launch(
  { LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath },
  { config: "[limits]\ncontext_window_tokens = 4096\napproval_timeout_secs = 600\n" },
);
let sidebar;

const lastTurn = () => sidebar.locator(".turn").last();
const composerFree = () => sidebar.evaluate(() => !document.getElementById("send").disabled && document.getElementById("stop").hidden);

/** Waits until turn `n`'s progress line says `text`. */
const waitForProgress = (n, text) =>
  sidebar.waitForFunction(([n, t]) => document.querySelector(`.turn:nth-of-type(${n}) .progress`)?.textContent === t, [n, text], { timeout: 30_000 });

/** Before the user chose, turn `n` says nothing about reading the page (only the estimate and its choices). */
async function saysNothingRead(n, when) {
  const text = (await sidebar.textContent(`.turn:nth-of-type(${n})`)) ?? "";
  assert(!/Reading the whole page|Reading [\d,]+ characters|Read the whole page|was not read|Read \d+ % of this page|Read only the start/.test(text), `nothing said about reading ${when}: ${text}`);
}

/** Asks for a summary and waits for the estimate card of that turn. */
async function summarizeUntilCard(n) {
  await sidebar.click("#summarize");
  await sidebar.waitForSelector(`.turn:nth-of-type(${n}) .estimate-card button`, { timeout: 30_000 });
  return (await lastTurn().locator(".estimate-card .approval-title").textContent()) ?? "";
}

try {
  const { context } = browser;
  const page = await context.newPage();
  await page.goto(`${site.base}/minutes.html`);
  sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 800 });
  await page.bringToFront();
  await sidebar.bringToFront();

  // 1. The card, before any model call.
  const question = await summarizeUntilCard(1);
  const m = /about ([\d,]+) parts, ([\d,]+) model calls\. Read it all\?/.exec(question);
  assert(m, `the card gives the estimate: ${question}`);
  const [parts, calls] = [Number(m[1].replace(/,/g, "")), Number(m[2].replace(/,/g, ""))];
  assert(calls > 20 && parts >= calls - 10, `more than 20 calls, about one a part (${parts} parts, ${calls} calls)`);
  assert(!/seconds|minutes/.test(question), `no time before any call was timed: ${question}`);
  const buttons = await lastTurn().locator(".estimate-card button").allTextContents();
  assert(JSON.stringify(buttons) === JSON.stringify(["Read it all", "Read the start only", "Cancel"]), `three choices: ${buttons}`);
  let events = await hostEvents(sidebar);
  assert(!events.some((e) => e.type === "operation"), "no part is read before the answer");
  await waitForProgress(1, "Waiting for your answer…");
  await saysNothingRead(1, "before the choice");
  await screenMatrix(sidebar, "confirm-card", ".turn:nth-of-type(1) .estimate-card");

  // 2. Cancel: a plain end, nothing read, the composer free.
  await lastTurn().locator(".estimate-card button", { hasText: "Cancel" }).click();
  await sidebar.waitForSelector(".turn:nth-of-type(1)[data-stop-reason]", { timeout: 30_000 });
  const cancelled = (await lastTurn().textContent()) ?? "";
  assert(/Not read: you chose not to read this long page\./.test(cancelled), `Cancel says so plainly: ${cancelled}`);
  assert(!/CANCELLED|cancelled/.test(cancelled), `no "CANCELLED" wording: ${cancelled}`);
  assert(!/Read the whole page/.test(cancelled), "it never says the page was read");
  assert(await composerFree(), "the composer is free after Cancel");
  events = await hostEvents(sidebar);
  assert(!events.some((e) => e.type === "operation" || e.type === "error"), "no model call and no error after Cancel");
  assert(events.some((e) => e.type === "done" && e.status === "cancelled"), "the turn ended with done");
  await screenMatrix(sidebar, "confirm-cancelled", ".turn:nth-of-type(1) .estimate-card");

  // 3. Read it all: progress, then the summary; the page is said to be read only once it was.
  await summarizeUntilCard(2);
  await lastTurn().locator(".estimate-card button", { hasText: "Read it all" }).click();
  await sidebar.waitForFunction(() => /\d+ parts? read\./.test(document.querySelector(".turn:nth-of-type(2) [data-call-id='stage'] .summary")?.textContent ?? ""), null, { timeout: 30_000 });
  const during = (await lastTurn().textContent()) ?? "";
  assert(/Reading part \d+ of \d+|Combining/.test(during), `the step follows the parts: ${during}`);
  assert(!/Read the whole page/.test(during), `no past tense while reading: ${during}`);
  assert(/Reading [\d,]+ characters in [\d,]+ parts…|Reading the whole page/.test(during), `reading is said as under way: ${during}`);
  await checkA11y(sidebar, "reading the parts");
  await shot(sidebar, "confirm-reading-420-light");
  // Several parts in flight at once (transform_concurrency, 4 by default).
  events = await hostEvents(sidebar);
  let open = 0;
  let most = 0;
  for (const e of events.filter((e) => e.type === "operation" && e.call_id.startsWith("stage:part:"))) {
    open += e.status === "start" ? 1 : -1;
    most = Math.max(most, open);
  }
  assert(most > 1 && most <= 4, `parts read several at a time, at most 4 (${most})`);
  await sidebar.waitForSelector(".turn:nth-of-type(2) .answer-actions", { timeout: 120_000 });
  const read = (await lastTurn().textContent()) ?? "";
  assert(read.includes(point), "the summary is shown");
  assert(/Read the whole page in [\d,]+ parts, then summarized them\./.test(read), `then it says the page was read: ${read}`);
  assert(await composerFree(), "the composer is free after the summary");
  await screenMatrix(sidebar, "confirm-read", ".turn:nth-of-type(2) .answer-actions");

  // 4. The next card knows the time; Stop while reading says "Stopped".
  const timed = await summarizeUntilCard(3);
  assert(/model calls, about \d+ (seconds|minutes) at this model's speed\. Read it all\?/.test(timed), `the time, from the earlier calls: ${timed}`);
  await lastTurn().locator(".estimate-card button", { hasText: "Read it all" }).click();
  await sidebar.waitForFunction(() => /\d+ parts? read\./.test(document.querySelector(".turn:nth-of-type(3) [data-call-id='stage'] .summary")?.textContent ?? ""), null, { timeout: 30_000 });
  await sidebar.click("#stop");
  await sidebar.waitForSelector(".turn:nth-of-type(3)[data-stop-reason]", { timeout: 30_000 });
  const stopped = (await lastTurn().textContent()) ?? "";
  assert(/Stopped/.test(stopped), `Stop says Stopped: ${stopped}`);
  assert(!/CANCELLED|the turn was cancelled/.test(stopped), `never "CANCELLED: the turn was cancelled": ${stopped}`);
  assert(!/Read the whole page/.test(stopped), `a stopped reading is not said to be read: ${stopped}`);
  assert(await composerFree(), "the composer is free after Stop");
  await screenMatrix(sidebar, "confirm-stopped", ".turn:nth-of-type(3) .estimate-card");

  // 5. Read the start only: one call; it says how much of the page it read, never the whole page.
  await summarizeUntilCard(4);
  await saysNothingRead(4, "before the start-only choice");
  const before = (await hostEvents(sidebar)).length;
  await lastTurn().locator(".estimate-card button", { hasText: "Read the start only" }).click();
  await sidebar.waitForSelector(".turn:nth-of-type(4) .answer-actions", { timeout: 60_000 });
  const start = (await lastTurn().textContent()) ?? "";
  assert(start.includes(point), "the answer from the start is shown");
  assert(/Read only the start of this page \(\d+ %\)\./.test(start), `it says how much of the page was read: ${start}`);
  assert(!/whole page|Reading [\d,]+ characters/.test(start), `never that the whole page was (being) read: ${start}`);
  assert(/You chose to read the start only\./.test(start), `the card says what was chosen: ${start}`);
  const after = (await hostEvents(sidebar)).slice(before);
  assert(!after.some((e) => e.type === "operation"), "no part read: one call");
  assert(after.filter((e) => e.type === "context_usage").length === 1, "the start's own usage came");
  assert(await composerFree(), "the composer is free after the start only");
  await screenMatrix(sidebar, "confirm-start-only", ".turn:nth-of-type(4) .answer-actions");
  console.log(`ok confirm: estimate card (${parts} parts, ${calls} calls) before any call, nothing said read before the choice; Cancel ends plainly; Read it all with ${most} parts in flight; timed estimate; Stop says Stopped; start only in one call`);
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  if (sidebar) await shot(sidebar, "confirm-failure").catch(() => undefined);
  throw e;
} finally {
  await browser.close();
  await site.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
