import { describe, expect, it } from 'vitest';
import { spawnApp } from './spawn-app.js';

describe('start-up with a partial configuration', () => {
  it('refuses to start with only SLACK_BOT_TOKEN, naming what is missing, and never falls back to the demo', async () => {
    const app = spawnApp({ SLACK_BOT_TOKEN: 'xoxb-partial-test-token', HTTP_PORT: '0' });
    const code = await app.exited;
    const output = app.output();
    expect(code).not.toBe(0);
    expect(output).toMatch(/AGENT_API_BASE_URL is missing/);
    expect(output).toMatch(/SLACK_SIGNING_SECRET/);
    expect(output).not.toMatch(/DEMO/);
    expect(output).not.toContain('xoxb-partial-test-token');
  });

  it('refuses to expose the playground on a public interface without PLAYGROUND_TOKEN', async () => {
    const app = spawnApp({ HTTP_HOST: '0.0.0.0', HTTP_PORT: '0' });
    const code = await app.exited;
    expect(code).not.toBe(0);
    expect(app.output()).toMatch(/PLAYGROUND_TOKEN is missing \(HTTP_HOST=0\.0\.0\.0 exposes the playground\)/);
  });
});
