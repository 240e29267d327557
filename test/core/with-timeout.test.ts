import { describe, expect, it } from 'vitest';
import { withTimeout } from '../../src/core/with-timeout.js';

const never = () => new Promise<string>(() => {});

describe('withTimeout (the one copy)', () => {
  it('settles as the promise does when it is in time', async () => {
    await expect(withTimeout(Promise.resolve('ok'), 1_000, () => 'late')).resolves.toBe('ok');
    await expect(withTimeout(Promise.reject(new Error('boom')), 1_000, () => 'late')).rejects.toThrow('boom');
  });

  it('after the limit: the value onTimeout returns, or the error it throws', async () => {
    await expect(withTimeout(never(), 5, () => undefined)).resolves.toBeUndefined();
    await expect(
      withTimeout(never(), 5, () => {
        throw new Error('too slow');
      }),
    ).rejects.toThrow('too slow');
  });

  it('a promise that rejects after the limit is not an unhandled rejection', async () => {
    const late = new Promise<string>((_, reject) => setTimeout(() => reject(new Error('late failure')), 20));
    await expect(withTimeout(late, 5, () => 'gave up')).resolves.toBe('gave up');
    await new Promise((r) => setTimeout(r, 30));
  });
});
