/**
 * The wire protocol (`laika.wire` v1, docs/wire-protocol.md) as the extension
 * uses it. The message types themselves are generated (`src/generated/wire.ts`,
 * by `build.mjs --gen` from docs/wire-protocol.schema.json, which the host
 * renders from its Rust types): import them from there. This module holds only
 * what the schema does not: the constants the extension speaks with and
 * names for shapes its own code passes around.
 */
import type { HostMessage, PartMessage, WireProtocol } from "../generated/wire.js";

export const WIRE_PROTOCOL: WireProtocol = { name: "laika.wire", version: 1 };
export const NATIVE_HOST_NAME = "dev.laika.host";

/** A host message as it is routed: whole (parts are reassembled first), so it has `reply_to`. */
export type RoutedHostMessage = Exclude<HostMessage, PartMessage>;
