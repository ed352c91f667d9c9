// E2E: the offline card's path to a real model, real host, headless
// Chromium, a loopback stub that answers like Ollama (`/api/version`,
// `/api/tags`, streamed `/api/chat`) on a port added through
// LAIKA_DISCOVER_PORTS, so discovery finds it as it finds Ollama.
//  - The first offline answer says what the offline runtime is and offers
//    the found server and its chat model by name (not its embedding model).
//  - One click on "Use it": the next answer comes from the stub's model
//    (its text shown, the stub asked for that model).
//  - The choice is saved: config.toml names the server; switching back to
//    the offline reader keeps it aside per runtime ([runtimes.ollama]).
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { assert, checkA11y, launch, norm, openSidebar, serve } from "./lib.mjs";

const MODEL = "llama3.2:latest";
const ANSWER = "From the stub model: the first sleeper service left Brussels for Prague on Tuesday.";

const chats = [];
const stub = http.createServer((req, res) => {
  const json = (status, body) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const url = new URL(req.url ?? "/", "http://x");
  if (req.method === "GET" && url.pathname === "/api/version") return json(200, { version: "0.5.7-stub" });
  if (req.method === "GET" && url.pathname === "/api/tags") {
    return json(200, { models: [{ name: "nomic-embed-text:latest" }, { name: MODEL }] });
  }
  if (req.method === "POST" && url.pathname === "/api/chat") {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const request = JSON.parse(body);
      chats.push(request);
      const content = JSON.stringify({
        assistant: {
          title: "Night trains",
          render: { type: "doc", children: [{ type: "paragraph", children: [{ type: "text", text: ANSWER }] }] },
          citations: [],
        },
      });
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      for (let i = 0; i < content.length; i += 24) {
        res.write(`${JSON.stringify({ model: request.model, message: { role: "assistant", content: content.slice(i, i + 24) }, done: false })}\n`);
      }
      res.end(`${JSON.stringify({ model: request.model, message: { role: "assistant", content: "" }, done: true, done_reason: "stop" })}\n`);
    });
    return;
  }
  json(404, { error: "not found" });
});
await new Promise((r) => stub.listen(0, "127.0.0.1", r));
const port = stub.address().port;
const base = `http://127.0.0.1:${port}`;

const pages = await serve();
const browser = await launch({ LAIKA_DISCOVER_PORTS: String(port) });
let sidebar;
try {
  const { context } = browser;
  const page = await context.newPage();
  await page.goto(`${pages.base}/article.html`);
  sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 900 });
  const welcome = await sidebar.$("#welcome button:text('Got it')");
  if (welcome) await welcome.click();

  // The first answer is the offline reader's; the card says so and offers the stub.
  await sidebar.fill("#question", "When did the first sleeper service leave?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 60_000 });
  await sidebar.waitForSelector("#offline-card .offline-question", { timeout: 30_000 });
  const card = norm(await sidebar.textContent("#offline-card"));
  assert(/offline reader, not an AI model/.test(card), `the card says what the offline runtime is (${card})`);
  const question = norm(await sidebar.textContent("#offline-card .offline-question"));
  assert(question === `Ollama is running on this computer with ${MODEL}: use it?`, `the card names the found server and model (${question})`);
  assert(!/embed/.test(question), "not the embedding model");
  await checkA11y(sidebar, "offline card with a found server");

  // One click: the next answer comes from the model.
  await sidebar.click("#offline-card button:text('Use it')");
  await sidebar.waitForSelector("#offline-card .offline-chosen", { timeout: 10_000 });
  assert(norm(await sidebar.textContent("#offline-card .offline-chosen")) === `The next answer comes from ${MODEL} via Ollama.`, "the card says what answers next");
  const configPath = path.join(browser.tmp, "config.toml");
  const saved = fs.readFileSync(configPath, "utf8");
  assert(/kind = "ollama"/.test(saved) && saved.includes(MODEL) && saved.includes(base), `the choice is saved (${saved})`);
  assert(chats.length === 0, "nothing was sent to the server before the next question");

  await sidebar.fill("#question", "And who runs it?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn .answer-actions").length >= 2, undefined, { timeout: 60_000 });
  const answer = norm(await sidebar.textContent(".turn:last-child .answer"));
  assert(answer.includes(ANSWER), `the next answer is the model's (${answer})`);
  assert(chats.length >= 1 && chats.every((c) => c.model === MODEL), `the stub was asked with ${MODEL} (${chats.map((c) => c.model)})`);
  const badge = norm(await sidebar.textContent(".turn:last-child .badge"));
  assert(badge.includes(MODEL), `the answer names its model (${badge})`);

  // Back to the offline reader: the server's settings are kept aside.
  await sidebar.selectOption("#runtime-switch", "builtin");
  const deadline = Date.now() + 10_000;
  let aside = "";
  while (Date.now() < deadline) {
    aside = fs.readFileSync(configPath, "utf8");
    if (/\[runtimes\.ollama\]/.test(aside)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert(/\[runtimes\.ollama\]/.test(aside) && aside.includes(MODEL) && aside.includes(base), `the server is kept per runtime (${aside})`);
  console.log("ok offline-card: the found Ollama-shaped server named with its model, one click, the next answer from it, saved per runtime");
} catch (e) {
  console.error(browser.hostLog().slice(-3000));
  throw e;
} finally {
  await browser.close();
  await pages.close();
  stub.close();
}
