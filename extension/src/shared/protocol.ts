/**
 * Types for the wire protocol (`laika.wire` v1, docs/wire-protocol.md) and
 * the observation documents (laika.llmcp seed). Field names match the host's
 * `observation.rs` exactly: the host refuses unknown fields.
 */

export const WIRE_PROTOCOL = { name: "laika.wire", version: 1 } as const;
export const NATIVE_HOST_NAME = "dev.laika.host";

export type TaskName = "web.summarize" | "web.answer" | "web.extract";

export interface Primary {
  text: string;
  tag?: string;
  role?: string;
  handle_id?: string;
}

export interface Item {
  title: string;
  url?: string;
  snippet?: string;
  handle_id?: string;
  comment_count?: number;
}

export interface Comment {
  text: string;
  author?: string;
  age?: string;
  score?: string;
  depth?: number;
  handle_id?: string;
}

export interface OutlineEntry {
  level: number;
  tag: string;
  role: string;
  text: string;
}

export interface ObservedElement {
  handle_id: string;
  role: string;
  text: string;
  href?: string;
  tag?: string;
  input_type?: string;
  autocomplete?: string;
  name?: string;
  label?: string;
}

export interface Discussion {
  title: string;
  url?: string;
  comment_count?: number;
}

export interface ObservationSummary {
  doc_type: "web.observation.summary.v1";
  url: string;
  title: string;
  text: string;
  primary?: Primary;
  items?: Item[];
  comments?: Comment[];
  outline?: OutlineEntry[];
  signals?: string[];
  elements?: ObservedElement[];
  top_discussions?: Discussion[];
}

export interface ObservationChunk {
  doc_type: "web.observation.chunk.v1";
  url: string;
  title: string;
  chunk_index: number;
  chunk_count: number;
  text: string;
}

export interface Observation {
  summary: ObservationSummary;
  chunks?: ObservationChunk[];
}

// ---- render AST (already sanitized by the host; re-checked when rendered) ----

export interface TextNode {
  type: "text";
  text: string;
}
export interface LinkNode {
  type: "link";
  href: string;
  children: TextNode[];
}
export type InlineNode = TextNode | LinkNode;

export interface RenderDoc {
  type: "doc";
  children: unknown[];
}

export interface Citation {
  doc_id: string;
  node_id?: string;
  handle_id?: string;
  quote: string;
  verified: boolean;
}

export interface RuntimeInfo {
  kind: string;
  model?: string | null;
  offline?: boolean;
  label?: string;
}

// ---- host → extension messages (the fields the extension uses) ----

interface HostBase {
  id: string;
  reply_to: string | null;
}

export interface HelloResult extends HostBase {
  type: "hello.result";
  runtime: RuntimeInfo;
  tasks: string[];
  capabilities: string[];
  limits: { max_inbound_frame: number; max_outbound_frame: number; max_tool_calls?: number };
}
export interface TurnStarted extends HostBase {
  type: "turn.started";
  conversation_id: string;
  turn: number;
  request_id: string;
  task: string;
  runtime: RuntimeInfo;
}
export interface ContextUsage extends HostBase {
  type: "context_usage";
  budget: { max_chars: number; max_tokens: number };
  used: { chars: number; tokens: number };
  cut: { doc_id: string; field?: string; chars_removed: number }[];
}
export interface AssistantEvent extends HostBase {
  type: "assistant";
  conversation_id: string;
  turn: number;
  response_id: string;
  title: string;
  render: RenderDoc;
  citations: Citation[];
  data: Record<string, unknown> | null;
}
/** Finished top-level blocks of the answer while it streams (already sanitized by the host). */
export interface RenderDeltaEvent extends HostBase {
  type: "render_delta";
  conversation_id: string;
  turn: number;
  start_index: number;
  blocks: unknown[];
}
/** Discard the blocks received so far (a retry, or the final answer differs). */
export interface RenderResetEvent extends HostBase {
  type: "render_reset";
  conversation_id: string;
  turn: number;
  reason: string;
}
export type Decision = "allow" | "ask" | "deny";
export interface ToolCallEvent extends HostBase {
  type: "tool_call";
  conversation_id: string;
  turn: number;
  call_id: string;
  index: number;
  name: string;
  arguments: Record<string, unknown> | null;
  decision: Decision;
  reason: string;
  detail: string;
}
export interface ErrorEvent extends HostBase {
  type: "error";
  code: string;
  message: string;
  retryable: boolean;
}
export interface DoneEvent extends HostBase {
  type: "done";
  conversation_id?: string;
  status: "ok" | "failed" | "cancelled";
  error_code: string | null;
  stored: boolean;
  turn?: number;
}
export interface PartMessage {
  type: "part";
  id: string;
  part_of: string;
  index: number;
  count: number;
  data: string;
}
export interface OtherHostMessage extends HostBase {
  type:
    | "pong"
    | "cancel.result"
    | "history.list.result"
    | "history.get.result"
    | "history.search.result"
    | "history.delete.result"
    | "history.export.result"
    | "config.get.result"
    | "config.set.result";
  [key: string]: unknown;
}

export type HostMessage =
  | HelloResult
  | TurnStarted
  | ContextUsage
  | AssistantEvent
  | RenderDeltaEvent
  | RenderResetEvent
  | ToolCallEvent
  | ErrorEvent
  | DoneEvent
  | OtherHostMessage;

/** A request the extension sends; validated against the schema before sending. */
export interface ExtensionMessage {
  type: string;
  id: string;
  [key: string]: unknown;
}
