import type { InstanceFeedback } from './feedback-store.js';

/**
 * The `/agent feedback` answer as Markdown-ish plain text (the command layer renders it per
 * platform like every other command reply). `linkText` turns a link into the platform's form.
 */
export function formatFeedbackSummary(rows: InstanceFeedback[], linkText: (url: string, label: string) => string = (u, l) => `${l}: ${u}`): string {
  if (rows.length === 0) return 'No feedback in the last 7 days.';
  const lines = ['Feedback in the last 7 days:'];
  for (const row of rows) {
    lines.push(`• ${row.instanceId}: 👍 ${row.positive} · 👎 ${row.negative}`);
    for (const n of row.latestNegative) {
      const when = new Date(n.at).toISOString().slice(0, 16).replace('T', ' ');
      lines.push(`    👎 ${when} UTC — ${n.link ? linkText(n.link, 'reply') : `reply ${n.agentMessageId} in ${n.channelId}`}`);
    }
  }
  return lines.join('\n');
}
