// E2E: extraction as a new user meets it (offline runtime, real host).
// Extract mode shows no "Enter sends" hint above the Fields input; an empty
// field list says why nothing was sent; the answer's fields copy as CSV.
// The builtin turn has no empty context meter, and no "0 open items" line.
// Settings offer "Remove the stored key" only when a key is set. Screenshots
// at 360, 420 and 800 px, light and dark; axe clean. A page's schema.org
// data (JSON-LD) gives the fields its text does not label, cited as such.
import { assert, checkA11y, launch, norm, openSidebar, serve, shot } from "./lib.mjs";

const pages = await serve();
const browser = await launch();
let sidebar;
try {
  const { context } = browser;
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const page = await context.newPage();
  await page.goto(`${pages.base}/shop.html`);
  sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 800, height: 800 });
  const welcome = await sidebar.$("#welcome button:text('Got it')");
  if (welcome) await welcome.click();

  await sidebar.selectOption("#mode", "web.extract");
  assert(!(await sidebar.isVisible("#enter-hint")), "no “Enter sends” hint in extract mode");
  assert(await sidebar.isVisible("#fields"), "the Fields input shows");
  await sidebar.click("#send");
  await sidebar.waitForSelector("#status:not([hidden])");
  assert(/Name at least one field/.test(await sidebar.textContent("#status")), "an empty field list says why");
  assert((await sidebar.$$(".turn")).length === 0, "and sends nothing");

  await sidebar.fill("#fields", "price, sku");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 30_000 });
  assert(await sidebar.$("#status[hidden]"), "the hint goes once a turn starts");
  assert(!(await sidebar.$(".turn .context-meter meter")), "no empty context meter under an offline turn");
  const mind = await sidebar.$(".agent-state:not([hidden])");
  if (mind) assert(!/\b0 (open items|assumptions)/.test(await mind.textContent()), "no zero counts in “What Laika keeps in mind”");
  await sidebar.click(".turn .act-csv");
  const csv = await sidebar.evaluate(() => navigator.clipboard.readText());
  assert(/^field,value\r\nprice,.*89/.test(csv) && /\r\nsku,TB-28-GRN/.test(csv), `the fields copy as CSV (${JSON.stringify(csv)})`);
  for (const width of [360, 420, 800]) {
    for (const scheme of ["light", "dark"]) {
      await sidebar.emulateMedia({ colorScheme: scheme });
      await sidebar.setViewportSize({ width, height: 800 });
      await checkA11y(sidebar, `extraction at ${width} px ${scheme}`);
      await shot(sidebar, `extract-${width}-${scheme}`);
    }
  }
  await sidebar.emulateMedia({ colorScheme: "light" });

  // A page whose fields are in its structured data (JSON-LD, one block
  // malformed), not under labels: the values come from it, cited as such;
  // a field it lacks is not on the page.
  await page.goto(`${pages.base}/recipe.html`);
  await sidebar.fill("#fields", "author, cook time, servings, ingredients, rating, calories");
  await sidebar.click("#send");
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn .answer-actions").length >= 2, undefined, { timeout: 30_000 });
  const table = norm(await sidebar.textContent(".turn:last-child .answer"));
  for (const v of ["Ines Moreau", "45 min", "8 servings", "4 ripe pears; 200 g flour; 100 g butter", "4.7 out of 5"]) {
    assert(table.includes(v), `the structured data gives “${v}” (${table})`);
  }
  assert(/calories\s*not on the page/i.test(table), `a field the data lacks is not on the page (${table})`);
  const sources = norm(await sidebar.textContent(".turn:last-child .sources"));
  assert(sources.includes("Structured data (Recipe): author.name: Ines Moreau"), `the source says it is the page's structured data (${sources})`);
  assert((await sidebar.$$(".turn:last-child .citation.unverified")).length === 0, "and it is verified");
  // Clicked, it says what it is: the page's metadata, not a passage gone from the page.
  await sidebar.click(".turn:last-child .sources button:has-text('author.name')");
  await sidebar.waitForFunction(() => /structured data/.test(document.querySelector("#status")?.textContent ?? ""), undefined, { timeout: 10_000 });
  const status = norm(await sidebar.textContent("#status"));
  assert(/not from its visible text/.test(status) && !/no longer on the page/.test(status), `a structured-data source says it is the page's metadata (${status})`);
  await checkA11y(sidebar, "extraction from structured data");
  await page.goto(`${pages.base}/shop.html`);

  // Settings: no key is set, so none can be removed.
  await sidebar.click("#nav-settings");
  await sidebar.waitForSelector("#set-kind option[value=openai]", { state: "attached" });
  await sidebar.selectOption("#set-kind", "openai");
  assert(!(await sidebar.isVisible("label[for=set-api-key-clear]")), "“Remove the stored key” only when a key is set");
  assert(/No key is set/.test(norm(await sidebar.textContent("#set-api-key-state"))), "it says no key is set");
  await checkA11y(sidebar, "settings without a key");
  console.log("ok extract: no Enter hint, empty fields say why, CSV copy, no empty meter or zero counts, fields from structured data, no key to remove");
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  if (sidebar) await shot(sidebar, "extract-failure").catch(() => undefined);
  throw e;
} finally {
  await browser.close();
  await pages.close();
}
