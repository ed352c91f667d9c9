/**
 * The target re-check: before a call acts on a `handleId`, the element behind
 * the handle must still be the one the host gated (the `tool_call`'s
 * `target`): the same role, text, link, label, name, id, form, input type and
 * autocomplete, described exactly as observations describe them
 * (`observe.ts`). A page that swapped the element, its label, its link or
 * moved it to another form since the observation gets nothing done: the call
 * fails with STALE_HANDLE.
 */
import type { ToolTarget } from "../generated/wire.js";
import { clip, describeElement } from "./observe.js";

export const STALE_HANDLE = "STALE_HANDLE";

/** The parts of a target the verdict rested on, beyond its handle. */
const BOUND = ["role", "text", "href", "label", "name", "id", "form", "input_type", "autocomplete"] as const;

/** Why `el` is no longer the gated target, or null when it still is. */
export function targetMismatch(el: Element, expected: ToolTarget): string | null {
  const doc = el.ownerDocument;
  const now = describeElement(el, expected.handle_id, doc.baseURI || doc.URL);
  const changed = BOUND.filter((key) => (now[key] ?? null) !== (expected[key] ?? null));
  if (changed.length === 0) return null;
  const was = `${expected.role} “${clip(expected.text, 60)}”`;
  const is = `${now.role ?? ""} “${clip(now.text ?? "", 60)}”`;
  return `the element changed since Laika looked at it (${changed.join(", ")}: was ${was}, now ${is}); nothing was done`;
}
