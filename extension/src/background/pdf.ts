/**
 * PDFs: the browser's PDF viewer gives a content script nothing to read, so
 * the background fetches the bytes the tab shows (with the tab's URL and
 * the user's cookies, as the viewer did) and has the host read them
 * (`pdf.read`). The observation it answers stands for the page in turns and
 * collections; each chunk's `url` ends in `#page=N`, which citations show as
 * "p. N" and open (`shared/places.ts`).
 */
import type { ExtensionMessage, Observation } from "../generated/wire.js";
import type { RoutedHostMessage } from "../shared/protocol.js";

/** The host's cap (`MAX_PDF_BYTES`): a larger file is refused before it is fetched whole. */
export const MAX_PDF_BYTES = 32 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 30_000;
/** The host reads a PDF within 30 s; this leaves room for the bytes to travel. */
const READ_TIMEOUT_MS = 60_000;
/** PDFs read lately, so a follow-up question does not read the file again. */
const CACHE_SIZE = 4;

/** A PDF that could not be read, with the host's code (`PDF_*`) or the extension's. */
export class PdfError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface PdfPage {
  observation: Observation;
}

/** Whether an address names a PDF by its path (`…/paper.pdf`, `…/a.PDF?dl=1`). */
export function looksLikePdf(url: string): boolean {
  try {
    const u = new URL(url);
    return /^(https?|file):$/.test(u.protocol) && /\.pdf$/i.test(u.pathname);
  } catch {
    return false;
  }
}

/** Whether bytes start like a PDF (readers accept a little junk before the header). */
export function isPdfBytes(bytes: Uint8Array): boolean {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024));
  return head.includes("%PDF-");
}

/** Base64 of bytes, in slices (a spread of 32 MiB would overflow the stack). */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The bytes at `url` if they are a PDF (null if not), refusing one over the cap. */
export async function fetchPdf(url: string, fetcher: typeof fetch = fetch): Promise<Uint8Array | null> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), FETCH_TIMEOUT_MS);
  try {
    const res = await fetcher(url, { credentials: "include", signal: abort.signal });
    if (!res.ok) throw new PdfError("PDF_UNREADABLE", `the PDF could not be fetched (HTTP ${res.status})`);
    const declared = Number(res.headers.get("content-length") ?? "0");
    if (declared > MAX_PDF_BYTES) throw tooLarge();
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.length > MAX_PDF_BYTES) throw tooLarge();
    return isPdfBytes(bytes) ? bytes : null;
  } catch (e) {
    if (e instanceof PdfError) throw e;
    throw new PdfError("PDF_UNREADABLE", `the PDF could not be fetched (${e instanceof Error ? e.message : String(e)})`);
  } finally {
    clearTimeout(timer);
  }
}

function tooLarge(): PdfError {
  return new PdfError("PDF_TOO_LARGE", `this PDF is larger than ${MAX_PDF_BYTES >> 20} MiB, the most Laika reads`);
}

interface Waiting {
  resolve: (page: PdfPage) => void;
  reject: (e: PdfError) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** Sends `pdf.read` and takes its answer; remembers the last few PDFs read. */
export class PdfReader {
  private waiting = new Map<string, Waiting>();
  private cache: { url: string; page: PdfPage }[] = [];

  constructor(private readonly send: (msg: ExtensionMessage) => string | null) {}

  /** Takes a host message that answers a `pdf.read` this reader sent (true), or leaves it (false). */
  take(msg: RoutedHostMessage): boolean {
    const w = msg.reply_to ? this.waiting.get(msg.reply_to) : undefined;
    if (!w || !msg.reply_to) return false;
    this.waiting.delete(msg.reply_to);
    clearTimeout(w.timer);
    if (msg.type === "pdf.read.result") w.resolve({ observation: msg.observation });
    else if (msg.type === "error") w.reject(new PdfError(msg.code, msg.message));
    else w.reject(new PdfError("INVALID_HOST_MESSAGE", `unexpected ${msg.type} for pdf.read`));
    return true;
  }

  /** A request the host will never answer (not sent, or not delivered). */
  fail(id: string, message: string): boolean {
    const w = this.waiting.get(id);
    if (!w) return false;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    w.reject(new PdfError("HOST_UNAVAILABLE", message));
    return true;
  }

  /** The PDF at `url`, read by the host (or remembered); `bytes` when already fetched. */
  async read(url: string, title: string, bytes?: Uint8Array): Promise<PdfPage> {
    const known = this.cache.find((c) => c.url === url);
    if (known) return known.page;
    const data = bytes ?? (await fetchPdf(url));
    if (!data) throw new PdfError("PDF_UNREADABLE", "this address does not serve a PDF");
    const id = `pdf-${crypto.randomUUID()}`;
    const page = await new Promise<PdfPage>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(id, "the Laika app did not read the PDF in time"), READ_TIMEOUT_MS);
      this.waiting.set(id, { resolve, reject, timer });
      const err = this.send({ type: "pdf.read", id, url, ...(title && title !== url ? { title } : {}), data: toBase64(data) });
      if (err) this.fail(id, err);
    });
    this.cache = [{ url, page }, ...this.cache.filter((c) => c.url !== url)].slice(0, CACHE_SIZE);
    return page;
  }
}

/**
 * What a tab shows, as an observation: a PDF (by its address, or because
 * the page could not be observed and its address serves one) read by the
 * host, else the content script's observation.
 */
export async function observeTab(
  tab: { id: number; url?: string; title?: string },
  observe: (tabId: number) => Promise<Observation>,
  reader: PdfReader,
): Promise<PdfPage> {
  const url = tab.url ?? "";
  const title = tab.title ?? "";
  if (looksLikePdf(url)) return reader.read(url, title);
  try {
    return { observation: await observe(tab.id) };
  } catch (e) {
    // The viewer of a PDF served at an address without `.pdf` runs no content script either.
    const bytes = /^(https?|file):/.test(url) ? await fetchPdf(url).catch(() => null) : null;
    if (bytes) return reader.read(url, title, bytes);
    throw e;
  }
}
