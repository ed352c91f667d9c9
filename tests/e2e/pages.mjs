// E2E: an answer over several pages says which page each quote is from.
// Two loopback pages with long titles are added to a collection at 360 px
// (the Collections panel fits the panel and is not under the composer); the
// offline runtime answers a question both pages speak to: each quote names
// its page, linked to it at the quote (a text fragment). A continued
// conversation offers to reopen its page. Screenshots at 360, 420 and 800
// px, light and dark; axe clean.
import { artifacts, assert, checkA11y, esc, launch, norm, serveRoutes, shot, sidebarWithCollection } from "./lib.mjs";
import path from "node:path";

const LONG = "with a very long title that goes on about timetables, platforms, tickets and every connection of the night network";
const PAGES = {
  "/north.html": [`Northern line ${LONG}`, "The night train to Oslo leaves from platform 4 at 21:00 every evening. Sleeper cabins hold two beds and a washbasin. Breakfast is served in the dining car before arrival. Bicycles travel in the last carriage when booked a day ahead. Tickets are checked on board after departure."],
  "/south.html": [`Southern line ${LONG}`, "The night train to Rome leaves from platform 7 at 22:00 every evening. Couchettes sleep six and blankets are provided. A snack trolley passes until midnight. Pets may travel in a closed basket. Passports are checked at the border while you sleep."],
};
const site = await serveRoutes((url) => {
  const p = PAGES[url.pathname];
  return p ? { body: `<!doctype html><title>${esc(p[0])}</title><main><h1>Trains</h1><p>${esc(p[1])}</p></main>` } : null;
});
const browser = await launch();
let sidebar;
try {
  const { context } = browser;
  sidebar = await sidebarWithCollection(context, site.base, PAGES, { width: 360 });
  for (const width of [360, 420]) {
    await sidebar.setViewportSize({ width, height: 800 });
    await sidebar.evaluate(() => document.getElementById("collections").scrollIntoView({ block: "nearest" }));
    const fit = await sidebar.evaluate(() => {
      const panel = document.getElementById("collections").getBoundingClientRect();
      const composer = document.getElementById("composer").getBoundingClientRect();
      const controls = Math.max(...[...document.querySelectorAll("#collections select, #collections button")].map((e) => e.getBoundingClientRect().right));
      return { controls, width: panel.width, right: panel.right, vw: document.documentElement.clientWidth, scrollW: document.documentElement.scrollWidth, bottom: panel.bottom, composerTop: composer.top };
    });
    assert(fit.right <= fit.vw && fit.scrollW <= fit.vw && fit.controls <= fit.right, `the Collections panel fits at ${width} px (${JSON.stringify(fit)})`);
    assert(fit.bottom <= fit.composerTop + 1, `the Collections panel is above the composer at ${width} px (${JSON.stringify(fit)})`);
    await checkA11y(sidebar, `collections at ${width} px`);
    await sidebar.screenshot({ path: path.join(artifacts, `pages-collections-${width}-light.png`) });
  }

  const reading = norm(await sidebar.textContent("#reading"));
  assert(/^Reading: the collection Northern line/.test(reading), `the composer says the question reads the collection (${reading})`);
  // Both pages speak to the question: each quote names and links its own page.
  await sidebar.fill("#question", "Which platform does the night train leave from?");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn[data-stop-reason]", { timeout: 60_000 });
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(!/The page says/.test(answer), `no “The page says:” over two pages (${answer})`);
  const named = await sidebar.$$eval(".turn .answer .quote-source", (as) => as.map((a) => ({ text: a.textContent, href: a.getAttribute("href") })));
  const titles = new Set(named.map((n) => n.text.replace(/^\s*—\s*/, "")));
  assert(titles.size >= 2 && [...titles].every((t) => /^(Northern|Southern) line/.test(t)), `each quote names its page (${JSON.stringify(named)})`);
  assert(named.every((n) => /\/(north|south)\.html#:~:text=/.test(n.href)), `each links its page at the quote (${JSON.stringify(named)})`);
  for (const width of [360, 420, 800]) {
    for (const scheme of ["light", "dark"]) {
      await sidebar.emulateMedia({ colorScheme: scheme });
      await sidebar.setViewportSize({ width, height: 800 });
      await checkA11y(sidebar, `quotes from two pages at ${width} px ${scheme}`);
      await shot(sidebar, `pages-quotes-${width}-${scheme}`);
    }
  }
  await sidebar.emulateMedia({ colorScheme: "light" });

  // History: the conversation's title and page agree; Continue offers to reopen the page.
  await sidebar.click("#nav-history");
  await sidebar.click("#history-list button");
  await sidebar.waitForSelector("#history-detail button:text('Continue')", { timeout: 10_000 }).catch(() => undefined);
  const cont = await sidebar.$("#history-detail button:text-matches('Continue', 'i')");
  assert(cont, "history offers to continue");
  await cont.click();
  await sidebar.waitForSelector(".continued a", { timeout: 10_000 });
  const reopen = await sidebar.getAttribute(".continued a", "href");
  assert(/^http:\/\/127\.0\.0\.1:\d+\//.test(reopen ?? ""), `Continue offers to reopen the conversation's page (${reopen})`);
  assert(/Reading: /.test(await sidebar.textContent("#reading")), "and the composer says which page a follow-up reads");
  await checkA11y(sidebar, "continued conversation");
  await shot(sidebar, "pages-continued-420-light");
  console.log(`ok pages: quotes name their page (${[...titles].length} pages); Collections panel fits at 360/420 px; Continue offers the page`);
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  if (sidebar) await shot(sidebar, "pages-failure").catch(() => undefined);
  throw e;
} finally {
  await browser.close();
  await site.close();
}
