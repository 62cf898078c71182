/**
 * A bad HDR string outside memtier's files (issue 21): one in a dataset's `hdr_histograms`
 * table names its source (the run and test), not a bare "not a compressed HdrHistogram" or an
 * inflate error with no file.
 */

import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { hdrDistribution } from "../../src/analyze/histograms/distribution.ts";
import { mergedPercentiles } from "../../src/analyze/histograms/rows.ts";

const results = pl.DataFrame({
  run_id: ["r1\x1b[2J"],
  test_index: [0],
  test: ["GET"],
  latency_basis: ["send"],
});

for (
  const [name, bad] of [
    ["base64 that is no histogram", "HISTFAAAbogus"],
    ["no base64 at all", "\x1b]0;pwned\x07"],
    ["a valid prefix, then cut", "HISTFAAAACh4nJNpmSzMwMDAxAABzFCaEUz"],
  ]
) {
  Deno.test(`hostile: a bad hdr_histograms string (${name}) names the run and test`, () => {
    const hdrRows = pl.DataFrame({
      run_id: ["r1\x1b[2J"],
      test_index: [0],
      latency_basis: ["send"],
      source: ["json"],
      compressed: [bad],
    }).withColumns(pl.lit(null).cast(pl.Utf8).alias("aggregate"));
    assert.throws(
      () => hdrDistribution(results, hdrRows, new Set()),
      (e: Error) => {
        assert.ok(e instanceof TypeError, String(e));
        assert.match(
          e.message,
          /^not a compressed HdrHistogram in hdr_histograms of run r1\\x1b\[2J, test 0: /,
        );
        // no raw control character (tab and newline excepted)
        const control = [...e.message].filter((c) => {
          const code = c.charCodeAt(0);
          return (code < 0x20 && c !== "\t" && c !== "\n") || code === 0x7f;
        });
        assert.deepEqual(control, [], "escaped");
        return true;
      },
    );
    assert.throws(
      () => mergedPercentiles([bad]),
      /^TypeError: not a compressed HdrHistogram in the dataset's hdr_histograms table: /,
    );
  });
}
