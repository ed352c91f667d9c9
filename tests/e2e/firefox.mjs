// E2E: Firefox really runs the extension. Debian's firefox-esr, driven over
// WebDriver BiDi (puppeteer-core), loads the Firefox build as a temporary
// add-on; "Summarize this page" goes through the real laika-host, found
// through a manifest in ~/.mozilla/native-messaging-hosts/ of a temporary
// HOME (the user's own registration is never touched). Checks the answer,
// a citation highlighting the page, and the turn in the host's history.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { artifacts, assert, hostBinary, norm, repo, serve, writeHostWrapper } from "./lib.mjs";

const require = createRequire(path.join(repo, "extension", "package.json"));
const puppeteer = require("puppeteer-core");

const FIREFOX = process.env.FIREFOX ?? "/usr/bin/firefox-esr";
const ADDON_ID = "laika@laika.dev";
// Pinned so the test can open the sidebar page by URL (Firefox picks a random one per profile).
const ADDON_UUID = "5a1c6a3e-2b7d-4f6e-9c1a-7e0d4b8f2a91";
const addonDir = path.join(repo, "extension", "dist", "firefox");
assert(fs.existsSync(FIREFOX), `firefox-esr at ${FIREFOX} (scripts/e2e.sh installs it)`);
assert(fs.existsSync(path.join(addonDir, "manifest.json")), "the Firefox build exists (npm run build)");

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "laika-ff-"));
const home = path.join(tmp, "home");
const dataDir = path.join(tmp, "data");
fs.mkdirSync(path.join(home, ".mozilla", "native-messaging-hosts"), { recursive: true });
fs.mkdirSync(dataDir, { recursive: true });
const env = { LAIKA_DATA_DIR: dataDir, LAIKA_CONFIG: path.join(tmp, "config.toml") };
const manifestPath = path.join(home, ".mozilla", "native-messaging-hosts", "dev.laika.host.json");
fs.writeFileSync(
  manifestPath,
  JSON.stringify({
    name: "dev.laika.host",
    description: "Laika native host (Firefox e2e test)",
    path: writeHostWrapper(tmp, env),
    type: "stdio",
    allowed_extensions: [ADDON_ID],
  }),
);

const pages = await serve();
let browser;
try {
  browser = await puppeteer.launch({
    browser: "firefox",
    protocol: "webDriverBiDi",
    executablePath: FIREFOX,
    headless: true,
    // Lets WebDriver open the add-on's own page (moz-extension:) in a tab.
    args: ["--remote-allow-system-access"],
    env: { ...process.env, HOME: home, MOZ_CRASHREPORTER_DISABLE: "1" },
    extraPrefsFirefox: {
      "extensions.webextensions.uuids": JSON.stringify({ [ADDON_ID]: ADDON_UUID }),
      "datareporting.policy.dataSubmissionEnabled": false,
      "browser.shell.checkDefaultBrowser": false,
    },
  });
  const id = await browser.installExtension(addonDir);
  assert(id === ADDON_ID, `the add-on is installed as ${ADDON_ID} (got ${id})`);

  const page = await browser.newPage();
  await page.goto(`${pages.base}/article.html`, { waitUntil: "load" });
  const sidebar = await browser.newPage();
  await sidebar.setViewport({ width: 420, height: 900 });
  // Firefox does not report load events for add-on pages over BiDi: wait for the page's own state instead.
  await sidebar.goto(`moz-extension://${ADDON_UUID}/sidepanel.html`, { timeout: 5000 }).catch((e) => {
    if (e.name !== "TimeoutError") throw e;
  });
  await sidebar.waitForFunction(() => (document.getElementById("runtime")?.textContent ?? "").length > 0, { timeout: 30_000 });
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
  await browser?.close();
  await pages.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
