import { createRequire } from 'node:module';
import { createRedisBackend, type BackendFactory, type RedisQueueBackend } from 'bullmq';
import { scriptText } from './lua-script.js';
import type { AcquireResult, Mailbox } from './mailbox.js';

/**
 * A worker's fetch that also takes the fetched job's conversation (the mailbox's acquire), in
 * BullMQ's own round trip: one round trip fewer for every job.
 *
 * BullMQ fetches a job in its `moveToActive` script, or in `moveToFinished` when a job ends
 * and the worker takes the next one at once. This backend (BullMQ's own Redis backend, handed
 * to the Worker through its public `backendFactory`) runs those two scripts as a copy of the
 * installed BullMQ's text followed by scripts/fetch-acquire.lua, which acquires for the job
 * BullMQ's half handed over. The reply, with BullMQ's part unchanged, is kept here until the
 * worker's processor takes it ({@link FetchAcquire.take}); a job that comes without one (other
 * fetch paths, a BullMQ whose scripts no longer match) is acquired the usual way, so this is
 * only ever a saving, never a different outcome.
 */

interface BullmqScript {
  name: string;
  content: string;
  keys: number;
}

const require = createRequire(import.meta.url);
const bullmqScripts = require('bullmq/dist/cjs/scripts/index.js') as Record<string, BullmqScript>;

/** The scripts that hand a job over, with where their packed options are and how many arguments they take. */
const FETCHES = {
  moveToActive: { optsArg: 3, argCount: 3 },
  moveToFinished: { optsArg: 8, argCount: 9 },
} as const;
type FetchCommand = keyof typeof FETCHES;

const ownPart = scriptText('fetch-acquire.lua');

/** The Lua of BullMQ's script `command` followed by ours, or undefined when BullMQ has no such script. */
export function fetchAcquireLua(command: FetchCommand): string | undefined {
  const script = bullmqScripts[command];
  if (!script || typeof script.content !== 'string') return undefined;
  const { optsArg, argCount } = FETCHES[command];
  return [
    'local function bullmq()',
    script.content,
    'end',
    `local optsArg, own = ${optsArg}, ${argCount + 1}`,
    ownPart,
  ].join('\n');
}

interface Fetched {
  token: string;
  reply: unknown;
  sentAt: number;
}

/** A client BullMQ runs its commands on: its Lua commands are called by name. */
interface CommandClient {
  defineCommand?: (name: string, definition: { numberOfKeys: number; lua: string }) => void;
  runCommand: (name: string, args: unknown[]) => Promise<unknown>;
}

export class FetchAcquire {
  /** Acquire replies of fetched jobs not yet taken by the processor, by job ID. */
  private readonly fetched = new Map<string, Fetched>();
  private readonly extraArgs: Array<string | number>;
  /** How many fetches acquired (for tests and the bench: proves the short road is taken). */
  acquiredOnFetch = 0;

  /**
   * @param lockMs - as acquire's `startCall`: the lock duration to renew while marking the
   *   head's call started, or 0 to only read (at-most-once).
   */
  constructor(
    private readonly mailbox: Mailbox,
    private readonly lockMs: number,
  ) {
    this.extraArgs = mailbox.fetchAcquireArgs(lockMs);
  }

  /** The acquire a fetch did for this job with this lock token, once; undefined when none did. */
  take(jobId: string, token: string | undefined): AcquireResult | undefined {
    const fetched = this.fetched.get(jobId);
    if (!fetched) return undefined;
    this.fetched.delete(jobId);
    if (fetched.token !== token) return undefined;
    return this.mailbox.fetchedAcquire(fetched.reply, this.lockMs, fetched.sentAt);
  }

  /** For BullMQ's `Worker` (its fourth argument). */
  readonly backendFactory: BackendFactory<RedisQueueBackend> = (name, opts, flags) => {
    const backend = createRedisBackend(name, opts, flags);
    const run = backend.execCommand.bind(backend);
    /** The fused commands each client has had defined. */
    const defined = new WeakMap<object, Set<string>>();
    backend.execCommand = (client, commandName, args) => {
      const fused = this.fused(commandName);
      const c = client as unknown as CommandClient;
      if (!fused || typeof c.defineCommand !== 'function') return run(client, commandName, args);
      const { keys, argCount } = fused;
      // A BullMQ whose call no longer has the shape this copy was written for: its own way.
      if (args.length > keys + argCount) return run(client, commandName, args);
      let names = defined.get(client);
      if (!names) defined.set(client, (names = new Set()));
      if (!names.has(fused.name)) {
        c.defineCommand(fused.name, { numberOfKeys: keys, lua: fused.lua });
        names.add(fused.name);
      }
      // BullMQ leaves an unused last argument undefined; ours follow it, so it is sent empty.
      const own = [...args];
      while (own.length < keys + argCount) own.push('');
      const sentAt = performance.now();
      return c.runCommand(fused.name, [...own.map((a) => a ?? ''), ...this.extraArgs]).then((reply) => {
        this.keep(reply, sentAt);
        return reply;
      });
    };
    return backend;
  };

  private readonly scripts = new Map<string, { name: string; lua: string; keys: number; argCount: number } | null>();

  private fused(commandName: string) {
    if (!(commandName in FETCHES)) return undefined;
    let fused = this.scripts.get(commandName);
    if (fused === undefined) {
      const lua = fetchAcquireLua(commandName as FetchCommand);
      const script = bullmqScripts[commandName];
      fused = lua && script ? { name: `agentBridge_${commandName}`, lua, keys: script.keys, argCount: FETCHES[commandName as FetchCommand].argCount } : null;
      this.scripts.set(commandName, fused);
    }
    return fused ?? undefined;
  }

  private keep(reply: unknown, sentAt: number): void {
    // [job fields, job ID, rate-limit delay, delay until, acquire reply, token] (fetch-acquire.lua).
    if (!Array.isArray(reply) || reply.length < 6 || typeof reply[1] !== 'string') return;
    this.fetched.set(reply[1], { token: String(reply[5]), reply: reply[4], sentAt });
    this.acquiredOnFetch++;
  }
}
