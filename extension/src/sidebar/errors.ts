/**
 * What to tell people for each error code (docs/wire-protocol.md, "Error
 * codes"): act on the code, show the host's message only as detail.
 */

/** Shown when the native host is missing. */
export const INSTALL_COMMAND = "laika-host install   (from a Laika checkout: scripts/install.sh)";

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
  INVALID_HOST_MESSAGE: "Laika received an invalid answer from the host.",
};

export function errorAdvice(code: string, message: string): string {
  const advice = ADVICE[code];
  if (!advice) return `Error ${code}: ${message}`;
  if (code === "RUNTIME_ERROR" || code === "CONFIG_INVALID") return `${advice} (${message})`;
  return advice;
}
