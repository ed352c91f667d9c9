/**
 * Validation of every host message against docs/wire-protocol.schema.json.
 * The validator is ajv standalone code generated at build time (build.mjs),
 * so nothing is compiled with eval at run time (MV3 CSP forbids it).
 */
import type { ExtensionMessage, HostMessage } from "../generated/wire.js";
import { validateExtension, validateHost, type Validator } from "../generated/wire-validate.js";

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

function describe(v: Validator): string {
  const e = v.errors?.[0];
  if (!e) return "does not match the wire-protocol schema";
  return `${e.instancePath || "/"} ${e.message ?? e.keyword}`;
}

/** Checks a host message (or a `part`) against `#/$defs/host_message`. */
export function checkHostMessage(value: unknown): Checked<HostMessage> {
  if (validateHost(value)) return { ok: true, value: value as HostMessage };
  return { ok: false, error: describe(validateHost) };
}

/** Checks a request before it is sent (catches typos the host would ignore). */
export function checkExtensionMessage(value: unknown): Checked<ExtensionMessage> {
  if (validateExtension(value)) return { ok: true, value: value as ExtensionMessage };
  return { ok: false, error: describe(validateExtension) };
}
