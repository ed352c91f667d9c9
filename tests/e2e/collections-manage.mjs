// E2E: a collection managed from the sidebar at 360 px, with the offline
// runtime. A new collection is named as it is made; the host's transforms
// are buttons (Key points makes an artifact that opens in the panel); the
// collection is renamed (the Reading line follows), a source with a long
// title is removed, and the collection is deleted: Undo brings it back, and
// once the undo time is over the host no longer lists it. The panel never
// scrolls sideways; axe clean.
import { assert, checkA11y, esc, launch, norm, serveRoutes, shot, sidebarWithCollection } from "./lib.mjs";

const LONG = "a page title that goes on and on about sleeper cabins, couchettes, border checks and every connection";
const PAGES = {
  "/north.html": [`Northern line: ${LONG}`, "The night train to Oslo leaves from platform 4 at 21:00. Sleeper cabins hold two beds. Breakfast is served before arrival."],
  "/south.html": ["Southern line", "The night train to Rome leaves from platform 7 at 22:00. Couchettes sleep six. A snack trolley passes until midnight."],
};
const site = await serveRoutes((url) => {
  const p = PAGES[url.pathname];
  return p ? { body: `<!doctype html><title>${esc(p[0])}</title><main><h1>Trains</h1><p>${esc(p[1])}</p></main>` } : null;
});

/** The panel and the page fit the width: nothing scrolls sideways. */
async function fits(sidebar, what) {
  const fit = await sidebar.evaluate(() => {
    const panel = document.getElementById("collections");
    const right = Math.max(...[...panel.querySelectorAll("select, button, input, li")].filter((e) => e.getClientRects().length).map((e) => e.getBoundingClientRect().right));
    return { right, vw: document.documentElement.clientWidth, scrollW: document.documentElement.scrollWidth, panelScroll: panel.scrollWidth, panelW: panel.clientWidth };
  });
  assert(fit.right <= fit.vw && fit.scrollW <= fit.vw && fit.panelScroll <= fit.panelW, `${what}: nothing wider than the panel (${JSON.stringify(fit)})`);
}

const status = (sidebar, text) =>
  sidebar.waitForFunction((t) => document.getElementById("collections-status")?.textContent?.includes(t), text, { timeout: 20_000 });
const options = (sidebar) => sidebar.$$eval("#collection-select option", (os) => os.map((o) => o.textContent));

const browser = await launch();
try {
  const { context } = browser;
  // Named at creation; the second page joins the collection just made.
  const sidebar = await sidebarWithCollection(context, site.base, PAGES, { width: 360, name: "Trip research" });
  assert((await options(sidebar)).includes("Trip research (2)"), `named as typed (${await options(sidebar)})`);
  await sidebar.click("#collection-edit summary");
  await sidebar.waitForFunction(() => document.querySelectorAll("#collection-sources .source-title").length === 2, null, { timeout: 20_000 });
  const transforms = await sidebar.$$eval("#collection-transforms button", (bs) => bs.map((b) => b.textContent));
  assert(["Key points", "Comparison table", "Timeline", "FAQ", "Annotated bibliography"].every((t) => transforms.includes(t)), `the host's transforms are offered (${transforms})`);
  const ellipsis = await sidebar.$eval("#collection-sources .source-title", (e) => ({ overflow: getComputedStyle(e).textOverflow, cut: e.scrollWidth > e.clientWidth }));
  assert(ellipsis.overflow === "ellipsis" && ellipsis.cut, `a long source title ends in an ellipsis (${JSON.stringify(ellipsis)})`);
  await fits(sidebar, "a collection with a long source title at 360 px");
  await checkA11y(sidebar, "collection management at 360 px");
  await shot(sidebar, "collections-manage-360");

  // Key points: made by the offline runtime, opened in the panel.
  await sidebar.click('#collection-transforms [data-transform="key_points"]');
  await status(sidebar, "from 2 source(s)");
  const made = norm(await sidebar.textContent("#artifact-view"));
  const quotes = (text) => text.split(/(?<=\.) /).some((sentence) => made.includes(sentence));
  assert(Object.values(PAGES).every(([title, text]) => made.includes(title) && quotes(text)), `the key points name and quote both pages (${made})`);
  const listed = await sidebar.$$eval("#artifact-list .artifact-title", (es) => es.map((e) => e.textContent));
  assert(listed.some((t) => /Key points/.test(t)), `the artifact is listed (${listed})`);
  await fits(sidebar, "an artifact at 360 px");

  // Renamed: the select and the Reading line say the new name.
  await sidebar.fill("#collection-rename", "Rail trip");
  await sidebar.click("#collection-rename-save");
  await status(sidebar, "Renamed to “Rail trip”");
  // The select is filled again from the host's list, which may come after the status.
  await sidebar
    .waitForFunction(() => [...document.querySelectorAll("#collection-select option")].some((o) => o.textContent === "Rail trip (2)"), null, { timeout: 20_000 })
    .catch(() => {});
  assert((await options(sidebar)).includes("Rail trip (2)"), `renamed (${await options(sidebar)})`);
  await sidebar.waitForFunction(() => /Rail trip/.test(document.getElementById("reading")?.textContent ?? ""), null, { timeout: 20_000 }).catch(() => {});
  const reading = norm(await sidebar.textContent("#reading"));
  assert(reading === "Reading: the collection Rail trip", `the Reading line follows the name (${reading})`);

  // The long-titled source removed.
  await sidebar.click(`#collection-sources button[aria-label="Remove ${PAGES["/north.html"][0]}"]`);
  await status(sidebar, "has 1 source(s)");
  assert((await options(sidebar)).includes("Rail trip (1)"), `one source left (${await options(sidebar)})`);
  const left = await sidebar.$$eval("#collection-sources .source-title", (es) => es.map((e) => e.textContent));
  assert(left.length === 1 && left[0] === "Southern line", `the other source stays (${left})`);

  // Deleted, undone, deleted for good.
  await sidebar.click("#collection-delete");
  assert(!(await options(sidebar)).some((o) => o.startsWith("Rail trip")), "hidden at once");
  await sidebar.click("#collection-undo");
  await sidebar.waitForFunction(() => document.querySelector("#collection-select")?.selectedOptions[0]?.textContent === "Rail trip (1)", null, { timeout: 20_000 });
  await sidebar.click("#collection-delete");
  const toast = norm(await sidebar.textContent("#collections-toast"));
  assert(toast.startsWith("Deleted “Rail trip”."), `the toast offers an undo (${toast})`);
  await sidebar.waitForSelector("#collections-toast", { state: "hidden", timeout: 15_000 });
  await sidebar.click("#collections summary");
  await sidebar.click("#collections summary");
  await sidebar.waitForFunction(() => document.querySelectorAll("#artifact-list li").length > 0, null, { timeout: 20_000 });
  const after = await options(sidebar);
  assert(after.length === 1 && after[0] === "This page", `the host no longer lists it (${after})`);
  console.log("ok collections-manage: named at creation, key points from the UI, renamed, a source removed, deleted with undo, fits 360 px");
} finally {
  await browser.close();
  await site.close();
}
