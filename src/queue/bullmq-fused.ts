import { createRequire } from 'node:module';

/**
 * BullMQ's own Lua scripts, as installed, run inside ours: a step of the mailbox and BullMQ's
 * step in one round trip (fetch-acquire.ts in the worker, push-add.ts in the ingress). The text
 * is read from the installed package when the process starts, never copied into this repo, so
 * an upgrade needs no copy re-checked; a BullMQ without the script, or whose call no longer
 * has the expected shape, is left to run its own command.
 */

interface BullmqScript {
  name: string;
  content: string;
  keys: number;
}

const require = createRequire(import.meta.url);
const bullmqScripts = require('bullmq/dist/cjs/scripts/index.js') as Record<string, BullmqScript>;
/** BullMQ's own MessagePack codec (its dependency), to read the arguments it packs for a script. */
const { unpack } = createRequire(require.resolve('bullmq'))('msgpackr') as { unpack: (packed: Uint8Array) => unknown };

/** An argument BullMQ packed with MessagePack (e.g. `addStandardJob`'s ARGV[1]), read back; undefined when it is not one. */
export function unpackBullmqArg(arg: unknown): unknown {
  if (!(arg instanceof Uint8Array)) return undefined;
  try {
    return unpack(arg);
  } catch {
    return undefined;
  }
}

/** BullMQ scripts inside one of ours: how it is called, and its Lua. */
export interface FusedScript {
  /** The name it is defined under on a client. */
  name: string;
  lua: string;
}

/** How many keys BullMQ's script `command` takes; undefined when the installed BullMQ has no such script. */
export function bullmqKeyCount(command: string): number | undefined {
  const script = bullmqScripts[command];
  return script && typeof script.content === 'string' && typeof script.keys === 'number' ? script.keys : undefined;
}

/**
 * Our script `name`: each of BullMQ's scripts in `functions` (Lua function name → BullMQ
 * command) as `local function <fn>(KEYS, ARGV) <BullMQ's script> end`, so our part calls it with
 * the keys and arguments BullMQ's script expects, then `prelude` and our part. Undefined when the
 * installed BullMQ lacks one of them.
 */
export function fuseBullmq(name: string, functions: Record<string, string>, prelude: string, ownPart: string): FusedScript | undefined {
  const parts: string[] = [];
  for (const [fn, command] of Object.entries(functions)) {
    if (bullmqKeyCount(command) === undefined) return undefined;
    parts.push(`local function ${fn}(KEYS, ARGV)`, bullmqScripts[command]!.content, 'end');
  }
  return { name: `agentBridge_${name}`, lua: [...parts, prelude, ownPart].join('\n') };
}

/** A client BullMQ runs its commands on: its Lua commands are called by name. */
interface CommandClient {
  defineCommand?: (name: string, definition: { numberOfKeys: number; lua: string }) => void;
  runCommand: (name: string, args: unknown[]) => Promise<unknown>;
}

/** Runs fused scripts on BullMQ's clients, defining each on a client the first time. */
export class FusedRunner {
  /** The fused commands each client has had defined. */
  private readonly defined = new WeakMap<object, Set<string>>();

  /** Whether `client` can run a fused script (BullMQ's ioredis clients can). */
  canRun(client: unknown): boolean {
    return typeof (client as CommandClient).defineCommand === 'function';
  }

  run(client: unknown, script: FusedScript, numberOfKeys: number, args: unknown[]): Promise<unknown> {
    const c = client as CommandClient;
    let names = this.defined.get(c);
    if (!names) this.defined.set(c, (names = new Set()));
    if (!names.has(script.name)) {
      c.defineCommand!(script.name, { numberOfKeys, lua: script.lua });
      names.add(script.name);
    }
    return c.runCommand(script.name, args);
  }
}
