import { createRedisBackend, type BackendFactory, type RedisQueueBackend } from 'bullmq';
import { FusedRunner, bullmqKeyCount, fuseBullmq, unpackBullmqArg } from './bullmq-fused.js';
import { scriptText } from './lua-script.js';
import type { Mailbox } from './mailbox.js';
import { pushResult, type LuaCall, type PushResult } from './push-record.js';
import { LOWEST_PRIORITY, addPriority } from './priority.js';

/**
 * The ingress's push of a message and the add of its job in one round trip, push first.
 *
 * The Queue's backend (BullMQ's own Redis backend, handed to the Queue through its public
 * `backendFactory`) runs BullMQ's `addStandardJob` for a job whose push is waiting
 * ({@link PushAdd.push}) as scripts/push-add.lua: the push runs, then the add the caller would
 * make after it (none, plain, or with the channel's backlog as priority) as a copy of the
 * installed BullMQ's own script. Without BullMQ's scripts, or on a client that cannot run them,
 * the same two steps run in two round trips: the saving never changes an outcome, and never
 * lets a job exist before its message.
 */

/** BullMQ's call: its keys, then packed arguments (the job's ID second), the job's data (JSON) and packed options. */
const ADD = 'addStandardJob';
const ADD_ARGS = 3;
/** push-add.lua maps addStandardJob's 9 keys onto addPrioritizedJob's. */
const ADD_KEYS = 9;
/** push-7.lua's key count, and push-add.lua's two more (BullMQ's prioritized set and its counter). */
const OWN_KEYS = 7 + 2;

const fusedAdd =
  bullmqKeyCount(ADD) === ADD_KEYS && bullmqKeyCount('addPrioritizedJob') === ADD_KEYS
    ? fuseBullmq('pushAdd', { addPlain: ADD, addPrioritized: 'addPrioritizedJob' }, `local ownKeys, own = ${ADD_KEYS + 1}, ${ADD_ARGS + 1}`, scriptText('push-add.lua'))
    : undefined;

/** The Lua of the push and BullMQ's adds in one script, or undefined when BullMQ lacks their scripts. */
export function pushAddLua(): string | undefined {
  return fusedAdd?.lua;
}

/**
 * The job the caller of a push with this result queues: none (undefined), a plain job (0), or
 * one whose priority is its channel's backlog, so a quiet channel's question runs first.
 */
export function jobPriority(pushed: PushResult): number | undefined {
  if (pushed.status === 'busy' || pushed.held) return undefined;
  return pushed.status === 'queued' ? addPriority(pushed.pending) : 0;
}

/** A push waiting for the add of its job. */
interface Waiting {
  call: LuaCall;
  jobId: string;
  /** The caller's add, for a prioritized job when the push and add cannot run in one script. */
  add: (priority: number) => Promise<unknown>;
  result?: PushResult;
}

export class PushAdd {
  /** Pushes waiting for their job's add, by job ID. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** Pushes made with their add in one script, and in two steps (the tests check the short road is taken). */
  readonly counts = { fused: 0, separate: 0 };

  constructor(private readonly mailbox: Mailbox) {}

  /**
   * Pushes a message (`call`, from Mailbox.pushCall) and adds the job {@link jobPriority} says,
   * through `add` (a Queue.add of the job with ID `jobId` and that priority): in one round trip
   * when BullMQ's scripts allow. The push's result is returned either way.
   */
  async push(call: LuaCall, jobId: string, add: (priority: number) => Promise<unknown>): Promise<PushResult> {
    if (!fusedAdd) return this.separately(call, add);
    const entry: Waiting = { call, jobId, add };
    const queue = this.waiting.get(jobId);
    if (queue) queue.push(entry);
    else this.waiting.set(jobId, [entry]);
    try {
      // A plain add reaches addStandardJob, where the script below makes the push and the add it says.
      await add(0);
    } finally {
      this.forget(jobId, entry);
    }
    if (entry.result) return entry.result;
    // BullMQ added the job without its `addStandardJob` (a version this was not written for):
    // the push follows, and the stranded sweep wakes the job if it ran in between.
    return this.separately(call, async () => {});
  }

  /** For BullMQ's `Queue` (its third argument). */
  readonly backendFactory: BackendFactory<RedisQueueBackend> = (name, opts, flags) => {
    const backend = createRedisBackend(name, opts, flags);
    const run = backend.execCommand.bind(backend);
    const runner = new FusedRunner();
    backend.execCommand = (client, commandName, args) => {
      if (commandName !== ADD || !fusedAdd || this.waiting.size === 0) return run(client, commandName, args);
      // A BullMQ whose call no longer has the shape this copy was written for: its own way.
      if (args.length !== ADD_KEYS + ADD_ARGS) return run(client, commandName, args);
      const packed = unpackBullmqArg(args[ADD_KEYS]);
      const jobId = Array.isArray(packed) ? packed[1] : undefined;
      const entry = typeof jobId === 'string' ? this.waiting.get(jobId)?.[0] : undefined;
      if (!entry) return run(client, commandName, args);
      this.forget(entry.jobId, entry);
      if (!runner.canRun(client)) {
        // A prioritized job is the caller's own add; BullMQ's plain add is told the job's ID either way.
        return this.separatelyFor(entry, (priority) => (priority ? entry.add(priority).then(() => entry.jobId) : run(client, commandName, args)));
      }
      const k = this.mailbox.keys;
      const sent = [...args.slice(0, ADD_KEYS), ...entry.call.keys, k.prioritized, k.priorityCounter, ...args.slice(ADD_KEYS), ...entry.call.args, LOWEST_PRIORITY];
      return runner.run(client, fusedAdd, ADD_KEYS + OWN_KEYS, sent).then((reply) => {
        const [pushed, added] = reply as [unknown, unknown?];
        entry.result = pushResult(pushed);
        this.counts.fused++;
        // No job added (held, or refused): BullMQ is told the job's ID, as for a job that
        // exists; the caller goes by the push's result.
        return added ?? entry.jobId;
      });
    };
    return backend;
  };

  /** The push, then the add it says: two round trips. */
  private async separately(call: LuaCall, add: (priority: number) => Promise<unknown>): Promise<PushResult> {
    const pushed = await this.mailbox.pushWith(call);
    this.counts.separate++;
    const priority = jobPriority(pushed);
    if (priority !== undefined) await add(priority);
    return pushed;
  }

  /** {@link separately} inside BullMQ's add of a plain job: that add runs only if the push says so. */
  private async separatelyFor(entry: Waiting, add: (priority: number) => Promise<unknown>): Promise<unknown> {
    let added: unknown = entry.jobId;
    entry.result = await this.separately(entry.call, async (priority) => {
      added = await add(priority);
    });
    return added;
  }

  private forget(jobId: string, entry: Waiting): void {
    const queue = this.waiting.get(jobId);
    if (!queue) return;
    const at = queue.indexOf(entry);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.waiting.delete(jobId);
  }
}
