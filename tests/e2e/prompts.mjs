// E2E: saved prompts in headless Chromium with the real extension and the
// real host (builtin runtime). A prompt saved in Settings is listed by `/` in
// the composer, filtered as typed, run with Enter on the current page, and
// answered; the turn in the history carries the prompt's text. The shortcut
// commands run-prompt-1..3 have no default keys (the user picks them) and a
// test cannot press a browser command: the service worker's
// chrome.commands.onCommand is dispatched as the browser would dispatch it
// (the command's name and the active tab). The panel is asked to open on the
// tab's window (side panels only open on a real gesture, so the call is
// recorded), and the prompt of that slot runs on the current page: in the
// open sidebar, and, with none open, in the sidebar that opens next.
import { assert, checkA11y, launch, norm, openSidebar, openTab, serve, shot } from "./lib.mjs";

const server = await serve();
const browser = await launch();
try {
  const { context } = browser;
  const page = await openTab(context, `${server.base}/article.html`);
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
  // The shortcut of slot 2, with the sidebar open.
  await sidebar.click("#nav-settings");
  await sidebar.fill("#prompt-name", "Catch");
  await sidebar.fill("#prompt-text", "What is the catch with the night trains?");
  await sidebar.selectOption("#prompt-task", "web.answer");
  await sidebar.selectOption("#prompt-slot", "2");
  await sidebar.click(".prompt-form button[type=submit]");
  await sidebar.waitForFunction(() => document.querySelectorAll(".prompt-item").length === 2);
  await sidebar.click("#nav-chat");
  await page.bringToFront();
  const { worker } = browser;
  /** Dispatches the command as the browser does on its key; returns the windows the panel was asked to open on. */
  const press = (name) =>
    worker.evaluate(async (command) => {
      const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
      const opened = [];
      const open = chrome.sidePanel.open;
      chrome.sidePanel.open = (options) => {
        opened.push(options);
        return Promise.resolve();
      };
      try {
        chrome.commands.onCommand.dispatch(command, tab);
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        chrome.sidePanel.open = open;
      }
      return { opened, windowId: tab.windowId, url: tab.url };
    }, name);
  const pressed = await press("run-prompt-2");
  assert(pressed.url.endsWith("/article.html"), `the command names the page in front (${pressed.url})`);
  assert(pressed.opened.length === 1 && pressed.opened[0].windowId === pressed.windowId, `the panel is opened on the page's window (${JSON.stringify(pressed)})`);
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn[data-stop-reason]").length === 2, null, { timeout: 30_000 });
  const second = norm(await sidebar.textContent(".turn:nth-of-type(2)"));
  assert(/Catch/.test(second) && /night train|sleeper|ÖBB/i.test(second), `slot 2's prompt ran on the page (${second.slice(0, 300)})`);

  // Slot 1 with no sidebar open: the sidebar that opens runs it.
  await sidebar.close();
  const closed = await press("run-prompt-1");
  assert(closed.opened.length === 1, `the panel is opened (${JSON.stringify(closed)})`);
  const panel = await openSidebar(context);
  await page.bringToFront();
  await panel.waitForSelector(".turn[data-stop-reason]", { timeout: 30_000 });
  const first = norm(await panel.textContent(".turn"));
  assert(/TL;DR/.test(first) && /night train|sleeper|ÖBB/i.test(first), `the opened panel ran slot 1's prompt (${first.slice(0, 300)})`);
  const stored = browser.history("list");
  const turns = (Array.isArray(stored) ? stored : stored.conversations).reduce((n, c) => n + c.turns, 0);
  assert(turns === 3, `the shortcut turns are stored (${turns} turns: ${JSON.stringify(stored).slice(0, 300)})`);
  console.log("ok prompts: saved in Settings, listed and filtered by /, run with Enter, answered and stored; run-prompt-2 and run-prompt-1 commands run their prompts and open the panel");
} finally {
  await browser.close();
  await server.close();
}
