/**
 * The runtime badge: which runtime and model answered, and whether the page
 * left this computer. Built only from what the host reported for the turn
 * (`turn.started` / `done` runtime info), never from Settings, so it cannot
 * misinform after a runtime switch.
 */
import type { RuntimeInfo } from "../generated/wire.js";

/** Where the page content went, in plain words. */
export function whereItWent(runtime: RuntimeInfo, endpoint?: string): string {
  if (runtime.offline) return "the page stayed on this computer";
  const host = endpointHost(endpoint);
  return host ? `the page was sent to ${host}` : "the page was sent over the network";
}

function endpointHost(endpoint?: string): string | null {
  if (!endpoint) return null;
  try {
    return new URL(endpoint).host || null;
  } catch {
    return null;
  }
}

/** "llama3.2 via Ollama at … · the page was sent to example.com:11434" (the model named once). */
export function badgeText(runtime: RuntimeInfo, endpoint?: string): string {
  // The builtin runtime's id names no model a person could choose; its label says it all.
  const named = runtime.model && runtime.kind !== "builtin" && !runtime.label.includes(runtime.model);
  const model = named ? ` · ${runtime.model}` : "";
  return `${runtime.label}${model} · ${whereItWent(runtime, endpoint)}`;
}

/** Fills a badge element: text plus data attributes for styling and tests. */
export function setBadge(el: HTMLElement, runtime: RuntimeInfo, endpoint?: string): void {
  el.textContent = badgeText(runtime, endpoint);
  el.dataset["offline"] = String(runtime.offline);
  el.dataset["kind"] = runtime.kind;
  el.title = runtime.offline
    ? "No network was involved: the page content stayed on this computer."
    : "The page content was sent to this model server to answer.";
}
