// E2E: what a question reads besides the page in front.
//  - "Ask about the selection": the text selected on the page is attached
//    (shown as a chip and quoted in the turn), goes to the host as its own
//    `web.selection.v1` document, first, and the answer is about it.
//  - Two tabs as context: the user picks another open tab; it is read as its
//    own `web.tab.v1` document, and a citation from it names that tab and
//    highlights the passage there.
import { assert, checkA11y, citationText, launch, norm, openSidebar, serve, shot } from "./lib.mjs";

const pages = await serve();
const browser = await launch();
try {
  const { context } = browser;
  const shop = await context.newPage();
  await shop.goto(`${pages.base}/shop.html`);
  const article = await context.newPage();
  await article.goto(`${pages.base}/article.html`);
  const sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 900 });
  // At 420 px the selection and tabs controls are folded into the composer's menu: open it.
  await sidebar.click("#composer-more-toggle");
  await article.bringToFront();

  // Select the second paragraph of the article.
  const selected = await article.evaluate(() => {
    const p = [...document.querySelectorAll("main p, article p, p")].find((e) => e.textContent.trim().length > 80);
    const range = document.createRange();
    range.selectNodeContents(p);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    return getSelection().toString().trim();
  });
  assert(selected.length > 80, `a paragraph is selected (${selected})`);
  await sidebar.click("#ask-selection");
  await sidebar.waitForSelector(".selection-chip");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 30_000 });
  const quoted = norm(await sidebar.textContent(".turn .selection-quote"));
  assert(norm(selected).startsWith(quoted.replace(/…$/, "").slice(0, 60)), `the turn quotes the selection (${quoted})`);
  assert(/Explain the selected text/.test(await sidebar.textContent(".turn .user")), "the question is about the selection");
  const answer = norm(await sidebar.textContent(".turn .answer"));
  const words = norm(selected).toLowerCase().split(" ").filter((w) => w.length > 5);
  assert(words.some((w) => answer.toLowerCase().includes(w)), `the answer is about the selection (${answer.slice(0, 200)})`);
  await checkA11y(sidebar, "selection attached");
  await shot(sidebar, "context-selection");

  const convs = browser.history("list");
  const conv = (Array.isArray(convs) ? convs : convs.conversations)[0];
  const shown = browser.history("show", conv.id);
  const turn = (shown.turns ?? shown.conversation?.turns)[0];
  const docs = turn.request_packet.context.documents;
  assert(docs[0].doc_id === "doc:web:selection" && docs[0].kind === "web.selection.v1", `the selection is the first document (${docs.map((d) => d.doc_id)})`);
  // History keeps a redacted packet: a preview and the length of each document's text.
  const sel = docs[0].content;
  assert(norm(selected).startsWith(norm(sel.preview)) && sel.chars >= norm(selected).length - 2, `with the selected text (${JSON.stringify(sel)} / ${selected})`);

  // Remove the selection; add the shop tab; ask about the shop.
  await sidebar.click(".selection-chip .chip-remove");
  await sidebar.click("#new-chat");
  await sidebar.click("#add-tabs");
  await sidebar.waitForSelector("#tab-list input[type=checkbox]");
  const labels = await sidebar.$$eval("#tab-list label", (els) => els.map((e) => e.textContent));
  assert(labels.includes("Trail backpack 28L"), `the shop tab is offered (${labels})`);
  await sidebar.check("#tab-list li:has(label:text('Trail backpack 28L')) input");
  await sidebar.waitForSelector(".tab-chip");
  await checkA11y(sidebar, "tab picker");
  await sidebar.fill("#question", "What is the price?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 30_000 });
  assert(/Also read: Trail backpack 28L/.test(await sidebar.textContent(".turn")), "the turn says which tabs it read");
  await sidebar.waitForSelector(".citation[data-tab]:not(.unverified)", { timeout: 5000 });
  const all = norm(await sidebar.textContent(".turn .sources"));
  const cite = await sidebar.$(".citation[data-tab]:not(.unverified)[title*='89']");
  const label = cite ? await citationText(cite) : "";
  assert(/^\[\d\] (Trail backpack 28L: “.*89|Show “.*89.*” in the tab “Trail backpack 28L”)/.test(label), `the price's citation names its tab (${all})`);
  await cite.click();
  const mark = await shop.waitForSelector("[data-laika-highlighted]", { timeout: 10_000 });
  assert(/89\.00/.test(await mark.textContent()), "it highlights the passage in that tab");
  const stored = browser.history("show", (Array.isArray(browser.history("list")) ? browser.history("list") : browser.history("list").conversations).find((c) => c.id !== conv.id).id);
  const docs2 = (stored.turns ?? stored.conversation?.turns)[0].request_packet.context.documents;
  const tabDoc = docs2.find((d) => d.kind === "web.tab.v1");
  const own = docs2.find((d) => d.doc_id === "doc:web:summary");
  assert(tabDoc && /Trail backpack/.test(tabDoc.content.title) && tabDoc.doc_id === `doc:web:tab:${tabDoc.source.tab_id}`, `the tab is its own document (${JSON.stringify(docs2.map((d) => [d.doc_id, d.source]))})`);
  assert(tabDoc.source.tab_id !== own.source.tab_id, "with its own tab id");
  await shot(sidebar, "context-tabs");
  console.log("ok context: selection as its own first document, another tab as context with citations naming it");
} finally {
  await browser.close();
  await pages.close();
}
