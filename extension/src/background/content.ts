/**
 * Talking to a tab's content script: requests with a bounded wait, the
 * script injected once if the page predates the extension, and the page's
 * observation.
 */
import { ext } from "../shared/api.js";
import type { ContentRequest, ContentResponse } from "../shared/messages.js";
import type { Observation } from "../generated/wire.js";

/** Longest the background waits for a content script's answer. */
export const CONTENT_TIMEOUT_MS = 15_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${Math.round(ms / 1000)} s`)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

export async function toContent(tabId: number, req: ContentRequest): Promise<ContentResponse> {
  const send = () =>
    withTimeout(ext.tabs.sendMessage(tabId, req) as Promise<ContentResponse | undefined>, CONTENT_TIMEOUT_MS, "the page");
  let res: ContentResponse | undefined;
  try {
    res = await send();
  } catch (e) {
    if (e instanceof Error && /did not answer/.test(e.message)) throw e;
    // The page was open before Laika was installed (or is new): inject the content script once.
    await ext.scripting.executeScript({ target: { tabId }, files: ["content.js"] });
    res = await send();
  }
  if (!res || typeof res !== "object") return { ok: false, error: "the page did not answer" };
  return res;
}

export async function observe(tabId: number): Promise<Observation> {
  const res = await toContent(tabId, { kind: "observe" });
  if (!res.ok) throw new Error(res.error);
  if (!res.observation) throw new Error("the page did not return an observation");
  return res.observation;
}
