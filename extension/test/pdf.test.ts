import { describe, expect, it } from "vitest";
import { fetchPdf, isPdfBytes, looksLikePdf, observeTab, PdfError, PdfReader, toBase64 } from "../src/background/pdf";
import { chunkPlaces, clock, placeOf } from "../src/shared/places";
import { renderCitations } from "../src/sidebar/citations";
import type { ExtensionMessage, Observation, VerifiedCitation } from "../src/generated/wire";
import type { RoutedHostMessage } from "../src/shared/protocol";

const PDF = new TextEncoder().encode("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n");

const pdfObservation = (url: string): Observation => ({
  summary: { doc_type: "web.observation.summary.v1", url, title: "Paper", text: "PDF document, 3 pages." },
  chunks: [
    { doc_type: "web.observation.chunk.v1", url: `${url}#page=1`, title: "Paper", chunk_index: 1, chunk_count: 3, text: "one" },
    { doc_type: "web.observation.chunk.v1", url: `${url}#page=3`, title: "Paper", chunk_index: 2, chunk_count: 3, text: "three a" },
    { doc_type: "web.observation.chunk.v1", url: `${url}#page=3`, title: "Paper", chunk_index: 3, chunk_count: 3, text: "three b" },
  ],
});

/** What `fetch` answers, as far as `fetchPdf` reads it. */
function response(body: Uint8Array, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  const status = init.status ?? 200;
  return {
    ok: status >= 200 && status < 300,
    status,
    headers: new Headers(init.headers ?? {}),
    arrayBuffer: async () => body.slice().buffer,
  } as Response;
}

describe("PDF tabs", () => {
  it("are known by their path or their bytes", () => {
    expect(looksLikePdf("https://example.com/papers/a.PDF?dl=1")).toBe(true);
    expect(looksLikePdf("file:///home/me/b.pdf")).toBe(true);
    expect(looksLikePdf("https://example.com/pdf-guide")).toBe(false);
    expect(looksLikePdf("chrome://newtab")).toBe(false);
    expect(isPdfBytes(PDF)).toBe(true);
    expect(isPdfBytes(new TextEncoder().encode("<html>%PD</html>"))).toBe(false);
  });

  it("give each chunk its page, which opens the viewer there", () => {
    const places = chunkPlaces(pdfObservation("https://e.com/a.pdf"));
    expect(places.map((p) => p?.label)).toEqual(["p. 1", "p. 3", "p. 3"]);
    expect(places[1]?.url).toBe("https://e.com/a.pdf#page=3");
    expect(placeOf("https://www.youtube.com/watch?v=abc&t=3723s")).toEqual({ label: "1:02:03", url: "https://www.youtube.com/watch?v=abc&t=3723s" });
    expect(placeOf("https://cdn.example/talk.mp4#t=65")?.label).toBe("1:05");
    expect(placeOf("javascript:alert(1)#page=2")).toBeNull();
    expect(placeOf("https://e.com/article")).toBeNull();
    expect(clock(0)).toBe("0:00");
  });

  it("encode large files to base64 without overflowing the stack", () => {
    const big = new Uint8Array(200_000).fill(65);
    const b64 = toBase64(big);
    expect(b64.length).toBe(Math.ceil(200_000 / 3) * 4);
    expect(atob(b64).slice(0, 4)).toBe("AAAA");
  });

  it("fetch only PDFs, and refuse one over the cap before reading it", async () => {
    const got = await fetchPdf("https://e.com/a.pdf", async () => response(PDF));
    expect(Array.from(got ?? [])).toEqual(Array.from(PDF));
    await expect(fetchPdf("https://e.com/page", async () => response(new TextEncoder().encode("<html></html>")))).resolves.toBeNull();
    const big = fetchPdf("https://e.com/a.pdf", async () => response(PDF, { headers: { "content-length": String(40 * 1024 * 1024) } }));
    await expect(big).rejects.toMatchObject({ code: "PDF_TOO_LARGE" });
    await expect(fetchPdf("https://e.com/a.pdf", async () => response(PDF, { status: 404 }))).rejects.toMatchObject({ code: "PDF_UNREADABLE" });
  });

  it("are read by the host once, and its coded errors reach the caller", async () => {
    const sent: ExtensionMessage[] = [];
    const reader = new PdfReader((m) => {
      sent.push(m);
      return null;
    });
    const url = "https://e.com/a.pdf";
    const first = reader.read(url, "Paper", PDF);
    const req = sent[0] as Extract<ExtensionMessage, { type: "pdf.read" }>;
    expect(req).toMatchObject({ type: "pdf.read", url, title: "Paper", data: toBase64(PDF) });
    const result = { type: "pdf.read.result", id: "h1", reply_to: req.id, observation: pdfObservation(url), pages: 3, pages_without_text: [2] } as RoutedHostMessage;
    expect(reader.take({ ...result, reply_to: "someone-else" } as RoutedHostMessage)).toBe(false);
    expect(reader.take(result)).toBe(true);
    await expect(first).resolves.toMatchObject({ observation: pdfObservation(url) });
    // Asked again: remembered, not sent again.
    await expect(reader.read(url, "Paper", PDF)).resolves.toMatchObject({ observation: pdfObservation(url) });
    expect(sent).toHaveLength(1);

    const scan = reader.read("https://e.com/scan.pdf", "", PDF);
    const id = sent[1]?.id ?? "";
    expect(sent[1]).not.toHaveProperty("title");
    reader.take({ type: "error", id: "h2", reply_to: id, code: "PDF_NO_TEXT", message: "this PDF has no text to read", retryable: false } as RoutedHostMessage);
    const e = await scan.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PdfError);
    expect(e).toMatchObject({ code: "PDF_NO_TEXT" });
  });

  it("stand in for the page when the content script cannot read it", async () => {
    const reader = new PdfReader((m) => {
      queueMicrotask(() =>
        reader.take({ type: "pdf.read.result", id: "h", reply_to: m.id, observation: pdfObservation("https://e.com/doc"), pages: 3, pages_without_text: [] } as RoutedHostMessage),
      );
      return null;
    });
    const failing = async (): Promise<Observation> => {
      throw new Error("Cannot access contents of the page");
    };
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async () => response(PDF)) as typeof fetch;
    try {
      const page = await observeTab({ id: 1, url: "https://e.com/doc", title: "doc" }, failing, reader);
      expect(page.observation.chunks?.[1]?.url).toBe("https://e.com/doc#page=3");
      globalThis.fetch = (async () => response(new TextEncoder().encode("<html></html>"))) as typeof fetch;
      await expect(observeTab({ id: 1, url: "https://e.com/other", title: "" }, failing, reader)).rejects.toThrow("Cannot access");
    } finally {
      globalThis.fetch = realFetch;
    }
  });

  it("cite their page: “p. N” in the list, and a click opens it", () => {
    const cite = (over: Partial<VerifiedCitation>): VerifiedCitation => ({ doc_id: "doc:web:chunk:2", quote: "three a", verified: true, ...over });
    const opened: string[] = [];
    const list = renderCitations([cite({}), cite({ doc_id: "doc:web:summary", quote: "PDF document" })], { others: [], places: ["p. 1", "p. 3", "p. 3"] }, (c) =>
      opened.push(c.doc_id),
    );
    const buttons = Array.from(list?.querySelectorAll("button") ?? []);
    expect(buttons.map((b) => b.textContent)).toEqual(["[1] p. 3: “three a”", "[2] “PDF document”"]);
    expect(buttons[0]?.title).toBe("Show “three a” on p. 3");
    buttons[0]?.click();
    expect(opened).toEqual(["doc:web:chunk:2"]);
  });
});
