import assert from "node:assert/strict";
import { SCHEMA_VERSION, TABLES } from "../src/schema.ts";

Deno.test("SCHEMA.md documents every column of src/schema.ts, with its type", () => {
  const doc = Deno.readTextFileSync(new URL("../SCHEMA.md", import.meta.url));
  assert.match(
    doc,
    new RegExp(`^# kvlab dataset schema — version ${SCHEMA_VERSION.replace(".", "\\.")}$`, "m"),
  );
  for (const [table, cols] of Object.entries(TABLES)) {
    const start = doc.indexOf(`### \`${table}\``);
    assert.ok(start >= 0, `SCHEMA.md has no section for ${table}`);
    const section = doc.slice(start, doc.indexOf("\n### ", start + 1) >>> 0 || undefined);
    const documented = [...section.matchAll(/^\|\s*`(\w+)`\s*\|\s*(\w+)\s*\|\s*(yes|no)\s*\|/gm)]
      .map((
        m,
      ) => [m[1], m[2], m[3]]);
    assert.deepEqual(
      documented,
      cols.map((c) => [c.name, c.type, c.nullable ? "yes" : "no"]),
      table,
    );
  }
});
