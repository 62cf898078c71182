/**
 * Pieces the chart builders share: the spec head (schema, title, theme), test order and the
 * test axis.
 *
 * @module
 */

import { THEME, VEGA_LITE_SCHEMA, type VegaLiteSpec } from "./theme.ts";

export type Rec = Record<string, unknown>;

/** The head of a spec: schema, title (with a subtitle) and theme. */
export function base(title: string | undefined, subtitle?: string): VegaLiteSpec {
  return {
    $schema: VEGA_LITE_SCHEMA,
    ...(title ? { title: subtitle ? { text: title, subtitle } : title } : {}),
    config: THEME,
  };
}

/** Tests in order of first appearance (as the tool printed them). */
export function testOrder(records: Rec[]): string[] {
  return [...new Set(records.map((r) => String(r.test)))];
}
