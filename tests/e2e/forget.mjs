// E2E: "Forget what you assumed", real host, headless Chromium.
//   Two turns (the scripted runtime) make a rolling summary due; the
//   configured summarizer (scripted too) answers with the summary and agent
//   state deltas: an assumption and a provisional item. The sidebar shows
//   them after the second answer; Forget clears them through the host's
//   entity_patch (source "user"), the panel says the item is discarded, and
//   the button is disabled with nothing left to forget.
import fs from "node:fs";
import path from "node:path";
import { assert, checkA11y, hostEvents, launch, modelOutput, norm, openSidebar, serve, shot, waitForDone } from "./lib.mjs";

const pages = await serve();
const scriptDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-forget-"));
const turnsScript = path.join(scriptDir, "turns.json");
const summarizerScript = path.join(scriptDir, "summarizer.json");
fs.writeFileSync(
  turnsScript,
  JSON.stringify([modelOutput({ text: "Two hotels are near the station." }), modelOutput({ text: "The Nordic is cheaper." })]),
);
fs.writeFileSync(
  summarizerScript,
  JSON.stringify([
    JSON.stringify({
      summary: "The user compares two hotels near the station.",
      kept_message_ids: ["turn:2"],
      dropped_message_ids: ["turn:1"],
      agent_state_item_updates: [{ op: "add", item: { id: "book-nordic", kind: "task", title: "Book the Nordic", status: "active" } }],
      agent_state_updates: { assumptions: [{ id: "a-may", hypothesis: "The user travels in May", confidence: 0.7 }] },
    }),
  ]),
);
const browser = await launch(
  { LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: turnsScript },
  { config: `[limits]\nrecent_turns = 1\n\n[summarizer]\nkind = "scripted"\nscript = ${JSON.stringify(summarizerScript)}\n` },
);
try {
  const { context } = browser;
  const page = await context.newPage();
  await page.goto(`${pages.base}/article.html`);
  const sidebar = await openSidebar(context);
  await sidebar.bringToFront();

  for (const [i, question] of ["Which hotels are near the station?", "Which one is cheaper?"].entries()) {
    await sidebar.fill("#question", question);
    await sidebar.click("#send");
    await sidebar.waitForSelector(`.turn:nth-of-type(${i + 1})[data-stop-reason]`, { timeout: 60_000 });
  }
  await waitForDone(sidebar);

  // The summarizer's patch brings the assumption and the provisional item.
  const panel = ".agent-state-panel";
  await sidebar.waitForFunction(
    () => /1 assumption/.test(document.querySelector(".agent-state-toggle")?.textContent ?? ""),
    undefined,
    { timeout: 30_000 },
  );
  await sidebar.click(".agent-state-toggle");
  let text = norm(await sidebar.textContent(panel));
  assert(text.includes("The user travels in May (70 % sure)"), `the assumption is shown (${text})`);
  assert(text.includes("Book the Nordic (task, provisional)"), `the item is shown as provisional (${text})`);
  const forget = ".agent-state-forget";
  assert(!(await sidebar.isDisabled(forget)), "Forget can be pressed");
  await checkA11y(sidebar, "agent state with Forget");
  await shot(sidebar, "agent-state-forget");

  await sidebar.click(forget);
  await sidebar.waitForFunction(
    (sel) => !/travels in May/.test(document.querySelector(sel)?.textContent ?? ""),
    ".agent-state-panel",
    { timeout: 15_000 },
  );
  text = norm(await sidebar.textContent(panel));
  assert(text.includes("Book the Nordic (task, discarded)"), `the item is discarded (${text})`);
  assert(await sidebar.isDisabled(forget), "nothing is left to forget");
  await sidebar.waitForFunction(() => window.__laikaEvents.some((e) => e.kind === "event" && e.msg.type === "agent_state.forget.result"), undefined, { timeout: 10_000 });
  const events = await hostEvents(sidebar);
  const patch = events.find((m) => m.type === "entity_patch" && m.source === "user");
  assert(patch && patch.entity === "agent_state", "the change came as the host's entity_patch");
  const result = events.find((m) => m.type === "agent_state.forget.result");
  assert(result && result.assumptions === 1 && result.items >= 1, `the host counted what it forgot (${JSON.stringify(result)})`);
  assert(events.indexOf(patch) < events.indexOf(result), "the patch comes before the result");
  await sidebar.waitForFunction(() => /Laika forgot 1 assumption and 1 provisional item/.test(document.querySelector("#announcer")?.textContent ?? ""), undefined, { timeout: 10_000 });
  console.log("ok forget: the summarizer's assumption and provisional item were forgotten through the host's patch");
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  throw e;
} finally {
  await browser.close();
  await pages.close();
  fs.rmSync(scriptDir, { recursive: true, force: true });
}
