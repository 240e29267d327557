/**
 * Whether a credential's key name is really a secret: the value pasted into the Key field (or
 * the two fields swapped). A key name is kept in the audit log and shown to every admin, so a
 * name that looks like a token is refused rather than stored.
 */

/** Prefixes of well-known tokens (OpenAI/Stripe, GitHub, Slack, GitLab, Google, Hugging Face, npm, AWS, a JWT). */
const TOKEN_PREFIX = /^(?:sk-|sk_(?:live|test)_|rk_(?:live|test)_|gh[pousr]_|github_pat_|xox[abposre]-|xapp-|glpat-|AIza[0-9A-Za-z_-]{20}|hf_[A-Za-z]{10}|npm_[A-Za-z0-9]{20}|(?:AKIA|ASIA)[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{10})/u;

/** Shannon entropy of the text, in bits per character. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits;
}

/** How often the character class (lower, upper, digit, other) changes from one character to the next. */
function classChanges(text: string): number {
  const cls = (ch: string) => (/[a-z]/u.test(ch) ? 0 : /[A-Z]/u.test(ch) ? 1 : /\d/u.test(ch) ? 2 : 3);
  let changes = 0;
  for (let i = 1; i < text.length; i++) if (cls(text[i]!) !== cls(text[i - 1]!)) changes++;
  return changes / Math.max(1, text.length - 1);
}

/**
 * A known token prefix, or long and random: a long hex string, or mixed case and digits with high
 * entropy whose case changes at every other character, as random text does (about 0.6) and names
 * do not (OPENAI_API_KEY, openai.api_key, myServiceApiKeyV2: words of several letters).
 */
export function looksLikeSecret(key: string): boolean {
  if (TOKEN_PREFIX.test(key)) return true;
  if (key.length >= 32 && /^[0-9a-f]+$/iu.test(key) && /\d/u.test(key)) return true;
  return key.length >= 24 && /[a-z]/u.test(key) && /[A-Z]/u.test(key) && /\d/u.test(key) && entropy(key) >= 3.5 && classChanges(key) >= 0.5;
}
