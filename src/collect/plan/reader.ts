/**
 * Reading a plan's fields: the {@link PlanReader} that checks each field of one YAML (or JSON)
 * document and fails with a {@link PlanError} at the field's file, line and column.
 *
 * @module
 */

import type { Document, LineCounter } from "yaml";
import { ParseError } from "../../errors.ts";

/** A place in a plan file, for a {@link PlanError} raised after parsing. */
export interface PlanWhere {
  file: string;
  line: number;
  column: number;
  text: string;
}

/** A plan that is not valid: names the file, line and field. */
export class PlanError extends ParseError {
  /**
   * @param expected What the field should be.
   * @param where Location and the offending text.
   */
  constructor(
    expected: string,
    where: { file: string; line: number; column: number; text: string },
  ) {
    super(expected, where);
    this.name = "PlanError";
  }
}

/** A field's place in a plan: keys and list indexes from the top. */
export type PlanPath = readonly (string | number)[];

/**
 * Reads and checks the fields of one plan document; every failure is a {@link PlanError} at
 * the field's line.
 */
export class PlanReader {
  readonly #doc: Document;
  readonly #lines: LineCounter;
  readonly #file: string;
  readonly #root: unknown;

  /**
   * @param doc The parsed YAML (or JSON) document.
   * @param lines Its line counter.
   * @param file The file name, for errors.
   */
  constructor(doc: Document, lines: LineCounter, file: string) {
    this.#doc = doc;
    this.#lines = lines;
    this.#file = file;
    this.#root = doc.toJS();
  }

  /**
   * Throws a {@link PlanError} at a field (or at its parent when the field is absent).
   *
   * @param path The field.
   * @param expected What it should be.
   * @param found The offending text to show (default: the field's value).
   */
  fail(path: PlanPath, expected: string, found?: string): never {
    throw new PlanError(`${path.join(".")}: ${expected}`, this.where(path, found));
  }

  /**
   * A field's place (or its parent's when the field is absent) and its text, for a
   * {@link PlanError} raised later (a check of the machine the plan runs on).
   *
   * @param path The field.
   * @param found The offending text to show (default: the field's value).
   */
  where(path: PlanPath, found?: string): PlanWhere {
    type Node = { range?: [number, number] } | undefined;
    const node = this.#doc.getIn(path, true) as Node ??
      this.#doc.getIn(path.slice(0, -1), true) as Node;
    const at = node?.range ? this.#lines.linePos(node.range[0]) : { line: 1, col: 1 };
    const value = this.#doc.getIn(path);
    return {
      file: this.#file,
      line: at.line,
      column: at.col,
      text: found ??
        (value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value)),
    };
  }

  /**
   * The value at a path, as plain data (`undefined` when absent).
   *
   * @param path The field.
   */
  value(path: PlanPath): unknown {
    let v: unknown = this.#root;
    for (const k of path) {
      if (v === null || typeof v !== "object") return undefined;
      v = (v as Record<string | number, unknown>)[k];
    }
    return v;
  }

  /**
   * A mapping's keys and values.
   *
   * @param path The field.
   * @param expected The failure message when it is not a mapping.
   */
  mapping(path: PlanPath, expected = "expected a mapping"): Record<string, unknown> {
    const v = this.value(path);
    if (v === null || typeof v !== "object" || Array.isArray(v)) this.fail(path, expected);
    return v as Record<string, unknown>;
  }

  /**
   * A kind's section: a mapping whose keys are all among `known` (an unknown one fails, naming
   * the known fields).
   *
   * @param path The section.
   * @param known Its fields.
   * @param expected The failure message when it is not a mapping.
   */
  section(path: PlanPath, known: readonly string[], expected?: string): Record<string, unknown> {
    const section = this.mapping(path, expected);
    for (const k of Object.keys(section)) {
      if (!known.includes(k)) this.fail([...path, k], `unknown field (known: ${known.join(", ")})`);
    }
    return section;
  }

  /**
   * A non-empty string.
   *
   * @param path The field.
   * @param dflt The value when absent (else the field is required).
   */
  string(path: PlanPath, dflt?: string): string {
    const v = this.value(path);
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== "string" || v.trim() === "") this.fail(path, "expected a non-empty string");
    return v as string;
  }

  /**
   * An integer ≥ min.
   *
   * @param path The field.
   * @param dflt The value when absent (else the field is required).
   * @param min The least value allowed.
   */
  integer(path: PlanPath, dflt?: number, min = 1): number {
    const v = this.value(path);
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
      this.fail(path, `expected an integer ≥ ${min}`);
    }
    return v as number;
  }

  /**
   * A number ≥ 0 (> 0 when `positive`), at most `max`.
   *
   * @param path The field.
   * @param dflt The value when absent.
   * @param range `max`, the largest value allowed (default: any); `positive`, whether 0 is
   * refused (default false).
   */
  number(
    path: PlanPath,
    dflt: number,
    { max = Number.MAX_VALUE, positive = false }: { max?: number; positive?: boolean } = {},
  ): number {
    const v = this.value(path);
    if (v === undefined) return dflt;
    if (typeof v !== "number" || !(positive ? v > 0 : v >= 0) || !(v <= max)) {
      this.fail(path, `expected a number ${positive ? ">" : "≥"} 0 and ≤ ${max}`);
    }
    return v as number;
  }

  /**
   * `true` or `false`.
   *
   * @param path The field.
   * @param dflt The value when absent.
   */
  boolean(path: PlanPath, dflt: boolean): boolean {
    const v = this.value(path);
    if (v === undefined) return dflt;
    if (typeof v !== "boolean") this.fail(path, "expected true or false");
    return v as boolean;
  }

  /**
   * A list with at least one item.
   *
   * @param path The field.
   * @param expected The failure message.
   */
  list(path: PlanPath, expected: string): unknown[] {
    const v = this.value(path);
    if (!Array.isArray(v) || v.length === 0) this.fail(path, expected);
    return v as unknown[];
  }
}
