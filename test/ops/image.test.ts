import { builtinModules } from 'node:module';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { python } from './compose-tools.js';
import { tempDir } from './servers.js';

/**
 * No Docker engine runs here, so the image is checked by what can be read: the Dockerfile's
 * instructions, the build context .dockerignore lets through, and that the runtime stage
 * (production dependencies only) has every package the compiled code imports.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
const stages = instructions.reduce<string[][]>((acc, line) => {
  if (/^FROM /i.test(line)) acc.push([line]);
  else acc.at(-1)?.push(line);
  return acc;
}, []);
const runtime = stages.at(-1) ?? [];

describe('Dockerfile', () => {
  it('is multi-stage: npm ci for the build, npm ci --omit=dev for what ships', () => {
    expect(stages.length).toBeGreaterThanOrEqual(3);
    expect(instructions.some((l) => /^RUN .*npm ci(?!.*--omit=dev)/.test(l))).toBe(true);
    expect(instructions.some((l) => /^RUN .*npm ci .*--omit=dev/.test(l))).toBe(true);
    expect(instructions.some((l) => /^RUN .*(npm run build|tsc -p tsconfig\.build\.json)/.test(l))).toBe(true);
    expect(instructions.filter((l) => /^ARG NODE_IMAGE=/.test(l))).toEqual(['ARG NODE_IMAGE=node:20-bookworm-slim']);
  });

  it('ships only compiled code and production dependencies, and runs as a non-root user', () => {
    const copies = runtime.filter((l) => /^COPY /.test(l));
    expect(copies).toEqual([
      'COPY package.json ./',
      'COPY --from=prod-deps /app/node_modules ./node_modules',
      'COPY --from=build /app/dist ./dist',
    ]);
    const user = runtime.filter((l) => /^USER /.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)(:|$)/);
  });

  it('checks /healthz with node (no curl in the image)', () => {
    const check = runtime.find((l) => /^HEALTHCHECK /.test(l)) ?? '';
    expect(check).toMatch(/CMD \["node", "-e", ".*fetch\(.*\/healthz/);
    expect(check).toMatch(/process\.env\.HTTP_PORT/);
  });

  it('starts dist/bin/agent-bridge.js, where tsconfig.build.json puts bin/agent-bridge.ts', () => {
    expect(runtime.at(-1)).toBe('CMD ["node", "dist/bin/agent-bridge.js"]');
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { rootDir?: string; outDir?: string } };
    const base = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { outDir?: string } };
    const outDir = build.compilerOptions.outDir ?? base.compilerOptions.outDir;
    expect(join(outDir ?? '', relative(build.compilerOptions.rootDir ?? '.', 'bin/agent-bridge.ts')).replace(/\.ts$/, '.js')).toBe('dist/bin/agent-bridge.js');
  });
});

describe('.dockerignore, applied by docker-py as docker-compose sends a build context', () => {
  let dir: string;
  let sent: string[];
  const files = [
    'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'Dockerfile', 'README.md',
    'bin/agent-bridge.ts', 'src/redis.ts', 'src/http/dashboard.ts', 'src/redis.test.ts', 'adapters/slack/render.ts',
    'adapters/web/public/index.html', '.env', '.env.production', 'adapters/slack/.env', 'node_modules/pino/index.js',
    'dist/bin/agent-bridge.js', 'test/ops/compose.test.ts', 'bench/results/run.cpuprofile', '.git/config', 'docs/operations.md',
    'redis-dump.rdb', 'server.log', 'certs/redis.key',
  ];

  beforeAll(() => {
    dir = tempDir('context');
    copyFileSync(join(ROOT, '.dockerignore'), join(dir, '.dockerignore'));
    for (const file of files) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), '');
    }
    sent = python<string[]>(
      [
        'import json, sys',
        'from docker.utils.build import exclude_paths',
        'root = sys.argv[1]',
        "patterns = [l.strip() for l in open(root + '/.dockerignore') if l.strip() and not l.startswith('#')]",
        "print(json.dumps(sorted(exclude_paths(root, patterns, dockerfile='Dockerfile'))))",
      ].join('\n'),
      [dir],
    ).filter((p) => statSync(join(dir, p)).isFile());
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sends the sources and manifests the build needs, and nothing else', () => {
    expect(sent).toEqual(
      [
        '.dockerignore', 'Dockerfile', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json',
        'bin/agent-bridge.ts', 'src/redis.ts', 'src/http/dashboard.ts', 'adapters/slack/render.ts', 'adapters/web/public/index.html',
      ].sort(),
    );
  });
});

describe('the runtime stage has every package the compiled code imports', () => {
  it('imports in src/ and adapters/ resolve to packages `npm ci --omit=dev` installs', () => {
    // package-lock.json marks `dev: true` what only devDependencies need: exactly what the image omits.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
    };
    const builtins = new Set(builtinModules);
    const missing: string[] = [];
    for (const file of sourceFiles(['bin', 'src', 'adapters'])) {
      for (const specifier of runtimeImports(readFileSync(file, 'utf8'))) {
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtins.has(specifier)) continue;
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        const entry = lock.packages[`node_modules/${name}`];
        if (!entry || entry.dev || entry.devOptional) missing.push(`${relative(ROOT, file)}: ${specifier}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

function sourceFiles(dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.ts$/.test(entry.name) && !/\.(test|d)\.ts$/.test(entry.name)) out.push(path);
    }
  };
  for (const dir of dirs) walk(join(ROOT, dir));
  return out;
}

/** Module specifiers that survive compilation: type-only imports and exports are erased. */
function runtimeImports(text: string): string[] {
  const out: string[] = [];
  const statement = /^\s*(import|export)\s+(type\s+)?[^'";]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
  for (const m of text.matchAll(statement)) {
    if (m[2]) continue;
    const specifier = m[3] ?? m[4] ?? m[5];
    if (specifier) out.push(specifier);
  }
  return out;
}
