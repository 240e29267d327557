import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * The ops tests check docker-compose.yml and .dockerignore with Debian's `docker-compose`
 * (1.29, a Python program; no Docker engine needed for `config`). Its own Python interpreter
 * necessarily has PyYAML and docker-py, so the tests use that interpreter to read YAML and to
 * apply .dockerignore the way docker-py sends a build context.
 * CI installs it: `apt-get install -y docker-compose`.
 */
export const INSTALL_HINT = 'docker-compose is required by the ops tests: apt-get update && apt-get install -y docker-compose';

export function dockerComposePath(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v docker-compose'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(INSTALL_HINT);
  }
}

/** The interpreter named by docker-compose's `#!` line (it has yaml and docker-py). */
export function composePython(): string {
  const shebang = readFileSync(dockerComposePath(), 'utf8').split('\n', 1)[0] ?? '';
  const match = /^#!\s*(\S*python\S*)/.exec(shebang);
  if (!match?.[1]) throw new Error(`docker-compose at ${dockerComposePath()} is not the Python docker-compose 1.x. ${INSTALL_HINT}`);
  return match[1];
}

/** Runs a Python snippet with docker-compose's interpreter; the snippet prints JSON. */
export function python<T>(code: string, args: string[] = [], input?: string): T {
  const out = execFileSync(composePython(), ['-c', code, ...args], { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
  return JSON.parse(out) as T;
}

/** `docker-compose config` of the compose file in `dir`: validated, merged, variables substituted. */
export function composeConfig(dir: string): { yaml: string; model: ComposeModel } {
  const yaml = execFileSync(dockerComposePath(), ['config'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const model = python<ComposeModel>('import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))', [], yaml);
  return { yaml, model };
}

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  container_name?: string;
  environment?: Record<string, string | number>;
  profiles?: string[];
  ports?: Array<{ published?: number | string; target?: number | string } | string>;
  volumes?: string[];
  healthcheck?: { test?: string[] | string };
  depends_on?: Record<string, { condition?: string }>;
  init?: boolean;
  stop_grace_period?: string;
  deploy?: { replicas?: number };
}

export interface ComposeModel {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}
