import type { Instance } from '../agent-api/types.js';

/** Credentials the emulator accepts when none are given. Demo values, not secrets. */
export const DEMO_API_KEY = 'demo-api-key';
export const DEMO_SESSION_COOKIE = 'demo_session=demo-session-cookie';
export const DEMO_SESSION_TOKEN = 'demo-session-token';

/** The instances of the local demo agent service. */
export const DEMO_INSTANCES: readonly Instance[] = Object.freeze([
  { id: 'demo-helper', name: 'Demo Helper', status: 'running', type: 'assistant' },
  { id: 'demo-poet', name: 'Demo Poet', status: 'running', type: 'assistant' },
  { id: 'demo-sleepy', name: 'Demo Sleepy', status: 'stopped', type: 'assistant' },
]);

const FOOTER = '_(local demo agent: set AGENT_API_BASE_URL and AGENT_API_KEY to talk to a real one)_';

/** The demo reply: recognisable, with a little Markdown, different per instance. */
export function demoReply(instance: Instance, message: string): string {
  const text = message.trim() || '(nothing)';
  if (instance.id === 'demo-poet') {
    const words = text.split(/\s+/).slice(0, 6).join(' ');
    return [
      `[${instance.name}] A verse for you:`,
      '',
      `> *Of "${words}" you wrote to me,*`,
      '> *and so I answer, rhyme for free:*',
      '> *a bridge of words from there to here,*',
      '> *your message came, my verse is near.*',
      '',
      FOOTER,
    ].join('\n');
  }
  const quoted = text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
  return [`[${instance.name}] You said:`, quoted, '', `That is **${countWords(text)}** word(s).`, FOOTER].join('\n');
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
