// E2E: a turn always ends. The host dies while an answer streams: the turn
// ends as "Laika stopped; ask again" with Retry, Stop goes away, and the
// composer is free at once (no "Laika is still answering"); Retry asks again
// through the restarted host and is answered. Then Stop on a streaming
// answer ends the turn (never stuck on "Stopping…") without a CANCELLED
// line. Screenshots at 360, 420 and 800 px, light and dark; axe clean.
import fs from "node:fs";
import path from "node:path";
import { assert, checkA11y, hostBinary, launch, modelOutput, norm, openSidebar, serve, shot } from "./lib.mjs";

const pages = await serve();
const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-recovery-"));
const scriptPath = path.join(tmp, "script.json");
const pidFile = path.join(tmp, "host.pid");
const quote = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
const words = Array.from({ length: 120 }, (_, i) => `word${i}`).join(" ");
const slow = (text) => ({ output: modelOutput({ text }), chunk_bytes: 16, chunk_delay_ms: 150 });
fs.writeFileSync(scriptPath, JSON.stringify([slow(words)]));
// The wrapper notes the host's pid (exec keeps it), so the test kills exactly that process.
const browser = await launch(
  { LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath },
  { hostCommand: `echo $$ > ${quote(pidFile)}; exec ${quote(hostBinary)} "$@" 2>>${quote(path.join(tmp, "host-stderr.log"))}` },
);
let sidebar;
try {
  const { context } = browser;
  const page = await context.newPage();
  await page.goto(`${pages.base}/article.html`);
  sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 800 });
  await page.bringToFront();

  // 1. The host dies while the answer streams.
  await sidebar.fill("#question", "What does the article say?");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn:nth-of-type(1) .streaming-text", { timeout: 30_000 });
  const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
  assert(pid > 1, `the host's pid is known (${pid})`);
  fs.writeFileSync(scriptPath, JSON.stringify([modelOutput({ text: "The article is about trains." })]));
  process.kill(pid, "SIGKILL");
  await sidebar.waitForSelector(".turn:nth-of-type(1)[aria-busy=false] .error-card button:text('Retry')", { timeout: 15_000 });
  const ended = norm(await sidebar.textContent(".turn:nth-of-type(1) .error-card"));
  assert(/Laika stopped; ask again/.test(ended), `the turn says Laika stopped (${ended})`);
  assert(!(await sidebar.isVisible("#stop")), "Stop goes when the turn ends");
  assert(!(await sidebar.isVisible(".turn:nth-of-type(1) .progress")), "no progress line is left running");
  await checkA11y(sidebar, "turn ended by a host crash");
  for (const width of [360, 420, 800]) {
    for (const scheme of ["light", "dark"]) {
      await sidebar.emulateMedia({ colorScheme: scheme });
      await sidebar.setViewportSize({ width, height: 800 });
      await shot(sidebar, `recovery-host-stopped-${width}-${scheme}`);
    }
  }
  await sidebar.emulateMedia({ colorScheme: "light" });
  await sidebar.setViewportSize({ width: 420, height: 800 });

  // 2. Retry asks again through the restarted host.
  await sidebar.click(".turn:nth-of-type(1) .error-card button:text('Retry')");
  await sidebar.waitForSelector(".turn:nth-of-type(2)[data-stop-reason]", { timeout: 30_000 });
  const again = norm(await sidebar.textContent(".turn:nth-of-type(2) .answer"));
  assert(again.includes("The article is about trains."), `Retry was answered (${again})`);
  assert(!/still answering/.test(norm(await sidebar.textContent("#status"))), "nothing says Laika is still answering");

  // 3. Stop on a streaming answer ends the turn; no CANCELLED line.
  fs.writeFileSync(scriptPath, JSON.stringify([slow(words)]));
  // The running host read its script at start: restart it so it reads this one.
  process.kill(Number(fs.readFileSync(pidFile, "utf8").trim()), "SIGKILL");
  await sidebar.waitForFunction(() => document.getElementById("status")?.hidden === true, null, { timeout: 15_000 });
  await sidebar.fill("#question", "And again?");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn:nth-of-type(3) .streaming-text", { timeout: 30_000 });
  await sidebar.click("#stop");
  await sidebar.waitForSelector(".turn:nth-of-type(3)[aria-busy=false]", { timeout: 8_000 });
  const stopped = norm(await sidebar.textContent(".turn:nth-of-type(3)"));
  assert(/Stopped/.test(stopped), `the turn says it stopped (${stopped})`);
  assert(!/CANCELLED|cancelled/.test(stopped), `no CANCELLED line after Stop (${stopped})`);
  assert(!/Stopping…/.test(stopped) || !(await sidebar.isVisible(".turn:nth-of-type(3) .progress")), "not left on Stopping…");
  assert(!(await sidebar.isVisible("#stop")), "Stop goes when the stopped turn ends");
  await checkA11y(sidebar, "stopped turn");
  console.log("ok recovery: a host crash ends the turn with Retry; Retry answers; Stop ends a streaming turn");
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  if (sidebar) await shot(sidebar, "recovery-failure").catch(() => undefined);
  throw e;
} finally {
  await browser.close();
  await pages.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
