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

function handle(req: ContentRequest): ContentResponse {
  checkNavigation();
  switch (req.kind) {
    case "observe":
      return { ok: true, observation: buildObservation(document, registry, req.options) };
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
  try {
    reply(handle(msg as ContentRequest));
  } catch (e) {
    reply({ ok: false, error: `the page could not be read: ${String(e)}` });
  }
  return false;
});
