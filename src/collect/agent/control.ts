/**
 * The control connection of agents and coordinator: a Redis server (an ACL user and TLS as any
 * server URL kvlab takes) whose streams carry the protocol's messages (`./protocol.ts`). Every
 * call is bounded in time (the client's command timeout; blocking reads shorter than it), and
 * every read is bounded in count; messages read back are checked, and one that is not the
 * protocol's comes back as a problem, never as data.
 *
 * @module
 */

import type { Redis } from "ioredis";
import { connect } from "../server.ts";
import type { ServerTarget } from "../target.ts";
import { redactText } from "../../text/redact.ts";
import { clockOffset, timeReplyMs, type TimeSample } from "./clock.ts";
import {
  type AgentMessage,
  AgentProtocolError,
  type ClockOffset,
  encodeAgentMessage,
  parseAgentMessage,
} from "./protocol.ts";

/** One entry read from a stream: its id and its message, or why it is not one. */
export type ControlEntry =
  | { id: string; message: AgentMessage; problem?: undefined }
  | { id: string; message?: undefined; problem: AgentProtocolError };

/** The longest a blocking read waits, ms (below the client's command timeout). */
export const BLOCK_MS = 1000;
/** The most entries one read returns. */
const READ_COUNT = 100;
/** The most entries a stream keeps (XADD MAXLEN ~). */
const STREAM_MAXLEN = 10_000;

/** A connection to the control server. */
export class ControlConnection {
  readonly #client: Redis;
  /** The control server, redacted. */
  readonly display: string;

  private constructor(client: Redis, display: string) {
    this.#client = client;
    this.display = display;
  }

  /**
   * Connects (fails fast: the caller decides whether to try again).
   *
   * @param target The control server.
   * @param timeoutMs Connect and command timeout. @default {5000}
   * @throws {ServerUnreachableError} When it cannot be reached.
   */
  static async open(target: ServerTarget, timeoutMs = 5000): Promise<ControlConnection> {
    return new ControlConnection(await connect(target, timeoutMs), target.display);
  }

  /** The control server's clock, epoch ms. */
  async timeMs(): Promise<number> {
    return timeReplyMs(await this.#client.call("TIME"));
  }

  /**
   * This host's clock against the control server's, from `roundTrips` round trips of `TIME`.
   *
   * @param roundTrips @default {8}
   */
  async clock(roundTrips = 8): Promise<ClockOffset> {
    const samples: TimeSample[] = [];
    for (let i = 0; i < roundTrips; i++) {
      const sentMs = performance.timeOrigin + performance.now();
      const serverMs = await this.timeMs();
      const receivedMs = performance.timeOrigin + performance.now();
      samples.push({ sentMs, serverMs, receivedMs });
    }
    return clockOffset(samples);
  }

  /**
   * Posts a message on a stream.
   *
   * @returns The entry's id.
   */
  async post(stream: string, m: AgentMessage): Promise<string> {
    const id = await this.#client.call(
      "XADD",
      stream,
      "MAXLEN",
      "~",
      String(STREAM_MAXLEN),
      "*",
      "msg",
      encodeAgentMessage(m),
    );
    return String(id);
  }

  /** Makes a stream's consumer group (and the stream) unless it exists. */
  async ensureGroup(stream: string, group: string): Promise<void> {
    try {
      await this.#client.call("XGROUP", "CREATE", stream, group, "0", "MKSTREAM");
    } catch (e) {
      if (!/BUSYGROUP/.test((e as Error).message)) throw e;
    }
  }

  /**
   * New entries for a consumer of a group, waiting up to {@link BLOCK_MS}.
   *
   * @returns The entries (each a message or a problem), oldest first.
   */
  async readGroup(
    o: { stream: string; group: string; consumer: string; count?: number },
  ): Promise<ControlEntry[]> {
    const reply = await this.#client.call(
      "XREADGROUP",
      "GROUP",
      o.group,
      o.consumer,
      "COUNT",
      String(Math.min(o.count ?? 1, READ_COUNT)),
      "BLOCK",
      String(BLOCK_MS),
      "STREAMS",
      o.stream,
      ">",
    );
    return entriesOf(reply, o.stream);
  }

  /** Acknowledges an entry of a group. */
  async ack(stream: string, group: string, id: string): Promise<void> {
    await this.#client.call("XACK", stream, group, id);
  }

  /**
   * Entries of a stream after `afterId`, waiting up to {@link BLOCK_MS} for one.
   *
   * @returns The entries, oldest first (at most 100).
   */
  async readAfter(stream: string, afterId: string): Promise<ControlEntry[]> {
    const reply = await this.#client.call(
      "XREAD",
      "COUNT",
      String(READ_COUNT),
      "BLOCK",
      String(BLOCK_MS),
      "STREAMS",
      stream,
      afterId,
    );
    return entriesOf(reply, stream);
  }

  /** The latest `count` entries of a stream, newest first. */
  async latest(stream: string, count: number): Promise<ControlEntry[]> {
    const reply = await this.#client.call(
      "XREVRANGE",
      stream,
      "+",
      "-",
      "COUNT",
      String(Math.min(count, STREAM_MAXLEN)),
    );
    return parseEntries(reply, stream);
  }

  /** The id of a stream's last entry (`0-0` when empty). */
  async lastId(stream: string): Promise<string> {
    const [e] = await this.latest(stream, 1);
    return e?.id ?? "0-0";
  }

  /** Closes the connection. */
  close(): void {
    this.#client.disconnect();
  }
}

/** The entries of an XREAD/XREADGROUP reply for one stream. */
function entriesOf(reply: unknown, stream: string): ControlEntry[] {
  if (reply === null) return [];
  if (!Array.isArray(reply) || reply.length !== 1 || !Array.isArray(reply[0])) {
    throw new TypeError(`${stream}: unexpected reply to a stream read`);
  }
  return parseEntries(reply[0][1], stream);
}

/** Entries `[id, [field, value, …]]`, each checked as a protocol message. */
function parseEntries(list: unknown, stream: string): ControlEntry[] {
  if (!Array.isArray(list)) throw new TypeError(`${stream}: unexpected reply to a stream read`);
  return list.map((e): ControlEntry => {
    const id = Array.isArray(e) ? String(e[0]) : "?";
    const entry = `${stream}#${id}`;
    const fields = Array.isArray(e) && Array.isArray(e[1]) ? e[1].map(String) : [];
    const at = fields.indexOf("msg");
    if (at < 0 || at % 2 !== 0 || at + 1 >= fields.length) {
      return {
        id,
        problem: new AgentProtocolError("expected a field msg", { entry, field: "msg" }),
      };
    }
    try {
      return { id, message: parseAgentMessage(fields[at + 1], entry) };
    } catch (e) {
      if (e instanceof AgentProtocolError) return { id, problem: e };
      throw e;
    }
  });
}

/**
 * The words of a control-connection failure, secrets redacted.
 *
 * @param e What was thrown.
 * @returns `Name: message`.
 *
 * @example
 * ```ts
 * import { controlProblem } from "./control.ts";
 * import assert from "node:assert/strict";
 * assert.equal(controlProblem(new Error("redis://u:pw@h down")), "Error: redis://***:***@h down");
 * ```
 */
export function controlProblem(e: unknown): string {
  return redactText(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
}
