// Shared helpers for the browser end-to-end tests: a local page server, a
// headless Chromium with the built extension and a test native-host manifest
// pointing at a wrapper that runs laika-host with its own data dir.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(path.join(repo, "extension", "package.json"));
const { chromium } = require("playwright-core");

export const EXTENSION_ID = "dkfmchejjpecjdaphalpgmmhifdjhomi";
export const extensionDir = path.join(repo, "extension", "dist", "chromium");
export const artifacts = path.join(repo, "tests", "e2e", "artifacts");
export const hostBinary =
  process.env.LAIKA_HOST_BIN ??
  path.join(process.env.CARGO_TARGET_DIR ?? path.join(repo, "target"), "debug", "laika-host");

export function assert(cond, message) {
  if (!cond) throw new Error(`assertion failed: ${message}`);
}

/** Serves files from tests/e2e/pages on 127.0.0.1 (random port). */
export async function serve() {
  const root = path.join(repo, "tests", "e2e", "pages");
  const server = http.createServer((req, res) => {
    const name = path.basename(new URL(req.url ?? "/", "http://x").pathname) || "index.html";
    const file = path.join(root, name);
    if (!fs.existsSync(file)) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(fs.readFileSync(file));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return { base: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

/**
 * A shell script that runs laika-host with `env` (its stderr to
 * `<tmp>/host-stderr.log`), for a browser's native-host manifest to name.
 * `hostCommand` replaces the host (a shell line, for faults).
 */
export function writeHostWrapper(tmp, env, hostCommand = null) {
  const quote = (s) => `'${String(s).replace(/'/g, "'\\''")}'`;
  const wrapper = path.join(tmp, "laika-host-wrapper.sh");
  fs.writeFileSync(
    wrapper,
    [
      "#!/bin/sh",
      ...Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}`),
      hostCommand ?? `exec ${quote(hostBinary)} "$@" 2>>${quote(path.join(tmp, "host-stderr.log"))}`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return wrapper;
}

/**
 * Launches Chromium with the extension. `hostEnv` is added to the host's
 * environment (e.g. LAIKA_RUNTIME=scripted). Returns the context, the temp
 * dirs and a `history(args)` helper running `laika-host history …` on the
 * same data dir. `config` is the host's config file (TOML), if any;
 * `hostCommand` replaces the host in the wrapper (a shell line, for faults).
 */
export async function launch(hostEnv = {}, { installHost = true, config = null, hostCommand = null } = {}) {
  assert(fs.existsSync(hostBinary), `laika-host not built at ${hostBinary}`);
  assert(fs.existsSync(path.join(extensionDir, "manifest.json")), "extension not built (npm run build)");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "laika-e2e-"));
  const userDataDir = path.join(tmp, "profile");
  const dataDir = path.join(tmp, "data");
  const configPath = path.join(tmp, "config.toml");
  fs.mkdirSync(path.join(userDataDir, "NativeMessagingHosts"), { recursive: true });
  fs.mkdirSync(dataDir, { recursive: true });
  if (config) fs.writeFileSync(configPath, config);
  const env = { LAIKA_DATA_DIR: dataDir, LAIKA_CONFIG: configPath, ...hostEnv };
  const wrapper = writeHostWrapper(tmp, env, hostCommand);
  if (installHost) fs.writeFileSync(
    path.join(userDataDir, "NativeMessagingHosts", "dev.laika.host.json"),
    JSON.stringify({
      name: "dev.laika.host",
      description: "Laika native host (e2e test)",
      path: wrapper,
      type: "stdio",
      allowed_origins: [`chrome-extension://${EXTENSION_ID}/`],
    }),
  );
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: false, // --headless=new is passed below, as the design asks
    ignoreDefaultArgs: ["--disable-extensions", "--headless"],
    args: [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
      // Names under .test reach the loopback servers, so a test can stand for
      // two public sites (the gate denies another loopback origin outright).
      "--host-resolver-rules=MAP *.test 127.0.0.1",
      `--disable-extensions-except=${extensionDir}`,
      `--load-extension=${extensionDir}`,
    ],
    viewport: { width: 1000, height: 800 },
  });
  let worker = context.serviceWorkers().find((w) => w.url().includes(EXTENSION_ID));
  if (!worker) worker = await context.waitForEvent("serviceworker", { timeout: 20_000 });
  assert(worker.url().startsWith(`chrome-extension://${EXTENSION_ID}/`), `extension id is pinned (got ${worker.url()})`);
  const history = (...args) =>
    JSON.parse(
      execFileSync(hostBinary, ["history", ...args], { env: { ...process.env, ...env }, encoding: "utf8" }),
    );
  return {
    context,
    worker,
    tmp,
    dataDir,
    history,
    hostLog: () => (fs.existsSync(path.join(tmp, "host-stderr.log")) ? fs.readFileSync(path.join(tmp, "host-stderr.log"), "utf8") : ""),
    async close() {
      await context.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Opens `url` in a new tab of `context` and waits for it to load. */
export async function openTab(context, url) {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForLoadState("load");
  return page;
}

/** Opens the sidebar page in a tab and waits until the host said hello. */
export async function openSidebar(context) {
  const sidebar = await context.newPage();
  // Keep a copy of every event the background posts to this sidebar, for
  // assertions on the protocol itself (`hostEvents`).
  await sidebar.addInitScript(() => {
    const events = [];
    Object.defineProperty(window, "__laikaEvents", { value: events });
    const connect = chrome.runtime.connect.bind(chrome.runtime);
    chrome.runtime.connect = (...args) => {
      const port = connect(...args);
      port.onMessage.addListener((m) => events.push(m));
      return port;
    };
  });
  await sidebar.goto(`chrome-extension://${EXTENSION_ID}/sidepanel.html`);
  await sidebar.waitForFunction(() => (document.getElementById("runtime")?.textContent ?? "").length > 0, null, {
    timeout: 20_000,
  });
  return sidebar;
}

/**
 * The set-up of the collection tests: each page of `pages` (path on `base` →
 * [title, …]) open in a tab of its own, then the sidebar (at `width` px when
 * given, the welcome dismissed) with its Collections panel open and every
 * tab added, in order, to the collection the first one makes (called `name`
 * when given), each once the panel says it was added. Returns the sidebar.
 */
export async function sidebarWithCollection(context, base, pages, { width = null, name = null } = {}) {
  for (const p of Object.keys(pages)) {
    await openTab(context, `${base}${p}`);
  }
  const sidebar = await openSidebar(context);
  if (width) await sidebar.setViewportSize({ width, height: 800 });
  const welcome = await sidebar.$("#welcome button:text('Got it')");
  if (welcome) await welcome.click();
  await sidebar.click("#collections summary");
  await sidebar.waitForSelector("#collection-tabs option", { state: "attached", timeout: 20_000 });
  if (name) await sidebar.fill("#collection-name", name);
  for (const [title] of Object.values(pages)) {
    const value = await sidebar.evaluate((t) => [...document.querySelectorAll("#collection-tabs option")].find((o) => o.textContent === t)?.value ?? null, title);
    assert(value, `the tab “${title}” is offered`);
    await sidebar.selectOption("#collection-tabs", value);
    await sidebar.click("#collection-add-tab");
    const added = name ? `Added “${title}” to “${name}”` : `Added “${title}”`;
    await sidebar.waitForFunction((a) => document.getElementById("collections-status")?.textContent?.includes(a), added, { timeout: 20_000 });
  }
  return sidebar;
}

export function norm(s) {
  return String(s).replace(/\s+/g, " ").trim();
}

/**
 * What a source button under an answer says, its quote included: a quote the
 * answer already shows is only in the button's title ("Show “…” on the page").
 */
export async function citationText(button) {
  return norm(`${await button.textContent()} ${(await button.getAttribute("title")) ?? ""}`);
}

/**
 * One scripted model output: a `laika.llmcp` response packet (as its raw
 * JSON text) with the scripted runtime's placeholders, answering `text` and
 * proposing `toolCalls` (none: the answer ends the loop), stating `mode`
 * (`clarify` with `choices`: a clarifying question) when given, and
 * proposing `plan` instead of calls when given.
 */
export function modelOutput({ title = "Answer", text, citations = [], toolCalls = [], mode = null, choices = [], plan = null }) {
  const packet = {
    protocol: { name: "laika.llmcp", version: 1 },
    id: "{{new_id}}",
    type: "response",
    created_at: "{{now}}",
    conversation: { id: "{{conversation_id}}", turn: 999999 },
    sender: { role: "assistant" },
    in_reply_to: { request_id: "{{request_id}}" },
    assistant: {
      title,
      render: { type: "doc", children: [{ type: "paragraph", children: [{ type: "text", text }] }] },
      citations,
    },
  };
  if (toolCalls.length) packet.tool_calls = toolCalls;
  if (mode) packet.mode = mode;
  if (choices.length) packet.assistant.choices = choices;
  if (plan) packet.plan = plan;
  return JSON.stringify(packet).replace("999999", "{{turn}}");
}

/** A transform's map step answer (scripted): the source's key points as a list. */
export function points(...items) {
  const packet = JSON.parse(modelOutput({ text: "x" }).replace("{{turn}}", "1"));
  packet.assistant.render = {
    type: "doc",
    children: [{ type: "list", ordered: false, items: items.map((t) => ({ type: "list_item", children: [{ type: "paragraph", children: [{ type: "text", text: t }] }] })) }],
  };
  return JSON.stringify(packet).replace('"turn":1', '"turn":{{turn}}');
}

/** Asks the content script of the tab showing `url` for its observation (through the worker). */
export async function observeTab(worker, url) {
  const res = await worker.evaluate(async (pageUrl) => {
    const tabs = await chrome.tabs.query({});
    const tab = tabs.find((t) => t.url === pageUrl);
    if (!tab) return { ok: false, error: `no tab shows ${pageUrl}` };
    return chrome.tabs.sendMessage(tab.id, { kind: "observe" });
  }, url);
  assert(res?.ok, `observation of ${url} works (${JSON.stringify(res)})`);
  return res.observation;
}

/** The element of an observation whose text (or label) is `text`. */
export function element(observation, text) {
  const found = (observation.summary.elements ?? []).find((e) => e.text === text || e.label === text);
  assert(found, `an element "${text}" is observed (${JSON.stringify(observation.summary.elements)})`);
  return found;
}

/** Waits until the sidebar's step item for a call in `state` exists; returns its text. */
export async function waitForStep(sidebar, selector, timeout = 30_000) {
  await sidebar.waitForSelector(selector, { timeout });
  return norm(await sidebar.textContent(selector));
}

/** Waits for the turn to end; returns its `done.stop_reason` (the sidebar keeps it on the turn). */
export async function waitForDone(sidebar, timeout = 60_000) {
  await sidebar.waitForSelector(".turn[data-stop-reason]", { timeout });
  return sidebar.getAttribute(".turn[data-stop-reason]", "data-stop-reason");
}

/**
 * A loopback server whose pages come from `route(url, base)` (an object
 * `{body, type?, status?}` or null for 404). Counts every request it gets,
 * by path, so a test can prove a page was never asked for.
 */
export async function serveRoutes(route, host = "127.0.0.1") {
  const requests = [];
  let base = "";
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", base);
    requests.push(url.pathname + url.search);
    const page = route(url, base);
    if (!page) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(page.status ?? 200, { "content-type": page.type ?? "text/html; charset=utf-8" }).end(page.body);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://${host}:${server.address().port}`;
  return {
    base,
    requests,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** Escapes text for the test pages' HTML. */
export function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

/** The host events the sidebar received so far (`{kind:"event"}` posts, unwrapped). */
export async function hostEvents(sidebar) {
  return sidebar.evaluate(() => window.__laikaEvents.filter((e) => e.kind === "event").map((e) => e.msg));
}

/** One line per host event, for logs: `type(detail)`. */
export function eventTrace(events) {
  return events
    .map((m) => {
      const d = m.type === "agent_state" ? m.state : m.type === "operation" ? m.status : m.type === "tool_call" ? `${m.name} ${m.decision}` : m.type === "tool_result" ? `${m.name} ${m.status}` : m.type === "done" ? `${m.status} ${m.stop_reason} steps=${m.steps}` : m.type === "assistant" || m.type === "render_delta" ? `step ${m.step}` : "";
      return d ? `${m.type}(${d})` : m.type;
    })
    .join(" → ");
}

const axeSource = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/**
 * Runs axe-core on the page as it is now; fails on any serious or critical
 * violation (naming the rule and the elements). `state` names the screen.
 */
export async function checkA11y(page, state) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(axeSource); // CDP evaluation: the sidebar CSP forbids inline scripts
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert(
    bad.length === 0,
    `axe (${state}): ${bad.map((v) => `${v.id} [${v.impact}] ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`).join("; ")}`,
  );
  return result.violations.length;
}

/** Saves a screenshot of `page` as tests/e2e/artifacts/<name>.png. */
export async function shot(page, name) {
  fs.mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: true });
}

export const SCREEN_WIDTHS = [360, 420, 800];
export const SCREEN_SCHEMES = ["light", "dark"];

/**
 * Shoots and checks the sidebar as it is now at every width (800 px tall)
 * and scheme: nothing scrolls sideways, axe clean, saved as
 * tests/e2e/artifacts/screens-<screen>-<width>-<scheme>.png. `focus`: a
 * selector scrolled into view first. Leaves the sidebar light at 420 px;
 * returns the number of screenshots.
 */
export async function screenMatrix(page, screen, focus = null) {
  fs.mkdirSync(artifacts, { recursive: true });
  let shots = 0;
  for (const width of SCREEN_WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    for (const scheme of SCREEN_SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      if (focus) await page.evaluate((sel) => document.querySelector(sel)?.scrollIntoView({ block: "nearest" }), focus);
      const wide = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert(wide.scroll <= wide.client, `${screen} at ${width} px ${scheme}: nothing scrolls sideways (${JSON.stringify(wide)})`);
      await checkA11y(page, `${screen} at ${width} px, ${scheme}`);
      await page.screenshot({ path: path.join(artifacts, `screens-${screen}-${width}-${scheme}.png`) });
      shots += 1;
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 420, height: 800 });
  return shots;
}

/**
 * Debian's firefox-esr over WebDriver BiDi (puppeteer-core) with the Firefox
 * build loaded as a temporary add-on, finding the real laika-host through a
 * manifest in ~/.mozilla/native-messaging-hosts/ of a temporary HOME (the
 * user's own registration is never touched). `hostEnv`, `config` and
 * `hostCommand` as for `launch`. `openSidebar()` opens the add-on's page in
 * a tab and waits until the host said hello.
 */
export async function launchFirefox(hostEnv = {}, { config = null, hostCommand = null } = {}) {
  const puppeteer = require("puppeteer-core");
  const FIREFOX = process.env.FIREFOX ?? "/usr/bin/firefox-esr";
  const ADDON_ID = "laika@laika.dev";
  // Pinned so the test can open the sidebar page by URL (Firefox picks a random one per profile).
  const ADDON_UUID = "5a1c6a3e-2b7d-4f6e-9c1a-7e0d4b8f2a91";
  const addonDir = path.join(repo, "extension", "dist", "firefox");
  assert(fs.existsSync(FIREFOX), `firefox-esr at ${FIREFOX} (scripts/e2e.sh installs it)`);
  assert(fs.existsSync(path.join(addonDir, "manifest.json")), "the Firefox build exists (npm run build)");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "laika-ff-"));
  const home = path.join(tmp, "home");
  const dataDir = path.join(tmp, "data");
  const configPath = path.join(tmp, "config.toml");
  fs.mkdirSync(path.join(home, ".mozilla", "native-messaging-hosts"), { recursive: true });
  fs.mkdirSync(dataDir, { recursive: true });
  if (config) fs.writeFileSync(configPath, config);
  const env = { LAIKA_DATA_DIR: dataDir, LAIKA_CONFIG: configPath, ...hostEnv };
  fs.writeFileSync(
    path.join(home, ".mozilla", "native-messaging-hosts", "dev.laika.host.json"),
    JSON.stringify({
      name: "dev.laika.host",
      description: "Laika native host (Firefox e2e test)",
      path: writeHostWrapper(tmp, env, hostCommand),
      type: "stdio",
      allowed_extensions: [ADDON_ID],
    }),
  );
  const browser = await puppeteer.launch({
    browser: "firefox",
    protocol: "webDriverBiDi",
    executablePath: FIREFOX,
    headless: true,
    // Lets WebDriver open the add-on's own page (moz-extension:) in a tab.
    args: ["--remote-allow-system-access"],
    env: { ...process.env, HOME: home, MOZ_CRASHREPORTER_DISABLE: "1" },
    extraPrefsFirefox: {
      "extensions.webextensions.uuids": JSON.stringify({ [ADDON_ID]: ADDON_UUID }),
      "datareporting.policy.dataSubmissionEnabled": false,
      "browser.shell.checkDefaultBrowser": false,
    },
  });
  const id = await browser.installExtension(addonDir);
  assert(id === ADDON_ID, `the add-on is installed as ${ADDON_ID} (got ${id})`);
  return {
    browser,
    tmp,
    env,
    configPath,
    async openSidebar() {
      const sidebar = await browser.newPage();
      await sidebar.setViewport({ width: 420, height: 900 });
      // Firefox does not report load events for add-on pages over BiDi: wait for the page's own state instead.
      await sidebar.goto(`moz-extension://${ADDON_UUID}/sidepanel.html`, { timeout: 5000 }).catch((e) => {
        if (e.name !== "TimeoutError") throw e;
      });
      await sidebar.waitForFunction(() => (document.getElementById("runtime")?.textContent ?? "").length > 0, { timeout: 30_000 });
      return sidebar;
    },
    async close() {
      await browser.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}
