/**
 * The native port to `laika-host`: connects, sends `hello` first, queues
 * requests until `hello.result`, reassembles `part`s, validates every host
 * message against the wire-protocol schema, and reconnects with backoff.
 * "Host not installed" is recognised from the browser's error text and
 * reported as its own state (retried slowly, and on demand).
 */
import { ext } from "../shared/api.js";
import type { ConnectionState } from "../shared/messages.js";
import { PartAssembler } from "../shared/parts.js";
import type { ExtensionMessage, HelloMessage, HelloResultMessage } from "../generated/wire.js";
import { NATIVE_HOST_NAME, WIRE_PROTOCOL, type RoutedHostMessage } from "../shared/protocol.js";
import { checkExtensionMessage, checkHostMessage } from "../shared/validate.js";

const BACKOFF_MS = [500, 1000, 2000, 5000, 10_000, 30_000];
const NOT_INSTALLED_RETRY_MS = 60_000;
const MAX_QUEUE = 64;

/** The error text browsers use when the host manifest is missing. */
export function isNotInstalled(message: string): boolean {
  return /not found|no such native application|is not installed|manifest/i.test(message);
}

export interface HostListener {
  message(msg: RoutedHostMessage): void;
  state(state: ConnectionState, detail: string, hello?: HelloResultMessage): void;
  /** A host message failed validation; `reply_to` names the request if it could be read. */
  invalid(replyTo: string | null, error: string): void;
  /** The connection that was ready dropped: what was sent on it will never be answered. */
  lost(reason: string): void;
  /** Requests that were waiting for the host and never reach it (it is not installed). */
  undelivered(ids: string[], reason: string): void;
}

export class HostConnection {
  private port: chrome.runtime.Port | null = null;
  private ready = false;
  private queue: ExtensionMessage[] = [];
  private parts = new PartAssembler();
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private helloId = "";
  state: ConnectionState = "disconnected";
  detail = "";
  hello: HelloResultMessage | null = null;

  constructor(
    private readonly listener: HostListener,
    private readonly clientInfo: Record<string, string>,
  ) {}

  /** Sends a request (validated first); queued until the handshake is done. */
  send(msg: ExtensionMessage): string | null {
    const checked = checkExtensionMessage(msg);
    if (!checked.ok) return `refusing to send an invalid ${msg.type}: ${checked.error}`;
    if (this.ready && this.port) {
      this.port.postMessage(msg);
      return null;
    }
    if (this.state === "failed" && this.port) {
      // The host said it cannot serve; a new request restarts it (the user may have fixed the cause).
      const old = this.port;
      this.port = null;
      old.disconnect();
    }
    if (this.queue.length >= MAX_QUEUE) return "too many requests are waiting for the Laika app";
    this.queue.push(msg);
    this.connect();
    return null;
  }

  connect(): void {
    if (this.port) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.setState("connecting", "Starting the Laika app…");
    let port: chrome.runtime.Port;
    try {
      port = ext.runtime.connectNative(NATIVE_HOST_NAME);
    } catch (e) {
      this.onDrop(String(e));
      return;
    }
    this.port = port;
    this.parts.reset();
    port.onMessage.addListener((m: unknown) => this.onFrame(m));
    port.onDisconnect.addListener((p: chrome.runtime.Port) => {
      // Chromium reports why in runtime.lastError, Firefox in port.error.
      const err = ext.runtime.lastError?.message ?? (p as { error?: { message?: string } }).error?.message ?? "";
      if (this.port === port) this.onDrop(err || "the Laika app closed the connection");
    });
    this.helloId = `hello-${crypto.randomUUID()}`;
    const hello: HelloMessage = { type: "hello", id: this.helloId, protocol: WIRE_PROTOCOL, client: this.clientInfo };
    port.postMessage(hello);
  }

  private onDrop(reason: string): void {
    const wasReady = this.ready;
    this.port = null;
    this.ready = false;
    // Nothing is queued while ready: everything in flight went to the host that is gone.
    if (wasReady) this.listener.lost(reason);
    this.parts.reset();
    if (isNotInstalled(reason)) {
      this.setState("not_installed", reason);
      // Nothing queued can be answered until someone installs the host: say so now, not never.
      const ids = this.queue.map((q) => q.id);
      this.queue = [];
      if (ids.length) this.listener.undelivered(ids, reason);
      this.schedule(NOT_INSTALLED_RETRY_MS);
      return;
    }
    if (this.state === "failed") return; // The host said it cannot serve; wait for a request.
    this.setState("disconnected", reason);
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)] ?? 30_000;
    this.attempt++;
    this.schedule(delay);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, ms);
  }

  private onFrame(raw: unknown): void {
    const checked = checkHostMessage(raw);
    if (!checked.ok) {
      const replyTo = typeof raw === "object" && raw !== null ? (raw as { reply_to?: unknown }).reply_to : null;
      this.listener.invalid(typeof replyTo === "string" ? replyTo : null, checked.error);
      return;
    }
    const msg = checked.value;
    if (msg.type === "part") {
      const out = this.parts.add(msg);
      if (out.kind === "error") this.listener.invalid(null, out.error);
      // Reassembled messages are validated like any other.
      if (out.kind === "complete") this.onFrame(out.value);
      return;
    }
    if (msg.reply_to === this.helloId) {
      this.onHello(msg);
      return;
    }
    this.listener.message(msg);
  }

  private onHello(msg: RoutedHostMessage): void {
    if (msg.type !== "hello.result") {
      // An error in reply to hello means this host cannot be used: stop here.
      const text = msg.type === "error" ? `${msg.code}: ${msg.message}` : `unexpected ${msg.type}`;
      this.setState("failed", text);
      for (const q of this.queue) this.listener.invalid(q.id, text);
      this.queue = [];
      return;
    }
    this.ready = true;
    this.attempt = 0;
    this.hello = msg;
    this.setState("ready", msg.runtime.label, msg);
    const queued = this.queue;
    this.queue = [];
    for (const q of queued) this.port?.postMessage(q);
  }

  private setState(state: ConnectionState, detail: string, hello?: HelloResultMessage): void {
    this.state = state;
    this.detail = detail;
    this.listener.state(state, detail, hello);
  }
}
