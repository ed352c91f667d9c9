// E2E: the host is missing, or there but silent.
//  - Without a native-host manifest the sidebar says the Laika app is not
//    installed and shows a command that pastes as it is; Summarize fails at
//    once with words a person can act on (no endless "Asking…").
//  - A host that never answers: Stop ends the turn at once, and an
//    unattended turn gives up after the sidebar's timeout.
import { EXTENSION_ID, assert, checkA11y, launch, norm, serve, shot } from "./lib.mjs";

const pages = await serve();
async function sidebarWithPage(browser) {
  const page = await browser.context.newPage();
  await page.goto(`${pages.base}/article.html`);
  const sidebar = await browser.context.newPage();
  await sidebar.setViewportSize({ width: 420, height: 800 });
  await sidebar.goto(`chrome-extension://${EXTENSION_ID}/sidepanel.html`);
  return sidebar;
}

let browser = await launch({}, { installHost: false });
try {
  const sidebar = await sidebarWithPage(browser);
  await sidebar.waitForFunction(() => /not installed/.test(document.getElementById("status")?.textContent ?? ""), null, { timeout: 20_000 });
  const command = await sidebar.textContent("#status code");
  assert(command === "laika-host install", `the install command pastes as it is (${command})`);
  await sidebar.click("#summarize");
  await sidebar.waitForSelector(".turn .error", { timeout: 10_000 });
  const error = norm(await sidebar.textContent(".turn .error"));
  assert(/not installed/.test(error) && /Install it/.test(error), `the turn says why, at once (${error})`);
  assert(await sidebar.isHidden("#stop"), "the turn is over (no Stop)");
  assert(await sidebar.isHidden(".turn .progress"), "no endless progress line");
  await checkA11y(sidebar, "not installed");
  await shot(sidebar, "not-installed");
} finally {
  await browser.close();
}

// A "host" that reads its input and never says a word.
browser = await launch({}, { hostCommand: "exec cat >/dev/null" });
try {
  const sidebar = await sidebarWithPage(browser);
  await sidebar.click("#summarize");
  await sidebar.waitForSelector("#stop:not([hidden])");
  await sidebar.click("#summarize");
  // The note is written as the click is handled, which a loaded machine may run after `click` returns.
  const busy = await sidebar
    .waitForFunction(() => /still answering/.test(document.querySelector("#status")?.textContent ?? ""), null, { timeout: 5000 })
    .then(() => true, () => false);
  assert(busy, `a second ask while one runs says why nothing happens (${await sidebar.textContent("#status")})`);
  assert((await sidebar.$$(".turn")).length === 1, "and starts no second turn");
  await sidebar.click("#stop");
  await sidebar.waitForSelector(".turn .notice:text('Stopped.')", { timeout: 5000 });
  assert(await sidebar.isHidden("#stop"), "Stop ended the turn");
  assert(!/still answering/.test(await sidebar.textContent("#status")), "the busy note goes with it");
  const started = Date.now();
  await sidebar.click("#summarize");
  await sidebar.waitForSelector(".turn:nth-child(2) .error", { timeout: 40_000 });
  const error = norm(await sidebar.textContent(".turn:nth-child(2) .error"));
  assert(/did not answer within \d+ seconds/.test(error), `the silent host times out (${error})`);
  assert(Date.now() - started >= 15_000, "only after the timeout");
  console.log("ok not-installed: pasteable install command, immediate failure, Stop and timeout with a silent host");
} finally {
  await browser.close();
  await pages.close();
}
