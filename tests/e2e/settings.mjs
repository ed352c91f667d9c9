// E2E: Settings finds a model server without configuration and uses it,
// real host, headless Chromium, a loopback stub that answers like
// llama-server (`/props`, `/v1/models`, streamed chat completions) on a port
// added through LAIKA_DISCOVER_PORTS.
//  - Opening Settings finds the stub: kind, profile, models, context window.
//  - "Use this server" fills kind, URL and profile; the model picker lists
//    the server's models; the API key field is a password field that says
//    only "set" once saved.
//  - Test connection shows success and the JSON that came back; against a
//    closed port it says, in words, that the model is not reachable.
//  - After Save a question is answered through the stub with the picked
//    model; the key is in the 0600 config file and in no host message.
//  - Settings are kept per runtime: saving offline keeps the server aside
//    ([runtimes.openai]), the header names the saved runtime at once, "Saved
//    to …" is in view, and the header's switcher restores server, model,
//    profile and key; screenshots at 360, 420 and 800 px, light and dark.
//  - axe-core: no serious or critical violation in each state.
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { assert, checkA11y, hostEvents, launch, norm, openSidebar, serve, shot } from "./lib.mjs";

const KEY = "sk-e2e-settings-5ecret-42";
const MODELS = ["gemma-stub-270m.gguf", "qwen-stub-4b.gguf"];
const ANSWER = "The night train to Vienna leaves at 21:40 from platform 7.";

/** What llama-server answers, as far as Laika asks. */
const chats = [];
const stub = http.createServer((req, res) => {
  const json = (status, body) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const url = new URL(req.url ?? "/", "http://x");
  if (req.method === "GET" && url.pathname === "/props") {
    return json(200, { default_generation_settings: { n_ctx: 8192 }, model_path: `/models/${MODELS[0]}`, build_info: "b0000-stub" });
  }
  if (req.method === "GET" && url.pathname === "/v1/models") {
    return json(200, { object: "list", data: MODELS.map((id) => ({ id, object: "model", owned_by: "llamacpp" })) });
  }
  if (req.method === "POST" && url.pathname === "/v1/chat/completions") {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const request = JSON.parse(body);
      chats.push({ authorization: req.headers.authorization ?? "", request });
      const test = JSON.stringify(request.json_schema?.required) === JSON.stringify(["reply"]);
      const content = test
        ? JSON.stringify({ reply: "Ready." })
        : JSON.stringify({
            assistant: {
              title: "Night train",
              render: { type: "doc", children: [{ type: "paragraph", children: [{ type: "text", text: ANSWER }] }] },
              citations: [],
            },
          });
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < content.length; i += 24) {
        res.write(`data: ${JSON.stringify({ model: request.model, choices: [{ index: 0, delta: { content: content.slice(i, i + 24) }, finish_reason: null }] })}\n\n`);
      }
      res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`);
    });
    return;
  }
  json(404, { error: "not found" });
});
await new Promise((r) => stub.listen(0, "127.0.0.1", r));
const port = stub.address().port;
const base = `http://127.0.0.1:${port}/v1`;
// A port nobody listens on, for the failing test.
const closed = await new Promise((r) => {
  const s = net.createServer().listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => r(p));
  });
});

const pages = await serve();
const browser = await launch({ LAIKA_DISCOVER_PORTS: String(port) });
try {
  const { context } = browser;
  const page = await context.newPage();
  await page.goto(`${pages.base}/article.html`);
  const sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 900 });
  const welcome = await sidebar.$("#welcome button:text('Got it')");
  if (welcome) await welcome.click();

  // Opening Settings looks for servers: the stub is found, described.
  await sidebar.click("#nav-settings");
  await sidebar.waitForSelector("#discover-list li[data-kind=llama_cpp]", { timeout: 20_000 });
  const found = norm(await sidebar.textContent("#discover-list li"));
  for (const want of [`llama.cpp (llama-server) at ${base}`, "profile llama.cpp", "2 models", "context 8,192 tokens", MODELS[1]]) {
    assert(found.includes(want), `the found server says "${want}" (${found})`);
  }
  assert(/Found 1 model server/.test(await sidebar.textContent("#discover-status")), "the status line counts it");
  assert((await sidebar.getAttribute("#discover-status", "role")) === "status", "the status is a live region");
  const kinds = await sidebar.$$eval("#set-kind option", (os) => os.map((o) => o.value));
  assert(!kinds.includes("scripted") && !kinds.includes("command"), `scripted is never offered (${kinds})`);
  await checkA11y(sidebar, "settings: server found");
  await shot(sidebar, "settings-found");

  // Use it: kind, URL and profile are filled; pick the second model.
  await sidebar.click(`#discover-list li button[aria-label^="Use this server: llama.cpp"]`);
  assert((await sidebar.inputValue("#set-kind")) === "openai", "kind openai");
  assert((await sidebar.inputValue("#set-base-url")) === base, "the server's URL");
  assert((await sidebar.inputValue("#set-profile")) === "llama.cpp", "its profile");
  const listed = await sidebar.$$eval("#set-model-pick option", (os) => os.map((o) => o.value));
  assert(JSON.stringify(listed) === JSON.stringify(MODELS), `the model picker lists the server's models (${listed})`);
  assert(await sidebar.evaluate(() => document.activeElement?.id === "set-model-pick"), "focus moves to the model picker");
  await sidebar.selectOption("#set-model-pick", MODELS[1]);
  assert((await sidebar.inputValue("#set-model")) === MODELS[1], "the picked model is the model");
  assert((await sidebar.getAttribute("#set-api-key", "type")) === "password", "the key field hides what is typed");
  await sidebar.fill("#set-api-key", KEY);

  // Test connection: success and the JSON that came back.
  await sidebar.click("#test-connection");
  await sidebar.waitForSelector("#test-result[data-ok]", { timeout: 30_000 });
  const ok = norm(await sidebar.textContent("#test-result"));
  assert((await sidebar.getAttribute("#test-result", "data-ok")) === "true", `the test passed (${ok})`);
  assert(ok.includes('It answered: {"reply":"Ready."}') && ok.includes(MODELS[1]), `it shows what came back (${ok})`);
  const tested = chats.at(-1);
  assert(tested.request.model === MODELS[1] && tested.authorization === `Bearer ${KEY}`, "the test used the picked model and the typed key");
  assert(tested.request.json_schema?.properties?.reply, "with the schema, as llama.cpp takes it");
  await checkA11y(sidebar, "settings: tested");
  await shot(sidebar, "settings-tested");

  // A closed port: not reachable, in words.
  await sidebar.fill("#set-base-url", `http://127.0.0.1:${closed}/v1`);
  await sidebar.click("#test-connection");
  await sidebar.waitForSelector("#test-result[data-ok=false]", { timeout: 30_000 });
  const bad = norm(await sidebar.textContent("#test-result"));
  assert(/isn't reachable/.test(bad), `a closed port is not reachable, in words (${bad})`);
  await checkA11y(sidebar, "settings: test failed");
  await sidebar.fill("#set-base-url", base);

  // Save: the key goes to a 0600 file and never comes back.
  await sidebar.click("#settings-form button[type=submit]");
  await sidebar.waitForFunction(() => /Saved/.test(document.getElementById("settings-message")?.textContent ?? ""));
  assert((await sidebar.inputValue("#set-api-key")) === "", "the key field is empty after saving");
  assert(/^set/.test(await sidebar.getAttribute("#set-api-key", "placeholder")), "it says only that a key is set");
  const configPath = path.join(browser.tmp, "config.toml");
  const saved = fs.readFileSync(configPath, "utf8");
  assert(saved.includes(KEY) && saved.includes('profile = "llama.cpp"'), "the key and profile are in the config file");
  assert((fs.statSync(configPath).mode & 0o777) === 0o600, `the config file is 0600 (${(fs.statSync(configPath).mode & 0o777).toString(8)})`);

  // A question is answered through the server, with the picked model.
  await sidebar.click("#nav-chat");
  const before = chats.length;
  await sidebar.fill("#question", "When does the night train to Vienna leave?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 60_000 });
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(answer.includes(ANSWER), `the stub's answer is shown (${answer})`);
  assert(chats.length > before && chats.at(-1).request.model === MODELS[1], "the turn went to the picked model");
  const header = norm(await sidebar.textContent("#runtime"));
  assert(header.includes(MODELS[1]), `the header names the model (${header})`);
  await checkA11y(sidebar, "settings: answered through the server");
  await shot(sidebar, "settings-answered");

  // Settings are kept per runtime: saving offline keeps the server's settings aside; the header names
  // the saved runtime at once, and its switcher brings the server back whole.
  await sidebar.click("#nav-settings");
  await sidebar.waitForFunction(() => document.getElementById("set-kind")?.value === "openai");
  assert(await sidebar.isVisible("label[for=set-api-key-clear]"), "a stored key can be removed");
  await sidebar.selectOption("#set-kind", "builtin");
  await sidebar.click("#settings-form button[type=submit]");
  await sidebar.waitForFunction(() => /Saved to .*Offline/.test(document.getElementById("settings-message")?.textContent ?? ""));
  const message = await sidebar.evaluate(() => {
    const r = document.getElementById("settings-message").getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, h: window.innerHeight };
  });
  assert(message.top >= 0 && message.bottom <= message.h, `"Saved to …" is in view (${JSON.stringify(message)})`);
  assert(/extractive/i.test(await sidebar.textContent("#runtime")), "the header names the offline runtime at once");
  const aside = fs.readFileSync(configPath, "utf8");
  assert(/\[runtimes\.openai\]/.test(aside) && aside.includes(KEY) && aside.includes(MODELS[1]) && aside.includes(base), `the server's settings are kept aside (${aside.replace(KEY, "<key>")})`);
  // Choosing the server again in the form shows its own settings.
  await sidebar.selectOption("#set-kind", "openai");
  assert((await sidebar.inputValue("#set-base-url")) === base && (await sidebar.inputValue("#set-model")) === MODELS[1], "the form shows the kept server");
  assert((await sidebar.inputValue("#set-profile")) === "llama.cpp", "and its profile");
  await sidebar.selectOption("#set-kind", "builtin");
  const choices = await sidebar.$$eval("#runtime-switch option", (os) => os.map((o) => `${o.value}=${o.textContent}`));
  assert(choices.includes(`openai=${MODELS[1]} · OpenAI-compatible server`) && choices.some((c) => c.startsWith("builtin=")), `the header offers both (${choices})`);
  for (const width of [360, 420, 800]) {
    for (const scheme of ["light", "dark"]) {
      await sidebar.emulateMedia({ colorScheme: scheme });
      await sidebar.setViewportSize({ width, height: 900 });
      await checkA11y(sidebar, `settings saved offline at ${width} px ${scheme}`);
      await shot(sidebar, `settings-per-runtime-${width}-${scheme}`);
    }
  }
  await sidebar.emulateMedia({ colorScheme: "light" });
  await sidebar.setViewportSize({ width: 420, height: 900 });
  await sidebar.selectOption("#runtime-switch", "openai");
  await sidebar.waitForFunction((m) => (document.getElementById("runtime")?.textContent ?? "").includes(m), MODELS[1], { timeout: 10_000 });
  const restored = fs.readFileSync(configPath, "utf8");
  assert(!/\[runtimes\./.test(restored) && restored.includes(KEY) && restored.includes('profile = "llama.cpp"') && restored.includes(MODELS[1]), "switching back restores server, model, profile and key");
  await sidebar.waitForFunction((b) => document.getElementById("set-base-url")?.value === b, base, { timeout: 10_000 });
  assert((await sidebar.inputValue("#set-model")) === MODELS[1], "Settings show the restored server");
  await sidebar.click("#nav-chat");
  const asked = chats.length;
  await sidebar.fill("#question", "And the train back?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForFunction(() => document.querySelectorAll(".turn .answer-actions").length === 2, null, { timeout: 60_000 });
  assert(chats.length > asked && chats.at(-1).authorization === `Bearer ${KEY}` && chats.at(-1).request.model === MODELS[1], "the restored server answers, with its key");

  const events = JSON.stringify(await hostEvents(sidebar));
  assert(!events.includes(KEY), "no host message carries the key");
  assert(!browser.hostLog().includes(KEY), "the host's stderr never shows it");
  console.log("settings e2e: passed");
} finally {
  await browser.close();
  await pages.close();
  await new Promise((r) => stub.close(r));
}
