import { PlatformError } from '../../src/core/errors.js';

/** `code` of a post this process held back itself (the channel's line was too long): Slack was not asked. */
export const PACED = 'paced';

/**
 * chat.postMessage has a limit of its own: about one message a second per channel. After Slack
 * answered 429 for a channel, this process's posts there wait out its Retry-After and then go
 * one at a time, each after the one before it, instead of every waiting reply asking again in
 * the same second (twelve answers at once in one channel drew 265 refusals before). A post
 * that would wait longer than `maxWaitMs` is handed back as rate limited (the queue retries it
 * later): the worker's ownership check before a post is not meant to hold for long.
 */
export class ChannelPostLine {
  private readonly channels = new Map<string, { until: number; tail: Promise<void>; waiting: number }>();

  constructor(
    private readonly maxWaitMs = 5_000,
    /** How long after its last 429 a channel's posts still go one at a time. */
    private readonly hotMs = 10_000,
  ) {}

  /** Slack refused a post in `channel` with a 429 asking for `retryAfterMs`. */
  limited(channel: string, retryAfterMs: number): void {
    const until = Date.now() + retryAfterMs;
    const entry = this.channels.get(channel);
    if (entry) entry.until = Math.max(entry.until, until);
    else this.channels.set(channel, { until, tail: Promise.resolve(), waiting: 0 });
  }

  /** Runs `post` now, or in the channel's line while Slack limits posts there. */
  async run<T>(channel: string, post: () => Promise<T>): Promise<T> {
    const entry = this.channels.get(channel);
    if (!entry) return post();
    if (entry.waiting === 0 && Date.now() > entry.until + this.hotMs) {
      this.channels.delete(channel);
      return post();
    }
    const before = entry.tail;
    let release!: () => void;
    entry.tail = new Promise<void>((resolve) => (release = resolve));
    entry.waiting += 1;
    const deadline = Date.now() + this.maxWaitMs;
    try {
      if (!(await settlesBy(before, deadline))) throw paced(Math.max(entry.until - Date.now(), 1_000));
      const wait = entry.until - Date.now();
      if (Date.now() + wait > deadline) throw paced(wait);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return await post();
    } finally {
      entry.waiting -= 1;
      release();
    }
  }
}

function paced(waitMs: number): PlatformError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new PlatformError('slack', 'rate_limited', `Slack chat.postMessage: this channel's posts are paced (Slack limits them; retry after ${seconds} s)`, {
    status: 429,
    retryAfterMs: seconds * 1000,
    code: PACED,
  });
}

/** Whether `p` settles before `deadline`. */
async function settlesBy(p: Promise<void>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()))));
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
