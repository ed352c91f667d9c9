// E2E: a three-step agent task on local pages. The shop (one loopback
// server) has a search form (GET /results.html?q=); its results link to the
// maker's product pages on another origin (a second server), so following a
// result is cross-origin: the gate asks. The scripted model
//   step 1: types the query into the box and clicks Search (both allowed),
//   step 2: clicks the right result (asked: nothing happens before Approve),
//   step 3: answers with the product's weight and cites it.
// Checks the approval card, the step list (✓ per operation), the final
// answer, `done.stop_reason`, and that the history lists the steps.
import fs from "node:fs";
import path from "node:path";
import {
  artifacts,
  assert,
  citationText,
  element,
  esc,
  eventTrace,
  hostEvents,
  launch,
  modelOutput,
  norm,
  observeTab,
  openSidebar,
  openTab,
  serveRoutes,
  waitForDone,
  waitForStep,
} from "./lib.mjs";

const page = (title, body) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head><body>${body}</body></html>`;

const maker = await serveRoutes((url) => {
  const products = {
    "/trail-pack-30.html": ["Trail Pack 30", "1.2 kg", "30 litres"],
    "/summit-pack-45.html": ["Summit Pack 45", "1.9 kg", "45 litres"],
  };
  const p = products[url.pathname];
  if (!p) return null;
  return {
    body: page(
      `${p[0]} — specifications`,
      `<main><h1>${p[0]}</h1><p>A hiking backpack made by Ridgeline Gear.</p>
       <h2>Specifications</h2><ul><li>Weight: ${p[1]}</li><li>Volume: ${p[2]}</li><li>Material: recycled nylon</li></ul></main>`,
    ),
  };
}, "maker.test");

const shop = await serveRoutes((url) => {
  if (url.pathname === "/search.html") {
    return {
      body: page(
        "Outdoor shop — search",
        `<main><h1>Outdoor shop</h1><p>Find tents, packs and stoves.</p>
         <form action="/results.html" method="get"><label for="q">Search products</label>
         <input id="q" name="q" type="search"> <button type="submit">Search</button></form></main>`,
      ),
    };
  }
  if (url.pathname === "/results.html") {
    const q = url.searchParams.get("q") ?? "";
    return {
      body: page(
        `Results for ${q}`,
        `<main><h1>Results for “${esc(q)}”</h1><ul>
         <li><a href="${maker.base}/summit-pack-45.html">Summit Pack 45</a> — a large pack for multi-day trips.</li>
         <li><a href="${maker.base}/trail-pack-30.html">Trail Pack 30</a> — a light day pack.</li>
         </ul></main>`,
      ),
    };
  }
  return null;
}, "shop.test");

const scriptDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-script-"));
const scriptPath = path.join(scriptDir, "script.json");
const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath });
try {
  const { context, worker } = browser;
  const query = "trail pack";
  const searchUrl = `${shop.base}/search.html`;
  const resultsUrl = `${shop.base}/results.html?q=${query.replace(/ /g, "+")}`;

  // Learn the handles ahead in a helper tab: handles are given per document,
  // in the order an observation meets the elements, so a fresh document of
  // the same page gets the same ones (the turn's tab is checked below).
  const helper = await context.newPage();
  await helper.goto(searchUrl);
  const searchObs = await observeTab(worker, searchUrl);
  await helper.goto(resultsUrl);
  const resultsObs = await observeTab(worker, resultsUrl);
  await helper.close();
  const box = element(searchObs, "Search products");
  const button = element(searchObs, "Search");
  const result = element(resultsObs, "Trail Pack 30");
  assert(result.href === `${maker.base}/trail-pack-30.html`, `the result links to the maker (${result.href})`);

  fs.writeFileSync(
    scriptPath,
    JSON.stringify([
      modelOutput({
        title: "Searching",
        text: "I will search the shop for the Trail Pack 30.",
        toolCalls: [
          { name: "browser.type", arguments: { handleId: box.handle_id, text: query } },
          { name: "browser.click", arguments: { handleId: button.handle_id } },
        ],
      }),
      modelOutput({
        title: "Opening the result",
        text: "The Trail Pack 30 is the second result; I will open its page.",
        toolCalls: [{ name: "browser.click", arguments: { handleId: result.handle_id } }],
      }),
      modelOutput({
        title: "Trail Pack 30 weight",
        text: "The Trail Pack 30 weighs 1.2 kg.",
        citations: [{ doc_id: "doc:web:summary", quote: "Weight: 1.2 kg" }],
      }),
    ]),
  );

  const tab = await openTab(context, searchUrl);
  // The turn's own tab gives the same handles as the helper did.
  const own = await observeTab(worker, searchUrl);
  assert(element(own, "Search products").handle_id === box.handle_id, "handles are per document and repeatable");

  const sidebar = await openSidebar(context);
  await tab.bringToFront();
  await sidebar.fill("#question", "How much does the Trail Pack 30 weigh? Search the shop for it.");
  await sidebar.click("#send");

  // Step 1 runs without asking: typing, then the search, which loads the results.
  const typed = await waitForStep(sidebar, ".step-item[data-action=type][data-state=ok]");
  assert(/Typing into/.test(typed), `the typing step is listed (${typed})`);
  const clicked = await waitForStep(sidebar, ".step-item[data-action=click][data-state=ok]");
  assert(/Clicking “Search”/.test(clicked), `the search click is listed (${clicked})`);

  // Step 2 asks: the card shows, and nothing happens before Approve.
  const ask = ".step-item[data-decision=ask]";
  await sidebar.waitForSelector(`${ask} .approval-card button:has-text('Approve')`, { timeout: 30_000 });
  const card = norm(await sidebar.textContent(`${ask} .approval-card`));
  assert(/Click “Trail Pack 30”/.test(card) && /another site/.test(card), `the card says what and why (${card})`);
  assert(/Expires in/.test(card), `the card counts down (${card})`);
  assert(/Laika judged this on: a link to another site\./.test(card), `the card names the evidence (${card})`);
  assert(tab.url() === resultsUrl, `the search ran in the turn's tab (${tab.url()})`);
  assert(/I will search the shop/.test(await sidebar.textContent(".steps")), "step 1's text is in the step list, small");
  await sidebar.waitForTimeout(1500);
  assert(tab.url() === resultsUrl, "no navigation before Approve");
  assert(maker.requests.length === 0, `the maker's site was not contacted before Approve (${maker.requests})`);
  await sidebar.setViewportSize({ width: 420, height: 900 });
  fs.mkdirSync(artifacts, { recursive: true });
  await sidebar.screenshot({ path: path.join(artifacts, "sidebar-agent-approval.png"), fullPage: true });

  await sidebar.click(`${ask} button:has-text('Approve')`);
  const opened = await waitForStep(sidebar, `${ask}[data-state=ok]`);
  assert(/Clicking “Trail Pack 30”/.test(opened), `the approved click is listed (${opened})`);
  assert(tab.url() === `${maker.base}/trail-pack-30.html`, `the result opened (${tab.url()})`);
  assert(maker.requests.filter((r) => r === "/trail-pack-30.html").length === 1, `the product page was asked for once (${maker.requests})`);

  // Step 3 answers.
  const reason = await waitForDone(sidebar);
  assert(reason === "answered", `the loop ended with the answer (${reason})`);
  const events = (await hostEvents(sidebar)).filter((m) => m.reply_to && m.type !== "history.get.result");
  if (process.env.LAIKA_E2E_TRACE) console.log(eventTrace(events));
  const done = events.find((m) => m.type === "done");
  assert(done?.stop_reason === "answered" && done.steps === 3 && done.status === "ok", `done says answered after 3 steps (${JSON.stringify(done)})`);
  const calls = events.filter((m) => m.type === "tool_call").map((m) => `${m.step}:${m.name}:${m.decision}`);
  assert(calls.join(",") === "1:browser.type:allow,1:browser.click:allow,2:browser.click:ask", `calls came one at a time, in order (${calls})`);
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(/weighs 1\.2 kg/.test(answer), `the answer holds the fact (${answer})`);
  assert(!/I will search|I will open/.test(answer), `earlier steps' text is not the answer (${answer})`);
  const cite = await sidebar.$(".turn .answer .citation:not(.unverified)");
  assert(cite && /Weight: 1\.2 kg/.test(await citationText(cite)), "the answer cites the product page, verified");
  const items = await sidebar.$$eval(".step-item", (els) => els.map((e) => `${e.dataset.state}:${e.querySelector(".title")?.textContent}`));
  assert(items.length === 3 && items.every((s) => s.startsWith("ok:")), `three operations, each ✓ (${items.join(" | ")})`);
  assert(!(await sidebar.$(".stop-reason")), "no stop reason is told for an answered turn");
  assert(!(await sidebar.isVisible("#stop")), "the Stop button goes when the turn ends");
  await sidebar.screenshot({ path: path.join(artifacts, "sidebar-agent.png"), fullPage: true });

  // The history lists the steps (history.get, through the sidebar).
  await sidebar.click("#nav-history");
  await sidebar.click("#history-list button");
  await sidebar.waitForSelector(".history-steps li", { timeout: 10_000 });
  const stored = await sidebar.$$eval(".history-steps li", (els) => els.map((e) => `${e.dataset.status} ${e.dataset.tool} ${e.textContent}`));
  assert(stored.length === 3, `history lists the three calls (${stored.join(" | ")})`);
  assert(/browser\.type .*Step 1: Type /.test(stored[0]) && /browser\.click .*Step 1: Click /.test(stored[1]) && /browser\.click .*Step 2: Click /.test(stored[2]), `in order, by step, in the live list's words (${stored.join(" | ")})`);
  assert(stored.every((s) => s.startsWith("ok ")), `all ok (${stored.join(" | ")})`);
  await sidebar.screenshot({ path: path.join(artifacts, "sidebar-agent-history.png"), fullPage: true });
  console.log("ok agent: three steps (type+click, approved cross-origin click, answer); history lists them");
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  throw e;
} finally {
  await browser.close();
  await shop.close();
  await maker.close();
  fs.rmSync(scriptDir, { recursive: true, force: true });
}
