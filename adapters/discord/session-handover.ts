import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from 'discord.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { errorFields } from '../../src/logger.js';
import { catchUp } from './catch-up.js';
import { GatewaySessions, type GatewaySession, type RawPacket } from './gateway-sessions.js';
import { LiveCreates } from './live-creates.js';

/**
 * The close code a stopping process closes its shards with: any code but 1000/1001 keeps the
 * session resumable (4200 is what @discordjs/ws itself uses to resume), so the next process can
 * RESUME it. discord.js's own `destroy()` closes with 1000, which ends the session.
 */
const RESUMABLE_CLOSE = 4200;

/** Pauses before catching up again on a session whose catch-up was interrupted (ms). */
const CATCH_UP_RETRIES = [1_000, 3_000];

/** The parts of discord.js's internal gateway manager a handover needs (not in its typings). */
interface GatewayInternals {
  handlePacket?: (packet: unknown, shard: unknown) => boolean;
  shards: { get(id: number): unknown };
  _ws?: { destroy(options: { code: number; reason: string }): Promise<void> } | null;
}

/**
 * How the adapter handles a replayed message event besides discord.js's own handling: what its
 * `raw` listener does with a live one (packets handed to discord.js's `handlePacket` fire no
 * `raw` event), and when what the event queued in its channel has settled.
 */
export interface ReplayedEvents {
  /** What the `raw` listener does with a MESSAGE_UPDATE or MESSAGE_DELETE(_BULK): called before discord.js handles it, as live. */
  raw(packet: RawPacket): void;
  /** Resolves once everything queued so far in this channel (the event's handling among it) has settled. */
  settled(channelId: string): Promise<void>;
}

/**
 * Shards handed from one process to the next without losing messages: this process's sessions
 * are recorded (gateway-sessions.ts) and left resumable when it stops; sessions earlier processes
 * left are caught up on (catch-up.ts) once this client is ready.
 */
export interface SessionHandover {
  /** Every raw packet of the client (its `raw` event). */
  onPacket(packet: RawPacket, shardId: number, shardCount: number): void;
  /** A message's handling, which settles once it is stored (or dropped on purpose). */
  track(messageId: string, done: Promise<void>): void;
  /** The handling of an edit or a deletion (sequence `s` of the shard), which settles once applied (or failed). */
  trackChange(shardId: number, s: number, done: Promise<void>): void;
  /** The client is ready (catch-ups start) or no longer (undefined: being replaced). */
  setClient(client: Client | undefined, replayed?: ReplayedEvents): void;
  /**
   * Ends the catch-ups (`signal` aborted by then), closes the client's shards resumably, waits
   * for `drained` (every message received handled) and records the sessions as stopped.
   */
  stop(client: Client | undefined, drained: () => Promise<void>): Promise<void>;
  /**
   * Closes a client this process replaces (a reconnect without the Message Content intent) with
   * its sessions left resumable: the new client's READYs hand them to a catch-up, so what they
   * got in between is not lost. discord.js's `destroy()` alone closes with 1000, which ends them.
   */
  replace(old: Client): Promise<void>;
}

export function createSessionHandover(deps: { redis: Redis; prefix: string; token: string; logger: Logger; signal: AbortSignal }): SessionHandover {
  const { logger } = deps;
  /** Messages being handled, by message ID: a catch-up waits for those it replayed. */
  const handling = new Map<string, Promise<void>>();
  /** The messages this process's own connections delivered: a replayed create of another is handled even when cached. */
  const liveCreates = new LiveCreates();
  /** Sessions of processes before this one, to catch up on once the client is ready. */
  const predecessors: GatewaySession[] = [];
  const catchUps = new Set<Promise<void>>();
  let client: Client | undefined;
  let replayedEvents: ReplayedEvents | undefined;
  const sessions = new GatewaySessions({
    redis: deps.redis,
    prefix: deps.prefix,
    logger,
    onPredecessor: (previous) => {
      predecessors.push(previous);
      startCatchUps();
    },
  });

  function startCatchUps(): void {
    const c = client;
    if (!c || deps.signal.aborted) return;
    const replayed = replayedEvents;
    for (const previous of predecessors.splice(0)) {
      const run: Promise<void> = catchUpOn(c, previous, replayed).finally(() => catchUps.delete(run));
      catchUps.add(run);
    }
  }

  /** RESUMEs a session another process left and hands the replayed message events to this client. */
  async function catchUpOn(c: Client, seen: GatewaySession, replayed: ReplayedEvents | undefined): Promise<void> {
    const shardId = seen.shardId;
    // Its process may still run (a deploy starting the new process first): wait until it is gone.
    const previous = await sessions.whenGone(seen, deps.signal);
    if (!previous || deps.signal.aborted) return;
    const internals = c.ws as unknown as GatewayInternals;
    const attempt = () =>
      catchUp({
        session: previous,
        token: deps.token,
        signal: deps.signal,
        onMessage: async (packet) => {
          if (typeof internals.handlePacket !== 'function') throw new Error('discord.js no longer has WebSocketManager.handlePacket');
          const shard = internals.shards.get(shardId);
          if (packet.t !== 'MESSAGE_CREATE') {
            // An edit or a deletion: as live, the raw listener's part, then discord.js's (its
            // messageUpdate), each queued behind the channel's earlier messages.
            replayed?.raw(packet);
            internals.handlePacket(packet, shard);
            const channelId = (packet.d as { channel_id?: unknown } | undefined)?.channel_id;
            if (typeof channelId === 'string') await replayed?.settled(channelId);
            return;
          }
          // As if it had come on this client's own connection: the same listeners handle it.
          liveCreates.uncacheUnseen(c, packet);
          internals.handlePacket(packet, shard);
          liveCreates.handedOver(packet);
          const id = (packet.d as { id?: unknown } | undefined)?.id;
          await (typeof id === 'string' ? handling.get(id) : undefined);
        },
      });
    let result = await attempt();
    // A connection that failed or an op 7 leaves the session resumable: giving up at once would
    // lose what it holds. A message replayed twice is one job (the ingress dedupe).
    for (let n = 0; n < CATCH_UP_RETRIES.length && result.outcome === 'failed' && result.retry && !deps.signal.aborted; n++) {
      logger.info({ shardId, reason: result.reason }, 'discord catch-up on a previous session interrupted: resuming it again');
      await sleep(CATCH_UP_RETRIES[n]!, undefined, { signal: deps.signal }).catch(() => {});
      if (deps.signal.aborted) result = { outcome: 'failed', reason: 'stopped' };
      else result = await attempt();
    }
    if (result.outcome !== 'failed' || result.reason !== 'stopped') {
      await sessions.forget(previous).catch((err: unknown) => logger.warn({ ...errorFields(err), shardId }, 'discord gateway session record could not be removed'));
    }
    if (previous.earlierHere) {
      if (result.outcome === 'resumed') {
        logger.info({ shardId, replayed: result.replayed, messages: result.messages }, 'discord shard caught up on its session before it identified again');
      } else if (result.outcome === 'expired') {
        logger.warn(
          { shardId },
          'discord ended the session this shard had before it identified again (op 9, or a close that ends it): messages sent to this shard while it reconnected (a few seconds) were not received',
        );
      } else if (result.reason !== 'stopped') {
        logger.error({ shardId, reason: result.reason }, "discord catch-up on the shard's session before it identified again failed: messages sent while it reconnected may be missing");
      }
      return;
    }
    if (result.outcome === 'resumed') {
      logger.info({ shardId, replayed: result.replayed, messages: result.messages }, 'discord shard caught up on the session its previous process left');
    } else if (result.outcome === 'expired') {
      logger.warn(
        { shardId },
        "discord could not resume the session this shard's previous process left (it ended, or Discord's resume window passed): " +
          'messages sent to this shard while no process held it were not received',
      );
    } else if (result.reason !== 'stopped') {
      logger.error({ shardId, reason: result.reason }, "discord catch-up on the shard's previous session failed: messages sent while no process held it may be missing");
    }
  }

  async function closeResumably(c: Client, reason: string): Promise<void> {
    await (c.ws as unknown as GatewayInternals)._ws
      ?.destroy({ code: RESUMABLE_CLOSE, reason })
      .catch((err: unknown) => logger.warn({ ...errorFields(err) }, 'discord shards could not be closed resumably'));
  }

  return {
    onPacket: (packet, shardId, shardCount) => {
      liveCreates.onPacket(packet);
      sessions.onPacket(packet, shardId, shardCount);
    },
    async replace(old) {
      await closeResumably(old, 'agent-bridge reconnecting without the Message Content intent');
      await old.destroy();
    },
    track(messageId, done) {
      handling.set(messageId, done);
      void done.finally(() => {
        if (handling.get(messageId) === done) handling.delete(messageId);
        sessions.handled(messageId);
      });
    },
    trackChange(shardId, s, done) {
      void done.finally(() => sessions.changeHandled(shardId, s)).catch(() => {});
    },
    setClient(c, replayed) {
      client = c;
      replayedEvents = c ? replayed : undefined;
      startCatchUps();
    },
    async stop(c, drained) {
      client = undefined;
      // Halted by now: catch-ups end at once, leaving those sessions resumable.
      await Promise.allSettled([...catchUps]);
      if (c) await closeResumably(c, 'agent-bridge restarting');
      await drained();
      // The next process for these shards RESUMEs them and gets what is sent until it runs.
      await sessions.stop(c !== undefined);
    },
  };
}
