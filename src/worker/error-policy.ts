import { BridgeError } from '../core/errors.js';
import { LONG_AGENT_WAIT_MS } from '../agent-api/retry-after.js';
import type { NoAnswerReason } from '../diagnostics/drop-log.js';

/** What the worker does after an error. Decided here and nowhere else. */
export type Decision =
  /**
   * The agent service said 429: pause the whole queue for `delayMs`, then try again (one
   * account for every channel; with per-workspace accounts the worker delays only the message).
   */
  | { action: 'rate-limit'; delayMs: number }
  /** Try this message again after `delayMs` (counts as an attempt when `counts`). */
  | { action: 'retry'; delayMs: number; counts: boolean }
  /** Stop: tell the user (per the binding's error policy) and move on. */
  | { action: 'give-up' };

/**
 * Longest a platform's 429 holds one reply (and its conversation behind it). Slack and Discord
 * ask for seconds; a Retry-After of a day (a misbehaving proxy) must not park a thread that
 * long. The agent's own is bounded where it is read (MAX_RETRY_AFTER_MS, an hour).
 */
export const PLATFORM_MAX_RETRY_AFTER_MS = 5 * 60_000;

/** A message may be rate limited this many times its attempts before the bridge gives up. */
export const RATE_LIMIT_BUDGET = 4;

export interface RetryPolicy {
  /** Attempts before giving up on a retryable error. */
  attempts: number;
  /** First backoff delay; doubles each attempt, with jitter. */
  baseDelayMs: number;
  /** Upper bound of one backoff delay. */
  maxDelayMs?: number;
  random?: () => number;
}

/**
 * Maps an error to queue behaviour. `attemptsSoFar` counts earlier failed attempts of this
 * message, not including this one.
 */
export function decide(error: unknown, attemptsSoFar: number, policy: RetryPolicy, rateLimitedSoFar = 0): Decision {
  if (!(error instanceof BridgeError)) return { action: 'give-up' };
  if (error.kind === 'rate_limited') {
    // A wait this long is a quota or plan limit, not flow control: the user is told when to try
    // again now, instead of every message waiting in silence (an hour at a time) until it is over.
    if (error.source === 'agent' && (error.retryAfterMs ?? 0) > LONG_AGENT_WAIT_MS) return { action: 'give-up' };
    // 429s are flow control, not failures, so they get a larger but still finite budget.
    if (rateLimitedSoFar + 1 >= policy.attempts * RATE_LIMIT_BUDGET) return { action: 'give-up' };
    const delayMs = Math.max(error.retryAfterMs ?? unsaidRateLimitWait(rateLimitedSoFar), 50);
    // The agent's 429 pauses every job (they all call the same service); a platform's 429
    // only concerns this reply.
    if (error.source === 'agent') return { action: 'rate-limit', delayMs };
    return { action: 'retry', delayMs: Math.min(delayMs, PLATFORM_MAX_RETRY_AFTER_MS), counts: false };
  }
  if (!error.retryable) return { action: 'give-up' };
  if (attemptsSoFar + 1 >= policy.attempts) return { action: 'give-up' };
  // A 503 saying "come back in an hour" (maintenance): told now, not after hours of silence.
  if (error.source === 'agent' && (error.retryAfterMs ?? 0) > LONG_AGENT_WAIT_MS) return { action: 'give-up' };
  // A 503 (or any retryable answer) that says when to come back is not asked sooner.
  return { action: 'retry', delayMs: Math.max(backoffDelay(attemptsSoFar, policy), error.retryAfterMs ?? 0), counts: true };
}

/** First and longest wait after a 429 that says nothing usable about when to come back. */
export const UNSAID_RATE_LIMIT_FIRST_MS = 1_000;
export const UNSAID_RATE_LIMIT_MAX_MS = 60_000;

/**
 * The wait after a 429 with no usable Retry-After: 1 s, doubled for each earlier 429 of the
 * message, at most a minute. A fixed second spent the message's whole budget within seconds
 * against a service that limits per minute without saying so, and gave up on every message queued.
 */
export function unsaidRateLimitWait(rateLimitedSoFar: number): number {
  return Math.min(UNSAID_RATE_LIMIT_FIRST_MS * 2 ** Math.min(rateLimitedSoFar, 16), UNSAID_RATE_LIMIT_MAX_MS);
}

/** How long after it came in a billed answer keeps waiting out the platform's 429s (then their budget counts). */
export const POST_PATIENCE_MS = 30 * 60_000;

/**
 * Whether a platform's 429 met while posting a recorded answer (billed) is waited out without
 * spending the budget that gives the message up: a burst of answers in one channel meets Slack's
 * one-post-a-second limit many times, and the answer must not be lost to it. Bounded in time.
 */
export function postingPatiently(error: unknown, posting: boolean, receivedAt: number, now = Date.now()): boolean {
  return posting && error instanceof BridgeError && error.source !== 'agent' && error.kind === 'rate_limited' && now - receivedAt < POST_PATIENCE_MS;
}

/** Exponential backoff with full jitter on the upper half: base·2^n · [0.5, 1). */
export function backoffDelay(attemptsSoFar: number, policy: RetryPolicy): number {
  const random = policy.random ?? Math.random;
  const cap = policy.maxDelayMs ?? 5 * 60_000;
  const exp = Math.min(policy.baseDelayMs * 2 ** attemptsSoFar, cap);
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/** What `/agent why` says of a message given up on: whose side failed, and how. */
export function giveUpReason(err: unknown): NoAnswerReason {
  if (!(err instanceof BridgeError)) return 'failed';
  if (err.source !== 'agent') return 'reply_refused';
  return err.retryable ? 'agent_failed' : 'agent_refused';
}
