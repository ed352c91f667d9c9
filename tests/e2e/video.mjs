// E2E: a page with a video and a WebVTT <track> is read with its
// transcript. The content script fetches the captions; the question is
// answered from what is said in the video, its citation names the time
// ("1:05"), and a click opens the video there (#t=65).
import { assert, citationText, launch, norm, openSidebar, serveRoutes, shot } from "./lib.mjs";

const vtt = [
  "WEBVTT",
  "",
  "00:00:01.000 --> 00:00:04.000",
  "<v Narrator>The lamp was lit every evening at dusk.",
  "",
  "00:01:05.000 --> 00:01:09.000",
  "Keepers burned whale oil until 1880, and then kerosene.",
  "",
].join("\n");
const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lighthouse keepers</title></head>
<body><main><h1>Lighthouse keepers</h1><p>A short film about the last keepers of the northern light.</p>
<video controls src="/keepers.mp4"><track kind="subtitles" src="/keepers.en.vtt" srclang="en" label="English"></video></main></body></html>`;
const site = await serveRoutes((url) =>
  url.pathname === "/film.html"
    ? { body: html }
    : url.pathname === "/keepers.en.vtt"
      ? { body: vtt, type: "text/vtt" }
      : null,
);
const browser = await launch();
try {
  const { context } = browser;
  const page = await context.newPage();
  await page.goto(`${site.base}/film.html`);
  const sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 900 });
  await page.bringToFront();
  if (await sidebar.$("#welcome")) await sidebar.click("#welcome button:text('Got it')");

  await sidebar.fill("#question", "What did the keepers burn until 1880?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForSelector(".turn .answer-actions, .turn p.error", { timeout: 60_000 });
  const failure = await sidebar.$(".turn p.error");
  assert(!failure, `the page was read (${failure ? await failure.textContent() : ""})`);
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(/whale oil/i.test(answer), `the answer comes from the transcript (${answer.slice(0, 200)})`);
  assert(site.requests.includes("/keepers.en.vtt"), `the captions were fetched (${site.requests})`);
  const buttons = await sidebar.$$(".turn button.citation, .turn button.cite-marker");
  const texts = await Promise.all(buttons.map(citationText));
  const at = texts.findIndex((t) => /1:05/.test(t));
  assert(at >= 0, `a citation names 1:05 (${texts.join(" | ")})`);
  await buttons[at].scrollIntoViewIfNeeded();
  await shot(sidebar, "video-cited");
  await buttons[at].click();
  await page.waitForURL(`${site.base}/keepers.mp4#t=65`, { timeout: 10_000 }).catch(() => undefined);
  assert(page.url() === `${site.base}/keepers.mp4#t=65`, `the video opened at 1:05 (${page.url()})`);
  console.log("e2e video: ok");
} finally {
  await browser.close();
  await site.close();
}
