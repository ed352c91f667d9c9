// E2E: every screen of the first hour, at 360, 420 and 800 px wide, light
// and dark, saved as tests/e2e/artifacts/screens-<screen>-<width>-<scheme>.png,
// with axe-core run on each (no serious or critical violation) and nothing
// wider than the panel. One browser, one scripted host:
//   chat        a cited answer;
//   approval    the approval card of a click the gate asks about;
//   error       a model that is not reachable: the card with Retry and Use offline;
//   offline     "Use offline" answered by the offline reader, and its card;
//   recovery    the host killed while an answer streams: "Laika stopped; ask again";
//   settings, history, collections (a page added, its transforms offered).
import fs from "node:fs";
import path from "node:path";
import { artifacts, assert, element, hostBinary, launch, modelOutput, norm, observeTab, openSidebar, openTab, SCREEN_SCHEMES, SCREEN_WIDTHS, screenMatrix, serve } from "./lib.mjs";

const started = Date.now();
const pages = await serve();
const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-screens-"));
const scriptPath = path.join(tmp, "script.json");
const pidFile = path.join(tmp, "host.pid");
const quote = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
const browser = await launch(
  { LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath },
  { hostCommand: `echo $$ > ${quote(pidFile)}; exec ${quote(hostBinary)} "$@" 2>>${quote(path.join(tmp, "host-stderr.log"))}` },
);
let shots = 0;

/** Shoots and checks the screen as it is now at every width and scheme. */
async function matrix(sidebar, screen, focus = null) {
  shots += await screenMatrix(sidebar, screen, focus);
}

try {
  fs.mkdirSync(artifacts, { recursive: true });
  const { context, worker } = browser;
  const url = `${pages.base}/shop.html`;
  const page = await openTab(context, url);
  const buy = element(await observeTab(worker, url), "Buy now");
  const slow = { output: modelOutput({ text: Array.from({ length: 120 }, (_, i) => `word${i}`).join(" ") }), chunk_bytes: 16, chunk_delay_ms: 150 };
  fs.writeFileSync(
    scriptPath,
    JSON.stringify([
      modelOutput({ title: "The backpack", text: "The backpack costs 49 euros.", citations: [{ doc_id: "doc:page", quote: "Buy now" }] }),
      modelOutput({ title: "Buying", text: "I can buy the backpack.", toolCalls: [{ name: "browser.click", arguments: { handleId: buy.handle_id } }] }),
      modelOutput({ text: "Nothing was bought." }),
      { error: { code: "RUNTIME_UNAVAILABLE", message: "connection refused by 127.0.0.1:8080" } },
      slow,
    ]),
  );
  const sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 800 });
  const welcome = await sidebar.$("#welcome button:text('Got it')");
  if (welcome) await welcome.click();
  const ask = async (text) => {
    await sidebar.fill("#question", text);
    await sidebar.click("#send");
  };

  // Chat with an answer.
  await ask("How much is the backpack?");
  await sidebar.waitForSelector(".turn:nth-of-type(1)[data-stop-reason]", { timeout: 30_000 });
  assert(norm(await sidebar.textContent(".turn:nth-of-type(1) .answer")).includes("49 euros"), "answered");
  await matrix(sidebar, "chat");

  // The approval card; denied, the next step ends the turn.
  await ask("Buy this backpack");
  const card = ".turn:nth-of-type(2) .approval-card";
  await sidebar.waitForSelector(`${card} button:has-text('Approve')`, { timeout: 30_000 });
  await matrix(sidebar, "approval", card);
  await sidebar.click(`${card} button:has-text('Deny')`);
  await sidebar.waitForSelector(".turn:nth-of-type(2)[data-stop-reason]", { timeout: 30_000 });

  // The error card: Retry and Use offline.
  await ask("Is it waterproof?");
  await sidebar.waitForSelector(".turn:nth-of-type(3) .error-card button:text('Use offline')", { timeout: 30_000 });
  assert(await sidebar.$(".turn:nth-of-type(3) .error-card button:text('Retry')"), "Retry is offered");
  await matrix(sidebar, "error", ".turn:nth-of-type(3) .error-card");

  // Use offline: the offline reader answers, and its card comes once.
  await sidebar.click(".turn:nth-of-type(3) .error-card button:text('Use offline')");
  await sidebar.waitForSelector("#offline-card", { timeout: 30_000 });
  await matrix(sidebar, "offline", "#offline-card");
  await sidebar.click("#offline-card button:text('Keep the offline reader')");

  // The host dies while an answer streams.
  await ask("Tell me everything about it");
  const streaming = await sidebar.waitForSelector(".turn:last-of-type .streaming-text", { timeout: 30_000 });
  assert(streaming, "the answer streams");
  process.kill(Number(fs.readFileSync(pidFile, "utf8").trim()), "SIGKILL");
  await sidebar.waitForSelector(".turn:last-of-type[aria-busy=false] .error-card button:text('Retry')", { timeout: 15_000 });
  assert(/Laika stopped; ask again/.test(norm(await sidebar.textContent(".turn:last-of-type .error-card"))), "Laika stopped");
  await matrix(sidebar, "recovery", ".turn:last-of-type .error-card");

  // Settings, History, Collections.
  await sidebar.click("#nav-settings");
  await sidebar.waitForSelector("#set-kind option", { state: "attached", timeout: 20_000 });
  await matrix(sidebar, "settings");
  await sidebar.click("#nav-history");
  await sidebar.waitForSelector("#history-list li[data-conversation]", { timeout: 20_000 });
  await sidebar.click("#history-list li[data-conversation] button, #history-list li[data-conversation] a").catch(() => sidebar.click("#history-list li[data-conversation]"));
  await sidebar.waitForSelector("#history-detail h2", { timeout: 20_000 });
  await matrix(sidebar, "history");
  await sidebar.click("#nav-chat");
  await page.bringToFront();
  await sidebar.click("#collections summary");
  await sidebar.fill("#collection-name", "Backpacks compared across every shop in town this week");
  await sidebar.click("#collection-add-page");
  await sidebar.waitForSelector("#collection-transforms button", { timeout: 20_000 });
  await sidebar.click("#collection-edit summary");
  await matrix(sidebar, "collections", "#collections");

  const seconds = (Date.now() - started) / 1000;
  assert(shots === 8 * SCREEN_WIDTHS.length * SCREEN_SCHEMES.length, `every screen at every width and scheme (${shots})`);
  console.log(`ok screens: ${shots} screenshots, axe clean on each, nothing scrolls sideways (${seconds.toFixed(1)} s)`);
} catch (e) {
  console.error(browser.hostLog().slice(-2000));
  throw e;
} finally {
  await browser.close();
  await pages.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
