// E2E: a model that answers with something other than Laika's JSON (plain
// prose, every attempt). The turn ends on an error card that says so in
// words, with Retry and Use offline; Use offline answers this question from
// this computer, and the header keeps naming the model. Screens at 360, 420
// and 800 px, light and dark; axe clean.
import fs from "node:fs";
import path from "node:path";
import { assert, launch, norm, openSidebar, openTab, screenMatrix, serve } from "./lib.mjs";

const pages = await serve();
const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-bad-output-"));
const scriptPath = path.join(tmp, "script.json");
// More than the attempts a turn makes: each one gets prose.
fs.writeFileSync(scriptPath, JSON.stringify(Array.from({ length: 8 }, () => "Sure! The night train leaves at nine. Anything else?")));
const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath });

try {
  const { context } = browser;
  await openTab(context, `${pages.base}/article.html`);
  const sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 800 });
  const welcome = await sidebar.$("#welcome button:text('Got it')");
  if (welcome) await welcome.click();
  await sidebar.fill("#question", "When does the night train leave?");
  await sidebar.click("#send");
  const card = ".turn:nth-of-type(1) .error-card";
  await sidebar.waitForSelector(`${card} button:text('Use offline')`, { timeout: 60_000 });
  const said = norm(await sidebar.textContent(card));
  assert(/answer couldn.t be used/.test(said), `the card says the answer could not be used (${said})`);
  assert(await sidebar.$(`${card} button:text('Retry')`), "Retry is offered");
  assert(await sidebar.evaluate(() => !document.getElementById("send").disabled && document.getElementById("stop").hidden), "the composer is free");
  const shots = await screenMatrix(sidebar, "bad-output", card);

  await sidebar.click(`${card} button:text('Use offline')`);
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn .answer-actions").length === 1, null, { timeout: 30_000 });
  const badge = norm(await sidebar.textContent(".turn:last-of-type .badge"));
  assert(/stayed on this computer/.test(badge) && /extractive|offline/i.test(badge), `the offline reader answered (${badge})`);
  assert(/scripted/i.test(await sidebar.textContent("#runtime")), "the header still names the model");
  console.log(`ok bad-output: prose from the model ends on a card with Retry and Use offline; Use offline answered; ${shots} screens`);
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  throw e;
} finally {
  await browser.close();
  await pages.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
