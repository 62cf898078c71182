import fc from "fast-check";
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { formatTable, renderCells, tableCells } from "../../src/analyze/format.ts";

/** CSV and JSON as kvlab wrote them through row objects, before polars wrote them. */
const rowCsv = (df: pl.DataFrame) => renderCells(tableCells(df, true), "csv");
const rowJson = (df: pl.DataFrame) =>
  JSON.stringify(
    (df.toRecords() as Record<string, unknown>[]).map((r) =>
      Object.fromEntries(df.columns.map((c) => {
        const v = r[c];
        return [
          c,
          v instanceof Date ? v.toISOString() : typeof v === "bigint" ? Number(v) : v ?? null,
        ];
      }))
    ),
    null,
    2,
  ) + "\n";

const EDGES = [
  0.1,
  1 / 3,
  109769.48,
  3,
  -0,
  1e-5,
  1e-6,
  1.5e-6,
  -9.99e-6,
  1e-7,
  123456789012.5,
  1e15 + 0.5,
  0.30000000000000004,
  2 ** 53 - 1,
  -(2 ** 52) - 0.5,
  5e-324,
  100000,
  null,
];

Deno.test("formatTable() CSV and JSON", async (t) => {
  await t.step("every kind of cell prints as through row objects", () => {
    const n = EDGES.length;
    const df = pl.DataFrame({
      x: EDGES,
      s: [
        "",
        "a,b",
        'q"',
        "n\nl",
        "r\rx",
        " lead",
        "x;y",
        "t\tz",
        null,
        "é",
        ...Array(n - 10).fill("z"),
      ],
      i: EDGES.map((_, k) => k % 3 ? k * 1_000_003 : null),
      b: EDGES.map((_, k) => k % 3 ? k % 2 === 0 : null),
      at: EDGES.map((_, k) => k % 4 ? new Date(Date.UTC(2026, 10, 30, 15, 33, k, 7 * k)) : null),
    }).withColumns(pl.col("at").cast(pl.Datetime("ms", "UTC")), pl.col("i").cast(pl.Int64));
    assert.equal(formatTable(df, "csv"), rowCsv(df));
    assert.equal(formatTable(df, "json"), rowJson(df));
    assert.match(formatTable(df, "csv"), /^x,s,i,b,at\n0\.1,,,,\n/);
  });
  await t.step("floats polars prints otherwise go through JavaScript", () => {
    const df = pl.DataFrame({ x: [1e16, Infinity, NaN, -Infinity, 2 ** 60, 1e21, 1e22, 0.5] });
    assert.equal(
      formatTable(df, "csv"),
      "x\n10000000000000000\nInfinity\nNaN\n-Infinity\n" +
        "1152921504606847000\n1e+21\n1e+22\n0.5\n",
    );
    assert.equal(formatTable(df, "csv"), rowCsv(df));
    assert.equal(formatTable(df, "json"), rowJson(df));
  });
  await t.step("columns of other types (lists, dates) go through JavaScript", () => {
    const df = pl.DataFrame({ l: [[1, 2], [3]], n: [1, 2] });
    assert.equal(formatTable(df, "csv"), rowCsv(df));
    assert.equal(formatTable(df, "json"), rowJson(df));
  });
  await t.step("runs.tags, JSON text, is an object in JSON (text in CSV)", () => {
    const df = pl.DataFrame({
      run_id: ["a", "b", "c"],
      tags: ['{"study":"history","night":"2026-05-24"}', "{}", "not json"],
    });
    assert.deepEqual(JSON.parse(formatTable(df, "json")).map((r: { tags: unknown }) => r.tags), [
      { study: "history", night: "2026-05-24" },
      {},
      "not json",
    ]);
    assert.match(formatTable(df, "csv"), /^run_id,tags\na,"\{""study""/);
  });
  await t.step("an empty frame keeps its header", () => {
    const df = pl.DataFrame({ a: [] as number[], b: [] as string[] });
    assert.equal(formatTable(df, "csv"), "a,b\n");
    assert.equal(formatTable(df, "json"), "[]\n");
  });
  await t.step("any double prints exactly as String() does (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.double(), { minLength: 1, maxLength: 200 }), (xs) => {
        const df = pl.DataFrame({ x: xs });
        assert.equal(formatTable(df, "csv"), rowCsv(df));
        assert.equal(formatTable(df, "json"), rowJson(df));
      }),
      { numRuns: 200 },
    );
  });
});
