import { describe, expect, it } from 'vitest';
import { playgroundUrl } from '../../src/demo/banner.js';

describe('the banner\'s playground address', () => {
  it('is a URL a browser opens: an IPv6 host in brackets', () => {
    expect(playgroundUrl('127.0.0.1', 3000)).toBe('http://127.0.0.1:3000/');
    expect(playgroundUrl('localhost', 8080)).toBe('http://localhost:8080/');
    expect(playgroundUrl('::1', 3000)).toBe('http://[::1]:3000/');
    expect(URL.canParse(playgroundUrl('::1', 3000))).toBe(true);
  });
});
