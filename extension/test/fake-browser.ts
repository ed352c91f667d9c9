/**
 * A stand-in for the WebExtension API (`chrome`), enough to load the
 * background and the sidebar hubs in a test and drive them through their
 * ports: what a hub posts is recorded, what the other side says is emitted.
 */
type Listener = (...args: never[]) => unknown;

export class FakeEvent<F extends Listener> {
  readonly listeners: F[] = [];
  addListener(f: F): void {
    this.listeners.push(f);
  }
  fire(...args: Parameters<F>): void {
    for (const f of this.listeners) f(...args);
  }
}

/** One end of a `runtime.Port`, held by the code under test. */
export class FakePort {
  readonly sent: unknown[] = [];
  readonly onMessage = new FakeEvent<(m: unknown) => void>();
  readonly onDisconnect = new FakeEvent<(p: FakePort) => void>();
  closed = false;

  constructor(
    readonly name: string,
    readonly sender?: { id: string; url: string },
  ) {}

  postMessage(m: unknown): void {
    if (this.closed) throw new Error("Attempting to use a disconnected port object");
    this.sent.push(structuredClone(m));
  }

  disconnect(): void {
    this.closed = true;
  }

  /** The other side says `m`. */
  emit(m: unknown): void {
    this.onMessage.fire(structuredClone(m));
  }

  /** The other side goes away. */
  drop(): void {
    this.closed = true;
    this.onDisconnect.fire(this);
  }

  /** What was posted since the last call. */
  take(): unknown[] {
    return this.sent.splice(0);
  }
}

export interface FakeTab {
  id: number;
  url: string;
  title: string;
  active: boolean;
  windowId: number;
  status: "complete";
}

export interface FakeBrowser {
  /** Ports the code under test opened with `runtime.connectNative`, oldest first. */
  natives: FakePort[];
  /** Ports it opened with `runtime.connect` (the sidebar's to the background). */
  connects: FakePort[];
  tabs: FakeTab[];
  /** Requests sent to content scripts, with their tab. */
  contentRequests: { tabId: number; req: { kind: string } }[];
  /** How a tab's content script answers. */
  content: (tabId: number, req: { kind: string }) => unknown;
  runtime: { lastError?: { message: string } };
  /** A sidebar page connecting to the background (as the browser would call `onConnect`). */
  connectSidebar(): FakePort;
  /** Resolves once every pending promise chain has run a few turns. */
  settle(): Promise<void>;
}

const EXTENSION_ID = "laikatestextension";
const SIDEPANEL = `chrome-extension://${EXTENSION_ID}/sidepanel.html`;

/** Installs a fresh fake `chrome` global (import the hub after this, with fresh modules). */
export function installFakeBrowser(): FakeBrowser {
  const onConnect = new FakeEvent<(p: FakePort) => void>();
  const fake: FakeBrowser = {
    natives: [],
    connects: [],
    tabs: [{ id: 7, url: "https://news.example.com/story/1", title: "Night trains", active: true, windowId: 1, status: "complete" }],
    contentRequests: [],
    content: () => ({ ok: false, error: "no content script" }),
    runtime: {},
    connectSidebar() {
      const port = new FakePort("laika-sidebar", { id: EXTENSION_ID, url: SIDEPANEL });
      onConnect.fire(port);
      return port;
    },
    async settle() {
      for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
    },
  };
  const runtime = {
    id: EXTENSION_ID,
    get lastError() {
      return fake.runtime.lastError;
    },
    getManifest: () => ({ version: "0.1.0" }),
    getURL: (p: string) => `chrome-extension://${EXTENSION_ID}/${p}`,
    connectNative() {
      const port = new FakePort("dev.laika.host");
      fake.natives.push(port);
      return port;
    },
    connect({ name }: { name: string }) {
      const port = new FakePort(name);
      fake.connects.push(port);
      return port;
    },
    onConnect,
    onInstalled: new FakeEvent(),
  };
  const chromeStub = {
    runtime,
    tabs: {
      query: async () => fake.tabs,
      get: async (id: number) => {
        const tab = fake.tabs.find((t) => t.id === id);
        if (!tab) throw new Error(`No tab with id: ${id}`);
        return tab;
      },
      update: async (id: number) => fake.tabs.find((t) => t.id === id),
      onActivated: new FakeEvent(),
      onUpdated: new FakeEvent(),
      sendMessage: async (tabId: number, req: { kind: string }) => {
        fake.contentRequests.push({ tabId, req });
        return fake.content(tabId, req);
      },
    },
    windows: { getLastFocused: async () => ({ id: 1 }), onFocusChanged: new FakeEvent() },
    scripting: { executeScript: async () => [] },
    storage: { local: { get: async () => ({}), set: async () => undefined } },
    contextMenus: { create: () => undefined, onClicked: new FakeEvent() },
    commands: { onCommand: new FakeEvent() },
    sidePanel: { setPanelBehavior: async () => undefined, open: async () => undefined },
  };
  (globalThis as { chrome?: unknown }).chrome = chromeStub;
  return fake;
}
