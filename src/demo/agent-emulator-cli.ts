/**
 * Runs the agent service emulator on its own, for manual tries and benchmarks:
 *   npx tsx src/demo/agent-emulator-cli.ts [--port 4010] [--host 127.0.0.1]
 * Faults are driven through the control API (src/demo/emulator-control.ts).
 */
import { parseArgs } from 'node:util';
import { startAgentEmulator } from './agent-emulator.js';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '4010' }, host: { type: 'string', default: '127.0.0.1' } },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error('--port must be a whole number from 0 to 65535');
  process.exit(1);
}
// Run on its own, the emulator is driven over HTTP: the control API is what it is for.
const emulator = await startAgentEmulator({ port, host: values.host, control: true });
console.log(`agent service emulator listening on ${emulator.origin}
  AGENT_API_BASE_URL=${emulator.baseUrl}
  AGENT_API_KEY=${emulator.apiKey}
  AGENT_SESSION_COOKIE=${emulator.sessionCookie}
  control API: ${emulator.origin}/__control/`);
const stop = () => void emulator.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
