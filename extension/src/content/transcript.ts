/**
 * Video transcripts: the captions of the page's video as timed text, from a
 * `<track>` (WebVTT) or a YouTube-style player response
 * (`"captionTracks": [{ "baseUrl": … }]` in an inline script: timed-text
 * XML or json3). They are added to the observation as chunks of
 * "[m:ss] text" lines whose `url` opens the video at the chunk's first
 * cue (`t=` on a watch page, `#t=` on a media file), so a citation carries
 * its time. A video without captions is said so in the summary.
 *
 * Caption text is page content: untrusted, bounded like the page's text.
 */
import type { Observation, ObservationChunk } from "../generated/wire.js";
import { clock } from "../shared/places.js";
import { clip, normalize } from "./observe.js";

export interface Cue {
  /** Seconds from the start. */
  start: number;
  text: string;
}

/** A caption file to fetch, and how a time in it is opened. */
export interface CaptionSource {
  url: string;
  /** The address that opens the video at `seconds`. */
  at(seconds: number): string;
}

/** At most this much caption text is read (about 10 hours of speech). */
export const MAX_TRANSCRIPT_CHARS = 400_000;
/** At most this many transcript chunks (with the page's 128, under the host's 1000). */
export const MAX_TRANSCRIPT_CHUNKS = 600;
/** A transcript chunk spans at most this long, so the time its citation opens is near the quote. */
const CHUNK_SECONDS = 30;
/** …and at most this much text. */
const TRANSCRIPT_CHUNK_CHARS = 1000;
const MAX_CAPTION_BYTES = 4 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 8000;

/** `hh:mm:ss.mmm` or `mm:ss.mmm` (WebVTT) as seconds. */
function vttTime(t: string): number | null {
  const m = /^(?:(\d+):)?(\d{1,2}):(\d{2})(?:[.,](\d{1,3}))?$/.exec(t.trim());
  if (!m) return null;
  return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number((m[4] ?? "0").padEnd(3, "0")) / 1000;
}

/** Character references (`&amp;`, `&#39;`, `&#x2019;`) as the characters they name. */
function decodeEntities(text: string): string {
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
  return text.replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (all, name: string) => {
    const lower = name.toLowerCase();
    if (lower in named) return named[lower] ?? all;
    const code = lower.startsWith("#x") ? parseInt(lower.slice(2), 16) : lower.startsWith("#") ? Number(lower.slice(1)) : NaN;
    return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : all;
  });
}

/** Caption markup (`<v Speaker>`, `<c>`, `<00:01.000>`, `<b>`) and references out: the words only. */
function plain(text: string): string {
  return normalize(decodeEntities(text.replace(/<[^>]*>/g, "")));
}

/** The cues of a WebVTT file, in file order; repeated lines (rolling captions) kept once. */
export function parseVtt(text: string): Cue[] {
  const cues: Cue[] = [];
  for (const block of text.replace(/\r\n?/g, "\n").split(/\n{2,}/)) {
    const lines = block.split("\n");
    const timing = lines.findIndex((l) => l.includes("-->"));
    if (timing < 0) continue;
    const start = vttTime((lines[timing] ?? "").split("-->")[0] ?? "");
    if (start === null) continue;
    const words = plain(lines.slice(timing + 1).join(" "));
    if (words) pushCue(cues, { start, text: words });
  }
  return cues;
}

/** Timed text as YouTube serves it: `<text start="s">`, `<p t="ms">` (XML), or json3 `events`. */
export function parseTimedText(text: string): Cue[] {
  const cues: Cue[] = [];
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      const doc = JSON.parse(trimmed) as { events?: { tStartMs?: number; segs?: { utf8?: string }[] }[] };
      for (const e of doc.events ?? []) {
        const words = plain((e.segs ?? []).map((s) => s.utf8 ?? "").join(""));
        if (words && typeof e.tStartMs === "number") pushCue(cues, { start: e.tStartMs / 1000, text: words });
      }
    } catch {
      return [];
    }
    return cues;
  }
  for (const m of trimmed.matchAll(/<(text|p)\b([^>]*)>([\s\S]*?)<\/\1>/g)) {
    const attrs = m[2] ?? "";
    const secs = /\bstart="([\d.]+)"/.exec(attrs)?.[1];
    const ms = /\bt="(\d+)"/.exec(attrs)?.[1];
    const start = secs !== undefined ? Number(secs) : ms !== undefined ? Number(ms) / 1000 : NaN;
    // The XML escapes caption text that is itself HTML (`&amp;#39;`): two layers.
    const words = plain(decodeEntities(m[3] ?? ""));
    if (words && Number.isFinite(start)) pushCue(cues, { start, text: words });
  }
  return cues;
}

function pushCue(cues: Cue[], cue: Cue): void {
  if (cues[cues.length - 1]?.text === cue.text) return;
  cues.push(cue);
}

/** The JSON array or object that starts at `text[start]`, read with strings and escapes respected. */
function balanced(text: string, start: number): string | null {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "[" || ch === "{") depth++;
    else if (ch === "]" || ch === "}") {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return null;
}

interface CaptionTrack {
  baseUrl?: unknown;
  languageCode?: unknown;
  kind?: unknown;
}

/** The caption tracks a YouTube-style player response lists, from the page's inline scripts. */
function playerCaptionTracks(doc: Document): CaptionTrack[] {
  for (const script of Array.from(doc.querySelectorAll("script:not([src])"))) {
    const text = script.textContent ?? "";
    const at = text.indexOf('"captionTracks"');
    if (at < 0) continue;
    const open = text.indexOf("[", at);
    const json = open < 0 ? null : balanced(text, open);
    if (!json) continue;
    try {
      const tracks = JSON.parse(json) as unknown;
      if (Array.isArray(tracks)) return tracks.filter((t): t is CaptionTrack => typeof t === "object" && t !== null);
    } catch {
      // Not JSON after all: look on.
    }
  }
  return [];
}

/** Whether the page has a player response that says it has no captions, or a `<video>`. */
function hasVideo(doc: Document): boolean {
  return doc.querySelector("video") !== null || Array.from(doc.querySelectorAll("script:not([src])")).some((s) => (s.textContent ?? "").includes("ytInitialPlayerResponse"));
}

/**
 * Where the page's captions are: a YouTube-style caption track (written
 * captions before generated ones, the page's language first), else a
 * `<track>` of a `<video>`. `null`: no video; `"none"`: a video without
 * captions.
 */
export function captionSource(doc: Document, pageUrl: string): CaptionSource | "none" | null {
  const tracks = playerCaptionTracks(doc).filter((t) => typeof t.baseUrl === "string");
  if (tracks.length) {
    const lang = (doc.documentElement.getAttribute("lang") ?? "en").slice(0, 2).toLowerCase();
    const rank = (t: CaptionTrack) => (t.kind === "asr" ? 2 : 0) + (String(t.languageCode ?? "").toLowerCase().startsWith(lang) ? 0 : 1);
    const best = [...tracks].sort((a, b) => rank(a) - rank(b))[0];
    const url = safeHttp(String(best?.baseUrl ?? ""), pageUrl);
    if (url)
      return {
        url,
        at: (s) => {
          const u = new URL(pageUrl);
          u.searchParams.set("t", `${Math.floor(s)}s`);
          u.hash = "";
          return u.href;
        },
      };
  }
  for (const video of Array.from(doc.querySelectorAll("video"))) {
    const track = Array.from(video.querySelectorAll("track[src]")).find((t) => /^(subtitles|captions|)$/i.test(t.getAttribute("kind") ?? ""));
    const url = track ? safeHttp(track.getAttribute("src") ?? "", doc.baseURI || pageUrl) : undefined;
    if (!url) continue;
    const media = safeHttp(video.currentSrc || video.getAttribute("src") || video.querySelector("source[src]")?.getAttribute("src") || "", doc.baseURI || pageUrl);
    return {
      url,
      at: (s) => (media ? `${media.split("#")[0]}#t=${Math.floor(s)}` : pageUrl),
    };
  }
  return hasVideo(doc) ? "none" : null;
}

function safeHttp(raw: string, base: string): string | undefined {
  try {
    const u = new URL(raw, base);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** Cues as chunks of "[m:ss] text" lines (at most 30 s each), each opening the video at its first cue. */
export function transcriptChunks(cues: Cue[], source: CaptionSource, title: string): Omit<ObservationChunk, "chunk_index" | "chunk_count">[] {
  const chunks: Omit<ObservationChunk, "chunk_index" | "chunk_count">[] = [];
  let lines: string[] = [];
  let size = 0;
  let first = 0;
  let total = 0;
  const flush = () => {
    if (lines.length && chunks.length < MAX_TRANSCRIPT_CHUNKS)
      chunks.push({ doc_type: "web.observation.chunk.v1", url: source.at(first), title, text: lines.join("\n") });
    lines = [];
    size = 0;
  };
  for (const cue of cues) {
    const line = `[${clock(cue.start)}] ${clip(cue.text, 1000)}`;
    if (total + line.length > MAX_TRANSCRIPT_CHARS) break;
    if (size + line.length + 1 > TRANSCRIPT_CHUNK_CHARS || (lines.length && cue.start - first >= CHUNK_SECONDS)) flush();
    if (!lines.length) first = cue.start;
    lines.push(line);
    size += line.length + 1;
    total += line.length + 1;
  }
  flush();
  return chunks;
}

async function fetchCaptions(url: string, fetcher: typeof fetch): Promise<string> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), FETCH_TIMEOUT_MS);
  try {
    const res = await fetcher(url, { credentials: "same-origin", signal: abort.signal });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const text = await res.text();
    return text.slice(0, MAX_CAPTION_BYTES);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The observation with the page's video transcript added: its chunks after
 * the page's, and a line in the summary saying what was read (or that the
 * video has no captions, or that they could not be fetched).
 */
export async function withTranscript(obs: Observation, doc: Document, fetcher: typeof fetch = fetch): Promise<Observation> {
  const source = captionSource(doc, obs.summary.url);
  if (source === null) return obs;
  const note = (line: string, signal: string): Observation => ({
    ...obs,
    summary: {
      ...obs.summary,
      text: obs.summary.text ? `${obs.summary.text}\n${line}` : line,
      signals: [...(obs.summary.signals ?? []).filter((s) => s !== signal), signal],
    },
  });
  if (source === "none") return note("The video on this page has no captions, so Laika cannot read what is said in it.", "video_without_captions");
  let cues: Cue[];
  try {
    const text = await fetchCaptions(source.url, fetcher);
    cues = /^\s*WEBVTT/.test(text) ? parseVtt(text) : parseTimedText(text);
  } catch (e) {
    return note(`The video's captions could not be read (${e instanceof Error ? e.message : String(e)}).`, "video_without_captions");
  }
  if (!cues.length) return note("The video on this page has no captions, so Laika cannot read what is said in it.", "video_without_captions");
  const added = transcriptChunks(cues, source, obs.summary.title ?? "");
  const chunks = [...(obs.chunks ?? []).map((c) => ({ ...c })), ...added];
  const numbered = chunks.map((c, i): ObservationChunk => ({ ...c, chunk_index: i + 1, chunk_count: chunks.length }));
  const last = cues[cues.length - 1]?.start ?? 0;
  const withNote = note(`Video transcript (${cues.length} captions, 0:00–${clock(last)}): in the chunks marked [m:ss].`, "video_transcript");
  return { ...withNote, chunks: numbered };
}
