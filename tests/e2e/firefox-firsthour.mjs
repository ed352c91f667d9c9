// E2E in Firefox (firefox-esr over WebDriver BiDi, the real host): a turn
// always ends, the newest answer stays in view, settings are kept per runtime.
//  - The host dies while an answer streams: the turn ends as "Laika stopped;
//    ask again" with Retry, Stop goes, and Retry is answered by the
//    restarted host.
//  - The answer and its buttons end above the sticky composer; scrolled up
//    while an answer streams, the chat stays put and Jump to latest brings
//    the end back.
//  - The header's switcher moves to the kept OpenAI-compatible server and
//    back: each runtime's settings (server, model, key) come back whole.
//  - "Use offline" on the unreachable server's error card answers this
//    question offline: the header, the switcher and the config keep the
//    server.
//  - Settings → Save names the saved runtime in the header at once, with
//    "Saved to …" in view; the other runtimes' settings are kept aside.
import fs from "node:fs";
import path from "node:path";
import { artifacts, assert, checkA11y, hostBinary, launchFirefox, modelOutput, norm, serve } from "./lib.mjs";

const pages = await serve();
let firefox;
const KEY = "sk-ff-kept-7";
try {
  const scriptDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-ff-script-"));
  const scriptPath = path.join(scriptDir, "script.json");
  const pidFile = path.join(scriptDir, "host.pid");
  const words = Array.from({ length: 150 }, (_, i) => `word${i}`).join(" ");
  fs.writeFileSync(scriptPath, JSON.stringify([{ output: modelOutput({ text: words }), chunk_bytes: 16, chunk_delay_ms: 150 }]));
  const quote = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
  const config = [
    "[runtime]",
    'kind = "scripted"',
    `script = ${JSON.stringify(scriptPath)}`,
    "",
    "[runtimes.openai]",
    'kind = "openai"',
    'base_url = "http://127.0.0.1:9/v1"',
    'model = "kept-model"',
    `api_key = "${KEY}"`,
    "",
  ].join("\n");
  // The wrapper notes the host's pid (exec keeps it), so the test kills exactly that process.
  firefox = await launchFirefox({}, { config, hostCommand: `echo $$ > ${quote(pidFile)}; exec ${quote(hostBinary)} "$@"` });
  const { browser, configPath } = firefox;
  const page = await browser.newPage();
  await page.goto(`${pages.base}/article.html`, { waitUntil: "load" });
  const sidebar = await firefox.openSidebar();
  const welcome = await sidebar.$("#welcome button");
  if (welcome) await sidebar.evaluate(() => [...document.querySelectorAll("#welcome button")].find((b) => b.textContent === "Got it")?.click());

  // 1. The host dies mid-answer.
  await sidebar.type("#question", "What does the article say?");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn .streaming-text", { timeout: 30_000 });
  fs.writeFileSync(
    scriptPath,
    JSON.stringify([modelOutput({ text: "The article is about night trains." }), { output: modelOutput({ text: words }), chunk_bytes: 16, chunk_delay_ms: 150 }]),
  );
  process.kill(Number(fs.readFileSync(pidFile, "utf8").trim()), "SIGKILL");
  await sidebar.waitForSelector(".turn[aria-busy=false] .error-card button", { timeout: 15_000 });
  const ended = norm(await sidebar.$eval(".turn .error-card", (e) => e.textContent));
  assert(/Laika stopped; ask again/.test(ended) && /Retry/.test(ended), `the turn ends with Retry (${ended})`);
  assert(await sidebar.$eval("#stop", (b) => b.hidden), "Stop goes when the turn ends");
  assert(!(await sidebar.$eval("#send", (b) => b.disabled)), "the composer is free");
  await sidebar.click(".turn .error-card button");
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn .answer-actions").length === 1, { timeout: 30_000 });
  const again = norm(await sidebar.$eval(".turn:nth-of-type(2) .answer", (e) => e.textContent));
  assert(again.includes("The article is about night trains."), `Retry was answered (${again})`);

  // 2. The answer and its buttons end above the composer.
  const layout = await sidebar.evaluate(() => {
    const actions = document.querySelector(".turn:nth-of-type(2) .answer-actions").getBoundingClientRect();
    return { actionsBottom: actions.bottom, composerTop: document.getElementById("composer").getBoundingClientRect().top };
  });
  assert(layout.actionsBottom <= layout.composerTop + 1, `the answer's buttons are above the composer (${JSON.stringify(layout)})`);
  // The user scrolls up while the next answer streams: the chat stays put,
  // and Jump to latest brings the end back.
  await sidebar.type("#question", "And the sleeper cabins?");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn:nth-of-type(3) .streaming-text", { timeout: 30_000 });
  await sidebar.mouse.move(200, 300);
  await sidebar.mouse.wheel({ deltaY: -1500 });
  await new Promise((r) => setTimeout(r, 1000));
  const y = await sidebar.evaluate(() => window.scrollY);
  await sidebar.waitForSelector("#jump-latest:not([hidden])", { timeout: 5_000 });
  await new Promise((r) => setTimeout(r, 800));
  const still = await sidebar.evaluate(() => window.scrollY);
  assert(Math.abs(still - y) < 2, `the chat stays where the user scrolled (${y} → ${still})`);
  await sidebar.click("#jump-latest");
  await sidebar.waitForSelector(".turn:nth-of-type(3) .answer-actions", { timeout: 30_000 });
  await new Promise((r) => setTimeout(r, 300));
  const back = await sidebar.evaluate(() => ({
    actionsBottom: document.querySelector(".turn:nth-of-type(3) .answer-actions").getBoundingClientRect().bottom,
    lastBottom: document.querySelector(".turn:nth-of-type(3)").getBoundingClientRect().bottom,
    composerTop: document.getElementById("composer").getBoundingClientRect().top,
    jump: document.getElementById("jump-latest").hidden,
  }));
  assert(back.actionsBottom <= back.composerTop + 1 && back.lastBottom <= back.composerTop + 1 && back.lastBottom > back.composerTop - 60 && back.jump, `Jump to latest follows the end again (${JSON.stringify(back)})`);
  await checkA11y(sidebar, "firefox: turn ended by a host crash, then answered");
  fs.mkdirSync(artifacts, { recursive: true });
  await sidebar.screenshot({ path: path.join(artifacts, "firefox-recovery-420-light.png") });

  // 3. Settings kept per runtime, through the header's switcher.
  const options = await sidebar.$$eval("#runtime-switch option", (os) => os.map((o) => `${o.value}=${o.textContent}`));
  assert(options.includes("openai=kept-model · OpenAI-compatible server"), `the kept server is offered (${options})`);
  await sidebar.select("#runtime-switch", "openai");
  await sidebar.waitForFunction(() => /kept-model/.test(document.getElementById("runtime")?.textContent ?? ""), { timeout: 10_000 });
  let saved = fs.readFileSync(configPath, "utf8");
  assert(/kind = "openai"/.test(saved.split("[runtimes")[0]) && saved.includes(KEY) && /\[runtimes\.scripted\]/.test(saved), `the server is back whole, the scripted runtime kept (${saved.replace(KEY, "<key>")})`);

  // 4. The server is not reachable: "Use offline" is for this answer only.
  await sidebar.type("#question", "Is the article long?");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn:nth-of-type(4) .error-card button", { timeout: 30_000 });
  const offered = await sidebar.$$eval(".turn:nth-of-type(4) .error-card button", (bs) => bs.map((b) => b.textContent));
  assert(offered.includes("Retry") && offered.includes("Use offline"), `Retry and Use offline (${offered})`);
  // Clicked in the page: a pointer click near the sticky header can land on it.
  await sidebar.evaluate(() => [...document.querySelectorAll(".turn:nth-of-type(4) .error-card button")].find((b) => b.textContent === "Use offline")?.click());
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn .answer-actions").length === 3, { timeout: 30_000 });
  const badge = norm(await sidebar.$eval(".turn:last-of-type .badge", (e) => e.textContent));
  assert(/stayed on this computer/.test(badge) && !/kept-model/.test(badge), `the offline runtime answered (${badge})`);
  assert(/kept-model/.test(await sidebar.$eval("#runtime", (e) => e.textContent)), "the header still names the server");
  assert(/kept-model/.test(await sidebar.$eval("#runtime-switch", (s) => s.selectedOptions[0]?.textContent ?? "")), "so does the switcher");
  saved = fs.readFileSync(configPath, "utf8");
  assert(/kind = "openai"/.test(saved.split("[runtimes")[0]) && saved.includes(KEY) && saved.includes("kept-model"), `Use offline left the config as it was (${saved.replace(KEY, "<key>")})`);
  await checkA11y(sidebar, "firefox: answered offline for this question");
  await sidebar.screenshot({ path: path.join(artifacts, "firefox-use-offline-420-light.png") });
  await sidebar.select("#runtime-switch", "scripted");
  await sidebar.waitForFunction(() => /scripted|Scripted/.test(document.getElementById("runtime")?.textContent ?? ""), { timeout: 10_000 });
  saved = fs.readFileSync(configPath, "utf8");
  assert(/\[runtimes\.openai\]/.test(saved) && saved.includes(KEY) && saved.includes("kept-model"), "and kept again when the other is chosen");

  // 5. Settings → Save: the header names the saved runtime at once; the others are kept aside.
  await sidebar.evaluate(() => document.getElementById("nav-settings").click());
  await sidebar.waitForSelector("#set-kind option[value=builtin]", { timeout: 20_000 });
  await sidebar.select("#set-kind", "builtin");
  await sidebar.evaluate(() => document.querySelector("#settings-form button[type=submit]").click());
  await sidebar.waitForFunction(() => /Saved to .*Offline/.test(document.getElementById("settings-message")?.textContent ?? ""), { timeout: 20_000 });
  const message = await sidebar.evaluate(() => {
    const r = document.getElementById("settings-message").getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, h: window.innerHeight };
  });
  assert(message.top >= 0 && message.bottom <= message.h, `"Saved to …" is in view (${JSON.stringify(message)})`);
  const header = norm(await sidebar.$eval("#runtime", (e) => e.textContent));
  assert(/extractive/i.test(header), `the header names the offline runtime at once (${header})`);
  assert((await sidebar.$eval("#runtime-switch", (s) => s.value)) === "builtin", "so does the switcher");
  saved = fs.readFileSync(configPath, "utf8");
  assert(/kind = "builtin"/.test(saved.split("[runtimes")[0]) && /\[runtimes\.openai\]/.test(saved) && saved.includes(KEY) && /\[runtimes\.scripted\]/.test(saved), `the other runtimes are kept aside (${saved.replace(KEY, "<key>")})`);
  await checkA11y(sidebar, "firefox: settings saved offline");
  await sidebar.screenshot({ path: path.join(artifacts, "firefox-settings-saved-420-light.png") });
  console.log("ok firefox-firsthour: a host crash ends the turn with Retry; answer above the composer; Jump to latest; settings kept per runtime; Use offline for this answer; the header follows Save");
  fs.rmSync(scriptDir, { recursive: true, force: true });
} finally {
  await firefox?.close();
  await pages.close();
}
