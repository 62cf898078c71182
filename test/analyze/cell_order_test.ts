// "Runs per cell" lists its cells in the order of the compare tables beside it.
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { cellCounts, compare } from "../../src/analyze/mod.ts";

Deno.test("cellCounts() orders cells as compare does", () => {
  const rows: Record<string, unknown>[] = [];
  // clients 50 measured first, then 1: the tables still read 1, 50
  for (const clients of [50, 1]) {
    for (const test of ["SET", "GET"]) {
      for (const server of ["redis", "valkey"]) {
        for (const rep of [0, 1]) {
          rows.push({ test, clients, server, ops_per_sec: 1000 + clients + rep });
        }
      }
    }
  }
  const df = pl.DataFrame(rows);
  const cells = cellCounts(df, "server").select("test", "clients").toRecords();
  const cmp = compare(df, { by: "server", baseline: "redis" }).select("test", "clients")
    .toRecords();
  assert.deepEqual(cells, cmp);
  assert.deepEqual(cells.map((r) => `${r.test} ${r.clients}`), [
    "SET 1",
    "SET 50",
    "GET 1",
    "GET 50",
  ]);
});
