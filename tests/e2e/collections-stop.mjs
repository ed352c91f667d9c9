// E2E: a transform run from the Collections panel is stopped. Two pages in
// a collection, a scripted model that takes a minute over each source: Key
// points shows Stop (the transform buttons wait); Stop ends it with
// "Stopped", nothing saved (the host lists no artifact), the buttons free
// again; the next run makes its artifact. Screens of the running and the
// stopped panel at 360, 420 and 800 px, light and dark, axe clean.
import fs from "node:fs";
import path from "node:path";
import { assert, esc, hostEvents, launch, norm, points, screenMatrix, serveRoutes, sidebarWithCollection } from "./lib.mjs";

const PAGES = {
  "/north.html": ["Northern line", "The night train to Oslo leaves from platform 4 at 21:00."],
  "/south.html": ["Southern line", "The night train to Rome leaves from platform 7 at 22:00."],
};
const site = await serveRoutes((url) => {
  const p = PAGES[url.pathname];
  return p ? { body: `<!doctype html><title>${esc(p[0])}</title><main><h1>${esc(p[0])}</h1><p>${esc(p[1])}</p></main>` } : null;
});

const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-transform-stop-"));
const scriptPath = path.join(tmp, "script.json");
const SLOW = "A slow point that must never be saved.";
const FAST = ["Oslo trains leave from platform 4.", "Rome trains leave from platform 7."];
fs.writeFileSync(
  scriptPath,
  JSON.stringify([
    // The first run: each source's call waits a minute (cancellable).
    { output: points(SLOW), delay_ms: 60_000 },
    { output: points(SLOW), delay_ms: 60_000 },
    // The second run answers at once.
    points(FAST[0]),
    points(FAST[1]),
  ]),
);

const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath });
let sidebar;
const status = () => sidebar.evaluate(() => document.getElementById("collections-status")?.textContent ?? "");
const panel = () =>
  sidebar.evaluate(() => ({
    stop: !document.getElementById("collection-stop").hidden,
    stopDisabled: document.getElementById("collection-stop").disabled,
    buttons: [...document.querySelectorAll("#collection-transforms button")].map((b) => b.disabled),
    artifacts: [...document.querySelectorAll("#artifact-list .artifact-title")].map((e) => e.textContent),
  }));

try {
  const { context } = browser;
  sidebar = await sidebarWithCollection(context, site.base, PAGES, { width: 420, name: "Night trains" });
  await sidebar.waitForSelector('#collection-transforms [data-transform="key_points"]:not([disabled])', { timeout: 20_000 });

  // 1. Running: Stop is offered, the transforms wait.
  await sidebar.click('#collection-transforms [data-transform="key_points"]');
  await sidebar.waitForSelector("#collection-stop:not([hidden])", { timeout: 20_000 });
  let now = await panel();
  assert(now.stop && !now.stopDisabled && now.buttons.length >= 5 && now.buttons.every((d) => d), `Stop is offered and the transforms wait (${JSON.stringify(now)})`);
  assert(/Making “Key points” from the 2 source\(s\) of “Night trains”…/.test(await status()), `says what runs (${await status()})`);
  const running = await screenMatrix(sidebar, "transform-running", "#collection-stop");

  // 2. Stopped: said plainly, the buttons free, nothing saved.
  const asked = Date.now();
  await sidebar.click("#collection-stop");
  await sidebar.waitForSelector("#collection-stop[hidden]", { state: "attached", timeout: 20_000 });
  const stoppedIn = Date.now() - asked;
  const said = norm(await status());
  assert(said === "Stopped: “Key points” was not made, and nothing was saved.", `Stop says Stopped (${said})`);
  assert(!/CANCELLED|cancelled/.test(said), `no "CANCELLED" wording (${said})`);
  now = await panel();
  assert(now.buttons.every((d) => !d), `the transforms are free again (${JSON.stringify(now)})`);
  assert(await sidebar.evaluate(() => document.activeElement?.dataset?.transform === "key_points"), "focus is back on Key points");
  const reply = (await hostEvents(sidebar)).find((e) => e.type === "error" && String(e.reply_to).startsWith("transform.run-"));
  assert(reply?.code === "CANCELLED", `the host stopped the run (${JSON.stringify(reply)})`);
  // The host's own list, fetched again: no artifact from the stopped run.
  await sidebar.click("#collections summary");
  await sidebar.click("#collections summary");
  await sidebar.waitForFunction(() => document.querySelector("#collection-select")?.selectedOptions[0]?.textContent === "Night trains (2)", null, { timeout: 20_000 });
  now = await panel();
  assert(now.artifacts.length === 0, `nothing half-made is stored (${now.artifacts})`);
  assert(norm(await status()) === said, "the panel still says Stopped");
  const stopped = await screenMatrix(sidebar, "transform-stopped", "#collections-status");

  // 3. The next run works.
  await sidebar.click('#collection-transforms [data-transform="key_points"]');
  await sidebar.waitForFunction(() => /^Made “/.test(document.getElementById("collections-status")?.textContent ?? ""), null, { timeout: 30_000 });
  const made = norm(await sidebar.textContent("#artifact-view"));
  assert(FAST.every((p) => made.includes(p)) && !made.includes(SLOW), `the second run's points, none of the first's (${made})`);
  now = await panel();
  assert(now.artifacts.length === 1 && /Key points/.test(now.artifacts[0]) && !now.stop, `one artifact, Stop gone (${JSON.stringify(now)})`);
  console.log(`ok collections-stop: Stop shown while Key points runs, stopped in ${stoppedIn} ms with nothing saved, the next run made its artifact; ${running + stopped} screens`);
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  throw e;
} finally {
  await browser.close();
  await site.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
