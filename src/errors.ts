/**
 * Error classes that carry where bad input was found.
 *
 * Every message is redacted when the error is made ({@link redactText}): an error that echoes
 * its input (a URL, a file's first line) never carries a password to whoever prints it.
 *
 * @module
 */

import { redactText } from "./text/redact.ts";

/** Where in a source a problem was found. */
export interface SourceLocation {
  /** File the text came from, or `"<text>"` when parsing a string. */
  file: string;
  /** 1-based line number. */
  line: number;
  /** 1-based column number. */
  column: number;
}

/**
 * A parse failure: names the file, line and column, the offending text and what was expected.
 *
 * @example
 * ```ts
 * import { ParseError } from "@kvlab/kvlab";
 * import assert from "node:assert/strict";
 * const e = new ParseError("expected a redis-benchmark result", {
 *   file: "a.txt", line: 3, column: 1, text: "hello",
 * });
 * assert.equal(e.message, 'a.txt:3:1: expected a redis-benchmark result (found "hello")');
 * assert.ok(e instanceof SyntaxError);
 * const s = new ParseError("bad URL", { file: "p.yaml", line: 2, column: 8, text: "redis://:pw@h" });
 * assert.equal(s.message, 'p.yaml:2:8: bad URL (found "redis://:***@h")');
 * ```
 */
export class ParseError extends SyntaxError {
  /** File the text came from. */
  readonly file: string;
  /** 1-based line number. */
  readonly line: number;
  /** 1-based column number. */
  readonly column: number;
  /** The offending text (secrets redacted, shortened to 80 characters). */
  readonly text: string;

  /**
   * @param expected What the parser expected to find.
   * @param where Location and the offending text.
   */
  constructor(expected: string, where: SourceLocation & { text: string }) {
    // redacted before shortening, so that a cut never leaves part of a secret behind
    const text = shorten(redactText(where.text));
    super(
      `${where.file}:${where.line}:${where.column}: ${redactText(expected)}` +
        (text === "" ? "" : ` (found ${JSON.stringify(text)})`),
    );
    this.name = "ParseError";
    this.file = where.file;
    this.line = where.line;
    this.column = where.column;
    this.text = text;
  }
}

/**
 * Raised when a file is in no format kvlab can ingest (or in one it recognizes but cannot
 * ingest yet).
 */
export class UnknownFormatError extends ParseError {
  /**
   * @param expected The formats known, in words.
   * @param where Location and the text that failed detection.
   */
  constructor(expected: string, where: SourceLocation & { text: string }) {
    super(expected, where);
    this.name = "UnknownFormatError";
  }
}

/** Raised when a dataset is not what kvlab expects (bad layout, newer schema, clash). */
export class DatasetError extends Error {
  /** @param message What is wrong, naming the path. */
  constructor(message: string) {
    super(redactText(message));
    this.name = "DatasetError";
  }
}

function shorten(text: string): string {
  const clean = text.replace(/[\r\n]+$/, "");
  return clean.length > 80 ? clean.slice(0, 77) + "..." : clean;
}
