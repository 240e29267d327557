/**
 * Which redirects of a Slack file download keep the bot token. `files.slack.com` may answer
 * 302 to another Slack host that still asks for it (Enterprise Grid: `files-origin.slack.com`);
 * without the token that host answers its HTML sign-in page and the file is lost. Slack's CDN
 * hosts (`slack-edge.com`, `slack-files.com`) serve presigned URLs that need no token, so they
 * never get it, and neither does any host Slack does not own.
 */
export function keepSlackTokenOnRedirect(target: URL, first: URL): boolean {
  if (target.protocol === 'https:' && isSlackHost(target.hostname)) return true;
  // An emulator (or a proxy) serving the file host on another port of the same host: never
  // onto plain http from https, where the token would travel in the clear.
  return target.hostname === first.hostname && target.protocol === first.protocol;
}

/** slack.com and its subdomains; `evilslack.com` or `slack.com.example.net` are not. */
function isSlackHost(hostname: string): boolean {
  return hostname === 'slack.com' || hostname.endsWith('.slack.com');
}
