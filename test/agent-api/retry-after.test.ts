import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../src/agent-api/retry-after.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');

describe('parseRetryAfter', () => {
  it.each([
    ['0', 0],
    ['7', 7000],
    [' 12 ', 12_000],
    ['1.5', 1500],
    ['99999999', MAX_RETRY_AFTER_MS],
  ])('seconds %j → %i ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([
    ['Wed, 01 Jan 2025 00:00:30 GMT', 30_000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
    ['Wednesday, 01-Jan-25 00:01:00 GMT', 60_000],
    ['Wed Jan  1 00:00:05 2025', 5_000],
  ])('HTTP date %j → %i ms', (value, ms) => {
    // asctime carries no zone; Date.parse reads it as local time, so compare against the same reading.
    const expected = value.includes('GMT') ? ms : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Date.parse(value) - NOW));
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it.each([undefined, null, '', '  ', 'soon', '-5', '2025-01-01', 'Foo, 99 Bar 2025'])('unreadable %j → undefined', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });
});
