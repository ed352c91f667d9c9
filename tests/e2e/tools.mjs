// E2E: gated tool calls. The host runs the scripted runtime, whose one answer
// proposes a click on "Buy now" (gate: ask) and typing into a password field
// (gate: deny). The click must happen only after Approve; the denied call
// must never run.
import fs from "node:fs";
import path from "node:path";
import { artifacts, assert, launch, openSidebar, serve } from "./lib.mjs";

const server = await serve();
const scriptDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-script-"));
const scriptPath = path.join(scriptDir, "script.json");
const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath });
try {
  const { context, worker } = browser;
  const page = await context.newPage();
  const url = `${server.base}/shop.html`;
  await page.goto(url);
  await page.waitForLoadState("load");

  // Learn the handles the content script gives this page (they are stable per
  // element for the document's lifetime), so the scripted model can use them.
  const observation = await worker.evaluate(async (pageUrl) => {
    const tabs = await chrome.tabs.query({});
    const tab = tabs.find((t) => t.url === pageUrl);
    return chrome.tabs.sendMessage(tab.id, { kind: "observe" });
  }, url);
  assert(observation?.ok, `observation works (${JSON.stringify(observation)})`);
  const elements = observation.observation.summary.elements ?? [];
  const buy = elements.find((e) => e.text === "Buy now");
  const pw = elements.find((e) => e.input_type === "password");
  assert(buy && pw, `handles for Buy now and the password field (${JSON.stringify(elements)})`);

  const packet = {
    protocol: { name: "laika.llmcp", version: 1 },
    id: "{{new_id}}",
    type: "response",
    created_at: "{{now}}",
    conversation: { id: "{{conversation_id}}", turn: 999999 },
    sender: { role: "assistant" },
    in_reply_to: { request_id: "{{request_id}}" },
    assistant: {
      title: "Buying",
      render: { type: "doc", children: [{ type: "paragraph", children: [{ type: "text", text: "I can buy the backpack for you." }] }] },
      citations: [{ doc_id: "doc:web:summary", quote: "Price: $89.00." }],
    },
    tool_calls: [
      { name: "browser.click", arguments: { handleId: buy.handle_id } },
      { name: "browser.type", arguments: { handleId: pw.handle_id, text: "hunter2" } },
    ],
  };
  fs.writeFileSync(scriptPath, JSON.stringify([JSON.stringify(packet).replace("999999", "{{turn}}")]));

  const sidebar = await openSidebar(context);
  await sidebar.fill("#question", "Buy this backpack for me");
  await sidebar.click("#send");
  await sidebar.waitForSelector(".tool-card >> nth=1", { timeout: 30_000 });
  const cards = await sidebar.$$(".tool-card");
  assert(cards.length === 2, `two tool cards (got ${cards.length})`);
  const [askCard, denyCard] = cards;
  assert((await askCard.textContent()).includes("ask"), "the click is an ask card");
  assert((await denyCard.textContent()).includes("deny"), "the typing is a deny card");
  assert(!(await denyCard.$("button")), "a denied call offers no button");

  // Nothing has run yet: give a wrongly auto-running executor time to act.
  await sidebar.waitForTimeout(1500);
  assert((await page.textContent("#status")) === "Not purchased.", "ask call waits for approval");
  assert((await page.evaluate(() => document.body.dataset.bought ?? "0")) === "0", "no click before Approve");

  await askCard.$("button:has-text('Approve')").then((b) => b.click());
  await sidebar.waitForFunction(() => /Done:/.test(document.querySelector(".tool-card .result")?.textContent ?? ""), null, { timeout: 20_000 });
  assert((await page.textContent("#status")) === "Purchased!", "the approved click ran");
  assert((await page.evaluate(() => document.body.dataset.bought)) === "1", "the click ran exactly once");
  assert((await page.evaluate(() => document.getElementById("pw").value)) === "", "the denied call never typed");
  assert(/Blocked/.test(await denyCard.textContent()), "the deny card says it was blocked");

  fs.mkdirSync(artifacts, { recursive: true });
  await sidebar.screenshot({ path: path.join(artifacts, "sidebar-tools.png"), fullPage: true });
  console.log("ok tools: ask ran only after Approve, deny never ran");
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(scriptDir, { recursive: true, force: true });
}
