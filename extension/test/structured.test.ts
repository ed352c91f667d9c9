import { describe, expect, it } from "vitest";
import { HandleRegistry } from "../src/content/handles";
import { buildObservation } from "../src/content/observe";
import { MAX_FACTS, MAX_SCRIPT_CHARS, MAX_SCRIPTS, MAX_VALUE_CHARS, structuredData } from "../src/content/structured";
import { checkExtensionMessage } from "../src/shared/validate";
import { htmlDoc } from "./helpers";

const ld = (v: unknown): string => `<script type="application/ld+json">${typeof v === "string" ? v : JSON.stringify(v)}</script>`;
const facts = (html: string) => structuredData(htmlDoc(`<html><head>${html}</head><body><p>Body</p></body></html>`));

describe("structured data collector", () => {
  it("flattens a JSON-LD item, nested objects and arrays into facts", () => {
    const out = facts(
      ld({
        "@context": "https://schema.org",
        "@type": "Recipe",
        name: "Pear  tart",
        author: { "@type": "Person", name: "Ann" },
        recipeIngredient: ["4 pears", "200 g flour"],
        aggregateRating: { ratingValue: 4.5, bestRating: "5" },
        description: "<b>Sweet</b>\n tart",
      }),
    );
    expect(out).toEqual([
      { item: 0, item_type: "Recipe", property: "name", value: "Pear tart" },
      { item: 0, item_type: "Recipe", property: "author.name", value: "Ann" },
      { item: 0, item_type: "Recipe", property: "recipeIngredient", value: "4 pears" },
      { item: 0, item_type: "Recipe", property: "recipeIngredient", value: "200 g flour" },
      { item: 0, item_type: "Recipe", property: "aggregateRating.ratingValue", value: "4.5" },
      { item: 0, item_type: "Recipe", property: "aggregateRating.bestRating", value: "5" },
      { item: 0, item_type: "Recipe", property: "description", value: "Sweet tart" },
    ]);
  });

  it("reads @graph and top-level arrays as items, and follows @id references", () => {
    const out = facts(
      ld({
        "@context": "https://schema.org",
        "@graph": [
          { "@type": "Person", "@id": "#ann", name: "Ann Lee" },
          { "@type": ["NewsArticle", "Article"], headline: "Bridge reopens", author: { "@id": "#ann" } },
        ],
      }) + ld([{ "@type": "https://schema.org/Product", "http://schema.org/sku": "AB-1" }]),
    );
    expect(out).toContainEqual({ item: 1, item_type: "NewsArticle", property: "author.name", value: "Ann Lee" });
    expect(out).toContainEqual({ item: 2, item_type: "Product", property: "sku", value: "AB-1" });
    expect(new Set(out.map((f) => f.item))).toEqual(new Set([0, 1, 2]));
  });

  it("skips malformed blocks and keeps reading the next", () => {
    const out = facts(ld("{ not json") + ld("") + ld("42") + ld('{"@type": "Thing", "name": "ok"}'));
    expect(out).toEqual([{ item: 0, item_type: "Thing", property: "name", value: "ok" }]);
  });

  it("is bounded: blocks, block size, facts, values and depth", () => {
    const many = Array.from({ length: MAX_SCRIPTS + 4 }, (_, i) => ld({ "@type": "Thing", name: `n${i}` })).join("");
    expect(facts(many)).toHaveLength(MAX_SCRIPTS);
    const huge = ld({ "@type": "Thing", name: "x".repeat(MAX_SCRIPT_CHARS) });
    expect(facts(huge)).toEqual([]);
    const wide = ld({ "@type": "Thing", keywords: Array.from({ length: MAX_FACTS * 3 }, (_, i) => `k${i}`) });
    expect(facts(wide)).toHaveLength(MAX_FACTS);
    const long = facts(ld({ "@type": "Thing", description: "y".repeat(MAX_VALUE_CHARS * 3) }));
    expect(long[0]?.value.length).toBe(MAX_VALUE_CHARS);
    let deep: Record<string, unknown> = { name: "bottom" };
    for (let i = 0; i < 50; i++) deep = { inner: deep };
    const d = facts(ld({ "@type": "Thing", ...deep }));
    expect(d).toEqual([]);
    // A cycle of references ends at the depth bound.
    const cyc = facts(ld({ "@graph": [{ "@type": "A", "@id": "#a", next: { "@id": "#b" } }, { "@type": "B", "@id": "#b", next: { "@id": "#a" }, name: "b" }] }));
    expect(cyc.length).toBeLessThan(20);
  });

  it("reads microdata with nested items", () => {
    const doc = htmlDoc(`<html><body>
      <div itemscope itemtype="https://schema.org/Product">
        <h1 itemprop="name">Trail  Jacket</h1>
        <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
          <meta itemprop="priceCurrency" content="EUR"><span itemprop="price" content="129.00">€129</span>
          <link itemprop="availability" href="https://schema.org/InStock">
        </div>
        <time itemprop="releaseDate" datetime="2024-03-05">March 5</time>
      </div></body></html>`);
    expect(structuredData(doc)).toEqual([
      { item: 0, item_type: "Product", property: "name", value: "Trail Jacket" },
      { item: 0, item_type: "Product", property: "offers.priceCurrency", value: "EUR" },
      { item: 0, item_type: "Product", property: "offers.price", value: "129.00" },
      { item: 0, item_type: "Product", property: "offers.availability", value: "https://schema.org/InStock" },
      { item: 0, item_type: "Product", property: "releaseDate", value: "2024-03-05" },
    ]);
  });

  it("goes into the observation, which passes the wire schema", () => {
    const doc = htmlDoc(`<html><head>${ld({ "@type": "Product", name: "Lamp", offers: { price: "20" } })}</head><body><p>A lamp.</p></body></html>`);
    const obs = buildObservation(doc, new HandleRegistry());
    expect(obs.summary.structured).toEqual([
      { item: 0, item_type: "Product", property: "name", value: "Lamp" },
      { item: 0, item_type: "Product", property: "offers.price", value: "20" },
    ]);
    const turn = { type: "turn", id: "t-1", message: { text: "x" }, task: { name: "web.extract" }, observation: obs };
    const r = checkExtensionMessage(turn);
    expect(r.ok ? "" : r.error).toBe("");
    // The script's text is not page text.
    expect(obs.summary.text).not.toContain("offers");
  });
});
