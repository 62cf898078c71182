// The fixed-rate model: the sustained rule and skip-after-NS, as properties over random steps.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  DEFAULT_SUSTAINED_RULE,
  firstNotSustained,
  isSkipped,
  SkipAfterNs,
  type SustainedVerdict,
  sustainedVerdict,
} from "../src/fixed_rate.ts";

const ORDER: Record<SustainedVerdict, number> = { NS: 0, sustained: 1, over: 2 };
const rate = fc.double({ min: 1, max: 1e7, noNaN: true });

Deno.test("sustainedVerdict() is the one rule, edges included", async (t) => {
  await t.step("more achieved never makes a worse verdict (NS < sustained < over)", () => {
    fc.assert(fc.property(rate, rate, rate, (req, a, b) => {
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      const v = (x: number) =>
        ORDER[sustainedVerdict({ requestedOpsPerSec: req, achievedOpsPerSec: x })];
      return v(lo) <= v(hi);
    }));
  });
  await t.step("away from the bounds it is the plain comparison; on them, sustained", () => {
    const { min, max } = DEFAULT_SUSTAINED_RULE;
    fc.assert(fc.property(rate, rate, (req, achieved) => {
      const r = achieved / req;
      const v = sustainedVerdict({ requestedOpsPerSec: req, achievedOpsPerSec: achieved });
      if (Math.abs(r - min) < 1e-6 || Math.abs(r - max) < 1e-6) return true;
      return v === (r < min ? "NS" : r > max ? "over" : "sustained");
    }));
    for (const req of [3, 17, 49, 99_984, 399_840]) {
      const at = (x: number) => sustainedVerdict({ requestedOpsPerSec: req, achievedOpsPerSec: x });
      assert.equal(at(req * min), "sustained", `${req} × ${min}`);
      assert.equal(at(req * max), "sustained", `${req} × ${max}`);
    }
  });
  await t.step("no achieved rate is NS; a requested rate of 0 is refused", () => {
    assert.equal(sustainedVerdict({ requestedOpsPerSec: 10, achievedOpsPerSec: null }), "NS");
    assert.equal(sustainedVerdict({ requestedOpsPerSec: 10, achievedOpsPerSec: NaN }), "NS");
    assert.throws(
      () => sustainedVerdict({ requestedOpsPerSec: 0, achievedOpsPerSec: 1 }),
      RangeError,
    );
  });
});

Deno.test("SkipAfterNs skips what firstNotSustained and isSkipped say, in any order", () => {
  const step = fc.record({
    requestedOpsPerSec: fc.integer({ min: 1, max: 1000 }),
    achievedOpsPerSec: fc.option(fc.integer({ min: 0, max: 1100 }), { nil: null }),
  });
  fc.assert(
    fc.property(
      fc.array(step, { maxLength: 12 }),
      fc.integer({ min: 1, max: 1000 }),
      (steps, probe) => {
        const sweeps = new SkipAfterNs();
        const judged = steps.map((s) => ({ ...s, verdict: sweeps.note("a", s) }));
        const first = firstNotSustained(judged);
        assert.equal(sweeps.skips("a", probe), isSkipped(probe, first) ? first : null);
        assert.equal(sweeps.skips("b", probe), null);
      },
    ),
  );
});
