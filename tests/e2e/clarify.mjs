// E2E: a clarifying question. The scripted model reads "Add the laptop to my
// cart" as unclear and answers in clarify mode with two choices; the sidebar
// shows them as buttons, one click sends the chosen one as the next message
// of the same conversation, and the next turn is asked with that text;
// history shows the choices the question offered.
import fs from "node:fs";
import path from "node:path";
import { artifacts, assert, esc, hostEvents, launch, modelOutput, norm, openSidebar, serveRoutes, waitForDone } from "./lib.mjs";

const shop = await serveRoutes((url) =>
  url.pathname === "/laptops.html"
    ? {
        body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc("Laptops")}</title></head><body><main><h1>Laptops</h1>
         <ul><li>Aero 13 — 1.1 kg — 899 €</li><li>Basic 15 — 2.1 kg — 499 €</li></ul></main></body></html>`,
      }
    : null,
);

const scriptDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-script-"));
const scriptPath = path.join(scriptDir, "script.json");
fs.writeFileSync(
  scriptPath,
  JSON.stringify([
    modelOutput({
      title: "Which laptop?",
      text: "Which laptop should I add to your cart?",
      mode: "clarify",
      choices: ["The cheapest one", "The lightest one"],
    }),
    modelOutput({ title: "The lightest", text: "The Aero 13 is the lightest, at 1.1 kg.", mode: "inform" }),
  ]),
);
const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath });
try {
  const { context } = browser;
  const tab = await context.newPage();
  await tab.goto(`${shop.base}/laptops.html`);
  const sidebar = await openSidebar(context);
  await tab.bringToFront();
  await sidebar.fill("#question", "Add the laptop to my cart");
  await sidebar.click("#send");
  await waitForDone(sidebar);

  const buttons = await sidebar.$$eval(".turn .answer .choices button.choice", (els) => els.map((e) => e.textContent));
  assert(buttons.join("|") === "The cheapest one|The lightest one", `the choices are buttons under the question (${buttons})`);
  assert(/Which laptop should I add/.test(norm(await sidebar.textContent(".turn .answer"))), "the question is shown");
  fs.mkdirSync(artifacts, { recursive: true });
  await sidebar.screenshot({ path: path.join(artifacts, "sidebar-clarify.png"), fullPage: true });

  // One click asks the next turn with the choice's text.
  await sidebar.click(".turn .answer .choices button:has-text('The lightest one')");
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn[data-stop-reason]").length === 2, null, { timeout: 60_000 });
  const users = await sidebar.$$eval(".turn > .user", (els) => els.map((e) => e.textContent));
  assert(users.length === 2 && users[1] === "The lightest one", `the choice is the next message (${users})`);
  const disabled = await sidebar.$$eval(".choices button.choice", (els) => els.map((e) => e.disabled));
  assert(disabled.length === 2 && disabled.every(Boolean), `a choice is sent once (${disabled})`);
  const events = await hostEvents(sidebar);
  const started = events.filter((m) => m.type === "turn.started");
  assert(started.length === 2 && started[0].conversation_id === started[1].conversation_id && started[1].turn === 2, `the same conversation goes on (${JSON.stringify(started)})`);
  const clarify = events.find((m) => m.type === "assistant" && m.turn === 1);
  assert(clarify?.mode === "clarify" && clarify.choices.length === 2, `the host sent the mode and the choices (${JSON.stringify(clarify)})`);

  await sidebar.screenshot({ path: path.join(artifacts, "sidebar-clarify-chosen.png"), fullPage: true });

  // History keeps the question's choices, read back from the stored answer.
  await sidebar.click("#nav-history");
  await sidebar.click("#history-list button");
  await sidebar.waitForSelector(".history-choices", { timeout: 10_000 });
  const kept = norm(await sidebar.textContent(".history-choices"));
  assert(kept === "Choices offered: The cheapest one · The lightest one", `history shows the choices (${kept})`);
  console.log("ok clarify: the question's choices are buttons; one click asks the next turn with that text");
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  throw e;
} finally {
  await browser.close();
  await shop.close();
  fs.rmSync(scriptDir, { recursive: true, force: true });
}
