import { describe, expect, it } from "vitest";
import { citedTab, isStructuredData, placeMarkers, renderCitations, sourceLink, textFragmentUrl } from "../src/sidebar/citations";
import type { VerifiedCitation } from "../src/generated/wire";

const cite = (over: Partial<VerifiedCitation>): VerifiedCitation => ({ doc_id: "doc:web:summary", quote: "a quote", verified: true, ...over });
const sources = { others: [{ id: 42, title: "Shop", url: "https://shop.example/" }] };

describe("citations", () => {
  it("name their tab and the selection, and highlight in the right tab", () => {
    const shown: [string, number | undefined][] = [];
    const list = renderCitations(
      [cite({}), cite({ doc_id: "doc:web:tab:42", quote: "Price: $89" }), cite({ doc_id: "doc:web:selection" }), cite({ verified: false })],
      sources,
      (c, tab) => shown.push([c.quote, tab]),
    );
    const buttons = Array.from(list?.querySelectorAll("button") ?? []);
    expect(buttons.map((b) => b.textContent)).toEqual([
      "[1] “a quote”",
      "[2] Shop: “Price: $89”",
      "[3] Your selection: “a quote”",
      "[4] “a quote”",
    ]);
    expect(buttons[3]?.disabled).toBe(true);
    expect(buttons[1]?.title).toBe("Show “Price: $89” in the tab “Shop”");
    buttons[1]?.click();
    buttons[0]?.click();
    expect(shown).toEqual([["Price: $89", 42], ["a quote", undefined]]);
    expect(citedTab(cite({ doc_id: "doc:web:tab:7" }), sources)).toBeUndefined();
  });

  it("say a structured-data citation is the page's metadata, not a passage on it", () => {
    const fact = cite({ quote: "Structured data (Recipe): author.name: Ines Moreau" });
    expect(isStructuredData(fact)).toBe(true);
    expect(isStructuredData(cite({ quote: "Structured data: name: Trail pack" }))).toBe(true);
    expect(isStructuredData(cite({ quote: "Structured data helps search engines, the article says." }))).toBe(false);
    const shown: string[] = [];
    const list = renderCitations([fact], sources, (c) => shown.push(c.quote));
    const button = list?.querySelector("button");
    expect(button?.title).toBe("“Structured data (Recipe): author.name: Ines Moreau” is from the page's structured data, not its visible text");
    button?.click();
    expect(shown).toEqual(["Structured data (Recipe): author.name: Ines Moreau"]);
    const root = document.createElement("div");
    const p = document.createElement("p");
    p.textContent = "Author: Ines Moreau [1]";
    root.append(p);
    placeMarkers(root, [fact], sources, () => undefined);
    expect(root.querySelector("button.cite-marker")?.getAttribute("aria-label")).toBe("Source 1: from the page's structured data");
  });

  it("show a quote once: a source the answer already quotes is listed by number and place only", () => {
    const shown: string[] = [];
    const answer = "Key points: “Night trains are back.” [1] and “Tickets  cost more.” [2]";
    const list = renderCitations(
      [
        cite({ quote: "Night trains are back." }),
        cite({ doc_id: "doc:web:tab:42", quote: "tickets cost more." }),
        cite({ quote: "A sentence the answer only paraphrases." }),
        cite({ quote: "Night trains are back.", verified: false }),
      ],
      sources,
      (c) => shown.push(c.quote),
      answer,
    );
    const row = list?.querySelector(".citations-quoted");
    expect(row?.textContent).toBe("Quoted above: [1] [2] ");
    const buttons = Array.from(list?.querySelectorAll("button") ?? []);
    expect(buttons.map((b) => b.textContent)).toEqual(["[1]", "[2]", "[3] “A sentence the answer only paraphrases.”", "[4] “Night trains are back.”"]);
    expect(buttons[0]?.title).toBe("Show “Night trains are back.” on the page");
    expect(buttons[1]?.getAttribute("aria-label")).toBe("Source 2: Show “tickets cost more.” in the tab “Shop”");
    expect(Array.from(list?.querySelectorAll(".citations li") ?? []).map((li) => li.textContent)).toEqual([
      "[3] “A sentence the answer only paraphrases.”",
      "[4] “Night trains are back.”",
    ]);
    expect(buttons[3]?.disabled).toBe(true);
    buttons[1]?.click();
    expect(shown).toEqual(["tickets cost more."]);
  });

  it("turn [n] in the answer into buttons only for verified citations that exist", () => {
    const root = document.createElement("div");
    const p = document.createElement("p");
    p.textContent = "Trains run nightly [1], cost more [2] and [9]; see [x].";
    root.append(p);
    const shown: string[] = [];
    placeMarkers(root, [cite({ quote: "one" }), cite({ quote: "two", verified: false })], sources, (c) => shown.push(c.quote));
    const markers = root.querySelectorAll("button.cite-marker");
    expect(markers).toHaveLength(1);
    expect(root.textContent).toBe("Trains run nightly [1], cost more [2] and [9]; see [x].");
    (markers[0] as HTMLButtonElement).click();
    expect(shown).toEqual(["one"]);
    expect(markers[0]?.getAttribute("aria-label")).toBe("Source 1: show it on the page");
  });

  it("without markers in the text, put one after the block that quotes each citation", () => {
    const root = document.createElement("div");
    const ul = document.createElement("ul");
    for (const t of ["“Night trains are back.”", "“Tickets cost more.”"]) {
      const li = document.createElement("li");
      li.textContent = t;
      ul.append(li);
    }
    const p = document.createElement("p");
    p.textContent = "A paraphrase only.";
    root.append(ul, p);
    placeMarkers(root, [cite({ quote: "Tickets cost  more." }), cite({ quote: "night trains are back" }), cite({ quote: "not in the answer" })], sources, () => undefined);
    expect(Array.from(root.querySelectorAll("li")).map((li) => li.textContent)).toEqual(["“Night trains are back.” [2]", "“Tickets cost more.” [1]"]);
    expect(p.textContent).toBe("A paraphrase only.");
  });
});

describe("sourceLink", () => {
  it("links a cited source only to a safe web address", () => {
    const ok = sourceLink({ source_id: "s", title: "Luggage", url: "https://rail.example/luggage" });
    expect(ok.tagName).toBe("A");
    expect((ok as HTMLAnchorElement).href).toBe("https://rail.example/luggage");
    expect((ok as HTMLAnchorElement).rel).toBe("noopener noreferrer");
    expect(ok.textContent).toBe(" — Luggage");
    const bad = sourceLink({ source_id: "s", title: "x", url: "javascript:alert(1)" });
    expect(bad.tagName).toBe("SPAN");
  });
});

describe("textFragmentUrl", () => {
  it("encodes the quote, its syntax characters included, and keeps the page's own fragment", () => {
    expect(textFragmentUrl("https://a.example/p", "Fares rose 5% - again, & more")).toBe(
      "https://a.example/p#:~:text=Fares%20rose%205%25%20%2D%20again%2C%20%26%20more",
    );
    expect(textFragmentUrl("https://a.example/p#intro", "café  au\nlait")).toBe("https://a.example/p#intro:~:text=caf%C3%A9%20au%20lait");
    expect(textFragmentUrl("https://a.example/p#x:~:text=old", "new")).toBe("https://a.example/p#x:~:text=new");
    expect(textFragmentUrl("https://a.example/p", "  ")).toBe("https://a.example/p");
    expect(textFragmentUrl("https://a.example/p", "東京の夜行列車")).toBe(`https://a.example/p#:~:text=${encodeURIComponent("東京の夜行列車")}`);
  });

  it("matches a long or elided quote as a range from its first words to its last", () => {
    const long = "one two three four five six seven eight nine ten eleven twelve thirteen";
    expect(textFragmentUrl("https://a.example/", long)).toBe(
      "https://a.example/#:~:text=one%20two%20three%20four%20five,nine%20ten%20eleven%20twelve%20thirteen",
    );
    expect(textFragmentUrl("https://a.example/", "The night train … leaves at ten.")).toBe(
      "https://a.example/#:~:text=The%20night%20train,leaves%20at%20ten.",
    );
  });

  it("is what a verified citation's source link opens", () => {
    const [link] = Array.from(
      renderCitations([cite({ quote: "Two bags", source: { source_id: "s-2", title: "Luggage", url: "https://rail.example/luggage" } })], sources, () => undefined)?.querySelectorAll("a") ?? [],
    );
    expect(link?.href).toBe("https://rail.example/luggage#:~:text=Two%20bags");
    const [plain] = Array.from(
      renderCitations([cite({ verified: false, source: { source_id: "s-2", title: "Luggage", url: "https://rail.example/luggage" } })], sources, () => undefined)?.querySelectorAll("a") ?? [],
    );
    expect(plain?.href).toBe("https://rail.example/luggage");
  });
});
