/**
 * Secrets as people paste them: wrapped in the quotes of a shell or a `.env` line (kept
 * literally by `docker run --env-file` and compose's `environment:` list), or with the
 * authentication scheme copied along (`Bearer …`, `Bot …`). Used as given, such a value is
 * refused by the service (401) at the first message, not at start-up; these checks refuse it
 * at start-up instead, naming the variable and the fix. A problem never quotes the value.
 */

/** What kind of secret: a token is one word; a cookie header may hold `a=b; c="d"`. */
export type SecretKind = 'token' | 'cookie';

const QUOTES = `"'\`‘’“”`;

/** The secret (trimmed) starts or ends with a quote; a cookie's value may end in one (`session="abc"`), its name never starts with one. */
export function wrappedInQuotes(v: string, kind: SecretKind = 'token'): boolean {
  return v !== '' && (QUOTES.includes(v[0]!) || (kind === 'token' && QUOTES.includes(v.at(-1)!)));
}

/** The authentication scheme (or `Cookie` header name) pasted before the secret, if any. */
export function schemeBefore(v: string, kind: SecretKind = 'token'): string | undefined {
  return (kind === 'cookie' ? /^(Cookie):/i : /^(Bearer|Bot|Basic|Token)\s/i).exec(v)?.[1];
}

/**
 * The problem with `value` as the secret in `name`, or undefined when it looks fine.
 * `sentAs` names how agent-bridge sends it, for the fix's words (`the X-API-Key header`).
 */
export function pastedSecretProblem(name: string, value: string | undefined, options: { kind?: SecretKind; sentAs?: string } = {}): string | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (v === '') return undefined;
  const kind = options.kind ?? 'token';
  if (wrappedInQuotes(v, kind)) {
    return `${name} is wrapped in quotes, which would be sent as part of it: remove the quotes around the value (in a compose file or an env file given to docker, quotes are kept as written)`;
  }
  const scheme = schemeBefore(v, kind);
  if (scheme !== undefined) {
    const prefix = kind === 'cookie' ? `${scheme}:` : `${scheme} `;
    return `${name} starts with "${prefix}": give the ${kind === 'cookie' ? 'cookie' : 'secret'} alone, without "${prefix}"${options.sentAs ? ` (agent-bridge sends it as ${options.sentAs})` : ''}`;
  }
  if (kind === 'token' && /[\s\p{Cc}]/u.test(v)) {
    return `${name} contains a space or a line break, which no token has: copy it again as one word`;
  }
  return undefined;
}

/** The problems of several secrets: `[name, value, options?]` each. */
export function pastedSecretProblems(secrets: ReadonlyArray<readonly [string, string | undefined, { kind?: SecretKind; sentAs?: string }?]>): string[] {
  return secrets.flatMap(([name, value, options]) => pastedSecretProblem(name, value, options) ?? []);
}
