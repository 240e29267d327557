import { createRedisBackend, type BackendFactory, type RedisQueueBackend } from 'bullmq';
import { FusedRunner, fuseBullmq, unpackBullmqArg } from './bullmq-fused.js';
import { scriptText } from './lua-script.js';
import { pushResult, type LuaCall, type Mailbox, type PushResult } from './mailbox.js';

/**
 * The ingress's push of a message and the add of its job in one round trip, push first.
 *
 * The Queue's backend (BullMQ's own Redis backend, handed to the Queue through its public
 * `backendFactory`) runs BullMQ's `addStandardJob` for a job whose push is waiting
 * ({@link PushAdd.push}) as a copy of the installed BullMQ's text inside
 * scripts/push-add.lua: the push runs, and BullMQ's add only where the caller would add a plain
 * job. A job with a priority (its channel has a backlog) is added by the caller afterwards, as
 * before. Without BullMQ's script, or on a client that cannot run it, the same two steps run
 * in two round trips: the saving never changes an outcome, and never lets a job exist before its
 * message.
 */

/** BullMQ's call: its keys, then packed arguments (the job's ID second), the job's data (JSON) and packed options. */
const ADD = 'addStandardJob';
const ADD_ARGS = 3;
/** push-6.lua's key count. */
const PUSH_KEYS = 6;

/** push-add.lua's keys follow BullMQ's, its arguments follow BullMQ's. */
const fusedAdd = fuseBullmq(ADD, (keys) => `local ownKeys, own = ${keys + 1}, ${ADD_ARGS + 1}`, scriptText('push-add.lua'));

/** The Lua of the push and BullMQ's add in one script, or undefined when BullMQ has no `addStandardJob`. */
export function pushAddLua(): string | undefined {
  return fusedAdd?.lua;
}

/** Whether the caller of a push with this result queues the message's job as a plain job. */
export function addsPlainJob(pushed: PushResult): boolean {
  return pushed.status !== 'busy' && !pushed.held && (pushed.status === 'duplicate' || pushed.pending <= 1);
}

/** A push waiting for the add of its job. */
interface Waiting {
  call: LuaCall;
  jobId: string;
  result?: PushResult;
}

export class PushAdd {
  /** Pushes waiting for their job's add, by job ID. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** Pushes made with their add in one script, and in two steps (the tests check the short road is taken). */
  readonly counts = { fused: 0, separate: 0 };

  constructor(private readonly mailbox: Mailbox) {}

  /**
   * Pushes a message (`call`, from Mailbox.pushCall) and, when {@link addsPlainJob}, adds its
   * job through `add`, a Queue.add of a plain job with ID `jobId`: in one round trip when
   * BullMQ's script allows. The push's result is returned either way.
   */
  async push(call: LuaCall, jobId: string, add: () => Promise<unknown>): Promise<PushResult> {
    if (!fusedAdd) {
      const pushed = await this.mailbox.pushWith(call);
      this.counts.separate++;
      if (addsPlainJob(pushed)) await add();
      return pushed;
    }
    const entry: Waiting = { call, jobId };
    const queue = this.waiting.get(jobId);
    if (queue) queue.push(entry);
    else this.waiting.set(jobId, [entry]);
    try {
      await add();
    } finally {
      this.forget(jobId, entry);
    }
    if (entry.result) return entry.result;
    // BullMQ added the job without its `addStandardJob` (a version this was not written for):
    // the push follows, and the stranded sweep wakes the job if it ran in between.
    const pushed = await this.mailbox.pushWith(call);
    this.counts.separate++;
    return pushed;
  }

  /** For BullMQ's `Queue` (its third argument). */
  readonly backendFactory: BackendFactory<RedisQueueBackend> = (name, opts, flags) => {
    const backend = createRedisBackend(name, opts, flags);
    const run = backend.execCommand.bind(backend);
    const runner = new FusedRunner();
    backend.execCommand = (client, commandName, args) => {
      if (commandName !== ADD || !fusedAdd || this.waiting.size === 0) return run(client, commandName, args);
      const keys = fusedAdd.bullmqKeys;
      // A BullMQ whose call no longer has the shape this copy was written for: its own way.
      if (args.length !== keys + ADD_ARGS) return run(client, commandName, args);
      const packed = unpackBullmqArg(args[keys]);
      const jobId = Array.isArray(packed) ? packed[1] : undefined;
      const entry = typeof jobId === 'string' ? this.waiting.get(jobId)?.[0] : undefined;
      if (!entry) return run(client, commandName, args);
      this.forget(entry.jobId, entry);
      if (!runner.canRun(client)) return this.separately(entry, () => run(client, commandName, args));
      const sent = [...args.slice(0, keys), ...entry.call.keys, ...args.slice(keys), ...entry.call.args];
      return runner.run(client, fusedAdd, keys + PUSH_KEYS, sent).then((reply) => {
        const [pushed, added] = reply as [unknown, unknown?];
        entry.result = pushResult(pushed);
        this.counts.fused++;
        // Not added (held, refused, or a backlog's prioritized job the caller adds next): BullMQ
        // is told the job's ID, as for a job that exists; the caller goes by the push's result.
        return added ?? entry.jobId;
      });
    };
    return backend;
  };

  private async separately(entry: Waiting, add: () => Promise<unknown>): Promise<unknown> {
    entry.result = await this.mailbox.pushWith(entry.call);
    this.counts.separate++;
    return addsPlainJob(entry.result) ? add() : entry.jobId;
  }

  private forget(jobId: string, entry: Waiting): void {
    const queue = this.waiting.get(jobId);
    if (!queue) return;
    const at = queue.indexOf(entry);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.waiting.delete(jobId);
  }
}
