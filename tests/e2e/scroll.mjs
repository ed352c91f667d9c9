// E2E: the newest answer is in view as it streams, above the sticky
// composer (never under it, nor its buttons); when the user scrolls up to
// read, the chat stays put and "Jump to latest" brings the end back. The
// composer folds mode, selection and tabs into one menu on a narrow panel;
// "Reading: <title>" names the page a question will read; an empty question
// says why nothing was sent. Screenshots at 360, 420 and 800 px, light and
// dark; axe clean.
import fs from "node:fs";
import path from "node:path";
import { artifacts, assert, checkA11y, launch, modelOutput, openSidebar, serve, shot } from "./lib.mjs";

const pages = await serve();
const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-scroll-"));
const scriptPath = path.join(tmp, "script.json");
const para = (n) => Array.from({ length: 60 }, (_, i) => `Sentence ${n}.${i} about night trains and sleeper cabins.`).join(" ");
const slow = (n) => ({ output: modelOutput({ text: para(n) }), chunk_bytes: 40, chunk_delay_ms: 60 });
fs.writeFileSync(scriptPath, JSON.stringify([slow(1), slow(2), slow(3), slow(4)]));
const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath });
let sidebar;

/**
 * Where the last turn is against the composer (px, in the viewport), as the
 * next frame paints it: measured in a resize observer's first callback,
 * which runs after the sidebar's own (registered first) has scrolled.
 */
const layout = () =>
  sidebar.evaluate(() => new Promise((resolve) => {
    const measure = () => {
    const turns = document.querySelectorAll(".turn");
    const last = turns[turns.length - 1]?.getBoundingClientRect();
    const composer = document.getElementById("composer").getBoundingClientRect();
    const actions = turns[turns.length - 1]?.querySelector(".answer-actions")?.getBoundingClientRect() ?? null;
    return { lastTop: last?.top ?? 0, lastBottom: last?.bottom ?? 0, composerTop: composer.top, composerHeight: composer.height, actionsBottom: actions?.bottom ?? null, h: window.innerHeight };
    };
    const ro = new ResizeObserver(() => {
      ro.disconnect();
      resolve(measure());
    });
    ro.observe(document.getElementById("messages"));
  }));

try {
  const { context } = browser;
  const page = await context.newPage();
  await page.goto(`${pages.base}/article.html`);
  const title = await page.title();
  sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 800 });
  // The sidebar is in front, as a real side panel is seen: a background tab paints (and scrolls) once a second.
  // Questions still read the article, the web page used last.
  await page.bringToFront();
  await sidebar.bringToFront();

  // "Reading:" names the page a question will read.
  await sidebar.waitForFunction((t) => (document.getElementById("reading")?.textContent ?? "").includes(t), title, { timeout: 10_000 });
  // An empty question says why nothing happened.
  await sidebar.click("#send");
  await sidebar.waitForSelector("#status:not([hidden])");
  assert(/Type a question first/.test(await sidebar.textContent("#status")), "an empty question says why");
  assert((await sidebar.$$(".turn")).length === 0, "and sends nothing");

  // Three answers: each streams in view, above the composer, buttons included.
  for (let n = 1; n <= 3; n++) {
    await sidebar.fill("#question", `Question ${n}: what about night trains?`);
    await sidebar.press("#question", "Enter");
    await sidebar.waitForSelector(`.turn:nth-of-type(${n}) .streaming-text`, { timeout: 30_000 });
    await sidebar.waitForTimeout(400);
    const streaming = await layout();
    assert(streaming.lastBottom <= streaming.composerTop + 1 && streaming.lastBottom > streaming.composerTop - 60, `answer ${n} streams just above the composer (${JSON.stringify(streaming)})`);
    await sidebar.waitForSelector(`.turn:nth-of-type(${n}) .answer-actions`, { timeout: 30_000 });
    await sidebar.waitForTimeout(200);
    const done = await layout();
    assert(done.actionsBottom !== null && done.actionsBottom <= done.composerTop + 1, `answer ${n}'s buttons are above the composer (${JSON.stringify(done)})`);
  }
  assert(!(await sidebar.isVisible("#jump-latest")), "no Jump to latest while following");

  // The user scrolls up while the fourth answer streams: it stays put, and Jump to latest brings the end.
  await sidebar.fill("#question", "Question 4: and the sleeper cabins?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForSelector(".turn:nth-of-type(4) .streaming-text", { timeout: 30_000 });
  await sidebar.mouse.move(200, 300);
  await sidebar.mouse.wheel(0, -1500);
  // The wheel scrolls smoothly: read where it came to rest.
  await sidebar.waitForTimeout(1000);
  const y = await sidebar.evaluate(() => window.scrollY);
  await sidebar.waitForSelector("#jump-latest:visible", { timeout: 5_000 });
  await sidebar.waitForTimeout(800);
  const still = await sidebar.evaluate(() => window.scrollY);
  assert(Math.abs(still - y) < 2, `the chat stays where the user scrolled (${y} → ${still})`);
  await checkA11y(sidebar, "jump to latest shown");
  // What the panel shows (a full-page shot would resize the viewport to the end, and so follow it again).
  await sidebar.screenshot({ path: path.join(artifacts, "scroll-jump-latest-420-light.png") });
  await sidebar.click("#jump-latest");
  await sidebar.waitForSelector(".turn:nth-of-type(4) .answer-actions", { timeout: 30_000 });
  await sidebar.waitForTimeout(200);
  const back = await layout();
  assert(back.actionsBottom !== null && back.actionsBottom <= back.composerTop + 1 && back.lastBottom > back.composerTop - 60, `Jump to latest follows the end again (${JSON.stringify(back)})`);
  assert(!(await sidebar.isVisible("#jump-latest")), "the button goes once at the end");

  // Narrow panels: mode, selection and tabs fold into one menu; a compact composer.
  const heights = {};
  for (const width of [360, 420, 800]) {
    for (const scheme of ["light", "dark"]) {
      await sidebar.emulateMedia({ colorScheme: scheme });
      await sidebar.setViewportSize({ width, height: 800 });
      await sidebar.waitForTimeout(150);
      const l = await layout();
      heights[width] = l.composerHeight;
      const folded = await sidebar.evaluate(() => !document.getElementById("composer-more").open);
      assert(folded === width < 480, `the composer menu is folded only on a narrow panel (${width} px: ${folded})`);
      const overflow = await sidebar.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert(overflow <= 0, `nothing is wider than the panel at ${width} px (${overflow} px over)`);
      await checkA11y(sidebar, `chat at ${width} px ${scheme}`);
      await shot(sidebar, `scroll-chat-${width}-${scheme}`);
    }
  }
  assert(heights[360] < heights[800], `the composer is smaller on a narrow panel (${JSON.stringify(heights)})`);
  assert(heights[360] <= 230, `a compact composer at 360 px (${heights[360]} px)`);
  console.log(`ok scroll: answers stream in view above the composer; Jump to latest; compact composer (${JSON.stringify(heights)} px); Reading line; empty question says why`);
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  if (sidebar) await shot(sidebar, "scroll-failure").catch(() => undefined);
  throw e;
} finally {
  await browser.close();
  await pages.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
