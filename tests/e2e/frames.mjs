// E2E: embedded frames. A same-origin iframe's text is read with the page
// (an answer found only there is cited), and an iframe of another origin (a
// second loopback port) is named in the observation as not read, which the
// answer says when the page itself does not answer.
import { assert, citationText, launch, norm, observeTab, openSidebar, serveRoutes, shot } from "./lib.mjs";

// The fact lives only in the same-origin frame; the top page never says it.
const FACT = "Night tours of the observatory start at 21:30 every Friday.";
let otherBase = "";
const site = await serveRoutes((url) => {
  if (url.pathname === "/visit.html")
    return {
      body: `<!doctype html><html lang="en"><head><title>Hill observatory: visiting</title></head><body><main>
        <h1>Visiting the hill observatory</h1>
        <p>The observatory sits on the ridge above the old town and is open to visitors all year round.</p>
        <p>Groups of up to twenty people can book a guided visit with one of the volunteer astronomers.</p>
        <iframe src="/schedule.html" title="Tour schedule" width="600" height="200"></iframe>
        <iframe src="${otherBase}/map.html" title="Visitor map" width="600" height="200"></iframe>
        <p>Warm clothes are recommended, because the dome is not heated in winter.</p>
      </main></body></html>`,
    };
  if (url.pathname === "/schedule.html")
    return { body: `<!doctype html><html lang="en"><head><title>Schedule</title></head><body><h2>Tours</h2><p>${FACT}</p></body></html>` };
  return null;
});
const other = await serveRoutes((url) =>
  url.pathname === "/map.html"
    ? { body: `<!doctype html><html><head><title>Map</title></head><body><p>Parking is behind the east gate (OTHER-ORIGIN-TEXT).</p></body></html>` }
    : null,
);
otherBase = other.base;
assert(new URL(site.base).origin !== new URL(other.base).origin, "the two servers are two origins");

const browser = await launch();
try {
  const { context, worker } = browser;
  const page = await context.newPage();
  const url = `${site.base}/visit.html`;
  await page.goto(url, { waitUntil: "load" });
  assert(page.frames().length === 3, `both frames loaded (${page.frames().map((f) => f.url())})`);

  const obs = await observeTab(worker, url);
  const text = [obs.summary.text, ...(obs.chunks ?? []).map((c) => c.text)].join("\n");
  assert(text.includes(FACT), `the same-origin frame's text is in the observation (${text})`);
  assert(!JSON.stringify(obs).includes("OTHER-ORIGIN-TEXT"), "nothing of the other origin's frame is read");
  const frames = obs.summary.frames ?? [];
  assert(
    JSON.stringify(frames) ===
      JSON.stringify([
        { origin: new URL(site.base).origin, title: "Tour schedule", read: true },
        { origin: new URL(other.base).origin, title: "Visitor map", read: false },
      ]),
    `frames are named, the cross-origin one as not read (${JSON.stringify(frames)})`,
  );

  const sidebar = await openSidebar(context);
  await sidebar.setViewportSize({ width: 420, height: 900 });
  await page.bringToFront();
  await sidebar.fill("#question", "When do the night tours start?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 30_000 });
  const answer = norm(await sidebar.textContent(".turn .answer"));
  assert(answer.includes("21:30"), `the answer comes from the same-origin frame (${answer})`);
  await sidebar.waitForSelector(".turn .citation:not(.unverified)", { timeout: 5000 });
  const cites = await Promise.all((await sidebar.$$(".turn .citation:not(.unverified)")).map(citationText));
  assert(cites.some((c) => c.includes("21:30 every Friday")), `and cites it, verified (${cites.join(" | ")})`);

  await sidebar.click("#new-chat");
  await sidebar.fill("#question", "Where can visitors park?");
  await sidebar.press("#question", "Enter");
  await sidebar.waitForSelector(".turn .answer-actions", { timeout: 30_000 });
  const abstain = norm(await sidebar.textContent(".turn .answer"));
  assert(/could not find this on the page/.test(abstain), `the page itself has no answer (${abstain})`);
  assert(
    abstain.includes(`not read: “Visitor map” (${new URL(other.base).origin})`),
    `the answer names the frame it could not read (${abstain})`,
  );
  await shot(sidebar, "frames-not-read");
  console.log("ok frames: same-origin frame read and cited, cross-origin frame named as not read");
} finally {
  await browser.close();
  await site.close();
  await other.close();
}
