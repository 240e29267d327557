import { z } from 'zod';
import type { AgentEmulator } from './emulator-types.js';

/*
 * The emulator's control API, for processes that cannot reach the AgentEmulator object
 * (a worker child process, a benchmark). Every action mirrors a method of AgentEmulator:
 *   POST /__control/fail        {count?, status, body?, contentType?, retryAfter?, endpoint?, instanceId?}
 *   POST /__control/rate-limit  {count?, retryAfter?, endpoint?, instanceId?}
 *   POST /__control/hang        {count?, endpoint?, instanceId?}
 *   POST /__control/malformed   {count?, body?, endpoint?, instanceId?}
 *   POST /__control/reset       {count?, endpoint?, instanceId?}
 *   POST /__control/delay       {ms, endpoint?, instanceId?}
 *   POST /__control/release     releases hanging requests
 *   POST /__control/clear       forgets calls, faults, delays, credentials
 *   GET  /__control/calls       {calls: [{method, path, endpoint, instanceId, body, at}], hanging}
 *                               (no headers; credential request bodies are not shown)
 */

const scoped = {
  count: z.number().int().min(1).default(1),
  endpoint: z.enum(['chat', 'instances', 'credentials']).optional(),
  instanceId: z.string().optional(),
};
const schemas = {
  fail: z.object({
    ...scoped,
    status: z.number().int().min(100).max(599),
    body: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
    contentType: z.string().optional(),
    retryAfter: z.union([z.number().min(0), z.string()]).optional(),
  }),
  'rate-limit': z.object({ ...scoped, retryAfter: z.union([z.number().min(0), z.string()]).optional() }),
  hang: z.object(scoped),
  malformed: z.object({ ...scoped, body: z.string().optional() }),
  reset: z.object(scoped),
  delay: z.object({ ms: z.number().int().min(0), endpoint: scoped.endpoint, instanceId: scoped.instanceId }),
};

export interface ControlAnswer {
  status: number;
  body: unknown;
}

/** Runs one control action; `body` is the request's parsed JSON (undefined when empty or not JSON). */
export function handleControl(emulator: AgentEmulator, method: string, action: string, body: unknown): ControlAnswer {
  if (method === 'GET' && action === 'calls') {
    // Headers stay out (they carry the key and the session), and so do credential values.
    const calls = emulator.calls.map((c) => ({
      method: c.method,
      path: c.path,
      endpoint: c.endpoint,
      instanceId: c.instanceId,
      body: c.endpoint === 'credentials' ? '(credential request: not shown)' : c.body,
      at: c.at,
    }));
    return { status: 200, body: { calls, hanging: emulator.hangingCount() } };
  }
  if (method !== 'POST') return { status: 405, body: { error: 'control actions are POST (GET only for calls)' } };
  if (action === 'release') return ok(emulator.releaseHanging());
  if (action === 'clear') return ok(emulator.reset());
  if (!(action in schemas)) return { status: 404, body: { error: `unknown control action ${action}` } };

  const parsed = schemas[action as keyof typeof schemas].safeParse(body ?? {});
  if (!parsed.success) {
    return { status: 400, body: { error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') } };
  }
  const v = parsed.data as z.infer<(typeof schemas)['fail']> & { ms?: number; retryAfter?: number | string };
  const scope = { endpoint: v.endpoint, instanceId: v.instanceId };
  switch (action) {
    case 'fail':
      return ok(
        emulator.failNext(v.count, { status: v.status, body: v.body, contentType: v.contentType, retryAfter: v.retryAfter }, scope),
      );
    case 'rate-limit':
      return ok(emulator.rateLimitNext(v.count, v.retryAfter, scope));
    case 'hang':
      return ok(emulator.hangNext(v.count, scope));
    case 'malformed':
      return ok(emulator.malformedNext(v.count, typeof v.body === 'string' ? v.body : undefined, scope));
    case 'reset':
      return ok(emulator.resetNext(v.count, scope));
    default:
      return ok(emulator.setDelay(v.ms ?? 0, scope));
  }
}

function ok(_: void): ControlAnswer {
  return { status: 200, body: { ok: true } };
}
