// E2E: without a native-host manifest the sidebar says the Laika app is not
// installed and shows the install command (instead of hanging or retrying silently).
import { EXTENSION_ID, assert, launch } from "./lib.mjs";

const browser = await launch({}, { installHost: false });
try {
  const sidebar = await browser.context.newPage();
  await sidebar.goto(`chrome-extension://${EXTENSION_ID}/sidepanel.html`);
  await sidebar.waitForFunction(() => /not installed/.test(document.getElementById("status")?.textContent ?? ""), null, { timeout: 20_000 });
  const text = await sidebar.textContent("#status");
  assert(/install/.test(text) && (await sidebar.$("#status code")) !== null, `status shows the install command (${text})`);
  console.log("ok not-installed: the sidebar shows the install command");
} finally {
  await browser.close();
}
