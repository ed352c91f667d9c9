// E2E: an approval that nobody answers expires, and a turn the user stops
// runs nothing more. The host's approvals expire after 3 s here.
//   turn 1: the model asks to click "Buy now"; nobody answers → the card
//           turns to "Expired" without buttons, the click never happens, and
//           the model's next answer ends the turn;
//   turn 2: the model asks again; the user presses Stop → the card closes,
//           Approve is gone, `done.stop_reason` is `cancelled`, nothing ran.
import fs from "node:fs";
import path from "node:path";
import { artifacts, assert, eventTrace, hostEvents, element, launch, modelOutput, norm, observeTab, openSidebar, openTab, serve, waitForStep } from "./lib.mjs";

const server = await serve();
const scriptDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-script-"));
const scriptPath = path.join(scriptDir, "script.json");
const browser = await launch(
  { LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath },
  { config: "[limits]\napproval_timeout_secs = 3\n" },
);
try {
  const { context, worker } = browser;
  const url = `${server.base}/shop.html`;
  const page = await openTab(context, url);
  const buy = element(await observeTab(worker, url), "Buy now");
  const askToBuy = modelOutput({
    title: "Buying",
    text: "I can buy the backpack.",
    toolCalls: [{ name: "browser.click", arguments: { handleId: buy.handle_id } }],
  });
  fs.writeFileSync(scriptPath, JSON.stringify([askToBuy, modelOutput({ text: "Nothing was bought." }), askToBuy]));
  const bought = () => page.evaluate(() => document.body.dataset.bought ?? "0");

  const sidebar = await openSidebar(context);
  await page.bringToFront();

  // Turn 1: the approval expires.
  await sidebar.fill("#question", "Buy this backpack");
  await sidebar.click("#send");
  const first = ".turn:nth-of-type(1) .step-item[data-decision=ask]";
  await sidebar.waitForSelector(`${first} .approval-card button:has-text('Approve')`, { timeout: 30_000 });
  const expired = await waitForStep(sidebar, `${first}[data-state=expired]`, 20_000);
  assert(/Expired/.test(expired), `the card says Expired (${expired})`);
  assert(!(await sidebar.$(`${first} button`)), "an expired card has no buttons");
  await sidebar.waitForSelector(".turn:nth-of-type(1)[data-stop-reason]", { timeout: 30_000 });
  assert(norm(await sidebar.textContent(".turn:nth-of-type(1) .answer")) === "Nothing was bought.", "the next step answered");
  assert((await bought()) === "0", "the expired call never ran");

  // Turn 2: the user stops the turn while the card waits.
  await sidebar.fill("#question", "Buy it again");
  await sidebar.click("#send");
  const second = ".turn:nth-of-type(2) .step-item[data-decision=ask]";
  await sidebar.waitForSelector(`${second} .approval-card button:has-text('Approve')`, { timeout: 30_000 });
  assert(await sidebar.isVisible("#stop"), "Stop shows while the turn runs");
  // The user's hand is in the sidebar. Behind the shop page it would be a
  // background tab, whose frames Chromium runs about once a second: the
  // click's stability check would outlast the 3 s approval.
  await sidebar.bringToFront();
  await sidebar.click("#stop");
  await sidebar.waitForSelector(".turn:nth-of-type(2)[data-stop-reason]", { timeout: 30_000 });
  const reason = await sidebar.getAttribute(".turn:nth-of-type(2)", "data-stop-reason");
  assert(reason === "cancelled", `the turn ended as cancelled (${reason})`);
  if (process.env.LAIKA_E2E_TRACE) console.log(eventTrace(await hostEvents(sidebar)));
  assert(!(await sidebar.$(`${second} button`)), "a stopped turn's card has no buttons");
  assert(/Stopped/.test(await sidebar.textContent(".turn:nth-of-type(2)")), "the turn says it stopped");
  assert(!(await sidebar.isVisible("#stop")), "Stop goes when the turn ends");
  await sidebar.waitForTimeout(1500);
  assert((await bought()) === "0", "nothing ran after Stop");

  fs.mkdirSync(artifacts, { recursive: true });
  await sidebar.setViewportSize({ width: 420, height: 900 });
  await sidebar.screenshot({ path: path.join(artifacts, "sidebar-stop.png"), fullPage: true });
  console.log("ok stop: an unanswered approval expired; Stop ended the turn and nothing ran");
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  throw e;
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(scriptDir, { recursive: true, force: true });
}
