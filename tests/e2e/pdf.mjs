// E2E: a PDF tab is read whole, by the real host. The public-domain PDF of
// the host's tests is served as application/pdf and opened in a tab (the
// browser's viewer: no content script reads it); a question in the sidebar
// is answered from its pages, its citation names the page ("p. 3"), and a
// click opens the viewer at that page (#page=3).
import fs from "node:fs";
import path from "node:path";
import { assert, citationText, launch, norm, openSidebar, repo, serveRoutes, shot } from "./lib.mjs";

const pdf = fs.readFileSync(path.join(repo, "host", "laika-host", "tests", "data", "pdf", "public-domain.pdf"));
const site = await serveRoutes((url) => (url.pathname === "/founding.pdf" ? { body: pdf, type: "application/pdf" } : null));
const browser = await launch();
try {
  const { context } = browser;
  const page = await context.newPage();
  const pdfUrl = `${site.base}/founding.pdf`;
  await page.goto(pdfUrl).catch(() => undefined);
  const sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 900 });
  await page.bringToFront();
  if (await sidebar.$("#welcome")) await sidebar.click("#welcome button:text('Got it')");

  await sidebar.fill("#question", "What shall not perish from the earth?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForSelector(".turn .answer-actions, .turn p.error", { timeout: 60_000 });
  const failure = await sidebar.$(".turn p.error");
  assert(!failure, `the PDF was read (${failure ? await failure.textContent() : ""})`);
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(/people/i.test(answer), `the answer quotes the last page (${answer.slice(0, 200)})`);
  const buttons = await sidebar.$$(".turn button.citation, .turn button.cite-marker");
  const texts = await Promise.all(buttons.map(citationText));
  const onPage3 = texts.findIndex((t) => /p\. 3/.test(t));
  assert(onPage3 >= 0, `a citation names p. 3 (${texts.join(" | ")})`);
  await buttons[onPage3].scrollIntoViewIfNeeded();
  await shot(sidebar, "pdf-cited");
  await buttons[onPage3].click();
  await page.waitForURL(`${pdfUrl}#page=3`, { timeout: 10_000 });
  assert(page.url() === `${pdfUrl}#page=3`, `the viewer opened p. 3 (${page.url()})`);
  assert(site.requests.filter((r) => r === "/founding.pdf").length >= 2, `the background fetched the PDF itself (${site.requests})`);
  console.log("e2e pdf: ok");
} finally {
  await browser.close();
  await site.close();
}
