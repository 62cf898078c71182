/**
 * What a text is, from its first lines: a shell transcript, one format's output (the first
 * format of the registry that recognises any of its lines), binary data, nothing, or text in no
 * known format. Ingest uses it to choose a reader, and to say in an error what a file looks like.
 * Pure.
 *
 * @module
 */

import { looksBinary, segments } from "../../text/lines.ts";
import type { OutputFormat } from "./format.ts";
import { FORMATS } from "./registry.ts";

/** What a text is. */
export type TextKind =
  | { kind: "transcript" }
  | { kind: "format"; format: OutputFormat }
  | { kind: "binary" }
  | { kind: "empty" }
  | { kind: "unknown" };

/** Lines of a text's start that detection reads. */
export const DETECT_LINES = 400;

/** A line typed at a shell prompt (`$ …`, `user@host:~$ …`, `[user@host dir]# …`). */
const PROMPT = /^(\[[^\]]+\][$#]|[\w.-]+@[\w.-]+(:[^$#\s]*)?[$#]|\$)\s+\S/;

/** The index of the first of `formats` that recognises a line, or -1. */
function recognizedBy(piece: string, formats: readonly OutputFormat[] = FORMATS): number {
  return formats.findIndex((f) => f.recognizes(piece));
}

/**
 * Which format the lines of a text are, as they come: the first format of the registry (or of
 * the candidates given: the formats of a command's program) that recognises any line read so
 * far. The formats' order, not the lines', decides: a memtier 1.x header outranks the
 * `ALL STATS` line before it. Reads at most {@link DETECT_LINES} non-blank lines.
 *
 * @example
 * ```ts
 * import { FormatDetector } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const d = new FormatDetector();
 * d.push("# Memory");
 * d.push("used_memory:1000");
 * assert.equal(d.best?.name, "redis-info");
 * ```
 */
export class FormatDetector {
  readonly #formats: readonly OutputFormat[];
  #best = -1;
  #lines = 0;

  /** @param formats The formats it may be, in order. @default {FORMATS} */
  constructor(formats: readonly OutputFormat[] = FORMATS) {
    this.#formats = formats;
  }

  /** The formats it may be. */
  get formats(): readonly OutputFormat[] {
    return this.#formats;
  }

  /** The format recognised so far, if any. */
  get best(): OutputFormat | undefined {
    return this.#best < 0 ? undefined : this.#formats[this.#best];
  }

  /** Whether more lines can no longer change {@link best}. */
  get decided(): boolean {
    return this.#best === 0 || this.#lines >= DETECT_LINES;
  }

  /**
   * Reads one line.
   *
   * @param text The line (it may hold `\r` redraws).
   */
  push(text: string): void {
    if (this.decided || text.trim() === "") return;
    this.#lines++;
    for (const s of segments(text.replace(/\r$/, ""))) {
      const i = recognizedBy(s.trim(), this.#formats);
      if (i >= 0 && (this.#best < 0 || i < this.#best)) this.#best = i;
    }
  }
}

/**
 * Tells what a text is from a sample of its start: a transcript when a prompt comes before any
 * line a format recognises; else the format (see {@link FormatDetector}).
 *
 * @param sample The first lines of the text.
 * @returns What it is.
 *
 * @example
 * ```ts
 * import { detectText } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const name = (t: string) => { const k = detectText(t); return k.kind === "format" ? k.format.name : k.kind; };
 * assert.equal(name('"test","rps","avg_latency_ms"\n'), "redis-benchmark");
 * assert.equal(name("$ redis-cli info\n# Server\n"), "transcript");
 * assert.equal(name("ALL STATS\n====\nType  Ops/sec  Hits/sec\n"), "memtier-stdout");
 * assert.equal(name(""), "empty");
 * assert.equal(name("hello\n"), "unknown");
 * ```
 */
export function detectText(sample: string): TextKind {
  if (sample.trim() === "") return { kind: "empty" };
  if (looksBinary(sample)) return { kind: "binary" };
  const detector = new FormatDetector();
  let output = false;
  for (const raw of sample.split("\n").slice(0, DETECT_LINES)) {
    if (!output) {
      for (const s of segments(raw.replace(/\r$/, ""))) {
        const t = s.trim();
        if (PROMPT.test(t)) return { kind: "transcript" };
        if (recognizedBy(t) >= 0) {
          output = true;
          break;
        }
      }
    }
    detector.push(raw);
    if (detector.decided) break;
  }
  const best = detector.best;
  return best ? { kind: "format", format: best } : { kind: "unknown" };
}

/**
 * A phrase naming what a text is, for error messages.
 *
 * @param kind What {@link detectText} said.
 * @returns The phrase.
 *
 * @example
 * ```ts
 * import { describeText, detectText } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(describeText(detectText("4 Threads\nALL STATS\n")), "memtier_benchmark output");
 * assert.equal(describeText({ kind: "binary" }), "binary data");
 * ```
 */
export function describeText(kind: TextKind): string {
  switch (kind.kind) {
    case "format":
      return kind.format.description;
    case "transcript":
      return "a shell transcript";
    case "binary":
      return "binary data";
    case "empty":
      return "an empty file";
    case "unknown":
      return "text in no known format";
  }
}
