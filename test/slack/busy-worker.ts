import type { NamedHolds } from '../support/held-calls.js';
import { botMention, say, until, W, type SlackHarness } from './harness.js';

/**
 * Keeps the bridge's worker busy with a question in #general whose agent call is held as `name`
 * (the harness's agent must reply with `holds.reply`), so the next messages wait in line. The
 * returned function releases it and resolves once that answer is posted.
 */
export async function keepWorkerBusy(h: SlackHarness, holds: NamedHolds, name: string): Promise<() => Promise<void>> {
  const m = await say(h, { channel: W.general, text: `${botMention(h)} hold ${name}` });
  await until(() => holds.has(name), `agent busy with ${name}`);
  return async () => {
    holds.release(name);
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && c.response.ok === true);
  };
}
