/**
 * The user name and password a URL setting may carry (`https://user:pass@host`), found the way
 * URL parsers find them: the authority runs to the first `/`, `?` or `#`, and its userinfo to
 * the LAST `@` in it, so a password may hold a raw `@`.
 */
const AUTHORITY = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i;

/** `url` as it may be shown: without user name and password. */
export function withoutUserinfo(url: string): string {
  const m = AUTHORITY.exec(url);
  if (!m) return url;
  const at = m[2]!.lastIndexOf('@');
  return at < 0 ? url : m[1]! + url.slice(m[1]!.length + at + 1);
}
/**
 * The secrets in `url`'s userinfo, as written and decoded, for the secret registry: the
 * password, or the user name when it stands alone (`https://<token>@host`). A user name beside
 * a password is an account name (Redis's `default`): redacted, it would blank that word in
 * every log line.
 */
export function userinfoSecrets(url: string | undefined): string[] {
  const m = url ? AUTHORITY.exec(url) : null;
  if (!m) return [];
  const at = m[2]!.lastIndexOf('@');
  if (at < 0) return [];
  const userinfo = m[2]!.slice(0, at);
  const colon = userinfo.indexOf(':');
  const secret = colon < 0 ? userinfo : userinfo.slice(colon + 1);
  return [...new Set([secret, decoded(secret)])].filter((s) => s.length > 0);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
