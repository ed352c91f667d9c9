/**
 * The open sidebars (their ports to the background): posting to one,
 * broadcasting to all, and a command kept for the sidebar about to open.
 */
import type { SidebarEvent } from "../shared/messages.js";

export type SidebarCommand = Extract<SidebarEvent, { kind: "command" }>;

interface SidebarPort {
  postMessage(message: unknown): void;
}

export class Sidebars<Port extends SidebarPort> {
  private ports = new Set<Port>();
  private pending: SidebarCommand | null = null;

  post(port: Port | undefined, ev: SidebarEvent): void {
    try {
      port?.postMessage(ev);
    } catch {
      // The sidebar closed; its routes are dropped on disconnect.
    }
  }

  broadcast(ev: SidebarEvent): void {
    for (const p of this.ports) this.post(p, ev);
  }

  add(port: Port): void {
    this.ports.add(port);
  }

  delete(port: Port): void {
    this.ports.delete(port);
  }

  /** Hands a command to the open sidebars, or keeps it for the sidebar about to open. */
  deliver(cmd: SidebarCommand): void {
    if (this.ports.size > 0) this.broadcast(cmd);
    else this.pending = cmd;
  }

  /** Gives a sidebar that just connected the command kept for it. */
  flushPending(port: Port): void {
    if (!this.pending) return;
    this.post(port, this.pending);
    this.pending = null;
  }
}
