import { beforeAll, describe, expect, it, vi } from "vitest";
import type { RoutedHostMessage } from "../src/shared/protocol";
import type { SidebarHostRequest } from "../src/shared/messages";

type Module = typeof import("../src/sidebar/collections");
let mod: Module;
let UNDO_MS: number;

beforeAll(async () => {
  // The panel lists open tabs through the extension API.
  vi.stubGlobal("chrome", {
    tabs: {
      query: async () => [
        { id: 4, url: "https://a.example/one", title: "One" },
        { id: 5, url: "chrome://settings", title: "Settings" },
      ],
    },
  });
  mod = await import("../src/sidebar/collections");
  ({ UNDO_MS } = await import("../src/sidebar/history"));
});

const list: RoutedHostMessage = {
  type: "collections.list.result", id: "r", reply_to: "q",
  collections: [{ id: "col-1", title: "Trains", tags: [], created_at: "t", source_count: 3 }],
  artifacts: [{ id: "a-1", title: "Comparison: Trains", mime: "application/vnd.laika.render+json", collection_id: "col-1", created_at: "t" }],
  transforms: [
    { id: "key_points", title: "Key points", description: "the key points of each source, quoted" },
    { id: "faq", title: "FAQ", description: "questions and answers" },
  ],
} as RoutedHostMessage;

const got: RoutedHostMessage = {
  type: "collection.get.result", id: "g", reply_to: "q",
  collection: { id: "col-1", title: "Trains", tags: [], created_at: "t", source_count: 1 },
  sources: [{ id: "s-1", kind: "url", title: "A very long page title that must not widen the panel", url: "https://a.example/one", status: "ready" }],
} as RoutedHostMessage;

/** A host that answers each request with its result. */
function host(asked: SidebarHostRequest[]) {
  return async (req: SidebarHostRequest): Promise<RoutedHostMessage> => {
    asked.push(req);
    switch (req.type) {
      case "collection.get":
        return got;
      case "collection.delete":
        return { type: "collection.delete.result", id: "d", reply_to: "q", collection_id: "col-1", deleted: true } as RoutedHostMessage;
      case "transform.run":
        return {
          type: "transform.run.result", id: "x", reply_to: "q", transform: "faq", sources_read: 1, sources_failed: [],
          artifact: { id: "a-2", title: "FAQ: Trains", mime: "application/vnd.laika.render+json", collection_id: "col-1", created_at: "t" },
        } as RoutedHostMessage;
      case "artifact.export":
        return {
          type: "artifact.export.result", id: "e", reply_to: "q", artifact_id: "a-2", title: "FAQ: Trains", format: "json",
          filename: "f.json", mime: "application/json", content: JSON.stringify({ doc: null, text: "Q and A" }),
        } as RoutedHostMessage;
      default:
        return list;
    }
  };
}

/** The panel's dependencies over `host`: a started request is answered as `request` answers it. */
function deps(asked: SidebarHostRequest[], cancelled: string[] = []) {
  const request = host(asked);
  return {
    request,
    start: (req: SidebarHostRequest) => ({ id: `${req.type}-1`, reply: request(req) }),
    cancel: (id: string) => void cancelled.push(id),
    addPage: async () => list,
  };
}

describe("the collections panel", () => {
  it("lists collections, web tabs and artifacts, and answers over the chosen collection", async () => {
    const asked: SidebarHostRequest[] = [];
    const panel = new mod.CollectionsPanel(deps(asked));
    document.body.append(panel.el);
    await panel.refresh();
    const options = [...panel.el.querySelectorAll<HTMLOptionElement>("#collection-select option")].map((o) => o.textContent);
    expect(options).toEqual(["This page", "Trains (3)"]);
    expect(panel.selected()).toBeNull();
    const tabs = [...panel.el.querySelectorAll<HTMLOptionElement>("#collection-tabs option")].map((o) => o.value);
    expect(tabs).toEqual(["4"]);
    expect(panel.el.querySelector("#artifact-list li span")?.textContent).toBe("Comparison: Trains");
    (panel.el.querySelector("#collection-select") as HTMLSelectElement).value = "col-1";
    expect(panel.selected()).toBe("col-1");
    expect(panel.selectedName()).toBe("Trains");
    expect(asked).toEqual([{ type: "collections.list" }]);
    panel.el.remove();
  });

  it("offers the host's transforms for the chosen collection and opens what one made", async () => {
    const asked: SidebarHostRequest[] = [];
    const panel = new mod.CollectionsPanel(deps(asked));
    document.body.append(panel.el);
    await panel.refresh();
    const manage = panel.el.querySelector<HTMLElement>("#collection-manage");
    expect(manage?.hidden).toBe(true);
    const select = panel.el.querySelector("#collection-select") as HTMLSelectElement;
    select.value = "col-1";
    select.dispatchEvent(new Event("change"));
    await vi.waitFor(() => expect(panel.el.querySelector("#collection-sources li .source-title")).not.toBeNull());
    expect(manage?.hidden).toBe(false);
    const buttons = [...panel.el.querySelectorAll<HTMLButtonElement>("#collection-transforms button")].map((b) => b.textContent);
    expect(buttons).toEqual(["Key points", "FAQ"]);
    expect(panel.el.querySelector("#collection-sources button")?.getAttribute("aria-label")).toBe(
      "Remove A very long page title that must not widen the panel",
    );
    panel.el.querySelector<HTMLButtonElement>('[data-transform="faq"]')?.click();
    await vi.waitFor(() => expect(panel.el.querySelector("#artifact-view")?.textContent).toBe("Q and A"));
    expect(asked).toContainEqual({ type: "transform.run", collection_id: "col-1", transform: "faq" });
    expect(panel.el.querySelector("#collections-status")?.textContent).toBe("Made “FAQ: Trains” from 1 source(s).");
    panel.el.remove();
  });

  it("stops a running transform: Stop while it runs, then Stopped and the buttons free", async () => {
    const asked: SidebarHostRequest[] = [];
    const cancelled: string[] = [];
    // The host answers the run only when it is cancelled, with CANCELLED.
    let fail: (e: Error) => void = () => undefined;
    const running = new Promise<RoutedHostMessage>((_, reject) => (fail = reject));
    const panel = new mod.CollectionsPanel({
      ...deps(asked, cancelled),
      start: (req) => {
        asked.push(req);
        return { id: "transform.run-7", reply: running };
      },
      cancel: (id) => {
        cancelled.push(id);
        fail(new Error("Stopped."));
      },
    });
    document.body.append(panel.el);
    await panel.refresh();
    const select = panel.el.querySelector("#collection-select") as HTMLSelectElement;
    select.value = "col-1";
    select.dispatchEvent(new Event("change"));
    const stop = panel.el.querySelector<HTMLButtonElement>("#collection-stop");
    const transforms = () => [...panel.el.querySelectorAll<HTMLButtonElement>("#collection-transforms button")].map((b) => b.disabled);
    expect(stop?.hidden).toBe(true);
    panel.el.querySelector<HTMLButtonElement>('[data-transform="faq"]')?.click();
    expect(stop?.hidden).toBe(false);
    expect(transforms()).toEqual([true, true]);
    stop?.click();
    expect(cancelled).toEqual(["transform.run-7"]);
    await vi.waitFor(() => expect(stop?.hidden).toBe(true));
    expect(panel.el.querySelector("#collections-status")?.textContent).toBe("Stopped: “FAQ” was not made, and nothing was saved.");
    expect(transforms()).toEqual([false, false]);
    expect(asked.filter((r) => r.type === "transform.run")).toEqual([{ type: "transform.run", collection_id: "col-1", transform: "faq" }]);
    panel.el.remove();
  });

  it("deletes a collection only when the undo time is over, and Undo keeps it", async () => {
    const asked: SidebarHostRequest[] = [];
    const panel = new mod.CollectionsPanel(deps(asked));
    document.body.append(panel.el);
    await panel.refresh();
    const select = panel.el.querySelector("#collection-select") as HTMLSelectElement;
    vi.useFakeTimers();
    try {
      for (const undo of [true, false]) {
        select.value = "col-1";
        select.dispatchEvent(new Event("change"));
        panel.el.querySelector<HTMLButtonElement>("#collection-delete")?.click();
        expect(panel.selected()).toBeNull();
        expect([...select.options].map((o) => o.value)).toEqual([""]);
        expect(panel.el.querySelector("#collections-toast")?.textContent).toContain("Deleted “Trains”.");
        if (undo) {
          panel.el.querySelector<HTMLButtonElement>("#collection-undo")?.click();
          await vi.advanceTimersByTimeAsync(UNDO_MS + 100);
          expect(asked.some((r) => r.type === "collection.delete")).toBe(false);
          expect(panel.selected()).toBe("col-1");
        } else {
          await vi.advanceTimersByTimeAsync(UNDO_MS + 100);
          expect(asked.filter((r) => r.type === "collection.delete")).toEqual([{ type: "collection.delete", collection_id: "col-1" }]);
        }
      }
    } finally {
      vi.useRealTimers();
      panel.el.remove();
    }
  });
});
