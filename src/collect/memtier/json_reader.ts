/**
 * A JSON reader for memtier_benchmark's `--json-out-file`: strict JSON, but it keeps what a
 * plain `JSON.parse` loses. Every value carries its line and column, objects keep duplicate
 * keys in order (memtier 2.3.0 cuts percentile keys to six characters, so `p99.999` and
 * `p99.990` both print as `p99.99`), and a file cut short (a killed run) reads as far as it
 * goes, with the open containers marked `closed: false`. Pure: text in, tree out.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";

/** Where a JSON value starts (1-based). */
export interface JsonPosition {
  /** 1-based line. */
  line: number;
  /** 1-based column. */
  column: number;
}

/** One `"key": value` of an object, in file order. */
export interface JsonEntry extends JsonPosition {
  /** The key. */
  key: string;
  /** The value; `undefined` when the file ends before it. */
  value: JsonValue | undefined;
}

/** A JSON object (entries in file order, duplicates kept). */
export interface JsonObject extends JsonPosition {
  kind: "object";
  entries: JsonEntry[];
  /** Whether the closing brace was read (false in a cut file). */
  closed: boolean;
}

/** A JSON array. */
export interface JsonArray extends JsonPosition {
  kind: "array";
  items: JsonValue[];
  /** Whether the closing bracket was read (false in a cut file). */
  closed: boolean;
}

/** A JSON string, number, boolean or null. */
export interface JsonScalar extends JsonPosition {
  kind: "scalar";
  value: string | number | boolean | null;
}

/** Any JSON value with its position. */
export type JsonValue = JsonObject | JsonArray | JsonScalar;

/** What {@link readJson} returns. */
export interface JsonDocument {
  /** The top value; `null` for an empty text. */
  root: JsonValue | null;
  /** Whether the text held one whole value (false when cut short). */
  complete: boolean;
}

class EndOfText {}

/** Deepest nesting read (memtier's JSON has 6 levels). */
const MAX_DEPTH = 64;

// sticky, unbounded: memtier 2.3.0 can print an uninitialized double as a 300-digit number
const SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/**
 * Reads one JSON value, tolerating a text that stops early.
 *
 * @param text The JSON text.
 * @param file File name for error messages.
 * @returns The tree and whether it was whole.
 * @throws {ParseError} For text that is not JSON (with its line and column).
 *
 * @example
 * ```ts
 * import { readJson } from "./json_reader.ts";
 * import assert from "node:assert/strict";
 * const doc = readJson('{"a": 1, "a": 2, "b": [tr');
 * assert.equal(doc.complete, false);
 * const root = doc.root!;
 * assert.ok(root.kind === "object" && root.entries.map((e) => e.key).join() === "a,a,b");
 * assert.throws(() => readJson('{"a" 1}'), /<text>:1:6: expected ":"/);
 * ```
 */
export function readJson(text: string, file = "<text>"): JsonDocument {
  const reader = new Reader(text, file);
  reader.skipSpace();
  if (reader.atEnd()) return { root: null, complete: false };
  const root = reader.value() ?? null;
  if (reader.cut) return { root, complete: false };
  reader.skipSpace();
  if (!reader.atEnd()) reader.fail("expected the end of the JSON text");
  return { root, complete: true };
}

class Reader {
  pos = 0;
  line = 1;
  lineStart = 0;
  /** Set once the text ran out inside a value. */
  cut = false;
  /** Objects and arrays open around the current position. */
  depth = 0;

  constructor(readonly text: string, readonly file: string) {}

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  here(): JsonPosition {
    return { line: this.line, column: this.pos - this.lineStart + 1 };
  }

  fail(expected: string): never {
    const end = this.text.indexOf("\n", this.pos);
    throw new ParseError(expected, {
      file: this.file,
      ...this.here(),
      text: this.text.slice(this.pos, end < 0 ? undefined : end),
    });
  }

  skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 10) {
        this.pos++;
        this.line++;
        this.lineStart = this.pos;
      } else if (c === 32 || c === 9 || c === 13) this.pos++;
      else return;
    }
  }

  /**
   * Reads a value. When the text ends inside it, marks `cut` and returns what it has: an
   * object or array with the members read so far, or `undefined` for a cut scalar.
   */
  value(): JsonValue | undefined {
    try {
      return this.valueOrEnd();
    } catch (e) {
      if (!(e instanceof EndOfText)) throw e;
      this.cut = true;
      return undefined;
    }
  }

  private need(): void {
    this.skipSpace();
    if (this.atEnd()) throw new EndOfText();
  }

  private valueOrEnd(): JsonValue {
    this.need();
    const c = this.text[this.pos];
    if (c === "{" || c === "[") {
      // memtier nests 6 levels deep: a deeper text is not its JSON, and reading it would
      // recurse as deep as it goes
      if (++this.depth > MAX_DEPTH) this.fail(`at most ${MAX_DEPTH} levels of nesting`);
      try {
        return c === "{" ? this.object() : this.array();
      } finally {
        this.depth--;
      }
    }
    const at = this.here();
    if (c === '"') return { kind: "scalar", value: this.string(), ...at };
    SCALAR.lastIndex = this.pos;
    const m = SCALAR.exec(this.text);
    if (!m) {
      const rest = this.text.slice(this.pos);
      const cutLiteral = ["true", "false", "null"].some((w) => w.startsWith(rest));
      if (cutLiteral || /^-?\d*(\.\d*)?([eE][+-]?\d*)?$/.test(rest)) throw new EndOfText();
      this.fail("expected a JSON value");
    }
    this.pos += m[0].length;
    // a number at the very end may be cut (`12` of `123`, `0` of `0.5`): not a value yet
    if (/\d$/.test(m[0]) && this.text.length - this.pos < 64) {
      if (/^[\d.eE+-]*$/.test(this.text.slice(this.pos))) throw new EndOfText();
    }
    const raw = m[0];
    const value = raw === "true" ? true : raw === "false" ? false : raw === "null" ? null : +raw;
    return { kind: "scalar", value, ...at };
  }

  private string(): string {
    const start = this.pos + 1;
    let i = start;
    const t = this.text;
    while (i < t.length && t[i] !== '"') {
      if (t[i] === "\n") this.fail("expected the end of the string");
      i += t[i] === "\\" ? 2 : 1;
    }
    if (i >= t.length) throw new EndOfText();
    const raw = t.slice(start, i);
    this.pos = i + 1;
    if (!raw.includes("\\")) return raw;
    try {
      return JSON.parse(`"${raw}"`);
    } catch {
      return this.fail("expected a valid string escape");
    }
  }

  private object(): JsonObject {
    const node: JsonObject = { kind: "object", entries: [], closed: false, ...this.here() };
    this.pos++;
    try {
      this.need();
      if (this.text[this.pos] === "}") {
        this.pos++;
        node.closed = true;
        return node;
      }
      for (;;) {
        this.need();
        if (this.text[this.pos] !== '"') this.fail('expected a key ("…")');
        const at = this.here();
        const key = this.string();
        const entry: JsonEntry = { key, value: undefined, ...at };
        node.entries.push(entry);
        this.need();
        if (this.text[this.pos] !== ":") this.fail('expected ":"');
        this.pos++;
        entry.value = this.value();
        if (this.cut || this.separator("}")) break;
      }
    } catch (e) {
      if (!(e instanceof EndOfText)) throw e;
      this.cut = true;
    }
    node.closed = !this.cut;
    return node;
  }

  private array(): JsonArray {
    const node: JsonArray = { kind: "array", items: [], closed: false, ...this.here() };
    this.pos++;
    try {
      this.need();
      if (this.text[this.pos] === "]") {
        this.pos++;
        node.closed = true;
        return node;
      }
      for (;;) {
        const item = this.value();
        if (item) node.items.push(item);
        if (this.cut || this.separator("]")) break;
      }
    } catch (e) {
      if (!(e instanceof EndOfText)) throw e;
      this.cut = true;
    }
    node.closed = !this.cut;
    return node;
  }

  /** After a member: true at the closing character, false after a comma. */
  private separator(close: string): boolean {
    this.skipSpace();
    if (this.atEnd()) {
      this.cut = true;
      return false;
    }
    const c = this.text[this.pos++];
    if (c === close) return true;
    if (c === ",") return false;
    this.pos--;
    return this.fail(`expected "," or "${close}"`);
  }
}
