import { describe, expect, it } from 'vitest';
import { explainFailure } from '../../src/agent-api/problem-words.js';
import { AgentApiError, PlatformError } from '../../src/core/errors.js';
import { backoffDelay, decide, PLATFORM_MAX_RETRY_AFTER_MS, POST_PATIENCE_MS, postingPatiently, RATE_LIMIT_BUDGET } from '../../src/worker/error-policy.js';


const policy = { attempts: 5, baseDelayMs: 1000, random: () => 0.5 };

describe('error policy: one place maps errors to queue behaviour', () => {
  it('retries 5xx, timeouts and network errors with exponential backoff and jitter, then gives up', () => {
    for (const kind of ['server_error', 'timeout', 'network'] as const) {
      const err = new AgentApiError(kind, 'x');
      expect(decide(err, 0, policy)).toEqual({ action: 'retry', delayMs: 750, counts: true });
      expect(decide(err, 3, policy)).toEqual({ action: 'retry', delayMs: 6000, counts: true });
      expect(decide(err, 4, policy)).toEqual({ action: 'give-up' });
    }
  });

  it('a retryable error with Retry-After (a 503) waits at least that long; a shorter one keeps the backoff', () => {
    const unavailable = (retryAfterMs: number) => new AgentApiError('server_error', 'agent service answered 503', { status: 503, retryAfterMs });
    expect(decide(unavailable(30_000), 0, policy)).toEqual({ action: 'retry', delayMs: 30_000, counts: true });
    expect(decide(unavailable(100), 0, policy)).toEqual({ action: 'retry', delayMs: 750, counts: true });
    expect(decide(unavailable(30_000), 4, policy)).toEqual({ action: 'give-up' });
  });

  it('jitter stays within [half, full) of the exponential step and is capped', () => {
    expect(backoffDelay(2, { ...policy, random: () => 0 })).toBe(2000);
    expect(backoffDelay(2, { ...policy, random: () => 0.999 })).toBe(3998);
    expect(backoffDelay(30, { ...policy, maxDelayMs: 60_000, random: () => 0 })).toBe(30_000);
  });

  it("an agent 429 pauses the queue for Retry-After; a platform 429 delays only this reply; both are bounded", () => {
    const agent429 = new AgentApiError('rate_limited', 'slow down', { retryAfterMs: 7000 });
    expect(decide(agent429, 0, policy)).toEqual({ action: 'rate-limit', delayMs: 7000 });
    const slack429 = new PlatformError('slack', 'rate_limited', 'ratelimited', { retryAfterMs: 3000 });
    expect(decide(slack429, 0, policy)).toEqual({ action: 'retry', delayMs: 3000, counts: false });
    // A day's Retry-After from a platform (a misbehaving proxy) holds the thread 5 minutes at most.
    const dayLong = new PlatformError('slack', 'rate_limited', 'ratelimited', { retryAfterMs: 86_400_000 });
    expect(decide(dayLong, 0, policy)).toEqual({ action: 'retry', delayMs: PLATFORM_MAX_RETRY_AFTER_MS, counts: false });
    expect(decide(agent429, 0, policy, policy.attempts * RATE_LIMIT_BUDGET - 1)).toEqual({ action: 'give-up' });
    // No usable Retry-After: 1 s, then twice as long for each earlier 429 of the message, at most a minute.
    const unsaid = new AgentApiError('rate_limited', 'slow down');
    expect([0, 1, 2, 5, 6, 10].map((n) => decide(unsaid, 0, policy, n))).toEqual(
      [1_000, 2_000, 4_000, 32_000, 60_000, 60_000].map((delayMs) => ({ action: 'rate-limit', delayMs })),
    );
  });

  it('gives up at once on other 4xx, invalid answers, platform refusals and unknown errors', () => {
    for (const kind of ['bad_request', 'not_found', 'unauthorized', 'forbidden', 'invalid_response'] as const) {
      expect(decide(new AgentApiError(kind, 'x'), 0, policy)).toEqual({ action: 'give-up' });
    }
    expect(decide(new PlatformError('slack', 'refused', 'not_in_channel', { code: 'not_in_channel' }), 0, policy)).toEqual({ action: 'give-up' });
    expect(decide(new TypeError('bug'), 0, policy)).toEqual({ action: 'give-up' });
  });

  it('explains each failure in plain words', () => {
    expect(explainFailure(new AgentApiError('timeout', 'x'))).toBe("The agent didn't answer in time. Please try again.");
    expect(explainFailure(new AgentApiError('server_error', 'x'))).toMatch(/having trouble/);
    expect(explainFailure(new Error('x'))).toMatch(/Something went wrong/);
  });

  it('a 409 (a stopped instance) says so with the service reason and to ask an admin', () => {
    const stopped = new AgentApiError('bad_request', 'agent service answered 409: instance demo-sleepy is stopped', { status: 409 });
    expect(explainFailure(stopped)).toBe(
      "This channel's agent instance is stopped or not ready (the agent service said: instance demo-sleepy is stopped). Please ask an admin to start it, or to bind another instance.",
    );
    expect(explainFailure(new AgentApiError('bad_request', 'agent service answered 409 Conflict', { status: 409 }))).toMatch(/^This channel's agent instance is stopped or not ready\. Please ask an admin/);
    expect(explainFailure(new AgentApiError('bad_request', 'x', { status: 400 }))).toBe("The agent service couldn't accept this message.");
  });
});

describe('postingPatiently (a billed answer meeting the platform\'s 429s)', () => {
  const now = 1_000_000_000;
  const limited = new PlatformError('slack', 'rate_limited', 'limited', { retryAfterMs: 1_000 });
  it('waits out a platform 429 while posting, within POST_PATIENCE_MS of the question', () => {
    expect(postingPatiently(limited, true, now - 1_000, now)).toBe(true);
    expect(postingPatiently(limited, true, now - POST_PATIENCE_MS - 1, now)).toBe(false);
  });
  it('not before the answer exists, nor for the agent\'s 429 or another error', () => {
    expect(postingPatiently(limited, false, now, now)).toBe(false);
    expect(postingPatiently(new AgentApiError('rate_limited', 'busy'), true, now, now)).toBe(false);
    expect(postingPatiently(new PlatformError('slack', 'server_error', 'boom'), true, now, now)).toBe(false);
  });
});
