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
