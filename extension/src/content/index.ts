/**
 * Content script entry: answers the background's requests (observe, page
 * tools, highlight) for this document. Only messages from this extension's
 * own background (no `sender.tab`) are accepted.
 */
import type { ContentRequest, ContentResponse } from "../shared/messages.js";
import { isObject } from "../shared/json.js";
import { ext } from "../shared/api.js";
import type { ToolTarget } from "../generated/wire.js";
import { HandleRegistry } from "./handles.js";
import { buildObservation } from "./observe.js";
import { withTranscript } from "./transcript.js";
import { highlight, runPageTool, selectedText } from "./tools.js";

// Injected again (the page predates the extension, or a retry): keep the
// first instance, so one request is never answered, or acted on, twice.
const marker = Symbol.for("laika.content");
const scope = globalThis as unknown as Record<symbol, boolean>;
const already = scope[marker] === true;
scope[marker] = true;

const registry = new HandleRegistry();
let observedUrl = location.href;

/** Handles belong to one document state: forget them when the page navigates. */
function checkNavigation(): void {
  if (location.href !== observedUrl) {
    registry.clear();
    observedUrl = location.href;
  }
}
if (!already) addEventListener("pagehide", () => registry.clear());
const nav = (globalThis as { navigation?: EventTarget }).navigation;
if (!already) nav?.addEventListener("navigate", () => queueMicrotask(checkNavigation));

function handle(req: ContentRequest): ContentResponse | Promise<ContentResponse> {
  checkNavigation();
  switch (req.kind) {
    case "observe":
      // A video's captions are fetched: the only answer that waits.
      return withTranscript(buildObservation(document, registry, req.options), document).then((observation) => ({ ok: true, observation }));
    case "tool": {
      const target = isObject(req.target) ? (req.target as unknown as ToolTarget) : null;
      const r = runPageTool(document, registry, req.name, isObject(req.args) ? req.args : {}, target);
      return r.ok
        ? { ok: true, message: r.message, data: r.data, observation: r.observation }
        : { ok: false, error: r.error, code: r.code };
    }
    case "highlight": {
      const r = highlight(document, registry, req.handle_id, req.quote);
      return r.ok ? { ok: true, message: r.message } : { ok: false, error: r.error, code: r.code };
    }
    case "selection":
      return { ok: true, data: { text: selectedText(document) } };
    default:
      return { ok: false, error: "unknown request" };
  }
}

if (!already) ext.runtime.onMessage.addListener((msg: unknown, sender: chrome.runtime.MessageSender, reply: (r: ContentResponse) => void) => {
  // Only this extension's background may drive the page (never another tab's script).
  if (sender.id !== ext.runtime.id || sender.tab !== undefined) return false;
  if (!isObject(msg) || typeof msg["kind"] !== "string") return false;
  const failed = (e: unknown): ContentResponse => ({ ok: false, error: `the page could not be read: ${String(e)}` });
  try {
    const res = handle(msg as ContentRequest);
    if (!(res instanceof Promise)) {
      reply(res);
      return false;
    }
    res.then(reply, (e: unknown) => reply(failed(e)));
    // The answer comes later: keep the channel open.
    return true;
  } catch (e) {
    reply(failed(e));
    return false;
  }
});
