import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { HandleRegistry } from "../src/content/handles";
import { buildObservation } from "../src/content/observe";
import { captionSource, parseTimedText, parseVtt, withTranscript } from "../src/content/transcript";
import { chunkPlaces } from "../src/shared/places";
import { checkExtensionMessage } from "../src/shared/validate";
import type { Observation } from "../src/generated/wire";
import { fixture, htmlDoc } from "./helpers";

const text = (name: string) => fs.readFileSync(path.join(__dirname, "fixtures", name), "utf8");

/** A `fetch` that serves `files` by address and counts what it was asked. */
function server(files: Record<string, string>): { fetch: typeof fetch; asked: string[] } {
  const asked: string[] = [];
  const fake = async (input: RequestInfo | URL) => {
    const url = String(input);
    asked.push(url);
    const body = files[url];
    return { ok: body !== undefined, status: body === undefined ? 404 : 200, text: async () => body ?? "" } as Response;
  };
  return { fetch: fake as typeof fetch, asked };
}

function expectWireValid(obs: Observation): void {
  const r = checkExtensionMessage({ type: "turn", id: "t-1", message: { text: "x" }, task: { name: "web.answer" }, observation: obs });
  expect(r.ok ? "" : r.error).toBe("");
}

describe("video transcripts", () => {
  it("read WebVTT cues: times, speakers and markup out, rolling repeats once", () => {
    const cues = parseVtt(text("keepers.en.vtt"));
    expect(cues).toEqual([
      { start: 1, text: "The lamp was lit every evening at dusk." },
      { start: 65.25, text: "Keepers burned whale oil until 1880 & then kerosene." },
      { start: 3723, text: "The last keeper left in 1998." },
    ]);
  });

  it("read YouTube timed text, as XML and as json3", () => {
    const xml = parseTimedText(text("youtube-timedtext.xml"));
    expect(xml.map((c) => c.start)).toEqual([0.5, 3.7, 95.2]);
    expect(xml[1]?.text).toBe("The Fresnel lens bends light into a beam 'visible for miles'.");
    const json3 = parseTimedText(JSON.stringify({ events: [{ tStartMs: 1200, segs: [{ utf8: "Hello " }, { utf8: "there" }] }, { tStartMs: 2000 }] }));
    expect(json3).toEqual([{ start: 1.2, text: "Hello there" }]);
    expect(parseTimedText("{not json")).toEqual([]);
  });

  it("find a page's <track> captions (not its chapters) and open its media at a time", () => {
    const doc = fixture("video-track.html", "https://films.example/keepers");
    const source = captionSource(doc, "https://films.example/keepers");
    expect(source).not.toBeNull();
    if (!source || source === "none") return;
    expect(source.url).toBe("https://films.example/media/keepers.en.vtt");
    expect(source.at(65.25)).toBe("https://films.example/media/keepers.mp4#t=65");
  });

  it("find a YouTube-like page's written captions before generated ones", () => {
    const url = "https://www.youtube.com/watch?v=lh0001";
    const source = captionSource(fixture("video-youtube.html", url), url);
    if (!source || source === "none") throw new Error("no captions found");
    expect(source.url).toBe("https://www.youtube.com/api/timedtext?v=lh0001&lang=en");
    expect(source.at(95.2)).toBe("https://www.youtube.com/watch?v=lh0001&t=95s");
  });

  it("add the transcript as timed chunks after the page's, which citations open at their time", async () => {
    const url = "https://www.youtube.com/watch?v=lh0001";
    const doc = fixture("video-youtube.html", url);
    const page = buildObservation(doc, new HandleRegistry());
    const { fetch, asked } = server({ "https://www.youtube.com/api/timedtext?v=lh0001&lang=en": text("youtube-timedtext.xml") });
    const obs = await withTranscript(page, doc, fetch);
    expect(asked).toEqual(["https://www.youtube.com/api/timedtext?v=lh0001&lang=en"]);
    const chunks = obs.chunks ?? [];
    // Chunks span at most 30 s: the 1:35 cue is a chunk of its own.
    expect(chunks).toHaveLength((page.chunks?.length ?? 0) + 2);
    const [opening, later] = chunks.slice(-2);
    expect(opening?.text).toBe("[0:00] A lighthouse is a tower with a lamp.\n[0:03] The Fresnel lens bends light into a beam 'visible for miles'.");
    expect(opening?.url).toBe("https://www.youtube.com/watch?v=lh0001&t=0s");
    expect(later?.text).toBe("[1:35] Clockwork turned the lens before electric motors.");
    expect(later?.url).toBe("https://www.youtube.com/watch?v=lh0001&t=95s");
    expect(chunks.every((c, i) => c.chunk_index === i + 1 && c.chunk_count === chunks.length)).toBe(true);
    expect(obs.summary.text).toContain("Video transcript (3 captions, 0:00–1:35)");
    expect(obs.summary.signals).toContain("video_transcript");
    expect(chunkPlaces(obs).slice(-2).map((p) => p?.label)).toEqual(["0:00", "1:35"]);
    expectWireValid(obs);
  });

  it("split a long transcript into chunks that each start at their own time", async () => {
    const cues = Array.from({ length: 400 }, (_, i) => `${i + 1}\n00:${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.000 --> 00:59:59.000\nSentence number ${i + 1} of the long talk about the lamp and its keepers.`);
    const doc = fixture("video-track.html", "https://films.example/keepers");
    const { fetch } = server({ "https://films.example/media/keepers.en.vtt": `WEBVTT\n\n${cues.join("\n\n")}` });
    const obs = await withTranscript(buildObservation(doc, new HandleRegistry()), doc, fetch);
    const chunks = obs.chunks ?? [];
    // 400 cues a second apart, about 80 characters each: chunks of at most 1000 characters and 30 s.
    expect(chunks.length).toBeGreaterThan(400 / 13);
    const labels = chunkPlaces(obs).map((p) => p?.label);
    expect(labels[0]).toBe("0:00");
    for (const c of chunks) {
      expect(c.text?.length ?? 0).toBeLessThanOrEqual(1000);
      const stamps = [...(c.text ?? "").matchAll(/^\[(\d+):(\d+)\]/gm)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      expect((stamps[stamps.length - 1] ?? 0) - (stamps[0] ?? 0)).toBeLessThan(30);
    }
    expect(new Set(labels).size).toBe(labels.length);
    expect(chunks[1]?.text?.startsWith(`[${labels[1] ?? ""}]`)).toBe(true);
    expectWireValid(obs);
  });

  it("say so when a video has no captions, or they cannot be fetched", async () => {
    const bare = htmlDoc("<html><head><title>Clip</title></head><body><p>A clip.</p><video src='/v.mp4'></video></body></html>", "https://clips.example/1");
    const obs = await withTranscript(buildObservation(bare, new HandleRegistry()), bare, server({}).fetch);
    expect(obs.summary.text).toContain("has no captions");
    expect(obs.summary.signals).toContain("video_without_captions");
    expect(obs.chunks ?? []).toHaveLength(0);

    const doc = fixture("video-track.html", "https://films.example/keepers");
    const failed = await withTranscript(buildObservation(doc, new HandleRegistry()), doc, server({}).fetch);
    expect(failed.summary.text).toContain("captions could not be read (HTTP 404)");

    const article = fixture("article.html");
    const plain = buildObservation(article, new HandleRegistry());
    await expect(withTranscript(plain, article, server({}).fetch)).resolves.toBe(plain);
  });
});
