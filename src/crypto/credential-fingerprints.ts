import { createHmac, hkdfSync } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../config/load.js';
import { REDACTED } from '../core/scrub.js';
import { errorFields, type Logger } from '../logger.js';
import { isRedisConnectionError } from '../redis-errors.js';
import { queueKeys } from '../queue/keys.js';

/**
 * Credential values an admin added, recognised in the agent's answers by every process of the
 * deployment, for as long as the agent service may quote them.
 *
 * The value is never kept, in clear or sealed: a Redis sorted set holds an HMAC-SHA256 of it
 * under a key derived from a secret every process has and Redis does not, so whoever reads
 * Redis cannot even try guesses against it. A new fingerprint is announced on pub/sub, and each
 * process loads the set when its subscription starts (and again after every reconnect, since
 * announcements made meanwhile were missed). The answer's redaction hashes candidate parts of
 * each word and compares; with no credential added it does nothing at all.
 */
export interface CredentialFingerprints {
  /** Stores the value's fingerprint (and announces it); rejects when Redis did not take it. */
  add(value: string): Promise<void>;
  /** `text` with every word part that is a known credential replaced by [REDACTED]. */
  redact(text: string): string;
  /**
   * The same for a JSON log line, where a `"` also ends a word: a value quoted in an error
   * message is followed by the line's next field, with no space between.
   */
  redactLogLine(line: string): string;
  /** Resolves once the subscription is live and the set loaded. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** How long a fingerprint is kept after its value was last added (every add refreshes it). */
export const FINGERPRINT_TTL_MS = 90 * 24 * 3600_000;
/** Fingerprints kept at most; the oldest go first. */
export const MAX_FINGERPRINTS = 1_000;
/** The logger's rule: a shorter value would blank ordinary words. */
const MIN_CHARS = 4;
/** Candidates remembered with their HMAC (a few MB at most). */
const MAX_CHECKED = 20_000;

/** A key of 32 bytes for the fingerprints, from one of the deployment's secrets. */
export function fingerprintKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'agent-bridge', 'credential fingerprints v1', 32));
}

/** A value of several words, found in a text as that many words in a row. */
interface Phrase {
  digest: string;
  words: number;
  first: string;
}

/** A word of a value of several words this long is also a fingerprint of its own (a PEM block's lines). */
const LONG_WORD_CHARS = 20;
/** Longest value of several words looked for as a whole (a longer one is found by its long words). */
const MAX_PHRASE_WORDS = 64;

/**
 * The in-memory side: fingerprints of one key, and the matching. Members are `<keyId>.<hmac>`
 * for a value of one word; a value of several words (a passphrase) is
 * `<keyId>.<hmac of its words joined by one space>.<word count>.<hmac of its first word>`, and
 * each of its words of 20 characters or more is a member of its own. The key's ID tells a
 * fingerprint made with another key (a process configured with another secret, or the secret
 * changed) from a value never added.
 */
export class FingerprintSet {
  readonly keyId: string;
  /** Members' bodies (without the key ID), oldest first: one-word digests and phrases. */
  private readonly entries = new Map<string, Phrase | undefined>();
  private readonly digests = new Set<string>();
  private readonly phrases = new Set<string>();
  /** A phrase's first word's digest → the word counts of the phrases it starts. */
  private readonly firstWords = new Map<string, Set<number>>();
  /**
   * Candidates already hashed: an HMAC costs microseconds, every answer is redacted twice (as
   * written, then each rendered chunk), and words repeat. Emptied when full.
   */
  private readonly hashed = new Map<string, string>();
  /** Members seen that were made with another key. */
  foreign = 0;

  constructor(private readonly key: Buffer) {
    this.keyId = this.hmac('key id').slice(0, 8);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The member stored for a value of one word. */
  member(value: string): string {
    return `${this.keyId}.${this.hmac(value)}`;
  }

  /** The members stored for `value`: one for a value of one word; for several, see the class. */
  members(value: string): string[] {
    const words = value.split(/\s+/).filter(Boolean);
    if (words.length <= 1) return [this.member(value)];
    const own = words.filter((w) => w.length >= LONG_WORD_CHARS).map((w) => this.member(w));
    if (words.length > MAX_PHRASE_WORDS) return own;
    return [`${this.keyId}.${this.hmac(words.join(' '))}.${words.length}.${this.hmac(words[0]!)}`, ...own];
  }

  /** Takes a member in; false when it is not one of this key's. */
  addMember(member: string): boolean {
    const [keyId, digest, count, first, extra] = member.split('.');
    const hex = (d: string | undefined) => d !== undefined && /^[0-9a-f]{32}$/.test(d);
    const words = Number(count);
    const isPhrase = count !== undefined && Number.isInteger(words) && words >= 2 && words <= MAX_PHRASE_WORDS && hex(first);
    if (extra !== undefined || !hex(digest) || (count !== undefined && !isPhrase)) return false;
    if (keyId !== this.keyId) {
      this.foreign += 1;
      return false;
    }
    const body = member.slice(keyId.length + 1);
    const known = this.entries.delete(body);
    const phrase = isPhrase ? { digest: digest!, words, first: first! } : undefined;
    this.entries.set(body, phrase);
    if (this.entries.size > MAX_FINGERPRINTS) {
      // The oldest goes; the lookups are rebuilt (rare: past 1,000 credentials).
      this.entries.delete(this.entries.keys().next().value!);
      this.reindex();
    } else if (!known) {
      this.index(body, phrase);
    }
    return true;
  }

  private index(body: string, phrase: Phrase | undefined): void {
    if (!phrase) {
      this.digests.add(body);
      return;
    }
    this.phrases.add(phrase.digest);
    const counts = this.firstWords.get(phrase.first) ?? new Set<number>();
    counts.add(phrase.words);
    this.firstWords.set(phrase.first, counts);
  }

  private reindex(): void {
    this.digests.clear();
    this.phrases.clear();
    this.firstWords.clear();
    for (const [body, phrase] of this.entries) this.index(body, phrase);
  }

  /** `words` picks the words out of the text: the answer's are between spaces. */
  redact(text: string, words: RegExp = ANSWER_WORDS): string {
    if (this.entries.size === 0) return text;
    if (this.phrases.size === 0) return text.replace(words, (word) => this.redactWord(word));
    const tokens = [...text.matchAll(words)];
    let out = '';
    let copied = 0;
    for (let i = 0; i < tokens.length; i++) {
      const at = tokens[i]!.index;
      const phrase = this.phraseAt(tokens, i);
      if (phrase) {
        out += `${text.slice(copied, at + phrase.from)}${REDACTED}`;
        copied = tokens[phrase.last]!.index + phrase.to;
        i = phrase.last;
        continue;
      }
      const word = tokens[i]![0];
      out += text.slice(copied, at) + this.redactWord(word);
      copied = at + word.length;
    }
    return out + text.slice(copied);
  }

  private hashOf(candidate: string): string {
    let digest = this.hashed.get(candidate);
    if (digest === undefined) {
      digest = this.hmac(candidate);
      if (this.hashed.size >= MAX_CHECKED) this.hashed.clear();
      this.hashed.set(candidate, digest);
    }
    return digest;
  }

  private known(candidate: string): boolean {
    return candidate.length >= MIN_CHARS && this.digests.has(this.hashOf(candidate));
  }

  /**
   * A value of several words starting at word `i`: its first word found as `redactWord` finds a
   * value (after `KEY=`, inside quotes…), the words between as written, the last trimmed at its
   * end the same ways, compared with the words joined by one space. Where it starts in word `i`
   * and ends in word `last`.
   */
  private phraseAt(tokens: RegExpExecArray[], i: number): { from: number; last: number; to: number } | undefined {
    const firstWord = tokens[i]![0];
    for (const [start, end] of spansOf(firstWord)) {
      const first = firstWord.slice(start, end);
      const counts = this.firstWords.get(this.hashOf(first)) ?? this.firstWords.get(this.hashOf(withoutEscapes(first)));
      if (!counts) continue;
      for (const n of counts) {
        const last = i + n - 1;
        if (last >= tokens.length) continue;
        const middle = tokens.slice(i + 1, last).map((t) => t[0]);
        const lastWord = tokens[last]![0];
        for (const to of new Set([lastWord.length, trim(lastWord, 0, lastWord.length, WRAPPERS)[1], trim(lastWord, 0, lastWord.length, WRAPPERS_AND_PUNCTUATION)[1]])) {
          const candidate = [first, ...middle, lastWord.slice(0, to)].join(' ');
          if (this.phrases.has(this.hashOf(candidate)) || this.phrases.has(this.hashOf(withoutEscapes(candidate)))) return { from: start, last, to };
        }
      }
    }
    return undefined;
  }

  /** The word, or the first part of it that is a value as written (see `spansOf`), redacted. */
  private redactWord(word: string): string {
    if (word.length < MIN_CHARS) return word;
    const tried = new Set<string>();
    for (const [start, end] of spansOf(word)) {
      const part = word.slice(start, end);
      if (tried.has(part)) continue;
      tried.add(part);
      const unescaped = withoutEscapes(part);
      const decoded = urlDecoded(part);
      // The rest of the word on either side may hold it again (compact JSON naming it twice).
      if (this.known(part) || (unescaped !== part && this.known(unescaped)) || (decoded !== part && this.known(decoded))) return `${this.redactWord(word.slice(0, start))}${REDACTED}${this.redactWord(word.slice(end))}`;
    }
    return word;
  }

  private hmac(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('hex').slice(0, 32);
  }
}

/**
 * The parts of a word that could be a value as written: the whole word; without quotes,
 * backticks, brackets or emphasis around it; also without sentence punctuation; the part after
 * the first `=` or `:` (`KEY=value`, `token:value`), trimmed the same ways. Then each piece
 * between separators (compact JSON `{"a":1,"key":"value"}`, a URL's query `?x=1&key=value`, a
 * list `A=1;KEY=value`), and its part after `=` or `:`. Each is also tried with Markdown's
 * backslash escapes removed (a chat client shows `sk\_live` as sk_live).
 */
function spansOf(word: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const addSpans = (start: number, end: number) => {
    spans.push([start, end], trim(word, start, end, WRAPPERS), trim(word, start, end, WRAPPERS_AND_PUNCTUATION));
  };
  const addAfterSeparator = (from: number) => {
    for (const [start, end] of spans.slice(from)) {
      const sep = word.slice(start, end).search(/[=:]/);
      if (sep >= 0) addSpans(start + sep + 1, end);
    }
  };
  addSpans(0, word.length);
  addAfterSeparator(0);
  let start = 0;
  const addPiece = (end: number) => {
    if (end - start >= MIN_CHARS) {
      const from = spans.length;
      addSpans(start, end);
      addAfterSeparator(from);
    }
  };
  for (const m of word.matchAll(SEPARATORS)) {
    addPiece(m.index);
    start = m.index + 1;
  }
  if (start > 0) addPiece(word.length);
  return spans;
}

/** What separates values inside one word: JSON's quotes and commas, a URL's `?` and `&`, a list's `;`, brackets. */
const SEPARATORS = /["'`,;?&{}[\]()<>|]/g;

/** A URL's percent-encoding undone (`a%2Fb%2Bc` in a query is a/b+c), or the text as it was when it is not valid. */
function urlDecoded(text: string): string {
  if (!/%[0-9A-Fa-f]{2}/.test(text)) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const withoutEscapes = (text: string) => text.replace(/\\([!-/:-@[-`{-~])/g, '$1');

const ANSWER_WORDS = /\S+/g;
/** In a JSON line, `"` ends a word too (a `"` inside a value is escaped, so a value with one is not found there). */
export const LOG_LINE_WORDS = /[^\s"]+/g;

const WRAPPERS = new Set('"\'`()[]{}<>*_~'.split(''));
const WRAPPERS_AND_PUNCTUATION = new Set([...WRAPPERS, ...'.,;:!?'.split('')]);

function trim(word: string, start: number, end: number, chars: Set<string>): [number, number] {
  while (start < end && chars.has(word[start]!)) start++;
  while (end > start && chars.has(word[end - 1]!)) end--;
  return [start, end];
}

export interface CredentialFingerprintsOptions {
  /** The bridge's connection; duplicated for the subscription. */
  redis: Redis;
  /** The bridge's store prefix (`<QUEUE_PREFIX>:chat`); the key is src/queue/keys.ts's. */
  prefix: string;
  /** A secret every process of the deployment has, and Redis does not (see app.ts). */
  secret: string;
  logger: Pick<Logger, 'warn'>;
  /** Clock, for tests. @defaultValue Date.now */
  now?: () => number;
}

export function createCredentialFingerprints(options: CredentialFingerprintsOptions): CredentialFingerprints {
  const { redis, logger } = options;
  const now = options.now ?? Date.now;
  const key = queueKeys(options.prefix).credentialFingerprints;
  const channel = `${key}:added`;
  const set = new FingerprintSet(fingerprintKey(options.secret));
  let warned = false;
  const warnForeign = () => {
    if (set.foreign === 0 || warned) return;
    warned = true;
    logger.warn(
      { fingerprints: set.foreign },
      'credential fingerprints in Redis were made with another key, so those values are not hidden here (answers, log lines): every process needs the same INSTALLATION_ENCRYPTION_KEY (or, without it, AGENT_API_KEY); credentials added before that key changed must be added again',
    );
  };

  const load = async () => {
    const members = await redis.zrangebyscore(key, now() - FINGERPRINT_TTL_MS, '+inf');
    for (const m of members) set.addMember(m);
    warnForeign();
  };

  const sub = redis.duplicate({ connectionName: `${options.prefix}:credential-fingerprints` });
  sub.on('error', (err) => {
    if (!isRedisConnectionError(err)) logger.warn({ ...errorFields(err) }, 'credential fingerprint subscription error');
  });
  sub.on('message', (ch: string, member: string) => {
    if (ch !== channel) return;
    set.addMember(member);
    warnForeign();
  });
  // Subscribed before loading, so a fingerprint added in between is heard or read.
  const start = async () => {
    await sub.subscribe(channel);
    await load();
  };
  let started = start();
  started.catch(() => {});
  let readies = 0;
  sub.on('ready', () => {
    if (readies++ === 0) return; // the first 'ready' is the start above
    started = start();
    started.catch((err: unknown) => logger.warn({ ...errorFields(err) }, 'could not reload the credential fingerprints'));
  });

  return {
    async add(value) {
      if (value.length < MIN_CHARS) return;
      const members = set.members(value);
      for (const member of members) set.addMember(member);
      const at = now();
      const results = await redis
        .multi()
        .zadd(key, ...members.flatMap((member) => [at, member]))
        .zremrangebyscore(key, '-inf', at - FINGERPRINT_TTL_MS)
        .zremrangebyrank(key, 0, -(MAX_FINGERPRINTS + 1))
        .pexpire(key, FINGERPRINT_TTL_MS)
        .exec();
      const failed = results?.find(([err]) => err)?.[0];
      if (!results || failed) throw failed ?? new Error('the credential fingerprint was not stored');
      for (const member of members) await redis.publish(channel, member);
    },
    redact: (text) => set.redact(text),
    redactLogLine: (line) => set.redact(line, LOG_LINE_WORDS),
    ready: () => started,
    async close() {
      await sub.quit().catch(() => sub.disconnect());
    },
  };
}

/**
 * The credential fingerprints, keyed with a secret every process of the deployment has and
 * Redis does not: INSTALLATION_ENCRYPTION_KEY, which every process needs once one does
 * (per-workspace accounts, Slack installations), else AGENT_API_KEY, which every worker needs in
 * shared mode. Without either (an ingress with only a dashboard session), none are recorded here.
 */
export function fingerprintsFor(config: Readonly<Config>, redis: Redis, prefix: string, logger: Logger): CredentialFingerprints | undefined {
  const secret = config.encryptionKey ?? config.agent?.apiKey;
  if (secret) return createCredentialFingerprints({ redis, prefix, secret, logger });
  // A test wiring its own agent client has no agent config, and needs no word about it.
  if (config.role !== 'worker' && config.agent) {
    logger.warn('neither INSTALLATION_ENCRYPTION_KEY nor AGENT_API_KEY is set: a credential value added here is hidden in answers only by this process, for 10 minutes');
  }
  return undefined;
}
