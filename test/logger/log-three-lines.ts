// Spawned by pretty-terminal.test.ts: the process's logger as bin/agent-bridge.ts makes it
// (no destination given), writing three typical lines to stdout.
import { createLogger, errorFields, secrets } from '../../src/logger.js';

const logger = createLogger({ level: 'info' });
secrets.add('sk-terminal-canary-0042');
logger.info({ conversationId: 'web:local:general', instanceId: 'demo-helper', agentMs: 12, chunks: 1, note: 'key sk-terminal-canary-0042' }, 'message answered');
logger.warn({ ...errorFields(new Error('agent service unreachable')) }, 'could not list the instances');
logger.error(new Error('boom\nwith a second line'), 'worker error');
