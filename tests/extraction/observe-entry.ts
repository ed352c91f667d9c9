// The extension's observation as its content script builds it, for
// observe.mjs: a fresh handle registry per page.
import { buildObservation } from "../../extension/src/content/observe";
import { HandleRegistry } from "../../extension/src/content/handles";

export function observe(doc: Document): unknown {
  return buildObservation(doc, new HandleRegistry());
}
