/**
 * The target re-check: before a call acts on a `handleId`, the element behind
 * the handle must still be the one the host gated (the `tool_call`'s
 * `target`): same role and same text, computed exactly as observations
 * compute them (`observe.ts`). A page that swapped the element or its label
 * since the observation gets nothing done: the call fails with STALE_HANDLE.
 */
import type { ToolTarget } from "../generated/wire.js";
import { clip, elementRole, elementText } from "./observe.js";

export const STALE_HANDLE = "STALE_HANDLE";

/** Why `el` is no longer the gated target, or null when it still is. */
export function targetMismatch(el: Element, expected: ToolTarget): string | null {
  const role = elementRole(el);
  const text = elementText(el);
  if (role === expected.role && text === expected.text) return null;
  const was = `${expected.role} “${clip(expected.text, 60)}”`;
  const now = `${role} “${clip(text, 60)}”`;
  return `the element changed since Laika looked at it (was ${was}, now ${now}); nothing was done`;
}
