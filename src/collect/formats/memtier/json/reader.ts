/**
 * A JSON reader for memtier_benchmark's `--json-out-file`: strict JSON, but it keeps what a
 * plain `JSON.parse` loses. Every value carries its line and column, objects keep duplicate
 * keys in order (memtier 2.3.0 cuts percentile keys to six characters, so `p99.999` and
 * `p99.990` both print as `p99.99`), and a file cut short (a killed run) reads as far as it
 * goes, with the open containers marked `closed: false`.
 *
 * It reads text in chunks ({@link JsonReader}: `push` as many as there are, then `end`), any
 * token may be split between two chunks, and it keeps no call stack per level (an explicit
 * stack of open containers). A caller that wants the members of a large object one at a time
 * (memtier's per-second `Time-Serie`) takes each as it is read ({@link JsonReaderOptions}), so
 * it is never all in memory. Pure: text in, tree out.
 *
 * @module
 */

import { ParseError } from "../../../../errors.ts";

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

/** An object or an array. */
export type JsonContainer = JsonObject | JsonArray;

/** What {@link readJson} returns. */
export interface JsonDocument {
  /** The top value; `null` for an empty text. */
  root: JsonValue | null;
  /** Whether the text held one whole value (false when cut short). */
  complete: boolean;
}

/** Options of {@link JsonReader}. */
export interface JsonReaderOptions {
  /**
   * File name for error messages.
   * @default {"<text>"}
   */
  file?: string;
  /**
   * Called when an object member's value has been read whole (a scalar, or a closed object or
   * array), with the containers open around it (`parents.at(-1)` holds the member). Returning
   * true takes the member out of its object: it was used and is not kept. Members of a file
   * cut short inside them are not passed (they stay in the tree, `closed: false`).
   * @default {undefined}
   */
  onMember?: (entry: JsonEntry, parents: readonly JsonContainer[]) => boolean;
}

/** Deepest nesting read (memtier's JSON has 6 levels). */
const MAX_DEPTH = 64;

// sticky, unbounded: memtier 2.3.0 can print an uninitialized double as a 300-digit number
const SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
const PARTIAL_NUMBER = /^-?\d*(\.\d*)?([eE][+-]?\d*)?$/;
/** Characters of the rest of the error's line kept for its message. */
const CONTEXT = 4096;

/** Thrown inside a step that needs more text than the chunks read so far hold. */
const NEED_MORE = Symbol("need more text");

// what an open container expects next
const OPEN = 0;
const KEY = 1;
const COLON = 2;
const VALUE = 3;
const SEP = 4;

interface Frame {
  node: JsonContainer;
  state: number;
  /** The member being read (objects). */
  entry: JsonEntry | undefined;
}

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
 * import { readJson } from "./reader.ts";
 * import assert from "node:assert/strict";
 * const doc = readJson('{"a": 1, "a": 2, "b": [tr');
 * assert.equal(doc.complete, false);
 * const root = doc.root!;
 * assert.ok(root.kind === "object" && root.entries.map((e) => e.key).join() === "a,a,b");
 * assert.throws(() => readJson('{"a" 1}'), /<text>:1:6: expected ":"/);
 * ```
 */
export function readJson(text: string, file = "<text>"): JsonDocument {
  const reader = new JsonReader({ file });
  reader.push(text);
  return reader.end();
}

/**
 * Reads one JSON value from text given in chunks, split anywhere: {@link push} each chunk,
 * then {@link end}. Same result as {@link readJson} of the chunks joined.
 *
 * @example
 * ```ts
 * import { JsonReader } from "./reader.ts";
 * import assert from "node:assert/strict";
 * const seconds: string[] = [];
 * const r = new JsonReader({
 *   // the members of "s", taken one by one and not kept
 *   onMember: (e, parents) => parents.length === 2 && seconds.push(e.key) > 0,
 * });
 * for (const chunk of ['{"s": {"0": {"n"', ': 1}, "1": {"n": 2}}, "x": "\\u00', 'e9"}']) r.push(chunk);
 * const doc = r.end();
 * assert.deepEqual(seconds, ["0", "1"]);
 * const root = doc.root!;
 * assert.ok(root.kind === "object" && root.entries[1].value?.kind === "scalar");
 * assert.equal(root.entries[1].value.value, "é");
 * ```
 */
export class JsonReader {
  readonly #file: string;
  readonly #onMember: JsonReaderOptions["onMember"];
  /** Text read and not yet consumed, from {@link #pos}; `#base` is the offset of its start. */
  #buf = "";
  #pos = 0;
  #base = 0;
  #line = 1;
  /** Offset (in the whole text) where the current line starts. */
  #lineStart = 0;
  /** Where the scan of a string split between chunks goes on (offset in the whole text). */
  #stringResume = -1;
  #final = false;
  #stack: Frame[] = [];
  /** The open containers, outermost first (what `onMember` is given). */
  #nodes: JsonContainer[] = [];
  #root: JsonValue | undefined;
  #rootDone = false;

  /** @param options File name and the member hook. */
  constructor(options: JsonReaderOptions = {}) {
    this.#file = options.file ?? "<text>";
    this.#onMember = options.onMember;
  }

  /**
   * Reads one more chunk of the text.
   *
   * @throws {ParseError} For text that is not JSON (with its line and column).
   */
  push(chunk: string): void {
    if (this.#pos >= this.#buf.length) this.#buf = chunk;
    else this.#buf = (this.#pos > 0 ? this.#buf.slice(this.#pos) : this.#buf) + chunk;
    this.#base += this.#pos;
    this.#pos = 0;
    this.#run();
  }

  /**
   * Ends the text: returns the tree, cut where the text stopped.
   *
   * @throws {ParseError} For text that is not JSON.
   */
  end(): JsonDocument {
    this.#final = true;
    this.#run();
    const complete = this.#rootDone;
    const root = this.#root;
    this.#buf = "";
    this.#pos = 0;
    // a scalar cut short at the top is no value (a container is kept with what it holds)
    return { root: root ?? null, complete };
  }

  #run(): void {
    try {
      // one step per token: the loop never recurses, however deep the nesting
      while (this.#skipSpace()) {
        const top = this.#stack.at(-1);
        if (top === undefined) {
          if (this.#rootDone) this.#fail("expected the end of the JSON text", this.#pos);
          if (!this.#value()) return;
        } else if (top.node.kind === "object") {
          if (!this.#objectStep(top)) return;
        } else if (!this.#arrayStep(top)) return;
      }
    } catch (e) {
      if (e !== NEED_MORE) throw e;
    }
  }

  /** Skips white space; false at the end of the text read so far. */
  #skipSpace(): boolean {
    const t = this.#buf;
    let p = this.#pos;
    while (p < t.length) {
      const c = t.charCodeAt(p);
      if (c === 10) {
        p++;
        this.#line++;
        this.#lineStart = this.#base + p;
      } else if (c === 32 || c === 9 || c === 13) p++;
      else break;
    }
    this.#pos = p;
    return p < t.length;
  }

  #here(): JsonPosition {
    return { line: this.#line, column: this.#base + this.#pos - this.#lineStart + 1 };
  }

  /** Throws the error at `at` (an index of the buffer), with the rest of its line. */
  #fail(expected: string, at: number): never {
    const t = this.#buf;
    const nl = t.indexOf("\n", at);
    // the message quotes the rest of the line: wait for it unless there is plenty already
    if (nl < 0 && !this.#final && t.length - at < CONTEXT) throw NEED_MORE;
    const end = nl < 0 ? Math.min(t.length, at + CONTEXT) : Math.min(nl, at + CONTEXT);
    throw new ParseError(expected, {
      file: this.#file,
      line: this.#line,
      column: this.#base + at - this.#lineStart + 1,
      text: t.slice(at, end),
    });
  }

  #objectStep(top: Frame): boolean {
    const c = this.#buf.charCodeAt(this.#pos);
    switch (top.state) {
      case OPEN:
        if (c === 125) return this.#close();
        top.state = KEY;
        return true;
      case KEY: {
        if (c !== 34) this.#fail('expected a key ("…")', this.#pos);
        const line = this.#line;
        const column = this.#base + this.#pos - this.#lineStart + 1;
        const key = this.#string();
        if (key === undefined) return false;
        const entry: JsonEntry = { key, value: undefined, line, column };
        (top.node as JsonObject).entries.push(entry);
        top.entry = entry;
        top.state = COLON;
        return true;
      }
      case COLON:
        if (c !== 58) this.#fail('expected ":"', this.#pos);
        this.#pos++;
        top.state = VALUE;
        return true;
      case VALUE:
        return this.#value();
      default:
        return this.#separator(top, c, 125);
    }
  }

  #arrayStep(top: Frame): boolean {
    const c = this.#buf.charCodeAt(this.#pos);
    if (top.state === OPEN) {
      if (c === 93) return this.#close();
      top.state = VALUE;
      return true;
    }
    return top.state === VALUE ? this.#value() : this.#separator(top, c, 93);
  }

  /** After a member: the closing character, or a comma and the next member. */
  #separator(top: Frame, c: number, close: number): boolean {
    if (c === close) return this.#close();
    if (c !== 44) this.#fail(`expected "," or "${String.fromCharCode(close)}"`, this.#pos);
    this.#pos++;
    top.state = top.node.kind === "object" ? KEY : VALUE;
    return true;
  }

  /** Reads a value at the current position; false when the text read so far ends inside it. */
  #value(): boolean {
    const c = this.#buf.charCodeAt(this.#pos);
    if (c === 123 || c === 91) {
      // memtier nests 6 levels deep: a deeper text is not its JSON
      if (this.#stack.length >= MAX_DEPTH) {
        this.#fail(`at most ${MAX_DEPTH} levels of nesting`, this.#pos);
      }
      const at = this.#here();
      const node: JsonContainer = c === 123
        ? { kind: "object", entries: [], closed: false, ...at }
        : { kind: "array", items: [], closed: false, ...at };
      this.#pos++;
      this.#attach(node);
      this.#stack.push({ node, state: OPEN, entry: undefined });
      this.#nodes.push(node);
      return true;
    }
    const line = this.#line;
    const column = this.#base + this.#pos - this.#lineStart + 1;
    const value = c === 34 ? this.#string() : this.#literal();
    if (value === undefined) return false;
    this.#attach({ kind: "scalar", value, line, column });
    const top = this.#stack.at(-1);
    if (top === undefined) this.#rootDone = true;
    else if (top.node.kind === "object") this.#memberDone(top);
    return true;
  }

  /** Puts a value where the container being read expects it. */
  #attach(v: JsonValue): void {
    const top = this.#stack.at(-1);
    if (top === undefined) this.#root = v;
    else {
      if (top.node.kind === "object") top.entry!.value = v;
      else top.node.items.push(v);
      top.state = SEP;
    }
  }

  #close(): boolean {
    this.#pos++;
    const done = this.#stack.pop()!;
    this.#nodes.pop();
    done.node.closed = true;
    const top = this.#stack.at(-1);
    if (top === undefined) this.#rootDone = true;
    else if (top.node.kind === "object") this.#memberDone(top);
    return true;
  }

  #memberDone(top: Frame): void {
    if (this.#onMember?.(top.entry!, this.#nodes)) (top.node as JsonObject).entries.pop();
  }

  /** A string at the current position, or undefined when the text read so far ends inside it. */
  #string(): string | undefined {
    const t = this.#buf;
    const start = this.#pos;
    let i = this.#stringResume >= 0 ? this.#stringResume - this.#base : start + 1;
    while (i < t.length) {
      const c = t.charCodeAt(i);
      if (c === 34) break;
      if (c === 10) this.#fail("expected the end of the string", start);
      i += c === 92 ? 2 : 1;
    }
    if (i >= t.length) {
      this.#stringResume = this.#base + i;
      return undefined;
    }
    const raw = t.slice(start + 1, i);
    let value = raw.length >= 13 ? own(raw) : raw;
    if (raw.includes("\\")) {
      try {
        value = JSON.parse(`"${raw}"`);
      } catch {
        this.#fail("expected a valid string escape", i + 1);
      }
    }
    this.#stringResume = -1;
    this.#pos = i + 1;
    return value;
  }

  /**
   * A number, `true`, `false` or `null` at the current position, or undefined when the text
   * read so far ends inside it (or it is a number at the very end of the text, which may be
   * cut: `12` of `123`, `0` of `0.5`).
   */
  #literal(): number | boolean | null | undefined {
    const t = this.#buf;
    SCALAR.lastIndex = this.#pos;
    const m = SCALAR.exec(t);
    if (!m) {
      const rest = t.slice(this.#pos, this.#pos + 400);
      const cutLiteral = ["true", "false", "null"].some((w) => w.startsWith(rest));
      if (cutLiteral || PARTIAL_NUMBER.test(rest)) {
        if (this.#pos + 400 >= t.length) return undefined;
      }
      this.#fail("expected a JSON value", this.#pos);
    }
    const raw = m[0];
    const end = this.#pos + raw.length;
    const last = raw.charCodeAt(raw.length - 1);
    if (last >= 48 && last <= 57) {
      let j = end;
      while (j < t.length && isNumberChar(t.charCodeAt(j))) j++;
      if (j >= t.length && (!this.#final || t.length - end < 64)) return undefined;
    } else if (end >= t.length && !this.#final) return undefined;
    this.#pos = end;
    return raw === "true" ? true : raw === "false" ? false : raw === "null" ? null : +raw;
  }
}

/**
 * A copy of a string cut from a chunk that holds nothing of the chunk. V8 makes a slice of 13
 * characters or more a view into the string it was cut from: a key or value kept from a chunk
 * (a histogram, a block title) would keep the whole megabyte chunk alive. Joining forces a flat
 * copy, of which the slice is then a view.
 */
function own(s: string): string {
  return (s + " ").slice(0, -1);
}

/** `0-9 . e E + -`: what may follow a number in a text cut inside it. */
function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;
}
