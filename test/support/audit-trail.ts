import { expect } from 'vitest';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The audit answer after the admin-features scenario every platform runs in `channel`: the
 * admin binds demo-poet, adds AUDIT_KEY to demo-helper and unbinds; the user is refused `bind`
 * and `audit`. Newest first, each stamped within three minutes of `before`. `admin` and `user`
 * are as the table shows them (`Alice (123)`).
 */
export function expectAuditTrail(audit: string, o: { channel: string; admin: string; user: string; before: number }): void {
  const rows = audit.split('\n').filter((l) => l.includes(o.channel));
  const cols = rows.map((r) => r.split(/\s{2,}/));
  // When (UTC minute) · Who · Action · Channel · Instance · Key · Outcome · Detail
  expect(cols.map((c) => c[2])).toEqual(['refused', 'refused', 'unbind', 'credential', 'bind']);
  const row = (who: string, rest: string) => new RegExp(`${escape(who)}\\s+${rest.replace('<channel>', escape(o.channel))}$`);
  expect(rows[0]).toMatch(row(o.user, 'refused\\s+<channel>\\s+refused\\s+audit'));
  expect(rows[1]).toMatch(row(o.user, 'refused\\s+<channel>\\s+refused\\s+bind'));
  expect(rows[2]).toMatch(row(o.admin, 'unbind\\s+<channel>\\s+demo-poet\\s+ok'));
  expect(rows[3]).toMatch(row(o.admin, 'credential\\s+<channel>\\s+demo-helper\\s+AUDIT_KEY\\s+ok'));
  expect(rows[4]).toMatch(row(o.admin, 'bind\\s+<channel>\\s+demo-poet\\s+ok\\s+mode=mention'));
  for (const c of cols) {
    expect(c[0]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    expect(Math.abs(Date.parse(c[0]!.replace(' UTC', 'Z').replace(' ', 'T')) - o.before)).toBeLessThan(3 * 60_000);
  }
}
