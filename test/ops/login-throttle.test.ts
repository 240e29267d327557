import { describe, expect, it } from 'vitest';
import { clientKey, createLoginThrottle } from '../../src/http/login-throttle.js';
import type { IncomingMessage } from 'node:http';

const from = (remoteAddress: string) => ({ socket: { remoteAddress } }) as unknown as IncomingMessage;

describe('login throttle', () => {
  it('counts an IPv6 client by its /64 (one host holds a whole /64), IPv4 and mapped IPv4 by the address', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe(clientKey('2001:0db8:0001:0002:ffff:1:2:3'));
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'));
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('::ffff:10.0.0.5')).toBe('10.0.0.5');
    expect(clientKey('10.0.0.5')).not.toBe(clientKey('10.0.0.6'));
  });

  it('holds off a /64 whose hosts take turns guessing', () => {
    const throttle = createLoginThrottle({ maxFailures: 3, now: () => 0 });
    for (let i = 1; i <= 3; i++) throttle.failed(from(`2001:db8::${i}`));
    expect(throttle.blocked(from('2001:db8::99'))).toBe(60);
    expect(throttle.blocked(from('2001:db9::1'))).toBeUndefined();
  });

  it('forgets the oldest client when it remembers too many', () => {
    const throttle = createLoginThrottle({ maxFailures: 1, maxClients: 2, now: () => 0 });
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) throttle.failed(from(a));
    expect(throttle.blocked(from('10.0.0.1'))).toBeUndefined();
    expect(throttle.blocked(from('10.0.0.3'))).toBe(60);
  });
});
