/**
 * Deciding with the fewest runs: sample-size advice for an inconclusive cell (`sample_size.ts`)
 * and the sequential verdict `kvlab run --until-decided` looks at after every round
 * (`sequential.ts`: an anytime-valid t-test on log values, whose error stays at its level under
 * any number of looks).
 *
 * @module
 */

export * from "./sample_size.ts";
export * from "./sequential.ts";
