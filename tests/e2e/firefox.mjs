// E2E: Firefox really runs the extension. Debian's firefox-esr, driven over
// WebDriver BiDi (puppeteer-core), loads the Firefox build as a temporary
// add-on; "Summarize this page" goes through the real laika-host, found
// through a manifest in ~/.mozilla/native-messaging-hosts/ of a temporary
// HOME (the user's own registration is never touched). Checks the answer,
// the offline card added below it without moving it, a citation
// highlighting the page, and the turn in the host's history.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { artifacts, assert, hostBinary, launchFirefox, norm, serve } from "./lib.mjs";

const pages = await serve();
let firefox;
try {
  firefox = await launchFirefox();
  const { browser, env } = firefox;
  const page = await browser.newPage();
  await page.goto(`${pages.base}/article.html`, { waitUntil: "load" });
  const sidebar = await firefox.openSidebar();
  const runtime = await sidebar.$eval("#runtime", (e) => e.textContent);
  assert(/offline|extractive/i.test(runtime), `the host said hello through Firefox native messaging (${runtime})`);

  await sidebar.click("#summarize");
  await sidebar.waitForSelector(".turn .answer-actions, .turn .error, .turn .error-card", { timeout: 60_000 });
  const error = await sidebar.$(".turn .error");
  assert(!error, `no error (${error ? await error.evaluate((e) => e.textContent) : ""})`);
  const answer = norm(await sidebar.$eval(".turn .answer", (e) => e.textContent));
  assert(/night train|sleeper|ÖBB/i.test(answer), `the summary is about the page (${answer.slice(0, 200)})`);
  const badge = norm(await sidebar.$eval(".turn .badge", (e) => e.textContent));
  assert(/stayed on this computer/.test(badge), `the badge says where the page went (${badge})`);

  // The first offline answer brings the offline card; it is added below the
  // answer without moving it (the citation stays clear of the sticky header).
  await sidebar.waitForSelector("#offline-card", { timeout: 10_000 });
  const clear = await sidebar.$eval(".citation:not(.unverified)", (c) => {
    const r = c.getBoundingClientRect();
    const header = document.querySelector("header.top").getBoundingClientRect();
    const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    const below = r.top >= window.innerHeight;
    return { top: r.top, headerBottom: header.bottom, below, hit: at === c || c.contains(at) };
  });
  // Below the fold is fine (the click scrolls to it); in view it must be the
  // element under the pointer, never hidden by the sticky header.
  assert(clear.top >= clear.headerBottom && (clear.hit || clear.below), `the citation is not under the header once the card is shown (${JSON.stringify(clear)})`);
  assert(!(await sidebar.$eval("#jump-latest", (b) => b.hidden)), "Jump to latest offers the card below");

  await page.bringToFront();
  await sidebar.click(".citation:not(.unverified)");
  await page.waitForSelector("[data-laika-highlighted]", { timeout: 10_000 });

  fs.mkdirSync(artifacts, { recursive: true });
  await sidebar.screenshot({ path: path.join(artifacts, "firefox-summary.png"), fullPage: true });

  const listed = JSON.parse(execFileSync(hostBinary, ["history", "list"], { env: { ...process.env, ...env }, encoding: "utf8" }));
  const convs = Array.isArray(listed) ? listed : listed.conversations;
  assert(convs.length === 1 && /Night trains/.test(convs[0].title ?? ""), `the turn is in the history (${JSON.stringify(convs)})`);
  console.log("ok firefox: firefox-esr over WebDriver BiDi ran the add-on; a summarize turn went through the real host");
} finally {
  await firefox?.close();
  await pages.close();
}
