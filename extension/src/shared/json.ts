/** Guards for values parsed from JSON (host messages, port messages, tool arguments). */

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
