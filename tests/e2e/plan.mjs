// E2E: a question answered with a plan. The scripted model proposes a plan
// of three steps (two reads, then a click on a link to another site); the
// sidebar shows it as a checklist card before anything runs. The user
// unchecks the second step, rewords the first, approves: the statuses move
// to done / skipped / done from the host's patches, the click's own
// approval card says "Step 3 of 3: …", the answer comes, and History shows
// the checklist with its final statuses. A second question's plan is
// cancelled: the turn ends, nothing ran, the composer is free. The card
// open and decided at 360/420/800 px, light and dark, axe clean.
import fs from "node:fs";
import path from "node:path";
import { assert, checkA11y, element, esc, hostEvents, launch, modelOutput, observeTab, openSidebar, screenMatrix, serveRoutes, shot } from "./lib.mjs";

const page = (title, body) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head><body><main>${body}</main></body></html>`;

const maker = await serveRoutes(
  (url) => (url.pathname === "/trail-pack-30.html" ? { body: page("Trail Pack 30", "<h1>Trail Pack 30</h1><p>Weight: 1.2 kg.</p>") } : null),
  "maker.test",
);
const shop = await serveRoutes(
  (url) =>
    url.pathname === "/packs.html"
      ? {
          body: page(
            "Outdoor shop — packs",
            `<h1>Packs</h1><p>Two day packs are in stock this week.</p>
             <ul><li><a href="${maker.base}/trail-pack-30.html">Trail Pack 30</a> — a light day pack.</li>
             <li>Summit Pack 45 — a large pack for multi-day trips.</li></ul>`,
          ),
        }
      : null,
  "shop.test",
);

const plan = {
  id: "plan-packs",
  goal: "Find the light pack and open its page",
  stages: [
    {
      id: "read",
      name: "Read",
      mode: "parallel",
      steps: [
        { id: "s1", title: "Read the list of packs", intent: "research", executor: "research" },
        { id: "s2", title: "Compare the two packs", intent: "analysis", executor: "research" },
      ],
    },
    {
      id: "open",
      name: "Open",
      mode: "sequence",
      steps: [{ id: "s3", title: "Open the light pack's page", intent: "update", executor: "tooling", tools: ["browser.click"] }],
    },
  ],
};

/** The proposal: a short text and the plan (no calls: none would run before the decision). */
const proposal = () => modelOutput({ title: "Plan", text: "Here is my plan.", plan });

const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-plan-"));
const scriptPath = path.join(tmp, "script.json");
const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath }, { config: "[limits]\napproval_timeout_secs = 600\n" });
let sidebar;
const lastTurn = () => sidebar.locator(".turn").last();
const composerFree = () => sidebar.evaluate(() => !document.getElementById("send").disabled && document.getElementById("stop").hidden);
const statuses = (root) =>
  sidebar.$$eval(`${root} .plan-step`, (els) => els.map((e) => `${e.dataset.stepId}:${e.dataset.status}:${e.querySelector(".plan-step-title")?.textContent ?? ""}`));

try {
  const { context, worker } = browser;
  const url = `${shop.base}/packs.html`;
  const tab = await context.newPage();
  await tab.goto(url);
  const link = element(await observeTab(worker, url), "Trail Pack 30");
  fs.writeFileSync(
    scriptPath,
    JSON.stringify([
      proposal(),
      modelOutput({ title: "Packs", text: "The shop lists the Trail Pack 30 and the Summit Pack 45." }),
      modelOutput({ title: "Opening", text: "Opening the Trail Pack 30.", toolCalls: [{ name: "browser.click", arguments: { handleId: link.handle_id } }] }),
      modelOutput({ title: "Trail Pack 30", text: "The light pack is the Trail Pack 30; its page is open." }),
      proposal(),
    ]),
  );
  sidebar = await openSidebar(context);
  await tab.bringToFront();

  // 1. The plan comes as a checklist, and nothing runs before the decision.
  await sidebar.fill("#question", "Find the light pack and open its page.");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".plan-card button:has-text('Approve')", { timeout: 30_000 });
  const card = (await sidebar.textContent(".plan-card")) ?? "";
  assert(/Plan: Find the light pack/.test(card) && /Read/.test(card) && /Open/.test(card), `the card shows the goal and stages (${card})`);
  const titles = await sidebar.$$eval(".plan-card .plan-step-edit", (els) => els.map((e) => e.value));
  assert(titles.join("|") === "Read the list of packs|Compare the two packs|Open the light pack's page", `three editable steps (${titles})`);
  const labels = await sidebar.$$eval(".plan-card input", (els) => els.map((e) => e.getAttribute("aria-label")));
  assert(labels.join("|") === "Run step 1|Step 1 title|Run step 2|Step 2 title|Run step 3|Step 3 title", `every control is named (${labels})`);
  let events = await hostEvents(sidebar);
  const turn = events.find((e) => e.type === "turn.started");
  assert(turn, "the turn started");
  assert(!events.some((e) => e.type === "tool_call"), "no call before the decision");
  await screenMatrix(sidebar, "plan-card", ".plan-card");

  // 2. Edit with the keyboard: uncheck step 2, reword step 1; approve.
  await sidebar.focus(".plan-card input[aria-label='Run step 2']");
  await sidebar.keyboard.press("Space");
  await sidebar.fill(".plan-card input[aria-label='Step 1 title']", "Read the packs on this page");
  await sidebar.focus(".plan-card button:has-text('Approve')");
  await sidebar.keyboard.press("Enter");

  // 3. The click of step 3 asks on its own, naming its step.
  const ask = ".step-item[data-decision=ask] .approval-card";
  await sidebar.waitForSelector(`${ask} button:has-text('Approve')`, { timeout: 30_000 });
  const stepLine = (await sidebar.textContent(`${ask} .approval-plan-step`)) ?? "";
  assert(stepLine === "Step 3 of 3: Open the light pack's page", `the call's card names its step (${stepLine})`);
  const midway = await statuses(".plan-card");
  assert(
    midway.join("|") === "s1:done:Read the packs on this page|s2:skipped:Compare the two packs|s3:running:Open the light pack's page",
    `the checklist shows the host's statuses, the edit applied (${midway})`,
  );
  assert(!(await sidebar.$(".plan-card input, .plan-card button")), "the decided card is read-only");
  await sidebar.click(`${ask} button:has-text('Approve')`);
  await sidebar.waitForSelector(".turn:nth-of-type(1)[data-stop-reason]", { timeout: 30_000 });
  const answer = (await sidebar.textContent(".turn:nth-of-type(1) .answer")) ?? "";
  assert(/its page is open/.test(answer), `the answer comes (${answer})`);
  const final = await statuses(".plan-card");
  assert(final.map((s) => s.split(":")[1]).join(",") === "done,skipped,done", `the statuses end done, skipped, done (${final})`);
  const skipped = (await sidebar.textContent(".plan-step[data-step-id=s2] .plan-step-message")) ?? "";
  assert(/unchecked/.test(skipped), `the skipped step says why (${skipped})`);
  assert(tab.url() === `${maker.base}/trail-pack-30.html`, `the approved click ran (${tab.url()})`);
  events = await hostEvents(sidebar);
  const calls = events.filter((e) => e.type === "tool_call");
  assert(calls.length === 1 && calls[0].plan_step?.step_id === "s3", `one call, in step 3 (${JSON.stringify(calls)})`);
  await screenMatrix(sidebar, "plan-done", ".plan-card");

  // 4. Cancel: the turn ends, nothing runs, the composer is free.
  await tab.goto(url);
  await tab.bringToFront();
  await sidebar.fill("#question", "Find the light pack again.");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn:nth-of-type(2) .plan-card button:has-text('Cancel')", { timeout: 30_000 });
  const before = (await hostEvents(sidebar)).length;
  await lastTurn().locator(".plan-card button", { hasText: "Cancel" }).click();
  await sidebar.waitForSelector(".turn:nth-of-type(2)[data-stop-reason]", { timeout: 30_000 });
  const after = (await hostEvents(sidebar)).slice(before);
  assert(!after.some((e) => e.type === "tool_call" || e.type === "error"), `nothing ran after Cancel (${after.map((e) => e.type)})`);
  assert(after.some((e) => e.type === "done" && e.status === "cancelled"), "the turn ended with done (cancelled)");
  assert(await composerFree(), "the composer is free after Cancel");
  const said = (await sidebar.textContent(".turn:nth-of-type(2) .stop-reason")) ?? "";
  assert(said === "Not run: you cancelled the plan.", `the end says why, plainly (${said})`);
  const cancelled = await statuses(".turn:nth-of-type(2) .plan-card");
  assert(cancelled.every((s) => s.includes(":skipped:")), `every step skipped (${cancelled})`);
  assert(tab.url() === url, "the page did not move");
  await checkA11y(sidebar, "plan cancelled");

  // 5. History shows each turn's checklist with its final statuses.
  await sidebar.click("#nav-history");
  await sidebar.click("#history-list button");
  await sidebar.waitForSelector(".plan-checklist .plan-step", { timeout: 10_000 });
  const stored = await sidebar.$$eval(".plan-checklist", (lists) => lists.map((l) => [...l.querySelectorAll(".plan-step")].map((e) => e.dataset.status).join(",")));
  assert(stored.join(" | ") === "done,skipped,done | skipped,skipped,skipped", `history keeps the checklists (${stored})`);
  const storedTitle = (await sidebar.textContent(".plan-checklist .plan-step[data-step-id=s1] .plan-step-title")) ?? "";
  assert(storedTitle === "Read the packs on this page", `history keeps the user's wording (${storedTitle})`);
  await checkA11y(sidebar, "plan in history");
  await shot(sidebar, "plan-history");
  console.log("ok plan: checklist card, edit (uncheck, reword) and approve, statuses from patches, step named on the call's card, answer, history; Cancel runs nothing");
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  throw e;
} finally {
  await browser.close();
  await shop.close();
  await maker.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
