import { createRedisBackend, type BackendFactory, type RedisQueueBackend } from 'bullmq';
import { FusedRunner, bullmqKeyCount, fuseBullmq, type FusedScript } from './bullmq-fused.js';
import { scriptText } from './lua-script.js';
import type { AcquireResult, Mailbox } from './mailbox.js';
import type { ChatJobData } from './types.js';

/**
 * The mailbox's first and last step of a job in BullMQ's own round trips: one each fewer.
 *
 * BullMQ fetches a job in its `moveToActive` script, or in `moveToFinished` when a job ends
 * and the worker takes the next one at once. This backend (BullMQ's own Redis backend, handed
 * to the Worker through its public `backendFactory`) runs those two scripts as a copy of the
 * installed BullMQ's text inside scripts/fetch-acquire.lua, which
 *
 * - acquires the conversation of the job BullMQ's half handed over (the fetch that acquires):
 *   the reply is kept here until the job's processor takes it ({@link FetchAcquire.take});
 * - when the processor said so ({@link FetchAcquire.finishWith}), first finishes the head the
 *   finishing job answered, as the worker's advance would (the finish that advances). A message
 *   that arrived meanwhile is handed to a new job ({@link FetchAcquireOptions.handOff}).
 *
 * A job that comes without an acquire (other fetch paths, a BullMQ whose scripts no longer have
 * the shape this was written for) is acquired the usual way, and a finish that was not asked
 * for, or not run this way, leaves the head to the next holder's resume: the saving never
 * changes an outcome.
 */

/** The scripts that hand a job over, with where their packed options are and how many arguments they take. */
const FETCHES = {
  moveToActive: { optsArg: 3, argCount: 3 },
  moveToFinished: { optsArg: 8, argCount: 9 },
} as const;
type FetchCommand = keyof typeof FETCHES;

const ownPart = scriptText('fetch-acquire.lua');

/** The fused command that stands for each BullMQ command it replaces (none when BullMQ lacks the script). */
const fusedScripts = new Map<string, FusedScript & { keys: number; argCount: number }>();
for (const command of Object.keys(FETCHES) as FetchCommand[]) {
  const { optsArg, argCount } = FETCHES[command];
  const script = fuseBullmq(command, { bullmq: command }, `local optsArg, own = ${optsArg}, ${argCount + 1}`, ownPart);
  if (script) fusedScripts.set(command, { ...script, keys: bullmqKeyCount(command)!, argCount });
}

/** The Lua of BullMQ's script `command` run inside ours, or undefined when BullMQ has no such script. */
export function fetchAcquireLua(command: FetchCommand): string | undefined {
  return fusedScripts.get(command)?.lua;
}

/** What the job that finishes answered, for the finish that advances. */
export interface Finish {
  conversationId: string;
  messageId: string;
  /** The message's channel backlog key (Mailbox.keys.backlogOf). */
  pendingKey: string;
  /** The finishing job's data, for the job a message that arrived meanwhile is handed to. */
  data: ChatJobData;
}

export interface FetchAcquireOptions {
  mailbox: Mailbox;
  /**
   * As acquire's `startCall`: the lock duration to renew while marking a fetched head's call
   * started, or 0 to only read (at-most-once).
   */
  lockMs: number;
  /**
   * A finish that advanced found a message that arrived during the job's last answer: the
   * lease is `jobId`'s now; queue that job (a failure is healed by the stranded sweep).
   * `backlog` is the channel's unfinished messages, for the job's place in line.
   */
  handOff?: (finished: Finish, head: string, jobId: string, backlog: number) => Promise<void>;
}

interface Fetched {
  token: string;
  reply: unknown;
  sentAt: number;
}

/** {BullMQ's reply, acquire, token, hand-off head, channel backlog} (fetch-acquire.lua). */
type FusedReply = [unknown, unknown, string | null, string | null, number | null];

export class FetchAcquire {
  /** Acquire replies of fetched jobs not yet taken by the processor, by job ID. */
  private readonly fetched = new Map<string, Fetched>();
  /** Heads to finish with the job's completion, by job ID. */
  private readonly finishing = new Map<string, Finish>();
  private readonly extraArgs: Array<string | number>;
  private handOffs = 0;
  /** How many fetches acquired, finishes advanced and hand-offs were made (the tests check the short road is taken). */
  readonly counts = { acquiredOnFetch: 0, advancedOnFinish: 0, handedOff: 0 };

  constructor(private readonly options: FetchAcquireOptions) {
    this.extraArgs = options.mailbox.fetchAcquireArgs(options.lockMs);
  }

  /** The acquire a fetch did for this job with this lock token, once; undefined when none did. */
  take(jobId: string, token: string | undefined): AcquireResult | undefined {
    const fetched = this.fetched.get(jobId);
    if (!fetched) return undefined;
    this.fetched.delete(jobId);
    if (fetched.token !== token) return undefined;
    return this.options.mailbox.fetchedAcquire(fetched.reply, this.options.lockMs, fetched.sentAt);
  }

  /**
   * The job's processor answered `finish` and returns now: its completion finishes that head
   * (what advance does after the last post) in the same round trip. Set right before returning.
   */
  finishWith(jobId: string, finish: Finish): void {
    this.finishing.set(jobId, finish);
  }

  /** For BullMQ's `Worker` (its fourth argument). */
  readonly backendFactory: BackendFactory<RedisQueueBackend> = (name, opts, flags) => {
    const backend = createRedisBackend(name, opts, flags);
    const run = backend.execCommand.bind(backend);
    const runner = new FusedRunner();
    backend.execCommand = (client, commandName, args) => {
      const fused = fusedScripts.get(commandName);
      if (!fused || !runner.canRun(client)) return run(client, commandName, args);
      const { keys, argCount } = fused;
      // A BullMQ whose call no longer has the shape this copy was written for: its own way.
      if (args.length > keys + argCount) return run(client, commandName, args);
      // BullMQ leaves an unused last argument undefined; ours follow it, so it is sent empty.
      const sent: unknown[] = args.map((arg) => arg ?? '');
      while (sent.length < keys + argCount) sent.push('');
      const finishing = commandName === 'moveToFinished' ? this.finishArgs(String(sent[keys]), sent[keys + 4]) : undefined;
      sent.push(...this.extraArgs);
      if (finishing) sent.push(...finishing.args);
      const sentAt = performance.now();
      return runner.run(client, fused, keys, sent).then(async (reply) => {
        const [bullmqReply, acquired, token, handoff, backlog] = reply as FusedReply;
        if (acquired) this.keep(bullmqReply, acquired, token, sentAt);
        // A negative code is BullMQ's half refusing, normally for a lock that is not the job's,
        // which ours checked first too: not counted as a finish.
        if (finishing && !(typeof bullmqReply === 'number' && bullmqReply < 0)) {
          this.counts.advancedOnFinish++;
          if (handoff) await this.handOff(finishing, handoff, Number(backlog) || 0);
        }
        return bullmqReply;
      });
    };
    return backend;
  };

  /** The finish that advances, for this job's completion (`target` = BullMQ's 'completed' or 'failed'). */
  private finishArgs(jobId: string, target: unknown) {
    const finish = this.finishing.get(jobId);
    if (!finish) return undefined;
    this.finishing.delete(jobId);
    // Only a job that returned asked for it; a failure leaves the head to the next holder.
    if (target !== 'completed') return undefined;
    const nextJobId = `${jobId.replace(/-h-[0-9a-z]+$/, '')}-h-${Date.now().toString(36)}${(this.handOffs++ % 1296).toString(36)}`;
    return { finish, jobId, nextJobId, args: [finish.conversationId, finish.messageId, finish.pendingKey, nextJobId, 0] };
  }

  private async handOff(finishing: { finish: Finish; jobId: string; nextJobId: string }, head: string, backlog: number): Promise<void> {
    this.counts.handedOff++;
    await this.options.handOff?.(finishing.finish, head, finishing.nextJobId, backlog);
  }

  private keep(bullmqReply: unknown, acquired: unknown, token: string | null, sentAt: number): void {
    // BullMQ's reply: [job fields, job ID, rate-limit delay, delay until].
    const jobId = Array.isArray(bullmqReply) ? bullmqReply[1] : undefined;
    if (typeof jobId !== 'string' || !token) return;
    this.fetched.set(jobId, { token, reply: acquired, sentAt });
    this.counts.acquiredOnFetch++;
  }
}
