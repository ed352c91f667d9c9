// E2E: saved prompts in headless Chromium with the real extension and the
// real host (builtin runtime). A prompt saved in Settings is listed by `/` in
// the composer, filtered as typed, run with Enter on the current page, and
// answered; the turn in the history carries the prompt's text.
import { assert, checkA11y, launch, norm, openSidebar, serve, shot } from "./lib.mjs";

const server = await serve();
const browser = await launch();
try {
  const { context } = browser;
  const page = await context.newPage();
  await page.goto(`${server.base}/article.html`);
  await page.waitForLoadState("load");
  const sidebar = await openSidebar(context);

  await sidebar.click("#nav-settings");
  await sidebar.waitForSelector(".prompt-list li");
  await sidebar.fill("#prompt-name", "TL;DR");
  await sidebar.fill("#prompt-text", "Summarize this page in three bullets");
  await sidebar.selectOption("#prompt-task", "web.summarize");
  await sidebar.selectOption("#prompt-slot", "1");
  await sidebar.click(".prompt-form button[type=submit]");
  await sidebar.waitForSelector(".prompt-item");
  const item = norm(await sidebar.textContent(".prompt-item"));
  assert(/TL;DR/.test(item) && /shortcut 1/.test(item), `the saved prompt is listed with its slot (${item})`);
  // A second prompt with the same name is refused, in words.
  await sidebar.fill("#prompt-name", "tl;dr");
  await sidebar.fill("#prompt-text", "Anything");
  await sidebar.click(".prompt-form button[type=submit]");
  await sidebar.waitForFunction(() => /already has this name/.test(document.querySelector(".prompt-form")?.textContent ?? ""));
  await checkA11y(sidebar, "settings: saved prompts");
  await shot(sidebar, "prompts-settings");

  await sidebar.click("#nav-chat");
  await sidebar.click("#question");
  await sidebar.keyboard.type("/");
  await sidebar.waitForSelector("#slash-menu:not([hidden]) [role=option]");
  await sidebar.keyboard.type("tl");
  const options = await sidebar.$$eval("#slash-menu [role=option] .slash-name", (els) => els.map((e) => e.textContent));
  assert(JSON.stringify(options) === '["TL;DR"]', `the / menu filters to the prompt (${JSON.stringify(options)})`);
  await checkA11y(sidebar, "composer: / menu");
  await shot(sidebar, "prompts-slash-menu");
  await sidebar.keyboard.press("Enter");

  await sidebar.waitForSelector(".turn .answer p, .turn .error", { timeout: 30_000 });
  const error = await sidebar.$(".turn .error");
  assert(!error, `no error (got ${error ? await error.textContent() : ""}); host log: ${browser.hostLog()}`);
  const asked = norm(await sidebar.textContent(".turn"));
  assert(/TL;DR/.test(asked), `the turn is labelled with the prompt's name (${asked.slice(0, 200)})`);
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(/night train|sleeper|ÖBB/i.test(answer), `the answer is about the page (${answer.slice(0, 300)})`);
  assert((await sidebar.inputValue("#question")) === "", "the / line is not left in the composer");

  const list = browser.history("list");
  const conversations = Array.isArray(list) ? list : (list.conversations ?? []);
  assert(conversations.length === 1, `one conversation stored (got ${JSON.stringify(list)})`);
  const shown = JSON.stringify(browser.history("show", conversations[0].id));
  assert(/Summarize this page in three bullets/.test(shown) && /web\.summarize/.test(shown), `the turn ran the prompt's text and task (${shown.slice(0, 400)})`);
  console.log("ok prompts: saved in Settings, listed and filtered by /, run with Enter, answered and stored");
} finally {
  await browser.close();
  await server.close();
}
