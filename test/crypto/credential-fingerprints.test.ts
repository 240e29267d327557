import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createCredentialFingerprints,
  fingerprintKey,
  FingerprintSet,
  FINGERPRINT_TTL_MS,
  type CredentialFingerprints,
} from '../../src/crypto/credential-fingerprints.js';
import { createLogger } from '../../src/logger.js';
import { LogCapture } from '../support/log-capture.js';
import { deleteKeys, dumpKeys, SHARED_REDIS } from '../support/redis-cleanup.js';
import { until } from '../support/until.js';

const VALUE = 'sk-live-CANARYfp_value-0987654321';

function setWith(...values: string[]): FingerprintSet {
  const set = new FingerprintSet(fingerprintKey('deployment-secret'));
  for (const v of values) for (const m of set.members(v)) set.addMember(m);
  return set;
}

const PASSPHRASE = 'correct horse Battery staple';

describe('FingerprintSet: the answer redaction', () => {
  it('leaves text alone when no credential was added', () => {
    const set = setWith();
    const text = `Your key is ${VALUE}`;
    expect(set.redact(text)).toBe(text);
  });

  it('redacts the value as a word, quoted, in brackets, after KEY= or key:, and Markdown-escaped', () => {
    const set = setWith(VALUE);
    const cases: Array<[string, string]> = [
      [`Your key is ${VALUE}`, 'Your key is [REDACTED]'],
      [`Your key is ${VALUE}.`, 'Your key is [REDACTED].'],
      [`use \`${VALUE}\` here`, 'use `[REDACTED]` here'],
      [`("${VALUE}")`, '("[REDACTED]")'],
      [`**${VALUE}**,`, '**[REDACTED]**,'],
      [`OPENAI_API_KEY=${VALUE}`, 'OPENAI_API_KEY=[REDACTED]'],
      [`OPENAI_API_KEY="${VALUE}";`, 'OPENAI_API_KEY="[REDACTED]";'],
      [`key:${VALUE}`, 'key:[REDACTED]'],
      [`<${VALUE}>`, '<[REDACTED]>'],
      [VALUE.replace(/[-_]/g, '\\$&'), '[REDACTED]'],
      [`line one\n  ${VALUE}\tand more`, 'line one\n  [REDACTED]\tand more'],
    ];
    for (const [text, expected] of cases) expect(set.redact(text), text).toBe(expected);
  });

  it('keeps every other word, and a value that only contains or is part of a word', () => {
    const set = setWith(VALUE);
    const text = `the key sk-live-CANARY and ${VALUE}x and x${VALUE} stay`;
    expect(set.redact(text)).toBe(text);
  });

  it('redacts the value inside compact JSON, a URL query or a list without spaces, wherever it sits', () => {
    const set = setWith(VALUE);
    const cases: Array<[string, string]> = [
      [`{"OPENAI_API_KEY":"${VALUE}","model":"gpt"}`, '{"OPENAI_API_KEY":"[REDACTED]","model":"gpt"}'],
      [`{"a":1,"key":"${VALUE}"}`, '{"a":1,"key":"[REDACTED]"}'],
      [`https://api.example.com/v1?model=x&key=${VALUE}&y=1`, 'https://api.example.com/v1?model=x&key=[REDACTED]&y=1'],
      [`A=1;KEY=${VALUE};B=2`, 'A=1;KEY=[REDACTED];B=2'],
      [`["x","${VALUE}"]`, '["x","[REDACTED]"]'],
      [`{"k1":"${VALUE}","k2":"${VALUE}"}`, '{"k1":"[REDACTED]","k2":"[REDACTED]"}'],
    ];
    for (const [text, expected] of cases) expect(set.redact(text), text).toBe(expected);
  });

  it('redacts a value with URL-special characters percent-encoded in a query (an AWS secret key has / and +)', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    const set = setWith(secret);
    const text = `GET https://api.example.com/x?secret=${encodeURIComponent(secret)}&y=1 failed`;
    expect(set.redact(text)).toBe('GET https://api.example.com/x?secret=[REDACTED]&y=1 failed');
    expect(set.redact(`key=${encodeURIComponent(secret)}`)).toBe('key=[REDACTED]');
  });

  it('a value ending in punctuation is still found as written', () => {
    const set = setWith('p4ss.word!');
    expect(set.redact('it is p4ss.word! now')).toBe('it is [REDACTED] now');
  });

  it('ignores values shorter than 4 characters and members of another key', () => {
    const set = setWith('abc');
    expect(set.redact('abc abc')).toBe('abc abc');
    const other = new FingerprintSet(fingerprintKey('another-secret'));
    expect(set.addMember(other.member(VALUE))).toBe(false);
    expect(set.foreign).toBe(1);
    expect(set.addMember('not a member')).toBe(false);
  });
});

describe('FingerprintSet: a value of several words (a passphrase)', () => {
  it('is found as a run of words, however spaced, quoted, after KEY=, Markdown-escaped, at the end of a sentence', () => {
    const set = setWith(PASSPHRASE);
    const cases: Array<[string, string]> = [
      [`The passphrase is ${PASSPHRASE}.`, 'The passphrase is [REDACTED].'],
      [`use "${PASSPHRASE}" there`, 'use "[REDACTED]" there'],
      [`PASS="${PASSPHRASE}";`, 'PASS="[REDACTED]";'],
      ['it is correct\n  horse   Battery\tstaple!', 'it is [REDACTED]!'],
      ['`correct horse Battery staple`', '`[REDACTED]`'],
      [`${PASSPHRASE} and again ${PASSPHRASE}`, '[REDACTED] and again [REDACTED]'],
    ];
    for (const [text, expected] of cases) expect(set.redact(text), text).toBe(expected);
    // A chat client shows `my\_pass` as my_pass.
    expect(setWith('my_pass word_two').redact('key: my\\_pass word\\_two.')).toBe('key: [REDACTED].');
  });

  it('keeps its words apart, in another order, or as part of a longer word; redacts one-word values beside it', () => {
    const set = setWith(PASSPHRASE, VALUE);
    const text = 'a correct horse, a Battery staple, correct horse Battery stapler';
    expect(set.redact(text)).toBe(text);
    expect(set.redact(`${VALUE} correct horse Battery staple`)).toBe('[REDACTED] [REDACTED]');
  });

  it("redacts a long word of a value of many words on its own (a PEM block's line)", () => {
    const line = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7';
    const pem = `-----BEGIN PRIVATE KEY-----\n${line}\nAQIDAQAB\n-----END PRIVATE KEY-----`;
    const set = setWith(pem);
    expect(set.redact(`the key starts ${line} and`)).toBe('the key starts [REDACTED] and');
    expect(set.redact(pem)).toBe('[REDACTED]');
  });

  it("a member of the old format or another key's is refused; a phrase member names its word count", () => {
    const set = setWith();
    const [phrase] = set.members(PASSPHRASE);
    expect(phrase!.split('.')).toHaveLength(4);
    expect(phrase!.split('.')[2]).toBe('4');
    expect(set.addMember(`${phrase}.x`)).toBe(false);
    expect(set.addMember(phrase!.replace('.4.', '.1.'))).toBe(false);
    expect(set.addMember(phrase!)).toBe(true);
    expect(set.redact(PASSPHRASE)).toBe('[REDACTED]');
  });
});

describe('credential fingerprints in Redis', () => {
  const prefix = `fp-${randomUUID().slice(0, 8)}`;
  const store = `${prefix}:chat`;
  const redis = new Redis(SHARED_REDIS);
  const opened: CredentialFingerprints[] = [];
  const open = async (secret = 'deployment-secret', logger = createLogger({ level: 'warn', destination: new LogCapture() })) => {
    const fp = createCredentialFingerprints({ redis, prefix: store, secret, logger });
    opened.push(fp);
    await fp.ready();
    return fp;
  };
  afterAll(async () => {
    for (const fp of opened) await fp.close();
    redis.disconnect();
    await deleteKeys(prefix);
  });

  it('a value added in one process is redacted by another, heard at once and loaded at start; Redis holds no form of it', async () => {
    const ingress = await open();
    const worker = await open();
    await ingress.add(VALUE);
    expect(ingress.redact(`key ${VALUE}`)).toBe('key [REDACTED]');
    await until(() => worker.redact(VALUE) === '[REDACTED]', 'the worker heard the fingerprint');
    const restarted = await open();
    expect(restarted.redact(`key=${VALUE}`)).toBe('key=[REDACTED]');

    const dump = await dumpKeys(prefix);
    expect(dump).toContain(`${store}:credential-fingerprints`);
    for (const form of [VALUE, encodeURIComponent(VALUE), Buffer.from(VALUE).toString('base64'), 'CANARY']) expect(dump).not.toContain(form);
    const ttl = await redis.pttl(`${store}:credential-fingerprints`);
    expect(ttl).toBeGreaterThan(FINGERPRINT_TTL_MS - 60_000);
  });

  it('a passphrase added in one process is redacted by another; Redis holds none of its words', async () => {
    const ingress = await open();
    const worker = await open();
    await ingress.add(PASSPHRASE);
    await until(() => worker.redact(`it is ${PASSPHRASE}.`) === 'it is [REDACTED].', 'the worker heard the fingerprint');
    expect((await open()).redact(`PASS=${PASSPHRASE}`)).toBe('PASS=[REDACTED]');
    const dump = await dumpKeys(prefix);
    for (const form of PASSPHRASE.split(' ')) expect(dump).not.toContain(form);
  });

  it('a process with another key recognises none of them and says why', async () => {
    const capture = new LogCapture();
    const other = await open('another-secret', createLogger({ level: 'warn', destination: capture }));
    expect(other.redact(VALUE)).toBe(VALUE);
    expect(capture.matching(/made with another key/)).toHaveLength(1);
  });
});
