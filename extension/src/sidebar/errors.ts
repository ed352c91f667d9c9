/**
 * What to tell people for each error code (docs/wire-protocol.md, "Error
 * codes"): act on the code, show the host's message only as detail.
 */

import { button, h } from "./dom.js";

/** Shown when the native host is missing: exactly what to paste in a terminal. */
export const INSTALL_COMMAND = "laika-host install";
/** Said next to the command, never inside it (it must paste as it is). */
export const INSTALL_HINT =
  "The Laika app (laika-host) is not installed for this browser. Run this in a terminal, then reopen this sidebar (from a Laika checkout, scripts/install.sh does the same):";

/** Codes where the model (its server, or what it answered) is at fault: the user can retry or answer offline. */
export const RUNTIME_CODES: ReadonlySet<string> = new Set(["RUNTIME_UNAVAILABLE", "RUNTIME_ERROR", "RUNTIME_TIMEOUT", "INVALID_MODEL_OUTPUT"]);

const ADVICE: Record<string, string> = {
  FRAME_TOO_LARGE: "This page is too large for Laika to read.",
  FRAME_TRUNCATED: "The connection to the Laika app was interrupted. Try again.",
  INVALID_UTF8: "Laika hit an internal error (extension bug).",
  INVALID_JSON: "Laika hit an internal error (extension bug).",
  JSON_TOO_DEEP: "This page is too complex for Laika to read.",
  INVALID_REQUEST: "Laika hit an internal error (extension bug).",
  UNSUPPORTED_VERSION: "The Laika extension and the Laika app are different versions. Update both.",
  ORIGIN_DENIED: "This browser extension is not allowed to use the Laika app. Check allowed_origins in Laika's settings file.",
  INVALID_OBSERVATION: "Laika couldn't read this page. Reload it and try again.",
  RUNTIME_UNAVAILABLE: "The AI model isn't reachable. Is it running? Check Settings, then try again.",
  RUNTIME_TIMEOUT: "The AI model took too long to answer. Try again.",
  RUNTIME_ERROR: "The AI model reported an error. Try again.",
  INVALID_MODEL_OUTPUT: "The AI model's answer couldn't be used. Try again or choose another model in Settings.",
  POLICY_DENIED: "Laika blocked this action for your safety.",
  STORE_FAILED: "Couldn't save to (or read) your history.",
  NOT_FOUND: "That conversation no longer exists.",
  CANCELLED: "Stopped.",
  CONFIG_INVALID: "Laika's settings are invalid.",
  INTERNAL: "Something went wrong inside Laika (see laika-host.log).",
  PDF_TOO_LARGE: "This PDF is too large for Laika to read.",
  PDF_UNREADABLE: "Laika couldn't read this PDF.",
  PDF_TIMEOUT: "This PDF took too long to read.",
  PDF_ENCRYPTED: "This PDF is password-protected.",
  PDF_NO_TEXT: "This PDF has no text to read (it looks scanned).",
  PROMPT_INVALID: "This prompt can't be saved.",
  PROMPT_NAME_TAKEN: "A saved prompt already has this name.",
  INVALID_HOST_MESSAGE: "Laika received an invalid answer from the host.",
};

/** The host's config keys, as people find them in Settings. */
const KEY_WORDS: [RegExp, string][] = [
  [/runtime\.base_url/g, "the base URL in Settings"],
  [/runtime\.api_key \/ LAIKA_API_KEY|runtime\.api_key/g, "the API key in Settings"],
  [/runtime\.model/g, "the model in Settings"],
];

/**
 * A runtime failure in plain words: what failed and why. The host's message
 * names the server URL and the cause (HTTP status, connection refused, a web
 * page instead of a model server); only its config-key jargon is translated.
 */
export function runtimeFailure(code: string, message: string): { title: string; detail: string } {
  const title = ADVICE[code] ?? "The AI model failed.";
  let detail = message;
  for (const [re, words] of KEY_WORDS) detail = detail.replace(re, words);
  return { title, detail };
}

/** A failed model server: what failed, in plain words, and what to do now. */
export function runtimeErrorCard(code: string, message: string, retry: () => void, useOffline: () => void): HTMLElement {
  const { title, detail } = runtimeFailure(code, message);
  const card = h("div", "error-card");
  card.setAttribute("role", "alert");
  card.append(h("p", "error", title), h("p", "error-detail", detail));
  const row = h("div", "row");
  row.append(button("Retry", retry, "primary"), button("Use offline", useOffline));
  card.append(row);
  return card;
}

/** A turn that ended without an answer but may work if asked again: says so, with Retry. */
export function retryCard(text: string, retry: () => void): HTMLElement {
  const card = h("div", "error-card");
  card.setAttribute("role", "alert");
  card.append(h("p", "error", text));
  const row = h("div", "row");
  row.append(button("Retry", retry, "primary"));
  card.append(row);
  return card;
}

/** What a structured-data citation is, when clicked: there is no visible text to show. */
export const STRUCTURED_DATA_CITATION =
  "This comes from the page's structured data (details the site publishes for search engines and apps), not from its visible text, so there is no passage to show on the page.";

/** What a failed "show on the page" means, in words people use. */
export function citationError(message: string): string {
  if (/no longer on this page|not found/i.test(message)) {
    return "This passage is no longer on the page (it may have changed or been reloaded). Ask again to get fresh citations.";
  }
  if (/receiving end|no tab|closed|establish connection/i.test(message)) {
    return "The tab this answer came from is closed or was reloaded, so Laika can't show the passage.";
  }
  return "Laika couldn't show this passage on the page. Reload the page and ask again.";
}

export function errorAdvice(code: string, message: string): string {
  const advice = ADVICE[code];
  if (!advice) return `Error ${code}: ${message}`;
  if (code === "RUNTIME_ERROR" || code === "CONFIG_INVALID" || code === "PROMPT_INVALID") return `${advice} (${message})`;
  return advice;
}
