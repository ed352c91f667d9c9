/**
 * Messages between the extension's own parts (sidebar ⇄ background ⇄
 * content script). They never cross to the host. Every receiver checks that
 * the sender is this extension (`sender.id === runtime.id`) before acting.
 */
import type { UntrustedArguments } from "../generated/tools.js";
import type { ExtensionMessage, Observation, PlanEdit, RuntimeInfo, TaskName, ToolTarget } from "../generated/wire.js";
import type { RoutedHostMessage } from "./protocol.js";
import type { ShareRequest } from "./share.js";

export const SIDEBAR_PORT = "laika-sidebar";

/** Options of an observation: the arguments of `browser.observe_dom` (docs/tools.json), all optional and checked where used. */
export type ObserveOptions = UntrustedArguments<"browser.observe_dom">;

/** `Omit` on each member of a union (plain `Omit` would merge them). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The requests the sidebar has the background send for it (the background adds the `id`). */
export type SidebarHostRequest = OmitEach<
  Extract<
    ExtensionMessage,
    {
      type:
        | `history.${string}`
        | `config.${string}`
        | `prompts.${string}`
        | "mcp.servers"
        | "ping"
        | "collections.list"
        | "collection.get"
        | "collection.rename"
        | "collection.remove_source"
        | "collection.delete"
        | "transform.run"
        | "artifact.export"
        | "agent_state.forget";
    }
  >,
  "id"
>;

// ---- sidebar → background ----
export type SidebarRequest =
  | {
      kind: "ask";
      turn_id: string;
      task: TaskName;
      text: string;
      fields?: string[];
      conversation_id?: string | null;
      /** Selected text the question is about (sent as its own document). */
      selection?: string;
      /** Other open tabs the user picked as context (each its own document). */
      tab_ids?: number[];
      /** Answer over this collection instead of the page. */
      collection_id?: string | null;
      /** Answer with the offline runtime this time ("Use offline"); the config is not changed. */
      offline?: boolean;
      /** The user's own choice: only tell (`inform`) or do it (`act`); absent, the model reads the message. */
      mode?: "inform" | "act";
      /** The sidebar shows a plan the model may propose (a question from the composer). */
      plans?: boolean;
    }
  /** The open web tabs, for the tab picker. */
  | { kind: "tabs" }
  /** Which page a question would read now (answered with `reading`, and again whenever it changes). */
  | { kind: "reading" }
  /** Ask about the text selected in the page in front (answered with an `ask-selection` command). */
  | { kind: "ask-selection" }
  /**
   * Add a page to a collection (a new one without `collection_id`): the
   * background observes the tab (`tab_id`, else the active page) and sends
   * `collection.add_page` with `request_id`; the reply is routed back.
   * `title` names a new collection.
   */
  | { kind: "add_page"; request_id: string; collection_id?: string | null; tab_id?: number | null; title?: string }
  | { kind: "host"; request_id: string; request: SidebarHostRequest }
  | { kind: "cancel"; turn_id: string }
  /** Stop a request that is not a turn (a collection's transform), by the id it was sent with. */
  | { kind: "cancel_request"; request_id: string }
  /**
   * The user's answer on an approval card or an estimate card (the
   * background adds the id and the digest it holds); `start_only`: the
   * estimate's "Read the start only"; `plan`: a plan's edit (steps
   * unchecked or reworded), sent with its approval.
   */
  | { kind: "approval"; call_id: string; approved: boolean; start_only?: boolean; plan?: PlanEdit }
  /** `tab_id`: a tab the turn included (a citation of another tab); else the turn's page. */
  /** `chunk`: the cited chunk (1-based), opened at its place (a PDF page, a video time) when it has one. */
  | { kind: "highlight"; turn_id: string; handle_id?: string; quote?: string; tab_id?: number; chunk?: number }
  /** The sidebar wrote (or could not write) the export of an `artifact.share` call. */
  | { kind: "shared"; call_id: string; ok: boolean; message: string }
  | { kind: "status" };

export type ConnectionState = "connecting" | "ready" | "not_installed" | "disconnected" | "failed";

/** A `turn.failed` for a turn whose host went away under it (it crashed, or the background restarted): asking again may work. */
export const HOST_STOPPED = { code: "HOST_STOPPED", message: "Laika stopped; ask again." } as const;

// ---- background → sidebar ----
export type SidebarEvent =
  | { kind: "event"; msg: RoutedHostMessage }
  /** `runtime`: what the host said it runs when it started (`hello.result`). */
  | { kind: "status"; state: ConnectionState; detail: string; runtime?: RuntimeInfo }
  | { kind: "turn.failed"; turn_id: string; code: string; message: string }
  /** `places`: the label of each chunk's place ("p. 12", "4:05"; null: none), by chunk index − 1. */
  | { kind: "turn.tab"; turn_id: string; title: string; url: string; tab_id: number; others: OpenTab[]; places?: (string | null)[] }
  | { kind: "tabs"; tabs: OpenTab[] }
  /** The page a question would read now; `url` is empty when there is none. */
  | { kind: "reading"; title: string; url: string }
  /**
   * How the host took the user's answer on an approval card: accepted
   * (`approval.result`), or refused with an error code (`APPROVAL_EXPIRED`,
   * `APPROVAL_MISMATCH`, `UNKNOWN_CALL`, …).
   */
  | { kind: "approval.answer"; call_id: string; accepted: boolean; approved: boolean; code?: string; message?: string }
  | { kind: "request.failed"; request_id: string; message: string }
  | { kind: "highlight.result"; ok: boolean; message: string }
  /** Write this export of an approved `artifact.share` call (answered with `shared`). */
  | { kind: "share"; call_id: string; request: ShareRequest }
  | { kind: "command"; action: "summarize" }
  /** Ask about this selected text (context menu or shortcut). */
  | { kind: "command"; action: "ask-selection"; text: string }
  /** Run the saved prompt in this shortcut slot on the current page. */
  | { kind: "command"; action: "run-prompt"; slot: number };

/** An open web tab, as the tab picker and citations name it. */
export interface OpenTab {
  id: number;
  title: string;
  url: string;
}

// ---- background → content script ----
export type ContentRequest =
  | { kind: "observe"; options?: ObserveOptions }
  /** `target`: the gated element a handle call must still find (null: no check possible). */
  | { kind: "tool"; name: string; args: Record<string, unknown>; target?: ToolTarget | null }
  | { kind: "highlight"; handle_id?: string; quote?: string }
  /** The text selected on the page now (empty when nothing is). */
  | { kind: "selection" };

export type ContentResponse =
  | { ok: true; observation?: Observation; message?: string; data?: Record<string, unknown> }
  | { ok: false; error: string; code?: string };
