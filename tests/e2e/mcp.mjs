// E2E: MCP tool servers in headless Chromium with the real extension, the
// real host and the test MCP server (`laika-mcp-fixture`, over stdio).
// Settings lists the server connected with its tools and a broken one with
// its coded error; the trusted box is saved to config.toml. A scripted
// model then calls a tool that writes: the approval card names the server
// and the tool and shows the arguments sent; after Approve the host runs it
// and the loop answers.
import fs from "node:fs";
import path from "node:path";
import { assert, checkA11y, hostBinary, launch, modelOutput, norm, openSidebar, openTab, serve, shot, waitForDone } from "./lib.mjs";

const fixture = path.join(path.dirname(hostBinary), "laika-mcp-fixture");
assert(fs.existsSync(fixture), `laika-mcp-fixture not built at ${fixture} (cargo build -p laika-host)`);

const server = await serve();
const scriptDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "laika-script-"));
const scriptPath = path.join(scriptDir, "script.json");
fs.writeFileSync(
  scriptPath,
  JSON.stringify([
    modelOutput({
      title: "Noting",
      text: "I will add it to your notes.",
      toolCalls: [{ name: "mcp.notes.append", arguments: { text: "buy milk" } }],
    }),
    modelOutput({ title: "Noted", text: "Added “buy milk” to your notes." }),
  ]),
);
const config = [
  "[mcp.servers.notes]",
  `command = ${JSON.stringify(fixture)}`,
  'args = ["stdio"]',
  "",
  "[mcp.servers.broken]",
  'command = "/nonexistent/mcp-server"',
  "",
].join("\n");
const browser = await launch({ LAIKA_RUNTIME: "scripted", LAIKA_SCRIPT: scriptPath }, { config });
try {
  const { context } = browser;
  await openTab(context, `${server.base}/article.html`);
  const sidebar = await openSidebar(context);

  await sidebar.click("#nav-settings");
  const notes = ".mcp-server[data-server=notes]";
  await sidebar.waitForSelector(notes, { timeout: 30_000 });
  const shown = norm(await sidebar.textContent(notes));
  assert(/connected · 5 tools/.test(shown), `the server is connected with its tools (${shown})`);
  assert(/mcp\.notes\.lookup read-only/.test(shown) && /mcp\.notes\.append/.test(shown), `its tools are listed (${shown})`);
  const broken = norm(await sidebar.textContent(".mcp-server[data-server=broken]"));
  assert(/not connected: .*\(MCP_UNAVAILABLE\)/.test(broken), `a broken server says why (${broken})`);
  assert(!(await sidebar.isChecked("#mcp-trusted-notes")), "a server is not trusted by default");
  await sidebar.check("#mcp-trusted-notes");
  await sidebar.waitForFunction(() => /Saved: notes is trusted/.test(document.getElementById("mcp-message")?.textContent ?? ""));
  const saved = fs.readFileSync(path.join(browser.tmp, "config.toml"), "utf8");
  const notesTable = saved.split("[mcp.servers.notes]")[1]?.split("\n[")[0] ?? "";
  assert(/\ntrusted = true\n/.test(notesTable), `the trust is saved to config.toml (${saved})`);
  await sidebar.click(".mcp-server[data-server=broken] button:has-text('Test connection')");
  await sidebar.waitForFunction(() => /broken: not connected/.test(document.getElementById("mcp-message")?.textContent ?? ""));
  await checkA11y(sidebar, "settings: MCP servers");
  await shot(sidebar, "mcp-settings");

  await sidebar.click("#nav-chat");
  await sidebar.fill("#question", "Add buy milk to my notes");
  await sidebar.click("#send");
  const ask = ".step-item[data-decision=ask]";
  await sidebar.waitForSelector(`${ask} .approval-card button:has-text('Approve')`, { timeout: 30_000 });
  const card = norm(await sidebar.textContent(`${ask} .approval-card`));
  assert(/Call “append” on the MCP server “notes”/.test(card), `the card names the tool and the server (${card})`);
  assert(/Sends: \{"text":"buy milk"\}/.test(card), `the card shows what is sent (${card})`);
  assert(/not say it only reads/.test(card), `the card says why it asks (${card})`);
  await checkA11y(sidebar, "chat: MCP approval card");
  await shot(sidebar, "mcp-approval");
  await sidebar.click(`${ask} button:has-text('Approve')`);
  const reason = await waitForDone(sidebar);
  const ran = norm(await sidebar.textContent(ask));
  assert((await sidebar.getAttribute(ask, "data-state")) === "ok", `the approved call ran (${ran}); host log: ${browser.hostLog().slice(-2000)}`);
  assert(reason === "answered", `the loop ended with the answer (${reason})`);
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(/Added “buy milk”/.test(answer), `the answer follows the call (${answer})`);
  console.log("ok mcp: Settings lists servers, saves the trust; an MCP call is asked with its arguments, runs after Approve");
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(scriptDir, { recursive: true, force: true });
}
