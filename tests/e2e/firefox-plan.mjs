// E2E in Firefox (firefox-esr over WebDriver BiDi, the real host): a plan's
// checklist. The scripted model proposes three steps — two reads in a
// parallel stage (running together), then a step that opens another page of
// the site. The checklist card comes before anything runs; approved, the
// statuses move from the host's patches, the navigation's own approval
// card says "Step 3 of 3: …", the tab moves only once that card is
// approved, and the answer comes. A second question's plan is cancelled:
// every step skipped, nothing run, the composer free. axe clean.
import fs from "node:fs";
import path from "node:path";
import { artifacts, assert, checkA11y, launchFirefox, modelOutput, norm, serve } from "./lib.mjs";

const pages = await serve();
const plan = {
  id: "plan-trains",
  goal: "Read the article, then open the recipe page",
  stages: [
    {
      id: "read",
      name: "Read",
      mode: "parallel",
      steps: [
        { id: "s1", title: "Read the article", intent: "research", executor: "research" },
        { id: "s2", title: "Note the routes it names", intent: "analysis", executor: "research" },
      ],
    },
    {
      id: "open",
      name: "Open",
      mode: "sequence",
      steps: [{ id: "s3", title: "Open the recipe page", intent: "update", executor: "tooling", tools: ["browser.navigate"], inputs: ["s1", "s2"] }],
    },
  ],
};

/** The proposal: a short text and the plan. */
const proposal = () => modelOutput({ title: "Plan", text: "Here is my plan.", plan });

let firefox;
const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-ff-plan-"));
try {
  const scriptPath = path.join(tmp, "script.json");
  const recipe = `${pages.base}/recipe.html`;
  // The two reads are asked at once, so their answers are alike: which
  // call gets which line does not matter.
  const read = modelOutput({ title: "Read", text: "The article is about night trains." });
  fs.writeFileSync(
    scriptPath,
    JSON.stringify([
      proposal(),
      read,
      read,
      modelOutput({ title: "Opening", text: "Opening the recipe page.", toolCalls: [{ name: "browser.navigate", arguments: { url: recipe } }] }),
      modelOutput({ title: "Done", text: "The article is read and the recipe page is open." }),
      proposal(),
    ]),
  );
  const config = ["[runtime]", 'kind = "scripted"', `script = ${JSON.stringify(scriptPath)}`, "", "[limits]", "approval_timeout_secs = 600", ""].join("\n");
  firefox = await launchFirefox({}, { config });
  const { browser } = firefox;
  const page = await browser.newPage();
  const article = `${pages.base}/article.html`;
  await page.goto(article, { waitUntil: "load" });
  const sidebar = await firefox.openSidebar();
  if (await sidebar.$("#welcome button")) await sidebar.evaluate(() => [...document.querySelectorAll("#welcome button")].find((b) => b.textContent === "Got it")?.click());
  const text = (selector) => sidebar.$eval(selector, (e) => e.textContent ?? "").then(norm);
  const statuses = (root) =>
    sidebar.$$eval(`${root} .plan-step`, (els) => els.map((e) => `${e.dataset.stepId}:${e.dataset.status}`).join(","));

  // 1. The plan comes as a checklist; nothing runs before the decision.
  await sidebar.type("#question", "Read this article, then open the recipe page.");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".plan-card button", { timeout: 30_000 });
  const card = await text(".plan-card");
  assert(/Plan: Read the article, then open the recipe page/.test(card) && /Read/.test(card) && /Open/.test(card), `the card shows the goal and stages (${card})`);
  const titles = await sidebar.$$eval(".plan-card .plan-step-edit", (els) => els.map((e) => e.value));
  assert(titles.join("|") === "Read the article|Note the routes it names|Open the recipe page", `three editable steps (${titles})`);
  assert(!(await sidebar.$(".turn .step-item")), "no call before the decision");
  await checkA11y(sidebar, "firefox: plan proposed");

  // 2. Approve: the reads run together, then the navigation asks on its
  // own, naming its step. Every state the checklist shows is kept.
  await sidebar.evaluate(() => {
    window.__planStates = [];
    const note = () => {
      const state = [...document.querySelectorAll(".plan-card .plan-step")].map((e) => `${e.dataset.stepId}:${e.dataset.status}`).join(",");
      if (state !== window.__planStates.at(-1)) window.__planStates.push(state);
    };
    new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true });
    [...document.querySelectorAll(".plan-card button")].find((b) => b.textContent === "Approve")?.click();
  });
  const ask = ".step-item[data-decision=ask] .approval-card";
  await sidebar.waitForSelector(`${ask} .approval-plan-step`, { timeout: 30_000 });
  const stepLine = await text(`${ask} .approval-plan-step`);
  assert(stepLine === "Step 3 of 3: Open the recipe page", `the call's card names its step (${stepLine})`);
  const midway = await statuses(".plan-card");
  assert(midway === "s1:done,s2:done,s3:running", `the checklist shows the host's statuses (${midway})`);
  assert(page.url() === article, "the tab waits for the navigation's own approval");
  const seen = await sidebar.evaluate(() => window.__planStates);
  assert(seen.includes("s1:running,s2:running,s3:pending"), `the two reads ran together (${seen.join(" → ")})`);
  await sidebar.evaluate((sel) => [...document.querySelectorAll(`${sel} button`)].find((b) => b.textContent === "Approve")?.click(), ask);
  await sidebar.waitForSelector(".turn:nth-of-type(1)[data-stop-reason]", { timeout: 30_000 });
  const answer = await text(".turn:nth-of-type(1) .answer");
  assert(/recipe page is open/.test(answer), `the answer comes (${answer})`);
  const final = await statuses(".turn:nth-of-type(1) .plan-card");
  assert(final === "s1:done,s2:done,s3:done", `the statuses end done (${final})`);
  await page.waitForFunction((url) => location.href === url, { timeout: 10_000 }, recipe);
  const calls = await sidebar.$$eval(".turn:nth-of-type(1) .step-item", (els) => els.map((e) => e.dataset.decision));
  assert(calls.join(",") === "ask", `one call, asked (${calls})`);
  await checkA11y(sidebar, "firefox: plan done");
  fs.mkdirSync(artifacts, { recursive: true });
  await sidebar.screenshot({ path: path.join(artifacts, "firefox-plan-420-light.png") });

  // 3. Cancel: the turn ends, nothing runs, the composer is free.
  await page.goto(article, { waitUntil: "load" });
  await sidebar.type("#question", "Do it again.");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn:nth-of-type(2) .plan-card button", { timeout: 30_000 });
  await sidebar.evaluate(() => [...document.querySelectorAll(".turn:nth-of-type(2) .plan-card button")].find((b) => b.textContent === "Cancel")?.click());
  await sidebar.waitForSelector(".turn:nth-of-type(2)[data-stop-reason]", { timeout: 30_000 });
  assert(!(await sidebar.$(".turn:nth-of-type(2) .step-item, .turn:nth-of-type(2) .error-card")), "nothing ran after Cancel, and nothing failed");
  const said = await text(".turn:nth-of-type(2) .stop-reason");
  assert(said === "Not run: you cancelled the plan.", `the end says why, plainly (${said})`);
  const cancelled = await statuses(".turn:nth-of-type(2) .plan-card");
  assert(cancelled === "s1:skipped,s2:skipped,s3:skipped", `every step skipped (${cancelled})`);
  assert(await sidebar.evaluate(() => !document.getElementById("send").disabled && document.getElementById("stop").hidden), "the composer is free after Cancel");
  assert(page.url() === article, "the page did not move");
  await checkA11y(sidebar, "firefox: plan cancelled");
  console.log("ok firefox-plan: checklist card, two reads asked together, statuses from patches, the step named on the call's card, answer; Cancel runs nothing");
} finally {
  await firefox?.close();
  await pages.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
