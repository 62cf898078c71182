/**
 * The chunked JSON reader (issue 21: bounded memory): text split anywhere, through UTF-8 bytes
 * split anywhere, reads as `JSON.parse` reads it; nesting has no call-stack limit but memtier's
 * cap, with its clear error; a cut text reads as far as it goes.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type JsonDocument,
  JsonReader,
  type JsonValue,
  readJson,
} from "../../../../src/collect/formats/memtier/json/reader.ts";
import { ParseError } from "../../../../src/errors.ts";

/** The tree as `JSON.parse` gives it (the last of repeated keys wins). */
function plain(v: JsonValue | null | undefined): unknown {
  if (!v) return undefined;
  if (v.kind === "scalar") return v.value;
  if (v.kind === "array") return v.items.map(plain);
  const o: Record<string, unknown> = {};
  for (const e of v.entries) {
    // JSON.parse defines "__proto__" as an own key
    Object.defineProperty(o, e.key, {
      value: plain(e.value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return o;
}

/** Reads UTF-8 bytes given in pieces cut at `cuts`, as ingest reads a file. */
function readBytes(bytes: Uint8Array, cuts: number[]): JsonDocument {
  const reader = new JsonReader({ file: "t.json" });
  const decoder = new TextDecoder("utf-8");
  let at = 0;
  for (const c of [...cuts, bytes.length].sort((a, b) => a - b)) {
    reader.push(decoder.decode(bytes.subarray(at, c), { stream: true }));
    at = c;
  }
  reader.push(decoder.decode());
  return reader.end();
}

/** Every other character inside strings written as its `\uXXXX` escape. */
function escapeSome(json: string): string {
  let inString = false;
  let out = "";
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (!inString) {
      inString = c === '"';
      out += c;
    } else if (c === "\\") {
      out += c + json[++i]; // an escape is kept as it is
    } else if (c === '"') {
      inString = false;
      out += c;
    } else out += i % 2 === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}` : c;
  }
  return out;
}

const documents = fc.tuple(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(undefined, 0, 1, 2, "\t"),
  fc.boolean(),
).map(([value, space, escape]) => {
  // a top-level scalar is cut by design (a number at the very end may be longer): wrap it
  const text = JSON.stringify({ v: value, s: 'é€𝄞\n\t"\\/', n: -1.5e-7 }, null, space);
  return escape ? escapeSome(text) : text;
});

Deno.test("JsonReader reads text split anywhere as JSON.parse does", async (t) => {
  await t.step("any split points, any token kind (strings, escapes, \\uXXXX, numbers)", () => {
    fc.assert(
      fc.property(
        documents.chain((text) =>
          fc.tuple(fc.constant(text), fc.array(fc.nat({ max: text.length }), { maxLength: 8 }))
        ),
        ([text, cuts]) => {
          const reader = new JsonReader();
          let at = 0;
          for (const c of [...cuts, text.length].sort((a, b) => a - b)) {
            reader.push(text.slice(at, c));
            at = c;
          }
          const doc = reader.end();
          assert.ok(doc.complete);
          assert.deepEqual(plain(doc.root), JSON.parse(text));
          assert.deepEqual(doc, readJson(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  await t.step("UTF-8 bytes split inside multi-byte characters", () => {
    fc.assert(
      fc.property(
        documents.chain((text) => {
          const bytes = new TextEncoder().encode(text);
          return fc.tuple(
            fc.constant(bytes),
            fc.array(fc.nat({ max: bytes.length }), { maxLength: 8 }),
          );
        }),
        ([bytes, cuts]) => {
          const text = new TextDecoder().decode(bytes);
          assert.deepEqual(readBytes(bytes, cuts), readJson(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  await t.step("every single split of a token-rich document", () => {
    const text = '{"a\\u00e9\\n": [1, -2.5e+3, 0.25, true, false, null, "x\\"y\\\\"],\n' +
      '\t"é€𝄞": {"p99.99": 12345678901234567890, "": ""}}';
    const whole = readJson(text);
    const bytes = new TextEncoder().encode(text);
    for (let i = 0; i <= text.length; i++) {
      const r = new JsonReader();
      r.push(text.slice(0, i));
      r.push(text.slice(i));
      assert.deepEqual(r.end(), whole, `split at ${i}`);
    }
    for (let i = 0; i <= bytes.length; i++) {
      assert.deepEqual(readBytes(bytes, [i]), whole, `byte split at ${i}`);
    }
  });

  await t.step("a text cut anywhere reads as far as it goes, whatever the splits", () => {
    const text = JSON.stringify({ a: [1, 22, { b: "c\\d" }], e: { f: 0.5, g: null } }, null, 1);
    for (let end = 0; end < text.length; end++) {
      const cut = text.slice(0, end);
      const one = readJson(cut);
      assert.equal(one.complete, false);
      const r = new JsonReader();
      for (let i = 0; i < cut.length; i += 3) r.push(cut.slice(i, i + 3));
      assert.deepEqual(r.end(), one, `cut at ${end}`);
    }
  });
});

Deno.test("JsonReader errors are the same however the text is split", () => {
  for (const text of ['{"a" 1}', '{"a": [1,]}', '{"a": "x\ny"}', '{"a": "\\q"}', "{} x", "[01]"]) {
    const whole = (() => {
      try {
        readJson(text, "e.json");
      } catch (e) {
        return (e as Error).message;
      }
    })();
    assert.ok(whole, text);
    for (let i = 0; i <= text.length; i++) {
      const r = new JsonReader({ file: "e.json" });
      assert.throws(() => {
        r.push(text.slice(0, i));
        r.push(text.slice(i));
        r.end();
      }, (e) => e instanceof ParseError && e.message === whole);
    }
  }
});

Deno.test("JsonReader has no call-stack limit, only memtier's nesting cap with its line", () => {
  // 1,000,000 levels: a recursive reader overflows the stack long before
  const deep = "[".repeat(1_000_000);
  const r = new JsonReader({ file: "deep.json" });
  assert.throws(
    () => {
      r.push('{\n"ALL STATS":\n');
      for (let i = 0; i < deep.length; i += 65536) r.push(deep.slice(i, i + 65536));
      r.end();
    },
    (e) =>
      e instanceof ParseError && e.file === "deep.json" && e.line === 3 &&
      /deep\.json:3:\d+: at most 64 levels of nesting/.test(e.message),
  );
  // 63 levels inside the top object are read
  const ok = readJson(`{"a":${"[".repeat(63)}${"]".repeat(63)}}`);
  assert.ok(ok.complete);
});
