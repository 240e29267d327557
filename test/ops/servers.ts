import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Throw-away Redis servers for the ops tests: each on a free port, in a temporary folder,
 * with nothing saved to disk. The shared Redis on 6379 is never touched by them, except
 * that a Sentinel reads it (PING, INFO, hello messages on its own pub/sub channel).
 */
export interface TestServer {
  port: number;
  dir: string;
  stop(): Promise<void>;
}

export function tempDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `agent-bridge-${name}-`));
}

/** Ports the OS just handed out, all different; free unless someone grabs one in the next instant. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  const ports = await Promise.all(
    servers.map(
      (server) =>
        new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            resolve(typeof address === 'object' && address ? address.port : 0);
          });
        }),
    ),
  );
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** Starts `redis-server` with the given arguments and waits until its log shows `ready`. */
export async function startRedisServer(args: string[], options: { dir: string; port: number; ready: RegExp }): Promise<TestServer> {
  const child = spawn('redis-server', args, { cwd: options.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  // If the test process dies without its afterAll, the server must not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`redis-server did not start within 10 s:\n${log}`)), 10_000);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (options.ready.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    };
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`redis-server exited with ${code}:\n${log}`)));
  });
  child.removeAllListeners('exit');
  return {
    port: options.port,
    dir: options.dir,
    stop: () => stopChild(child).finally(() => process.off('exit', killOnExit)),
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const NO_DISK = ['--save', '', '--appendonly', 'no'];
const READY = /Ready to accept connections/;

/** A CA and a server certificate for 127.0.0.1/localhost signed by it, as PEM files in `dir`. */
export function makeCertificates(dir: string): { ca: string; cert: string; key: string; otherCa: string } {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=agent-bridge test CA', '-days', '1');
  openssl('req', '-x509', ...ec, '-keyout', 'other-ca.key', '-out', 'other-ca.crt', '-subj', '/CN=unrelated CA', '-days', '1');
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '1', '-extfile', 'san.cnf');
  return { ca: join(dir, 'ca.crt'), cert: join(dir, 'server.crt'), key: join(dir, 'server.key'), otherCa: join(dir, 'other-ca.crt') };
}

/** A Redis that speaks only TLS, with a certificate signed by a fresh test CA. */
export async function startTlsRedis(): Promise<TestServer & { caFile: string; otherCaFile: string }> {
  const dir = tempDir('tls');
  const certs = makeCertificates(dir);
  const [port = 0] = await freePorts(1);
  const server = await startRedisServer(
    ['--bind', '127.0.0.1', '--port', '0', '--tls-port', String(port), '--tls-cert-file', certs.cert, '--tls-key-file', certs.key,
      '--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'no', '--dir', dir, ...NO_DISK],
    { dir, port, ready: READY },
  );
  return { ...server, caFile: certs.ca, otherCaFile: certs.otherCa, stop: () => server.stop().finally(() => rmSync(dir, { recursive: true, force: true })) };
}

/**
 * A Sentinel watching the shared Redis on 6379 under its own master name. The timeouts are
 * long so it never judges the master down during a test, and with no replicas there is
 * nothing it could fail over to anyway.
 */
export async function startSentinel(masterName: string, masterPort = 6379): Promise<TestServer> {
  const dir = tempDir('sentinel');
  const [port = 0] = await freePorts(1);
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 1`,
      `sentinel down-after-milliseconds ${masterName} 600000`,
      `sentinel failover-timeout ${masterName} 600000`,
      '',
    ].join('\n'),
  );
  const server = await startRedisServer([conf, '--sentinel'], { dir, port, ready: /\+monitor master/ });
  return { ...server, stop: () => server.stop().finally(() => rmSync(dir, { recursive: true, force: true })) };
}

/** A three-master Redis Cluster (no replicas) on free ports, all slots assigned. */
export async function startCluster(): Promise<{ nodes: string[]; stop(): Promise<void> }> {
  const dir = tempDir('cluster');
  const servers: TestServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = await freePorts(6);
    for (let i = 0; i < 3; i++) {
      const port = ports[i] ?? 0;
      const busPort = ports[i + 3] ?? 0;
      servers.push(
        await startRedisServer(
          ['--bind', '127.0.0.1', '--port', String(port), '--cluster-enabled', 'yes', '--cluster-port', String(busPort),
            '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir, ...NO_DISK],
          { dir, port, ready: READY },
        ),
      );
    }
    const nodes = servers.map((s) => `127.0.0.1:${s.port}`);
    execFileSync('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { stdio: 'pipe' });
    await waitFor(() =>
      servers.every((s) => execFileSync('redis-cli', ['-p', String(s.port), 'cluster', 'info']).toString().includes('cluster_state:ok')),
    );
    return { nodes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function waitFor(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the cluster to settle');
    await new Promise((r) => setTimeout(r, 100));
  }
}
