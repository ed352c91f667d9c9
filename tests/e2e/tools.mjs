// E2E: gated tool calls, one at a time. The scripted model's first answer
// proposes a click on "Buy now" (gate: ask) and typing into a password field
// (gate: deny); its second answers without tool calls. The click must happen
// only after Approve; the denied call is reported after it and never runs;
// the loop then ends with the answer.
import fs from "node:fs";
import path from "node:path";
import { artifacts, assert, element, launch, modelOutput, norm, observeTab, openSidebar, openTab, serve, waitForDone, waitForStep } from "./lib.mjs";

const server = await serve();
const scriptDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-script-"));
const scriptPath = path.join(scriptDir, "script.json");
const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath });
try {
  const { context, worker } = browser;
  const url = `${server.base}/shop.html`;
  const page = await openTab(context, url);

  // Learn the handles the content script gives this page (they are stable per
  // element for the document's lifetime), so the scripted model can use them.
  const observation = await observeTab(worker, url);
  const buy = element(observation, "Buy now");
  const pw = (observation.summary.elements ?? []).find((e) => e.input_type === "password");
  assert(pw, "the password field is observed");

  fs.writeFileSync(
    scriptPath,
    JSON.stringify([
      modelOutput({
        title: "Buying",
        text: "I can buy the backpack for you.",
        citations: [{ doc_id: "doc:web:summary", quote: "Price: $89.00." }],
        toolCalls: [
          { name: "browser.click", arguments: { handleId: buy.handle_id } },
          { name: "browser.type", arguments: { handleId: pw.handle_id, text: "hunter2" } },
        ],
      }),
      modelOutput({ title: "Bought", text: "The backpack is purchased; I did not type your password." }),
    ]),
  );

  const sidebar = await openSidebar(context);
  await sidebar.fill("#question", "Buy this backpack for me");
  await sidebar.click("#send");
  const ask = ".step-item[data-decision=ask]";
  await sidebar.waitForSelector(`${ask} .approval-card button:has-text('Approve')`, { timeout: 30_000 });
  const card = norm(await sidebar.textContent(`${ask} .approval-card`));
  assert(/Buy now/.test(card), `the card names the element (${card})`);
  assert(/Expires in \d+:\d\d/.test(card), `the card counts down (${card})`);
  assert(!(await sidebar.$(".step-item[data-decision=deny]")), "calls come one at a time: the denied one is not proposed yet");
  assert(await sidebar.isVisible("#stop"), "the Stop button shows while the turn runs");

  // Nothing has run yet: give a wrongly auto-running executor time to act.
  await sidebar.waitForTimeout(1500);
  assert((await page.textContent("#status")) === "Not purchased.", "ask call waits for approval");
  assert((await page.evaluate(() => document.body.dataset.bought ?? "0")) === "0", "no click before Approve");

  await sidebar.click(`${ask} button:has-text('Approve')`);
  const done = await waitForStep(sidebar, `${ask}[data-state=ok]`);
  assert(/Clicking “Buy now”/.test(done), `the step names the operation (${done})`);
  assert((await page.textContent("#status")) === "Purchased!", "the approved click ran");
  assert((await page.evaluate(() => document.body.dataset.bought)) === "1", "the click ran exactly once");
  assert(!(await sidebar.$(`${ask} .approval-card button`)), "the answered card has no buttons left");

  const denied = await waitForStep(sidebar, ".step-item[data-decision=deny][data-state=blocked]");
  assert(/Blocked/.test(denied), `the denied call shows as blocked with its reason (${denied})`);
  assert(!(await sidebar.$(".step-item[data-decision=deny] button")), "a denied call offers no button");

  const reason = await waitForDone(sidebar);
  assert(reason === "answered", `the loop ended with the answer (${reason})`);
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(/purchased; I did not type/.test(answer) && !/I can buy/.test(answer), `the last step's answer is the answer (${answer})`);
  assert(/I can buy the backpack/.test(await sidebar.textContent(".steps .step-note")), "the first step's text is in the step list");
  assert(!(await sidebar.isVisible("#stop")), "the Stop button goes when the turn ends");
  assert((await page.evaluate(() => document.getElementById("pw").value)) === "", "the denied call never typed");
  assert((await page.evaluate(() => document.body.dataset.bought)) === "1", "still clicked exactly once");

  fs.mkdirSync(artifacts, { recursive: true });
  await sidebar.setViewportSize({ width: 420, height: 900 });
  await sidebar.screenshot({ path: path.join(artifacts, "sidebar-tools.png"), fullPage: true });
  console.log("ok tools: ask ran only after Approve, deny never ran, the loop answered");
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(scriptDir, { recursive: true, force: true });
}
