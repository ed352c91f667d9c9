import { describe, expect, it } from "vitest";
import { badgeText, whereItWent } from "../src/sidebar/badge";
import { sendsOnEnter } from "../src/sidebar/composer";
import { citationError, INSTALL_COMMAND, runtimeFailure, STRUCTURED_DATA_CITATION } from "../src/sidebar/errors";
import { sourcesMarkdown, toMarkdown } from "../src/sidebar/markdown";
import { dataCsv } from "../src/sidebar/actions";
import { relativeDate } from "../src/sidebar/when";

const text = (t: string) => ({ type: "text", text: t });

describe("the runtime badge", () => {
  const remote = { kind: "openai", label: "gpt-x via generic at https://api.example.com/v1", model: "gpt-x", offline: false };
  it("says where the page went", () => {
    expect(badgeText(remote, "https://api.example.com/v1")).toBe(
      "gpt-x via generic at https://api.example.com/v1 · the page was sent to api.example.com",
    );
    expect(whereItWent({ ...remote, offline: true })).toBe("the page stayed on this computer");
    expect(whereItWent(remote)).toBe("the page was sent over the network");
    expect(whereItWent(remote, "not a url")).toBe("the page was sent over the network");
  });
  it("names the model once, and not the builtin's internal id", () => {
    expect(badgeText({ ...remote, label: "Remote server" }, undefined)).toContain("Remote server · gpt-x · ");
    expect(badgeText({ kind: "builtin", label: "Offline extractive", model: "laika-builtin-x", offline: true })).toBe(
      "Offline extractive · the page stayed on this computer",
    );
  });
});

describe("relative dates", () => {
  const now = new Date("2026-03-10T12:00:00Z");
  it("reads like people talk, in the given language", () => {
    expect(relativeDate("2026-03-10T11:55:00Z", now, "en")).toBe("5 minutes ago");
    expect(relativeDate("2026-03-09T12:00:00Z", now, "en")).toBe("yesterday");
    expect(relativeDate("2026-01-01T12:00:00Z", now, "en")).toBe("2 months ago");
    expect(relativeDate("2026-03-10T11:59:59Z", now, "en")).toBe("now");
    expect(relativeDate("2026-03-09T12:00:00Z", now, "de")).toBe("gestern");
  });
  it("keeps an unreadable date as it is", () => {
    expect(relativeDate("sometime", now)).toBe("sometime");
  });
});

describe("Markdown of an answer", () => {
  it("keeps lists, headings, links and tables", () => {
    const md = toMarkdown({
      type: "doc",
      children: [
        { type: "heading", level: 1, children: [text("Trains")] },
        { type: "list", ordered: false, items: [{ type: "list_item", children: [{ type: "paragraph", children: [text("one")] }] }, { type: "list_item", children: [{ type: "paragraph", children: [text("two")] }] }] },
        { type: "paragraph", children: [text("see "), { type: "link", href: "https://example.com/a", children: [text("this")] }, { type: "link", href: "javascript:alert(1)", children: [text(" bad")] }] },
        { type: "table", rows: [{ type: "table_row", cells: [{ type: "table_cell", header: true, children: [text("a|b")] }] }, { type: "table_row", cells: [{ type: "table_cell", children: [text("1")] }] }] },
        { type: "script", text: "x" },
      ],
    });
    expect(md).toBe("# Trains\n\n- one\n- two\n\nsee [this](https://example.com/a) bad\n\n| a\\|b |\n| --- |\n| 1 |");
    expect(toMarkdown({ type: "nope" })).toBe("");
  });
});

describe("errors in plain words", () => {
  it("keeps the URL and the cause, translates config keys", () => {
    const f = runtimeFailure("RUNTIME_ERROR", "http://10.0.0.1:8080/v1 answered with a web page, not a model server's answer (is runtime.base_url the model server's API address?)");
    expect(f.title).toMatch(/AI model/);
    expect(f.detail).toContain("http://10.0.0.1:8080/v1");
    expect(f.detail).toContain("the base URL in Settings");
    expect(f.detail).not.toContain("runtime.");
  });
  it("explains citation failures without internal text", () => {
    expect(citationError("the cited text is no longer on this page")).toMatch(/^This passage is no longer on the page/);
    expect(citationError("Could not establish connection. Receiving end does not exist.")).toMatch(/tab .* closed/);
    expect(citationError("weird")).not.toContain("weird");
    // The page's metadata is no passage: it is not said to be gone from the page.
    expect(STRUCTURED_DATA_CITATION).toMatch(/structured data/);
    expect(STRUCTURED_DATA_CITATION).not.toMatch(/no longer on the page/);
  });
  it("has an install command that pastes as it is", () => {
    expect(INSTALL_COMMAND).toBe("laika-host install");
  });
});

describe("Enter in the composer", () => {
  const key = (over: Partial<KeyboardEvent>) => ({ key: "Enter", shiftKey: false, altKey: false, isComposing: false, ...over });
  it("sends on Enter, not on Shift+Enter or during IME composition", () => {
    expect(sendsOnEnter(key({}))).toBe(true);
    expect(sendsOnEnter(key({ shiftKey: true }))).toBe(false);
    expect(sendsOnEnter(key({ isComposing: true }))).toBe(false);
    expect(sendsOnEnter(key({ key: "a" }))).toBe(false);
  });
});

describe("the sources of an exported answer", () => {
  it("lists each quote with its page linked, as the [n] markers count them", () => {
    const md = sourcesMarkdown(
      [
        { doc_id: "doc:web:summary", quote: "Night  trains\nare back." },
        { doc_id: "doc:src:s1", quote: "Sleepers cost 90 €.", source: { source_id: "s1", title: "Fares", url: "https://rail.example/fares" } },
        { doc_id: "doc:web:selection", quote: "my selection" },
        { doc_id: "doc:src:s2", quote: "x", source: { source_id: "s2", title: "Bad", url: "javascript:alert(1)" } },
      ],
      "https://rail.example/news",
    );
    expect(md.split("\n")).toEqual([
      "Sources:",
      "",
      "1. “Night trains are back.” — [https://rail.example/news](https://rail.example/news)",
      "2. “Sleepers cost 90 €.” — [Fares](https://rail.example/fares)",
      "3. “my selection”",
      "4. “x”",
    ]);
    expect(sourcesMarkdown([])).toBe("");
  });
});

describe("an extraction as CSV", () => {
  it("has one row per field, quoted where needed, empty where the page did not say", () => {
    expect(dataCsv({ price: "€49", "name, full": 'The "Nightjet"', stops: ["Linz", "Wels"], sku: null })).toBe(
      'field,value\r\nprice,€49\r\n"name, full","The ""Nightjet"""\r\nstops,"[""Linz"",""Wels""]"\r\nsku,\r\n',
    );
  });
});
