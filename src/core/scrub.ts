/** What a secret becomes in any text the bridge writes (logs, replies, errors). */
export const REDACTED = '[REDACTED]';

/** Replaces every secret, in the forms it takes raw, inside JSON and inside a URL. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const form of secretForms(secrets)) out = out.split(form).join(REDACTED);
  return out;
}

/**
 * The strings to hide, longest first. A Cookie header also contributes each cookie's value,
 * since a service may echo one cookie rather than the whole header.
 */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  const add = (v: string) => {
    if (v.length === 0) return;
    forms.add(v);
    forms.add(JSON.stringify(v).slice(1, -1));
    forms.add(encodeURIComponent(v));
  };
  for (const secret of secrets) {
    add(secret);
    for (const pair of secret.split(';')) {
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      if (pair.includes('=') && value.length >= 4) add(value);
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * `text` cut to at most `max` characters at a space. Words a service or platform sends back
 * (an error message) may quote a secret: cut in the middle, its first half would no longer be
 * recognised as a secret by whatever redacts later, so a word is kept whole or left out.
 */
export function clipAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf(' ', max);
  return cut <= 0 ? '' : `${text.slice(0, cut)} …`;
}
