// E2E: the chat screen as a person uses it, real host, headless Chromium.
//  - Enter sends, Shift+Enter adds a line; the answer has Copy (Markdown),
//    Regenerate and Edit question; the header and composer stay on screen in
//    a long chat; each answer names the runtime that answered.
//  - After switching Settings to an OpenAI-compatible server the header names
//    that server's runtime (not the offline one); a base URL that serves a web
//    page shows which URL failed and why in plain words (no HTML) with Retry /
//    Use offline, and Use offline answers from this computer for that answer
//    only (the header and Settings keep the server).
//  - After the answer, the conversation's agent state appears collapsed
//    (a button with aria-expanded) and opens on a click.
//  - axe-core: no serious or critical violation in each state.
import fs from "node:fs";
import path from "node:path";
import { assert, checkA11y, launch, norm, openSidebar, serve, serveRoutes, shot } from "./lib.mjs";

const pages = await serve();
const notAModelServer = await serveRoutes(() => ({
  body: "<!doctype html><html><head><title>Router admin</title></head><body><h1>Welcome to your router</h1></body></html>",
}));
const browser = await launch();
const answers = () => sidebar.$$eval(".turn .answer-actions", (els) => els.length);
let sidebar;
try {
  const { context } = browser;
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const page = await context.newPage();
  await page.goto(`${pages.base}/article.html`);
  sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 700 });

  // First run: what Laika reads, where it goes, how to pick a model; once.
  await sidebar.waitForSelector("#welcome");
  const welcome = await sidebar.$$eval("#welcome h3", (els) => els.map((e) => e.textContent));
  assert(welcome.join("|") === "What Laika reads|Where it goes|How to pick a model", `first-run sections (${welcome})`);
  await checkA11y(sidebar, "first run");
  await shot(sidebar, "first-run");
  await sidebar.click("#welcome button:text('Got it')");
  assert(!(await sidebar.$("#welcome")), "dismissed");
  assert(await sidebar.evaluate(() => document.activeElement?.id === "question"), "focus goes to the question");
  await sidebar.reload();
  await sidebar.waitForFunction(() => (document.getElementById("runtime")?.textContent ?? "").length > 0);
  await new Promise((r) => setTimeout(r, 300));
  assert(!(await sidebar.$("#welcome")), "not shown again");
  await sidebar.click("#about");
  await sidebar.waitForSelector("#welcome");
  assert(await sidebar.evaluate(() => document.activeElement?.id === "welcome-title"), "About shows it again, focused");
  await sidebar.click("#welcome button:text('Got it')");

  // Keyboard: the composer's controls in reading order, focus visible. At 420 px mode, selection and
  // tabs are folded into one menu; opened, they follow its toggle.
  const tabOrder = async (n) => {
    await sidebar.focus("#summarize");
    const order = [];
    for (let i = 0; i < n; i++) {
      order.push(await sidebar.evaluate(() => document.activeElement?.id));
      await sidebar.keyboard.press("Tab");
    }
    return order.join(",");
  };
  let order = await tabOrder(5);
  assert(order === "summarize,new-chat,composer-more-toggle,question,send", `focus order, folded (${order})`);
  await sidebar.click("#composer-more-toggle");
  order = await tabOrder(8);
  assert(order === "summarize,new-chat,composer-more-toggle,mode,intent,ask-selection,add-tabs,question", `focus order, opened (${order})`);
  await sidebar.keyboard.press("Shift+Tab");
  const outline = await sidebar.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert(outline !== "none", `focus is visible (${outline})`);
  await checkA11y(sidebar, "empty chat");

  // Shift+Enter is a newline, Enter sends.
  await sidebar.click("#question");
  await sidebar.keyboard.type("Which trains run");
  await sidebar.keyboard.press("Shift+Enter");
  await sidebar.keyboard.type("at night?");
  assert((await sidebar.inputValue("#question")) === "Which trains run\nat night?", "Shift+Enter inserts a newline");
  assert((await sidebar.$$(".turn")).length === 0, "Shift+Enter does not send");
  await sidebar.keyboard.press("Enter");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 30_000 });
  assert((await sidebar.inputValue("#question")) === "", "Enter sent the question and cleared the box");
  assert(norm(await sidebar.textContent(".turn .user")) === "Which trains run at night?", "the question is shown");

  // Screen readers hear the finished answer once (a polite live region), not every streamed block.
  await sidebar.waitForFunction(() => /^Answer ready\. \S/.test(document.getElementById("announcer")?.textContent ?? ""));
  assert((await sidebar.getAttribute("#announcer", "aria-live")) === "polite", "the announcer is a polite live region");
  assert((await sidebar.getAttribute(".turn", "aria-busy")) === "false", "the turn is no longer busy");

  // The badge names the runtime that answered and where the page went.
  await sidebar.waitForSelector(".turn .badge:not([hidden])");
  const badge = norm(await sidebar.textContent(".turn .badge"));
  assert(/offline/i.test(badge) && /stayed on this computer/.test(badge), `badge says offline, page stayed here (${badge})`);
  assert(/stayed on this computer/.test(await sidebar.textContent("#runtime")), "the header says the same");

  // The agent state arrives after the answer, collapsed; its button opens it.
  await sidebar.waitForSelector(".turn .agent-state:not([hidden])", { timeout: 15_000 });
  const stateToggle = ".turn .agent-state-toggle";
  assert((await sidebar.getAttribute(stateToggle, "aria-expanded")) === "false", "the agent state starts collapsed");
  assert(!(await sidebar.isVisible(".turn .agent-state-panel")), "its panel is hidden");
  await sidebar.click(stateToggle);
  assert((await sidebar.getAttribute(stateToggle, "aria-expanded")) === "true", "its button expands it");
  const statePanel = norm(await sidebar.textContent(".turn .agent-state-panel"));
  assert(statePanel.includes("Which trains run at night? (question, resolved)"), `the panel lists the question (${statePanel})`);
  await checkA11y(sidebar, "agent state open");
  await shot(sidebar, "agent-state");
  await sidebar.click(stateToggle);

  // Copy puts the answer on the clipboard as Markdown.
  await sidebar.click(".act-copy");
  await sidebar.waitForFunction(() => document.querySelector(".act-copy")?.textContent === "Copied");
  const copied = await sidebar.evaluate(() => navigator.clipboard.readText());
  const shown = norm(await sidebar.textContent(".turn .answer > p, .turn .answer li"));
  assert(copied.includes(shown.slice(0, 30)), `the clipboard has the answer (${copied.slice(0, 120)} / ${shown.slice(0, 60)})`);
  await checkA11y(sidebar, "answered");

  // Inline markers [n] after the quoted passages highlight the page.
  const marker = await sidebar.$(".turn .answer .cite-marker");
  assert(marker && /^\[\d+\]$/.test(await marker.textContent()), "the answer has inline citation markers");
  await marker.click();
  await page.waitForSelector("[data-laika-highlighted]", { timeout: 10_000 });
  await page.waitForSelector("[data-laika-highlighted]", { state: "detached", timeout: 10_000 });

  // Regenerate asks the same question again; Edit puts it back in the box.
  await sidebar.click(".act-regenerate");
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn .answer-actions").length === 2, null, { timeout: 30_000 });
  const users = await sidebar.$$eval(".turn .user", (els) => els.map((e) => e.textContent));
  assert(users.length === 2 && users[0] === users[1], `regenerate repeats the question (${users})`);
  await sidebar.click(".turn:last-child .act-edit");
  assert((await sidebar.inputValue("#question")) === "Which trains run\nat night?", "edit puts the question back");
  assert(await sidebar.evaluate(() => document.activeElement?.id === "question"), "and focuses the box");

  // A long chat: the header and the composer stay on screen.
  for (let i = 0; i < 3; i++) {
    await sidebar.fill("#question", `Question ${i + 3}: what about sleeper cars?`);
    await sidebar.press("#question", "Enter");
    await sidebar.waitForFunction((n) => document.querySelectorAll(".turn .answer-actions").length === n, i + 3, { timeout: 30_000 });
  }
  await sidebar.evaluate(() => window.scrollTo(0, document.body.scrollHeight / 2));
  const inView = await sidebar.evaluate(() => {
    const r = (id) => document.getElementById(id).getBoundingClientRect();
    return { top: r("runtime").top, composer: r("send").bottom, h: window.innerHeight, scrolled: window.scrollY };
  });
  assert(inView.scrolled > 0, `the chat is long enough to scroll (${JSON.stringify(inView)})`);
  assert(inView.top >= 0 && inView.top < 80 && inView.composer <= inView.h, `header and composer stay visible (${JSON.stringify(inView)})`);
  await shot(sidebar, "chat-long");

  // Switch to an OpenAI-compatible "server" that is really a web page.
  await sidebar.click("#nav-settings");
  await sidebar.waitForSelector("#set-kind option[value=openai]", { state: "attached" });
  await sidebar.selectOption("#set-kind", "openai");
  await sidebar.fill("#set-base-url", `${notAModelServer.base}/v1`);
  await sidebar.fill("#set-model", "router-model");
  await sidebar.click("#settings-form button[type=submit]");
  await sidebar.waitForFunction(() => /Saved/.test(document.getElementById("settings-message")?.textContent ?? ""));
  await sidebar.click("#nav-chat");
  const before = await answers();
  await sidebar.fill("#question", "Is there a night train to Vienna?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForSelector(".error-card", { timeout: 30_000 });
  const header = norm(await sidebar.textContent("#runtime"));
  assert(/router-model/.test(header) && !/extractive/i.test(header), `the header names the runtime now answering (${header})`);
  const card = norm(await sidebar.textContent(".error-card"));
  assert(card.includes(notAModelServer.base), `the card names the URL that failed (${card})`);
  assert(/web page/.test(card) && !/[<>]/.test(card) && !/Welcome to your router/.test(card), `why, in plain words, no HTML (${card})`);
  assert((await sidebar.$(".error-card button:text('Retry')")) && (await sidebar.$(".error-card button:text('Use offline')")), "Retry and Use offline");
  await checkA11y(sidebar, "bad server");
  await shot(sidebar, "chat-bad-server");

  await sidebar.click(".error-card button:text('Use offline')");
  await sidebar.waitForFunction((n) => document.querySelectorAll(".turn .answer-actions").length === n, before + 1, { timeout: 30_000 });
  const last = norm(await sidebar.textContent(".turn:last-child .badge"));
  assert(/stayed on this computer/.test(last) && !/router-model/.test(last), `the offline runtime answered (${last})`);
  // "Use offline" is this answer's alone: Settings and the header keep the server.
  assert(/router-model/.test(await sidebar.textContent("#runtime")), "the header still names the configured server");
  assert(/router-model/.test(await sidebar.$eval("#runtime-switch", (s) => s.selectedOptions[0]?.textContent ?? "")), "so does the switcher");
  const config = fs.readFileSync(path.join(browser.tmp, "config.toml"), "utf8");
  assert(/kind = "openai"/.test(config) && config.includes("router-model"), `Use offline left the config as it was (${config})`);
  // A citation whose passage is gone: plain words, not an internal message.
  await page.goto(`${pages.base}/shop.html`);
  await sidebar.click(".turn:last-child .citation:not(.unverified)");
  await sidebar.waitForSelector("#status:not([hidden])");
  const status = norm(await sidebar.textContent("#status"));
  assert(/^This passage is no longer on the page/.test(status) && !/cited text|NOT_FOUND/.test(status), `citation error in plain words (${status})`);
  console.log("ok chat: Enter/Shift+Enter, copy, inline markers, regenerate, edit, sticky header/composer, runtime badge, bad server card, use offline, citation error words, first run, focus, axe clean");
} finally {
  await browser.close();
  await pages.close();
  await notAModelServer.close();
}
